//! Set commands whose replies are random (SPOP / SRANDMEMBER with a count)
//! or depend on hash order (SSCAN of a hashtable), so the differential
//! tests cannot compare them byte for byte. These tests check what must
//! hold whatever the random draws: sizes, distinctness, membership, and
//! that every strategy of spopWithCountCommand / srandmemberWithCountCommand
//! (chosen by the count/size ratio) leaves the set consistent.

mod common;

use common::Server;
use redis::Commands;
use std::collections::HashSet;
use std::time::Duration;

fn client(port: u16) -> redis::Connection {
    let c = redis::Client::open(format!("redis://127.0.0.1:{port}/")).expect("client url");
    let con = c
        .get_connection_with_timeout(Duration::from_secs(10))
        .expect("connect");
    con.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("read timeout");
    con
}

/// Fill `key` with `n` members: integers (intset while n <= 512) or strings.
fn fill(con: &mut redis::Connection, key: &str, n: usize, ints: bool) -> HashSet<String> {
    let members: Vec<String> = (0..n)
        .map(|i| {
            if ints {
                i.to_string()
            } else {
                format!("m:{i}")
            }
        })
        .collect();
    let _: () = redis::cmd("DEL").arg(key).query(con).unwrap();
    let _: i64 = con.sadd(key, &members).unwrap();
    members.into_iter().collect()
}

#[test]
fn spop_count_strategies_pop_distinct_members() {
    let srv = Server::start();
    let mut con = client(srv.port);
    // (size, count): count*... so that both CASE 2 (remaining*5 > count)
    // and CASE 3 (move the survivors) run, for both encodings.
    for ints in [true, false] {
        for (size, count) in [
            (100, 3),
            (100, 50),
            (100, 90),
            (100, 99),
            (1000, 990),
            (600, 10),
        ] {
            let all = fill(&mut con, "s", size, ints);
            let popped: Vec<String> = redis::cmd("SPOP")
                .arg("s")
                .arg(count)
                .query(&mut con)
                .unwrap();
            assert_eq!(popped.len(), count, "size {size} count {count}");
            let popped: HashSet<String> = popped.into_iter().collect();
            assert_eq!(popped.len(), count, "popped members are distinct");
            assert!(popped.is_subset(&all));
            let left: HashSet<String> = con.smembers("s").unwrap();
            assert_eq!(left.len(), size - count);
            assert!(left.is_disjoint(&popped));
            assert_eq!(left.union(&popped).count(), size);
            let card: usize = con.scard("s").unwrap();
            assert_eq!(card, size - count);
        }
    }
}

#[test]
fn spop_single_until_empty_deletes_key() {
    let srv = Server::start();
    let mut con = client(srv.port);
    let all = fill(&mut con, "s", 20, false);
    let mut seen = HashSet::new();
    for _ in 0..20 {
        let m: String = con.spop("s").unwrap();
        assert!(all.contains(&m));
        assert!(seen.insert(m));
    }
    let exists: bool = con.exists("s").unwrap();
    assert!(!exists);
}

#[test]
fn srandmember_count_cases_sizes_and_membership() {
    let srv = Server::start();
    let mut con = client(srv.port);
    for ints in [true, false] {
        let all = fill(&mut con, "s", 300, ints);
        // Positive counts: CASE 4 (count*3 <= size), CASE 3, CASE 2.
        for count in [1usize, 5, 99, 100, 101, 250, 299, 300, 400] {
            let got: Vec<String> = redis::cmd("SRANDMEMBER")
                .arg("s")
                .arg(count)
                .query(&mut con)
                .unwrap();
            let want = count.min(300);
            assert_eq!(got.len(), want, "count {count}");
            let distinct: HashSet<String> = got.into_iter().collect();
            assert_eq!(distinct.len(), want, "distinct for count {count}");
            assert!(distinct.is_subset(&all));
        }
        // Negative counts: CASE 1, repeats allowed, exactly |count| back.
        for count in [-1i64, -7, -1000] {
            let got: Vec<String> = redis::cmd("SRANDMEMBER")
                .arg("s")
                .arg(count)
                .query(&mut con)
                .unwrap();
            assert_eq!(got.len() as i64, -count);
            assert!(got.iter().all(|m| all.contains(m)));
        }
        // SRANDMEMBER never changes the set.
        let card: usize = con.scard("s").unwrap();
        assert_eq!(card, 300);
    }
}

#[test]
fn sscan_hashtable_returns_every_member() {
    let srv = Server::start();
    let mut con = client(srv.port);
    let all = fill(&mut con, "s", 1000, false);
    let mut seen = HashSet::new();
    let mut cursor: u64 = 0;
    loop {
        let (next, batch): (u64, Vec<String>) = redis::cmd("SSCAN")
            .arg("s")
            .arg(cursor)
            .arg("COUNT")
            .arg(25)
            .query(&mut con)
            .unwrap();
        seen.extend(batch);
        cursor = next;
        if cursor == 0 {
            break;
        }
    }
    assert_eq!(seen, all);
}

#[test]
fn set_memory_usage_tracks_encoding() {
    let srv = Server::start();
    let mut con = client(srv.port);
    fill(&mut con, "ints", 100, true);
    fill(&mut con, "strs", 1000, false);
    let ints: i64 = redis::cmd("MEMORY")
        .arg("USAGE")
        .arg("ints")
        .query(&mut con)
        .unwrap();
    let strs: i64 = redis::cmd("MEMORY")
        .arg("USAGE")
        .arg("strs")
        .query(&mut con)
        .unwrap();
    // 100 small integers: one blob of 8 + 200 bytes plus headers.
    assert!((200..400).contains(&ints), "intset usage {ints}");
    // 1000 strings: at least an entry and a member allocation each.
    assert!(strs > 1000 * 40, "hashtable usage {strs}");
}

#[test]
fn spop_count_case3_rebuilds_encoding_from_survivors() {
    let srv = Server::start();
    let mut con = client(srv.port);
    // 600 integers: a hashtable (past 512). Popping all but 5 moves the 5
    // survivors into a new set, which starts as an intset again.
    fill(&mut con, "s", 600, true);
    let enc: String = redis::cmd("OBJECT")
        .arg("ENCODING")
        .arg("s")
        .query(&mut con)
        .unwrap();
    assert_eq!(enc, "hashtable");
    let popped: Vec<String> = redis::cmd("SPOP")
        .arg("s")
        .arg(595)
        .query(&mut con)
        .unwrap();
    assert_eq!(popped.len(), 595);
    let enc: String = redis::cmd("OBJECT")
        .arg("ENCODING")
        .arg("s")
        .query(&mut con)
        .unwrap();
    assert_eq!(enc, "intset");
    let card: usize = con.scard("s").unwrap();
    assert_eq!(card, 5);
    // CASE 2 pops in place: the encoding stays what it was.
    fill(&mut con, "t", 600, true);
    let _: Vec<String> = redis::cmd("SPOP").arg("t").arg(10).query(&mut con).unwrap();
    let enc: String = redis::cmd("OBJECT")
        .arg("ENCODING")
        .arg("t")
        .query(&mut con)
        .unwrap();
    assert_eq!(enc, "hashtable");
}
