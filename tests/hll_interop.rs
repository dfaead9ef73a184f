//! HyperLogLog strings move between redis-lite and a real redis-server
//! 7.0.15 in both directions: an HLL is a plain string, so a client may GET
//! it from one server and SET it on the other (as a migration script or a
//! replica would carry it). The receiving side must read it (PFCOUNT,
//! PFMERGE, PFADD) exactly as the writer would, and the same PFADDs must
//! produce the same bytes on both sides, sparse and dense, including the
//! sparse -> dense promotion at `hll-sparse-max-bytes`.

mod common;

use common::{Conn, Process, RealRedis, Server};

/// The payload of a bulk string reply.
fn bulk(reply: &[u8]) -> Vec<u8> {
    assert_eq!(
        reply[0],
        b'$',
        "not a bulk reply: {}",
        common::escape(reply)
    );
    let nl = reply.iter().position(|&b| b == b'\n').unwrap();
    let len: usize = std::str::from_utf8(&reply[1..nl - 1])
        .unwrap()
        .parse()
        .unwrap();
    reply[nl + 1..nl + 1 + len].to_vec()
}

/// The value of an integer reply.
fn int(reply: &[u8]) -> i64 {
    assert_eq!(reply[0], b':', "not an integer: {}", common::escape(reply));
    std::str::from_utf8(&reply[1..reply.len() - 2])
        .unwrap()
        .parse()
        .unwrap()
}

fn pfadd(c: &mut Conn, key: &str, elements: &[String]) -> Vec<u8> {
    let mut args: Vec<&[u8]> = vec![b"PFADD", key.as_bytes()];
    args.extend(elements.iter().map(|e| e.as_bytes()));
    c.must(&args)
}

fn elements(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}:{i}")).collect()
}

/// Both servers, or None (SKIPPED) without redis-server.
fn both() -> Option<(Process, Process)> {
    let real = RealRedis::start()?;
    Some((Server::start(), real))
}

#[test]
fn same_pfadds_write_the_same_bytes() {
    let Some((lite, real)) = both() else { return };
    let (mut a, mut b) = (lite.connect(), real.connect());
    // Sizes that stay sparse, cross the 3000-byte limit, and are dense.
    for (round, n) in [1usize, 10, 100, 700, 1500, 4000, 20000]
        .into_iter()
        .enumerate()
    {
        let key = format!("hll:{round}");
        let els = elements(&key, n);
        for chunk in els.chunks(500) {
            assert_eq!(
                pfadd(&mut a, &key, chunk),
                pfadd(&mut b, &key, chunk),
                "{key}"
            );
        }
        let (sa, sb) = (bulk(&a.must(&["GET", &key])), bulk(&b.must(&["GET", &key])));
        assert_eq!(sa, sb, "{key}: the HLL strings differ ({n} elements)");
        assert_eq!(a.must(&["PFCOUNT", &key]), b.must(&["PFCOUNT", &key]));
        // The cached count went into the header the same way.
        assert_eq!(a.must(&["GET", &key]), b.must(&["GET", &key]));
        assert_eq!(
            a.must(&["PFDEBUG", "ENCODING", &key]),
            b.must(&["PFDEBUG", "ENCODING", &key])
        );
    }
}

#[test]
fn redis_written_hll_is_read_by_redis_lite() {
    let Some((lite, real)) = both() else { return };
    let (mut a, mut b) = (lite.connect(), real.connect());
    for (key, n) in [("sparse", 300usize), ("dense", 5000)] {
        pfadd(&mut b, key, &elements(key, n));
        let raw = bulk(&b.must(&["GET", key]));
        // Carried over as an opaque string.
        assert_eq!(a.must(&[b"SET", key.as_bytes(), &raw[..]]), b"+OK\r\n");
        let count = b.must(&["PFCOUNT", key]);
        assert_eq!(a.must(&["PFCOUNT", key]), count, "{key}");
        assert!((n as i64 - int(&count)).abs() < n as i64 / 20);
        // Go on adding on both sides: still the same bytes.
        let more = elements(&format!("{key}-more"), 400);
        assert_eq!(pfadd(&mut a, key, &more), pfadd(&mut b, key, &more));
        assert_eq!(a.must(&["GET", key]), b.must(&["GET", key]), "{key}");
    }
    // A merge of redis-made HLLs, done on redis-lite, equals Redis's own.
    a.must(&["PFMERGE", "m", "sparse", "dense"]);
    b.must(&["PFMERGE", "m", "sparse", "dense"]);
    assert_eq!(a.must(&["GET", "m"]), b.must(&["GET", "m"]));
    assert_eq!(
        a.must(&["PFCOUNT", "sparse", "dense"]),
        b.must(&["PFCOUNT", "sparse", "dense"])
    );
}

#[test]
fn redis_lite_written_hll_is_read_by_redis() {
    let Some((lite, real)) = both() else { return };
    let (mut a, mut b) = (lite.connect(), real.connect());
    for (key, n) in [("s", 50usize), ("d", 8000)] {
        pfadd(&mut a, key, &elements(key, n));
        let count = a.must(&["PFCOUNT", key]);
        let raw = bulk(&a.must(&["GET", key]));
        assert_eq!(b.must(&[b"SET", key.as_bytes(), &raw[..]]), b"+OK\r\n");
        // Redis trusts the cached count redis-lite wrote, and recounts the
        // same number once the cache is invalidated.
        assert_eq!(b.must(&["PFCOUNT", key]), count, "{key}");
        b.must(&["PFADD", key, "one-more-element"]);
        a.must(&["PFADD", key, "one-more-element"]);
        assert_eq!(b.must(&["PFCOUNT", key]), a.must(&["PFCOUNT", key]));
        assert_eq!(b.must(&["GET", key]), a.must(&["GET", key]));
        assert_eq!(
            b.must(&["PFDEBUG", "GETREG", key]),
            a.must(&["PFDEBUG", "GETREG", key])
        );
    }
    // Redis merges redis-lite's HLLs into what redis-lite merges.
    b.must(&["PFMERGE", "u", "s", "d"]);
    a.must(&["PFMERGE", "u", "s", "d"]);
    assert_eq!(b.must(&["GET", "u"]), a.must(&["GET", "u"]));
}

#[test]
fn promotion_follows_hll_sparse_max_bytes_on_both() {
    let Some((lite, real)) = both() else { return };
    for limit in ["0", "100", "1000", "8000"] {
        let (mut a, mut b) = (lite.connect(), real.connect());
        a.must(&["CONFIG", "SET", "hll-sparse-max-bytes", limit]);
        b.must(&["CONFIG", "SET", "hll-sparse-max-bytes", limit]);
        let key = format!("p{limit}");
        for i in 0..60 {
            let els = elements(&format!("{key}-{i}"), 25);
            assert_eq!(pfadd(&mut a, &key, &els), pfadd(&mut b, &key, &els));
            assert_eq!(
                a.must(&["GET", &key]),
                b.must(&["GET", &key]),
                "{key} after round {i}"
            );
        }
    }
}
