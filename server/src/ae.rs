//! The event loop (Redis's ae.c + the loop parts of server.c).
//!
//! One thread, one loop. Each pass of `ae_process_events` is, top to bottom:
//! 1. `before_sleep`: close clients marked for closing, write pending replies;
//! 2. `poll()`, sleeping until a socket is ready or the next cron tick is due
//!    (not at all if some client still has unread bytes);
//! 3. handle the ready sockets: accept new clients, read and run commands,
//!    write to clients whose sockets became writable again;
//! 4. time events: `server_cron` when its tick is due.
//!
//! A slow command in step 3 delays everything after it: other clients' reads
//! and writes, and cron (expiry, rehashing). That is the lesson of the seed
//! experiments, and it is visible here: there is nowhere else for work to go.

use std::io;
use std::time::{Duration, Instant};

use mio::{Events, Interest, Token};
use storage::expire::CycleType;

use crate::log::{server_log, LogLevel};
use crate::networking::{
    self, Client, CLIENT_CLOSE_ASAP, CLIENT_PENDING_READ, CLIENT_PENDING_WRITE,
};
use crate::server::{self, Server, LISTENER_TOKEN};

/// MAX_ACCEPTS_PER_CALL: at most this many accepts per listener event, so a
/// connection storm cannot monopolise a loop pass.
pub const MAX_ACCEPTS_PER_CALL: usize = 1000;

/// How many readiness events one poll() returns at most.
const EVENTS_PER_POLL: usize = 1024;

/// aeMain: run loop passes until shutdown.
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
    before_sleep(srv);

    // Sleep until the next time event, or not at all when some client still
    // has bytes waiting in its socket (see networking::read_query_from_client).
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
        let left = deadline - crate::server::mstime();
        timeout = timeout.min(Duration::from_millis(left.max(0) as u64));
    }
    // Wake up when a CLIENT PAUSE ends, not at the next cron tick.
    if srv.client_pause_type != networking::PauseType::Off {
        let left = srv.client_pause_end_time - crate::server::mstime();
        timeout = timeout.min(Duration::from_millis(left.max(0) as u64));
    }
    if let Err(e) = srv.poll.poll(events, Some(timeout)) {
        if e.kind() != io::ErrorKind::Interrupted {
            server_log(LogLevel::Warning, &format!("poll() failed: {e}"));
        }
    }
    let pass_start = Instant::now();

    // Clients left over from the previous pass read first (as the kernel
    // would report them again with level-triggered epoll).
    let pending: Vec<Token> = std::mem::take(&mut srv.clients_pending_read);
    for token in pending {
        handle_client_readable(srv, token);
    }

    // The fired events wait on the server, not in a local list, so that a
    // busy script can serve the rest of them (process_events_while_blocked).
    srv.fired_events.extend(events.iter().map(|e| FiredEvent {
        token: e.token(),
        readable: e.is_readable() || e.is_read_closed() || e.is_error(),
        writable: e.is_writable(),
    }));
    while let Some(event) = srv.fired_events.pop_front() {
        handle_fired_event(srv, event);
    }

    // Time events run after all file events: a slow command delays cron too.
    // evictionTimeProc is a 0 ms time event: it runs on every pass.
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

/// Dispatch one fired event: a new connection, or a client's readable /
/// writable socket.
fn handle_fired_event(srv: &mut Server, event: FiredEvent) {
    let token = event.token;
    if token == LISTENER_TOKEN || token.0 < srv.listeners.len() {
        accept_tcp_handler(srv, token.0);
        return;
    }
    if event.readable {
        handle_client_readable(srv, token);
    }
    if event.writable {
        handle_client_writable(srv, token);
    }
}

/// beforeSleep: work done once per pass before waiting for events.
fn before_sleep(srv: &mut Server) {
    // CLIENT PAUSE over (timed out or CLIENT UNPAUSE): run what waited.
    networking::check_client_pause_timeout_and_return_if_paused(srv);
    if srv.clients_unpaused {
        networking::resume_postponed_clients(srv);
    }
    // Blocked clients: time-outs, then those served or unblocked go on
    // with the rest of their input.
    crate::blocked::handle_blocked_clients_timeout(srv);
    crate::blocked::process_unblocked_clients(srv);

    // The fast expire cycle: at most 1 ms, only when the slow cycle could
    // not keep up (activeExpireCycle(ACTIVE_EXPIRE_CYCLE_FAST)).
    if srv.active_expire_enabled {
        crate::expire::active_expire_cycle(srv, CycleType::Fast);
    }
    free_clients_in_async_free_queue(srv);
    // The AOF is written (and fsynced with `always`) before any reply.
    crate::aof::before_sleep(srv);
    handle_clients_with_pending_writes(srv);
    free_clients_in_async_free_queue(srv);
}

