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
#[cfg(feature = "recorder")]
use crate::recorder;
use crate::server::{self, Server, LISTENER_TOKEN};

/// How many readiness events one poll() returns at most (Redis sizes its
/// fired array by maxclients; mio hands them out in batches of this size).
pub const EVENTS_PER_POLL: usize = 1024;

/// AE_FILE_EVENTS: run the fired file events (accept, read, write).
pub const AE_FILE_EVENTS: u32 = 1 << 0;
/// AE_TIME_EVENTS: run the due time events (server_cron, evictionTimeProc).
pub const AE_TIME_EVENTS: u32 = 1 << 1;
/// AE_ALL_EVENTS: what `ae_main` asks for on every pass.
pub const AE_ALL_EVENTS: u32 = AE_FILE_EVENTS | AE_TIME_EVENTS;
/// AE_DONT_WAIT: poll without sleeping (processEventsWhileBlocked).
pub const AE_DONT_WAIT: u32 = 1 << 2;
/// Redis's `ProcessingEventsWhileBlocked` global, carried as a flag: the
/// pass runs inside a busy script, so before-sleep does only writes and
/// closes (Redis's early return in beforeSleep), and the client running
/// the script (out of `srv.clients`) keeps its readable events for later.
pub const AE_WHILE_BLOCKED: u32 = 1 << 3;

/// aeMain: run loop passes until shutdown (which exits the process).
pub fn ae_main(srv: &mut Server) {
    let mut events = Events::with_capacity(EVENTS_PER_POLL);
    // The first server_cron runs 1 ms after start, as Redis's
    // aeCreateTimeEvent(el, 1, serverCron): its once-a-second work (cron
    // loop 0: replicationCron's first PING check, say) happens before any
    // client or replica had time to connect.
    let mut next_cron = Instant::now() + std::time::Duration::from_millis(1);
    loop {
        ae_process_events(srv, &mut events, &mut next_cron, AE_ALL_EVENTS);
    }
}

/// One event the poll reported: whose, and what it can do now.
#[derive(Clone, Copy)]
pub struct FiredEvent {
    pub token: Token,
    pub readable: bool,
    pub writable: bool,
}

