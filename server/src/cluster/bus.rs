//! The cluster bus: its listener, the links, and what a node does with each
//! packet (Redis's cluster.c, the "CLUSTER communication link" and "PACKETS
//! HANDLING" parts).
//!
//! Every pair of nodes has up to two TCP links: the one A opened to B
//! (`node.link` on A's side, used to send A's PINGs) and the one B opened to
//! A (`node.inbound_link`, where B's PINGs arrive and A's PONGs go back).
//! A link reads into `rcvbuf` until a whole packet is in
//! (`cluster::bus::frame_len`), decodes it (`cluster::bus::decode`) and hands
//! it to `cluster_process_packet`; writes go into `sndbuf` and are flushed
//! as the socket takes them.
//!
//! How a cluster forms (what `redis-cli --cluster create` relies on):
//! 1. CLUSTER MEET ip port: `cluster_start_handshake` adds a node with a
//!    random name, flagged HANDSHAKE and MEET.
//! 2. clusterCron opens a link to it and sends a MEET. The receiver adds
//!    the sender (also in handshake: it does not know the real name yet) and
//!    answers with a PONG.
//! 3. The PONG carries the real name: the handshake node is renamed
//!    (`cluster_rename_node`) and becomes a normal node.
//! 4. Every PING/PONG has a gossip section about a few other nodes; a node
//!    that hears of an unknown one adds it and connects to it, so meeting
//!    one node of a cluster is enough to meet them all.
//!
//! Bad packets: a wrong signature or a length below the header closes the
//! link; a packet that fails validation (version, lengths) is dropped and
//! the link lives on. Nothing a peer sends can panic the server.

use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, SocketAddr};

use cluster::bus::{
    self as codec, ClusterMsg, Gossip, MsgBody, MsgHeader, NetIp, PingData, PingExt, UpdateData,
    CLUSTERMSG_TYPE_COUNT, CLUSTERMSG_TYPE_MEET, CLUSTERMSG_TYPE_PING, CLUSTERMSG_TYPE_PONG,
};
use cluster::node::{
    NodeName, CLUSTER_NODE_FAIL, CLUSTER_NODE_HANDSHAKE, CLUSTER_NODE_MASTER, CLUSTER_NODE_MEET,
    CLUSTER_NODE_MYSELF, CLUSTER_NODE_NOADDR, CLUSTER_NODE_NOFAILOVER, CLUSTER_NODE_PFAIL,
    CLUSTER_NODE_SLAVE,
};
use cluster::slots::CLUSTER_SLOTS;
use mio::{Interest, Registry, Token};
use rand::RngExt;

use super::{
    ClusterNode, ClusterState, CLUSTER_BLACKLIST_TTL, CLUSTER_FAIL_REPORT_VALIDITY_MULT,
    CLUSTER_FAIL_UNDO_TIME_MULT, CLUSTER_LISTENER_TOKEN, CLUSTER_TODO_FSYNC_CONFIG,
    CLUSTER_TODO_SAVE_CONFIG, CLUSTER_TODO_UPDATE_STATE,
};
use crate::log::{server_log, LogLevel};
use crate::server::{mstime, Server};

/// RCVBUF_READ_LEN: how much one read(2) of a link asks for. The receive
/// buffer grows by what arrives, never by what a header's totlen claims.
const RCVBUF_READ_LEN: usize = 16 * 1024;

/// One bus connection (clusterLink).
pub struct ClusterLink {
    /// When the link was created (a link that never answers is dropped
    /// after the node timeout).
    pub ctime: i64,
    pub stream: mio::net::TcpStream,
    pub sndbuf: Vec<u8>,
    pub rcvbuf: Vec<u8>,
    /// The node on the other side: always set for an outbound link, set on
    /// an inbound one once the sender is known.
    pub node: Option<NodeName>,
    pub inbound: bool,
    /// An outbound connect(2) has completed.
    pub connected: bool,
}

/// What the cluster code needs from outside the cluster state: what a
/// header says (the client port, the replication offset, an announced
/// IP), and what a replica weighs before it fails over (failover.rs).
pub struct HeaderInputs {
    pub port: u16,
    /// master_repl_offset for a master, replicationGetSlaveOffset() for a
    /// replica.
    pub offset: i64,
    pub announce_ip: String,
    /// server.masterhost is set (replication is configured).
    pub has_masterhost: bool,
    /// How long (ms) the replica has had no data from its master: since
    /// the master client's last interaction, or since the link went down.
    pub data_age: i64,
    /// cluster-replica-validity-factor, repl-ping-replica-period (s),
    /// cluster-replica-no-failover, cluster-allow-replica-migration.
    pub validity_factor: i64,
    pub repl_ping_period: i64,
    pub no_failover: bool,
    pub allow_replica_migration: bool,
    /// cluster-node-timeout (at least 1 ms).
    pub node_timeout: i64,
}

/// The inputs as they are now (see HeaderInputs).
pub fn header_inputs(srv: &Server) -> HeaderInputs {
    use crate::replication::ReplState;
    let is_slave = srv
        .cluster
        .as_deref()
        .is_some_and(|s| s.myself().is_slave());
    let offset = if is_slave {
        crate::replication::replica::replication_get_slave_offset(srv)
    } else {
        srv.repl.master_repl_offset
    };
    let now_secs = mstime() / 1000;
    let data_age = if srv.repl.repl_state == ReplState::Connected {
        srv.repl
            .master
            .and_then(|t| srv.clients.get(&t))
            .map_or(0, |m| m.last_interaction.elapsed().as_secs() as i64 * 1000)
    } else {
        (now_secs - srv.repl.repl_down_since) * 1000
    };
    HeaderInputs {
        port: srv.config.port,
        offset,
        announce_ip: srv.config.cluster_announce_ip.clone(),
        has_masterhost: srv.repl.masterhost.is_some(),
        data_age,
        validity_factor: srv.config.num("cluster-replica-validity-factor"),
        repl_ping_period: srv.config.num("repl-ping-replica-period"),
        no_failover: srv.config.boolean("cluster-replica-no-failover"),
        allow_replica_migration: srv.config.boolean("cluster-allow-replica-migration"),
        node_timeout: srv.config.cluster_node_timeout.max(1),
    }
}

/// Bind the bus port (clusterInit's listenToPort on the cluster port) on
/// the first `bind` address, and register it in the loop.
pub fn cluster_listen(srv: &mut Server, state: &mut ClusterState) -> Result<(), String> {
    if srv.config.bind.is_empty() {
        return Err(
            "No bind address is configured, but it is required for the Cluster bus.".to_string(),
        );
    }
    let bind = srv
        .config
        .bind
        .iter()
        .find(|b| !b.starts_with('-'))
        .cloned()
        .unwrap_or_else(|| "*".to_string());
    let host = match bind.as_str() {
        "*" => "0.0.0.0".to_string(),
        "::*" => "::".to_string(),
        other => other.to_string(),
    };
    let addr: SocketAddr = match host.parse::<IpAddr>() {
        Ok(ip) => SocketAddr::new(ip, state.cport),
        Err(_) => return Err(format!("Invalid bind address '{bind}'")),
    };
    let mut listener =
        crate::anet_tcp_server(addr, srv.config.tcp_backlog as i32).map_err(|e| {
            format!(
                "Warning: Could not create server TCP listening socket {host}:{}: {e}",
                state.cport
            )
        })?;
    srv.poll
        .registry()
        .register(&mut listener, CLUSTER_LISTENER_TOKEN, Interest::READABLE)
        .map_err(|e| format!("Could not register the cluster bus listener: {e}"))?;
    state.listener = Some(listener);
    Ok(())
}

