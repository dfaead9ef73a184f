//! The loop flight recorder and "who waited for whom" (blame): a
//! redis-lite extension, no Redis twin.
//!
//! SLOWLOG and LATENCY say *that* a command was slow. The recorder keeps
//! the last N loop passes (what `poll` slept, how many events fired, every
//! command run with its queue wait, the before-sleep and cron phases) and
//! exports them as Chrome trace-event JSON, which Perfetto UI and
//! chrome://tracing open: one track for the main thread, one for the
//! `bio_lazy_free` worker (lazyfree/src/trace.rs), commands as slices
//! nested in their pass, a counter of clients waiting to be read.
//!
//! Blame answers the question the slow log cannot: while a command ran,
//! which *other* clients had input waiting, and for how long? At the end
//! of each command that ran at least BLAME_MIN_RUN_US, every other
//! client's socket is peeked (MSG_PEEK, SO_TIMESTAMP): bytes waiting there
//! arrived at the kernel's receive timestamp, so their wait caused by this
//! command is `end - max(start, arrival)`. Bytes already read but not yet
//! run (a pipeline) count from the read that brought them.
//!
//! Everything is off by default: `ae_process_events` and `call()` test one
//! relaxed atomic ([`on`]) and do nothing more. `DEBUG RECORDER START`
//! turns recording and blame on (see debug.rs). Times are microseconds:
//! sub-millisecond stalls, which LATENCY (milliseconds) rounds away, show.
//!
//! The state lives in a thread-local (the main thread's), not in `Server`,
//! so that the hooks in ae.rs and server.rs stay one line each.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use lazyfree::trace::{self as bio_trace, micros_since_epoch};

use crate::networking::Client;
use crate::server::Server;

/// RECORDER_DEFAULT_PASSES: passes kept by default. A busy server runs a
/// few thousand passes a second (one per poll wake-up), so this is a few
/// seconds of history.
pub const RECORDER_DEFAULT_PASSES: usize = 10_000;
/// RECORDER_MAX_COMMANDS_PER_PASS: commands kept per pass; a pass that runs
/// more (a deep pipeline) keeps the first ones and counts the rest, so one
/// pass cannot take unbounded memory.
pub const RECORDER_MAX_COMMANDS_PER_PASS: usize = 256;
/// BLAME_MIN_RUN_US: commands shorter than this are not checked for
/// waiting clients (the peek costs one syscall per client); 100 us is ten
/// times a GET, well below what LATENCY can see.
pub const BLAME_MIN_RUN_US: u64 = 100;
/// BLAME_WORST_KEPT: the ranked list of worst offenders keeps this many.
pub const BLAME_WORST_KEPT: usize = 32;
/// RECORDER_MAX_COMMANDS: commands kept over the whole ring (about 200
/// bytes each: some 50 MB); the oldest passes go first past it.
pub const RECORDER_MAX_COMMANDS: usize = 250_000;
/// Bytes of a key or address kept in a record.
const RECORDER_MAX_NAME: usize = 64;

/// Whether recording and blame are on (one relaxed load per pass).
static ON: AtomicBool = AtomicBool::new(false);

/// Whether the recorder is on.
#[inline]
pub fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// One command run, as the recorder keeps it.
#[derive(Clone, Debug)]
pub struct CommandRecord {
    pub client_id: u64,
    pub db: usize,
    /// The full name as CLIENT LIST shows it ("get", "config|get").
    pub name: &'static str,
    pub key: Option<Box<[u8]>>,
    pub start_us: u64,
    pub duration_us: u64,
    pub reply_bytes: u64,
    /// From the read that completed the command to the start of its run;
    /// from the bytes' arrival in the socket when a blamed command (one
    /// that ran while they waited there) saw them: "queued behind KEYS".
    pub queue_wait_us: u64,
    /// Other clients with input waiting while it ran, and their summed wait.
    pub waiters: u32,
    pub waited_us: u64,
}

