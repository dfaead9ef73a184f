//! The event loop (Redis's ae.c), and nothing else.
//!
//! One thread, one loop. `ae_main` runs `ae_process_events` for ever, and
//! each pass is, top to bottom, in this one function:
//! 1. `server::before_sleep`: CLIENT PAUSE and blocked-client work, the fast
//!    expire cycle, close clients marked for closing, write pending replies;
//! 2. `poll()`, sleeping until a socket is ready or the nearest timer is due
//!    (the cron tick, a blocked client's timeout, the end of a CLIENT PAUSE;
//!    not at all if some client still has unread bytes);
//! 3. the fired events: `networking::accept_tcp_handler` for a listener,
//!    `networking::handle_client_readable` (read and run commands) and
//!    `networking::handle_client_writable` for clients;
//! 4. time events: `server::server_cron` when its tick is due.
//!
//! The handlers live in their Redis twins (networking.rs, server.rs): a
//! breakpoint here shows the shape of one pass, a breakpoint there one step.
//!
//! A slow command in step 3 delays everything after it: other clients' reads
//! and writes, and cron (expiry, rehashing). That is the lesson of the seed
//! experiments, and it is visible here: there is nowhere else for work to go.

use std::io;
use std::time::{Duration, Instant};

use mio::{Events, Token};

use crate::log::{server_log, LogLevel};
use crate::networking;
use crate::server::{self, Server, LISTENER_TOKEN};

/// How many readiness events one poll() returns at most (Redis sizes its
/// fired array by maxclients; mio hands them out in batches of this size).
pub const EVENTS_PER_POLL: usize = 1024;

/// aeMain: run loop passes until shutdown (which exits the process).
pub fn ae_main(srv: &mut Server) {
    let mut events = Events::with_capacity(EVENTS_PER_POLL);
    let mut next_cron = Instant::now() + server::cron_period(srv);
    loop {
        ae_process_events(srv, &mut events, &mut next_cron);
    }
}

/// One event the poll reported: whose, and what it can do now.
#[derive(Clone, Copy)]
pub struct FiredEvent {
    pub token: Token,
    pub readable: bool,
    pub writable: bool,
}

/// aeProcessEvents: one pass of the loop.
pub fn ae_process_events(srv: &mut Server, events: &mut Events, next_cron: &mut Instant) {
    // 1. Before sleeping (Redis: the beforesleep callback).
    server::before_sleep(srv);

    // 2. Sleep until the next time event, or not at all when some client
    // still has bytes waiting in its socket (see
    // networking::read_query_from_client).
    let mut timeout = if srv.clients_pending_read.is_empty() && !srv.clients_write_capped {
        next_cron.saturating_duration_since(Instant::now())
    } else {
        Duration::ZERO
    };
    // Evictions stopped at their time limit go on at once (evict.rs).
    if srv.evict.time_proc_running {
        timeout = Duration::ZERO;
    }
    // Wake up for the nearest blocked client's timeout.
    if let Some(deadline) = crate::blocked::nearest_block_timeout(srv) {
        let left = deadline - server::mstime();
        timeout = timeout.min(Duration::from_millis(left.max(0) as u64));
    }
    // Wake up when a CLIENT PAUSE ends, not at the next cron tick.
    if srv.client_pause_type != networking::PauseType::Off {
        let left = srv.client_pause_end_time - server::mstime();
        timeout = timeout.min(Duration::from_millis(left.max(0) as u64));
    }
    if let Err(e) = srv.poll.poll(events, Some(timeout)) {
        if e.kind() != io::ErrorKind::Interrupted {
            server_log(LogLevel::Warning, &format!("poll() failed: {e}"));
        }
    }
    let pass_start = Instant::now();

    // 3. File events. Clients left over from the previous pass read first
    // (as the kernel would report them again with level-triggered epoll).
    let pending: Vec<Token> = std::mem::take(&mut srv.clients_pending_read);
    for token in pending {
        networking::handle_client_readable(srv, token);
    }

    // The fired events wait on the server, not in a local list, so that a
    // busy script can serve the rest of them
    // (networking::process_events_while_blocked).
    srv.fired_events.extend(events.iter().map(|e| FiredEvent {
        token: e.token(),
        readable: e.is_readable() || e.is_read_closed() || e.is_error(),
        writable: e.is_writable(),
    }));
    while let Some(event) = srv.fired_events.pop_front() {
        ae_fire_file_event(srv, event);
    }

    // 4. Time events run after all file events: a slow command delays cron
    // too. evictionTimeProc is a 0 ms time event: it runs on every pass.
    if srv.evict.time_proc_running {
        crate::evict::eviction_time_proc(srv);
    }
    if Instant::now() >= *next_cron {
        server::server_cron(srv);
        *next_cron = Instant::now() + server::cron_period(srv);
    }

    srv.stats.eventloop_cycles += 1;
    srv.stats.eventloop_duration_sum += pass_start.elapsed().as_micros() as u64;
}

/// Call the handler registered for one fired event, as aeProcessEvents
/// calls `fe->rfileProc` / `fe->wfileProc`: the accept handler for a
/// listener, the read then the write handler for a client.
pub fn ae_fire_file_event(srv: &mut Server, event: FiredEvent) {
    let token = event.token;
    if token == LISTENER_TOKEN || token.0 < srv.listeners.len() {
        networking::accept_tcp_handler(srv, token.0);
        return;
    }
    if event.readable {
        networking::handle_client_readable(srv, token);
    }
    if event.writable {
        networking::handle_client_writable(srv, token);
    }
}
