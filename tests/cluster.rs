//! Cluster mode end to end: three redis-lite nodes with `cluster-enabled
//! yes` made into a cluster by Redis's own `redis-cli --cluster create`,
//! checked by `redis-cli --cluster check`, used by redis-py's RedisCluster,
//! compared byte for byte with a real redis-server 7.0.15 cluster for the
//! redirection errors, restarted from nodes.conf, and fed garbage on the bus
//! port.
//!
//! Tests needing redis-cli (or python3 with redis-py) skip plainly when it
//! is missing (and fail under CI=true, as the harness's `require_tool`).

mod common;

use std::io::Write;
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

use common::cluster::{bulk_text, start_node, text, Node};
use common::{require_tool, skipped, Conn, RealRedis, Server};

/// `redis-cli --cluster create` over the nodes; its output.
fn cluster_create(cli: &std::path::Path, nodes: &[Node]) -> String {
    let mut cmd = Command::new(cli);
    cmd.arg("--cluster").arg("create");
    for n in nodes {
        cmd.arg(format!("127.0.0.1:{}", n.p.port));
    }
    cmd.arg("--cluster-yes");
    let out = cmd.output().expect("run redis-cli --cluster create");
    let s = text(&out.stdout) + &text(&out.stderr);
    assert!(out.status.success(), "cluster create failed:\n{s}");
    s
}

/// Wait until every node says cluster_state:ok (cluster creation is
/// asynchronous: gossip spreads the slots).
fn wait_cluster_ok(nodes: &[Node]) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let all_ok = nodes.iter().all(|n| {
            let mut c = n.p.connect();
            text(&c.must(&["CLUSTER", "INFO"])).contains("cluster_state:ok")
        });
        if all_ok {
            return;
        }
        assert!(Instant::now() < deadline, "cluster never reached state ok");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A 3-master cluster of redis-lite (`real == false`) or redis-server.
fn three_node_cluster(cli: &std::path::Path, real: bool) -> Option<Vec<Node>> {
    let mut nodes = Vec::new();
    for _ in 0..3 {
        nodes.push(start_node(real, None, None)?);
    }
    let out = cluster_create(cli, &nodes);
    assert!(out.contains("[OK] All 16384 slots covered."), "{out}");
    wait_cluster_ok(&nodes);
    Some(nodes)
}

/// The port of the node serving `key`, from CLUSTER KEYSLOT and CLUSTER
/// NODES of the first node.
fn owner_port(nodes: &[Node], slot: u16) -> u16 {
    let mut c = nodes[0].p.connect();
    let nodes_text = bulk_text(&c.must(&["CLUSTER", "NODES"]));
    for line in nodes_text.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        let addr = fields[1];
        let port: u16 = addr
            .split(':')
            .nth(1)
            .unwrap()
            .split('@')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        for range in &fields[8..] {
            let (a, b) = match range.split_once('-') {
                Some((a, b)) => (a.parse::<u16>().unwrap(), b.parse::<u16>().unwrap()),
                None => {
                    let s = range.parse::<u16>().unwrap();
                    (s, s)
                }
            };
            if (a..=b).contains(&slot) {
                return port;
            }
        }
    }
    panic!("no owner for slot {slot}:\n{nodes_text}")
}

