//! Cluster replicas and failover end to end: six redis-lite nodes made
//! into a 3 masters + 3 replicas cluster by Redis's own `redis-cli
//! --cluster create --cluster-replicas 1`; the replicas in CLUSTER NODES /
//! SLOTS / SHARDS / REPLICAS; a master killed with SIGKILL replaced by its
//! replica (automatic failover: PFAIL -> FAIL by the masters' majority, the
//! replica's election) with no acknowledged write lost, the old master
//! back as a replica of the winner; CLUSTER FAILOVER swapping roles; and
//! the error replies of CLUSTER REPLICATE / FAILOVER, REPLICAOF and
//! FAILOVER in cluster mode compared with a real redis-server.
//!
//! Tests needing redis-cli skip plainly when it is missing (and fail under
//! CI=true, as the harness's `require_tool`).

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::cluster::{bulk_text, start_node, text, Node, NODE_TIMEOUT};
use common::{free_port, require_tool, Conn, Process, RealRedis, Server};

fn start_lite_node(conf: Option<&str>, bus: Option<u16>) -> Node {
    start_node(false, conf, bus).expect("redis-lite starts")
}

fn myid(n: &Node) -> String {
    bulk_text(&n.p.connect().must(&["CLUSTER", "MYID"]))
}

/// The first line of ROLE: "master" or "slave".
fn role(port: u16) -> Option<String> {
    let mut c = Conn::connect(port).ok()?;
    c.set_timeout(Duration::from_secs(2));
    let r = text(&c.cmd(&["ROLE"]).ok()?);
    Some(if r.contains("$6\r\nmaster") {
        "master".into()
    } else {
        "slave".into()
    })
}

/// A 3+3 cluster by `redis-cli --cluster create --cluster-replicas 1`,
/// waited on until every node is OK and every replica is linked.
fn six_node_cluster(cli: &std::path::Path) -> Vec<Node> {
    let nodes: Vec<Node> = (0..6).map(|_| start_lite_node(None, None)).collect();
    let mut cmd = Command::new(cli);
    cmd.arg("--cluster").arg("create");
    for n in &nodes {
        cmd.arg(format!("127.0.0.1:{}", n.p.port));
    }
    cmd.args(["--cluster-replicas", "1", "--cluster-yes"]);
    let out = cmd.output().expect("run redis-cli --cluster create");
    let s = text(&out.stdout) + &text(&out.stderr);
    assert!(out.status.success(), "cluster create failed:\n{s}");
    assert!(s.contains("[OK] All 16384 slots covered."), "{s}");
    assert!(s.matches("replicates ").count() >= 3, "{s}");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let ready = nodes.iter().all(|n| {
            let mut c = n.p.connect();
            let info = text(&c.must(&["CLUSTER", "INFO"]));
            let repl = text(&c.must(&["INFO", "replication"]));
            info.contains("cluster_state:ok")
                && (repl.contains("role:master") || repl.contains("master_link_status:up"))
        });
        if ready {
            break;
        }
        assert!(Instant::now() < deadline, "cluster never became ready");
        std::thread::sleep(Duration::from_millis(100));
    }
    nodes
}

/// SET through the cluster's redirections: follow -MOVED until a node
/// takes it; the port of the node that acknowledged it.
fn cluster_set(start_port: u16, key: &str, val: &str) -> u16 {
    let mut port = start_port;
    for _ in 0..10 {
        let mut c = Conn::connect(port).expect("connect");
        let r = text(&c.must(&["SET", key, val]));
        if r == "+OK\r\n" {
            return port;
        }
        if let Some(rest) = r.strip_prefix("-MOVED ") {
            port = rest.trim().rsplit(':').next().unwrap().parse().unwrap();
            continue;
        }
        panic!("SET {key} answered {r}");
    }
    panic!("SET {key}: too many redirections");
}