/// A phase of a pass (before-sleep, cron, ...), with a few counters.
#[derive(Clone, Debug)]
pub struct PhaseRecord {
    pub name: &'static str,
    pub start_us: u64,
    pub duration_us: u64,
    pub args: Vec<(&'static str, u64)>,
}

/// One loop pass.
#[derive(Clone, Debug, Default)]
pub struct PassRecord {
    pub start_us: u64,
    pub end_us: u64,
    pub poll_start_us: u64,
    pub poll_us: u64,
    pub fired: u32,
    /// Clients read this pass because an earlier one left bytes unread,
    /// plus the events poll returned: the "pending clients" counter.
    pub pending_clients: u32,
    pub commands: Vec<CommandRecord>,
    pub commands_dropped: u32,
    pub phases: Vec<PhaseRecord>,
    /// Run from inside a busy script (processEventsWhileBlocked).
    pub while_blocked: bool,
}

/// Per-command blame totals.
#[derive(Clone, Debug, Default)]
pub struct BlameTotals {
    pub calls: u64,
    pub run_us: u64,
    pub queue_wait_us: u64,
    pub waiters: u64,
    pub waited_us: u64,
}

/// One of the worst offenders (by client wait caused).
#[derive(Clone, Debug)]
pub struct Offender {
    pub what: String,
    pub client_id: u64,
    pub start_us: u64,
    pub run_us: u64,
    pub waiters: u32,
    pub waited_us: u64,
}

struct Recorder {
    capacity: usize,
    passes: VecDeque<PassRecord>,
    current: Option<PassRecord>,
    passes_dropped: u64,
    blame: HashMap<&'static str, BlameTotals>,
    /// Client id -> address, once per client (not once per command).
    addrs: HashMap<u64, String>,
    worst: Vec<Offender>,
    /// Sockets we turned SO_TIMESTAMP on for.
    stamped: HashSet<i32>,
    /// Commands held by `passes` (RECORDER_MAX_COMMANDS bounds it).
    commands_kept: usize,
    /// Client id -> when the bytes of its next command reached the kernel,
    /// as a blamed command's peek found them: that command's queue wait
    /// then counts from there, not from the read that came later.
    arrivals: HashMap<u64, Instant>,
}

thread_local! {
    static REC: RefCell<Recorder> = RefCell::new(Recorder {
        capacity: RECORDER_DEFAULT_PASSES,
        passes: VecDeque::new(),
        current: None,
        passes_dropped: 0,
        blame: HashMap::new(),
        addrs: HashMap::new(),
        worst: Vec::new(),
        stamped: HashSet::new(),
        commands_kept: 0,
        arrivals: HashMap::new(),
    });
}

fn now_us() -> u64 {
    micros_since_epoch(Instant::now())
}

fn clip(b: &[u8]) -> Box<[u8]> {
    b[..b.len().min(RECORDER_MAX_NAME)].into()
}

// ---- switching ----

/// DEBUG RECORDER START [passes].
pub fn start(srv: &Server, caller_fd: i32, passes: Option<usize>) {
    bio_trace::epoch();
    REC.with(|r| {
        let mut r = r.borrow_mut();
        if let Some(n) = passes {
            r.capacity = n.max(1);
        }
        while r.passes.len() > r.capacity {
            if let Some(old) = r.passes.pop_front() {
                r.commands_kept -= old.commands.len();
            }
        }
    });
    // The first SO_TIMESTAMP turns on the kernel's receive timestamps for
    // every packet, so that bytes already queued on a socket stamped later
    // carry their arrival time too.
    enable_timestamps(caller_fd);
    for c in srv.clients.values() {
        enable_timestamps(c.fd);
    }
    ON.store(true, Ordering::Relaxed);
    bio_trace::RECORDING.store(true, Ordering::Relaxed);
}

/// DEBUG RECORDER STOP: keep what was recorded.
pub fn stop() {
    ON.store(false, Ordering::Relaxed);
    bio_trace::RECORDING.store(false, Ordering::Relaxed);
    REC.with(|r| r.borrow_mut().current = None);
}

/// DEBUG RECORDER RESET: forget the passes and the lazy-free jobs.
pub fn reset_recording() {
    REC.with(|r| {
        let mut r = r.borrow_mut();
        r.passes.clear();
        r.commands_kept = 0;
        r.passes_dropped = 0;
        r.addrs.clear();
        r.arrivals.clear();
    });
    bio_trace::reset_jobs();
}

/// DEBUG BLAME RESET.
pub fn reset_blame() {
    REC.with(|r| {
        let mut r = r.borrow_mut();
        r.blame.clear();
        r.worst.clear();
    });
}

// ---- hooks in the loop pass (ae.rs) ----

/// The pass begins (before before_sleep).
pub fn pass_begin(while_blocked: bool) {
    REC.with(|r| {
        r.borrow_mut().current = Some(PassRecord {
            start_us: now_us(),
            while_blocked,
            ..Default::default()
        })
    });
}

/// Record a phase that ran from `start` until now.
pub fn phase(name: &'static str, start: Instant, args: Vec<(&'static str, u64)>) {
    let duration_us = start.elapsed().as_micros() as u64;
    REC.with(|r| {
        if let Some(p) = r.borrow_mut().current.as_mut() {
            p.phases.push(PhaseRecord {
                name,
                start_us: micros_since_epoch(start),
                duration_us,
                args,
            });
        }
    });
}