/// aeProcessEvents: one pass of the loop. `flags` says which parts run
/// (AE_*): `ae_main` runs them all; a busy script
/// (networking::process_events_while_blocked) runs file events only,
/// without sleeping. Returns how many events and before-sleep jobs it
/// handled, so that caller knows when to stop.
pub fn ae_process_events(
    srv: &mut Server,
    events: &mut Events,
    next_cron: &mut Instant,
    flags: u32,
) -> usize {
    let while_blocked = flags & AE_WHILE_BLOCKED != 0;
    let mut processed = 0;
    // The flight recorder (recorder.rs): off by default, then this one
    // load is all it costs the pass; built without the feature `recorder`,
    // not even that (every hook below carries the cfg).
    #[cfg(feature = "recorder")]
    let recording = recorder::on();
    #[cfg(feature = "recorder")]
    if recording {
        recorder::pass_begin(while_blocked);
    }
    // --loop-step (loop_step.rs): say what this pass will do, wait for Enter.
    if crate::loop_step::on() {
        crate::loop_step::step(srv, *next_cron, while_blocked);
    }

    // 1. Before sleeping (Redis: the beforesleep callback).
    #[cfg(feature = "recorder")]
    let before = recording.then(|| {
        (
            Instant::now(),
            srv.stats.expiredkeys,
            srv.stats.net_output_bytes,
            srv.clients_pending_write.len(),
        )
    });
    if while_blocked {
        processed += networking::before_sleep_while_blocked(srv);
    } else {
        server::before_sleep(srv);
    }
    #[cfg(feature = "recorder")]
    if let Some((t, expired, out_bytes, writers)) = before {
        recorder::phase(
            "before_sleep",
            t,
            &[
                ("expired_keys", srv.stats.expiredkeys - expired),
                ("clients_written", writers as u64),
                ("bytes_written", srv.stats.net_output_bytes - out_bytes),
            ],
        );
    }

    // 2. Sleep until the next time event, or not at all when some client
    // still has bytes waiting in its socket (see
    // networking::read_query_from_client).
    let mut timeout = if srv.clients_pending_read.is_empty() && !srv.clients_write_capped {
        next_cron.saturating_duration_since(Instant::now())
    } else {
        Duration::ZERO
    };
    // Evictions stopped at their time limit go on at once (evict.rs).
    if srv.evict.time_proc_running || flags & AE_DONT_WAIT != 0 {
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
    #[cfg(feature = "recorder")]
    let poll_start = Instant::now();
    if let Err(e) = srv.poll.poll(events, Some(timeout)) {
        if e.kind() != io::ErrorKind::Interrupted {
            server_log(LogLevel::Warning, &format!("poll() failed: {e}"));
        }
    }
    let pass_start = Instant::now();
    #[cfg(feature = "recorder")]
    if recording {
        let fired = events.iter().count() + srv.fired_events.len();
        recorder::pass_polled(poll_start, fired, srv.clients_pending_read.len());
    }

    // 3. File events. Clients left over from the previous pass read first
    // (as the kernel would report them again with level-triggered epoll).
    let pending: Vec<Token> = std::mem::take(&mut srv.clients_pending_read);
    for token in pending {
        if while_blocked && !srv.clients.contains_key(&token) {
            // The script's own client: its input waits for the script.
            srv.clients_pending_read.push(token);
            continue;
        }
        processed += 1;
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
        processed += 1;
        let is_listener = event.token == LISTENER_TOKEN
            || event.token == server::UNIX_LISTENER_TOKEN
            || event.token == server::RDB_PIPE_TOKEN
            || event.token.0 < srv.listeners.len()
            || crate::cluster::bus::is_cluster_token(srv, event.token);
        if while_blocked && !is_listener && !srv.clients.contains_key(&event.token) {
            // The script's own client: remember the readiness (mio reports
            // it only once) and read it after the script.
            if event.readable && !srv.clients_pending_read.contains(&event.token) {
                srv.clients_pending_read.push(event.token);
            }
            continue;
        }
        ae_fire_file_event(srv, event);
    }
    if flags & AE_TIME_EVENTS == 0 {
        #[cfg(feature = "recorder")]
        if recording {
            recorder::pass_end();
        }
        return processed;
    }

    // 4. Time events run after all file events: a slow command delays cron
    // too. evictionTimeProc is a 0 ms time event: it runs on every pass.
    if srv.evict.time_proc_running {
        crate::evict::eviction_time_proc(srv);
    }
    if Instant::now() >= *next_cron {
        #[cfg(feature = "recorder")]
        let t = Instant::now();
        server::server_cron(srv);
        *next_cron = Instant::now() + server::cron_period(srv);
        #[cfg(feature = "recorder")]
        if recording {
            recorder::phase("server_cron", t, &[]);
        }
    }
    #[cfg(feature = "recorder")]
    if recording {
        recorder::pass_end();
    }

    srv.stats.eventloop_cycles += 1;
    srv.stats.eventloop_duration_sum += pass_start.elapsed().as_micros() as u64;
    processed
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
    if token == server::UNIX_LISTENER_TOKEN {
        networking::accept_unix_handler(srv);
        return;
    }
    if token == server::RDB_PIPE_TOKEN {
        crate::replication::master::rdb_pipe_read_handler(srv);
        return;
    }
    // The cluster bus: its listener and its links (cluster/bus.rs).
    if crate::cluster::bus::is_cluster_token(srv, token) {
        crate::cluster::bus::cluster_handle_event(srv, token, event.readable, event.writable);
        return;
    }
    if event.readable {
        networking::handle_client_readable(srv, token);
    }
    if event.writable {
        networking::handle_client_writable(srv, token);
    }
}
