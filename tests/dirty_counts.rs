//! "Only a real change counts": for the bitmap, GEO and HyperLogLog
//! commands, how much each command adds to the server's dirty counter (what
//! triggers `save` points and propagation; INFO persistence shows it as
//! `rdb_changes_since_last_save`) must be what redis-server adds. SETBIT of
//! a bit to its value, BITFIELD writes of the same value, PFADD that
//! changes no register, PFCOUNT answering from its cache: zero. BITFIELD
//! counts one per changing operation, GEOSEARCHSTORE one per stored member.
//!
//! Each line runs on both servers; the replies and the dirty deltas must be
//! equal, line by line.

mod common;

use common::{escape, Conn, Process, RealRedis, Server};

const SCRIPT: &str = r#"
SETBIT b 7 1
SETBIT b 7 1
SETBIT b 7 0
SETBIT b 100 0
SETBIT b 100 0
SETBIT nob 0 0
GETBIT b 7
BITCOUNT b
BITPOS b 1
BITOP AND d b b
BITOP OR d nokey nokey2
BITOP OR d nokey nokey2
BITFIELD f SET u8 0 1
BITFIELD f SET u8 0 1
BITFIELD f SET u8 0 1 SET u8 8 0 INCRBY u8 0 0
BITFIELD f SET u8 0 2 SET u8 8 3 INCRBY u8 0 5 GET u8 0
BITFIELD f OVERFLOW FAIL INCRBY u8 0 1000
BITFIELD f OVERFLOW FAIL SET u8 100 256
BITFIELD g OVERFLOW FAIL SET u8 0 256
EXISTS g
BITFIELD h SET u8 0 0 SET u8 64 0
BITFIELD h GET u8 0
BITFIELD_RO h GET u8 0
SET lcs1 ohmytext
SET lcs2 mynewtext
LCS lcs1 lcs2
PFADD hll a b c
PFADD hll a b c
PFADD hll
PFADD hll2
PFCOUNT hll
PFCOUNT hll
PFADD hll d
PFCOUNT hll hll2
PFCOUNT hll
PFMERGE hll3 hll hll2
PFMERGE hll3 hll
PFDEBUG TODENSE hll
PFDEBUG TODENSE hll
PFDEBUG GETREG hll2
PFDEBUG GETREG hll2
PFDEBUG ENCODING hll
GEOADD geo 13.361389 38.115556 Palermo 15.087269 37.502669 Catania
GEOADD geo 13.361389 38.115556 Palermo
GEOADD geo CH 13.361389 38.115556 Palermo 1 1 Other
GEOADD geo XX 2 2 Nope
GEOSEARCHSTORE dst geo FROMLONLAT 15 37 BYRADIUS 200 km
GEOSEARCHSTORE dst geo FROMLONLAT 15 37 BYRADIUS 200 km STOREDIST
GEOSEARCHSTORE dst geo FROMLONLAT 100 0 BYRADIUS 1 km
GEOSEARCHSTORE dst geo FROMLONLAT 100 0 BYRADIUS 1 km
GEORADIUS geo 15 37 200 km STORE dst2
GEORADIUS nogeo 15 37 200 km STORE dst2
GEORADIUS nogeo 15 37 200 km STORE dst2
GEOSEARCH geo FROMLONLAT 15 37 BYRADIUS 200 km
"#;

/// rdb_changes_since_last_save from INFO persistence.
fn dirty(c: &mut Conn) -> i64 {
    let info = c.must(&["INFO", "persistence"]);
    let text = String::from_utf8_lossy(&info);
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("rdb_changes_since_last_save:"))
        .expect("rdb_changes_since_last_save in INFO persistence");
    line.trim().parse().unwrap()
}

/// (command, reply, dirty delta) for every script line.
fn run(p: &Process) -> Vec<(String, String, i64)> {
    let mut c = p.connect();
    let mut out = Vec::new();
    for line in SCRIPT.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let args: Vec<&str> = line.split_whitespace().collect();
        let before = dirty(&mut c);
        let reply = c.must(&args);
        let delta = dirty(&mut c) - before;
        out.push((line.to_string(), escape(&reply), delta));
    }
    out
}

#[test]
fn dirty_deltas_match_redis() {
    let ours = run(&Server::start());
    // The rules themselves, independent of any reference server.
    let delta = |cmd: &str| ours.iter().find(|(l, _, _)| l == cmd).unwrap().2;
    assert_eq!(
        delta("PFADD hll2"),
        1,
        "PFADD creating an empty HLL is one change"
    );
    assert_eq!(delta("BITFIELD_RO h GET u8 0"), 0);
    assert_eq!(delta("SETBIT nob 0 0"), 1, "creating the key is a change");
    assert_eq!(delta("PFCOUNT hll hll2"), 0, "a union count caches nothing");
    let Some(real) = RealRedis::start() else {
        return;
    };
    let theirs = run(&real);
    for (o, t) in ours.iter().zip(&theirs) {
        assert_eq!(o, t, "redis-lite vs redis-server");
    }
    // Repeated commands must have changed nothing the second time.
    for w in ours.windows(2) {
        if w[0].0 == w[1].0 && !w[0].0.starts_with("PFCOUNT") {
            assert!(w[1].2 == 0 || w[0].0.starts_with("BITFIELD"), "{:?}", w[1]);
        }
    }
}
