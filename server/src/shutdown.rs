//! Stopping the server: the shutdown signals, prepareForShutdown /
//! finishShutdown, and the crash report (Redis's server.c shutdown section,
//! sigShutdownHandler, and debug.c's bug report).
//!
//! There is exactly one way out of a healthy server, whoever asks:
//!
//! ```text
//! SHUTDOWN command ──────────────┐
//! SIGTERM / SIGINT ─> handler ─> SHUTDOWN_ASAP ─> server_cron ─┤
//!                                                              v
//!                       prepare_for_shutdown -> finish_shutdown -> exit(0)
//! ```
//!
//! A signal handler may run between any two instructions of the loop, in
//! the middle of a hash table insert: it must not touch the keyspace, take
//! a lock, or allocate. So, as in Redis, the handler only logs (with the
//! async-signal-safe `server_log_from_handler`) and sets two atomics; the
//! next `server_cron` tick (at most 1000/hz ms later: poll always wakes for
//! cron, and a signal also interrupts poll itself) sees them and runs the
//! same sequence as the SHUTDOWN command, with the flags of
//! `shutdown-on-sigint` / `shutdown-on-sigterm`.
//!
//! A second SIGINT while that shutdown is pending is the impatient Ctrl-C:
//! the handler exits at once with status 1, without saving.
//!
//! What the sequence does (finishShutdown, in Redis's order): end the Lua
//! debugger's forked sessions, kill a BGSAVE child, save the final RDB when
//! save points are configured (or SHUTDOWN SAVE), remove the pid file, close
//! the listeners (unlinking the unix socket), log "bye bye". A failed save
//! cancels the shutdown unless FORCE was given: the server keeps running,
//! the SHUTDOWN caller gets an error.
//!
//! With replicas that have not acknowledged the whole stream, a shutdown
//! first waits for them, up to `shutdown-timeout` seconds (unless NOW):
//! writes are paused (PAUSE_DURING_SHUTDOWN), REPLCONF GETACK asks the
//! replicas for their offsets, the SHUTDOWN caller is blocked, and
//! `shutdown_cron` finishes once every replica caught up or the time ran
//! out. SHUTDOWN ABORT (or a failed final save) cancels it: the blocked
//! callers get an error, writes go on.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicI64, Ordering};

use crate::log::{server_log, server_log_from_handler, server_log_raw, LogLevel};
use crate::networking::Client;
use crate::server::Server;

/// SHUTDOWN_NOFLAGS / SAVE / NOSAVE / NOW / FORCE: the SHUTDOWN options,
/// and the values of `shutdown-on-sigint` / `shutdown-on-sigterm`.
pub const SHUTDOWN_NOFLAGS: i32 = 0;
pub const SHUTDOWN_SAVE: i32 = 1;
pub const SHUTDOWN_NOSAVE: i32 = 2;
pub const SHUTDOWN_NOW: i32 = 4;
pub const SHUTDOWN_FORCE: i32 = 8;

/// A shutdown that did not happen (the final save failed, or, for SHUTDOWN
/// ABORT, none was pending); the reason is in the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShutdownError;

/// server.shutdown_asap: a signal asked for a shutdown, cron will run it.
static SHUTDOWN_ASAP: AtomicBool = AtomicBool::new(false);
/// server.last_sig_received: which signal (picks the shutdown-on-* flags).
static LAST_SIG_RECEIVED: AtomicI32 = AtomicI32::new(0);
/// server.shutdown_mstime: when a shutdown waiting for its replicas gives
/// up waiting (0: no shutdown initiated).
static SHUTDOWN_MSTIME: AtomicI64 = AtomicI64::new(0);
/// server.shutdown_flags: the flags of the shutdown initiated.
static SHUTDOWN_FLAGS: AtomicI32 = AtomicI32::new(0);
/// server.loading: a dataset is being loaded (rdb.rs start_loading; the handler's
/// message differs, and the shutdown then never saves).
static LOADING: AtomicBool = AtomicBool::new(false);
/// The pid file to remove, when one was written (createPidFile).
static PIDFILE: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// Mark a load (rdb.rs start_loading / stop_loading) as running or done.
pub fn set_loading(on: bool) {
    LOADING.store(on, Ordering::SeqCst);
}