/// poll() returned: how long it slept and what it found.
pub fn pass_polled(poll_start: Instant, fired: usize, pending: usize) {
    REC.with(|r| {
        if let Some(p) = r.borrow_mut().current.as_mut() {
            p.poll_start_us = micros_since_epoch(poll_start);
            p.poll_us = poll_start.elapsed().as_micros() as u64;
            p.fired = fired as u32;
            p.pending_clients = (fired + pending) as u32;
        }
    });
}

/// The pass ends: into the ring.
pub fn pass_end() {
    REC.with(|r| {
        let mut r = r.borrow_mut();
        if let Some(mut p) = r.current.take() {
            p.end_us = now_us();
            r.commands_kept += p.commands.len();
            r.passes.push_back(p);
            // Bounded twice: by passes, and by the commands they hold (a
            // pipelined benchmark fills every pass with hundreds).
            while r.passes.len() > r.capacity || r.commands_kept > RECORDER_MAX_COMMANDS {
                let Some(old) = r.passes.pop_front() else {
                    break;
                };
                r.commands_kept -= old.commands.len();
                r.passes_dropped += 1;
            }
        }
    });
}

// ---- hooks in call() (server.rs) ----

/// Before the handler: the reply length so far.
pub fn call_begin(c: &Client) -> usize {
    c.reply.len()
}

/// After the handler: record the command, and blame it for the clients
/// that waited while it ran.
pub fn call_end(
    srv: &Server,
    c: &Client,
    name: &'static str,
    reply_len_before: usize,
    start: Instant,
    micros: u64,
) {
    let start_us = micros_since_epoch(start);
    let end = start + std::time::Duration::from_micros(micros);
    // Queued since the read that completed it, or since its bytes arrived
    // when a blamed command's peek saw them waiting in the socket.
    let queued_since = REC
        .with(|r| r.borrow_mut().arrivals.remove(&c.id))
        .map_or(c.last_interaction, |a| a.min(c.last_interaction));
    let queue_wait_us = start.saturating_duration_since(queued_since).as_micros() as u64;
    let (waiters, waited_us) = if micros >= BLAME_MIN_RUN_US {
        clients_waiting(srv, start, end)
    } else {
        (0, 0)
    };
    let key = c.argv.get(1).map(|k| clip(k));
    REC.with(|r| {
        let mut r = r.borrow_mut();
        let totals = r.blame.entry(name).or_default();
        totals.calls += 1;
        totals.run_us += micros;
        totals.queue_wait_us += queue_wait_us;
        totals.waiters += waiters as u64;
        totals.waited_us += waited_us;
        if waiters > 0 {
            let what = match &key {
                Some(k) => format!(
                    "{} {}",
                    name.to_ascii_uppercase(),
                    String::from_utf8_lossy(k)
                ),
                None => name.to_ascii_uppercase(),
            };
            r.worst.push(Offender {
                what,
                client_id: c.id,
                start_us,
                run_us: micros,
                waiters,
                waited_us,
            });
            r.worst.sort_by_key(|o| std::cmp::Reverse(o.waited_us));
            r.worst.truncate(BLAME_WORST_KEPT);
        }
        r.addrs.entry(c.id).or_insert_with(|| c.addr.clone());
        if let Some(p) = r.current.as_mut() {
            if p.commands.len() >= RECORDER_MAX_COMMANDS_PER_PASS {
                p.commands_dropped += 1;
                return;
            }
            p.commands.push(CommandRecord {
                client_id: c.id,
                db: c.db,
                name,
                key,
                start_us,
                duration_us: micros,
                reply_bytes: c.reply.len().saturating_sub(reply_len_before) as u64,
                queue_wait_us,
                waiters,
                waited_us,
            });
        }
    });
}

