//! The cluster bus message codec: Redis 7.0's `clusterMsg`, byte for byte.
//!
//! Cluster nodes talk to each other over a second TCP port (by default the
//! client port plus 10000) in a binary protocol of their own. Every message is
//! one *packet*: a fixed 2256-byte header that describes the sender (its
//! name, epochs, replication offset, flags and the full 2 KB bitmap of the
//! slots it serves), followed by a body whose shape depends on the type:
//!
//! ```text
//!  offset  size  field            (all integers big-endian)
//!       0     4  sig              "RCmb"
//!       4     4  totlen           length of the whole packet, header included
//!       8     2  ver              1
//!      10     2  port             sender's client port
//!      12     2  type             CLUSTERMSG_TYPE_*
//!      14     2  count            gossip entries (PING, PONG, MEET)
//!      16     8  currentEpoch
//!      24     8  configEpoch      the sender's, or its master's if a replica
//!      32     8  offset           replication offset
//!      40    40  sender           node name
//!      80  2048  myslots          slot bitmap (the master's, for a replica)
//!    2128    40  slaveof          master's name, 40 zero bytes for a master
//!    2168    46  myip             announced IP, NUL-terminated, or all zero
//!    2214     2  extensions       ping extensions that follow the gossip
//!    2216    30  notused1
//!    2246     2  pport            plaintext client port (TLS clusters)
//!    2248     2  cport            sender's bus port
//!    2250     2  flags            sender's CLUSTER_NODE_* flags
//!    2252     1  state            CLUSTER_OK (0) or CLUSTER_FAIL (1)
//!    2253     3  mflags           CLUSTERMSG_FLAG0_* in mflags[0]
//!    2256     -  data             type-specific body
//! ```
//!
//! Bodies: PING/PONG/MEET carry `count` gossip entries of 104 bytes (what
//! the sender knows about other nodes), then, when `mflags[0]` has
//! EXT_DATA, `extensions` ping extensions (7.0.15 knows one: the announced
//! hostname). FAIL names the failed node. PUBLISH/PUBLISHSHARD carry a
//! channel and a message. UPDATE carries another node's epoch and slots.
//! FAILOVER_AUTH_REQUEST, FAILOVER_AUTH_ACK and MFSTART are header only.
//! MODULE carries a module's payload.
//!
//! Reading follows Redis's two gates, and so has two kinds of error
//! ([`BusError::closes_link`]):
//!
//! 1. Framing (redis: clusterReadHandler). After 8 bytes the signature and
//!    `totlen` are known: a wrong signature or a `totlen` below the header
//!    size closes the link. Otherwise read until `totlen` bytes arrived:
//!    [`frame_len`].
//! 2. Validation (redis: clusterProcessPacket's checks before it acts). A
//!    wrong version, or a `totlen` that does not match what the type and
//!    counts say, drops the packet and keeps the link: [`decode`].
//!
//! Decoding never panics and never allocates more than the packet's own
//! size: every count is checked against the bytes present before anything
//! is reserved. It is also lossless: every byte, padding and unused fields
//! included, lands in a field, so `encode(decode(p)) == p` for every packet
//! `decode` accepts (the fuzz tests check exactly that).
//!
//! redis: cluster.h clusterMsg and friends; cluster.c clusterReadHandler,
//! clusterProcessPacket (validation part), clusterBuildMessageHdr,
//! clusterSendPing, writeHostnamePingExt, clusterSendFail,
//! clusterSendPublish, clusterSendUpdate, clusterSendModule.

use std::fmt;

use crate::node::{NodeName, CLUSTER_NAMELEN};
use crate::slots::{SlotBitmap, SLOT_BITMAP_LEN};

// ---------------------------------------------------------------------------
// Constants
// ---------------------------------------------------------------------------

/// CLUSTER_PROTO_VER: the only bus version; packets of another are dropped.
pub const CLUSTER_PROTO_VER: u16 = 1;

/// The signature that opens every packet ("Redis Cluster message bus").
pub const CLUSTERMSG_SIG: &[u8; 4] = b"RCmb";

/// CLUSTERMSG_MIN_LEN: the header alone, `sizeof(clusterMsg)` minus its
/// data union. A packet announcing less than this closes the link.
pub const CLUSTERMSG_MIN_LEN: usize = 2256;

/// NET_IP_STR_LEN: room for an IPv6 address in text (INET6_ADDRSTRLEN) and
/// its NUL; the size of `myip` and of a gossip entry's `ip`.
pub const NET_IP_STR_LEN: usize = 46;

/// sizeof(clusterMsgDataGossip): one gossip entry.
pub const GOSSIP_LEN: usize = 104;

/// sizeof(clusterMsgPingExt): a ping extension's own header (length, type,
/// 16 bits of padding); its data follows, padded to a multiple of 8.
pub const PING_EXT_HEADER_LEN: usize = 8;

/// sizeof(clusterMsgDataUpdate): config epoch, node name, slot bitmap.
pub const UPDATE_LEN: usize = 8 + CLUSTER_NAMELEN + SLOT_BITMAP_LEN;

/// Offset of a PUBLISH's channel bytes: after `channel_len` and
/// `message_len` (the C struct's 8-byte `bulk_data` placeholder is where the
/// data starts, and is not counted twice).
const PUBLISH_DATA_OFFSET: usize = CLUSTERMSG_MIN_LEN + 8;

