//! SLOWLOG (Redis's slowlog.c).
//!
//! `call()` hands every command's execution time here. A command that ran
//! for at least `slowlog-log-slower-than` microseconds is remembered, newest
//! first, in a list of at most `slowlog-max-len` entries. Only the command
//! function is timed: reading the request and writing the reply are not, so
//! the number is exactly how long this command kept every other client
//! waiting.

use std::collections::VecDeque;

use bytes::Bytes;

use crate::networking::Client;
use crate::server::Server;

/// SLOWLOG_ENTRY_MAX_ARGC: at most 32 arguments are kept per entry.
pub const SLOWLOG_ENTRY_MAX_ARGC: usize = 32;
/// SLOWLOG_ENTRY_MAX_STRING: each argument is cut to 128 bytes.
pub const SLOWLOG_ENTRY_MAX_STRING: usize = 128;

/// One slow command (slowlogEntry).
#[derive(Debug, Clone)]
pub struct SlowlogEntry {
    pub id: u64,
    /// Unix time (seconds) when it was logged.
    pub time: i64,
    /// Execution time in microseconds.
    pub duration: u64,
    pub argv: Vec<Bytes>,
    pub peerid: String,
    pub cname: Bytes,
}

#[derive(Default, Debug)]
pub struct Slowlog {
    /// Newest entry first.
    pub entries: VecDeque<SlowlogEntry>,
    /// Ids keep growing across SLOWLOG RESET, as in Redis.
    pub next_id: u64,
}

/// slowlogPushEntryIfNeeded: log the command if it was slow enough.
pub fn slowlog_push_entry_if_needed(srv: &mut Server, c: &Client, argv: &[Bytes], duration: u64) {
    let threshold = srv.config.slowlog_log_slower_than;
    if threshold < 0 || (duration as i64) < threshold {
        return;
    }
    let entry = SlowlogEntry {
        id: srv.slowlog.next_id,
        time: crate::server::mstime() / 1000,
        duration,
        argv: slowlog_argv(argv),
        peerid: c.addr.clone(),
        cname: c.name.clone().unwrap_or_default(),
    };
    srv.slowlog.next_id += 1;
    srv.slowlog.entries.push_front(entry);
    let max = srv.config.slowlog_max_len as usize;
    while srv.slowlog.entries.len() > max {
        srv.slowlog.entries.pop_back();
    }
}

/// slowlogCreateEntry's argument trimming: at most 32 arguments (the last
/// one replaced by "... (N more arguments)"), each at most 128 bytes (plus
/// "... (N more bytes)").
fn slowlog_argv(argv: &[Bytes]) -> Vec<Bytes> {
    let slargc = argv.len().min(SLOWLOG_ENTRY_MAX_ARGC);
    let mut out = Vec::with_capacity(slargc);
    for (j, a) in argv.iter().take(slargc).enumerate() {
        if slargc != argv.len() && j == slargc - 1 {
            let more = argv.len() - slargc + 1;
            out.push(Bytes::from(format!("... ({more} more arguments)")));
        } else if a.len() > SLOWLOG_ENTRY_MAX_STRING {
            let mut s = a[..SLOWLOG_ENTRY_MAX_STRING].to_vec();
            s.extend_from_slice(
                format!("... ({} more bytes)", a.len() - SLOWLOG_ENTRY_MAX_STRING).as_bytes(),
            );
            out.push(Bytes::from(s));
        } else {
            out.push(a.clone());
        }
    }
    out
}

/// SLOWLOG GET [count]
// redis: slowlog.c slowlogCommand
pub fn slowlog_get_command(srv: &mut Server, c: &mut Client) {
    if c.argc() > 3 {
        c.add_reply_subcommand_syntax_error();
        return;
    }
    let mut count: i64 = 10;
    if c.argc() == 3 {
        // getRangeLongFromObjectOrReply(-1, LONG_MAX) with one message for
        // both "not a number" and "too small".
        match storage::util::string2ll(c.arg(2)) {
            Some(-1) => count = i64::MAX,
            Some(n) if n >= 0 => count = n,
            _ => {
                c.add_reply_error("ERR count should be greater than or equal to -1");
                return;
            }
        }
    }
    let n = (count as u64).min(srv.slowlog.entries.len() as u64) as usize;
    c.add_reply_array_len(n);
    for e in srv.slowlog.entries.iter().take(n) {
        c.add_reply_array_len(6);
        c.add_reply_integer(e.id as i64);
        c.add_reply_integer(e.time);
        c.add_reply_integer(e.duration as i64);
        c.add_reply_array_len(e.argv.len());
        for a in &e.argv {
            c.add_reply_bulk(a);
        }
        c.add_reply_bulk(e.peerid.as_bytes());
        c.add_reply_bulk(&e.cname);
    }
}

/// SLOWLOG LEN
pub fn slowlog_len_command(srv: &mut Server, c: &mut Client) {
    c.add_reply_integer(srv.slowlog.entries.len() as i64);
}

/// SLOWLOG RESET
pub fn slowlog_reset_command(srv: &mut Server, c: &mut Client) {
    srv.slowlog.entries.clear();
    c.add_reply_ok();
}

/// SLOWLOG HELP
pub fn slowlog_help_command(_srv: &mut Server, c: &mut Client) {
    c.add_reply_help(
        "SLOWLOG",
        &[
            "GET [<count>]",
            "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
            "    Entries are made of:",
            "    id, timestamp, time in microseconds, arguments array, client IP and port,",
            "    client name",
            "LEN",
            "    Return the length of the slowlog.",
            "RESET",
            "    Reset the slowlog.",
        ],
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_argument_lists_are_cut_to_32() {
        let argv: Vec<Bytes> = (0..40).map(|i| Bytes::from(i.to_string())).collect();
        let out = slowlog_argv(&argv);
        assert_eq!(out.len(), 32);
        assert_eq!(&out[31][..], b"... (9 more arguments)");
        assert_eq!(&out[30][..], b"30");
    }

    #[test]
    fn long_strings_are_cut_to_128_bytes() {
        let argv = vec![Bytes::from(vec![b'x'; 200])];
        let out = slowlog_argv(&argv);
        assert_eq!(out[0].len(), 128 + "... (72 more bytes)".len());
        assert!(out[0].ends_with(b"... (72 more bytes)"));
    }
}
