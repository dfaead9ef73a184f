//! INFO's field names and their order must be Redis 7.0.15's: the values
//! differ between two servers, the names and sections must not. Activity
//! lines (cmdstat_*, latency_percentiles_usec_*, errorstat_*, db*) are
//! compared as sets, since Redis lists commands in hash order.

mod common;

use common::{RealRedis, Server};

/// The reply's text without the bulk/verbatim header.
fn text(reply: &[u8]) -> String {
    let s = String::from_utf8_lossy(reply).into_owned();
    let body = s
        .split_once("\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    body.strip_prefix("txt:")
        .map(str::to_string)
        .unwrap_or(body)
}

/// (ordered fixed names, sorted activity names) of an INFO text.
fn names(info: &str) -> (Vec<String>, Vec<String>) {
    let mut fixed = Vec::new();
    let mut activity = Vec::new();
    for line in info.split("\r\n") {
        let name = line.split(':').next().unwrap_or("").to_string();
        let is_activity = ["cmdstat_", "latency_percentiles_usec_", "errorstat_", "db"]
            .iter()
            .any(|p| name.starts_with(p));
        if is_activity {
            activity.push(name);
        } else {
            fixed.push(name);
        }
    }
    activity.sort();
    (fixed, activity)
}

#[test]
fn info_field_names_match_redis() {
    let Some(real) = RealRedis::start() else {
        return;
    };
    let lite = Server::start();
    let mut infos = Vec::new();
    for p in [&real, &lite] {
        let mut c = p.connect();
        // The same activity on both: a key with a TTL, a miss, an error.
        c.must(&["SET", "k", "v"]);
        c.must(&["EXPIRE", "k", "100"]);
        c.must(&["GET", "nokey"]);
        c.must(&["NOSUCHCOMMAND"]);
        let mut per_arg = Vec::new();
        for args in [
            vec!["INFO"],
            vec!["INFO", "everything"],
            vec!["INFO", "all"],
            vec!["INFO", "keyspace", "CPU"],
            vec!["INFO", "bogus"],
        ] {
            per_arg.push(names(&text(&c.must(&args))));
        }
        infos.push(per_arg);
    }
    assert_eq!(
        infos[0], infos[1],
        "INFO field names differ (left: redis-server, right: redis-lite)"
    );
}