/// Offset of a MODULE message's payload: after `module_id` (8), `len` (4)
/// and `type` (1); again the 3-byte placeholder is where the payload starts.
const MODULE_DATA_OFFSET: usize = CLUSTERMSG_MIN_LEN + 13;

/// Message types (CLUSTERMSG_TYPE_*). PING, PONG and MEET are the same
/// packet: PONG answers a PING, MEET is a PING that makes the receiver add
/// the sender to its node table.
pub const CLUSTERMSG_TYPE_PING: u16 = 0;
pub const CLUSTERMSG_TYPE_PONG: u16 = 1;
pub const CLUSTERMSG_TYPE_MEET: u16 = 2;
/// Mark a node as failing, cluster-wide.
pub const CLUSTERMSG_TYPE_FAIL: u16 = 3;
/// Pub/Sub PUBLISH propagation to every node.
pub const CLUSTERMSG_TYPE_PUBLISH: u16 = 4;
/// A replica asks the masters: may I fail over?
pub const CLUSTERMSG_TYPE_FAILOVER_AUTH_REQUEST: u16 = 5;
/// A master's vote for that replica.
pub const CLUSTERMSG_TYPE_FAILOVER_AUTH_ACK: u16 = 6;
/// "This is the newer configuration of that node's slots."
pub const CLUSTERMSG_TYPE_UPDATE: u16 = 7;
/// A replica asks its master to pause clients for a manual failover.
pub const CLUSTERMSG_TYPE_MFSTART: u16 = 8;
/// A module's message (RedisModule_SendClusterMessage).
pub const CLUSTERMSG_TYPE_MODULE: u16 = 9;
/// SPUBLISH propagation to the nodes serving the channel's slot.
pub const CLUSTERMSG_TYPE_PUBLISHSHARD: u16 = 10;
/// CLUSTERMSG_TYPE_COUNT: types at or above this are unknown to 7.0.15.
pub const CLUSTERMSG_TYPE_COUNT: u16 = 11;

/// mflags[0]: the sending master has paused clients for a manual failover.
pub const CLUSTERMSG_FLAG0_PAUSED: u8 = 1 << 0;
/// mflags[0]: vote for this FAILOVER_AUTH_REQUEST even if the master is up.
pub const CLUSTERMSG_FLAG0_FORCEACK: u8 = 1 << 1;
/// mflags[0]: ping extensions follow the gossip section.
pub const CLUSTERMSG_FLAG0_EXT_DATA: u8 = 1 << 2;

/// CLUSTERMSG_EXT_TYPE_HOSTNAME: the only ping extension Redis 7.0.15 has
/// (the sender's `cluster-announce-hostname`). 7.2 added types 1-3
/// (human nodename, forgotten node, shard id); 7.0.15 validates their
/// length and padding like any extension, then ignores them, and so they
/// decode here as extensions of an unknown type.
pub const CLUSTERMSG_EXT_TYPE_HOSTNAME: u16 = 0;

/// The type's name as Redis logs it (redis: clusterGetMessageTypeString).
pub fn message_type_name(msg_type: u16) -> &'static str {
    match msg_type {
        CLUSTERMSG_TYPE_PING => "ping",
        CLUSTERMSG_TYPE_PONG => "pong",
        CLUSTERMSG_TYPE_MEET => "meet",
        CLUSTERMSG_TYPE_FAIL => "fail",
        CLUSTERMSG_TYPE_PUBLISH => "publish",
        CLUSTERMSG_TYPE_PUBLISHSHARD => "publishshard",
        CLUSTERMSG_TYPE_FAILOVER_AUTH_REQUEST => "auth-req",
        CLUSTERMSG_TYPE_FAILOVER_AUTH_ACK => "auth-ack",
        CLUSTERMSG_TYPE_UPDATE => "update",
        CLUSTERMSG_TYPE_MFSTART => "mfstart",
        CLUSTERMSG_TYPE_MODULE => "module",
        _ => "unknown",
    }
}

// ---------------------------------------------------------------------------
// The message, as data
// ---------------------------------------------------------------------------

/// A `char ip[NET_IP_STR_LEN]` field: text up to the first NUL. Kept as the
/// raw 46 bytes, so that what follows the NUL survives a round trip.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct NetIp(pub [u8; NET_IP_STR_LEN]);

impl NetIp {
    /// All zero: "no address announced, use the one you see".
    pub const EMPTY: NetIp = NetIp([0; NET_IP_STR_LEN]);

    /// `ip` NUL-padded; at most 45 bytes are kept, so the field stays
    /// NUL-terminated (as Redis's strncpy of NET_IP_STR_LEN-1 does).
    pub fn new(ip: &[u8]) -> NetIp {
        let mut field = [0; NET_IP_STR_LEN];
        let n = ip.len().min(NET_IP_STR_LEN - 1);
        field[..n].copy_from_slice(&ip[..n]);
        NetIp(field)
    }

    /// The text: the bytes before the first NUL (all 46 if there is none).
    pub fn as_bytes(&self) -> &[u8] {
        let end = self
            .0
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(NET_IP_STR_LEN);
        &self.0[..end]
    }

