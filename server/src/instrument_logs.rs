//! DEBUG LAZYFREE-LOG and DEBUG ENCODING-LOG: redis-lite extensions, no
//! Redis twin (listed in the README, not in DEBUG HELP, whose reply stays
//! Redis's).
//!
//! The logs themselves live where the events happen: the lazy-free log in
//! lazyfree/src/log.rs (the `bio_lazy_free` thread completes its entries),
//! the encoding log in storage/src/encoding_log.rs (the type API's
//! conversion functions write it). Here they are switched and read.
//!
//! Each entry is replied as a flat array of field / value pairs, newest
//! entry first, so that redis-cli prints one readable block per entry and a
//! program can turn it into a map.

use crate::networking::Client;

/// Whether `call()` must name commands for the logs: while either is on.
fn update_context_wanted() {
    storage::encoding_log::set_context_wanted(storage::encoding_log::on() || lazyfree::log::on());
}

/// What ON / OFF / RESET / no argument share for both logs.
enum LogOp {
    On,
    Off,
    Reset,
    Get,
}

fn parse_op(c: &Client) -> Option<LogOp> {
    if c.argc() == 2 {
        return Some(LogOp::Get);
    }
    if c.argc() != 3 {
        return None;
    }
    let sub = c.arg(2).to_ascii_lowercase();
    match &sub[..] {
        b"on" => Some(LogOp::On),
        b"off" => Some(LogOp::Off),
        b"reset" => Some(LogOp::Reset),
        b"get" => Some(LogOp::Get),
        _ => None,
    }
}

/// A field / value array for one entry.
enum Field<'a> {
    Int(i64),
    Str(&'a [u8]),
    Null,
}

fn reply_entry(c: &mut Client, fields: &[(&str, Field<'_>)]) {
    c.add_reply_array_len(fields.len() * 2);
    for (name, v) in fields {
        c.add_reply_bulk(name.as_bytes());
        match v {
            Field::Int(i) => c.add_reply_integer(*i),
            Field::Str(s) => c.add_reply_bulk(s),
            Field::Null => c.add_reply_null(),
        }
    }
}

/// DEBUG LAZYFREE-LOG [ON | OFF | RESET | GET]
pub fn debug_lazyfree_log_command(c: &mut Client) {
    use lazyfree::log;
    match parse_op(c) {
        Some(op @ (LogOp::On | LogOp::Off)) => {
            log::set_on(matches!(op, LogOp::On));
            update_context_wanted();
            c.add_reply_ok();
        }
        Some(LogOp::Reset) => {
            log::reset();
            c.add_reply_ok();
        }
        Some(LogOp::Get) => {
            let entries = log::entries();
            c.add_reply_array_len(entries.len());
            for e in &entries {
                let opt = |v: Option<u64>| v.map_or(Field::Null, |v| Field::Int(v as i64));
                reply_entry(
                    c,
                    &[
                        ("id", Field::Int(e.id as i64)),
                        ("time_us", Field::Int(e.time_us)),
                        ("key", Field::Str(&e.key)),
                        ("type", Field::Str(e.type_name.as_bytes())),
                        ("encoding", Field::Str(e.encoding.as_bytes())),
                        ("effort", Field::Int(e.effort as i64)),
                        ("cause", Field::Str(e.cause.as_bytes())),
                        ("command", Field::Str(e.command.as_bytes())),
                        ("freed_in", Field::Str(e.freed_in.name().as_bytes())),
                        ("why", Field::Str(e.why.as_bytes())),
                        ("duration_us", opt(e.duration_us)),
                        ("queue_wait_us", opt(e.queue_wait_us)),
                    ],
                );
            }
        }
        None => c.add_reply_subcommand_syntax_error(),
    }
}

/// DEBUG ENCODING-LOG [ON | OFF | RESET | GET]
pub fn debug_encoding_log_command(c: &mut Client) {
    use storage::encoding_log as log;
    match parse_op(c) {
        Some(op @ (LogOp::On | LogOp::Off)) => {
            log::set_on(matches!(op, LogOp::On));
            update_context_wanted();
            c.add_reply_ok();
        }
        Some(LogOp::Reset) => {
            log::reset();
            c.add_reply_ok();
        }
        Some(LogOp::Get) => {
            let entries = log::entries();
            c.add_reply_array_len(entries.len());
            for e in &entries {
                reply_entry(
                    c,
                    &[
                        ("id", Field::Int(e.id as i64)),
                        ("time_us", Field::Int(e.time_us)),
                        ("key", Field::Str(&e.key)),
                        ("type", Field::Str(e.type_name.as_bytes())),
                        ("from", Field::Str(e.from.as_bytes())),
                        ("to", Field::Str(e.to.as_bytes())),
                        ("command", Field::Str(e.command.as_bytes())),
                        ("size", Field::Int(e.size as i64)),
                        ("trigger", Field::Str(e.trigger.as_bytes())),
                    ],
                );
            }
        }
        None => c.add_reply_subcommand_syntax_error(),
    }
}