/// The redirection replies a client sees, with ports written as P so that
/// two clusters on different ports compare equal.
fn redirection_replies(nodes: &[Node]) -> Vec<String> {
    let mut out = Vec::new();
    let slot_foo = 12182; // CLUSTER KEYSLOT foo
    let owner = owner_port(nodes, slot_foo);
    // A node that does not serve foo's slot.
    let elsewhere = nodes.iter().find(|n| n.p.port != owner).unwrap();
    let mut c = elsewhere.p.connect();
    out.push(text(&c.must(&["GET", "foo"])));
    out.push(text(&c.must(&["SET", "foo", "1"])));
    out.push(text(&c.must(&["MGET", "a", "b"])));
    out.push(text(&c.must(&[
        "CLUSTER",
        "KEYSLOT",
        "{user1000}.following",
    ])));
    out.push(text(&c.must(&["SELECT", "1"])));
    out.push(text(&c.must(&["SELECT", "0"])));
    out.push(text(&c.must(&["SWAPDB", "0", "1"])));
    out.push(text(&c.must(&["MOVE", "x", "1"])));
    out.push(text(&c.must(&["CLUSTER", "COUNTKEYSINSLOT", "16384"])));
    out.push(text(&c.must(&["CLUSTER", "GETKEYSINSLOT", "1", "-1"])));
    out.push(text(&c.must(&["CLUSTER", "ADDSLOTS", "0"])));
    out.push(text(&c.must(&["CLUSTER", "ADDSLOTS", "x"])));
    out.push(text(&c.must(&["CLUSTER", "DELSLOTSRANGE", "10", "5"])));
    out.push(text(&c.must(&["CLUSTER", "SETSLOT", "0", "BOGUS"])));
    out.push(text(&c.must(&["CLUSTER", "SET-CONFIG-EPOCH", "5"])));
    out.push(text(&c.must(&[
        "CLUSTER",
        "FORGET",
        "0000000000000000000000000000000000000000",
    ])));
    out.push(text(&c.must(&["CLUSTER", "MEET", "nohost", "1"])));
    out.push(text(&c.must(&["CLUSTER", "NOSUCH"])));
    // MULTI with keys of two slots: EXEC gets EXECABORT, as Redis.
    c.must(&["MULTI"]);
    out.push(text(&c.must(&["SET", "{a}1", "x"])));
    out.push(text(&c.must(&["SET", "{b}1", "x"])));
    out.push(text(&c.must(&["EXEC"])));
    // A slot being migrated from its owner O to T: -ASK for missing keys,
    // ASKING lets T serve it, TRYAGAIN for several missing keys.
    let o = nodes.iter().find(|n| n.p.port == owner).unwrap();
    let mut oc = o.p.connect();
    let mut tc = elsewhere.p.connect();
    let o_id = bulk_text(&oc.must(&["CLUSTER", "MYID"]));
    let t_id = bulk_text(&tc.must(&["CLUSTER", "MYID"]));
    out.push(text(&tc.must(&[
        "CLUSTER",
        "SETSLOT",
        "12182",
        "IMPORTING",
        &o_id,
    ])));
    out.push(text(&oc.must(&[
        "CLUSTER",
        "SETSLOT",
        "12182",
        "MIGRATING",
        &t_id,
    ])));
    out.push(text(&oc.must(&[
        "CLUSTER",
        "SETSLOT",
        "12182",
        "IMPORTING",
        &t_id,
    ])));
    out.push(text(&tc.must(&[
        "CLUSTER",
        "SETSLOT",
        "12182",
        "MIGRATING",
        &o_id,
    ])));
    out.push(text(&oc.must(&["GET", "foo"])));
    out.push(text(&oc.must(&["SET", "foo", "x"])));
    out.push(text(&tc.must(&["GET", "foo"])));
    out.push(text(&tc.must(&["ASKING"])));
    out.push(text(&tc.must(&["GET", "foo"])));
    out.push(text(&tc.must(&["GET", "foo"])));
    out.push(text(&tc.must(&["ASKING"])));
    out.push(text(&tc.must(&["MGET", "foo", "{foo}x"])));
    out.push(text(&oc.must(&["MGET", "foo", "{foo}x"])));
    out.push(text(&oc.must(&["CLUSTER", "COUNTKEYSINSLOT", "12182"])));
    out.push(text(&oc.must(&["CLUSTER", "SETSLOT", "12182", "STABLE"])));
    out.push(text(&tc.must(&["CLUSTER", "SETSLOT", "12182", "STABLE"])));
    out.push(text(&oc.must(&["GET", "foo"])));
    // Ports differ between the two clusters: write them as P.
    for s in &mut out {
        for n in nodes {
            *s = s.replace(&format!(":{}\r", n.p.port), ":P\r");
        }
    }
    out
}