    /// True when the first byte is NUL: Redis's test for "not announced".
    pub fn is_empty(&self) -> bool {
        self.0[0] == 0
    }
}

impl fmt::Debug for NetIp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NetIp({:?})", String::from_utf8_lossy(self.as_bytes()))
    }
}

/// The fixed header every packet starts with (everything but `sig`, `ver`,
/// `totlen` and `type`, which [`ClusterMsg::encode`] derives).
///
/// Field names follow `clusterMsg`. `count` and `extensions` are kept as
/// sent; [`ClusterMsg::new`] sets them from the body the way Redis's
/// senders do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MsgHeader {
    /// Sender's client port (the TLS port in a TLS cluster).
    pub port: u16,
    /// Gossip entries in a PING/PONG/MEET; 0 in every other type.
    pub count: u16,
    /// The sender's currentEpoch: the cluster's logical clock.
    pub current_epoch: u64,
    /// The sender's configEpoch, or its master's when it is a replica: the
    /// version of the slot claim in `myslots`.
    pub config_epoch: u64,
    /// Master replication offset, or the replica's processed offset.
    pub offset: u64,
    pub sender: NodeName,
    /// The slots the sender (or, for a replica, its master) serves.
    pub myslots: SlotBitmap,
    /// The sender's master, or [`NodeName::NULL`] for a master.
    pub slaveof: NodeName,
    /// The sender's announced IP (`cluster-announce-ip`), or empty.
    pub myip: NetIp,
    /// Ping extensions after the gossip (read only when EXT_DATA is set).
    pub extensions: u16,
    /// Reserved; Redis sends zeros.
    pub notused1: [u8; 30],
    /// Plaintext client port, when `port` is the TLS one; else 0.
    pub pport: u16,
    /// Sender's bus port.
    pub cport: u16,
    /// Sender's CLUSTER_NODE_* flags (MYSELF included, as Redis sends them).
    pub flags: u16,
    /// CLUSTER_OK (0) or CLUSTER_FAIL (1) from the sender's point of view.
    pub state: u8,
    /// CLUSTERMSG_FLAG0_* in `mflags[0]`; the others are unused.
    pub mflags: [u8; 3],
}

impl MsgHeader {
    /// A header from `sender` with every other field zero.
    pub fn new(sender: NodeName) -> MsgHeader {
        MsgHeader {
            port: 0,
            count: 0,
            current_epoch: 0,
            config_epoch: 0,
            offset: 0,
            sender,
            myslots: SlotBitmap::new(),
            slaveof: NodeName::NULL,
            myip: NetIp::EMPTY,
            extensions: 0,
            notused1: [0; 30],
            pport: 0,
            cport: 0,
            flags: 0,
            state: 0,
            mflags: [0; 3],
        }
    }
}

/// One gossip entry: what the sender knows about a third node
/// (clusterMsgDataGossip, 104 bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gossip {
    pub nodename: NodeName,
    /// When the sender last pinged that node, in *seconds* (ms / 1000).
    pub ping_sent: u32,
    /// When the sender last got its PONG, in seconds.
    pub pong_received: u32,
    pub ip: NetIp,
    pub port: u16,
    pub cport: u16,
    /// That node's flags as the sender sees them (PFAIL here is a failure
    /// report).
    pub flags: u16,
    pub pport: u16,
    /// Padding; Redis sends 0.
    pub notused1: u16,
}

/// One ping extension (clusterMsgPingExt): a type and its data. The data is
/// stored with its padding, exactly as it travelled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PingExt {
    /// CLUSTERMSG_EXT_TYPE_*.
    pub ext_type: u16,
    /// The header's 16 bits of padding; Redis sends 0.
    pub unused: u16,
    /// The data, a multiple of 8 bytes.
    pub data: Vec<u8>,
}

impl PingExt {
    /// The hostname extension as Redis writes it: the name, a NUL, then
    /// zeros up to a multiple of 8 (redis: writeHostnamePingExt).
    pub fn hostname(name: &[u8]) -> PingExt {
        let mut data = name.to_vec();
        data.resize(eight_byte_align(name.len() + 1), 0);
        PingExt {
            ext_type: CLUSTERMSG_EXT_TYPE_HOSTNAME,
            unused: 0,
            data,
        }
    }

    /// The hostname, for a hostname extension: the bytes before the first
    /// NUL, as Redis reads the C string.
    pub fn as_hostname(&self) -> Option<&[u8]> {
        if self.ext_type != CLUSTERMSG_EXT_TYPE_HOSTNAME {
            return None;
        }
        let end = self
            .data
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(self.data.len());
        Some(&self.data[..end])
    }

    /// The extension's `length` field: its header plus its data.
    pub fn wire_len(&self) -> usize {
        PING_EXT_HEADER_LEN + self.data.len()
    }
}

/// EIGHT_BYTE_ALIGN: round up to a multiple of 8.
fn eight_byte_align(n: usize) -> usize {
    n.div_ceil(8) * 8
}

/// The body of a PING, PONG or MEET.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct PingData {
    pub gossip: Vec<Gossip>,
    /// Empty unless the header's mflags[0] has EXT_DATA.
    pub extensions: Vec<PingExt>,
}