/// Did a signal ask for a shutdown that has not run yet?
pub fn shutdown_asap() -> bool {
    SHUTDOWN_ASAP.load(Ordering::SeqCst)
}

/// sigShutdownHandler: async-signal-safe work only (see the file comment).
extern "C" fn sig_shutdown_handler(sig: libc::c_int) {
    let mut msg = match sig {
        libc::SIGINT => "Received SIGINT scheduling shutdown...",
        libc::SIGTERM => "Received SIGTERM scheduling shutdown...",
        _ => "Received shutdown signal, scheduling shutdown...",
    };
    // Ctrl-C twice: the user really wants out, now, without saving.
    if SHUTDOWN_ASAP.load(Ordering::SeqCst) && sig == libc::SIGINT {
        server_log_from_handler(LogLevel::Warning, "You insist... exiting now.");
        remove_temp_file_from_handler();
        // SAFETY: _exit is async-signal-safe (Redis calls exit(1) here;
        // _exit skips the atexit handlers, which is the safe half of it).
        unsafe { libc::_exit(1) };
    } else if LOADING.load(Ordering::SeqCst) {
        msg = "Received shutdown signal during loading, scheduling shutdown.";
    }
    server_log_from_handler(LogLevel::Warning, msg);
    SHUTDOWN_ASAP.store(true, Ordering::SeqCst);
    LAST_SIG_RECEIVED.store(sig, Ordering::SeqCst);
}

/// rdbRemoveTempFile(getpid(), 1): unlink `temp-<pid>.rdb`, the file a
/// SAVE in progress is writing, with a path built on the stack.
fn remove_temp_file_from_handler() {
    let mut path = [0u8; 40];
    let mut digits = [0u8; 20];
    // SAFETY: getpid is async-signal-safe.
    let pid = unsafe { libc::getpid() } as u64;
    let mut n = pid;
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let parts: [&[u8]; 3] = [b"temp-", &digits[i..], b".rdb"];
    let mut len = 0;
    for part in parts {
        path[len..len + part.len()].copy_from_slice(part);
        len += part.len();
    }
    path[len] = 0;
    // SAFETY: a NUL-terminated path on the stack; unlink is async-signal-safe.
    unsafe { libc::unlink(path.as_ptr().cast()) };
}

/// setupSignalHandlers: SIGTERM and SIGINT schedule a clean shutdown,
/// whatever disposition was inherited (a shell starts `cmd &` with SIGINT
/// ignored; sigaction replaces that). Installed by initServer, before the
/// dataset is loaded.
pub fn setup_signal_handlers() {
    // SAFETY: a zeroed sigaction with an empty mask and a handler that only
    // does async-signal-safe work; no SA_RESTART, so poll() returns EINTR.
    unsafe {
        let mut act: libc::sigaction = std::mem::zeroed();
        libc::sigemptyset(&mut act.sa_mask);
        act.sa_flags = 0;
        act.sa_sigaction = sig_shutdown_handler as *const () as libc::sighandler_t;
        libc::sigaction(libc::SIGTERM, &act, std::ptr::null_mut());
        libc::sigaction(libc::SIGINT, &act, std::ptr::null_mut());
    }
}

/// isShutdownInitiated: a shutdown waits for its replicas.
pub fn is_shutdown_initiated() -> bool {
    SHUTDOWN_MSTIME.load(Ordering::SeqCst) != 0
}

/// INFO server's `shutdown_in_milliseconds`, while a shutdown waits.
pub fn shutdown_in_milliseconds() -> Option<i64> {
    let end = SHUTDOWN_MSTIME.load(Ordering::SeqCst);
    (end != 0).then(|| end - crate::server::mstime())
}

/// isReadyToShutdown: every replica acknowledged the whole stream.
fn is_ready_to_shutdown(srv: &Server) -> bool {
    let off = srv.repl.master_repl_offset;
    srv.repl.slaves.iter().all(|t| {
        srv.clients
            .get(t)
            .is_none_or(|s| s.repl.repl_ack_off == off)
    })
}

