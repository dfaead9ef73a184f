//! ACL and authentication over TCP (server/src/acl.rs): what the
//! differential case file `cases/acl.txt` cannot show on one connection.
//!
//! - users from `user` lines of a config file and from an `aclfile`, ACL
//!   SAVE / ACL LOAD round trips, and the start-up errors of bad ones;
//! - connections of a deleted user are closed; a subscriber whose channel
//!   permission is revoked is disconnected, one that keeps it is not;
//! - CLIENT LIST `user=` and CLIENT KILL USER;
//! - ACL LOG entries (reason, context, object, username) for top-level,
//!   MULTI, Lua and AUTH denials, grouping and `acllog-max-len`;
//! - `requirepass` is the default user's password (CONFIG SET updates it,
//!   new connections need AUTH), `acl-pubsub-default`.
//!
//! Where redis-server is installed, the scenarios that print replies run on
//! both servers and must agree.

mod common;

use common::{run_on_both, temp_path, Server};
use std::process::Command;
use std::time::Duration;

fn s(r: &[u8]) -> String {
    String::from_utf8_lossy(r).into_owned()
}

/// The fields of one ACL LOG entry (RESP2 flat array) as name -> value.
fn log_entry_field(reply: &[u8], field: &str) -> String {
    let text = s(reply);
    let lines: Vec<&str> = text.split("\r\n").collect();
    for (i, l) in lines.iter().enumerate() {
        if *l == field {
            // "$n" then the value, or ":n".
            let next = lines[i + 1];
            return if let Some(n) = next.strip_prefix(':') {
                n.to_string()
            } else {
                lines[i + 2].to_string()
            };
        }
    }
    panic!("no field {field} in {text}");
}

#[test]
fn user_lines_of_the_config_file_create_users() {
    let conf = temp_path("acl-conf");
    std::fs::write(
        &conf,
        "user alice on >alicepw ~cached:* +get\nuser bob off nopass\n",
    )
    .unwrap();
    let srv = Server::start_with(&["--include", conf.to_str().unwrap()]);
    let mut c = srv.connect();
    let lines = [
        "user alice on #6624974ea2baffac164422e4490376c1c31313cd97724ae8ce62fb3f0a0370f2 ~cached:* resetchannels -@all +get",
        "user bob off nopass resetchannels -@all",
        "user default on nopass ~* &* +@all",
    ];
    let mut want = format!("*{}\r\n", lines.len());
    for l in lines {
        want.push_str(&format!("${}\r\n{l}\r\n", l.len()));
    }
    assert_eq!(s(&c.must(&["ACL", "LIST"])), want);
    assert_eq!(c.must(&["AUTH", "alice", "alicepw"]), b"+OK\r\n");
    assert_eq!(c.must(&["GET", "cached:1"]), b"$-1\r\n");
    assert_eq!(
        s(&c.must(&["GET", "other"])),
        "-NOPERM this user has no permissions to access one of the keys used as arguments\r\n"
    );
    // bob is off: no password opens it.
    assert_eq!(
        s(&c.must(&["AUTH", "bob", "x"])),
        "-WRONGPASS invalid username-password pair or user is disabled.\r\n"
    );
    let _ = std::fs::remove_file(conf);
}

/// Run the binary with arguments, expecting it to refuse to start; returns
/// what it printed.
fn failed_start(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_redis-lite"))
        .args(["--port", &common::free_port().to_string(), "--save", ""])
        .args(args)
        .output()
        .expect("run redis-lite");
    assert!(!out.status.success(), "started although it should not");
    format!("{}{}", s(&out.stdout), s(&out.stderr))
}

#[test]
fn bad_user_lines_and_aclfiles_stop_the_start() {
    let out = failed_start(&["--user", "carol", "on", "%X~x"]);
    assert!(
        out.contains("Error in user declaration") && out.contains("Syntax error"),
        "{out}"
    );
    let acl = temp_path("bad-aclfile");
    std::fs::write(&acl, "user dave on +nosuchcommand\nnotauser x\n").unwrap();
    let out = failed_start(&["--aclfile", acl.to_str().unwrap()]);
    assert!(
        out.contains("Aborting Redis startup because of ACL errors"),
        "{out}"
    );
    assert!(out.contains("should start with user keyword"), "{out}");
    assert!(
        out.contains("Error in applying operation '+nosuchcommand'"),
        "{out}"
    );
    // user lines and an aclfile together are refused.
    std::fs::write(&acl, "user dave on\n").unwrap();
    let out = failed_start(&["--aclfile", acl.to_str().unwrap(), "--user", "x", "on"]);
    assert!(out.contains("define either an ACL file"), "{out}");
    let _ = std::fs::remove_file(acl);
}

