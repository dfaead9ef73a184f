//! MONITOR (Redis's replication.c replicationFeedMonitors and
//! monitorCommand).
//!
//! Every command that runs through `call()` is formatted as one line and
//! appended to the output buffer of every monitoring client:
//!
//! `+1339518083.107412 [0 127.0.0.1:60866] "keys" "*"`
//!
//! This is the cost the seed post measured: with one monitor attached, each
//! command pays for formatting and escaping its arguments and for one more
//! buffer append, all on the single thread.

use bytes::{Bytes, BytesMut};

use crate::networking::{
    close_client_on_output_buffer_limit_reached, Client, CLIENT_MONITOR, CLIENT_PENDING_WRITE,
};
use crate::server::{ustime, Server};

/// MONITOR
// redis: replication.c monitorCommand
pub fn monitor_command(srv: &mut Server, c: &mut Client) {
    // A second MONITOR is silently ignored (Redis checks CLIENT_SLAVE).
    if c.has_flag(CLIENT_MONITOR) {
        return;
    }
    // Inside MULTI (or a script) the client cannot turn into a monitor.
    if c.has_flag(crate::networking::CLIENT_DENY_BLOCKING) {
        return c.add_reply_error("ERR MONITOR isn't allowed for DENY BLOCKING client");
    }
    c.flags |= CLIENT_MONITOR;
    srv.monitors.push(c.token);
    c.add_reply_ok();
}

/// replicationFeedMonitors: format the command once, append it to every
/// monitor. `argv` is the command as it should be shown (AUTH redacted).
pub fn replication_feed_monitors(srv: &mut Server, c: &mut Client, dictid: usize, argv: &[Bytes]) {
    if srv.monitors.is_empty() {
        return;
    }
    let line = format_monitor_line(ustime(), dictid, &c.addr, argv);

    // Deliver to each monitor; drop the ones that went away.
    let mut i = 0;
    while i < srv.monitors.len() {
        let token = srv.monitors[i];
        if token == c.token {
            // The running client is out of the client table: write directly.
            c.reply.extend_from_slice(&line);
            i += 1;
            continue;
        }
        let limits = &srv.config.client_output_buffer_limit;
        match srv.clients.get_mut(&token) {
            Some(m) => {
                m.reply.extend_from_slice(&line);
                // A monitor that stopped reading is closed at its output
                // buffer limit (`normal` class), not allowed to grow forever.
                if close_client_on_output_buffer_limit_reached(limits, m) {
                    srv.clients_to_close.push(token);
                }
                if m.flags & CLIENT_PENDING_WRITE == 0 {
                    m.flags |= CLIENT_PENDING_WRITE;
                    srv.clients_pending_write.push(token);
                }
                i += 1;
            }
            None => {
                srv.monitors.swap_remove(i);
            }
        }
    }
}

/// The monitor line: `+<sec>.<usec> [<db> <addr>] "<arg>" "<arg>"...\r\n`.
pub fn format_monitor_line(now_us: i64, dictid: usize, addr: &str, argv: &[Bytes]) -> BytesMut {
    let mut out = BytesMut::with_capacity(64 + argv.iter().map(|a| a.len() + 3).sum::<usize>());
    out.extend_from_slice(
        format!(
            "+{}.{:06} [{} {}] ",
            now_us / 1_000_000,
            now_us % 1_000_000,
            dictid,
            addr
        )
        .as_bytes(),
    );
    for (j, a) in argv.iter().enumerate() {
        cat_repr(&mut out, a);
        if j != argv.len() - 1 {
            out.extend_from_slice(b" ");
        }
    }
    out.extend_from_slice(b"\r\n");
    out
}

/// sdscatrepr: a quoted, escaped representation of a byte string.
pub fn cat_repr(out: &mut BytesMut, s: &[u8]) {
    out.extend_from_slice(b"\"");
    for &b in s {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'"' => out.extend_from_slice(b"\\\""),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x07 => out.extend_from_slice(b"\\a"),
            0x08 => out.extend_from_slice(b"\\b"),
            // isprint(): 0x20..=0x7e in the C locale.
            0x20..=0x7e => out.extend_from_slice(&[b]),
            _ => out.extend_from_slice(format!("\\x{b:02x}").as_bytes()),
        }
    }
    out.extend_from_slice(b"\"");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monitor_line_matches_redis_format() {
        let argv = vec![Bytes::from_static(b"keys"), Bytes::from_static(b"*")];
        let line = format_monitor_line(1339518083107412, 0, "127.0.0.1:60866", &argv);
        assert_eq!(
            &line[..],
            b"+1339518083.107412 [0 127.0.0.1:60866] \"keys\" \"*\"\r\n"
        );
    }

    #[test]
    fn binary_arguments_are_escaped() {
        let mut out = BytesMut::new();
        cat_repr(&mut out, b"a\"b\\c\n\r\t\x07\x08\x00\xff ");
        assert_eq!(&out[..], b"\"a\\\"b\\\\c\\n\\r\\t\\a\\b\\x00\\xff \"");
    }

    #[test]
    fn microseconds_are_zero_padded() {
        let argv = vec![Bytes::from_static(b"ping")];
        let line = format_monitor_line(1_000_000_000_000_042, 3, "[::1]:5", &argv);
        assert_eq!(&line[..], b"+1000000000.000042 [3 [::1]:5] \"ping\"\r\n");
    }
}
