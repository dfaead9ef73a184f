//! Unit tests of the bus codec on bytes: the layout of cluster.h, every
//! type, every check of clusterProcessPacket, and fuzz-style truncations and
//! flips (decode never panics; what it accepts re-encodes byte for byte).
//! Packets captured from a real Redis are tested in tests/fixtures.rs.

use super::*;
use crate::node::{CLUSTER_NODE_MASTER, CLUSTER_NODE_MYSELF, CLUSTER_NODE_PFAIL};

fn name(c: u8) -> NodeName {
    NodeName([c; CLUSTER_NAMELEN])
}

/// A header with a distinct value in every field, to see where each lands.
fn sample_header() -> MsgHeader {
    let mut h = MsgHeader::new(name(b'a'));
    h.port = 0x1234;
    h.current_epoch = 0x0102030405060708;
    h.config_epoch = 0x1112131415161718;
    h.offset = 0x2122232425262728;
    h.myslots = SlotBitmap::from_ranges(&[(0, 0), (16383, 16383)]);
    h.slaveof = name(b'b');
    h.myip = NetIp::new(b"127.0.0.1");
    h.pport = 0x3132;
    h.cport = 0x4142;
    h.flags = CLUSTER_NODE_MYSELF | CLUSTER_NODE_MASTER;
    h.state = 1;
    h.mflags = [CLUSTERMSG_FLAG0_PAUSED, 0, 0];
    h
}

fn gossip(c: u8) -> Gossip {
    Gossip {
        nodename: name(c),
        ping_sent: 1_700_000_000,
        pong_received: 1_700_000_001,
        ip: NetIp::new(b"10.0.0.1"),
        port: 7000,
        cport: 17000,
        flags: CLUSTER_NODE_MASTER | CLUSTER_NODE_PFAIL,
        pport: 0,
        notused1: 0,
    }
}

/// One message of every type 7.0.15 knows, plus an unknown one.
fn every_type() -> Vec<ClusterMsg> {
    let ping = PingData {
        gossip: vec![gossip(b'c'), gossip(b'd')],
        extensions: vec![PingExt::hostname(b"node-a.example")],
    };
    let publish = PublishData {
        channel: b"news".to_vec(),
        message: b"hello world".to_vec(),
    };
    let bodies = vec![
        MsgBody::Ping(ping.clone()),
        MsgBody::Pong(PingData::default()),
        MsgBody::Meet(PingData {
            gossip: vec![gossip(b'e')],
            extensions: vec![],
        }),
        MsgBody::Fail(name(b'f')),
        MsgBody::Publish(publish.clone()),
        MsgBody::PublishShard(PublishData {
            channel: vec![],
            message: vec![],
        }),
        MsgBody::FailoverAuthRequest,
        MsgBody::FailoverAuthAck,
        MsgBody::Update(UpdateData {
            config_epoch: 42,
            nodename: name(b'g'),
            slots: SlotBitmap::from_ranges(&[(100, 200)]),
        }),
        MsgBody::MfStart,
        MsgBody::Module(ModuleData {
            module_id: *b"modid\0\0\x01",
            module_type: 7,
            payload: b"payload".to_vec(),
        }),
        MsgBody::Unknown {
            msg_type: 99,
            data: b"future".to_vec(),
        },
    ];
    bodies
        .into_iter()
        .map(|body| ClusterMsg::new(sample_header(), body))
        .collect()
}

fn encoded(msg: &ClusterMsg) -> Vec<u8> {
    msg.encode().expect("encodes")
}

fn be16_at(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn be32_at(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().unwrap())
}

fn set_be32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_be_bytes());
}

fn set_be16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_be_bytes());
}