#[test]
fn cluster_create_check_and_redirections_match_redis() {
    let Some(cli) = require_tool("redis-cli") else {
        return;
    };
    let nodes = three_node_cluster(&cli, false).expect("lite nodes start");

    // redis-cli --cluster check: agreement, no open slot, full coverage.
    let out = Command::new(&cli)
        .args([
            "--cluster",
            "check",
            &format!("127.0.0.1:{}", nodes[1].p.port),
        ])
        .output()
        .unwrap();
    let s = text(&out.stdout);
    assert!(
        s.contains("[OK] All nodes agree about slots configuration."),
        "{s}"
    );
    assert!(s.contains("[OK] All 16384 slots covered."), "{s}");
    assert!(!s.contains("[ERR]") && !s.contains("[WARNING]"), "{s}");

    // Every node knows the three and the same slots.
    for n in &nodes {
        let mut c = n.p.connect();
        let info = text(&c.must(&["CLUSTER", "INFO"]));
        assert!(info.contains("cluster_known_nodes:3"), "{info}");
        assert!(info.contains("cluster_size:3"), "{info}");
        assert!(text(&c.must(&["INFO", "cluster"])).contains("cluster_enabled:1"));
    }

    // redis-cli -c follows MOVED.
    let set = Command::new(&cli)
        .args([
            "-c",
            "-p",
            &nodes[0].p.port.to_string(),
            "SET",
            "foo",
            "bar",
        ])
        .output()
        .unwrap();
    assert_eq!(text(&set.stdout).trim(), "OK");
    let get = Command::new(&cli)
        .args(["-c", "-p", &nodes[1].p.port.to_string(), "GET", "foo"])
        .output()
        .unwrap();
    assert_eq!(text(&get.stdout).trim(), "bar");
    // The key is counted in its slot on its owner only.
    let owner = owner_port(&nodes, 12182);
    let mut c = Conn::connect(owner).unwrap();
    assert_eq!(c.must(&["CLUSTER", "COUNTKEYSINSLOT", "12182"]), b":1\r\n");
    assert_eq!(
        c.must(&["CLUSTER", "GETKEYSINSLOT", "12182", "10"]),
        b"*1\r\n$3\r\nfoo\r\n"
    );
    c.must(&["DEL", "foo"]);
    assert_eq!(c.must(&["CLUSTER", "COUNTKEYSINSLOT", "12182"]), b":0\r\n");

    let ours = redirection_replies(&nodes);
    assert!(ours[0].starts_with("-MOVED 12182 127.0.0.1:P"), "{ours:?}");
    assert_eq!(
        ours[2],
        "-CROSSSLOT Keys in request don't hash to the same slot\r\n"
    );
    drop(nodes);
    // The same requests on a real redis-server cluster.
    let Some(real) = RealRedis::start() else {
        return;
    };
    drop(real);
    let real_nodes = three_node_cluster(&cli, true).expect("real nodes start");
    assert_eq!(
        ours,
        redirection_replies(&real_nodes),
        "redis-lite vs redis-server"
    );
}

#[test]
fn redis_py_cluster_client_reads_and_writes_across_nodes() {
    let Some(cli) = require_tool("redis-cli") else {
        return;
    };
    let Some(py) = require_tool("python3") else {
        return;
    };
    let probe = Command::new(&py)
        .args(["-c", "import redis.cluster"])
        .output()
        .unwrap();
    if !probe.status.success() {
        skipped("python3 has no redis module (redis-py)");
        return;
    }
    let nodes = three_node_cluster(&cli, false).unwrap();
    let script = format!(
        "from redis.cluster import RedisCluster\n\
         rc = RedisCluster(host='127.0.0.1', port={})\n\
         for i in range(100): rc.set(f'key:{{i}}', i)\n\
         assert all(int(rc.get(f'key:{{i}}')) == i for i in range(100))\n\
         assert rc.mget_nonatomic([f'key:{{i}}' for i in range(100)]) == [str(i).encode() for i in range(100)]\n\
         print('ok')\n",
        nodes[0].p.port
    );
    let out = Command::new(&py).args(["-c", &script]).output().unwrap();
    assert_eq!(text(&out.stdout).trim(), "ok", "{}", text(&out.stderr));
    // The 100 keys are spread over the three nodes, and each node holds
    // only keys of its own slots.
    let mut total = 0;
    for n in &nodes {
        let mut c = n.p.connect();
        let size = text(&c.must(&["DBSIZE"]));
        let size: i64 = size.trim_start_matches(':').trim().parse().unwrap();
        assert!(size > 0 && size < 100, "node {} has {size} keys", n.p.port);
        total += size;
    }
    assert_eq!(total, 100);
}