/// The body of a PUBLISH or PUBLISHSHARD.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublishData {
    pub channel: Vec<u8>,
    pub message: Vec<u8>,
}

/// The body of an UPDATE: the newer slot configuration of `nodename`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpdateData {
    pub config_epoch: u64,
    pub nodename: NodeName,
    pub slots: SlotBitmap,
}

/// The body of a MODULE message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModuleData {
    /// The sending module's ID. Redis copies this `uint64_t` without byte
    /// swapping ("Endian-safe ID"), so it is kept as the 8 raw bytes.
    pub module_id: [u8; 8],
    /// Module-defined type, 0 to 255.
    pub module_type: u8,
    pub payload: Vec<u8>,
}

/// What follows the header, by message type.
///
/// UPDATE carries a 2 KB slot bitmap inline, like the header does; boxing
/// it would save nothing worth an indirection in every reader's way.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MsgBody {
    Ping(PingData),
    Pong(PingData),
    Meet(PingData),
    /// FAIL: the name of the node now marked as failing.
    Fail(NodeName),
    Publish(PublishData),
    PublishShard(PublishData),
    FailoverAuthRequest,
    FailoverAuthAck,
    Update(UpdateData),
    MfStart,
    Module(ModuleData),
    /// A type 7.0.15 does not know (>= CLUSTERMSG_TYPE_COUNT). Redis accepts
    /// such a packet whatever its length, takes the sender's epochs and
    /// offset from its header, logs "Received unknown packet type" and
    /// otherwise ignores it; so it decodes, with its data kept raw.
    Unknown {
        msg_type: u16,
        data: Vec<u8>,
    },
}

/// One cluster bus packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterMsg {
    pub header: MsgHeader,
    pub body: MsgBody,
}

impl ClusterMsg {
    /// A message as a Redis sender builds it: `count`, `extensions` and the
    /// EXT_DATA flag follow the body (gossip and extensions of a PING, PONG
    /// or MEET; zero and clear for every other type). Every other header
    /// field is taken as given.
    pub fn new(mut header: MsgHeader, body: MsgBody) -> ClusterMsg {
        let (count, extensions) = match &body {
            MsgBody::Ping(d) | MsgBody::Pong(d) | MsgBody::Meet(d) => {
                (d.gossip.len(), d.extensions.len())
            }
            _ => (0, 0),
        };
        // Counts past u16 cannot be sent; they saturate here and the packet
        // then fails its own length check, rather than wrapping silently.
        header.count = u16::try_from(count).unwrap_or(u16::MAX);
        header.extensions = u16::try_from(extensions).unwrap_or(u16::MAX);
        if extensions > 0 {
            header.mflags[0] |= CLUSTERMSG_FLAG0_EXT_DATA;
        } else {
            header.mflags[0] &= !CLUSTERMSG_FLAG0_EXT_DATA;
        }
        ClusterMsg { header, body }
    }

    /// The `type` field.
    pub fn msg_type(&self) -> u16 {
        match &self.body {
            MsgBody::Ping(_) => CLUSTERMSG_TYPE_PING,
            MsgBody::Pong(_) => CLUSTERMSG_TYPE_PONG,
            MsgBody::Meet(_) => CLUSTERMSG_TYPE_MEET,
            MsgBody::Fail(_) => CLUSTERMSG_TYPE_FAIL,
            MsgBody::Publish(_) => CLUSTERMSG_TYPE_PUBLISH,
            MsgBody::PublishShard(_) => CLUSTERMSG_TYPE_PUBLISHSHARD,
            MsgBody::FailoverAuthRequest => CLUSTERMSG_TYPE_FAILOVER_AUTH_REQUEST,
            MsgBody::FailoverAuthAck => CLUSTERMSG_TYPE_FAILOVER_AUTH_ACK,
            MsgBody::Update(_) => CLUSTERMSG_TYPE_UPDATE,
            MsgBody::MfStart => CLUSTERMSG_TYPE_MFSTART,
            MsgBody::Module(_) => CLUSTERMSG_TYPE_MODULE,
            MsgBody::Unknown { msg_type, .. } => *msg_type,
        }
    }