#[test]
fn header_fields_sit_at_cluster_h_offsets_big_endian() {
    let msg = ClusterMsg::new(sample_header(), MsgBody::FailoverAuthAck);
    let b = encoded(&msg);
    assert_eq!(b.len(), CLUSTERMSG_MIN_LEN);
    assert_eq!(&b[0..4], b"RCmb");
    assert_eq!(be32_at(&b, 4), 2256);
    assert_eq!(be16_at(&b, 8), 1);
    assert_eq!(be16_at(&b, 10), 0x1234);
    assert_eq!(be16_at(&b, 12), CLUSTERMSG_TYPE_FAILOVER_AUTH_ACK);
    assert_eq!(be16_at(&b, 14), 0);
    assert_eq!(&b[16..24], &[1, 2, 3, 4, 5, 6, 7, 8]);
    assert_eq!(
        &b[24..32],
        &[0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18]
    );
    assert_eq!(
        &b[32..40],
        &[0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28]
    );
    assert_eq!(&b[40..80], &[b'a'; 40]);
    // myslots: slot 0 is bit 0 of byte 0, slot 16383 bit 7 of byte 2047.
    assert_eq!(b[80], 0x01);
    assert_eq!(b[80 + 2047], 0x80);
    assert_eq!(&b[2128..2168], &[b'b'; 40]);
    assert_eq!(&b[2168..2177], b"127.0.0.1");
    assert!(b[2177..2214].iter().all(|&x| x == 0));
    assert_eq!(be16_at(&b, 2214), 0);
    assert!(b[2216..2246].iter().all(|&x| x == 0));
    assert_eq!(be16_at(&b, 2246), 0x3132);
    assert_eq!(be16_at(&b, 2248), 0x4142);
    assert_eq!(be16_at(&b, 2250), CLUSTER_NODE_MYSELF | CLUSTER_NODE_MASTER);
    assert_eq!(b[2252], 1);
    assert_eq!(&b[2253..2256], &[CLUSTERMSG_FLAG0_PAUSED, 0, 0]);
}

#[test]
fn gossip_entry_layout_is_104_bytes() {
    let msg = ClusterMsg::new(
        MsgHeader::new(name(b'a')),
        MsgBody::Ping(PingData {
            gossip: vec![gossip(b'c')],
            extensions: vec![],
        }),
    );
    let b = encoded(&msg);
    assert_eq!(b.len(), 2256 + 104);
    assert_eq!(be16_at(&b, 14), 1);
    let g = &b[2256..];
    assert_eq!(&g[0..40], &[b'c'; 40]);
    assert_eq!(be32_at(g, 40), 1_700_000_000);
    assert_eq!(be32_at(g, 44), 1_700_000_001);
    assert_eq!(&g[48..56], b"10.0.0.1");
    assert_eq!(be16_at(g, 94), 7000);
    assert_eq!(be16_at(g, 96), 17000);
    assert_eq!(be16_at(g, 98), CLUSTER_NODE_MASTER | CLUSTER_NODE_PFAIL);
    assert_eq!(be16_at(g, 100), 0);
    assert_eq!(be16_at(g, 102), 0);
}

#[test]
fn hostname_extension_is_padded_to_eight_and_flagged() {
    for (host, data_len) in [(&b"a"[..], 8), (b"1234567", 8), (b"12345678", 16)] {
        let msg = ClusterMsg::new(
            MsgHeader::new(name(b'a')),
            MsgBody::Pong(PingData {
                gossip: vec![],
                extensions: vec![PingExt::hostname(host)],
            }),
        );
        assert_eq!(msg.header.extensions, 1);
        assert_eq!(
            msg.header.mflags[0] & CLUSTERMSG_FLAG0_EXT_DATA,
            CLUSTERMSG_FLAG0_EXT_DATA
        );
        let b = encoded(&msg);
        let ext = &b[2256..];
        assert_eq!(be32_at(ext, 0) as usize, 8 + data_len);
        assert_eq!(be16_at(ext, 4), CLUSTERMSG_EXT_TYPE_HOSTNAME);
        assert_eq!(be16_at(ext, 6), 0);
        assert_eq!(&ext[8..8 + host.len()], host);
        assert!(ext[8 + host.len()..].iter().all(|&x| x == 0));
        assert_eq!(decode(&b).unwrap().hostname(), Some(host));
    }
}

