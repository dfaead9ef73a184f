//! Step mode, `redis-lite --loop-step`: a redis-lite extension, no Redis
//! twin.
//!
//! Before each loop pass the server prints one line saying what the pass
//! is about to do (replies to write, clients to close, clients with input
//! left over, how long poll may sleep until cron is due) and waits for
//! Enter on its terminal. While it waits, *every* client waits: a class
//! sees that one thread does everything, one pass at a time.
//!
//! Off by default: `ae_process_events` pays one relaxed load per pass.
//! When standard input ends (not a terminal, or Ctrl-D), stepping stops
//! and the loop runs freely again.

use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use crate::server::Server;

static STEPPING: AtomicBool = AtomicBool::new(false);
static PASS: AtomicU64 = AtomicU64::new(0);

/// `--loop-step` was given (main.rs).
pub fn enable() {
    STEPPING.store(true, Ordering::Relaxed);
}

/// Whether step mode is on.
#[inline]
pub fn on() -> bool {
    STEPPING.load(Ordering::Relaxed)
}

/// Print what the coming pass will do, then wait for Enter.
pub fn step(srv: &Server, next_cron: Instant, while_blocked: bool) {
    let n = PASS.fetch_add(1, Ordering::Relaxed) + 1;
    let cron_in = next_cron
        .saturating_duration_since(Instant::now())
        .as_millis();
    let line = format!(
        "pass {n}{}: before_sleep writes {} client(s), closes {}; {} client(s) with input left over, {} event(s) not yet handled; poll sleeps up to {} ms, then {}{} [Enter]",
        if while_blocked { " (inside a busy script)" } else { "" },
        srv.clients_pending_write.len(),
        srv.clients_to_close.len(),
        srv.clients_pending_read.len(),
        srv.fired_events.len(),
        if srv.clients_pending_read.is_empty() { cron_in } else { 0 },
        "the ready sockets' events",
        if cron_in == 0 && !while_blocked { ", then server_cron" } else { "" },
    );
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(line.as_bytes());
    let _ = out.flush();
    let mut answer = String::new();
    match std::io::stdin().lock().read_line(&mut answer) {
        Ok(0) | Err(_) => {
            let _ = writeln!(out, "\n(standard input closed: step mode off)");
            STEPPING.store(false, Ordering::Relaxed);
        }
        Ok(_) => {}
    }
}
