//! Blocking XREAD / XREADGROUP across connections, compared with a real
//! redis-server 7.0.15: each scenario runs on redis-lite and then on Redis
//! (`run_on_both`), collecting every reply of every connection in order,
//! and the two transcripts must be equal. What they protect: a reader is
//! parked without blocking the loop, served by XADD with just the new
//! entries of the key that got them, keeps its place when the data is not
//! for it, times out with a null, is unblocked with Redis 7.0's errors when
//! its group or key goes away (XGROUP DESTROY, DEL, SET, FLUSHALL, SWAPDB,
//! RENAME), answers as non-blocking inside MULTI and scripts, and is
//! counted once in the command statistics.

mod common;

use common::{run_on_both, Conn, Process};
use std::time::{Duration, Instant};

fn blocked_clients(c: &mut Conn) -> usize {
    let reply = c.must(&["INFO", "clients"]);
    String::from_utf8_lossy(&reply)
        .lines()
        .find_map(|l| l.strip_prefix("blocked_clients:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("blocked_clients in INFO clients")
}

/// Wait (bounded) until `n` clients are blocked, so the order in which
/// readers block is the test's and not the scheduler's.
fn wait_blocked(c: &mut Conn, n: usize) {
    let start = Instant::now();
    while blocked_clients(c) != n {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "clients never blocked"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// The replies, as text, for comparing transcripts.
fn s(reply: Vec<u8>) -> String {
    String::from_utf8_lossy(&reply).into_owned()
}

/// `cmdstat_<name>:calls=N` from INFO commandstats (0 if absent).
fn calls(c: &mut Conn, name: &str) -> u64 {
    let reply = c.must(&["INFO", "commandstats"]);
    let prefix = format!("cmdstat_{name}:calls=");
    String::from_utf8_lossy(&reply)
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .and_then(|rest| rest.split(',').next()?.parse().ok())
        .unwrap_or(0)
}

#[test]
fn xread_block_is_served_by_xadd_with_only_the_new_key() {
    run_on_both(|srv: &Process| {
        let mut reader = srv.connect();
        let mut writer = srv.connect();
        let mut out = Vec::new();
        writer.must(&["XADD", "a", "1-0", "f", "old"]);
        reader
            .send_cmd(&["XREAD", "BLOCK", "0", "STREAMS", "a", "b", "$", "$"])
            .unwrap();
        wait_blocked(&mut writer, 1);
        // The loop is free meanwhile.
        out.push(s(writer.must(&["PING"])));
        // Two keys get data in one transaction: the reader is served the
        // first key that became ready, alone.
        writer.must(&["MULTI"]);
        writer.must(&["XADD", "b", "5-0", "f", "b1"]);
        writer.must(&["XADD", "a", "2-0", "f", "a1"]);
        out.push(s(writer.must(&["EXEC"])));
        out.push(s(reader.read_reply().unwrap()));
        out.push(blocked_clients(&mut writer).to_string());
        // Blocked and served: counted as one call.
        out.push(calls(&mut writer, "xread").to_string());
        out
    });
}

#[test]
fn xread_block_waits_for_an_id_above_its_own() {
    run_on_both(|srv: &Process| {
        let mut reader = srv.connect();
        let mut writer = srv.connect();
        let mut out = Vec::new();
        writer.must(&["XADD", "s", "5-0", "f", "v"]);
        reader
            .send_cmd(&["XREAD", "COUNT", "1", "BLOCK", "0", "STREAMS", "s", "7-0"])
            .unwrap();
        wait_blocked(&mut writer, 1);
        // 6-0 is not above 7-0: the reader keeps waiting.
        writer.must(&["XADD", "s", "6-0", "f", "v"]);
        writer.must(&["XADD", "s", "6-5", "f", "v"]);
        out.push(blocked_clients(&mut writer).to_string());
        // Deleting the key does not wake a plain XREAD either.
        writer.must(&["DEL", "s"]);
        out.push(blocked_clients(&mut writer).to_string());
        // COUNT 1 is kept for the served reply.
        writer.must(&["XADD", "s", "8-0", "f", "x"]);
        out.push(s(reader.read_reply().unwrap()));
        // `$` on a missing key reads from 0-0.
        reader
            .send_cmd(&["XREAD", "BLOCK", "0", "STREAMS", "nokey", "$"])
            .unwrap();
        wait_blocked(&mut writer, 1);
        writer.must(&["XADD", "nokey", "1-1", "k", "v"]);
        out.push(s(reader.read_reply().unwrap()));
        out
    });
}

#[test]
fn xread_block_times_out_with_a_null_and_pipelined_commands_wait() {
    run_on_both(|srv: &Process| {
        let mut reader = srv.connect();
        let mut other = srv.connect();
        let mut out = Vec::new();
        let start = Instant::now();
        let mut pipeline = common::encode_command(&["XREAD", "BLOCK", "200", "STREAMS", "s", "$"]);
        pipeline.extend(common::encode_command(&["PING"]));
        reader.send(&pipeline).unwrap();
        wait_blocked(&mut other, 1);
        assert!(
            reader.read_reply_within(Duration::from_millis(50)).is_err(),
            "the reply came before the time-out"
        );
        out.push(s(reader.read_reply().unwrap()));
        assert!(start.elapsed() >= Duration::from_millis(195));
        out.push(s(reader.read_reply().unwrap()));
        // RESP3: the time-out is a null.
        reader.must(&["HELLO", "3"]);
        out.push(s(reader
            .cmd(&["XREAD", "BLOCK", "50", "STREAMS", "s", "$"])
            .unwrap()));
        out.push(calls(&mut other, "xread").to_string());
        out
    });
}

#[test]
fn xread_block_served_in_resp3_is_a_map() {
    run_on_both(|srv: &Process| {
        let mut reader = srv.connect();
        let mut writer = srv.connect();
        reader.must(&["HELLO", "3"]);
        reader
            .send_cmd(&["XREAD", "BLOCK", "0", "STREAMS", "s", "$"])
            .unwrap();
        wait_blocked(&mut writer, 1);
        writer.must(&["XADD", "s", "1-0", "f", "v"]);
        vec![s(reader.read_reply().unwrap())]
    });
}

#[test]
fn xreadgroup_block_consumers_take_turns() {
    run_on_both(|srv: &Process| {
        let mut alice = srv.connect();
        let mut bob = srv.connect();
        let mut writer = srv.connect();
        let mut out = Vec::new();
        writer.must(&["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]);
        for (conn, name) in [(&mut alice, "alice"), (&mut bob, "bob")] {
            conn.send_cmd(&[
                "XREADGROUP",
                "GROUP",
                "g",
                name,
                "BLOCK",
                "0",
                "STREAMS",
                "s",
                ">",
            ])
            .unwrap();
        }
        wait_blocked(&mut writer, 2);
        // One entry: the first reader takes it, the group's last ID moves,
        // and the second has nothing new: it stays blocked.
        writer.must(&["XADD", "s", "1-0", "f", "v1"]);
        out.push(s(alice.read_reply().unwrap()));
        out.push(blocked_clients(&mut writer).to_string());
        writer.must(&["XADD", "s", "2-0", "f", "v2"]);
        out.push(s(bob.read_reply().unwrap()));
        out.push(s(writer.must(&["XPENDING", "s", "g"])));
        out.push(s(writer.must(&["XINFO", "GROUPS", "s"])));
        // NOACK: delivered without a NACK.
        alice
            .send_cmd(&[
                "XREADGROUP",
                "GROUP",
                "g",
                "alice",
                "NOACK",
                "BLOCK",
                "0",
                "STREAMS",
                "s",
                ">",
            ])
            .unwrap();
        wait_blocked(&mut writer, 1);
        writer.must(&["XADD", "s", "3-0", "f", "v3"]);
        out.push(s(alice.read_reply().unwrap()));
        out.push(s(writer.must(&["XPENDING", "s", "g"])));
        // A consumer first seen by a served XREADGROUP is created then.
        bob.send_cmd(&[
            "XREADGROUP",
            "GROUP",
            "g",
            "carol",
            "COUNT",
            "5",
            "BLOCK",
            "0",
            "STREAMS",
            "s",
            ">",
        ])
        .unwrap();
        wait_blocked(&mut writer, 1);
        writer.must(&["XADD", "s", "4-0", "f", "v4"]);
        out.push(s(bob.read_reply().unwrap()));
        out.push(s(writer.must(&["XINFO", "GROUPS", "s"])));
        out.push(calls(&mut writer, "xreadgroup").to_string());
        out
    });
}

#[test]
fn xreadgroup_block_gets_errors_when_group_or_key_goes_away() {
    run_on_both(|srv: &Process| {
        let mut reader = srv.connect();
        let mut writer = srv.connect();
        let mut out = Vec::new();
        let block = [
            "XREADGROUP",
            "GROUP",
            "g",
            "c",
            "BLOCK",
            "0",
            "STREAMS",
            "s",
            ">",
        ];
        let setup = |w: &mut Conn| {
            w.must(&["DEL", "s"]);
            w.must(&["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]);
        };
        let steps: [&[&str]; 5] = [
            &["XGROUP", "DESTROY", "s", "g"],
            &["DEL", "s"],
            &["SET", "s", "x"],
            &["FLUSHALL"],
            &["RENAME", "s", "s2"],
        ];
        for step in steps {
            setup(&mut writer);
            reader.send_cmd(&block).unwrap();
            wait_blocked(&mut writer, 1);
            out.push(s(writer.must(step)));
            out.push(s(reader.read_reply().unwrap()));
        }
        // SWAPDB: the stream leaves db 0 under the reader's feet.
        setup(&mut writer);
        reader.send_cmd(&block).unwrap();
        wait_blocked(&mut writer, 1);
        out.push(s(writer.must(&["SWAPDB", "0", "1"])));
        out.push(s(reader.read_reply().unwrap()));
        // SWAPDB where the other db holds a list under the same name.
        writer.must(&["FLUSHALL"]);
        setup(&mut writer);
        writer.must(&["SELECT", "1"]);
        writer.must(&["LPUSH", "s", "e1"]);
        writer.must(&["SELECT", "0"]);
        reader.send_cmd(&block).unwrap();
        wait_blocked(&mut writer, 1);
        out.push(s(writer.must(&["SWAPDB", "0", "1"])));
        out.push(s(reader.read_reply().unwrap()));
        // ...and where it holds a stream with the group: still blocked.
        writer.must(&["FLUSHALL"]);
        setup(&mut writer);
        writer.must(&["SELECT", "1"]);
        writer.must(&["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]);
        writer.must(&["SELECT", "0"]);
        reader.send_cmd(&block).unwrap();
        wait_blocked(&mut writer, 1);
        out.push(s(writer.must(&["SWAPDB", "0", "1"])));
        out.push(blocked_clients(&mut writer).to_string());
        writer.must(&["XADD", "s", "9-0", "f", "v"]);
        out.push(s(reader.read_reply().unwrap()));
        writer.must(&["FLUSHALL"]);
        // A plain XREAD on the same key is not woken by a DEL.
        writer.must(&["FLUSHALL"]);
        writer.must(&["XADD", "s", "1-0", "f", "v"]);
        reader
            .send_cmd(&["XREAD", "BLOCK", "0", "STREAMS", "s", "$"])
            .unwrap();
        wait_blocked(&mut writer, 1);
        writer.must(&["DEL", "s"]);
        out.push(blocked_clients(&mut writer).to_string());
        writer.must(&["XADD", "s", "2-0", "f", "v"]);
        out.push(s(reader.read_reply().unwrap()));
        out.push(calls(&mut writer, "xreadgroup").to_string());
        out
    });
}

#[test]
fn blocked_stream_readers_and_client_unblock() {
    run_on_both(|srv: &Process| {
        let mut reader = srv.connect();
        let mut admin = srv.connect();
        let mut out = Vec::new();
        let id = s(reader.must(&["CLIENT", "ID"]));
        let id = id.trim_start_matches(':').trim().to_string();
        reader
            .send_cmd(&["XREAD", "BLOCK", "0", "STREAMS", "s", "$"])
            .unwrap();
        wait_blocked(&mut admin, 1);
        out.push(s(admin.must(&["CLIENT", "UNBLOCK", &id])));
        out.push(s(reader.read_reply().unwrap()));
        admin.must(&["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]);
        reader
            .send_cmd(&[
                "XREADGROUP",
                "GROUP",
                "g",
                "c",
                "BLOCK",
                "0",
                "STREAMS",
                "s",
                ">",
            ])
            .unwrap();
        wait_blocked(&mut admin, 1);
        out.push(s(admin.must(&["CLIENT", "UNBLOCK", &id, "ERROR"])));
        out.push(s(reader.read_reply().unwrap()));
        out.push(s(admin.must(&["CLIENT", "UNBLOCK", &id])));
        // A disconnected reader is forgotten; XADD still works.
        reader
            .send_cmd(&["XREAD", "BLOCK", "0", "STREAMS", "s", "$"])
            .unwrap();
        wait_blocked(&mut admin, 1);
        reader.shutdown();
        drop(reader);
        wait_blocked(&mut admin, 0);
        out.push(s(admin.must(&["XADD", "s", "1-0", "f", "v"])));
        out
    });
}

#[test]
fn xreadgroup_served_synchronously_when_group_is_behind() {
    run_on_both(|srv: &Process| {
        let mut c = srv.connect();
        let mut out = Vec::new();
        c.must(&["XADD", "s", "1-0", "f", "v"]);
        c.must(&["XGROUP", "CREATE", "s", "g", "0"]);
        // Data is there: BLOCK is not used at all.
        out.push(s(c
            .cmd(&[
                "XREADGROUP",
                "GROUP",
                "g",
                "c",
                "BLOCK",
                "0",
                "STREAMS",
                "s",
                ">",
            ])
            .unwrap()));
        // History (an explicit ID) never blocks, even when empty.
        out.push(s(c
            .cmd(&[
                "XREADGROUP",
                "GROUP",
                "g",
                "c",
                "BLOCK",
                "0",
                "STREAMS",
                "s",
                "5",
            ])
            .unwrap()));
        // Only tombstones after the group's ID: it blocks (and times out).
        c.must(&["XADD", "s", "2-0", "f", "v"]);
        c.must(&["XDEL", "s", "2-0"]);
        out.push(s(c
            .cmd(&[
                "XREADGROUP",
                "GROUP",
                "g",
                "c",
                "BLOCK",
                "20",
                "STREAMS",
                "s",
                ">",
            ])
            .unwrap()));
        out
    });
}