#[test]
fn new_sets_count_extensions_and_ext_flag_from_the_body() {
    let mut h = sample_header();
    h.count = 9;
    h.extensions = 9;
    h.mflags[0] |= CLUSTERMSG_FLAG0_EXT_DATA;
    let fail = ClusterMsg::new(h.clone(), MsgBody::Fail(name(b'f')));
    assert_eq!((fail.header.count, fail.header.extensions), (0, 0));
    assert_eq!(fail.header.mflags[0], CLUSTERMSG_FLAG0_PAUSED);
    let pong = ClusterMsg::new(
        h,
        MsgBody::Pong(PingData {
            gossip: vec![gossip(b'c'); 3],
            extensions: vec![],
        }),
    );
    assert_eq!((pong.header.count, pong.header.extensions), (3, 0));
    assert_eq!(pong.header.mflags[0] & CLUSTERMSG_FLAG0_EXT_DATA, 0);
}

#[test]
fn every_type_round_trips_with_redis_lengths() {
    // totlen as clusterProcessPacket expects it per type.
    let expected_len = [
        2256 + 2 * 104 + 8 + 16, // PING: 2 gossip + "node-a.example\0" padded to 16
        2256,                    // PONG without gossip
        2256 + 104,              // MEET
        2256 + 40,               // FAIL
        2256 + 8 + 4 + 11,       // PUBLISH
        2256 + 8,                // PUBLISHSHARD, empty channel and message
        2256,                    // FAILOVER_AUTH_REQUEST
        2256,                    // FAILOVER_AUTH_ACK
        2256 + 2096,             // UPDATE = sizeof(clusterMsg)
        2256,                    // MFSTART
        2256 + 13 + 7,           // MODULE
        2256 + 6,                // unknown type
    ];
    let types = [0, 1, 2, 3, 4, 10, 5, 6, 7, 8, 9, 99];
    for ((msg, len), ty) in every_type().iter().zip(expected_len).zip(types) {
        let b = encoded(msg);
        assert_eq!(b.len(), len, "{}", msg.type_name());
        assert_eq!(be32_at(&b, 4) as usize, len);
        assert_eq!(be16_at(&b, 12), ty);
        assert_eq!(frame_len(&b), Ok(Some(len)));
        let back = decode(&b).unwrap_or_else(|e| panic!("{}: {e}", msg.type_name()));
        assert_eq!(&back, msg);
        assert_eq!(encoded(&back), b);
    }
}

#[test]
fn type_names_match_redis_logs() {
    let names: Vec<&str> = (0..12).map(message_type_name).collect();
    assert_eq!(
        names,
        [
            "ping",
            "pong",
            "meet",
            "fail",
            "publish",
            "auth-req",
            "auth-ack",
            "update",
            "mfstart",
            "module",
            "publishshard",
            "unknown"
        ]
    );
}

#[test]
fn framing_needs_eight_bytes_then_checks_signature_and_min_length() {
    let b = encoded(&every_type()[0]);
    for n in 0..8 {
        assert_eq!(frame_len(&b[..n]), Ok(None));
    }
    assert_eq!(frame_len(&b[..8]), Ok(Some(b.len())));

    let mut bad = b.clone();
    bad[3] = b'B';
    let e = frame_len(&bad).unwrap_err();
    assert_eq!(e, BusError::BadSignature);
    assert!(e.closes_link());
    assert_eq!(
        e.to_string(),
        "Bad message length or signature received from Cluster bus."
    );
    assert_eq!(decode(&bad), Err(BusError::BadSignature));

    let mut short = b.clone();
    set_be32(&mut short, 4, 2255);
    let e = frame_len(&short).unwrap_err();
    assert_eq!(e, BusError::TooShort { totlen: 2255 });
    assert!(e.closes_link());
    set_be32(&mut short, 4, 0);
    assert!(frame_len(&short).is_err());
}

#[test]
fn decode_wants_exactly_one_frame() {
    let b = encoded(&every_type()[3]);
    assert_eq!(
        decode(&b[..b.len() - 1]),
        Err(BusError::NotOneFrame {
            totlen: 2296,
            len: 2295
        })
    );
    let mut longer = b.clone();
    longer.push(0);
    assert!(matches!(decode(&longer), Err(BusError::NotOneFrame { .. })));
    assert!(matches!(decode(&b[..5]), Err(BusError::NotOneFrame { .. })));
}