    /// "ping", "pong", ... as Redis logs the type.
    pub fn type_name(&self) -> &'static str {
        message_type_name(self.msg_type())
    }

    /// The ping data of a PING, PONG or MEET.
    pub fn ping_data(&self) -> Option<&PingData> {
        match &self.body {
            MsgBody::Ping(d) | MsgBody::Pong(d) | MsgBody::Meet(d) => Some(d),
            _ => None,
        }
    }

    /// The sender's announced hostname, if its PING/PONG/MEET carries the
    /// hostname extension (the last one wins, as in Redis).
    pub fn hostname(&self) -> Option<&[u8]> {
        self.ping_data()?
            .extensions
            .iter()
            .filter_map(PingExt::as_hostname)
            .next_back()
    }

    /// The packet's length on the wire (`totlen`), or `None` past u32.
    pub fn wire_len(&self) -> Option<u32> {
        let body = match &self.body {
            MsgBody::Ping(d) | MsgBody::Pong(d) | MsgBody::Meet(d) => {
                GOSSIP_LEN * d.gossip.len()
                    + d.extensions.iter().map(PingExt::wire_len).sum::<usize>()
            }
            MsgBody::Fail(_) => CLUSTER_NAMELEN,
            MsgBody::Publish(p) | MsgBody::PublishShard(p) => 8 + p.channel.len() + p.message.len(),
            MsgBody::FailoverAuthRequest | MsgBody::FailoverAuthAck | MsgBody::MfStart => 0,
            MsgBody::Update(_) => UPDATE_LEN,
            MsgBody::Module(m) => 13 + m.payload.len(),
            MsgBody::Unknown { data, .. } => data.len(),
        };
        u32::try_from(CLUSTERMSG_MIN_LEN + body).ok()
    }

    /// The packet's bytes (redis: clusterBuildMessageHdr and the
    /// clusterSend* functions). Header fields are written as they are;
    /// `sig`, `ver`, `totlen` and `type` are derived.
    pub fn encode(&self) -> Result<Vec<u8>, EncodeError> {
        let mut out = Vec::new();
        self.encode_into(&mut out)?;
        Ok(out)
    }

    /// [`ClusterMsg::encode`], appending to `out` (a link's send buffer).
    pub fn encode_into(&self, out: &mut Vec<u8>) -> Result<(), EncodeError> {
        let totlen = self.wire_len().ok_or(EncodeError::TooLong)?;
        // Every length inside a body is at most totlen, so it fits too.
        let start = out.len();
        out.reserve(totlen as usize);
        let h = &self.header;
        out.extend_from_slice(CLUSTERMSG_SIG);
        out.extend_from_slice(&totlen.to_be_bytes());
        out.extend_from_slice(&CLUSTER_PROTO_VER.to_be_bytes());
        out.extend_from_slice(&h.port.to_be_bytes());
        out.extend_from_slice(&self.msg_type().to_be_bytes());
        out.extend_from_slice(&h.count.to_be_bytes());
        out.extend_from_slice(&h.current_epoch.to_be_bytes());
        out.extend_from_slice(&h.config_epoch.to_be_bytes());
        out.extend_from_slice(&h.offset.to_be_bytes());
        out.extend_from_slice(&h.sender.0);
        out.extend_from_slice(&h.myslots.0);
        out.extend_from_slice(&h.slaveof.0);
        out.extend_from_slice(&h.myip.0);
        out.extend_from_slice(&h.extensions.to_be_bytes());
        out.extend_from_slice(&h.notused1);
        out.extend_from_slice(&h.pport.to_be_bytes());
        out.extend_from_slice(&h.cport.to_be_bytes());
        out.extend_from_slice(&h.flags.to_be_bytes());
        out.push(h.state);
        out.extend_from_slice(&h.mflags);
        debug_assert_eq!(out.len() - start, CLUSTERMSG_MIN_LEN);

        match &self.body {
            MsgBody::Ping(d) | MsgBody::Pong(d) | MsgBody::Meet(d) => {
                for g in &d.gossip {
                    out.extend_from_slice(&g.nodename.0);
                    out.extend_from_slice(&g.ping_sent.to_be_bytes());
                    out.extend_from_slice(&g.pong_received.to_be_bytes());
                    out.extend_from_slice(&g.ip.0);
                    out.extend_from_slice(&g.port.to_be_bytes());
                    out.extend_from_slice(&g.cport.to_be_bytes());
                    out.extend_from_slice(&g.flags.to_be_bytes());
                    out.extend_from_slice(&g.pport.to_be_bytes());
                    out.extend_from_slice(&g.notused1.to_be_bytes());
                }
                for ext in &d.extensions {
                    out.extend_from_slice(&(ext.wire_len() as u32).to_be_bytes());
                    out.extend_from_slice(&ext.ext_type.to_be_bytes());
                    out.extend_from_slice(&ext.unused.to_be_bytes());
                    out.extend_from_slice(&ext.data);
                }
            }
            MsgBody::Fail(about) => out.extend_from_slice(&about.0),
            MsgBody::Publish(p) | MsgBody::PublishShard(p) => {
                out.extend_from_slice(&(p.channel.len() as u32).to_be_bytes());
                out.extend_from_slice(&(p.message.len() as u32).to_be_bytes());
                out.extend_from_slice(&p.channel);
                out.extend_from_slice(&p.message);
            }
            MsgBody::FailoverAuthRequest | MsgBody::FailoverAuthAck | MsgBody::MfStart => {}
            MsgBody::Update(u) => {
                out.extend_from_slice(&u.config_epoch.to_be_bytes());
                out.extend_from_slice(&u.nodename.0);
                out.extend_from_slice(&u.slots.0);
            }
            MsgBody::Module(m) => {
                out.extend_from_slice(&m.module_id);
                out.extend_from_slice(&(m.payload.len() as u32).to_be_bytes());
                out.push(m.module_type);
                out.extend_from_slice(&m.payload);
            }
            MsgBody::Unknown { data, .. } => out.extend_from_slice(data),
        }
        debug_assert_eq!(out.len() - start, totlen as usize);
        Ok(())
    }
}

/// A message too big for the bus: its length does not fit `totlen`'s 32
/// bits (a PUBLISH of a message over 4 GB). Redis would truncate the
/// lengths and send a packet every receiver drops; we refuse to build it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EncodeError {
    TooLong,
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cluster bus message longer than 4 GB")
    }
}

