//! The replication stream, command by command, against redis-server
//! 7.0.15: the scenarios of Redis's own tests that use
//! attach_to_replication_stream (unit/expire, unit/multi, unit/scripting,
//! unit/type/list, unit/type/zset, unit/type/string), each run on a fresh
//! redis-lite and a fresh redis-server with a SYNC client attached
//! (common::replication::ReplStream), the two streams compared with
//! absolute times masked.
//!
//! What they protect: one propagation path (propagate.rs) that wraps
//! transactions and scripts in MULTI/EXEC, places SELECT, propagates
//! expiry as DEL (lazy, outside MULTI for SCAN/RANDOMKEY; after EXEC for a
//! blocked client's expired key), and rewrites relative or blocking
//! commands (SET EX -> SET PXAT, EXPIRE -> PEXPIREAT, GETEX -> PEXPIREAT /
//! PERSIST / DEL, RESTORE -> ABSTTL, BLMPOP/LMPOP -> LPOP/RPOP count,
//! BZMPOP/ZMPOP -> ZPOPMIN/ZPOPMAX count, SPOP -> SREM, INCRBYFLOAT -> SET
//! KEEPTTL).
//!
//! All print SKIPPED without redis-server (and fail under CI=true).

mod common;

use common::replication::{
    compare_streams, info_field, same_stream_on_both, same_stream_on_both_until_close, text,
    ReplStream,
};
use common::{Conn, Process};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

fn run(c: &mut Conn, cmds: &[&[&str]]) {
    for cmd in cmds {
        c.must(cmd);
    }
}

/// A stream as lines, `cmd arg ...`.
fn lines(cmds: &[Vec<String>]) -> Vec<String> {
    cmds.iter().map(|c| c.join(" ")).collect()
}

/// Poll until `n` clients are blocked (wait_for_blocked_clients_count).
fn wait_blocked(c: &mut Conn, n: usize) {
    common::replication::wait_until("blocked clients", || {
        info_field(c, "clients", "blocked_clients") == n.to_string()
    });
}

// ---------------------------------------------------------------------------
// unit/expire.tcl
// ---------------------------------------------------------------------------

/// "All TTL in commands are propagated as absolute timestamp in
/// replication stream".
#[test]
fn every_ttl_is_propagated_as_an_absolute_time() {
    let Some(ours) = same_stream_on_both(&[], |p| {
        let mut c = p.connect();
        let s = now_secs();
        let ms = now_ms();
        let (exat, pxat) = ((s + 100).to_string(), (ms + 100_000).to_string());
        run(
            &mut c,
            &[
                &["SET", "foo1", "bar", "EX", "200"],
                &["SET", "foo1", "bar", "PX", "100000"],
                &["SET", "foo1", "bar", "EXAT", &exat],
                &["SET", "foo1", "bar", "PXAT", &pxat],
                &["SETEX", "foo1", "100", "bar"],
                &["PSETEX", "foo1", "100000", "bar"],
                &["SET", "foo2", "bar"],
                &["EXPIRE", "foo2", "100"],
                &["PEXPIRE", "foo2", "100000"],
                &["SET", "foo3", "bar"],
                &["EXPIREAT", "foo3", &exat],
                &["PEXPIREAT", "foo3", &(s * 1000 + 100_000).to_string()],
                &["EXPIREAT", "foo3", &(s - 100).to_string()],
                &["SET", "foo4", "bar"],
                &["GETEX", "foo4", "EX", "200"],
                &["GETEX", "foo4", "PX", "200000"],
                &["GETEX", "foo4", "EXAT", &exat],
                &["GETEX", "foo4", "PXAT", &pxat],
                &["SET", "foo5", "bar"],
            ],
        );
        let dump = c.must(&["DUMP", "foo5"]);
        let payload = common::replication::bulk(&dump);
        let restore = |c: &mut Conn, key: &str, ttl: &str, abs: bool| {
            let mut args: Vec<&[u8]> = vec![b"RESTORE", key.as_bytes(), ttl.as_bytes(), &payload];
            if abs {
                args.push(b"absttl");
            }
            assert_eq!(c.cmd(&args).unwrap(), b"+OK\r\n");
        };
        restore(&mut c, "foo6", "100000", false);
        restore(&mut c, "foo7", &(now_ms() + 100_000).to_string(), true);
    }) else {
        return;
    };
    let l = lines(&ours);
    assert_eq!(l[1], "set foo1 bar PXAT <ms>", "{l:#?}");
    assert!(l.contains(&"del foo3".to_string()), "{l:#?}");
}