#[test]
fn wrong_version_drops_the_packet_but_keeps_the_link() {
    let mut b = encoded(&every_type()[1]);
    set_be16(&mut b, 8, 2);
    let e = decode(&b).unwrap_err();
    assert_eq!(e, BusError::BadVersion { ver: 2 });
    assert!(!e.closes_link());
}

/// Re-stamp `totlen` to the buffer's length (a packet that frames fine but
/// whose body is inconsistent).
fn fix_totlen(b: &mut [u8]) {
    let len = b.len() as u32;
    set_be32(b, 4, len);
}

#[test]
fn gossip_count_beyond_totlen_is_rejected() {
    let mut b = encoded(&every_type()[2]); // MEET with 1 gossip entry
    set_be16(&mut b, 14, 2);
    assert_eq!(
        decode(&b),
        Err(BusError::GossipCountExceedsLength {
            msg_type: CLUSTERMSG_TYPE_MEET,
            count: 2,
            totlen: 2360
        })
    );
    set_be16(&mut b, 14, u16::MAX);
    assert!(matches!(
        decode(&b),
        Err(BusError::GossipCountExceedsLength { .. })
    ));
    // Fewer than the bytes present: a length mismatch instead.
    set_be16(&mut b, 14, 0);
    assert_eq!(
        decode(&b),
        Err(BusError::LengthMismatch {
            msg_type: CLUSTERMSG_TYPE_MEET,
            totlen: 2360,
            expected: 2256
        })
    );
}

#[test]
fn extension_checks_follow_cluster_process_packet() {
    let ping = encoded(&every_type()[0]); // 2 gossip + hostname extension
    let ext_at = 2256 + 2 * 104;

    // More extensions announced than present.
    let mut b = ping.clone();
    set_be16(&mut b, 2214, 2);
    assert_eq!(
        decode(&b),
        Err(BusError::ExtensionExceedsLength {
            msg_type: 0,
            totlen: ping.len() as u32
        })
    );
    set_be16(&mut b, 2214, u16::MAX);
    assert!(matches!(
        decode(&b),
        Err(BusError::ExtensionExceedsLength { .. })
    ));

    // Length not a multiple of 8, or below the extension header.
    for bad_len in [0, 4, 12, 23] {
        let mut b = ping.clone();
        set_be32(&mut b, ext_at, bad_len);
        assert_eq!(
            decode(&b),
            Err(BusError::ExtensionPadding {
                msg_type: 0,
                extlen: bad_len
            })
        );
    }

    // Longer than what is left, and the 16-bit guard.
    for bad_len in [32, 0x1_0018] {
        let mut b = ping.clone();
        set_be32(&mut b, ext_at, bad_len);
        assert!(matches!(
            decode(&b),
            Err(BusError::ExtensionExceedsLength { .. })
        ));
    }

    // A hostname must end in NUL.
    let mut b = ping.clone();
    let last = b.len() - 1;
    b[last] = b'x';
    assert_eq!(
        decode(&b),
        Err(BusError::HostnameNotTerminated {
            msg_type: 0,
            ext_type: 0
        })
    );

    // Other extension types only need sound lengths: 7.2's shard id (3).
    let mut b = ping.clone();
    set_be16(&mut b, ext_at + 4, 3);
    b[last] = b'x';
    let msg = decode(&b).unwrap();
    assert_eq!(msg.ping_data().unwrap().extensions[0].ext_type, 3);
    assert_eq!(msg.hostname(), None);
    assert_eq!(encoded(&msg), b);
}

#[test]
fn extensions_are_only_read_with_the_ext_data_flag() {
    let ping = encoded(&every_type()[0]);
    // Without the flag the extension bytes are unexpected trailing bytes.
    let mut b = ping.clone();
    b[2253] &= !CLUSTERMSG_FLAG0_EXT_DATA;
    assert!(matches!(
        decode(&b),
        Err(BusError::LengthMismatch { expected: 2464, .. })
    ));
    // ... and without the bytes, a non-zero `extensions` is kept but unread.
    b.truncate(2256 + 2 * 104);
    fix_totlen(&mut b);
    let msg = decode(&b).unwrap();
    assert_eq!(msg.header.extensions, 1);
    assert!(msg.ping_data().unwrap().extensions.is_empty());
    assert_eq!(encoded(&msg), b);
    // With the flag and a zero count, extension bytes are unexpected too.
    let mut b = ping.clone();
    set_be16(&mut b, 2214, 0);
    assert!(matches!(decode(&b), Err(BusError::LengthMismatch { .. })));
}