/// The other clients with input waiting at `end`, and their summed wait
/// since `max(start, arrival)`.
fn clients_waiting(srv: &Server, start: Instant, end: Instant) -> (u32, u64) {
    let mut waiters = 0;
    let mut waited = 0u64;
    for other in srv.clients.values() {
        let arrival = if !other.querybuf.is_empty() {
            // Read already (a pipeline's next command): since that read.
            Some(other.last_interaction)
        } else if other.fd >= 0 {
            peek_arrival(other.fd, start)
        } else {
            None
        };
        let Some(arrival) = arrival else { continue };
        let from = arrival.max(start);
        if from < end {
            waiters += 1;
            waited += (end - from).as_micros() as u64;
            if other.querybuf.is_empty() {
                REC.with(|r| {
                    r.borrow_mut().arrivals.entry(other.id).or_insert(arrival);
                });
            }
        }
    }
    (waiters, waited)
}

/// SO_TIMESTAMP on one socket, so that peeks report arrival times.
fn enable_timestamps(fd: i32) {
    if fd < 0 {
        return;
    }
    let one: libc::c_int = 1;
    // SAFETY: setsockopt on a socket fd we own, with a valid int option.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMP,
            &one as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
    REC.with(|r| r.borrow_mut().stamped.insert(fd));
}

/// Whether bytes wait in `fd`'s receive queue, and when the first of them
/// arrived (the kernel's receive timestamp, converted to an Instant; the
/// start of the run when the kernel gave none).
fn peek_arrival(fd: i32, start: Instant) -> Option<Instant> {
    if !REC.with(|r| r.borrow().stamped.contains(&fd)) {
        enable_timestamps(fd);
    }
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr() as *mut libc::c_void,
        iov_len: 1,
    };
    let mut control = [0u64; 16];
    // SAFETY: msghdr is plain data; zeroed is a valid empty header.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr() as *mut libc::c_void;
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: a non-blocking peek into our 1-byte buffer and control array.
    let n = unsafe { libc::recvmsg(fd, &mut msg, libc::MSG_PEEK | libc::MSG_DONTWAIT) };
    if n <= 0 {
        return None;
    }
    // SAFETY: walking the control messages the kernel just wrote.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_TIMESTAMP {
                let tv = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg) as *const libc::timeval);
                let arrived_unix_us = tv.tv_sec as i64 * 1_000_000 + tv.tv_usec as i64;
                let now_unix_us = crate::server::ustime();
                let ago = (now_unix_us - arrived_unix_us).max(0) as u64;
                return Instant::now().checked_sub(std::time::Duration::from_micros(ago));
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
    }
    // Bytes wait, but the kernel did not stamp them: count from the start.
    Some(start)
}

// ---- reading it back ----

/// DEBUG RECORDER STATUS: one line per fact.
pub fn status_lines() -> Vec<String> {
    REC.with(|r| {
        let r = r.borrow();
        let commands: usize = r.passes.iter().map(|p| p.commands.len()).sum();
        let phases: usize = r.passes.iter().map(|p| p.phases.len()).sum();
        let bytes = r.passes.len() * std::mem::size_of::<PassRecord>()
            + commands * (std::mem::size_of::<CommandRecord>() + 2 * RECORDER_MAX_NAME)
            + phases * (std::mem::size_of::<PhaseRecord>() + 48);
        vec![
            format!("recording:{}", on() as u8),
            format!("passes:{}", r.passes.len()),
            format!("capacity:{}", r.capacity),
            format!("passes_dropped:{}", r.passes_dropped),
            format!("commands:{commands}"),
            format!("bio_jobs:{}", bio_trace::recorded_jobs().len()),
            format!("memory_bytes:{bytes}"),
            format!(
                "memory_bytes_max:{}",
                r.capacity * std::mem::size_of::<PassRecord>()
                    + RECORDER_MAX_COMMANDS.min(r.capacity * RECORDER_MAX_COMMANDS_PER_PASS)
                        * (std::mem::size_of::<CommandRecord>() + 2 * RECORDER_MAX_NAME)
            ),
        ]
    })
}