/// "GETEX propagate as to replica as PERSIST, DEL, or nothing".
#[test]
fn getex_propagates_as_persist_del_or_nothing() {
    let Some(ours) = same_stream_on_both(&[], |p| {
        let mut c = p.connect();
        let past = (now_secs() - 100).to_string();
        run(
            &mut c,
            &[
                &["SET", "foo", "bar", "EX", "100"],
                &["GETEX", "foo", "PERSIST"],
                &["GETEX", "foo"],
                &["GETEX", "foo", "EXAT", &past],
            ],
        );
    }) else {
        return;
    };
    assert_eq!(
        lines(&ours),
        [
            "select 0",
            "set foo bar PXAT <ms>",
            "persist foo",
            "del foo"
        ]
    );
}

/// Keys that expired while the active cycle is off, then `cmd` meets them.
fn lazy_expire_by(cmd: &'static [&'static str]) -> Option<Vec<Vec<String>>> {
    let setup = |p: &Process| {
        let mut c = p.connect();
        run(
            &mut c,
            &[
                &["DEBUG", "SET-ACTIVE-EXPIRE", "0"],
                &["SET", "foo1", "bar", "PX", "1"],
                &["SET", "foo2", "bar", "PX", "1"],
            ],
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    let real = common::RealRedis::start()?;
    let lite = common::Server::start();
    let stream = |p: &Process| {
        setup(p);
        let mut s = ReplStream::attach(p.port);
        p.connect().must(cmd);
        let mut cmds = s.until_marker();
        // Which key a scan meets first depends on the hash seed.
        cmds.sort();
        cmds
    };
    let ours = stream(&lite);
    assert_eq!(lines(&ours), lines(&stream(&real)));
    Some(common::replication::lowercase_names(ours))
}

/// "SCAN: Lazy-expire should not be wrapped in MULTI/EXEC".
#[test]
fn scan_propagates_lazy_expiry_without_multi() {
    if let Some(ours) = lazy_expire_by(&["SCAN", "0"]) {
        assert_eq!(lines(&ours), ["del foo1", "del foo2", "select 0"]);
    }
}

/// "RANDOMKEY: Lazy-expire should not be wrapped in MULTI/EXEC".
#[test]
fn randomkey_propagates_lazy_expiry_without_multi() {
    if let Some(ours) = lazy_expire_by(&["RANDOMKEY"]) {
        assert_eq!(lines(&ours), ["del foo1", "del foo2", "select 0"]);
    }
}

// ---------------------------------------------------------------------------
// unit/multi.tcl
// ---------------------------------------------------------------------------

/// Run `cmds` (in MULTI ... EXEC as the caller writes them) on both.
fn multi_stream(cmds: &'static [&'static [&'static str]]) -> Option<Vec<String>> {
    same_stream_on_both(&[], |p| run(&mut p.connect(), cmds)).map(|s| lines(&s))
}

#[test]
fn exec_of_one_write_propagates_it_alone() {
    let Some(l) = multi_stream(&[
        &["MULTI"],
        &["SET", "foo", "bar"],
        &["EXEC"],
        &["SET", "foo2", "bar"],
    ]) else {
        return;
    };
    assert_eq!(l, ["select 0", "set foo bar", "set foo2 bar"]);
}

#[test]
fn exec_of_several_writes_is_wrapped_in_multi_with_selects() {
    let Some(l) = multi_stream(&[
        &["MULTI"],
        &["SET", "foo", "bar"],
        &["GET", "foo"],
        &["SET", "foo2", "bar2"],
        &["EXEC"],
        &["MULTI"],
        &["SELECT", "1"],
        &["SET", "foo", "bar"],
        &["GET", "foo"],
        &["SELECT", "2"],
        &["SET", "foo2", "bar2"],
        &["SELECT", "3"],
        &["SET", "foo3", "bar3"],
        &["EXEC"],
        &["SELECT", "0"],
    ]) else {
        return;
    };
    assert_eq!(l[1], "multi", "{l:#?}");
}

#[test]
fn empty_read_only_and_no_op_transactions_propagate_nothing() {
    let Some(l) = multi_stream(&[
        &["MULTI"],
        &["EXEC"],
        &["SET", "foo", "value1"],
        &["MULTI"],
        &["GET", "foo"],
        &["EXEC"],
        &["DEL", "bar"],
        &["MULTI"],
        &["DEL", "bar"],
        &["EXEC"],
        &["INCR", "n"],
    ]) else {
        return;
    };
    assert_eq!(l, ["select 0", "set foo value1", "incr n"]);
}

#[test]
fn replicaof_inside_exec_propagates_nothing_of_it() {
    // REPLICAOF NO ONE closes the replicas' links (a new replication ID):
    // the stream is read to its end.
    let Some(l) = same_stream_on_both_until_close(&[], |p| {
        let mut c = p.connect();
        run(
            &mut c,
            &[
                &["SET", "foo", "bar"],
                &["MULTI"],
                &["SET", "foo2", "bar"],
                &["REPLICAOF", "localhost", "9999"],
                &["SET", "foo3", "bar"],
                &["EXEC"],
            ],
        );
        let e = text(&c.must(&["SET", "foo4", "bar"]));
        assert!(e.starts_with("-READONLY"), "{e}");
        c.must(&["REPLICAOF", "NO", "ONE"]);
    }) else {
        return;
    };
    assert_eq!(lines(&l), ["select 0", "set foo bar"]);
}

#[test]
fn publish_script_load_eval_and_script_flush_inside_exec() {
    let Some(l) = multi_stream(&[
        &["MULTI"],
        &["PUBLISH", "bla", "bla"],
        &["EXEC"],
        &["MULTI"],
        &["SCRIPT", "LOAD", "redis.call('set', KEYS[1], 'foo')"],
        &["SET", "foo", "bar"],
        &["EXEC"],
        &["MULTI"],
        &["EVAL", "redis.call('set', KEYS[1], 'bar')", "1", "bar"],
        &["EXEC"],
        &["MULTI"],
        &["SCRIPT", "FLUSH"],
        &["SET", "foo", "bar"],
        &["EXEC"],
    ]) else {
        return;
    };
    assert_eq!(
        l,
        [
            "select 0",
            "publish bla bla",
            "set foo bar",
            "set bar bar",
            "set foo bar"
        ]
    );
}

#[test]
fn xreadgroup_inside_exec_propagates_its_xclaims_in_multi() {
    // Explicit IDs (Redis's test uses *): two servers' clocks would put
    // the third entry in a new millisecond on one of them only.
    let Some(l) = multi_stream(&[
        &["XADD", "mystream", "1-1", "foo", "bar"],
        &["XADD", "mystream", "1-2", "foo2", "bar2"],
        &["XADD", "mystream", "1-3", "foo3", "bar3"],
        &["XGROUP", "CREATE", "mystream", "mygroup", "0"],
        &["MULTI"],
        &[
            "XREADGROUP",
            "GROUP",
            "mygroup",
            "consumer1",
            "COUNT",
            "2",
            "STREAMS",
            "mystream",
            ">",
        ],
        &[
            "XREADGROUP",
            "GROUP",
            "mygroup",
            "consumer1",
            "STREAMS",
            "mystream",
            ">",
        ],
        &["EXEC"],
    ]) else {
        return;
    };
    assert_eq!(l.iter().filter(|c| c.starts_with("xclaim")).count(), 3);
}

// ---------------------------------------------------------------------------
// unit/scripting.tcl (eval only in Redis's suite too)
// ---------------------------------------------------------------------------

/// "SPOP: We can call scripts rewriting client->argv from Lua".
#[test]
fn spop_from_lua_propagates_as_srem() {
    // Which member SPOP picks is random on both servers: blanked.
    let blank_srem = |cmds: Vec<Vec<String>>| {
        cmds.into_iter()
            .map(|mut c| {
                if c[0].eq_ignore_ascii_case("srem") && c.len() == 3 {
                    c[2] = "*".into();
                }
                c
            })
            .collect()
    };
    let Some(l) = compare_streams(
        &[],
        |p| {
            let mut c = p.connect();
            run(
                &mut c,
                &[
                    &["SADD", "myset", "ppp"],
                    &["DEL", "myset"],
                    &["SADD", "myset", "a", "b", "c"],
                    &["EVAL", "return redis.call('spop', 'myset')", "0"],
                    &["EVAL", "return redis.call('spop', 'myset', 1)", "0"],
                    &["EVAL", "return redis.call('spop', KEYS[1])", "1", "myset"],
                ],
            );
            // The set is empty now: this one is not propagated.
            let r = c.must(&["EVAL", "return redis.call('spop', KEYS[1])", "1", "myset"]);
            assert_eq!(r, b"$-1\r\n");
            c.must(&["SET", "trailingkey", "1"]);
        },
        ReplStream::until_marker,
        blank_srem,
    ) else {
        return;
    };
    assert_eq!(
        lines(&l),
        [
            "select 0",
            "sadd myset ppp",
            "del myset",
            "sadd myset a b c",
            "srem myset *",
            "srem myset *",
            "srem myset *",
            "set trailingkey 1"
        ]
    );
}

#[test]
fn lua_reads_are_not_propagated_and_rewrites_apply_inside_scripts() {
    let Some(l) = multi_stream(&[
        &["MSET", "a", "1", "b", "2"],
        &["EVAL", "return redis.call('mget', 'a', 'b')", "0"],
        &["SET", "expirekey", "1"],
        &[
            "EVAL",
            "return redis.call('expire', KEYS[1], ARGV[1])",
            "1",
            "expirekey",
            "3",
        ],
        &["EVAL", "redis.call('hmget', KEYS[1], 1, 2, 3)", "1", "key"],
        &["EVAL", "redis.call('incrbyfloat', KEYS[1], 1)", "1", "key"],
        &[
            "EVAL",
            "redis.call('set', KEYS[1], '1', 'KEEPTTL')",
            "1",
            "key",
        ],
    ]) else {
        return;
    };
    assert_eq!(
        l,
        [
            "select 0",
            "mset a 1 b 2",
            "set expirekey 1",
            "pexpireat expirekey <ms>",
            "set key 1 KEEPTTL",
            "set key 1 KEEPTTL"
        ]
    );
}

// ---------------------------------------------------------------------------
// unit/type/list.tcl
// ---------------------------------------------------------------------------

/// "SWAPDB wants to wake blocked client, but the key already expired".
#[test]
fn swapdb_meeting_an_expired_key_for_a_blocked_client_propagates_its_del() {
    let Some(l) = same_stream_on_both(&[], |p| {
        let mut c = p.connect();
        run(
            &mut c,
            &[
                &["FLUSHALL"],
                &["DEBUG", "SET-ACTIVE-EXPIRE", "0"],
                &["SELECT", "1"],
                &["RPUSH", "k", "hello"],
                &["PEXPIRE", "k", "100"],
            ],
        );
        let mut rd = p.connect();
        rd.must(&["SELECT", "9"]);
        let id = text(&rd.must(&["CLIENT", "ID"]))[1..].trim().to_string();
        rd.send_cmd(&["BRPOP", "k", "1"]).unwrap();
        wait_blocked(&mut c, 1);
        std::thread::sleep(Duration::from_millis(110));
        c.must(&["SWAPDB", "1", "9"]);
        let list = text(&c.must(&["CLIENT", "LIST", "ID", &id]));
        assert!(list.contains("flags=b"), "{list}");
        c.must(&["CLIENT", "UNBLOCK", &id]);
        assert_eq!(rd.read_reply().unwrap(), b"*-1\r\n");
        c.must(&["DEBUG", "SET-ACTIVE-EXPIRE", "1"]);
    }) else {
        return;
    };
    assert_eq!(
        lines(&l),
        [
            "select 0",
            "flushall",
            "select 1",
            "rpush k hello",
            "pexpireat k <ms>",
            "swapdb 1 9",
            "select 9",
            "del k"
        ]
    );
}

/// "MULTI + LPUSH + EXPIRE + DEBUG SLEEP on blocked client, key already
/// expired".
#[test]
fn exec_that_lets_a_key_expire_for_a_blocked_client_propagates_del_after_exec() {
    let Some(l) = same_stream_on_both(&[], |p| {
        let mut c = p.connect();
        run(
            &mut c,
            &[&["FLUSHALL"], &["DEBUG", "SET-ACTIVE-EXPIRE", "0"]],
        );
        let mut rd = p.connect();
        let id = text(&rd.must(&["CLIENT", "ID"]))[1..].trim().to_string();
        rd.send_cmd(&["BRPOP", "k", "0"]).unwrap();
        wait_blocked(&mut c, 1);
        run(
            &mut c,
            &[
                &["MULTI"],
                &["RPUSH", "k", "hello"],
                &["PEXPIRE", "k", "100"],
                &["DEBUG", "SLEEP", "0.2"],
                &["EXEC"],
            ],
        );
        let list = text(&c.must(&["CLIENT", "LIST", "ID", &id]));
        assert!(list.contains("flags=b"), "{list}");
        c.must(&["CLIENT", "UNBLOCK", &id]);
        assert_eq!(rd.read_reply().unwrap(), b"*-1\r\n");
        c.must(&["DEBUG", "SET-ACTIVE-EXPIRE", "1"]);
    }) else {
        return;
    };
    assert_eq!(
        lines(&l),
        [
            "select 0",
            "flushall",
            "multi",
            "rpush k hello",
            "pexpireat k <ms>",
            "exec",
            "del k"
        ]
    );
}

/// "BLMPOP propagate as pop with count command to replica".
#[test]
fn blmpop_propagates_as_pop_with_count() {
    let Some(l) = same_stream_on_both(&[], |p| {
        let mut c = p.connect();
        run(
            &mut c,
            &[
                &["LPUSH", "mylist", "a", "b", "c"],
                &["RPUSH", "mylist2", "1", "2", "3"],
                &["BLMPOP", "0", "1", "mylist", "LEFT", "COUNT", "1"],
                &[
                    "BLMPOP", "0", "2", "mylist", "mylist2", "RIGHT", "COUNT", "10",
                ],
                &[
                    "BLMPOP", "0", "2", "mylist", "mylist2", "RIGHT", "COUNT", "10",
                ],
            ],
        );
        let mut rd = p.connect();
        let blocked: [(&[&str], &[&str]); 3] = [
            (
                &["BLMPOP", "0", "1", "mylist", "LEFT", "COUNT", "1"],
                &["LPUSH", "mylist", "a"],
            ),
            (
                &[
                    "BLMPOP", "0", "2", "mylist", "mylist2", "LEFT", "COUNT", "5",
                ],
                &["LPUSH", "mylist", "a", "b", "c"],
            ),
            (
                &[
                    "BLMPOP", "0", "2", "mylist", "mylist2", "RIGHT", "COUNT", "10",
                ],
                &["RPUSH", "mylist2", "a", "b", "c"],
            ),
        ];
        for (pop, push) in blocked {
            rd.send_cmd(pop).unwrap();
            wait_blocked(&mut c, 1);
            c.must(push);
            rd.read_reply().unwrap();
        }
        let r = c.must(&["BLMPOP", "0.01", "1", "mylist", "LEFT", "COUNT", "10"]);
        assert_eq!(r, b"*-1\r\n");
    }) else {
        return;
    };
    assert_eq!(
        lines(&l),
        [
            "select 0",
            "lpush mylist a b c",
            "rpush mylist2 1 2 3",
            "lpop mylist 1",
            "rpop mylist 2",
            "rpop mylist2 3",
            "lpush mylist a",
            "lpop mylist 1",
            "lpush mylist a b c",
            "lpop mylist 3",
            "rpush mylist2 a b c",
            "rpop mylist2 3"
        ]
    );
}

/// "LMPOP propagate as pop with count command to replica".
#[test]
fn lmpop_propagates_as_pop_with_count() {
    let Some(l) = multi_stream(&[
        &["LPUSH", "mylist", "a", "b", "c"],
        &["LMPOP", "1", "mylist", "LEFT", "COUNT", "1"],
        &["LMPOP", "1", "mylist", "RIGHT", "COUNT", "1"],
        &["LMPOP", "2", "mylist", "mylist2", "LEFT", "COUNT", "10"],
        &["LMPOP", "2", "mylist", "mylist2", "LEFT", "COUNT", "10"],
        &["RPUSH", "mylist2", "1", "2", "3"],
        &["LMPOP", "2", "mylist", "mylist2", "LEFT", "COUNT", "2"],
        &["LMPOP", "2", "mylist", "mylist2", "RIGHT", "COUNT", "1"],
    ]) else {
        return;
    };
    assert_eq!(l[2], "lpop mylist 1", "{l:#?}");
}

// ---------------------------------------------------------------------------
// unit/type/zset.tcl
// ---------------------------------------------------------------------------

/// "ZMPOP propagate as pop with count command to replica".
#[test]
fn zmpop_propagates_as_zpop_with_count() {
    let Some(l) = multi_stream(&[
        &["ZADD", "myzset", "1", "one", "2", "two", "3", "three"],
        &["ZMPOP", "1", "myzset", "MIN"],
        &["ZMPOP", "1", "myzset", "MAX", "COUNT", "1"],
        &["ZMPOP", "2", "myzset", "myzset2", "MIN", "COUNT", "10"],
        &["ZMPOP", "2", "myzset", "myzset2", "MAX", "COUNT", "10"],
        &["ZADD", "myzset2", "1", "one", "2", "two", "3", "three"],
        &["ZMPOP", "2", "myzset", "myzset2", "MIN", "COUNT", "2"],
        &["ZMPOP", "2", "myzset", "myzset2", "MAX", "COUNT", "1"],
    ]) else {
        return;
    };
    assert_eq!(l[2], "zpopmin myzset 1", "{l:#?}");
}

/// "BZMPOP propagate as pop with count command to replica".
#[test]
fn bzmpop_propagates_as_zpop_with_count() {
    let Some(l) = same_stream_on_both(&[], |p| {
        let mut c = p.connect();
        run(
            &mut c,
            &[
                &["ZADD", "myzset", "1", "one", "2", "two", "3", "three"],
                &["ZADD", "myzset2", "4", "four", "5", "five", "6", "six"],
                &["BZMPOP", "0", "1", "myzset", "MIN"],
                &[
                    "BZMPOP", "0", "2", "myzset", "myzset2", "MAX", "COUNT", "10",
                ],
                &[
                    "BZMPOP", "0", "2", "myzset", "myzset2", "MAX", "COUNT", "10",
                ],
            ],
        );
        let mut rd = p.connect();
        let blocked: [(&[&str], &[&str]); 3] = [
            (
                &["BZMPOP", "0", "1", "myzset", "MIN", "COUNT", "1"],
                &["ZADD", "myzset", "1", "one"],
            ),
            (
                &["BZMPOP", "0", "2", "myzset", "myzset2", "MIN", "COUNT", "5"],
                &["ZADD", "myzset", "1", "one", "2", "two", "3", "three"],
            ),
            (
                &[
                    "BZMPOP", "0", "2", "myzset", "myzset2", "MAX", "COUNT", "10",
                ],
                &["ZADD", "myzset2", "4", "four", "5", "five", "6", "six"],
            ),
        ];
        for (pop, push) in blocked {
            rd.send_cmd(pop).unwrap();
            wait_blocked(&mut c, 1);
            c.must(push);
            rd.read_reply().unwrap();
        }
        let r = c.must(&["BZMPOP", "0.01", "1", "myzset", "MAX", "COUNT", "10"]);
        assert_eq!(r, b"*-1\r\n");
    }) else {
        return;
    };
    assert_eq!(lines(&l)[3], "zpopmin myzset 1");
}

// ---------------------------------------------------------------------------
// unit/type/string.tcl
// ---------------------------------------------------------------------------

#[test]
fn getdel_propagates_as_del_and_getex_without_options_not_at_all() {
    let Some(l) = multi_stream(&[
        &["SET", "foo", "bar"],
        &["GETDEL", "foo"],
        &["SET", "foo", "bar"],
        &["GETEX", "foo"],
        &["DEL", "foo"],
    ]) else {
        return;
    };
    assert_eq!(
        l,
        [
            "select 0",
            "set foo bar",
            "del foo",
            "set foo bar",
            "del foo"
        ]
    );
}

// ---------------------------------------------------------------------------
// Beyond Redis's own stream tests: the other rewrites and expiry DELs
// ---------------------------------------------------------------------------

/// Blocking pops served at once or after blocking, moves, INCRBYFLOAT,
/// SET ... GET, SPOP with a count (random members blanked) and a count
/// that empties the set (DEL): each propagates as Redis rewrites it.
#[test]
fn blocking_moving_and_random_commands_propagate_rewritten() {
    let blank_members = |cmds: Vec<Vec<String>>| {
        cmds.into_iter()
            .map(|mut c| {
                if c[0].eq_ignore_ascii_case("srem") {
                    c[2..].iter_mut().for_each(|m| *m = "*".into());
                }
                c
            })
            .collect()
    };
    let Some(l) = compare_streams(
        &[],
        |p| {
            let mut c = p.connect();
            run(
                &mut c,
                &[
                    &["RPUSH", "l", "a", "b", "c", "d"],
                    &["BLPOP", "l", "0"],
                    &["BRPOP", "l", "0"],
                    &["BLMOVE", "l", "l2", "LEFT", "RIGHT", "0"],
                    &["BRPOPLPUSH", "l", "l2", "0"],
                    &["LMOVE", "l2", "l", "RIGHT", "LEFT"],
                    &["BLMOVE", "l", "l2", "left", "right", "0"],
                    &["ZADD", "z", "1", "a", "2", "b", "3", "c"],
                    &["BZPOPMIN", "z", "0"],
                    &["BZPOPMAX", "z", "0"],
                    &["ZPOPMIN", "z", "5"],
                    &["INCRBYFLOAT", "f", "1.5"],
                    &["SET", "f", "x", "GET"],
                    &["SET", "f", "y", "EX", "100", "GET"],
                    &["SADD", "s", "1", "2", "3", "4", "5"],
                    &["SPOP", "s", "2"],
                    &["SPOP", "s", "10"],
                ],
            );
            // Served after blocking: BLPOP, BRPOPLPUSH, BLMOVE (its
            // directions then propagate lowercase), BZPOPMIN.
            let mut rd = p.connect();
            let blocked: [(&[&str], &[&str]); 5] = [
                (&["BLPOP", "e", "0"], &["RPUSH", "e", "x", "y"]),
                (&["BRPOPLPUSH", "e3", "e", "0"], &["RPUSH", "e3", "w"]),
                (
                    &["BLMOVE", "e4", "e", "left", "right", "0"],
                    &["RPUSH", "e4", "v"],
                ),
                (
                    &["BLMOVE", "e2", "e", "RIGHT", "LEFT", "0"],
                    &["LPUSH", "e2", "z"],
                ),
                (&["BZPOPMIN", "ez", "0"], &["ZADD", "ez", "1", "m"]),
            ];
            for (pop, push) in blocked {
                rd.send_cmd(pop).unwrap();
                wait_blocked(&mut c, 1);
                c.must(push);
                rd.read_reply().unwrap();
            }
        },
        ReplStream::until_marker,
        blank_members,
    ) else {
        return;
    };
    let l = lines(&l);
    assert!(l.contains(&"lpop l".to_string()), "{l:#?}");
    assert!(l.contains(&"set f 1.5 KEEPTTL".to_string()), "{l:#?}");
    assert!(l.contains(&"lmove e2 e right left".to_string()), "{l:#?}");
    assert!(l.contains(&"lmove l l2 left right".to_string()), "{l:#?}");
}

/// Expired keys met inside MULTI and inside a script propagate their DEL
/// inside the transaction; the active cycle's DELs stand alone.
#[test]
fn expiry_dels_inside_exec_scripts_and_from_the_active_cycle() {
    let Some(l) = same_stream_on_both(&[], |p| {
        let mut c = p.connect();
        run(
            &mut c,
            &[
                &["DEBUG", "SET-ACTIVE-EXPIRE", "0"],
                &["SET", "k1", "v", "PX", "1"],
                &["SET", "k2", "v", "PX", "1"],
            ],
        );
        std::thread::sleep(Duration::from_millis(5));
        run(
            &mut c,
            &[
                &["MULTI"],
                &["GET", "k1"],
                &["SET", "x", "1"],
                &["EXEC"],
                &[
                    "EVAL",
                    "redis.call('get', 'k2'); redis.call('set', 'y', '1')",
                    "0",
                ],
                &["DEBUG", "SET-ACTIVE-EXPIRE", "1"],
                &["SET", "k3", "v", "PX", "1"],
            ],
        );
        common::replication::wait_until("k3 actively expired", || {
            info_field(&mut c, "stats", "expired_keys") == "3"
        });
    }) else {
        return;
    };
    assert_eq!(lines(&l).last().unwrap(), "del k3");
}

/// More rewrites and writes with side effects: HINCRBYFLOAT as HSET,
/// times already past as DEL, PFCOUNT's cache update, SORT STORE, COPY,
/// MOVE, RENAME, stream trimming and XAUTOCLAIM, FLUSHDB and SWAPDB.
#[test]
fn other_rewrites_and_side_effect_writes_propagate_as_in_redis() {
    let Some(l) = same_stream_on_both(&[], |p| {
        let mut c = p.connect();
        let past = (now_secs() - 100).to_string();
        run(
            &mut c,
            &[
                &["HSET", "h", "f", "1"],
                &["HINCRBYFLOAT", "h", "f", "0.5"],
                &["SET", "a", "1"],
                &["EXPIRE", "a", "-1"],
                &["SET", "a", "1"],
                &["PEXPIRE", "a", "0"],
                &["SET", "a", "1", "EXAT", &past],
                &["SET", "b", "1"],
                &["GETEX", "b", "PX", "5000"],
                &["SET", "b", "2", "KEEPTTL"],
                &["SET", "b", "3", "NX", "GET"],
                &["PFADD", "hll", "x", "y"],
                &["PFCOUNT", "hll"],
                &["PFCOUNT", "hll"],
                &["RPUSH", "nums", "3", "1", "2"],
                &["SORT", "nums", "STORE", "sorted"],
                &["COPY", "sorted", "copied"],
                &["MOVE", "copied", "2"],
                &["RENAME", "sorted", "renamed"],
                &["XADD", "st", "MAXLEN", "~", "2", "1-1", "f", "v"],
                &["XADD", "st", "MAXLEN", "1", "1-2", "f", "v"],
                &["XADD", "st", "1-3", "f", "v"],
                &["XTRIM", "st", "MINID", "1-3"],
                &["XGROUP", "CREATE", "st", "g", "0"],
                &["XREADGROUP", "GROUP", "g", "c1", "STREAMS", "st", ">"],
                &["XAUTOCLAIM", "st", "g", "c2", "0", "0"],
                &["XACK", "st", "g", "1-3"],
                &["SWAPDB", "0", "1"],
                &["FLUSHDB"],
                &["INCRBY", "n", "5"],
                &["DECRBY", "n", "2"],
                &["SETRANGE", "n", "5", "x"],
                &["APPEND", "n", "y"],
            ],
        );
    }) else {
        return;
    };
    let l = lines(&l);
    assert!(l.contains(&"hset h f 1.5".to_string()), "{l:#?}");
    assert!(l.contains(&"del a".to_string()), "{l:#?}");
}

/// Scripts and functions writing several times (one MULTI/EXEC), EVAL
/// inside MULTI, an EXEC with a failing command, a WATCH-aborted EXEC,
/// SELECT inside a script, all with the lazyfree switches on (deletions
/// as UNLINK).
#[test]
fn scripts_functions_and_transactions_with_lazyfree_on() {
    let lazy = [
        "--lazyfree-lazy-expire",
        "yes",
        "--lazyfree-lazy-user-del",
        "yes",
    ];
    let Some(l) = same_stream_on_both(&lazy, |p| {
        let mut c = p.connect();
        let lib = "#!lua name=lib\nredis.register_function('two', function(keys, args) \
                   redis.call('set', keys[1], args[1]); redis.call('incr', keys[2]) end)";
        run(
            &mut c,
            &[
                &["FUNCTION", "LOAD", lib],
                &["FCALL", "two", "2", "fa", "fb", "v"],
                &["EVAL", "redis.call('select', 3); redis.call('set', 'x', 1); redis.call('select', 0); redis.call('set', 'y', 2)", "0"],
                &["MULTI"],
                &["EVAL", "redis.call('set', 'm1', 1); redis.call('set', 'm2', 2)", "0"],
                &["SET", "m3", "3"],
                &["EXEC"],
                &["SET", "str", "v"],
                &["MULTI"],
                &["INCR", "str"],
                &["SET", "after-error", "1"],
                &["EXEC"],
                &["GETDEL", "after-error"],
                &["DEBUG", "SET-ACTIVE-EXPIRE", "0"],
                &["SET", "gone", "v", "PX", "1"],
            ],
        );
        std::thread::sleep(Duration::from_millis(5));
        run(
            &mut c,
            &[
                &[
                    "EVAL",
                    "redis.call('get', 'gone'); redis.call('set', 'z', 1)",
                    "0",
                ],
                &["WATCH", "w"],
            ],
        );
        p.connect().must(&["SET", "w", "1"]);
        run(&mut c, &[&["MULTI"], &["SET", "never", "1"], &["EXEC"]]);
        c.must(&["DEBUG", "SET-ACTIVE-EXPIRE", "1"]);
    }) else {
        return;
    };
    let l = lines(&l);
    assert!(l.contains(&"unlink after-error".to_string()), "{l:#?}");
    assert!(!l.iter().any(|c| c.contains("never")), "{l:#?}");
}