/// The shutdown part of serverCron: act on a signal the handler recorded,
/// or finish a shutdown that waited for its replicas.
pub fn shutdown_cron(srv: &mut Server) {
    if is_shutdown_initiated() {
        let due = crate::server::mstime() >= SHUTDOWN_MSTIME.load(Ordering::SeqCst);
        if (due || is_ready_to_shutdown(srv))
            && finish_shutdown(srv, SHUTDOWN_FLAGS.load(Ordering::SeqCst)).is_ok()
        {
            std::process::exit(0);
        }
        // A failed shutdown was cancelled and logged: go on running.
        return;
    }
    if !SHUTDOWN_ASAP.load(Ordering::SeqCst) {
        return;
    }
    let sig = LAST_SIG_RECEIVED.load(Ordering::SeqCst);
    let mut flags = SHUTDOWN_NOFLAGS;
    if sig == libc::SIGINT && srv.config.shutdown_on_sigint != 0 {
        flags = srv.config.shutdown_on_sigint;
    } else if sig == libc::SIGTERM && srv.config.shutdown_on_sigterm != 0 {
        flags = srv.config.shutdown_on_sigterm;
    }
    if prepare_for_shutdown(srv, flags).is_ok() {
        std::process::exit(0);
    }
}

/// whileBlockedCron's shutdown: a signal arrived while loading. Exit
/// without saving; if even that fails, log and forget the signal.
pub fn shutdown_while_loading(srv: &mut Server) {
    if prepare_for_shutdown(srv, SHUTDOWN_NOSAVE).is_ok() {
        std::process::exit(0);
    }
    server_log(
        LogLevel::Warning,
        "SIGTERM received but errors trying to shut down the server, check the logs for more information",
    );
    SHUTDOWN_ASAP.store(false, Ordering::SeqCst);
    LAST_SIG_RECEIVED.store(0, Ordering::SeqCst);
}

/// A crash removes the pid file of an unsupervised daemon only (bugReportEnd).
static REMOVE_PIDFILE_ON_CRASH: AtomicBool = AtomicBool::new(false);

/// The pid file finish_shutdown removes (createPidFile records it).
pub fn set_pidfile(path: &str, remove_on_crash: bool) {
    *PIDFILE.lock().unwrap_or_else(|e| e.into_inner()) = Some(path.to_string());
    REMOVE_PIDFILE_ON_CRASH.store(remove_on_crash, Ordering::SeqCst);
}

/// closeChildUnusedResourceAfterFork's `server.pidfile = NULL`: a forked
/// child never removes the parent's pid file (on exit or crash).
pub fn forget_pidfile() {
    *PIDFILE.lock().unwrap_or_else(|e| e.into_inner()) = None;
}