#[test]
fn fixed_length_types_reject_any_other_length() {
    for (ty, body) in [(3u16, 40usize), (5, 0), (6, 0), (7, 2096), (8, 0)] {
        for delta in [-1i64, 1, 100] {
            let len = (2256 + body) as i64 + delta;
            if len < 2256 {
                continue;
            }
            let mut b = vec![0u8; len as usize];
            b[0..4].copy_from_slice(b"RCmb");
            fix_totlen(&mut b);
            set_be16(&mut b, 8, 1);
            set_be16(&mut b, 12, ty);
            assert_eq!(
                decode(&b),
                Err(BusError::LengthMismatch {
                    msg_type: ty,
                    totlen: len as u32,
                    expected: (2256 + body) as u64
                }),
                "type {ty} len {len}"
            );
        }
    }
}

#[test]
fn publish_lengths_cannot_wrap_around() {
    // channel_len + message_len = 2^32 + 3: in 32 bits Redis would see
    // 2256 + 8 + 3 and accept a 2267-byte packet.
    let mut b = encoded(&every_type()[4]);
    b.truncate(2267);
    fix_totlen(&mut b);
    set_be32(&mut b, 2256, u32::MAX);
    set_be32(&mut b, 2260, 4);
    assert_eq!(
        decode(&b),
        Err(BusError::LengthMismatch {
            msg_type: CLUSTERMSG_TYPE_PUBLISH,
            totlen: 2267,
            expected: 2256 + 8 + u32::MAX as u64 + 4
        })
    );
    // Too short to even hold the two lengths.
    let mut b = encoded(&every_type()[4]);
    b.truncate(2260);
    fix_totlen(&mut b);
    assert!(matches!(
        decode(&b),
        Err(BusError::LengthMismatch { expected: 2264, .. })
    ));
}

#[test]
fn module_length_is_checked_in_64_bits() {
    let mut b = encoded(&every_type()[10]);
    set_be32(&mut b, 2264, u32::MAX);
    assert!(matches!(decode(&b), Err(BusError::LengthMismatch { .. })));
    let mut b = encoded(&every_type()[10]);
    b.truncate(2268);
    fix_totlen(&mut b);
    assert!(matches!(
        decode(&b),
        Err(BusError::LengthMismatch { expected: 2269, .. })
    ));
}

#[test]
fn unknown_types_are_accepted_at_any_length_like_redis() {
    for ty in [11u16, 12, 999, u16::MAX] {
        let mut b = vec![0u8; 2256 + ty as usize % 7];
        b[0..4].copy_from_slice(b"RCmb");
        fix_totlen(&mut b);
        set_be16(&mut b, 8, 1);
        set_be16(&mut b, 12, ty);
        let msg = decode(&b).unwrap();
        assert_eq!(msg.type_name(), "unknown");
        assert_eq!(msg.msg_type(), ty);
        assert_eq!(encoded(&msg), b);
    }
}

#[test]
fn encode_refuses_messages_over_four_gigabytes() {
    assert_eq!(
        ClusterMsg::new(MsgHeader::new(name(b'a')), MsgBody::MfStart).wire_len(),
        Some(2256)
    );
    // A zeroed 4 GB payload is only reserved address space (calloc'd pages
    // are never touched): encode must refuse it before writing anything.
    let msg = ClusterMsg::new(
        MsgHeader::new(name(b'a')),
        MsgBody::Module(ModuleData {
            module_id: [0; 8],
            module_type: 0,
            payload: vec![0u8; u32::MAX as usize - 2269 + 1],
        }),
    );
    assert_eq!(msg.wire_len(), None);
    let mut out = Vec::new();
    assert_eq!(msg.encode_into(&mut out), Err(EncodeError::TooLong));
    assert!(out.is_empty());
    assert_eq!(
        EncodeError::TooLong.to_string(),
        "cluster bus message longer than 4 GB"
    );
}

// ---- fuzz-style: truncations and flips never panic; accepted bytes round-trip