impl std::error::Error for EncodeError {}

// ---------------------------------------------------------------------------
// Errors while reading
// ---------------------------------------------------------------------------

/// Why a packet was not accepted. [`BusError::closes_link`] tells which of
/// Redis's two reactions applies; `Display` gives Redis's log line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BusError {
    /// The first 4 bytes are not "RCmb". Closes the link.
    BadSignature,
    /// `totlen` is below the header size. Closes the link.
    TooShort { totlen: u32 },
    /// [`decode`] was given a slice that is not exactly one frame: fewer or
    /// more bytes than its `totlen` (a caller's mistake, never a peer's).
    NotOneFrame { totlen: u32, len: usize },
    /// A version other than 1: Redis silently drops the packet.
    BadVersion { ver: u16 },
    /// PING/PONG/MEET whose `count` gossip entries do not fit in `totlen`.
    GossipCountExceedsLength {
        msg_type: u16,
        count: u16,
        totlen: u32,
    },
    /// A ping extension (its 8-byte header, or its declared length) runs
    /// past `totlen`, or its declared length does not fit 16 bits (see
    /// [`decode`]'s note).
    ExtensionExceedsLength { msg_type: u16, totlen: u32 },
    /// A ping extension whose length is below 8 or not a multiple of 8.
    ExtensionPadding { msg_type: u16, extlen: u32 },
    /// A hostname extension without its terminating NUL.
    HostnameNotTerminated { msg_type: u16, ext_type: u16 },
    /// `totlen` is not what the type and its counts add up to.
    LengthMismatch {
        msg_type: u16,
        totlen: u32,
        expected: u64,
    },
}

impl BusError {
    /// True when Redis closes the link (framing errors); false when it only
    /// drops this packet and keeps reading.
    pub fn closes_link(&self) -> bool {
        matches!(self, BusError::BadSignature | BusError::TooShort { .. })
    }
}

impl fmt::Display for BusError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = message_type_name;
        match *self {
            BusError::BadSignature | BusError::TooShort { .. } => {
                write!(f, "Bad message length or signature received from Cluster bus.")
            }
            BusError::NotOneFrame { totlen, len } => {
                write!(f, "Packet of {len} bytes does not match its length field ({totlen})")
            }
            BusError::BadVersion { ver } => {
                write!(f, "Received packet of unsupported bus version {ver}")
            }
            BusError::GossipCountExceedsLength { msg_type, count, totlen } => write!(
                f,
                "Received invalid {} packet with gossip count {count} that exceeds total packet length ({totlen})",
                name(msg_type)
            ),
            BusError::ExtensionExceedsLength { msg_type, totlen } => write!(
                f,
                "Received invalid {} packet with extension data that exceeds total packet length ({totlen})",
                name(msg_type)
            ),
            BusError::ExtensionPadding { msg_type, extlen } => write!(
                f,
                "Received a {} packet without proper padding ({extlen} bytes)",
                name(msg_type)
            ),
            BusError::HostnameNotTerminated { msg_type, ext_type } => write!(
                f,
                "Received {} packet with missing null terminator in extension type {ext_type}",
                name(msg_type)
            ),
            BusError::LengthMismatch { msg_type, totlen, expected } => write!(
                f,
                "Received invalid {} packet of length {totlen} but expected length {expected}",
                name(msg_type)
            ),
        }
    }
}

impl std::error::Error for BusError {}

// ---------------------------------------------------------------------------
// Reading: framing, then validation and decoding
// ---------------------------------------------------------------------------

/// The length of the packet that starts `buf`, as soon as that is known
/// (redis: clusterReadHandler's check once 8 bytes are in).
///
/// `Ok(None)`: fewer than 8 bytes yet. `Ok(Some(totlen))`: keep reading until
/// `totlen` bytes, then [`decode`] them. `Err`: close the link.
///
/// `totlen` may be up to 4 GB. Redis does not reserve it up front: its read
/// handler grows the buffer by what actually arrives, so a peer that lies
/// about the length costs only the bytes it really sends. A server built on
/// this should do the same.
pub fn frame_len(buf: &[u8]) -> Result<Option<usize>, BusError> {
    if buf.len() < 8 {
        return Ok(None);
    }
    if &buf[0..4] != CLUSTERMSG_SIG {
        return Err(BusError::BadSignature);
    }
    let totlen = be32(buf, 4);
    if (totlen as usize) < CLUSTERMSG_MIN_LEN {
        return Err(BusError::TooShort { totlen });
    }
    Ok(Some(totlen as usize))
}