/// True for the bus listener's token and every link's.
pub fn is_cluster_token(srv: &Server, token: Token) -> bool {
    match srv.cluster.as_deref() {
        Some(state) => token == CLUSTER_LISTENER_TOKEN || state.links.contains_key(&token),
        None => false,
    }
}

/// A fired event on the bus: accept on the listener, or read/write a link.
pub fn cluster_handle_event(srv: &mut Server, token: Token, readable: bool, writable: bool) {
    let hdr = header_inputs(srv);
    let node_timeout = srv.config.cluster_node_timeout.max(1);
    let registry = srv.poll.registry();
    let Some(state) = srv.cluster.as_deref_mut() else {
        return;
    };
    if token == CLUSTER_LISTENER_TOKEN {
        cluster_accept_handler(registry, state, &mut srv.next_token);
        return;
    }
    if writable {
        cluster_write_handler(registry, state, token);
    }
    if readable {
        cluster_read_handler(registry, state, token, &hdr, node_timeout);
    }
    // What the packets asked of the server (become a replica, pause
    // writes for a manual failover ...) happens before any other event.
    super::cluster_apply_actions(srv);
}

/// clusterAcceptHandler: every pending connection becomes an inbound link.
fn cluster_accept_handler(registry: &Registry, state: &mut ClusterState, next_token: &mut usize) {
    loop {
        let Some(listener) = state.listener.as_ref() else {
            return;
        };
        match listener.accept() {
            Ok((mut stream, addr)) => {
                let token = Token(*next_token);
                *next_token += 1;
                let _ = stream.set_nodelay(true);
                if registry
                    .register(&mut stream, token, Interest::READABLE | Interest::WRITABLE)
                    .is_err()
                {
                    continue;
                }
                server_log(
                    LogLevel::Verbose,
                    &format!("Accepting cluster node connection from {}", addr.ip()),
                );
                state.links.insert(
                    token,
                    ClusterLink {
                        ctime: mstime(),
                        stream,
                        sndbuf: Vec::new(),
                        rcvbuf: Vec::new(),
                        node: None,
                        inbound: true,
                        connected: true,
                    },
                );
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => {
                server_log(
                    LogLevel::Verbose,
                    &format!("Error accepting cluster node: {e}"),
                );
                return;
            }
        }
    }
}

/// freeClusterLink: close it and forget it wherever it is referenced.
pub fn free_cluster_link(registry: &Registry, state: &mut ClusterState, token: Token) {
    let Some(mut link) = state.links.remove(&token) else {
        return;
    };
    let _ = registry.deregister(&mut link.stream);
    if let Some(name) = link.node {
        if let Some(n) = state.nodes.get_mut(&name) {
            if n.link == Some(token) {
                n.link = None;
            }
            if n.inbound_link == Some(token) {
                n.inbound_link = None;
            }
        }
    }
}

/// The write half: finish a pending connect, then send what is queued.
fn cluster_write_handler(registry: &Registry, state: &mut ClusterState, token: Token) {
    let Some(link) = state.links.get_mut(&token) else {
        return;
    };
    if !link.connected {
        // clusterLinkConnectHandler: the connect(2) finished, or failed.
        match link.stream.take_error() {
            Ok(None) => {}
            _ => {
                free_cluster_link(registry, state, token);
                return;
            }
        }
        match link.stream.peer_addr() {
            Ok(_) => link.connected = true,
            Err(e) if e.kind() == ErrorKind::NotConnected => return,
            Err(_) => {
                free_cluster_link(registry, state, token);
                return;
            }
        }
    }
    if !flush_link(link) {
        free_cluster_link(registry, state, token);
    }
}

/// Write `sndbuf` until it is empty or the socket is full; false on error.
fn flush_link(link: &mut ClusterLink) -> bool {
    if !link.connected {
        return true;
    }
    let mut written = 0;
    while written < link.sndbuf.len() {
        match link.stream.write(&link.sndbuf[written..]) {
            Ok(0) => return false,
            Ok(n) => written += n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => return false,
        }
    }
    link.sndbuf.drain(..written);
    true
}

/// Flush every link with queued bytes (from clusterBeforeSleep: packets
/// queued while processing this pass's events go out before poll).
pub fn cluster_flush_links(state: &mut ClusterState) {
    for link in state.links.values_mut() {
        // A failed write is not handled here: the socket reports the error
        // to the next read, which closes the link.
        if !link.sndbuf.is_empty() {
            flush_link(link);
        }
    }
}

/// clusterReadHandler: read what is there, process every whole packet.
fn cluster_read_handler(
    registry: &Registry,
    state: &mut ClusterState,
    token: Token,
    hdr: &HeaderInputs,
    node_timeout: i64,
) {
    let mut buf = [0u8; RCVBUF_READ_LEN];
    let mut closed = false;
    {
        let Some(link) = state.links.get_mut(&token) else {
            return;
        };
        loop {
            match link.stream.read(&mut buf) {
                Ok(0) => {
                    closed = true;
                    break;
                }
                Ok(n) => link.rcvbuf.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => {
                    closed = true;
                    break;
                }
            }
        }
    }
    // Every complete packet in the buffer, in order.
    loop {
        let Some(link) = state.links.get_mut(&token) else {
            return;
        };
        let totlen = match codec::frame_len(&link.rcvbuf) {
            Ok(None) => break,
            Ok(Some(totlen)) => totlen,
            Err(e) => {
                server_log(LogLevel::Warning, &e.to_string());
                free_cluster_link(registry, state, token);
                return;
            }
        };
        if link.rcvbuf.len() < totlen {
            break;
        }
        let packet: Vec<u8> = link.rcvbuf.drain(..totlen).collect();
        // Counted by type as soon as it is framed, valid or not, as
        // Redis's clusterProcessPacket does before its checks.
        let msg_type = u16::from_be_bytes([packet[12], packet[13]]);
        if msg_type < CLUSTERMSG_TYPE_COUNT {
            state.stats_bus_messages_received[msg_type as usize] += 1;
        }
        match codec::decode(&packet) {
            Ok(msg) => {
                cluster_process_packet(registry, state, token, &msg, hdr, node_timeout);
            }
            Err(e) if e.closes_link() => {
                server_log(LogLevel::Warning, &e.to_string());
                free_cluster_link(registry, state, token);
                return;
            }
            Err(e) => server_log(LogLevel::Warning, &e.to_string()),
        }
    }
    if closed {
        free_cluster_link(registry, state, token);
    }
}

// ---------------------------------------------------------------------------
// Building and sending packets
// ---------------------------------------------------------------------------

/// clusterBuildMessageHdr: who I am, as every packet says it.
pub(super) fn cluster_build_message_hdr(state: &ClusterState, hdr: &HeaderInputs) -> MsgHeader {
    let me = state.myself();
    let mut h = MsgHeader::new(me.name);
    // A replica advertises its master's slots and epoch.
    let master = match me.slaveof.and_then(|m| state.nodes.get(&m)) {
        Some(m) if me.is_slave() => m,
        _ => me,
    };
    h.myslots = master.slots.clone();
    h.slaveof = if me.is_slave() {
        me.slaveof.unwrap_or(NodeName::NULL)
    } else {
        NodeName::NULL
    };
    if !hdr.announce_ip.is_empty() {
        h.myip = NetIp::new(hdr.announce_ip.as_bytes());
    }
    h.port = if me.port != 0 { me.port } else { hdr.port };
    h.cport = me.cport;
    h.flags = me.flags;
    h.state = state.state;
    h.current_epoch = state.current_epoch;
    h.config_epoch = master.config_epoch;
    h.offset = hdr.offset.max(0) as u64;
    // A master whose clients are paused for a manual failover says so:
    // its offset will not move until the replica took over.
    if me.is_master() && state.mf_end != 0 {
        h.mflags[0] |= codec::CLUSTERMSG_FLAG0_PAUSED;
    }
    h
}

/// Queue `msg` on a link and try to send it now; counts it in the stats.
pub(super) fn cluster_send_message(state: &mut ClusterState, token: Token, msg: &ClusterMsg) {
    let msg_type = msg.msg_type();
    let Some(link) = state.links.get_mut(&token) else {
        return;
    };
    if msg.encode_into(&mut link.sndbuf).is_err() {
        return;
    }
    flush_link(link);
    if msg_type < CLUSTERMSG_TYPE_COUNT {
        state.stats_bus_messages_sent[msg_type as usize] += 1;
    }
}

/// clusterSetGossipEntry: what I know of `n`, for a gossip section.
fn gossip_entry(n: &ClusterNode) -> Gossip {
    Gossip {
        nodename: n.name,
        ping_sent: (n.ping_sent / 1000) as u32,
        pong_received: (n.pong_received / 1000) as u32,
        ip: NetIp::new(n.ip.as_bytes()),
        port: n.port,
        cport: n.cport,
        flags: n.flags,
        pport: n.pport,
        notused1: 0,
    }
}

/// clusterSendPing: a PING, PONG or MEET with a gossip section of about a
/// tenth of the nodes (at least 3), plus every node I believe is failing.
pub fn cluster_send_ping(
    state: &mut ClusterState,
    token: Token,
    msg_type: u16,
    hdr: &HeaderInputs,
) {
    let total = state.nodes.len();
    let freshnodes = total.saturating_sub(2);
    let wanted = (total / 10).max(3).min(freshnodes);
    let names: Vec<NodeName> = state.nodes.keys().copied().collect();
    let mut rng = rand::rng();
    let mut chosen: Vec<NodeName> = Vec::new();
    let mut iterations = wanted * 3;
    while chosen.len() < wanted && iterations > 0 && !names.is_empty() {
        iterations -= 1;
        let name = names[rng.random_range(0..names.len())];
        let n = &state.nodes[&name];
        // Not myself, not PFAIL ones (added below), not nodes still in
        // handshake or without address, not idle slot-less nodes.
        if n.flags & CLUSTER_NODE_MYSELF != 0
            || n.flags & CLUSTER_NODE_PFAIL != 0
            || n.flags & (CLUSTER_NODE_HANDSHAKE | CLUSTER_NODE_NOADDR) != 0
            || (n.link.is_none() && n.numslots == 0)
            || chosen.contains(&name)
        {
            continue;
        }
        chosen.push(name);
    }
    let mut gossip: Vec<Gossip> = chosen
        .iter()
        .map(|n| gossip_entry(&state.nodes[n]))
        .collect();
    for n in state.nodes.values() {
        if n.flags & CLUSTER_NODE_PFAIL != 0
            && n.flags & (CLUSTER_NODE_HANDSHAKE | CLUSTER_NODE_NOADDR) == 0
        {
            gossip.push(gossip_entry(n));
        }
    }
    let mut extensions = Vec::new();
    let hostname = &state.myself().hostname;
    if !hostname.is_empty() {
        extensions.push(PingExt::hostname(hostname.as_bytes()));
    }
    let data = PingData { gossip, extensions };
    let body = match msg_type {
        CLUSTERMSG_TYPE_PONG => MsgBody::Pong(data),
        CLUSTERMSG_TYPE_MEET => MsgBody::Meet(data),
        _ => MsgBody::Ping(data),
    };
    let msg = ClusterMsg::new(cluster_build_message_hdr(state, hdr), body);
    if msg_type == CLUSTERMSG_TYPE_PING {
        if let Some(name) = state.links.get(&token).and_then(|l| l.node) {
            if let Some(n) = state.nodes.get_mut(&name) {
                n.ping_sent = mstime();
            }
        }
    }
    cluster_send_message(state, token, &msg);
}

/// clusterBroadcastMessage: to every connected node but myself and those
/// in handshake.
pub(super) fn cluster_broadcast_message(state: &mut ClusterState, msg: &ClusterMsg) {
    let tokens: Vec<Token> = state
        .nodes
        .values()
        .filter(|n| n.flags & (CLUSTER_NODE_MYSELF | CLUSTER_NODE_HANDSHAKE) == 0)
        .filter_map(|n| n.link)
        .collect();
    for token in tokens {
        cluster_send_message(state, token, msg);
    }
}

/// clusterBroadcastPong: a PONG to every connected node, so they learn a
/// change of mine at once.
pub fn cluster_broadcast_pong(state: &mut ClusterState, hdr: &HeaderInputs) {
    let tokens: Vec<Token> = state
        .nodes
        .values()
        .filter(|n| n.flags & (CLUSTER_NODE_MYSELF | CLUSTER_NODE_HANDSHAKE) == 0)
        .filter_map(|n| n.link)
        .collect();
    for token in tokens {
        cluster_send_ping(state, token, CLUSTERMSG_TYPE_PONG, hdr);
    }
}

/// clusterBroadcastPong(CLUSTER_BROADCAST_LOCAL_SLAVES): a PONG to the
/// other replicas of my master (and my own replicas), so they learn my
/// offset before an election.
pub fn cluster_broadcast_pong_local_slaves(state: &mut ClusterState, hdr: &HeaderInputs) {
    let me = state.myself;
    let my_master = state.myself().slaveof;
    let tokens: Vec<Token> = state
        .nodes
        .values()
        .filter(|n| n.flags & (CLUSTER_NODE_MYSELF | CLUSTER_NODE_HANDSHAKE) == 0)
        .filter(|n| {
            n.is_slave() && n.slaveof.is_some() && (n.slaveof == Some(me) || n.slaveof == my_master)
        })
        .filter_map(|n| n.link)
        .collect();
    for token in tokens {
        cluster_send_ping(state, token, CLUSTERMSG_TYPE_PONG, hdr);
    }
}

/// clusterPropagatePublish: a PUBLISH goes to every node; an SPUBLISH to
/// the other nodes serving my slots (my master or myself, and the
/// replicas), as clusterGetNodesServingMySlots lists them.
pub fn cluster_propagate_publish(srv: &mut Server, channel: &[u8], message: &[u8], sharded: bool) {
    let hdr = header_inputs(srv);
    let Some(state) = srv.cluster.as_deref_mut() else {
        return;
    };
    let data = codec::PublishData {
        channel: channel.to_vec(),
        message: message.to_vec(),
    };
    let body = if sharded {
        MsgBody::PublishShard(data)
    } else {
        MsgBody::Publish(data)
    };
    let msg = ClusterMsg::new(cluster_build_message_hdr(state, &hdr), body);
    if !sharded {
        cluster_broadcast_message(state, &msg);
        return;
    }
    let me = state.myself();
    let primary = if me.is_master() {
        Some(me.name)
    } else {
        me.slaveof
    };
    let Some(primary) = primary.and_then(|p| state.nodes.get(&p)) else {
        return;
    };
    let tokens: Vec<Token> = std::iter::once(primary.name)
        .chain(primary.slaves.iter().copied())
        .filter(|n| *n != state.myself)
        .filter_map(|n| state.nodes.get(&n).and_then(|n| n.link))
        .collect();
    for t in tokens {
        cluster_send_message(state, t, &msg);
    }
}

/// clusterSendFail: tell everyone `failing` is FAIL.
fn cluster_send_fail(state: &mut ClusterState, failing: NodeName, hdr: &HeaderInputs) {
    let msg = ClusterMsg::new(
        cluster_build_message_hdr(state, hdr),
        MsgBody::Fail(failing),
    );
    cluster_broadcast_message(state, &msg);
}

/// clusterSendUpdate: tell the node behind `token` that `about` has a newer
/// claim on slots it thinks it serves.
fn cluster_send_update(
    state: &mut ClusterState,
    token: Token,
    about: NodeName,
    hdr: &HeaderInputs,
) {
    let Some(n) = state.nodes.get(&about) else {
        return;
    };
    let body = MsgBody::Update(UpdateData {
        config_epoch: n.config_epoch,
        nodename: n.name,
        slots: n.slots.clone(),
    });
    let msg = ClusterMsg::new(cluster_build_message_hdr(state, hdr), body);
    cluster_send_message(state, token, &msg);
}

// ---------------------------------------------------------------------------
// The node table: handshakes, renames, deletions
// ---------------------------------------------------------------------------

/// CLUSTER MEET's address was not a valid IP and ports (Redis's EINVAL).
#[derive(Debug)]
pub struct InvalidAddress;

/// clusterStartHandshake: Err for an invalid address (CLUSTER MEET's
/// "Invalid node address"), Ok(false) when a handshake with that address
/// is already under way, Ok(true) when a new one starts.
pub fn cluster_start_handshake(
    state: &mut ClusterState,
    ip: &str,
    port: i64,
    cport: i64,
) -> Result<bool, InvalidAddress> {
    let Ok(addr) = ip.parse::<IpAddr>() else {
        return Err(InvalidAddress);
    };
    if port <= 0 || port > 65535 || cport <= 0 || cport > 65535 {
        return Err(InvalidAddress);
    }
    // The normalized form (an IPv6 address in its canonical text).
    let norm = addr.to_string();
    let (port, cport) = (port as u16, cport as u16);
    if state.nodes.values().any(|n| {
        n.in_handshake() && n.ip.eq_ignore_ascii_case(&norm) && n.port == port && n.cport == cport
    }) {
        return Ok(false);
    }
    let name = NodeName::from_random(rand::random());
    let mut n = ClusterNode::new(name, CLUSTER_NODE_HANDSHAKE | CLUSTER_NODE_MEET);
    n.ip = norm;
    n.port = port;
    n.cport = cport;
    state.nodes.insert(name, n);
    Ok(true)
}

/// clusterDelNode: forget a node, its slots, its links and its reports.
pub fn cluster_del_node(registry: &Registry, state: &mut ClusterState, name: NodeName) {
    state.importing_slots_from.retain(|_, n| *n != name);
    state.migrating_slots_to.retain(|_, n| *n != name);
    for slot in 0..CLUSTER_SLOTS as u16 {
        if state.slots[slot as usize] == Some(name) {
            state.del_slot(slot);
        }
    }
    for n in state.nodes.values_mut() {
        n.fail_reports.retain(|(reporter, _)| *reporter != name);
    }
    let (link, inbound) = match state.nodes.get(&name) {
        Some(n) => (n.link, n.inbound_link),
        None => return,
    };
    for token in [link, inbound].into_iter().flatten() {
        free_cluster_link(registry, state, token);
    }
    // freeClusterNode: its replicas no longer know their master, and its
    // master no longer lists it.
    let Some(n) = state.nodes.remove(&name) else {
        return;
    };
    for r in &n.slaves {
        if let Some(r) = state.nodes.get_mut(r) {
            r.slaveof = None;
        }
    }
    if let (true, Some(m)) = (n.is_slave(), n.slaveof) {
        state.node_remove_slave(m, name);
    }
}

/// clusterRenameNode: a handshake node learns its real name.
fn cluster_rename_node(state: &mut ClusterState, old: NodeName, new: NodeName) {
    server_log(
        LogLevel::Verbose,
        &format!("Renaming node {old} into {new}"),
    );
    let Some(mut n) = state.nodes.remove(&old) else {
        return;
    };
    n.name = new;
    for link in state.links.values_mut() {
        if link.node == Some(old) {
            link.node = Some(new);
        }
    }
    state.nodes.insert(new, n);
}

/// clusterBlacklistExists (after clusterBlacklistCleanup).
fn cluster_blacklist_exists(state: &mut ClusterState, name: &NodeName) -> bool {
    let now = mstime() / 1000;
    state.nodes_black_list.retain(|_, expire| *expire >= now);
    state.nodes_black_list.contains_key(name)
}

/// clusterBlacklistAddNode: FORGET keeps a node out for a minute.
pub fn cluster_blacklist_add_node(state: &mut ClusterState, name: NodeName) {
    let expire = mstime() / 1000 + CLUSTER_BLACKLIST_TTL;
    state.nodes_black_list.insert(name, expire);
}

/// The peer's IP as text (nodeIp2String without an announced one).
fn link_peer_ip(state: &ClusterState, token: Token) -> String {
    state
        .links
        .get(&token)
        .and_then(|l| l.stream.peer_addr().ok())
        .map(|a| a.ip().to_string())
        .unwrap_or_default()
}

/// nodeIp2String: the announced IP if the header has one, else the peer's.
fn node_ip_from_header(state: &ClusterState, token: Token, myip: &NetIp) -> String {
    if myip.is_empty() {
        link_peer_ip(state, token)
    } else {
        String::from_utf8_lossy(myip.as_bytes()).into_owned()
    }
}

/// nodeUpdateAddressIfNeeded: the node moved; true when it did.
fn node_update_address_if_needed(
    registry: &Registry,
    state: &mut ClusterState,
    name: NodeName,
    token: Token,
    h: &MsgHeader,
) -> bool {
    let ip = node_ip_from_header(state, token, &h.myip);
    let Some(n) = state.nodes.get_mut(&name) else {
        return false;
    };
    if n.link == Some(token) {
        return false;
    }
    if n.ip == ip && n.port == h.port && n.cport == h.cport && n.pport == h.pport {
        return false;
    }
    n.ip = ip.clone();
    n.port = h.port;
    n.cport = h.cport;
    n.pport = h.pport;
    n.flags &= !CLUSTER_NODE_NOADDR;
    let old_link = n.link;
    server_log(
        LogLevel::Warning,
        &format!("Address updated for node {name}, now {ip}:{}", h.port),
    );
    if let Some(t) = old_link {
        free_cluster_link(registry, state, t);
    }
    true
}

// ---------------------------------------------------------------------------
// Failure detection
// ---------------------------------------------------------------------------

/// markNodeAsFailingIfNeeded: PFAIL becomes FAIL once a majority of the
/// masters (me included, if I am one) report it.
fn mark_node_as_failing_if_needed(
    state: &mut ClusterState,
    name: NodeName,
    node_timeout: i64,
    hdr: &HeaderInputs,
) {
    let needed_quorum = state.size / 2 + 1;
    let me_master = state.myself().is_master();
    let now = mstime();
    let Some(n) = state.nodes.get_mut(&name) else {
        return;
    };
    if !n.timed_out() || n.failed() {
        return;
    }
    let maxtime = node_timeout * CLUSTER_FAIL_REPORT_VALIDITY_MULT;
    n.fail_reports.retain(|(_, t)| now - t <= maxtime);
    let mut failures = n.fail_reports.len();
    if me_master {
        failures += 1;
    }
    if failures < needed_quorum {
        return;
    }
    server_log(
        LogLevel::Notice,
        &format!("Marking node {name} as failing (quorum reached)."),
    );
    n.flags &= !CLUSTER_NODE_PFAIL;
    n.flags |= CLUSTER_NODE_FAIL;
    n.fail_time = now;
    cluster_send_fail(state, name, hdr);
    state.do_before_sleep(CLUSTER_TODO_UPDATE_STATE | CLUSTER_TODO_SAVE_CONFIG);
}

/// clearNodeFailureIfNeeded: a FAIL node is reachable again.
fn clear_node_failure_if_needed(state: &mut ClusterState, name: NodeName, node_timeout: i64) {
    let now = mstime();
    let Some(n) = state.nodes.get_mut(&name) else {
        return;
    };
    if !n.failed() {
        return;
    }
    // A replica or a slot-less master is simply back; a master with slots
    // only after a while with nobody taking its slots over.
    if n.is_slave()
        || n.numslots == 0
        || now - n.fail_time > node_timeout * CLUSTER_FAIL_UNDO_TIME_MULT
    {
        server_log(
            LogLevel::Notice,
            &format!("Clear FAIL state for node {name}: is reachable again."),
        );
        n.flags &= !CLUSTER_NODE_FAIL;
        state.do_before_sleep(CLUSTER_TODO_UPDATE_STATE | CLUSTER_TODO_SAVE_CONFIG);
    }
}

// ---------------------------------------------------------------------------
// Processing a packet
// ---------------------------------------------------------------------------

/// clusterProcessGossipSection: learn from what the sender says about other
/// nodes.
fn cluster_process_gossip_section(
    state: &mut ClusterState,
    sender: Option<NodeName>,
    gossip: &[Gossip],
    node_timeout: i64,
    hdr: &HeaderInputs,
) {
    let now = mstime();
    let sender_is_master = sender
        .and_then(|s| state.nodes.get(&s))
        .is_some_and(|s| s.is_master());
    for g in gossip {
        let flags = g.flags;
        if !g.nodename.is_valid() {
            continue;
        }
        if state.nodes.contains_key(&g.nodename) {
            let name = g.nodename;
            // A master's opinion about a third node counts as a failure
            // report (or withdraws one).
            if let (true, Some(s)) = (sender_is_master, sender) {
                if name != state.myself {
                    let n = state.nodes.get_mut(&name).expect("checked above");
                    if flags & (CLUSTER_NODE_FAIL | CLUSTER_NODE_PFAIL) != 0 {
                        match n.fail_reports.iter_mut().find(|(r, _)| *r == s) {
                            Some(report) => report.1 = now,
                            None => n.fail_reports.push((s, now)),
                        }
                        mark_node_as_failing_if_needed(state, name, node_timeout, hdr);
                    } else {
                        n.fail_reports.retain(|(r, _)| *r != s);
                    }
                }
            }
            let n = state.nodes.get_mut(&name).expect("checked above");
            // A fresher PONG time heard from others, while we have no
            // reason to doubt the node ourselves.
            if flags & (CLUSTER_NODE_FAIL | CLUSTER_NODE_PFAIL) == 0
                && n.ping_sent == 0
                && n.fail_reports.is_empty()
            {
                let pongtime = g.pong_received as i64 * 1000;
                if pongtime <= now + 500 && pongtime > n.pong_received {
                    n.pong_received = pongtime;
                }
            }
            // A failing node we cannot reach may have a new address.
            let ip = String::from_utf8_lossy(g.ip.as_bytes()).into_owned();
            if n.flags & (CLUSTER_NODE_FAIL | CLUSTER_NODE_PFAIL) != 0
                && flags & CLUSTER_NODE_NOADDR == 0
                && n.link.is_none()
                && (!n.ip.eq_ignore_ascii_case(&ip) || n.port != g.port || n.cport != g.cport)
            {
                n.ip = ip;
                n.port = g.port;
                n.pport = g.pport;
                n.cport = g.cport;
                n.flags &= !CLUSTER_NODE_NOADDR;
            }
        } else if sender.is_some()
            && flags & CLUSTER_NODE_NOADDR == 0
            && !cluster_blacklist_exists(state, &g.nodename)
        {
            // A node we never heard of: add it under its real name, and
            // clusterCron connects to it.
            let mut n = ClusterNode::new(
                g.nodename,
                flags & !(CLUSTER_NODE_MYSELF | CLUSTER_NODE_MEET),
            );
            n.ip = String::from_utf8_lossy(g.ip.as_bytes()).into_owned();
            n.port = g.port;
            n.pport = g.pport;
            n.cport = g.cport;
            state.nodes.insert(g.nodename, n);
        }
    }
}

/// clusterUpdateSlotsConfigWith: `sender` claims `slots` with `epoch`; take
/// every slot whose current owner has an older claim. If that leaves my
/// shard (myself as a master, or my master) without slots, the sender is
/// the shard's new master and I replicate it: this is how a failed-over
/// master rejoins as a replica, and how the other replicas follow the
/// winner of an election.
fn cluster_update_slots_config_with(
    state: &mut ClusterState,
    sender: NodeName,
    epoch: u64,
    slots: &cluster::slots::SlotBitmap,
    hdr: &HeaderInputs,
) {
    if sender == state.myself {
        server_log(LogLevel::Warning, "Discarding UPDATE message about myself.");
        return;
    }
    let me = state.myself;
    let curmaster = if state.myself().is_master() {
        Some(me)
    } else {
        state.myself().slaveof
    };
    let mut dirty: Vec<u16> = Vec::new();
    let mut newmaster = None;
    let (mut sender_slots, mut migrated_our_slots) = (0, 0);
    for slot in 0..CLUSTER_SLOTS as u16 {
        if !slots.get(slot) {
            continue;
        }
        sender_slots += 1;
        let owner = state.slots[slot as usize];
        if owner == Some(sender) || state.importing_slots_from.contains_key(&slot) {
            continue;
        }
        let older = match owner.and_then(|o| state.nodes.get(&o)) {
            None => true,
            Some(o) => o.config_epoch < epoch,
        };
        if !older {
            continue;
        }
        // A slot of mine: its keys must go unless I become a replica
        // (then the full sync replaces everything). The keyspace is the
        // server's, so every such slot is listed and delKeysInSlot finds
        // what is there (nothing, for most).
        if owner == Some(me) {
            dirty.push(slot);
        }
        if owner.is_some() && owner == curmaster {
            newmaster = Some(sender);
            migrated_our_slots += 1;
        }
        state.del_slot(slot);
        state.add_slot(sender, slot);
        state.do_before_sleep(
            CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_UPDATE_STATE | CLUSTER_TODO_FSYNC_CONFIG,
        );
    }
    let curmaster_empty = curmaster
        .and_then(|m| state.nodes.get(&m))
        .is_some_and(|m| m.numslots == 0);
    let grandmaster = state
        .myself()
        .slaveof
        .and_then(|m| state.nodes.get(&m))
        .and_then(|m| m.slaveof);
    if newmaster.is_some()
        && curmaster_empty
        && (hdr.allow_replica_migration || sender_slots == migrated_our_slots)
    {
        server_log(
            LogLevel::Warning,
            &format!(
                "Configuration change detected. Reconfiguring myself as a replica of {sender}"
            ),
        );
        state.set_master(sender);
        state.do_before_sleep(
            CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_UPDATE_STATE | CLUSTER_TODO_FSYNC_CONFIG,
        );
    } else if let Some(gm) = grandmaster.filter(|gm| *gm != me) {
        // My master became a replica: follow its master, not a replica.
        server_log(
            LogLevel::Warning,
            &format!("I'm a sub-replica! Reconfiguring myself as a replica of grandmaster {gm}"),
        );
        state.set_master(gm);
        state.do_before_sleep(
            CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_UPDATE_STATE | CLUSTER_TODO_FSYNC_CONFIG,
        );
    } else if !dirty.is_empty() {
        // Still a master with other slots: the keys of the lost slots go.
        state.dirty_slots.extend(dirty);
    }
}

/// clusterHandleConfigEpochCollision: two masters with the same config
/// epoch; the one with the smaller name takes a new one.
fn cluster_handle_config_epoch_collision(state: &mut ClusterState, sender: NodeName) {
    let me = state.myself();
    let Some(s) = state.nodes.get(&sender) else {
        return;
    };
    if s.config_epoch != me.config_epoch || !s.is_master() || !me.is_master() {
        return;
    }
    if sender.0 <= me.name.0 {
        return;
    }
    state.current_epoch += 1;
    let epoch = state.current_epoch;
    state.myself_mut().config_epoch = epoch;
    state.do_before_sleep(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_FSYNC_CONFIG);
    server_log(
        LogLevel::Verbose,
        &format!("WARNING: configEpoch collision with node {sender}. configEpoch set to {epoch}"),
    );
}

/// clusterProcessPacket: act on one valid packet from the link `token`.
pub fn cluster_process_packet(
    registry: &Registry,
    state: &mut ClusterState,
    token: Token,
    msg: &ClusterMsg,
    hdr: &HeaderInputs,
    node_timeout: i64,
) {
    let h = &msg.header;
    let msg_type = msg.msg_type();
    let now = mstime();
    let sender = state
        .nodes
        .get(&h.sender)
        .filter(|n| !n.in_handshake())
        .map(|n| n.name);
    let inbound = state.links.get(&token).is_some_and(|l| l.inbound);
    if let Some(s) = sender {
        // setClusterNodeToInboundClusterLink: this is where s talks to us.
        if inbound {
            let old = state.nodes[&s].inbound_link;
            if old != Some(token) {
                if let Some(old) = old {
                    free_cluster_link(registry, state, old);
                }
                if let Some(l) = state.links.get_mut(&token) {
                    l.node = Some(s);
                }
                if let Some(n) = state.nodes.get_mut(&s) {
                    n.inbound_link = Some(token);
                }
            }
        }
        // Epochs: the cluster's clock only moves forward.
        let n = state.nodes.get_mut(&s).expect("sender is known");
        n.data_received = now;
        n.repl_offset = h.offset as i64;
        if h.config_epoch > n.config_epoch && n.flags & CLUSTER_NODE_MYSELF == 0 {
            n.config_epoch = h.config_epoch;
            state.do_before_sleep(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_FSYNC_CONFIG);
        }
        if h.current_epoch > state.current_epoch {
            state.current_epoch = h.current_epoch;
            state.do_before_sleep(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_FSYNC_CONFIG);
        }
        // A replica in a manual failover: my master's offset once it paused.
        if state.mf_end != 0
            && state.myself().is_slave()
            && state.myself().slaveof == Some(s)
            && h.mflags[0] & codec::CLUSTERMSG_FLAG0_PAUSED != 0
            && state.mf_master_offset == -1
        {
            state.mf_master_offset = h.offset as i64;
            state.do_before_sleep(super::CLUSTER_TODO_HANDLE_MANUALFAILOVER);
            server_log(
                LogLevel::Warning,
                &format!(
                    "Received replication offset for paused master manual failover: {}",
                    state.mf_master_offset
                ),
            );
        }
    }

    let is_ping_like = matches!(
        msg_type,
        CLUSTERMSG_TYPE_PING | CLUSTERMSG_TYPE_PONG | CLUSTERMSG_TYPE_MEET
    );
    if msg_type == CLUSTERMSG_TYPE_PING || msg_type == CLUSTERMSG_TYPE_MEET {
        // My own IP, as the peer reached me, unless announced.
        if (msg_type == CLUSTERMSG_TYPE_MEET || state.myself().ip.is_empty())
            && hdr.announce_ip.is_empty()
        {
            let local = state
                .links
                .get(&token)
                .and_then(|l| l.stream.local_addr().ok())
                .map(|a| a.ip().to_string());
            if let Some(ip) = local {
                if state.myself().ip != ip {
                    server_log(
                        LogLevel::Warning,
                        &format!("IP address for this node updated to {ip}"),
                    );
                    state.myself_mut().ip = ip;
                    state.do_before_sleep(CLUSTER_TODO_SAVE_CONFIG);
                }
            }
        }
        // A MEET from a stranger: add it, in handshake until our own PING
        // gets its PONG with the real name.
        if sender.is_none() && msg_type == CLUSTERMSG_TYPE_MEET {
            let name = NodeName::from_random(rand::random());
            let mut n = ClusterNode::new(name, CLUSTER_NODE_HANDSHAKE);
            n.ip = node_ip_from_header(state, token, &h.myip);
            n.port = h.port;
            n.pport = h.pport;
            n.cport = h.cport;
            state.nodes.insert(name, n);
            state.do_before_sleep(CLUSTER_TODO_SAVE_CONFIG);
        }
        // The sender's NOFAILOVER flag, as it says it.
        if let Some(n) = sender.and_then(|s| state.nodes.get_mut(&s)) {
            n.flags &= !CLUSTER_NODE_NOFAILOVER;
            n.flags |= h.flags & CLUSTER_NODE_NOFAILOVER;
        }
        // Anyway, answer with a PONG.
        cluster_send_ping(state, token, CLUSTERMSG_TYPE_PONG, hdr);
    }

    if is_ping_like {
        let link_node = state.links.get(&token).and_then(|l| l.node);
        if let (Some(ln), false) = (link_node, inbound) {
            let in_handshake = state.nodes.get(&ln).is_some_and(|n| n.in_handshake());
            if in_handshake {
                if let Some(s) = sender {
                    // We already knew it under its real name: drop the
                    // handshake duplicate.
                    if node_update_address_if_needed(registry, state, s, token, h) {
                        state.do_before_sleep(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_UPDATE_STATE);
                    }
                    cluster_del_node(registry, state, ln);
                    return;
                }
                // The first PONG: the node's real name.
                if !h.sender.is_valid() {
                    return;
                }
                cluster_rename_node(state, ln, h.sender);
                let n = state.nodes.get_mut(&h.sender).expect("just renamed");
                n.flags &= !CLUSTER_NODE_HANDSHAKE;
                n.flags |= h.flags & (CLUSTER_NODE_MASTER | CLUSTER_NODE_SLAVE);
                server_log(
                    LogLevel::Verbose,
                    &format!("Handshake with node {} completed.", h.sender),
                );
                state.do_before_sleep(CLUSTER_TODO_SAVE_CONFIG);
            } else if ln != h.sender {
                // The node at this address has another name now.
                server_log(
                    LogLevel::Verbose,
                    &format!(
                        "PONG contains mismatching sender ID. About node {ln} added {}",
                        h.sender
                    ),
                );
                if let Some(n) = state.nodes.get_mut(&ln) {
                    n.flags |= CLUSTER_NODE_NOADDR;
                    n.ip.clear();
                    n.port = 0;
                    n.pport = 0;
                    n.cport = 0;
                }
                free_cluster_link(registry, state, token);
                state.do_before_sleep(CLUSTER_TODO_SAVE_CONFIG);
                return;
            }
        }
        // A PING from a known node: its address may have changed.
        if let Some(s) = sender {
            if msg_type == CLUSTERMSG_TYPE_PING
                && node_update_address_if_needed(registry, state, s, token, h)
            {
                state.do_before_sleep(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_UPDATE_STATE);
            }
        }
        // The PONG we waited for.
        let link_node = state.links.get(&token).and_then(|l| l.node);
        if let (Some(ln), CLUSTERMSG_TYPE_PONG) = (link_node, msg_type) {
            if let Some(n) = state.nodes.get_mut(&ln) {
                n.pong_received = now;
                n.ping_sent = 0;
                if n.timed_out() {
                    n.flags &= !CLUSTER_NODE_PFAIL;
                    state.do_before_sleep(CLUSTER_TODO_UPDATE_STATE | CLUSTER_TODO_SAVE_CONFIG);
                } else if n.failed() {
                    clear_node_failure_if_needed(state, ln, node_timeout);
                }
            }
        }
        let Some(s) = sender else {
            return;
        };
        // Role: a null slaveof means a master.
        if h.slaveof.is_null() {
            state.set_node_as_master(s);
        } else {
            let master = state.lookup_node(h.slaveof.as_bytes());
            if state.nodes[&s].is_master() {
                // A master turned into a replica: it serves nothing now.
                state.del_node_slots(s);
                let n = state.nodes.get_mut(&s).expect("sender is known");
                n.flags &= !(CLUSTER_NODE_MASTER | CLUSTER_NODE_MIGRATE_TO_MASK);
                n.flags |= CLUSTER_NODE_SLAVE;
                state.do_before_sleep(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_UPDATE_STATE);
            }
            // Its master changed (or is now known).
            if let Some(m) = master {
                let old = state.nodes[&s].slaveof;
                if old != Some(m) {
                    if let Some(old) = old {
                        state.node_remove_slave(old, s);
                    }
                    state.node_add_slave(m, s);
                    state.nodes.get_mut(&s).expect("sender is known").slaveof = Some(m);
                    state.do_before_sleep(CLUSTER_TODO_SAVE_CONFIG);
                }
            }
        }
        // Slots: a master's claim with a newer epoch wins.
        let sender_is_master = state.nodes[&s].is_master();
        let sender_master = if sender_is_master {
            Some(s)
        } else {
            state.nodes[&s]
                .slaveof
                .filter(|m| state.nodes.contains_key(m))
        };
        let dirty_slots = sender_master.is_some_and(|m| state.nodes[&m].slots != h.myslots);
        if sender_is_master && dirty_slots {
            cluster_update_slots_config_with(state, s, h.config_epoch, &h.myslots, hdr);
        }
        // The sender claims a slot whose owner has a newer epoch: tell it.
        if dirty_slots {
            for slot in 0..CLUSTER_SLOTS as u16 {
                if !h.myslots.get(slot) {
                    continue;
                }
                let Some(owner) = state.slots[slot as usize] else {
                    continue;
                };
                if owner == s {
                    continue;
                }
                if state.nodes[&owner].config_epoch > h.config_epoch {
                    if let Some(t) = state.nodes[&s].link {
                        cluster_send_update(state, t, owner, hdr);
                    }
                    break;
                }
            }
        }
        if sender_is_master
            && state.myself().is_master()
            && h.config_epoch == state.myself().config_epoch
        {
            cluster_handle_config_epoch_collision(state, s);
        }
        if let Some(data) = msg.ping_data() {
            if let Some(host) = msg.hostname() {
                let host = String::from_utf8_lossy(host).into_owned();
                if let Some(n) = state.nodes.get_mut(&s) {
                    n.hostname = host;
                }
            }
            cluster_process_gossip_section(state, Some(s), &data.gossip, node_timeout, hdr);
        }
        return;
    }

    match &msg.body {
        MsgBody::Fail(about) => {
            if sender.is_none() {
                return;
            }
            if let Some(n) = state.nodes.get_mut(about) {
                if n.flags & (CLUSTER_NODE_FAIL | CLUSTER_NODE_MYSELF) == 0 {
                    server_log(
                        LogLevel::Notice,
                        &format!("FAIL message received about {about}"),
                    );
                    n.flags |= CLUSTER_NODE_FAIL;
                    n.fail_time = now;
                    n.flags &= !CLUSTER_NODE_PFAIL;
                    state.do_before_sleep(CLUSTER_TODO_UPDATE_STATE | CLUSTER_TODO_SAVE_CONFIG);
                }
            }
        }
        MsgBody::Update(u) => {
            if sender.is_none() {
                return;
            }
            let Some(n) = state.nodes.get(&u.nodename) else {
                return;
            };
            if n.config_epoch >= u.config_epoch {
                return;
            }
            // In my view the node is a replica: it is a master now.
            if n.is_slave() {
                state.set_node_as_master(u.nodename);
            }
            if let Some(n) = state.nodes.get_mut(&u.nodename) {
                n.config_epoch = u.config_epoch;
            }
            state.do_before_sleep(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_FSYNC_CONFIG);
            cluster_update_slots_config_with(state, u.nodename, u.config_epoch, &u.slots, hdr);
        }
        MsgBody::FailoverAuthRequest => {
            let Some(s) = sender else {
                return;
            };
            super::failover::cluster_send_failover_auth_if_needed(state, s, h, hdr);
        }
        MsgBody::FailoverAuthAck => {
            let Some(s) = sender else {
                return;
            };
            // A vote counts from a master serving slots, for this election
            // or a later one.
            let n = &state.nodes[&s];
            if n.is_master() && n.numslots > 0 && h.current_epoch >= state.failover_auth_epoch {
                state.failover_auth_count += 1;
                state.do_before_sleep(super::CLUSTER_TODO_HANDLE_FAILOVER);
            }
        }
        MsgBody::MfStart => {
            // Only from one of my replicas, to me as a master.
            let Some(s) = sender else {
                return;
            };
            if state.nodes[&s].slaveof != Some(state.myself) {
                return;
            }
            state.reset_manual_failover();
            state.mf_end = now + super::failover::CLUSTER_MF_TIMEOUT;
            state.mf_slave = Some(s);
            state.actions.push(super::ClusterAction::PauseWrites(
                now + super::failover::CLUSTER_MF_TIMEOUT * super::failover::CLUSTER_MF_PAUSE_MULT,
            ));
            server_log(
                LogLevel::Warning,
                &format!("Manual failover requested by replica {s}."),
            );
            // The PING carries my offset with the PAUSED flag: the replica
            // learns where to catch up to.
            cluster_send_ping(state, token, CLUSTERMSG_TYPE_PING, hdr);
        }
        MsgBody::Publish(d) | MsgBody::PublishShard(d) => {
            // Only from a node we know.
            if sender.is_none() {
                return;
            }
            let sharded = matches!(msg.body, MsgBody::PublishShard(_));
            state.actions.push(super::ClusterAction::Publish(
                d.channel.clone(),
                d.message.clone(),
                sharded,
            ));
        }
        // MODULE messages go to modules; redis-lite has none.
        _ => {}
    }
}

/// CLUSTER_NODE_MIGRATE_TO: cleared when a node becomes a replica.
const CLUSTER_NODE_MIGRATE_TO_MASK: u16 = cluster::node::CLUSTER_NODE_MIGRATE_TO;

// ---------------------------------------------------------------------------
// clusterCron's link work
// ---------------------------------------------------------------------------

/// Open the outbound link to `name` and send it a PING (or MEET).
fn cluster_connect_node(
    registry: &Registry,
    state: &mut ClusterState,
    name: NodeName,
    hdr: &HeaderInputs,
    next_token: &mut usize,
) {
    let (ip, cport, meet, old_ping_sent) = match state.nodes.get(&name) {
        Some(n) => (
            n.ip.clone(),
            n.cport,
            n.flags & CLUSTER_NODE_MEET != 0,
            n.ping_sent,
        ),
        None => return,
    };
    let Ok(ipaddr) = ip.parse::<IpAddr>() else {
        return;
    };
    let addr = SocketAddr::new(ipaddr, cport);
    let mut stream = match mio::net::TcpStream::connect(addr) {
        Ok(s) => s,
        Err(e) => {
            // Failure detection needs a PING in flight: claim one was sent
            // now (it is, once a link is made).
            if let Some(n) = state.nodes.get_mut(&name) {
                if n.ping_sent == 0 {
                    n.ping_sent = mstime();
                }
            }
            server_log(
                LogLevel::Debug,
                &format!("Unable to connect to Cluster Node [{ip}]:{cport} -> {e}"),
            );
            return;
        }
    };
    let _ = stream.set_nodelay(true);
    let token = Token(*next_token);
    *next_token += 1;
    if registry
        .register(&mut stream, token, Interest::READABLE | Interest::WRITABLE)
        .is_err()
    {
        return;
    }
    state.links.insert(
        token,
        ClusterLink {
            ctime: mstime(),
            stream,
            sndbuf: Vec::new(),
            rcvbuf: Vec::new(),
            node: Some(name),
            inbound: false,
            connected: false,
        },
    );
    if let Some(n) = state.nodes.get_mut(&name) {
        n.link = Some(token);
    }
    // clusterLinkConnectHandler's first packet, queued until the connect
    // completes. A reconnect keeps the PING time we were waiting on.
    let msg_type = if meet {
        CLUSTERMSG_TYPE_MEET
    } else {
        CLUSTERMSG_TYPE_PING
    };
    cluster_send_ping(state, token, msg_type, hdr);
    if let Some(n) = state.nodes.get_mut(&name) {
        if old_ping_sent != 0 {
            n.ping_sent = old_ping_sent;
        }
        n.flags &= !CLUSTER_NODE_MEET;
    }
}

/// clusterCron's per-node work: expire handshakes, (re)connect, ping, and
/// flag nodes that stopped answering as PFAIL.
pub fn cluster_cron_links(
    registry: &Registry,
    state: &mut ClusterState,
    hdr: &HeaderInputs,
    node_timeout: i64,
    next_token: &mut usize,
) {
    state.cron_iteration += 1;
    let now = mstime();
    let handshake_timeout = node_timeout.max(1000);
    let names: Vec<NodeName> = state.nodes.keys().copied().collect();
    for &name in &names {
        let Some(n) = state.nodes.get(&name) else {
            continue;
        };
        if n.flags & (CLUSTER_NODE_MYSELF | CLUSTER_NODE_NOADDR) != 0 {
            continue;
        }
        if n.in_handshake() && now - n.ctime > handshake_timeout {
            cluster_del_node(registry, state, name);
            continue;
        }
        if n.link.is_none() {
            cluster_connect_node(registry, state, name, hdr, next_token);
        }
    }
    // Once a second, PING the node of five random ones we heard from least
    // recently.
    if state.cron_iteration.is_multiple_of(10) && !names.is_empty() {
        let mut rng = rand::rng();
        let mut best: Option<(i64, NodeName)> = None;
        for _ in 0..5 {
            let name = names[rng.random_range(0..names.len())];
            let Some(n) = state.nodes.get(&name) else {
                continue;
            };
            if n.link.is_none()
                || n.ping_sent != 0
                || n.flags & (CLUSTER_NODE_MYSELF | CLUSTER_NODE_HANDSHAKE) != 0
            {
                continue;
            }
            if best.is_none_or(|(t, _)| n.pong_received < t) {
                best = Some((n.pong_received, name));
            }
        }
        if let Some((_, name)) = best {
            if let Some(t) = state.nodes[&name].link {
                cluster_send_ping(state, t, CLUSTERMSG_TYPE_PING, hdr);
            }
        }
    }
    for &name in &names {
        let Some(n) = state.nodes.get(&name) else {
            continue;
        };
        if n.flags & (CLUSTER_NODE_MYSELF | CLUSTER_NODE_NOADDR | CLUSTER_NODE_HANDSHAKE) != 0 {
            continue;
        }
        let ping_delay = now - n.ping_sent;
        let data_delay = now - n.data_received;
        // A link that answers nothing for half the timeout is reopened.
        if let Some(t) = n.link {
            let link_age = state.links.get(&t).map_or(0, |l| now - l.ctime);
            if link_age > node_timeout
                && n.ping_sent != 0
                && ping_delay > node_timeout / 2
                && data_delay > node_timeout / 2
            {
                free_cluster_link(registry, state, t);
            }
        }
        let Some(n) = state.nodes.get(&name) else {
            continue;
        };
        // Never leave a node without a PING for half the timeout.
        if let Some(t) = n.link {
            if n.ping_sent == 0 && now - n.pong_received > node_timeout / 2 {
                cluster_send_ping(state, t, CLUSTERMSG_TYPE_PING, hdr);
                continue;
            }
            // A master in a manual failover pings the replica continuously
            // (each PING carries its paused offset).
            if state.mf_end != 0 && state.myself().is_master() && state.mf_slave == Some(name) {
                cluster_send_ping(state, t, CLUSTERMSG_TYPE_PING, hdr);
                continue;
            }
        }
        let n = state.nodes.get_mut(&name).expect("still known");
        if n.ping_sent == 0 {
            continue;
        }
        let delay = (now - n.ping_sent).min(now - n.data_received);
        if delay > node_timeout && n.flags & (CLUSTER_NODE_PFAIL | CLUSTER_NODE_FAIL) == 0 {
            server_log(
                LogLevel::Verbose,
                &format!("*** NODE {name} possibly failing"),
            );
            n.flags |= CLUSTER_NODE_PFAIL;
            state.do_before_sleep(CLUSTER_TODO_UPDATE_STATE);
        }
    }
}