/// handleClientsWithPendingWrites: write each queued client directly; only
/// a client whose socket is full gets a writable handler (see networking).
fn handle_clients_with_pending_writes(srv: &mut Server) {
    srv.clients_write_capped = false;
    let pending: Vec<Token> = std::mem::take(&mut srv.clients_pending_write);
    for token in pending {
        let Some(mut c) = srv.clients.remove(&token) else {
            continue;
        };
        c.flags &= !CLIENT_PENDING_WRITE;
        if !c.has_flag(CLIENT_CLOSE_ASAP) {
            if let Err(e) = networking::write_to_client(srv, &mut c) {
                server_log(LogLevel::Verbose, &format!("Error writing to client: {e}"));
                c.flags |= CLIENT_CLOSE_ASAP;
            }
        }
        put_back_client(srv, c);
    }
}

/// acceptTcpHandler: accept up to MAX_ACCEPTS_PER_CALL connections.
fn accept_tcp_handler(srv: &mut Server, listener_idx: usize) {
    for _ in 0..MAX_ACCEPTS_PER_CALL {
        let accepted = srv.listeners[listener_idx].accept();
        let (stream, peer) = match accepted {
            Ok(x) => x,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                server_log(
                    LogLevel::Warning,
                    &format!("Accepting client connection: {e}"),
                );
                return;
            }
        };
        let _ = stream.set_nodelay(true);
        let token = Token(srv.next_token);
        srv.next_token += 1;
        let id = srv.next_client_id;
        srv.next_client_id += 1;
        let mut c = Box::new(Client::new(id, token, stream, peer));
        // A new connection starts authenticated only while the default user
        // needs no password (requirepass unset).
        c.authenticated = srv.config.requirepass.is_empty();
        server_log(LogLevel::Verbose, &format!("Accepted {}", c.addr));

        // maxclients: refuse with Redis's error, written directly.
        if srv.clients.len() as u64 >= srv.config.maxclients {
            use std::io::Write;
            if let Some(stream) = c.stream.as_mut() {
                let _ = stream.write_all(b"-ERR max number of clients reached\r\n");
            }
            srv.stats.rejected_conn += 1;
            continue;
        }
        let registered = match c.stream.as_mut() {
            Some(stream) => srv
                .poll
                .registry()
                .register(stream, token, Interest::READABLE),
            None => Ok(()),
        };
        if let Err(e) = registered {
            server_log(
                LogLevel::Warning,
                &format!("Error registering fd event for the new client: {e}"),
            );
            continue;
        }
        srv.stats.numconnections += 1;
        srv.clients.insert(token, c);
    }
}

/// A readable event: take the client out of the table, read and run its
/// commands, put it back.
fn handle_client_readable(srv: &mut Server, token: Token) {
    let Some(mut c) = srv.clients.remove(&token) else {
        return;
    };
    c.flags &= !CLIENT_PENDING_READ;
    networking::read_query_from_client(srv, &mut c);
    put_back_client(srv, c);
}

/// A writable event: the socket can take more of a pending reply.
fn handle_client_writable(srv: &mut Server, token: Token) {
    // appendfsync always: no reply overtakes its AOF write (AE_BARRIER).
    crate::aof::flush_before_reply(srv);
    let Some(mut c) = srv.clients.remove(&token) else {
        return;
    };
    if let Err(e) = networking::write_to_client(srv, &mut c) {
        server_log(LogLevel::Verbose, &format!("Error writing to client: {e}"));
        c.flags |= CLIENT_CLOSE_ASAP;
    }
    put_back_client(srv, c);
}

/// Return a client to the table after its turn, queueing what it needs next:
/// a write before sleeping, another read next pass, or closing.
pub fn put_back_client(srv: &mut Server, mut c: Box<Client>) {
    let token = c.token;
    networking::close_client_on_output_buffer_limit_reached(
        &srv.config.client_output_buffer_limit,
        &mut c,
    );
    if c.has_flag(CLIENT_CLOSE_ASAP) {
        srv.clients_to_close.push(token);
    } else {
        if !c.reply.is_empty() && !c.has_flag(CLIENT_PENDING_WRITE) {
            c.flags |= CLIENT_PENDING_WRITE;
            srv.clients_pending_write.push(token);
        }
        if c.has_flag(CLIENT_PENDING_READ) {
            srv.clients_pending_read.push(token);
        }
    }
    srv.clients.insert(token, c);
}