/// GET through the redirections (None when the cluster cannot answer
/// yet: CLUSTERDOWN, or a node that is gone).
fn cluster_get(start_port: u16, key: &str) -> Option<String> {
    let mut port = start_port;
    for _ in 0..10 {
        let mut c = Conn::connect(port).ok()?;
        let r = text(&c.cmd(&["GET", key]).ok()?);
        if let Some(rest) = r.strip_prefix("-MOVED ") {
            port = rest.trim().rsplit(':').next().unwrap().parse().unwrap();
            continue;
        }
        if r.starts_with('-') {
            return None;
        }
        return Some(r);
    }
    None
}

fn node_by_port(nodes: &[Node], port: u16) -> usize {
    nodes.iter().position(|n| n.p.port == port).unwrap()
}

/// The index of `master`'s replica among `nodes`, from CLUSTER REPLICAS.
fn replica_of(nodes: &[Node], master: usize) -> usize {
    let id = myid(&nodes[master]);
    let mut c = nodes[master].p.connect();
    let r = text(&c.must(&["CLUSTER", "REPLICAS", &id]));
    let line = r
        .lines()
        .find(|l| l.contains(" slave "))
        .expect("a replica");
    let rid = line.split(' ').next().unwrap().to_string();
    nodes.iter().position(|n| myid(n) == rid).unwrap()
}

#[test]
fn cluster_replicas_1_creates_three_replicas_shown_as_redis_shows_them() {
    let Some(cli) = require_tool("redis-cli") else {
        return;
    };
    let nodes = six_node_cluster(&cli);
    // A write on each master so the replicas have a non-zero offset
    // (CLUSTER SLOTS lists only replicas with data).
    for i in 0..30 {
        cluster_set(nodes[0].p.port, &format!("key:{i}"), "v");
    }
    let mut c = nodes[0].p.connect();
    let nodes_text = bulk_text(&c.must(&["CLUSTER", "NODES"]));
    let ids: Vec<String> = nodes.iter().map(myid).collect();
    let masters: Vec<&str> = nodes_text
        .lines()
        .filter(|l| l.split(' ').nth(2).unwrap().contains("master"))
        .collect();
    let slaves: Vec<&str> = nodes_text
        .lines()
        .filter(|l| l.split(' ').nth(2).unwrap().contains("slave"))
        .collect();
    assert_eq!((masters.len(), slaves.len()), (3, 3), "{nodes_text}");
    for line in &slaves {
        let f: Vec<&str> = line.split(' ').collect();
        // A replica line: its master's id in field 4, its master's epoch,
        // no slots.
        assert!(ids.contains(&f[3].to_string()), "{line}");
        assert_eq!(f.len(), 8, "{line}");
        let master_line = masters.iter().find(|m| m.starts_with(f[3])).unwrap();
        assert_eq!(master_line.split(' ').nth(6), Some(f[6]), "{line}");
    }
    // Each replica replicates its master through the replication code.
    for (i, n) in nodes.iter().enumerate() {
        let repl = text(&n.p.connect().must(&["INFO", "replication"]));
        if repl.contains("role:slave") {
            let master_id = slaves
                .iter()
                .find(|l| l.starts_with(&ids[i]))
                .unwrap()
                .split(' ')
                .nth(3)
                .unwrap();
            let m = &nodes[ids.iter().position(|x| x == master_id).unwrap()];
            assert!(
                repl.contains(&format!("master_port:{}", m.p.port)),
                "{repl}"
            );
        }
    }
    // CLUSTER SLOTS: each range with its master and its replica (4
    // elements: ip, port, id, map).
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let slots = c.must(&["CLUSTER", "SLOTS"]);
        let (_, ranges) = common::split_aggregate(&slots).unwrap();
        let with_replica = ranges
            .iter()
            .filter(|r| common::split_aggregate(r).unwrap().1.len() == 4)
            .count();
        if ranges.len() == 3 && with_replica == 3 {
            break;
        }
        assert!(Instant::now() < deadline, "{}", common::escape(&slots));
        std::thread::sleep(Duration::from_millis(200));
    }
    // CLUSTER SHARDS: three shards of a master and a replica.
    let shards = text(&c.must(&["CLUSTER", "SHARDS"]));
    assert_eq!(shards.matches("$7\r\nreplica\r\n").count(), 3, "{shards}");
    assert_eq!(shards.matches("$6\r\nmaster\r\n").count(), 3, "{shards}");
    // nodes.conf of a replica says so.
    let r = nodes
        .iter()
        .find(|n| role(n.p.port).as_deref() == Some("slave"))
        .unwrap();
    let mut rc = r.p.connect();
    assert_eq!(rc.must(&["CLUSTER", "SAVECONFIG"]), b"+OK\r\n");
    let conf = std::fs::read_to_string(&r.conf).unwrap();
    assert!(conf.contains("myself,slave "), "{conf}");
    // A replica refuses writes with MOVED to its master, serves reads
    // after READONLY.
    let key = "key:0";
    let owner = cluster_set(nodes[0].p.port, key, "v0");
    let replica = &nodes[replica_of(&nodes, node_by_port(&nodes, owner))];
    let mut rc = replica.p.connect();
    let moved = text(&rc.must(&["SET", key, "x"]));
    assert!(moved.starts_with("-MOVED "), "{moved}");
    assert!(moved.ends_with(&format!(":{}\r\n", owner)), "{moved}");
    let deadline = Instant::now() + Duration::from_secs(10);
    assert_eq!(rc.must(&["READONLY"]), b"+OK\r\n");
    loop {
        if rc.must(&["GET", key]) == b"$2\r\nv0\r\n" {
            break;
        }
        assert!(Instant::now() < deadline, "the replica never got the write");
        std::thread::sleep(Duration::from_millis(50));
    }
    for n in &nodes {
        std::fs::remove_file(&n.conf).ok();
    }
}