/// Check and decode one complete packet: `packet` is exactly `totlen` bytes
/// (redis: the checks at the top of clusterProcessPacket, then its reads).
///
/// The checks, in Redis's order: signature and minimum length (as
/// [`frame_len`]), version 1, then the length the type implies must equal
/// `totlen`:
///
/// * PING/PONG/MEET: header + `count` × 104, then, only if mflags[0] has
///   EXT_DATA, each of the `extensions` extensions: its 8-byte header must
///   fit, its length must be >= 8 and a multiple of 8 and fit, and a
///   hostname's data must end in NUL.
/// * FAIL: header + 40. UPDATE: header + 2096.
/// * PUBLISH/PUBLISHSHARD: header + 8 + channel_len + message_len.
/// * FAILOVER_AUTH_REQUEST/ACK, MFSTART: the header alone.
/// * MODULE: header + 13 + len.
/// * Unknown types: any length (Redis assumes them well formed).
///
/// The hostname NUL check is Debian's CVE-2026-92925 fix, in the 7.0.15
/// source we follow (1~deb12u10); Debian builds before it accept such a
/// packet and may then read past it. `tests/real_redis.rs` notes which
/// kind the installed `redis-server` is.
///
/// Where Redis's own arithmetic would misbehave on a hostile packet, this
/// refuses the packet instead, and says so here:
///
/// * Redis adds PUBLISH and MODULE lengths in 32 bits, so huge lengths can
///   wrap around to match `totlen` (and the copy that follows then reads
///   past the packet). The sum is computed in 64 bits here.
/// * Redis reads an extension's 32-bit length into a 16-bit variable for
///   its checks but steps to the next extension by the full 32 bits. A
///   length of 65536 or more is refused here; no Redis sends one (a
///   hostname is under 256 bytes).
/// * Without EXT_DATA, Redis validates no extension, yet after the checks
///   walks `extensions` of them past the packet's end. Such a packet is
///   accepted here (as Redis's checks accept it) with no extensions read;
///   its `extensions` count is kept in the header.
pub fn decode(packet: &[u8]) -> Result<ClusterMsg, BusError> {
    let Some(totlen) = frame_len(packet)? else {
        return Err(BusError::NotOneFrame {
            totlen: 0,
            len: packet.len(),
        });
    };
    let totlen32 = totlen as u32;
    if packet.len() != totlen {
        return Err(BusError::NotOneFrame {
            totlen: totlen32,
            len: packet.len(),
        });
    }
    // From here on `packet` holds at least the whole header.
    let ver = be16(packet, 8);
    if ver != CLUSTER_PROTO_VER {
        return Err(BusError::BadVersion { ver });
    }
    let msg_type = be16(packet, 12);
    let header = decode_header(packet);
    let data = &packet[CLUSTERMSG_MIN_LEN..];

    let mismatch = |expected: u64| BusError::LengthMismatch {
        msg_type,
        totlen: totlen32,
        expected,
    };
    let exact = |body_len: u64| -> Result<(), BusError> {
        let expected = CLUSTERMSG_MIN_LEN as u64 + body_len;
        if expected == totlen as u64 {
            Ok(())
        } else {
            Err(mismatch(expected))
        }
    };

    let body = match msg_type {
        CLUSTERMSG_TYPE_PING | CLUSTERMSG_TYPE_PONG | CLUSTERMSG_TYPE_MEET => {
            let ping = decode_ping_data(&header, msg_type, data, totlen32)?;
            match msg_type {
                CLUSTERMSG_TYPE_PING => MsgBody::Ping(ping),
                CLUSTERMSG_TYPE_PONG => MsgBody::Pong(ping),
                _ => MsgBody::Meet(ping),
            }
        }
        CLUSTERMSG_TYPE_FAIL => {
            exact(CLUSTER_NAMELEN as u64)?;
            MsgBody::Fail(name_at(data, 0))
        }
        CLUSTERMSG_TYPE_PUBLISH | CLUSTERMSG_TYPE_PUBLISHSHARD => {
            // The two lengths sit in the body itself; a packet too short to
            // hold them cannot match whatever they would say.
            if data.len() < 8 {
                return Err(mismatch(PUBLISH_DATA_OFFSET as u64));
            }
            let channel_len = be32(data, 0) as u64;
            let message_len = be32(data, 4) as u64;
            exact(8 + channel_len + message_len)?;
            let (channel, message) = data[8..].split_at(channel_len as usize);
            let publish = PublishData {
                channel: channel.to_vec(),
                message: message.to_vec(),
            };
            if msg_type == CLUSTERMSG_TYPE_PUBLISH {
                MsgBody::Publish(publish)
            } else {
                MsgBody::PublishShard(publish)
            }
        }
        CLUSTERMSG_TYPE_FAILOVER_AUTH_REQUEST => {
            exact(0)?;
            MsgBody::FailoverAuthRequest
        }
        CLUSTERMSG_TYPE_FAILOVER_AUTH_ACK => {
            exact(0)?;
            MsgBody::FailoverAuthAck
        }
        CLUSTERMSG_TYPE_MFSTART => {
            exact(0)?;
            MsgBody::MfStart
        }
        CLUSTERMSG_TYPE_UPDATE => {
            exact(UPDATE_LEN as u64)?;
            MsgBody::Update(UpdateData {
                config_epoch: be64(data, 0),
                nodename: name_at(data, 8),
                slots: bitmap_at(data, 8 + CLUSTER_NAMELEN),
            })
        }
        CLUSTERMSG_TYPE_MODULE => {
            if data.len() < 13 {
                return Err(mismatch(MODULE_DATA_OFFSET as u64));
            }
            exact(13 + be32(data, 8) as u64)?;
            let mut module_id = [0; 8];
            module_id.copy_from_slice(&data[0..8]);
            MsgBody::Module(ModuleData {
                module_id,
                module_type: data[12],
                payload: data[13..].to_vec(),
            })
        }
        _ => MsgBody::Unknown {
            msg_type,
            data: data.to_vec(),
        },
    };
    Ok(ClusterMsg { header, body })
}