/// processEventsWhileBlocked: serve OTHER clients from inside a long
/// operation (a script past busy-reply-threshold, called from its hook).
/// Up to 4 passes of: poll without waiting, accept, read and run commands,
/// write replies, close clients marked for closing; stop early when a pass
/// found nothing. Most commands get BUSY (see server::process_command), but
/// SCRIPT KILL, FUNCTION KILL and SHUTDOWN NOSAVE get through.
///
/// No cron and no blocked-client, expiry or pause work runs here (Redis
/// replaces serverCron by a small whileBlockedCron): the script must not
/// see keys expire or data change under it. The running client is out of
/// `srv.clients`, so its own input is left alone; a readable event for it
/// is remembered in `clients_pending_read` for after the script (mio only
/// reports new readiness once).
pub fn process_events_while_blocked(srv: &mut Server) {
    let mut events = Events::with_capacity(EVENTS_PER_POLL);
    for _ in 0..4 {
        // First what the outer pass had not reached when the script began
        // (Redis's level-triggered epoll would report it again), then new
        // events.
        let mut processed = 0;
        while let Some(event) = srv.fired_events.pop_front() {
            processed += 1;
            handle_event_while_blocked(srv, event);
        }
        if let Err(e) = srv.poll.poll(&mut events, Some(Duration::ZERO)) {
            if e.kind() != io::ErrorKind::Interrupted {
                server_log(LogLevel::Warning, &format!("poll() failed: {e}"));
            }
        }
        let pending: Vec<Token> = std::mem::take(&mut srv.clients_pending_read);
        for token in pending {
            if srv.clients.contains_key(&token) {
                processed += 1;
                handle_client_readable(srv, token);
            } else {
                srv.clients_pending_read.push(token);
            }
        }
        for e in events.iter() {
            processed += 1;
            let event = FiredEvent {
                token: e.token(),
                readable: e.is_readable() || e.is_read_closed() || e.is_error(),
                writable: e.is_writable(),
            };
            handle_event_while_blocked(srv, event);
        }
        free_clients_in_async_free_queue(srv);
        handle_clients_with_pending_writes(srv);
        free_clients_in_async_free_queue(srv);
        if processed == 0 {
            break;
        }
    }
}

/// One event during a busy script: as usual, except that the client
/// running the script (out of the table) is read after the script.
fn handle_event_while_blocked(srv: &mut Server, event: FiredEvent) {
    let is_listener = event.token == LISTENER_TOKEN || event.token.0 < srv.listeners.len();
    if !is_listener && !srv.clients.contains_key(&event.token) {
        if event.readable && !srv.clients_pending_read.contains(&event.token) {
            srv.clients_pending_read.push(event.token);
        }
        return;
    }
    handle_fired_event(srv, event);
}

/// freeClientsInAsyncFreeQueue: close the clients marked for closing.
fn free_clients_in_async_free_queue(srv: &mut Server) {
    let to_close: Vec<Token> = std::mem::take(&mut srv.clients_to_close);
    for token in to_close {
        free_client(srv, token);
    }
}

/// freeClient: unregister and drop the connection.
pub fn free_client(srv: &mut Server, token: Token) {
    if let Some(mut c) = srv.clients.remove(&token) {
        // A client that disconnects while blocked leaves its queues, and
        // a watching one its watched keys.
        crate::blocked::unblock_client(srv, &mut c);
        crate::multi::discard_transaction(srv, &mut c);
        // ... and every channel and pattern it subscribed to.
        crate::pubsub::pubsub_unsubscribe_all(srv, &mut c);
        if let Some(stream) = c.stream.as_mut() {
            let _ = srv.poll.registry().deregister(stream);
        }
        srv.clients_pending_write.retain(|t| *t != token);
        srv.clients_pending_read.retain(|t| *t != token);
        server_log(
            LogLevel::Verbose,
            &format!("Client closed: id={} addr={}", c.id, c.addr),
        );
    }
}

/// prepareForShutdown + exit: flush what can be flushed and leave.
pub fn prepare_for_shutdown_and_exit(srv: &mut Server) -> ! {
    crate::ldb::ldb_kill_forked_sessions();
    server_log(LogLevel::Warning, "Redis is now ready to exit, bye bye...");
    // Give clients with pending replies one last chance (the SHUTDOWN caller
    // gets no reply in Redis either: the connection just closes).
    let _ = srv;
    std::process::exit(0);
}