#[test]
fn killed_master_is_replaced_by_its_replica_and_comes_back_as_replica() {
    let Some(cli) = require_tool("redis-cli") else {
        return;
    };
    let mut nodes = six_node_cluster(&cli);
    // Acknowledged writes across the three masters, each one replicated
    // (WAIT 1) before the master is killed: none may be lost.
    let keys: Vec<String> = (0..200).map(|i| format!("k{i}")).collect();
    let mut owners = std::collections::BTreeSet::new();
    for k in &keys {
        owners.insert(cluster_set(nodes[0].p.port, k, &format!("v-{k}")));
    }
    assert_eq!(owners.len(), 3);
    for &port in &owners {
        let mut c = Conn::connect(port).unwrap();
        assert_eq!(c.must(&["WAIT", "1", "5000"]), b":1\r\n");
    }
    let victim = node_by_port(&nodes, *owners.iter().next().unwrap());
    let heir = replica_of(&nodes, victim);
    let victim_id = myid(&nodes[victim]);
    let heir_port = nodes[heir].p.port;
    let survivor = nodes
        .iter()
        .position(|n| n.p.port != nodes[victim].p.port && owners.contains(&n.p.port))
        .unwrap();
    let survivor_port = nodes[survivor].p.port;

    // SIGKILL the master.
    let t0 = Instant::now();
    // SAFETY: kill(2) on our own child's pid.
    unsafe {
        libc::kill(nodes[victim].p.pid() as i32, libc::SIGKILL);
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while role(heir_port).as_deref() != Some("master") {
        assert!(Instant::now() < deadline, "the replica never took over");
        std::thread::sleep(Duration::from_millis(20));
    }
    let took = t0.elapsed();
    // At least the node timeout: PFAIL needs it to pass without a PONG.
    assert!(took >= Duration::from_millis(5000), "{took:?}");
    eprintln!("failover after SIGKILL took {took:?} (cluster-node-timeout {NODE_TIMEOUT} ms)");
    // The survivors see the victim FAIL and the heir as master of its slots.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let t = bulk_text(&nodes[survivor].p.connect().must(&["CLUSTER", "NODES"]));
        let victim_failed = t
            .lines()
            .any(|l| l.starts_with(&victim_id) && l.contains("master,fail"));
        if victim_failed
            && text(&nodes[survivor].p.connect().must(&["CLUSTER", "INFO"]))
                .contains("cluster_state:ok")
        {
            break;
        }
        assert!(Instant::now() < deadline, "{t}");
        std::thread::sleep(Duration::from_millis(100));
    }
    for k in &keys {
        assert_eq!(
            cluster_get(survivor_port, k),
            Some(format!("${}\r\nv-{k}\r\n", 2 + k.len())),
            "{k} lost"
        );
    }

    // The old master comes back from its nodes.conf: the newer epoch of
    // the heir's claim makes it a replica of the heir.
    let conf = nodes[victim].conf.clone();
    let bus = nodes[victim].bus;
    drop(nodes.remove(victim));
    let back = start_lite_node(Some(&conf), Some(bus));
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let repl = text(&back.p.connect().must(&["INFO", "replication"]));
        if repl.contains("role:slave")
            && repl.contains(&format!("master_port:{heir_port}"))
            && repl.contains("master_link_status:up")
        {
            break;
        }
        assert!(Instant::now() < deadline, "{repl}");
        std::thread::sleep(Duration::from_millis(100));
    }

    // CLUSTER FAILOVER on it swaps the roles back, keys intact.
    let mut bc = back.p.connect();
    assert_eq!(bc.must(&["CLUSTER", "FAILOVER"]), b"+OK\r\n");
    let deadline = Instant::now() + Duration::from_secs(30);
    while role(back.p.port).as_deref() != Some("master")
        || role(heir_port).as_deref() != Some("slave")
    {
        assert!(
            Instant::now() < deadline,
            "CLUSTER FAILOVER did not swap roles"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    for k in &keys {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let got = cluster_get(survivor_port, k);
            if got == Some(format!("${}\r\nv-{k}\r\n", 2 + k.len())) {
                break;
            }
            assert!(Instant::now() < deadline, "{k}: {got:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    std::fs::remove_file(&back.conf).ok();
    for n in &nodes {
        std::fs::remove_file(&n.conf).ok();
    }
}

/// The errors of CLUSTER REPLICATE / FAILOVER and of REPLICAOF / FAILOVER
/// in cluster mode, on a lone node, byte for byte as redis-server's.
#[test]
fn replicate_and_failover_errors_match_redis() {
    let run = |p: &Process| {
        let mut c = p.connect();
        let id = bulk_text(&c.must(&["CLUSTER", "MYID"]));
        let mut out = Vec::new();
        for cmd in [
            vec![
                "CLUSTER",
                "REPLICATE",
                "0123456789012345678901234567890123456789",
            ],
            vec!["CLUSTER", "REPLICATE", "nope"],
            vec!["CLUSTER", "REPLICATE", &id],
            vec!["CLUSTER", "REPLICAS", "nope"],
            vec!["CLUSTER", "REPLICAS", &id],
            vec!["CLUSTER", "SLAVES", &id],
            vec!["CLUSTER", "FAILOVER"],
            vec!["CLUSTER", "FAILOVER", "FORCE"],
            vec!["CLUSTER", "FAILOVER", "sideways"],
            vec!["REPLICAOF", "127.0.0.1", "1"],
            vec!["SLAVEOF", "NO", "ONE"],
            vec!["FAILOVER"],
        ] {
            out.push(text(&c.must(&cmd)));
        }
        out
    };
    let bus = free_port().to_string();
    let args = ["--cluster-enabled", "yes", "--cluster-port", &bus];
    let lite = run(&Server::start_with(&args));
    assert_eq!(lite[2], "-ERR Can't replicate myself\r\n");
    if let Some(real) = RealRedis::start_with(&args) {
        assert_eq!(lite, run(&real));
    }
}