/// The fixed header fields (the caller made sure all 2256 bytes are there).
fn decode_header(p: &[u8]) -> MsgHeader {
    let mut myip = [0; NET_IP_STR_LEN];
    myip.copy_from_slice(&p[2168..2168 + NET_IP_STR_LEN]);
    let mut notused1 = [0; 30];
    notused1.copy_from_slice(&p[2216..2246]);
    MsgHeader {
        port: be16(p, 10),
        count: be16(p, 14),
        current_epoch: be64(p, 16),
        config_epoch: be64(p, 24),
        offset: be64(p, 32),
        sender: name_at(p, 40),
        myslots: bitmap_at(p, 80),
        slaveof: name_at(p, 2128),
        myip: NetIp(myip),
        extensions: be16(p, 2214),
        notused1,
        pport: be16(p, 2246),
        cport: be16(p, 2248),
        flags: be16(p, 2250),
        state: p[2252],
        mflags: [p[2253], p[2254], p[2255]],
    }
}

/// The gossip section and extensions of a PING, PONG or MEET; `data` is
/// everything after the header.
fn decode_ping_data(
    header: &MsgHeader,
    msg_type: u16,
    data: &[u8],
    totlen: u32,
) -> Result<PingData, BusError> {
    let count = header.count as usize;
    let gossip_len = GOSSIP_LEN * count; // at most 65535 * 104: no overflow
    if data.len() < gossip_len {
        return Err(BusError::GossipCountExceedsLength {
            msg_type,
            count: header.count,
            totlen,
        });
    }
    let mut gossip = Vec::with_capacity(count);
    for entry in data[..gossip_len].chunks_exact(GOSSIP_LEN) {
        let mut ip = [0; NET_IP_STR_LEN];
        ip.copy_from_slice(&entry[48..48 + NET_IP_STR_LEN]);
        gossip.push(Gossip {
            nodename: name_at(entry, 0),
            ping_sent: be32(entry, 40),
            pong_received: be32(entry, 44),
            ip: NetIp(ip),
            port: be16(entry, 94),
            cport: be16(entry, 96),
            flags: be16(entry, 98),
            pport: be16(entry, 100),
            notused1: be16(entry, 102),
        });
    }

    // `rest` shrinks as extensions are read: it is Redis's `totlen - explen`.
    let mut rest = &data[gossip_len..];
    let mut extensions = Vec::new();
    if header.mflags[0] & CLUSTERMSG_FLAG0_EXT_DATA != 0 {
        for _ in 0..header.extensions {
            if rest.len() < PING_EXT_HEADER_LEN {
                return Err(BusError::ExtensionExceedsLength { msg_type, totlen });
            }
            let extlen = be32(rest, 0);
            if extlen > u16::MAX as u32 {
                // See decode's note: Redis would check only the low 16 bits.
                return Err(BusError::ExtensionExceedsLength { msg_type, totlen });
            }
            if (extlen as usize) < PING_EXT_HEADER_LEN || !extlen.is_multiple_of(8) {
                return Err(BusError::ExtensionPadding { msg_type, extlen });
            }
            if rest.len() < extlen as usize {
                return Err(BusError::ExtensionExceedsLength { msg_type, totlen });
            }
            let ext_type = be16(rest, 4);
            let ext_data = &rest[PING_EXT_HEADER_LEN..extlen as usize];
            if ext_type == CLUSTERMSG_EXT_TYPE_HOSTNAME && ext_data.last() != Some(&0) {
                return Err(BusError::HostnameNotTerminated { msg_type, ext_type });
            }
            extensions.push(PingExt {
                ext_type,
                unused: be16(rest, 6),
                data: ext_data.to_vec(),
            });
            rest = &rest[extlen as usize..];
        }
    }
    if !rest.is_empty() {
        let expected = (totlen as usize - rest.len()) as u64;
        return Err(BusError::LengthMismatch {
            msg_type,
            totlen,
            expected,
        });
    }
    Ok(PingData { gossip, extensions })
}

// Fixed-offset reads. Callers have checked that `at + size <= buf.len()`.

fn be16(buf: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([buf[at], buf[at + 1]])
}

fn be32(buf: &[u8], at: usize) -> u32 {
    let mut b = [0; 4];
    b.copy_from_slice(&buf[at..at + 4]);
    u32::from_be_bytes(b)
}

fn be64(buf: &[u8], at: usize) -> u64 {
    let mut b = [0; 8];
    b.copy_from_slice(&buf[at..at + 8]);
    u64::from_be_bytes(b)
}

fn name_at(buf: &[u8], at: usize) -> NodeName {
    let mut name = [0; CLUSTER_NAMELEN];
    name.copy_from_slice(&buf[at..at + CLUSTER_NAMELEN]);
    NodeName(name)
}

fn bitmap_at(buf: &[u8], at: usize) -> SlotBitmap {
    let mut slots = [0; SLOT_BITMAP_LEN];
    slots.copy_from_slice(&buf[at..at + SLOT_BITMAP_LEN]);
    SlotBitmap(slots)
}

#[cfg(test)]
#[path = "bus_tests.rs"]
mod tests;