/// The pid file written at start-up, if any.
pub fn pidfile() -> Option<String> {
    PIDFILE.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// prepareForShutdown: the common entry of SHUTDOWN and the signals.
/// Ok means "exit(0) now"; Err means the shutdown failed (logged, the
/// server goes on).
// redis: server.c prepareForShutdown
pub fn prepare_for_shutdown(srv: &mut Server, mut flags: i32) -> Result<(), ShutdownError> {
    if is_shutdown_initiated() {
        return Err(ShutdownError);
    }
    // Never save a half-loaded dataset over the file being loaded.
    if LOADING.load(Ordering::SeqCst) {
        flags = (flags & !SHUTDOWN_SAVE) | SHUTDOWN_NOSAVE;
    }
    SHUTDOWN_FLAGS.store(flags, Ordering::SeqCst);
    server_log(LogLevel::Warning, "User requested shutdown...");
    if crate::server::supervised_mode() == crate::server::SUPERVISED_SYSTEMD {
        crate::server::redis_communicate_systemd("STOPPING=1\n");
    }
    // Replicas behind: let them catch up first (see the file comment).
    let timeout = srv.config.num("shutdown-timeout");
    if flags & SHUTDOWN_NOW == 0 && timeout != 0 && !is_ready_to_shutdown(srv) {
        SHUTDOWN_MSTIME.store(crate::server::mstime() + timeout * 1000, Ordering::SeqCst);
        if srv.client_pause_type == crate::networking::PauseType::Off {
            send_getack_to_replicas(srv);
        }
        crate::networking::pause_clients(
            srv,
            crate::networking::PausePurpose::DuringShutdown,
            i64::MAX,
            crate::networking::PauseType::Write,
        );
        server_log(
            LogLevel::Notice,
            "Waiting for replicas before shutting down.",
        );
        return Err(ShutdownError);
    }
    finish_shutdown(srv, flags)
}

/// sendGetackToReplicas: ask every replica for its offset now.
fn send_getack_to_replicas(srv: &mut Server) {
    let argv = [
        bytes::Bytes::from_static(b"REPLCONF"),
        bytes::Bytes::from_static(b"GETACK"),
        bytes::Bytes::from_static(b"*"),
    ];
    crate::replication::master::replication_feed_slaves(srv, -1, &argv);
}

/// finishShutdown: the steps, in Redis's order.
// redis: server.c finishShutdown
fn finish_shutdown(srv: &mut Server, flags: i32) -> Result<(), ShutdownError> {
    let save = flags & SHUTDOWN_SAVE != 0;
    let nosave = flags & SHUTDOWN_NOSAVE != 0;
    let force = flags & SHUTDOWN_FORCE != 0;

    // A warning for each replica that is lagging.
    let off = srv.repl.master_repl_offset;
    let now = crate::server::mstime() / 1000;
    let mut lagging = 0;
    let slaves = srv.repl.slaves.clone();
    for t in &slaves {
        let Some(s) = srv.clients.get(t) else {
            continue;
        };
        if s.repl.repl_ack_off != off {
            lagging += 1;
            let online = s.repl.replstate == crate::replication::SlaveState::Online;
            let lag = if online {
                now - s.repl.repl_ack_time
            } else {
                0
            };
            server_log(
                LogLevel::Warning,
                &format!(
                    "Lagging replica {} reported offset {} behind master, lag={lag}, state={}.",
                    crate::replication::master::replication_get_slave_name(s),
                    off - s.repl.repl_ack_off,
                    crate::replication::master::replstate_to_string(s.repl.replstate)
                ),
            );
        }
    }
    if !slaves.is_empty() {
        server_log(
            LogLevel::Notice,
            &format!(
                "{} of {} replicas are in sync when shutting down.",
                slaves.len() - lagging,
                slaves.len()
            ),
        );
    }

    crate::ldb::ldb_kill_forked_sessions();

    // A BGSAVE child could overwrite the final save with an older dataset.
    if let Some(pid) = srv.rdb.child_pid {
        server_log(
            LogLevel::Warning,
            "There is a child saving an .rdb. Killing it!",
        );
        crate::rdb::kill_rdb_child(srv);
        crate::rdb::rdb_remove_temp_file(pid);
    }

    // The AOF: stop a rewrite child, flush and fsync (aof.rs).
    if crate::aof::aof_prepare_for_shutdown(srv, force).is_err() {
        server_log(
            LogLevel::Warning,
            "Errors trying to shut down the server. Check the logs for more information.",
        );
        cancel_shutdown(srv);
        return Err(ShutdownError);
    }

    if (!srv.config.save_params.is_empty() && !nosave) || save {
        server_log(
            LogLevel::Notice,
            "Saving the final RDB snapshot before exiting.",
        );
        if crate::server::supervised_mode() == crate::server::SUPERVISED_SYSTEMD {
            crate::server::redis_communicate_systemd("STATUS=Saving the final RDB snapshot\n");
        }
        if crate::rdb::rdb_save(srv).is_err() {
            if force {
                server_log(
                    LogLevel::Warning,
                    "Error trying to save the DB. Exit anyway.",
                );
            } else {
                server_log(
                    LogLevel::Warning,
                    "Error trying to save the DB, can't exit.",
                );
                if crate::server::supervised_mode() == crate::server::SUPERVISED_SYSTEMD {
                    crate::server::redis_communicate_systemd(
                        "STATUS=Error trying to save the DB, can't exit.\n",
                    );
                }
                server_log(
                    LogLevel::Warning,
                    "Errors trying to shut down the server. Check the logs for more information.",
                );
                cancel_shutdown(srv);
                return Err(ShutdownError);
            }
        }
    }

    if let Some(path) = pidfile() {
        server_log(LogLevel::Notice, "Removing the pid file.");
        let _ = std::fs::remove_file(path);
    }

    // Close the listening sockets: a restarted server can bind at once.
    crate::server::close_listening_sockets(srv, true);

    server_log(LogLevel::Warning, "Redis is now ready to exit, bye bye...");
    Ok(())
}

/// cancelShutdown: back to normal after a failed or aborted shutdown:
/// the blocked SHUTDOWN callers get an error, writes go on.
fn cancel_shutdown(srv: &mut Server) {
    SHUTDOWN_ASAP.store(false, Ordering::SeqCst);
    SHUTDOWN_FLAGS.store(0, Ordering::SeqCst);
    SHUTDOWN_MSTIME.store(0, Ordering::SeqCst);
    LAST_SIG_RECEIVED.store(0, Ordering::SeqCst);
    reply_to_clients_blocked_on_shutdown(srv);
    crate::networking::unpause_clients(srv, crate::networking::PausePurpose::DuringShutdown);
}

/// replyToClientsBlockedOnShutdown (blocked.c).
fn reply_to_clients_blocked_on_shutdown(srv: &mut Server) {
    let tokens: Vec<mio::Token> = srv
        .clients
        .iter()
        .filter(|(_, c)| is_blocked_on_shutdown(c))
        .map(|(t, _)| *t)
        .collect();
    for t in tokens {
        let Some(mut c) = srv.clients.remove(&t) else {
            continue;
        };
        reply_shutdown_failed(srv, &mut c);
        // The loop writes the reply and reads what the client sent next.
        srv.unblocked_clients.push(t);
        srv.clients.insert(t, c);
    }
}

fn is_blocked_on_shutdown(c: &Client) -> bool {
    c.bstate
        .as_ref()
        .is_some_and(|b| b.btype == crate::blocked::BlockType::Shutdown)
}

/// One blocked SHUTDOWN caller learns the shutdown did not happen.
fn reply_shutdown_failed(srv: &mut Server, c: &mut Client) {
    c.add_reply_error("ERR Errors trying to SHUTDOWN. Check logs.");
    crate::blocked::unblock_client(srv, c);
}

/// abortShutdown (SHUTDOWN ABORT): cancel a shutdown waiting for its
/// replicas, or forget a signal's pending one. Err when none was pending.
pub fn abort_shutdown(srv: &mut Server) -> Result<(), ShutdownError> {
    if is_shutdown_initiated() {
        cancel_shutdown(srv);
    } else if !SHUTDOWN_ASAP.swap(false, Ordering::SeqCst) {
        return Err(ShutdownError);
    }
    server_log(LogLevel::Notice, "Shutdown manually aborted.");
    Ok(())
}

/// SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]
// redis: db.c shutdownCommand
pub fn shutdown_command(srv: &mut Server, c: &mut Client) {
    let mut flags = SHUTDOWN_NOFLAGS;
    let mut abort = false;
    for i in 1..c.argc() {
        let a = c.arg(i);
        if a.eq_ignore_ascii_case(b"nosave") {
            flags |= SHUTDOWN_NOSAVE;
        } else if a.eq_ignore_ascii_case(b"save") {
            flags |= SHUTDOWN_SAVE;
        } else if a.eq_ignore_ascii_case(b"now") {
            flags |= SHUTDOWN_NOW;
        } else if a.eq_ignore_ascii_case(b"force") {
            flags |= SHUTDOWN_FORCE;
        } else if a.eq_ignore_ascii_case(b"abort") {
            abort = true;
        } else {
            return c.add_reply_syntax_error();
        }
    }
    if (abort && flags != SHUTDOWN_NOFLAGS)
        || (flags & SHUTDOWN_NOSAVE != 0 && flags & SHUTDOWN_SAVE != 0)
    {
        return c.add_reply_syntax_error();
    }
    if abort {
        return match abort_shutdown(srv) {
            Ok(()) => c.add_reply_ok(),
            Err(ShutdownError) => c.add_reply_error("ERR No shutdown in progress."),
        };
    }
    // Waiting for replicas would block: not allowed inside EXEC or a script.
    if flags & SHUTDOWN_NOW == 0 && c.has_flag(crate::networking::CLIENT_DENY_BLOCKING) {
        return c.add_reply_error(
            "ERR SHUTDOWN without NOW or ABORT isn't allowed for DENY BLOCKING client",
        );
    }
    // While a script is busy only SHUTDOWN NOSAVE may stop the server.
    if flags & SHUTDOWN_NOSAVE == 0 && crate::script::script_is_timedout(srv) {
        return c.add_reply_error(crate::script::script_busy_error(srv));
    }
    // Blocked until the shutdown happens (the process exits), fails or is
    // aborted (shutdown.rs replies then).
    crate::blocked::block_for_keys(srv, c, crate::blocked::BlockType::Shutdown, &[], 0);
    if prepare_for_shutdown(srv, flags).is_ok() {
        std::process::exit(0);
    }
    // Still waiting for the replicas: stay blocked. Failed: this caller
    // (out of the client table while it runs) learns it here.
    if !is_shutdown_initiated() && is_blocked_on_shutdown(c) {
        reply_shutdown_failed(srv, c);
    }
}

// ------------------------------------------------------------ crash report

thread_local! {
    /// How many `catch_panic` frames are active on this thread.
    static PANIC_GUARDS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// catch_unwind for the few places that turn a Rust bug into an error
/// reply instead of a crash (the Lua callbacks, which must not unwind
/// through C frames): the panic hook then logs the report but lets the
/// caller recover.
pub fn catch_panic<R>(f: impl FnOnce() -> R) -> std::thread::Result<R> {
    PANIC_GUARDS.with(|g| g.set(g.get() + 1));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    PANIC_GUARDS.with(|g| g.set(g.get() - 1));
    r
}

/// A panic is Redis's serverPanic: a bug report in the log (the banner,
/// the Guru Meditation line with the message and where, the backtrace),
/// the pid file removed, then the process aborts. Installed at start-up;
/// the report goes where log lines go (the logfile, or stdout).
// redis: debug.c _serverPanic, bugReportStart, logStackTrace, bugReportEnd
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        server_log_raw(
            LogLevel::Warning,
            "\n\n=== REDIS BUG REPORT START: Cut & paste starting from here ===\n",
        );
        server_log(
            LogLevel::Warning,
            "------------------------------------------------",
        );
        server_log(
            LogLevel::Warning,
            "!!! Software Failure. Press left mouse button to continue",
        );
        let msg = if let Some(s) = info.payload().downcast_ref::<&str>() {
            (*s).to_string()
        } else if let Some(s) = info.payload().downcast_ref::<String>() {
            s.clone()
        } else {
            "panic".to_string()
        };
        let (file, line) = info
            .location()
            .map(|l| (l.file().to_string(), l.line()))
            .unwrap_or_default();
        server_log(
            LogLevel::Warning,
            &format!("Guru Meditation: {msg} #{file}:{line}"),
        );
        let bt = std::backtrace::Backtrace::force_capture();
        server_log_raw(
            LogLevel::Warning,
            &format!("\n------ STACK TRACE ------\n\nBacktrace:\n{bt}\n"),
        );
        server_log_raw(
            LogLevel::Warning,
            "\n=== REDIS BUG REPORT END. Make sure to include from START to END. ===\n\n       Please report the crash by opening an issue on github:\n\n           http://github.com/redis/redis/issues\n\n  Suspect RAM error? Use redis-server --test-memory to verify it.\n\n  Some other issues could be detected by redis-server --check-system\n",
        );
        if PANIC_GUARDS.with(|g| g.get()) > 0 {
            return; // catch_panic turns it into an error reply
        }
        if REMOVE_PIDFILE_ON_CRASH.load(Ordering::SeqCst) {
            if let Some(path) = pidfile() {
                let _ = std::fs::remove_file(path);
            }
        }
        std::process::abort();
    }));
}