#[test]
fn acl_save_and_load_round_trip_through_the_aclfile() {
    let acl = temp_path("aclfile");
    std::fs::write(&acl, "user default on nopass ~* &* +@all\n").unwrap();
    let srv = Server::start_with(&["--aclfile", acl.to_str().unwrap()]);
    let mut c = srv.connect();
    c.must(&[
        "ACL",
        "SETUSER",
        "eve",
        "on",
        ">pw",
        "+@read",
        "~r:*",
        "(+set ~w:*)",
    ]);
    let before = c.must(&["ACL", "LIST"]);
    assert_eq!(c.must(&["ACL", "SAVE"]), b"+OK\r\n");
    let saved = std::fs::read_to_string(&acl).unwrap();
    assert!(
        saved.contains("user eve on #") && saved.contains("(~w:* resetchannels -@all +set)"),
        "{saved}"
    );
    // A connection authenticated as eve is closed by ACL LOAD (its user
    // object is replaced), the caller's default connection is not.
    let mut e = srv.connect();
    assert_eq!(e.must(&["AUTH", "eve", "pw"]), b"+OK\r\n");
    c.must(&["ACL", "DELUSER", "eve"]);
    assert!(
        e.closed_within(Duration::from_secs(5)),
        "deleted user's client kept"
    );
    assert_eq!(c.must(&["ACL", "LOAD"]), b"+OK\r\n");
    assert_eq!(c.must(&["ACL", "LIST"]), before);
    // A broken file changes nothing and says why.
    std::fs::write(&acl, "user frank on +nosuch\n").unwrap();
    let err = s(&c.must(&["ACL", "LOAD"]));
    assert!(
        err.starts_with("-ERR ") && err.contains("no change to the previously active ACL rules"),
        "{err}"
    );
    assert_eq!(c.must(&["ACL", "LIST"]), before);
    let _ = std::fs::remove_file(acl);
}

#[test]
fn clients_of_a_deleted_user_are_closed_and_client_kill_user() {
    let srv = Server::start();
    let mut admin = srv.connect();
    admin.must(&["ACL", "SETUSER", "gina", "on", "nopass", "+@all", "~*"]);
    let mut g1 = srv.connect();
    let mut g2 = srv.connect();
    g1.must(&["AUTH", "gina", "x"]);
    g2.must(&["AUTH", "gina", "x"]);
    let list = s(&admin.must(&["CLIENT", "LIST"]));
    assert_eq!(list.matches(" user=gina ").count(), 2, "{list}");
    assert_eq!(list.matches(" user=default ").count(), 1, "{list}");
    assert_eq!(
        s(&admin.must(&["CLIENT", "KILL", "USER", "nosuch"])),
        "-ERR No such user 'nosuch'\r\n"
    );
    assert_eq!(admin.must(&["CLIENT", "KILL", "USER", "gina"]), b":2\r\n");
    assert!(g1.closed_within(Duration::from_secs(5)));
    assert!(g2.closed_within(Duration::from_secs(5)));
    let mut g3 = srv.connect();
    g3.must(&["AUTH", "gina", "x"]);
    assert_eq!(admin.must(&["ACL", "DELUSER", "gina"]), b":1\r\n");
    assert!(g3.closed_within(Duration::from_secs(5)));
    // The caller itself, deleting its own user, gets its reply first.
    let mut h = srv.connect();
    admin.must(&["ACL", "SETUSER", "hank", "on", "nopass", "+@all"]);
    h.must(&["AUTH", "hank", "x"]);
    assert_eq!(h.must(&["ACL", "DELUSER", "hank"]), b":1\r\n");
    assert!(h.closed_within(Duration::from_secs(5)));
}

#[test]
fn subscribers_lose_their_connection_with_their_channels() {
    run_on_both(|srv| {
        let mut admin = srv.connect();
        admin.must(&[
            "ACL",
            "SETUSER",
            "ps",
            "on",
            "nopass",
            "+@all",
            "resetchannels",
            "&news",
            "&sport*",
        ]);
        let mut keep = srv.connect();
        keep.must(&["AUTH", "ps", "x"]);
        let sub = s(&keep.must(&["SUBSCRIBE", "news"]));
        let mut gone = srv.connect();
        gone.must(&["AUTH", "ps", "x"]);
        gone.must(&["PSUBSCRIBE", "sport*"]);
        // Denied channel: NOPERM, connection kept.
        let denied = s(&gone.must(&["SUBSCRIBE", "weather"]));
        // Losing &sport* closes the pattern subscriber only.
        admin.must(&["ACL", "SETUSER", "ps", "resetchannels", "&news"]);
        let gone_closed = gone.closed_within(Duration::from_secs(5));
        let published = s(&admin.must(&["PUBLISH", "news", "hi"]));
        let msg = s(&keep.read_reply().expect("message"));
        (sub, denied, gone_closed, published, msg)
    });
}