#[test]
fn nodes_conf_is_reloaded_after_restart() {
    let Some(cli) = require_tool("redis-cli") else {
        return;
    };
    let mut nodes: Vec<Node> = (0..3)
        .map(|_| start_node(false, None, None).unwrap())
        .collect();
    let conf = nodes[0].conf.clone();
    cluster_create(&cli, &nodes);
    wait_cluster_ok(&nodes);
    let mut c = nodes[0].p.connect();
    let myid = c.must(&["CLUSTER", "MYID"]);
    let before = bulk_text(&c.must(&["CLUSTER", "NODES"]));
    let file = std::fs::read_to_string(&conf).unwrap();
    assert!(
        file.contains("myself,master") && file.contains("vars currentEpoch 3 lastVoteEpoch 0"),
        "{file}"
    );
    drop(c);
    let bus = nodes[0].bus;
    nodes.remove(0);
    // Same file, same bus port: the node comes back as itself.
    let p = start_node(false, Some(&conf), Some(bus)).unwrap().p;
    let mut c = p.connect();
    assert_eq!(c.must(&["CLUSTER", "MYID"]), myid);
    let after = bulk_text(&c.must(&["CLUSTER", "NODES"]));
    let ids_slots = |t: &str| {
        let mut v: Vec<String> = t
            .lines()
            .map(|l| {
                let f: Vec<&str> = l.split(' ').collect();
                format!("{} {}", f[0], f[8..].join(" "))
            })
            .collect();
        v.sort();
        v
    };
    assert_eq!(ids_slots(&before), ids_slots(&after));
    std::fs::remove_file(&conf).ok();
}

