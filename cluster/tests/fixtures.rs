//! Real Redis 7.0.15 output, decoded and re-encoded byte for byte.
//!
//! The files under `cluster/testdata` were written by a live 3+1-node
//! Redis 7.0.15 cluster (`scripts/capture-cluster-bus.py` regenerates them):
//! bus packets as they crossed the wire, each node's nodes.conf and CLUSTER
//! NODES, and CLUSTER KEYSLOT of a list of keys. Node IDs and ports differ on
//! every capture, so the tests read them from `bus/nodes.tsv`.

use std::collections::HashMap;
use std::path::PathBuf;

use cluster::bus::{
    decode, frame_len, MsgBody, CLUSTERMSG_FLAG0_FORCEACK, CLUSTERMSG_FLAG0_PAUSED,
};
use cluster::node::{
    CLUSTER_NODE_MASTER, CLUSTER_NODE_MYSELF, CLUSTER_NODE_PFAIL, CLUSTER_NODE_SLAVE,
};
use cluster::nodes_conf::{format_cluster_nodes, parse_cluster_nodes, NodesConf};
use cluster::{key_hash_slot, ClusterMsg, NodeName, SlotBitmap};

fn testdata(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(rel)
}

fn read(rel: &str) -> Vec<u8> {
    std::fs::read(testdata(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Rows of a tab-separated file, `#` lines skipped.
fn tsv(rel: &str) -> Vec<Vec<String>> {
    String::from_utf8(read(rel))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

/// One node of the capture run, from bus/nodes.tsv.
struct Node {
    name: NodeName,
    port: u16,
    cport: u16,
    hostname: Option<String>,
}

fn nodes() -> HashMap<String, Node> {
    tsv("bus/nodes.tsv")
        .into_iter()
        .map(|r| {
            let node = Node {
                name: NodeName::parse(r[1].as_bytes()).expect("node ID"),
                port: r[2].parse().unwrap(),
                cport: r[3].parse().unwrap(),
                hostname: (r[4] != "-").then(|| r[4].clone()),
            };
            (r[0].clone(), node)
        })
        .collect()
}

/// (file, type name, sender label) for every captured packet.
fn manifest() -> Vec<(String, String, String)> {
    tsv("bus/manifest.tsv")
        .into_iter()
        .map(|r| (r[0].clone(), r[1].clone(), r[2].clone()))
        .collect()
}

fn packet(file: &str) -> (Vec<u8>, ClusterMsg) {
    let bytes = read(&format!("bus/{file}"));
    let msg = decode(&bytes).unwrap_or_else(|e| panic!("{file}: {e}"));
    (bytes, msg)
}

/// The slot ranges redis-cli --cluster create gives three masters.
const THIRDS: [(u16, u16); 3] = [(0, 5460), (5461, 10922), (10923, 16383)];

#[test]
fn every_captured_packet_decodes_and_re_encodes_byte_identically() {
    let manifest = manifest();
    assert!(manifest.len() >= 14, "fixtures missing: {manifest:?}");
    for (file, _, _) in &manifest {
        let (bytes, msg) = packet(file);
        assert_eq!(msg.encode().unwrap(), bytes, "{file}");
        // And the message rebuilt the way a sender builds it is the same:
        // count, extensions and EXT_DATA follow from the body in Redis too.
        let rebuilt = ClusterMsg::new(msg.header.clone(), msg.body.clone());
        assert_eq!(
            rebuilt.encode().unwrap(),
            bytes,
            "{file} via ClusterMsg::new"
        );
    }
}

#[test]
fn captured_headers_describe_their_sender() {
    let nodes = nodes();
    for (file, type_name, sender) in manifest() {
        let (_, msg) = packet(&file);
        let node = &nodes[&sender];
        let h = &msg.header;
        assert_eq!(msg.type_name(), type_name, "{file}");
        assert_eq!(h.sender, node.name, "{file}");
        assert_eq!(h.port, node.port, "{file}");
        assert_eq!(h.cport, node.cport, "{file}");
        assert_eq!(h.pport, 0, "{file}: no TLS, no plaintext port");
        assert!(h.myip.is_empty(), "{file}: no cluster-announce-ip");
        assert!(
            h.flags & CLUSTER_NODE_MYSELF != 0,
            "{file}: senders send MYSELF"
        );
        // Every sender is a master or a replica, and its slot claim is one
        // of the three thirds (a replica sends its master's), or nothing
        // for a node that has just joined.
        let ranges = h.myslots.ranges();
        assert!(
            ranges.is_empty() || (ranges.len() == 1 && THIRDS.contains(&ranges[0])),
            "{file}: {ranges:?}"
        );
        if h.flags & CLUSTER_NODE_SLAVE != 0 {
            assert!(!h.slaveof.is_null(), "{file}");
        } else {
            assert!(h.flags & CLUSTER_NODE_MASTER != 0, "{file}");
            assert!(h.slaveof.is_null(), "{file}");
        }
        assert!(h.current_epoch >= h.config_epoch, "{file}");
        // Ping-like packets carry the sender's hostname iff it has one.
        if msg.ping_data().is_some() {
            let expected = node.hostname.as_deref().map(str::as_bytes);
            assert_eq!(msg.hostname(), expected, "{file}");
        }
    }
}

#[test]
fn captured_gossip_names_known_nodes_with_their_addresses() {
    let nodes = nodes();
    let mut entries = 0;
    for (file, _, sender) in manifest() {
        let (_, msg) = packet(&file);
        let Some(ping) = msg.ping_data() else {
            continue;
        };
        for g in &ping.gossip {
            let (label, node) = nodes
                .iter()
                .find(|(_, n)| n.name == g.nodename)
                .unwrap_or_else(|| panic!("{file}: gossip about unknown {}", g.nodename));
            assert_ne!(
                label, &sender,
                "{file}: a node does not gossip about itself"
            );
            assert_eq!(g.ip.as_bytes(), b"127.0.0.1", "{file}");
            assert_eq!((g.port, g.cport), (node.port, node.cport), "{file}");
            entries += 1;
        }
    }
    assert!(
        entries >= 8,
        "only {entries} gossip entries in the fixtures"
    );
}

#[test]
fn captured_bodies_carry_what_the_scenario_sent() {
    let nodes = nodes();
    let (a, c, d) = (&nodes["a"], &nodes["c"], &nodes["d"]);
    let manifest_text = String::from_utf8(read("bus/manifest.tsv")).unwrap();
    let shard_channel = manifest_text
        .split("shard_channel=")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .expect("shard_channel in manifest");

    let (_, fail) = packet("fail.bin");
    assert_eq!(fail.body, MsgBody::Fail(c.name));
    assert_eq!(fail.header.count, 0);

    let (_, update) = packet("update.bin");
    let MsgBody::Update(u) = &update.body else {
        panic!("{update:?}")
    };
    assert_eq!(u.nodename, c.name);
    assert_eq!(u.slots, SlotBitmap::from_ranges(&[(10923, 16383)]));
    assert!(u.config_epoch > 0);

    // When the capture caught one (it depends on timing): right after the
    // failover, a still claimed d's new slots with its old epoch.
    if manifest_text.contains("update-after-failover.bin") {
        let (_, update) = packet("update-after-failover.bin");
        let MsgBody::Update(u) = &update.body else {
            panic!("{update:?}")
        };
        assert_eq!(u.nodename, d.name);
        assert_eq!(u.slots, SlotBitmap::from_ranges(&[(0, 5460)]));
    }

    let (_, publish) = packet("publish.bin");
    let MsgBody::Publish(p) = &publish.body else {
        panic!("{publish:?}")
    };
    assert_eq!(
        (&p.channel[..], &p.message[..]),
        (&b"news"[..], &b"hello from a"[..])
    );

    let (_, shard) = packet("publishshard.bin");
    let MsgBody::PublishShard(p) = &shard.body else {
        panic!("{shard:?}")
    };
    assert_eq!(p.channel, shard_channel.as_bytes());
    assert_eq!(p.message, b"hello shard");
    assert!(key_hash_slot(&p.channel) <= 5460, "a's slots");

    let (_, replica) = packet("ping-replica.bin");
    assert_eq!(replica.header.slaveof, a.name);
    assert!(replica.header.flags & CLUSTER_NODE_SLAVE != 0);
    assert_eq!(replica.header.myslots.ranges(), vec![(0, 5460)]);

    let (_, mfstart) = packet("mfstart.bin");
    assert_eq!(mfstart.body, MsgBody::MfStart);
    assert_eq!(mfstart.header.sender, d.name);
    assert_eq!(mfstart.header.slaveof, a.name);

    let (_, paused) = packet("ping-paused.bin");
    assert!(paused.header.mflags[0] & CLUSTERMSG_FLAG0_PAUSED != 0);

    let (_, auth) = packet("auth-request.bin");
    assert_eq!(auth.body, MsgBody::FailoverAuthRequest);
    assert!(auth.header.mflags[0] & CLUSTERMSG_FLAG0_FORCEACK != 0);
    assert_eq!(auth.header.sender, d.name);

    let (_, ack) = packet("auth-ack.bin");
    assert_eq!(ack.body, MsgBody::FailoverAuthAck);

    let (_, pfail) = packet("ping-gossip-pfail.bin");
    let reports: Vec<_> = pfail
        .ping_data()
        .unwrap()
        .gossip
        .iter()
        .filter(|g| g.flags & CLUSTER_NODE_PFAIL != 0)
        .map(|g| g.nodename)
        .collect();
    assert_eq!(reports, vec![c.name]);

    // hellocluster.c's messages, when the capture could build the module.
    // Its name is not 9 characters, so moduleTypeEncodeId gave it ID 0.
    if manifest_text.contains("module-ping.bin") {
        for (file, module_type, payload) in [
            ("module-ping.bin", 1, &b"Hey"[..]),
            ("module-pong.bin", 2, b"Ohi!"),
        ] {
            let (_, m) = packet(file);
            let MsgBody::Module(data) = &m.body else {
                panic!("{file}: {m:?}")
            };
            assert_eq!(
                (data.module_type, &data.payload[..]),
                (module_type, payload)
            );
            assert_eq!(data.module_id, [0; 8]);
        }
    }

    let (_, meet) = packet("meet.bin");
    assert!(matches!(meet.body, MsgBody::Meet(_)));
    let (_, pong) = packet("pong-no-extension.bin");
    assert_eq!(pong.header.extensions, 0);
    assert_eq!(pong.header.mflags[0], 0);
}

#[test]
fn captured_stream_frames_in_any_chunking() {
    // All fixtures back to back, as one link would carry them, fed to the
    // framer in uneven chunks: every packet comes out whole, in order.
    let files: Vec<String> = manifest().into_iter().map(|(f, _, _)| f).collect();
    let stream: Vec<u8> = files
        .iter()
        .flat_map(|f| read(&format!("bus/{f}")))
        .collect();
    for chunk in [1usize, 7, 8, 1000, 2256, 4096, stream.len()] {
        let mut buf = Vec::new();
        let mut decoded = Vec::new();
        for piece in stream.chunks(chunk) {
            buf.extend_from_slice(piece);
            while let Some(len) = frame_len(&buf).expect("real packets frame") {
                if buf.len() < len {
                    break;
                }
                decoded.push(decode(&buf[..len]).expect("real packets decode"));
                buf.drain(..len);
            }
        }
        assert!(buf.is_empty(), "chunk {chunk}: {} bytes left", buf.len());
        assert_eq!(decoded.len(), files.len(), "chunk {chunk}");
    }
}

#[test]
fn real_nodes_conf_files_round_trip_byte_identically() {
    let nodes = nodes();
    for label in ["a", "b", "c", "d"] {
        let file = read(&format!("nodes-conf/nodes-{label}.conf"));
        let conf = NodesConf::parse(&file).unwrap_or_else(|e| panic!("nodes-{label}.conf: {e}"));
        assert_eq!(conf.format().as_bytes(), &file[..], "nodes-{label}.conf");
        assert_eq!(conf.nodes.len(), 4);
        let me: Vec<_> = conf.nodes.iter().filter(|n| n.is_myself()).collect();
        assert_eq!(me.len(), 1);
        assert_eq!(me[0].name, nodes[label].name);
        assert!(conf.current_epoch >= 4, "three masters + one promotion");
        // The masters' slots cover the whole space exactly once.
        let mut covered = 0;
        for n in &conf.nodes {
            covered += n.slots.count();
            let node = nodes.values().find(|x| x.name == n.name).unwrap();
            assert_eq!((n.port, n.cport), (node.port, node.cport));
            assert_eq!(n.hostname, node.hostname.clone().unwrap_or_default());
        }
        assert_eq!(covered, 16384, "nodes-{label}.conf");
    }
}

#[test]
fn real_nodes_conf_keeps_slot_migration_entries() {
    let nodes = nodes();
    let b = NodesConf::parse(&read("nodes-conf/nodes-b.conf")).unwrap();
    let me = b.nodes.iter().find(|n| n.is_myself()).unwrap();
    assert_eq!(me.migrating.get(&6000), Some(&nodes["c"].name));
    let c = NodesConf::parse(&read("nodes-conf/nodes-c.conf")).unwrap();
    let me = c.nodes.iter().find(|n| n.is_myself()).unwrap();
    assert_eq!(me.importing.get(&6000), Some(&nodes["b"].name));
    // The replica line names its master and shows the master's epoch.
    let a = c.nodes.iter().find(|n| n.name == nodes["a"].name).unwrap();
    let d = c.nodes.iter().find(|n| n.name == nodes["d"].name).unwrap();
    assert_eq!(a.master, Some(d.name));
    assert_eq!(a.config_epoch, d.config_epoch);
}

#[test]
fn real_cluster_nodes_replies_round_trip_byte_identically() {
    for label in ["a", "b", "c", "d"] {
        let text =
            String::from_utf8(read(&format!("nodes-conf/cluster-nodes-{label}.txt"))).unwrap();
        let lines = parse_cluster_nodes(&text).unwrap();
        assert_eq!(lines.len(), 4);
        assert_eq!(
            format_cluster_nodes(&lines),
            text,
            "cluster-nodes-{label}.txt"
        );
    }
}

#[test]
fn key_hash_slot_matches_real_cluster_keyslot() {
    let rows = tsv("keyslot.tsv");
    assert!(rows.len() > 200);
    for row in rows {
        let key = if row[0] == "-" { vec![] } else { hex(&row[0]) };
        let slot: u16 = row[1].parse().unwrap();
        assert_eq!(
            key_hash_slot(&key),
            slot,
            "key {:?}",
            String::from_utf8_lossy(&key)
        );
    }
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}