/// xorshift64*: a small deterministic generator, so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Decode must not panic; if it accepts, the bytes must come back exactly.
/// Returns whether it accepted, so each campaign can check that it reached
/// both outcomes (a fuzzer that only ever hits one branch tests nothing).
fn check_total(bytes: &[u8]) -> bool {
    let _ = frame_len(bytes);
    match decode(bytes) {
        Ok(msg) => {
            assert_eq!(
                msg.encode().unwrap(),
                bytes,
                "accepted but not lossless: {msg:?}"
            );
            true
        }
        Err(_) => false,
    }
}

/// Counts of accepted and rejected inputs in one campaign.
#[derive(Default)]
struct Outcomes {
    accepted: usize,
    rejected: usize,
}

impl Outcomes {
    fn add(&mut self, accepted: bool) {
        if accepted {
            self.accepted += 1;
        } else {
            self.rejected += 1;
        }
    }

    fn assert_both(&self, campaign: &str) {
        assert!(
            self.accepted > 0 && self.rejected > 0,
            "{campaign}: accepted {} rejected {}",
            self.accepted,
            self.rejected
        );
    }
}

#[test]
fn fuzz_every_truncation_of_every_type() {
    let mut outcomes = Outcomes::default();
    for msg in every_type() {
        let b = encoded(&msg);
        for n in 0..b.len() {
            // As-is: never one whole frame.
            assert!(decode(&b[..n]).is_err());
            // With totlen stamped to the cut: a frame whose body is short.
            let mut cut = b[..n].to_vec();
            if n >= 8 {
                fix_totlen(&mut cut);
            }
            outcomes.add(check_total(&cut));
        }
    }
    outcomes.assert_both("truncations");
}

#[test]
fn fuzz_random_flips_of_every_type() {
    let mut outcomes = Outcomes::default();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    // The fields whose corruption matters most are the small ones near
    // the front and the body; flips land anywhere, and some iterations also
    // plant absurd counts and lengths.
    let hot = [
        4usize, 5, 6, 7, 8, 9, 12, 13, 14, 15, 2214, 2215, 2253, 2256, 2257, 2258, 2259,
    ];
    for msg in every_type() {
        let b = encoded(&msg);
        for _ in 0..1500 {
            let mut f = b.clone();
            for _ in 0..1 + rng.below(4) {
                let at = if rng.below(2) == 0 {
                    hot[rng.below(hot.len())].min(f.len() - 1)
                } else {
                    rng.below(f.len())
                };
                f[at] ^= 1 << rng.below(8);
            }
            match rng.below(6) {
                0 => set_be16(&mut f, 14, rng.next() as u16),
                1 => set_be16(&mut f, 2214, rng.next() as u16),
                2 if f.len() >= 2264 => set_be32(&mut f, 2256, rng.next() as u32),
                _ => {}
            }
            // Keep the frame whole most of the time so the body checks run.
            if rng.below(4) != 0 {
                fix_totlen(&mut f);
                f[0..4].copy_from_slice(b"RCmb");
                set_be16(&mut f, 8, 1);
            }
            outcomes.add(check_total(&f));
        }
    }
    eprintln!(
        "flips: accepted {} rejected {}",
        outcomes.accepted, outcomes.rejected
    );
    outcomes.assert_both("flips");
}

#[test]
fn fuzz_random_garbage_after_a_valid_header() {
    let mut outcomes = Outcomes::default();
    let mut rng = Rng(12345);
    for _ in 0..2000 {
        let mut f = encoded(&ClusterMsg::new(sample_header(), MsgBody::MfStart));
        let extra = rng.below(600);
        for _ in 0..extra {
            f.push(rng.next() as u8);
        }
        set_be16(&mut f, 12, rng.below(12) as u16);
        set_be16(&mut f, 14, rng.below(4) as u16);
        set_be16(&mut f, 2214, rng.below(4) as u16);
        f[2253] = rng.next() as u8;
        fix_totlen(&mut f);
        outcomes.add(check_total(&f));
    }
    eprintln!(
        "garbage: accepted {} rejected {}",
        outcomes.accepted, outcomes.rejected
    );
    outcomes.assert_both("garbage");
}