#[test]
fn acl_log_records_denials_with_reason_and_context() {
    let srv = Server::start();
    let mut admin = srv.connect();
    admin.must(&[
        "ACL",
        "SETUSER",
        "ivy",
        "on",
        ">pw",
        "+@all",
        "-flushall",
        "~ok*",
        "resetchannels",
        "&c",
    ]);
    let mut c = srv.connect();
    c.must(&["AUTH", "ivy", "pw"]);
    c.must(&["FLUSHALL"]);
    let e = admin.must(&["ACL", "LOG", "1"]);
    assert_eq!(log_entry_field(&e, "reason"), "command");
    assert_eq!(log_entry_field(&e, "context"), "toplevel");
    assert_eq!(log_entry_field(&e, "object"), "flushall");
    assert_eq!(log_entry_field(&e, "username"), "ivy");
    assert!(log_entry_field(&e, "client-info").contains("user=ivy"));
    // The same denial again bumps the count.
    c.must(&["FLUSHALL"]);
    let e = admin.must(&["ACL", "LOG", "1"]);
    assert_eq!(log_entry_field(&e, "count"), "2");

    c.must(&["MULTI"]);
    c.must(&["GET", "nokey"]);
    c.must(&["DISCARD"]);
    let e = admin.must(&["ACL", "LOG", "1"]);
    assert_eq!(log_entry_field(&e, "reason"), "key");
    assert_eq!(log_entry_field(&e, "context"), "multi");
    assert_eq!(log_entry_field(&e, "object"), "nokey");

    let r = s(&c.must(&["EVAL", "return redis.call('publish', 'x', 'm')", "0"]));
    assert!(
        r.contains("The user executing the script can't publish to the channel"),
        "{r}"
    );
    let e = admin.must(&["ACL", "LOG", "1"]);
    assert_eq!(log_entry_field(&e, "reason"), "channel");
    assert_eq!(log_entry_field(&e, "context"), "lua");
    assert_eq!(log_entry_field(&e, "object"), "x");
    // The script's caller is logged, running EVAL.
    assert!(log_entry_field(&e, "client-info").contains("cmd=eval"));

    c.must(&["AUTH", "ivy", "wrong"]);
    let e = admin.must(&["ACL", "LOG", "1"]);
    assert_eq!(log_entry_field(&e, "reason"), "auth");
    assert_eq!(log_entry_field(&e, "object"), "AUTH");
    assert_eq!(log_entry_field(&e, "username"), "ivy");

    // acllog-max-len trims the oldest entries.
    admin.must(&["CONFIG", "SET", "acllog-max-len", "2"]);
    c.must(&["GET", "nokey2"]);
    assert_eq!(s(&admin.must(&["ACL", "LOG"])).matches("count").count(), 2);
    assert_eq!(admin.must(&["ACL", "LOG", "RESET"]), b"+OK\r\n");
    assert_eq!(admin.must(&["ACL", "LOG"]), b"*0\r\n");
}

#[test]
fn requirepass_is_the_default_users_password() {
    run_on_both(|srv| {
        let mut admin = srv.connect();
        let set = s(&admin.must(&["CONFIG", "SET", "requirepass", "s3cret"]));
        let user = s(&admin.must(&["ACL", "GETUSER", "default"]));
        // The connection that set it stays authenticated; new ones are not.
        let still = s(&admin.must(&["PING"]));
        let mut c = srv.connect();
        let noauth = s(&c.must(&["GET", "k"]));
        let hello = s(&c.must(&["HELLO", "2"]));
        let wrong = s(&c.must(&["AUTH", "nope"]));
        let ok = s(&c.must(&["AUTH", "s3cret"]));
        let mut d = srv.connect();
        let hello_auth =
            s(&d.must(&["HELLO", "2", "AUTH", "default", "s3cret"])).starts_with("*14");
        // ACL SETUSER default nopass lifts it too.
        admin.must(&["ACL", "SETUSER", "default", "nopass"]);
        let mut e = srv.connect();
        let open = s(&e.must(&["PING"]));
        admin.must(&["CONFIG", "SET", "requirepass", ""]);
        (set, user, still, noauth, hello, wrong, ok, hello_auth, open)
    });
}

#[test]
fn acl_pubsub_default_allchannels_applies_to_new_users() {
    run_on_both(|srv| {
        let mut c = srv.connect();
        c.must(&["CONFIG", "SET", "acl-pubsub-default", "allchannels"]);
        c.must(&["ACL", "SETUSER", "jay"]);
        let jay = s(&c.must(&["ACL", "GETUSER", "jay"]));
        c.must(&["ACL", "SETUSER", "jay", "reset"]);
        let reset = s(&c.must(&["ACL", "GETUSER", "jay"]));
        c.must(&["CONFIG", "SET", "acl-pubsub-default", "resetchannels"]);
        c.must(&["ACL", "SETUSER", "kay"]);
        let kay = s(&c.must(&["ACL", "GETUSER", "kay"]));
        (jay, reset, kay)
    });
}