#[test]
fn garbage_on_the_bus_port_closes_the_link_and_the_node_lives() {
    let n = start_node(false, None, None).unwrap();
    let packets: Vec<Vec<u8>> = vec![
        b"GET / HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
        // The signature, then a length below the header size.
        b"RCmb\x00\x00\x00\x10garbage".to_vec(),
        // A whole header's worth of zeros after a valid signature and
        // length, with a wrong version: dropped, link kept.
        {
            let mut p = b"RCmb".to_vec();
            p.extend_from_slice(&2256u32.to_be_bytes());
            p.extend_from_slice(&7u16.to_be_bytes());
            p.resize(2256, 0);
            p
        },
        // A PING claiming 1000 gossip entries it does not carry.
        {
            let mut p = b"RCmb".to_vec();
            p.extend_from_slice(&2256u32.to_be_bytes());
            p.extend_from_slice(&1u16.to_be_bytes());
            p.extend_from_slice(&[0, 0, 0, 0, 0x03, 0xe8]);
            p.resize(2256, 0);
            p
        },
        (0..5000u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect(),
    ];
    for p in &packets {
        let mut s = TcpStream::connect(("127.0.0.1", n.bus)).unwrap();
        let _ = s.write_all(p);
        drop(s);
    }
    let mut c = n.p.connect();
    assert_eq!(c.must(&["PING"]), b"+PONG\r\n");
    assert!(text(&c.must(&["CLUSTER", "INFO"])).contains("cluster_known_nodes:1"));
}

#[test]
fn cluster_commands_without_cluster_mode_say_disabled() {
    let p = Server::start();
    let mut c = p.connect();
    for cmd in [
        &["CLUSTER", "INFO"][..],
        &["READONLY"],
        &["ASKING"],
        &["CLUSTER", "NODES"],
    ] {
        assert_eq!(
            c.must(cmd),
            b"-ERR This instance has cluster support disabled\r\n"
        );
    }
    assert!(text(&c.must(&["INFO", "cluster"])).contains("cluster_enabled:0"));
}

#[test]
fn lite_node_and_real_redis_node_meet_and_see_each_other() {
    let Some(real) = start_node(true, None, None) else {
        return;
    };
    let lite = start_node(false, None, None).unwrap();
    let mut l = lite.p.connect();
    let mut r = real.p.connect();
    let lite_id = bulk_text(&l.must(&["CLUSTER", "MYID"]));
    let real_id = bulk_text(&r.must(&["CLUSTER", "MYID"]));
    let meet = l.must(&[
        "CLUSTER",
        "MEET",
        "127.0.0.1",
        &real.p.port.to_string(),
        &real.bus.to_string(),
    ]);
    assert_eq!(meet, b"+OK\r\n");
    // Both sides list the other under its real name, out of handshake.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let on_lite = bulk_text(&l.must(&["CLUSTER", "NODES"]));
        let on_real = bulk_text(&r.must(&["CLUSTER", "NODES"]));
        let sees = |t: &str, id: &str| {
            t.lines().any(|line| {
                line.starts_with(id) && line.contains(" master - ") && !line.contains("handshake")
            })
        };
        if sees(&on_lite, &real_id) && sees(&on_real, &lite_id) {
            assert_eq!(on_lite.lines().count(), 2, "{on_lite}");
            assert_eq!(on_real.lines().count(), 2, "{on_real}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no agreement:\nlite:\n{on_lite}\nreal:\n{on_real}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// MIGRATE into an importing node (RESTORE-ASKING), a key whose TTL passed
/// during the migration (-ASK, not a nil), sharded pub/sub routed by slot
/// (MOVED, CROSSSLOT), PUBLISH reaching another node's subscriber over the
/// bus, DEBUG CLUSTERLINK KILL: the same replies as a real cluster's.
fn migration_and_pubsub_replies(nodes: &[Node]) -> Vec<String> {
    let mut out = Vec::new();
    let slot_foo = 12182; // CLUSTER KEYSLOT foo
    let owner = owner_port(nodes, slot_foo);
    let o = nodes.iter().find(|n| n.p.port == owner).unwrap();
    let t = nodes.iter().find(|n| n.p.port != owner).unwrap();
    let mut oc = o.p.connect();
    let mut tc = t.p.connect();
    let o_id = bulk_text(&oc.must(&["CLUSTER", "MYID"]));
    let t_id = bulk_text(&tc.must(&["CLUSTER", "MYID"]));
    let tport = t.p.port.to_string();
    out.push(text(&oc.must(&["SET", "foo", "bar"])));
    out.push(text(&oc.must(&["SET", "{foo}gone", "x", "PX", "50"])));
    out.push(text(&tc.must(&[
        "CLUSTER",
        "SETSLOT",
        "12182",
        "IMPORTING",
        &o_id,
    ])));
    out.push(text(&oc.must(&[
        "CLUSTER",
        "SETSLOT",
        "12182",
        "MIGRATING",
        &t_id,
    ])));
    std::thread::sleep(Duration::from_millis(120));
    // The expired key is missing for routing: ASK to the target.
    out.push(text(&oc.must(&["GET", "{foo}gone"])));
    out.push(text(&oc.must(&[
        "MIGRATE",
        "127.0.0.1",
        &tport,
        "foo",
        "0",
        "5000",
    ])));
    out.push(text(&oc.must(&["GET", "foo"])));
    out.push(text(&tc.must(&["ASKING"])));
    out.push(text(&tc.must(&["GET", "foo"])));
    out.push(text(&oc.must(&["CLUSTER", "SETSLOT", "12182", "STABLE"])));
    out.push(text(&tc.must(&["CLUSTER", "SETSLOT", "12182", "STABLE"])));
    out.push(text(&tc.must(&["DEL", "foo"])));
    // Sharded channels route like keys.
    out.push(text(&tc.must(&["SPUBLISH", "foo", "m"])));
    out.push(text(&tc.must(&["SSUBSCRIBE", "foo"])));
    out.push(text(&oc.must(&["SSUBSCRIBE", "foo", "bar"])));
    out.push(text(&oc.must(&["SPUBLISH", "foo", "m"])));
    // PUBLISH on one node reaches a subscriber on another.
    let mut sub = t.p.connect();
    out.push(text(&sub.must(&["SUBSCRIBE", "news"])));
    out.push(text(&oc.must(&["PUBLISH", "news", "hello"])));
    sub.set_timeout(Duration::from_secs(10));
    out.push(text(&sub.read_reply().expect("the published message")));
    // DEBUG CLUSTERLINK KILL, its errors, and links that come back.
    out.push(text(&oc.must(&[
        "DEBUG",
        "CLUSTERLINK",
        "KILL",
        "all",
        &t_id,
    ])));
    out.push(text(&oc.must(&[
        "DEBUG",
        "CLUSTERLINK",
        "KILL",
        "to",
        "nope",
    ])));
    out.push(text(&oc.must(&[
        "DEBUG",
        "CLUSTERLINK",
        "KILL",
        "sideways",
        &t_id,
    ])));
    out.push(text(&oc.read_reply().unwrap()));
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let links = text(&oc.must(&["CLUSTER", "LINKS"]));
        if links.matches(&t_id).count() == 2 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "links to {t_id} not back: {links}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    for s in &mut out {
        for n in nodes {
            *s = s.replace(&format!(":{}\r", n.p.port), ":P\r");
        }
    }
    out
}

#[test]
fn migrate_expired_keys_sharded_pubsub_and_links_match_redis() {
    let Some(cli) = require_tool("redis-cli") else {
        return;
    };
    let lite = three_node_cluster(&cli, false).unwrap();
    let lite_out = migration_and_pubsub_replies(&lite);
    assert!(lite_out[4].starts_with("-ASK 12182 "), "{lite_out:?}");
    assert_eq!(lite_out[5], "+OK\r\n", "{lite_out:?}");
    drop(lite);
    let Some(real) = three_node_cluster(&cli, true) else {
        return;
    };
    assert_eq!(lite_out, migration_and_pubsub_replies(&real));
}

/// The node ids of a cluster, in the order of `nodes`.
fn node_ids(nodes: &[Node]) -> Vec<String> {
    nodes
        .iter()
        .map(|n| bulk_text(&n.p.connect().must(&["CLUSTER", "MYID"])))
        .collect()
}

/// How many slots each node serves, in the order of `nodes`, as the first
/// node's CLUSTER NODES says.
fn slot_counts(nodes: &[Node]) -> Vec<usize> {
    let ids = node_ids(nodes);
    let listing = bulk_text(&nodes[0].p.connect().must(&["CLUSTER", "NODES"]));
    ids.iter()
        .map(|id| {
            let line = listing
                .lines()
                .find(|l| l.starts_with(id.as_str()))
                .unwrap();
            line.split(' ')
                .skip(8)
                .filter(|r| !r.starts_with('['))
                .map(|r| match r.split_once('-') {
                    Some((a, b)) => b.parse::<usize>().unwrap() - a.parse::<usize>().unwrap() + 1,
                    None => 1,
                })
                .sum()
        })
        .collect()
}

/// Run `redis-cli --cluster ARGS...`; its output (asserting success).
fn cluster_tool(cli: &std::path::Path, args: &[&str]) -> String {
    let out = Command::new(cli)
        .arg("--cluster")
        .args(args)
        .output()
        .unwrap();
    let s = text(&out.stdout) + &text(&out.stderr);
    assert!(
        out.status.success(),
        "redis-cli --cluster {args:?} failed:\n{s}"
    );
    s
}

/// Wait until `redis-cli --cluster check` finds every slot covered, every
/// node agreeing, and no slot left open (importing/migrating).
fn wait_cluster_consistent(cli: &std::path::Path, port: u16) -> String {
    let addr = format!("127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let out = Command::new(cli)
            .args(["--cluster", "check", &addr])
            .output()
            .unwrap();
        let s = text(&out.stdout) + &text(&out.stderr);
        if out.status.success()
            && s.contains("[OK] All nodes agree about slots configuration.")
            && s.contains("[OK] All 16384 slots covered.")
            && !s.contains("[WARNING]")
        {
            return s;
        }
        assert!(Instant::now() < deadline, "cluster never consistent:\n{s}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The keys and values a redis-rs cluster client reads back, with a fresh
/// client (its own slot map from CLUSTER SLOTS).
fn read_back_with_redis_rs(port: u16, n: usize) -> Vec<(String, Option<String>)> {
    let client = redis::cluster::ClusterClient::new(vec![format!("redis://127.0.0.1:{port}/")])
        .expect("redis-rs cluster client");
    let mut con = client
        .get_connection()
        .expect("redis-rs cluster connection");
    (0..n)
        .map(|i| {
            let key = format!("key:{i}");
            let v: Option<String> = redis::Commands::get(&mut con, &key).unwrap();
            (key, v)
        })
        .collect()
}

/// What resharding does to one cluster: 2,000 keys written by redis-rs's
/// cluster client, 1,000 slots moved from the first node to the second by
/// `redis-cli --cluster reshard` (SETSLOT IMPORTING/MIGRATING, GETKEYSINSLOT,
/// MIGRATE ... KEYS, SETSLOT NODE), then `--cluster rebalance` evening the
/// slots out again. Returns the slot counts after each step; every key must
/// read back after each one.
fn reshard_and_rebalance(cli: &std::path::Path, nodes: &[Node]) -> (Vec<usize>, Vec<usize>) {
    let port = nodes[0].p.port;
    let addr = format!("127.0.0.1:{port}");
    let client = redis::cluster::ClusterClient::new(vec![format!("redis://{addr}/")]).unwrap();
    let mut con = client.get_connection().unwrap();
    for i in 0..2000 {
        let () = redis::Commands::set(&mut con, format!("key:{i}"), i).unwrap();
    }
    let expected: Vec<(String, Option<String>)> = (0..2000)
        .map(|i| (format!("key:{i}"), Some(i.to_string())))
        .collect();
    let ids = node_ids(nodes);
    let out = cluster_tool(
        cli,
        &[
            "reshard",
            &addr,
            "--cluster-from",
            &ids[0],
            "--cluster-to",
            &ids[1],
            "--cluster-slots",
            "1000",
            "--cluster-yes",
        ],
    );
    assert!(out.contains("Moving slot"), "{out}");
    wait_cluster_consistent(cli, port);
    let after_reshard = slot_counts(nodes);
    assert_eq!(
        read_back_with_redis_rs(port, 2000),
        expected,
        "after reshard"
    );
    let out = cluster_tool(cli, &["rebalance", &addr]);
    assert!(out.contains("Rebalancing across 3 nodes"), "{out}");
    wait_cluster_consistent(cli, port);
    let after_rebalance = slot_counts(nodes);
    assert_eq!(
        read_back_with_redis_rs(port, 2000),
        expected,
        "after rebalance"
    );
    // Every key lives on the node that serves its slot, nowhere else.
    let total: i64 = nodes
        .iter()
        .map(|n| {
            let r = text(&n.p.connect().must(&["DBSIZE"]));
            r.trim_start_matches(':').trim().parse::<i64>().unwrap()
        })
        .sum();
    assert_eq!(total, 2000);
    (after_reshard, after_rebalance)
}

#[test]
fn reshard_and_rebalance_with_redis_cli_keep_every_key_as_on_redis() {
    let Some(cli) = require_tool("redis-cli") else {
        return;
    };
    let lite = three_node_cluster(&cli, false).unwrap();
    let ours = reshard_and_rebalance(&cli, &lite);
    assert_eq!(ours.0, vec![5461 - 1000, 5462 + 1000, 5461]);
    assert_eq!(ours.1.iter().sum::<usize>(), 16384);
    if let Some(real) = three_node_cluster(&cli, true) {
        assert_eq!(
            ours,
            reshard_and_rebalance(&cli, &real),
            "redis-lite vs redis-server"
        );
    }
}