/// DEBUG BLAME: the worst offenders, worst first, as sentences.
pub fn blame_lines() -> Vec<String> {
    REC.with(|r| {
        r.borrow()
            .worst
            .iter()
            .map(|o| {
                format!(
                    "`{}` (client {}) ran {:.3} ms; {} clients waited {:.3} ms in total because of it",
                    o.what,
                    o.client_id,
                    o.run_us as f64 / 1000.0,
                    o.waiters,
                    o.waited_us as f64 / 1000.0
                )
            })
            .collect()
    })
}

/// DEBUG BLAME COMMANDS: per-command totals, most wait caused first.
pub fn blame_command_lines() -> Vec<String> {
    REC.with(|r| {
        let r = r.borrow();
        let mut rows: Vec<(&&'static str, &BlameTotals)> = r.blame.iter().collect();
        rows.sort_by(|a, b| b.1.waited_us.cmp(&a.1.waited_us).then(a.0.cmp(b.0)));
        rows.iter()
            .map(|(name, t)| {
                format!(
                    "{}: calls={} run_us={} queue_wait_us={} waiters={} waited_us={}",
                    name.to_ascii_uppercase(),
                    t.calls,
                    t.run_us,
                    t.queue_wait_us,
                    t.waiters,
                    t.waited_us
                )
            })
            .collect()
    })
}

fn json_str(out: &mut String, s: &str) {
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// MAIN_TID / BIO_TID: the two tracks of the trace.
const MAIN_TID: u32 = 1;
const BIO_TID: u32 = 2;

fn slice(
    out: &mut String,
    name: &str,
    cat: &str,
    tid: u32,
    ts: u64,
    dur: u64,
    args: &[(&str, String)],
) {
    out.push_str(",\n{\"ph\":\"X\",\"name\":");
    json_str(out, name);
    let _ = write!(
        out,
        ",\"cat\":\"{cat}\",\"pid\":1,\"tid\":{tid},\"ts\":{ts},\"dur\":{dur},\"args\":{{"
    );
    for (i, (k, v)) in args.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        json_str(out, k);
        out.push(':');
        out.push_str(v);
    }
    out.push_str("}}");
}

/// The whole recording as Chrome trace-event JSON (an object with
/// `traceEvents`; timestamps in microseconds). Returns it and the number
/// of events.
pub fn trace_json() -> (String, usize) {
    let mut out = String::from("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
    out.push_str("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"tid\":0,\"ts\":0,\"args\":{\"name\":\"redis-lite\"}}");
    let _ = write!(out, ",\n{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":{MAIN_TID},\"ts\":0,\"args\":{{\"name\":\"main (event loop)\"}}}}");
    let _ = write!(out, ",\n{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":{BIO_TID},\"ts\":0,\"args\":{{\"name\":\"bio_lazy_free\"}}}}");
    let mut events = 3;
    let q = |s: &str| {
        let mut o = String::new();
        json_str(&mut o, s);
        o
    };
    REC.with(|r| {
        let r = r.borrow();
        for p in r.passes.iter() {
            let name = if p.while_blocked { "loop pass (while blocked)" } else { "loop pass" };
            slice(&mut out, name, "loop", MAIN_TID, p.start_us, p.end_us.saturating_sub(p.start_us), &[
                ("fired", p.fired.to_string()),
                ("commands", p.commands.len().to_string()),
                ("commands_dropped", p.commands_dropped.to_string()),
            ]);
            slice(&mut out, "poll", "loop", MAIN_TID, p.poll_start_us, p.poll_us, &[("fired", p.fired.to_string())]);
            let _ = write!(out, ",\n{{\"ph\":\"C\",\"name\":\"pending clients\",\"pid\":1,\"tid\":{MAIN_TID},\"ts\":{},\"args\":{{\"clients\":{}}}}}", p.poll_start_us + p.poll_us, p.pending_clients);
            events += 3;
            for ph in &p.phases {
                let args: Vec<(&str, String)> = ph.args.iter().map(|(k, v)| (*k, v.to_string())).collect();
                slice(&mut out, ph.name, "phase", MAIN_TID, ph.start_us, ph.duration_us, &args);
                events += 1;
            }
            for c in &p.commands {
                let upper = c.name.to_ascii_uppercase();
                let key = c.key.as_deref().map(|k| String::from_utf8_lossy(k).into_owned());
                let title = match &key {
                    Some(k) => format!("{upper} {k}"),
                    None => upper.clone(),
                };
                let addr = r.addrs.get(&c.client_id).map(String::as_str).unwrap_or("");
                slice(&mut out, &title, "command", MAIN_TID, c.start_us, c.duration_us, &[
                    ("client_id", c.client_id.to_string()),
                    ("addr", q(addr)),
                    ("db", c.db.to_string()),
                    ("command", q(&upper)),
                    ("key", key.as_deref().map(q).unwrap_or_else(|| "null".into())),
                    ("reply_bytes", c.reply_bytes.to_string()),
                    ("queue_wait_us", c.queue_wait_us.to_string()),
                    ("waiters", c.waiters.to_string()),
                    ("waited_us", c.waited_us.to_string()),
                ]);
                events += 1;
            }
        }
    });
    for j in bio_trace::recorded_jobs() {
        slice(
            &mut out,
            &format!("free {}", j.what),
            "lazyfree",
            BIO_TID,
            j.start_us,
            j.duration_us,
            &[
                ("what", q(&j.what)),
                ("effort", j.effort.to_string()),
                (
                    "queue_wait_us",
                    j.start_us.saturating_sub(j.queued_us).to_string(),
                ),
            ],
        );
        events += 1;
    }
    out.push_str("\n]}\n");
    (out, events)
}

/// Run `f` as a named phase of the current pass when recording (the
/// hooks in before_sleep and server_cron); just run it otherwise.
#[inline]
pub fn timed<R>(name: &'static str, f: impl FnOnce() -> R) -> R {
    if !on() {
        return f();
    }
    let start = Instant::now();
    let r = f();
    phase(name, start, Vec::new());
    r
}

// ---- DEBUG RECORDER / DEBUG BLAME (reached from debug.rs) ----

fn reply_lines(c: &mut Client, lines: &[String]) {
    c.add_reply_array_len(lines.len());
    for l in lines {
        c.add_reply_bulk(l.as_bytes());
    }
}

/// DEBUG RECORDER START [passes] | STOP | RESET | STATUS | DUMP path | JSON
pub fn debug_recorder_command(srv: &mut Server, c: &mut Client) {
    let sub = c.arg(2).to_ascii_lowercase();
    match (&sub[..], c.argc()) {
        (b"start", 3) => {
            start(srv, c.fd, None);
            c.add_reply_ok();
        }
        (b"start", 4) => match std::str::from_utf8(c.arg(3))
            .ok()
            .and_then(|s| s.parse::<usize>().ok())
        {
            Some(n) if n > 0 => {
                start(srv, c.fd, Some(n));
                c.add_reply_ok();
            }
            _ => c.add_reply_error("ERR passes must be a positive integer"),
        },
        (b"stop", 3) => {
            stop();
            c.add_reply_ok();
        }
        (b"reset", 3) => {
            reset_recording();
            c.add_reply_ok();
        }
        (b"status", 3) => reply_lines(c, &status_lines()),
        // The trace as one bulk string, for a client on another machine
        // (the lab's --trace): DUMP writes on the server's filesystem.
        (b"json", 3) => {
            let (json, _) = trace_json();
            c.add_reply_bulk(json.as_bytes());
        }
        (b"dump", 4) => {
            let path = String::from_utf8_lossy(c.arg(3)).into_owned();
            let (json, events) = trace_json();
            match std::fs::write(&path, json) {
                Ok(()) => c.add_reply_integer(events as i64),
                Err(e) => c.add_reply_error(&format!("ERR writing {path}: {e}")),
            }
        }
        _ => c.add_reply_subcommand_syntax_error(),
    }
}

/// DEBUG BLAME [COMMANDS | RESET]
pub fn debug_blame_command(c: &mut Client) {
    if c.argc() == 2 {
        return reply_lines(c, &blame_lines());
    }
    let sub = c.arg(2).to_ascii_lowercase();
    match (&sub[..], c.argc()) {
        (b"commands", 3) => reply_lines(c, &blame_command_lines()),
        (b"reset", 3) => {
            reset_blame();
            c.add_reply_ok();
        }
        _ => c.add_reply_subcommand_syntax_error(),
    }
}
