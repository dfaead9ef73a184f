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
//! Recording must stay cheap while a benchmark runs, so the hot path
//! allocates nothing: `DEBUG RECORDER START` reserves three fixed rings
//! (passes, commands, phases; see [`Ring`]) and every record is plain data
//! of a fixed size, its key and client address copied into inline arrays
//! ([`Inline`]). A pass holds no list of its own: it names the stretch of
//! the command and phase rings it wrote (first sequence number, count).
//! When a ring wraps, the oldest records are overwritten, and a pass whose
//! stretch was overwritten is no longer shown: the trace always holds the
//! newest passes, complete. Names, upper case and JSON are made only when
//! someone reads the recording.
//!
//! Everything is off by default: `ae_process_events` and `call()` test one
//! relaxed atomic ([`on`]) and do nothing more. `DEBUG RECORDER START`
//! turns recording and blame on (see debug.rs). Times are microseconds:
//! sub-millisecond stalls, which LATENCY (milliseconds) rounds away, show.
//! Built without the cargo feature `recorder`, none of this is compiled:
//! the hooks in ae.rs and server.rs are gone, and DEBUG RECORDER / BLAME
//! answer an error (recorder_off.rs stands in for this file).
//!
//! The state lives in a thread-local (the main thread's), not in `Server`,
//! so that the hooks in ae.rs and server.rs stay one line each.

use std::cell::RefCell;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use lazyfree::trace::{self as bio_trace, micros_since_epoch};

use crate::commands::CmdId;
use crate::networking::Client;
use crate::server::Server;

/// RECORDER_DEFAULT_PASSES: passes kept by default. A busy server runs a
/// few thousand passes a second (one per poll wake-up), so this is a few
/// seconds of history.
pub const RECORDER_DEFAULT_PASSES: usize = 10_000;
/// RECORDER_MAX_COMMANDS_PER_PASS: commands kept per pass; a pass that runs
/// more (a deep pipeline) keeps the first ones and counts the rest, so one
/// pass cannot take a large part of the command ring.
pub const RECORDER_MAX_COMMANDS_PER_PASS: u32 = 256;
/// RECORDER_MAX_PHASES_PER_PASS: phases kept per pass (a pass has a few;
/// a cron pass with many databases rehashing has up to two per database).
pub const RECORDER_MAX_PHASES_PER_PASS: u32 = 64;
/// BLAME_MIN_RUN_US: commands shorter than this are not checked for
/// waiting clients (the peek costs one syscall per client); 100 us is ten
/// times a GET, well below what LATENCY can see.
pub const BLAME_MIN_RUN_US: u64 = 100;
/// BLAME_WORST_KEPT: the ranked list of worst offenders keeps this many.
pub const BLAME_WORST_KEPT: usize = 32;
/// RECORDER_MAX_COMMANDS: the command ring's size (about 180 bytes a
/// record: some 45 MB, reserved at START, touched as it fills).
pub const RECORDER_MAX_COMMANDS: usize = 250_000;
/// RECORDER_MAX_PHASES: the phase ring's size (about 100 bytes a record).
pub const RECORDER_MAX_PHASES: usize = 100_000;
/// RECORDER_KEY_BYTES: bytes of a command's first argument kept (a longer
/// key shows clipped).
pub const RECORDER_KEY_BYTES: usize = 48;
/// RECORDER_ADDR_BYTES: bytes of a client address kept; the longest TCP
/// one, `[ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255]:65535`, is 53.
pub const RECORDER_ADDR_BYTES: usize = 56;
/// PHASE_MAX_ARGS: counters a phase carries (before_sleep has three).
pub const PHASE_MAX_ARGS: usize = 3;

/// Whether recording and blame are on (one relaxed load per pass).
static ON: AtomicBool = AtomicBool::new(false);

/// Whether the recorder is on.
#[inline]
pub fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// Up to N bytes copied in place: a key or an address in a record, with
/// no allocation of its own.
#[derive(Clone, Copy, Debug)]
pub struct Inline<const N: usize> {
    len: u8,
    bytes: [u8; N],
}

impl<const N: usize> Inline<N> {
    pub const EMPTY: Self = Inline {
        len: 0,
        bytes: [0; N],
    };

    /// The first N bytes of `b`.
    #[inline]
    pub fn copy_of(b: &[u8]) -> Self {
        let len = b.len().min(N);
        let mut out = Self::EMPTY;
        out.bytes[..len].copy_from_slice(&b[..len]);
        out.len = len as u8;
        out
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
}

/// One command run, as the recorder keeps it.
#[derive(Clone, Copy, Debug)]
pub struct CommandRecord {
    pub client_id: u64,
    pub db: u32,
    /// The full name as CLIENT LIST shows it ("get", "config|get").
    pub name: &'static str,
    /// Its first argument (argv[1]), when it has one.
    pub has_key: bool,
    pub key: Inline<RECORDER_KEY_BYTES>,
    pub addr: Inline<RECORDER_ADDR_BYTES>,
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
#[derive(Clone, Copy, Debug)]
pub struct PhaseRecord {
    pub name: &'static str,
    pub start_us: u64,
    pub duration_us: u64,
    pub nargs: u8,
    pub args: [(&'static str, u64); PHASE_MAX_ARGS],
}

impl PhaseRecord {
    pub fn args(&self) -> &[(&'static str, u64)] {
        &self.args[..self.nargs as usize]
    }
}

/// One loop pass. Its commands and phases are the stretches
/// `first_command..first_command + commands` and
/// `first_phase..first_phase + phases` of the two rings.
#[derive(Clone, Copy, Debug, Default)]
pub struct PassRecord {
    pub start_us: u64,
    pub end_us: u64,
    pub poll_start_us: u64,
    pub poll_us: u64,
    pub fired: u32,
    /// Clients read this pass because an earlier one left bytes unread,
    /// plus the events poll returned: the "pending clients" counter.
    pub pending_clients: u32,
    pub first_command: u64,
    pub commands: u32,
    pub commands_dropped: u32,
    pub first_phase: u64,
    pub phases: u32,
    /// Run from inside a busy script (processEventsWhileBlocked).
    pub while_blocked: bool,
}

/// A fixed-size ring of records, oldest overwritten first. Its memory is
/// reserved once ([`Ring::reserve`], at DEBUG RECORDER START) and a push
/// never allocates. Each record has a sequence number (the count of
/// pushes before it), so a pass can name its records and tell whether
/// they are still there.
pub struct Ring<T> {
    slots: Vec<T>,
    capacity: usize,
    /// The slot the next push writes.
    next: usize,
    /// Pushes so far: the next record's sequence number.
    written: u64,
}

impl<T: Copy> Ring<T> {
    pub const fn new() -> Self {
        Ring {
            slots: Vec::new(),
            capacity: 0,
            next: 0,
            written: 0,
        }
    }

    /// Make room for `capacity` records (forgetting what was held when the
    /// size changes).
    pub fn reserve(&mut self, capacity: usize) {
        if self.capacity != capacity {
            self.slots = Vec::with_capacity(capacity);
            self.capacity = capacity;
            self.next = 0;
        }
    }

    /// Append, overwriting the oldest record once the ring is full.
    #[inline]
    pub fn push(&mut self, item: T) {
        if self.capacity == 0 {
            return;
        }
        if self.slots.len() < self.capacity {
            self.slots.push(item);
        } else {
            self.slots[self.next] = item;
        }
        self.next += 1;
        if self.next == self.capacity {
            self.next = 0;
        }
        self.written += 1;
    }

    /// The sequence number the next push gets.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// The sequence number of the oldest record still held.
    pub fn oldest(&self) -> u64 {
        self.written - self.slots.len() as u64
    }

    /// Records held.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The record with sequence number `seq`, if it is still held.
    pub fn get(&self, seq: u64) -> Option<&T> {
        if seq < self.oldest() || seq >= self.written {
            return None;
        }
        // The first `capacity` pushes went to slots 0, 1, ...; after that
        // `next` wraps, so the slot of `seq` is always seq mod capacity.
        self.slots.get((seq % self.capacity as u64) as usize)
    }

    /// Forget every record (the memory stays reserved).
    pub fn clear(&mut self) {
        self.slots.clear();
        self.next = 0;
        self.written = 0;
    }

    /// Bytes the records held take / the whole ring takes when full.
    pub fn bytes_used(&self) -> usize {
        self.slots.len() * std::mem::size_of::<T>()
    }

    pub fn bytes_max(&self) -> usize {
        self.capacity * std::mem::size_of::<T>()
    }
}

impl<T: Copy> Default for Ring<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// Per-command blame totals.
#[derive(Clone, Copy, Debug, Default)]
pub struct BlameTotals {
    pub name: &'static str,
    pub calls: u64,
    pub run_us: u64,
    pub queue_wait_us: u64,
    pub waiters: u64,
    pub waited_us: u64,
}

/// One of the worst offenders (by client wait caused).
#[derive(Clone, Copy, Debug)]
pub struct Offender {
    pub name: &'static str,
    pub has_key: bool,
    pub key: Inline<RECORDER_KEY_BYTES>,
    pub client_id: u64,
    pub start_us: u64,
    pub run_us: u64,
    pub waiters: u32,
    pub waited_us: u64,
}

/// The recorder's whole state: three rings, the pass being recorded, and
/// blame's totals.
pub struct Recorder {
    passes: Ring<PassRecord>,
    commands: Ring<CommandRecord>,
    phases: Ring<PhaseRecord>,
    current: Option<PassRecord>,
    /// Blame totals indexed by the command's id in the command table.
    blame: Vec<BlameTotals>,
    worst: Vec<Offender>,
    /// Sockets we turned SO_TIMESTAMP on for, indexed by fd.
    stamped: Vec<bool>,
    /// Client id -> when the bytes of its next command reached the kernel,
    /// as a blamed command's peek found them: that command's queue wait
    /// then counts from there, not from the read that came later. Empty
    /// unless a command ran long enough to be blamed.
    arrivals: Vec<(u64, Instant)>,
}

thread_local! {
    static REC: RefCell<Recorder> = const { RefCell::new(Recorder::new()) };
}

impl Recorder {
    pub const fn new() -> Self {
        Recorder {
            passes: Ring::new(),
            commands: Ring::new(),
            phases: Ring::new(),
            current: None,
            blame: Vec::new(),
            worst: Vec::new(),
            stamped: Vec::new(),
            arrivals: Vec::new(),
        }
    }

    /// Reserve the rings: `passes` passes, `commands` commands, `phases`
    /// phases. A new pass count keeps the newest passes that fit.
    pub fn reserve(&mut self, passes: usize, commands: usize, phases: usize) {
        if self.passes.capacity != passes && !self.passes.is_empty() {
            let kept: Vec<PassRecord> = self.kept_passes().collect();
            self.passes.slots = Vec::with_capacity(passes);
            self.passes.capacity = passes;
            self.passes.next = 0;
            self.passes.written = 0;
            for p in kept.iter().skip(kept.len().saturating_sub(passes)) {
                self.passes.push(*p);
            }
        }
        self.passes.reserve(passes);
        if self.commands.capacity != commands || self.phases.capacity != phases {
            // The passes name stretches of these rings: start afresh.
            self.commands.reserve(commands);
            self.phases.reserve(phases);
            self.forget_passes();
        }
    }

    fn forget_passes(&mut self) {
        self.passes.clear();
        self.commands.clear();
        self.phases.clear();
        // A pass under way (RESET runs inside one) starts its stretches
        // at the emptied rings.
        if let Some(p) = self.current.as_mut() {
            p.first_command = 0;
            p.commands = 0;
            p.first_phase = 0;
            p.phases = 0;
        }
    }

    /// The passes still held whole (their commands and phases not
    /// overwritten), oldest first: a suffix of the pass ring.
    pub fn kept_passes(&self) -> impl Iterator<Item = PassRecord> + '_ {
        let (cmd_oldest, phase_oldest) = (self.commands.oldest(), self.phases.oldest());
        (self.passes.oldest()..self.passes.written())
            .filter_map(|s| self.passes.get(s).copied())
            .skip_while(move |p| p.first_command < cmd_oldest || p.first_phase < phase_oldest)
    }

    /// A kept pass's commands.
    pub fn pass_commands(&self, p: &PassRecord) -> impl Iterator<Item = &CommandRecord> + '_ {
        let first = p.first_command;
        (first..first + p.commands as u64).filter_map(|s| self.commands.get(s))
    }

    /// A kept pass's phases.
    pub fn pass_phases(&self, p: &PassRecord) -> impl Iterator<Item = &PhaseRecord> + '_ {
        let first = p.first_phase;
        (first..first + p.phases as u64).filter_map(|s| self.phases.get(s))
    }

    pub fn pass_begin(&mut self, start_us: u64, while_blocked: bool) {
        self.current = Some(PassRecord {
            start_us,
            while_blocked,
            first_command: self.commands.written(),
            first_phase: self.phases.written(),
            ..Default::default()
        });
    }

    pub fn pass_end(&mut self, end_us: u64) {
        if let Some(mut p) = self.current.take() {
            p.end_us = end_us;
            self.passes.push(p);
        }
    }

    #[inline]
    pub fn record_phase(&mut self, phase: PhaseRecord) {
        if let Some(p) = self.current.as_mut() {
            if p.phases < RECORDER_MAX_PHASES_PER_PASS {
                p.phases += 1;
                self.phases.push(phase);
            }
        }
    }

    #[inline]
    pub fn record_command(&mut self, command: CommandRecord) {
        if let Some(p) = self.current.as_mut() {
            if p.commands >= RECORDER_MAX_COMMANDS_PER_PASS {
                p.commands_dropped += 1;
                return;
            }
            p.commands += 1;
            self.commands.push(command);
        }
    }

    /// Passes ended since the last reset but no longer shown.
    pub fn passes_dropped(&self) -> u64 {
        self.passes.written() - self.kept_passes().count() as u64
    }
}

impl Default for Recorder {
    fn default() -> Self {
        Self::new()
    }
}

fn now_us() -> u64 {
    micros_since_epoch(Instant::now())
}

// ---- switching ----

/// DEBUG RECORDER START [passes]: reserve the rings (first time, or a new
/// pass count) and turn recording on.
pub fn start(srv: &Server, caller_fd: i32, passes: Option<usize>) {
    bio_trace::epoch();
    REC.with(|r| {
        let mut r = r.borrow_mut();
        let passes = passes.unwrap_or(if r.passes.capacity == 0 {
            RECORDER_DEFAULT_PASSES
        } else {
            r.passes.capacity
        });
        r.reserve(passes.max(1), RECORDER_MAX_COMMANDS, RECORDER_MAX_PHASES);
        let ncommands = srv.commands.commands.len();
        if r.blame.len() < ncommands {
            r.blame.resize(ncommands, BlameTotals::default());
        }
        r.worst.reserve(BLAME_WORST_KEPT + 1);
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
        r.forget_passes();
        r.arrivals.clear();
    });
    bio_trace::reset_jobs();
}

/// DEBUG BLAME RESET.
pub fn reset_blame() {
    REC.with(|r| {
        let mut r = r.borrow_mut();
        for t in r.blame.iter_mut() {
            *t = BlameTotals::default();
        }
        r.worst.clear();
    });
}

// ---- hooks in the loop pass (ae.rs) ----

/// The pass begins (before before_sleep).
pub fn pass_begin(while_blocked: bool) {
    let start_us = now_us();
    REC.with(|r| r.borrow_mut().pass_begin(start_us, while_blocked));
}

/// Record a phase that ran from `start` until now, with up to
/// PHASE_MAX_ARGS counters.
pub fn phase(name: &'static str, start: Instant, args: &[(&'static str, u64)]) {
    let duration_us = start.elapsed().as_micros() as u64;
    let mut record = PhaseRecord {
        name,
        start_us: micros_since_epoch(start),
        duration_us,
        nargs: args.len().min(PHASE_MAX_ARGS) as u8,
        args: [("", 0); PHASE_MAX_ARGS],
    };
    for (slot, arg) in record.args.iter_mut().zip(args) {
        *slot = *arg;
    }
    REC.with(|r| r.borrow_mut().record_phase(record));
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
    let end_us = now_us();
    REC.with(|r| r.borrow_mut().pass_end(end_us));
}

// ---- hooks in call() (server.rs) ----

/// Before the handler: the reply length so far.
#[inline]
pub fn call_begin(c: &Client) -> usize {
    c.reply.len()
}

/// After the handler: record the command, and blame it for the clients
/// that waited while it ran. Allocates nothing unless the command ran
/// BLAME_MIN_RUN_US and made someone wait.
pub fn call_end(
    srv: &Server,
    c: &Client,
    id: CmdId,
    name: &'static str,
    reply_len_before: usize,
    start: Instant,
    micros: u64,
) {
    let start_us = micros_since_epoch(start);
    // Queued since the read that completed it, or since its bytes arrived
    // when a blamed command's peek saw them waiting in the socket.
    let arrival = REC.with(|r| {
        let mut r = r.borrow_mut();
        if r.arrivals.is_empty() {
            return None;
        }
        let i = r.arrivals.iter().position(|(cid, _)| *cid == c.id)?;
        Some(r.arrivals.swap_remove(i).1)
    });
    let queued_since = arrival.map_or(c.last_interaction, |a| a.min(c.last_interaction));
    let queue_wait_us = start.saturating_duration_since(queued_since).as_micros() as u64;
    let (waiters, waited_us) = if micros >= BLAME_MIN_RUN_US {
        let end = start + std::time::Duration::from_micros(micros);
        clients_waiting(srv, c.id, start, end)
    } else {
        (0, 0)
    };
    let first_arg = c.argv.get(1);
    let key = first_arg.map_or(Inline::EMPTY, |k| Inline::copy_of(k));
    REC.with(|r| {
        let mut r = r.borrow_mut();
        if let Some(totals) = r.blame.get_mut(id.0) {
            totals.name = name;
            totals.calls += 1;
            totals.run_us += micros;
            totals.queue_wait_us += queue_wait_us;
            totals.waiters += waiters as u64;
            totals.waited_us += waited_us;
        }
        if waiters > 0 {
            r.worst.push(Offender {
                name,
                has_key: first_arg.is_some(),
                key,
                client_id: c.id,
                start_us,
                run_us: micros,
                waiters,
                waited_us,
            });
            r.worst.sort_by_key(|o| std::cmp::Reverse(o.waited_us));
            r.worst.truncate(BLAME_WORST_KEPT);
        }
        r.record_command(CommandRecord {
            client_id: c.id,
            db: c.db as u32,
            name,
            has_key: first_arg.is_some(),
            key,
            addr: Inline::copy_of(c.addr.as_bytes()),
            start_us,
            duration_us: micros,
            reply_bytes: c.reply.len().saturating_sub(reply_len_before) as u64,
            queue_wait_us,
            waiters,
            waited_us,
        });
    });
}

/// The other clients with input waiting at `end`, and their summed wait
/// since `max(start, arrival)`.
fn clients_waiting(srv: &Server, runner: u64, start: Instant, end: Instant) -> (u32, u64) {
    let mut waiters = 0;
    let mut waited = 0u64;
    for other in srv.clients.values() {
        if other.id == runner {
            continue;
        }
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
                    let mut r = r.borrow_mut();
                    if !r.arrivals.iter().any(|(id, _)| *id == other.id) {
                        r.arrivals.push((other.id, arrival));
                    }
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
    REC.with(|r| {
        let mut r = r.borrow_mut();
        let i = fd as usize;
        if r.stamped.len() <= i {
            r.stamped.resize(i + 1, false);
        }
        r.stamped[i] = true;
    });
}

/// Whether bytes wait in `fd`'s receive queue, and when the first of them
/// arrived (the kernel's receive timestamp, converted to an Instant; the
/// start of the run when the kernel gave none).
fn peek_arrival(fd: i32, start: Instant) -> Option<Instant> {
    if REC.with(|r| r.borrow().stamped.get(fd as usize) != Some(&true)) {
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

/// "NAME key" as the trace and DEBUG BLAME title a command.
fn title(name: &str, key: Option<&[u8]>) -> String {
    let upper = name.to_ascii_uppercase();
    match key {
        Some(k) => format!("{upper} {}", String::from_utf8_lossy(k)),
        None => upper,
    }
}

/// DEBUG RECORDER STATUS: one line per fact.
pub fn status_lines() -> Vec<String> {
    REC.with(|r| {
        let r = r.borrow();
        let (mut passes, mut commands, mut phases) = (0usize, 0usize, 0usize);
        for p in r.kept_passes() {
            passes += 1;
            commands += p.commands as usize;
            phases += p.phases as usize;
        }
        let bytes = r.passes.bytes_used() + r.commands.bytes_used() + r.phases.bytes_used();
        let bytes_max = r.passes.bytes_max() + r.commands.bytes_max() + r.phases.bytes_max();
        vec![
            format!("recording:{}", on() as u8),
            format!("passes:{passes}"),
            format!("capacity:{}", r.passes.capacity),
            format!("passes_dropped:{}", r.passes_dropped()),
            format!("commands:{commands}"),
            format!("commands_capacity:{}", r.commands.capacity),
            format!("phases:{phases}"),
            format!("phases_capacity:{}", r.phases.capacity),
            format!("bio_jobs:{}", bio_trace::recorded_jobs().len()),
            format!("memory_bytes:{bytes}"),
            format!("memory_bytes_max:{bytes_max}"),
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
                    title(o.name, o.has_key.then(|| o.key.as_bytes())),
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
        let mut rows: Vec<&BlameTotals> = r.blame.iter().filter(|t| t.calls > 0).collect();
        rows.sort_by(|a, b| b.waited_us.cmp(&a.waited_us).then(a.name.cmp(b.name)));
        rows.iter()
            .map(|t| {
                format!(
                    "{}: calls={} run_us={} queue_wait_us={} waiters={} waited_us={}",
                    t.name.to_ascii_uppercase(),
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
        for p in r.kept_passes() {
            let name = if p.while_blocked { "loop pass (while blocked)" } else { "loop pass" };
            slice(&mut out, name, "loop", MAIN_TID, p.start_us, p.end_us.saturating_sub(p.start_us), &[
                ("fired", p.fired.to_string()),
                ("commands", p.commands.to_string()),
                ("commands_dropped", p.commands_dropped.to_string()),
            ]);
            slice(&mut out, "poll", "loop", MAIN_TID, p.poll_start_us, p.poll_us, &[("fired", p.fired.to_string())]);
            let _ = write!(out, ",\n{{\"ph\":\"C\",\"name\":\"pending clients\",\"pid\":1,\"tid\":{MAIN_TID},\"ts\":{},\"args\":{{\"clients\":{}}}}}", p.poll_start_us + p.poll_us, p.pending_clients);
            events += 3;
            for ph in r.pass_phases(&p) {
                let args: Vec<(&str, String)> = ph.args().iter().map(|(k, v)| (*k, v.to_string())).collect();
                slice(&mut out, ph.name, "phase", MAIN_TID, ph.start_us, ph.duration_us, &args);
                events += 1;
            }
            for c in r.pass_commands(&p) {
                let upper = c.name.to_ascii_uppercase();
                let key = c.has_key.then(|| String::from_utf8_lossy(c.key.as_bytes()).into_owned());
                let addr = String::from_utf8_lossy(c.addr.as_bytes());
                slice(&mut out, &title(c.name, c.has_key.then(|| c.key.as_bytes())), "command", MAIN_TID, c.start_us, c.duration_us, &[
                    ("client_id", c.client_id.to_string()),
                    ("addr", q(&addr)),
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
    phase(name, start, &[]);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn command(n: u64) -> CommandRecord {
        CommandRecord {
            client_id: n,
            db: 0,
            name: "echo",
            has_key: true,
            key: Inline::copy_of(format!("m{n}").as_bytes()),
            addr: Inline::copy_of(b"127.0.0.1:5000"),
            start_us: n,
            duration_us: 1,
            reply_bytes: 0,
            queue_wait_us: 0,
            waiters: 0,
            waited_us: 0,
        }
    }

    fn phase(n: u64) -> PhaseRecord {
        PhaseRecord {
            name: "before_sleep",
            start_us: n,
            duration_us: 0,
            nargs: 1,
            args: [("n", n), ("", 0), ("", 0)],
        }
    }

    /// `passes` passes of `per_pass` commands and one phase each.
    fn record(r: &mut Recorder, passes: u64, per_pass: u64) {
        let mut n = 0;
        for p in 0..passes {
            r.pass_begin(p, false);
            r.record_phase(phase(p));
            for _ in 0..per_pass {
                r.record_command(command(n));
                n += 1;
            }
            r.pass_end(p);
        }
    }

    #[test]
    fn ring_overwrites_the_oldest_and_keeps_sequence_numbers() {
        let mut ring: Ring<u64> = Ring::new();
        ring.reserve(4);
        for i in 0..10 {
            ring.push(i);
        }
        assert_eq!((ring.len(), ring.oldest(), ring.written()), (4, 6, 10));
        assert_eq!(ring.get(5), None);
        let held: Vec<u64> = (6..10).map(|s| *ring.get(s).unwrap()).collect();
        assert_eq!(held, [6, 7, 8, 9]);
        assert_eq!(ring.get(10), None);
        assert_eq!(ring.bytes_max(), 4 * 8);
    }

    #[test]
    fn a_push_never_grows_the_reserved_memory() {
        let mut ring: Ring<CommandRecord> = Ring::new();
        ring.reserve(100);
        let reserved = ring.slots.capacity();
        for i in 0..1000 {
            ring.push(command(i));
        }
        assert_eq!(ring.slots.capacity(), reserved);
        assert_eq!(ring.bytes_used(), ring.bytes_max());
    }

    #[test]
    fn pass_ring_wrap_keeps_the_newest_passes_whole() {
        let mut r = Recorder::new();
        r.reserve(5, 1000, 1000);
        record(&mut r, 12, 3);
        let kept: Vec<PassRecord> = r.kept_passes().collect();
        assert_eq!(
            kept.iter().map(|p| p.start_us).collect::<Vec<_>>(),
            [7, 8, 9, 10, 11]
        );
        assert_eq!(r.passes_dropped(), 7);
        let last: Vec<u64> = r.pass_commands(&kept[4]).map(|c| c.client_id).collect();
        assert_eq!(last, [33, 34, 35]);
        assert_eq!(
            r.pass_commands(&kept[4]).next().unwrap().key.as_bytes(),
            b"m33"
        );
    }

    #[test]
    fn command_ring_wrap_drops_the_passes_it_overwrote() {
        let mut r = Recorder::new();
        // Room for 100 passes but only 10 commands: the newest three
        // passes of three commands fit whole, the fourth lost one.
        r.reserve(100, 10, 1000);
        record(&mut r, 8, 3);
        let kept: Vec<PassRecord> = r.kept_passes().collect();
        assert_eq!(
            kept.iter().map(|p| p.start_us).collect::<Vec<_>>(),
            [5, 6, 7]
        );
        for p in &kept {
            assert_eq!(r.pass_commands(p).count(), 3);
            assert_eq!(r.pass_phases(p).count(), 1);
        }
        assert_eq!(r.passes_dropped(), 5);
    }

    #[test]
    fn phase_ring_wrap_drops_the_passes_it_overwrote() {
        let mut r = Recorder::new();
        r.reserve(100, 1000, 4);
        record(&mut r, 9, 1);
        let kept: Vec<u64> = r.kept_passes().map(|p| p.start_us).collect();
        assert_eq!(kept, [5, 6, 7, 8]);
        let p = r.kept_passes().next().unwrap();
        assert_eq!(r.pass_phases(&p).next().unwrap().args(), [("n", 5)]);
    }

    #[test]
    fn a_deep_pass_keeps_its_first_commands_and_counts_the_rest() {
        let mut r = Recorder::new();
        r.reserve(10, 10_000, 100);
        record(&mut r, 1, RECORDER_MAX_COMMANDS_PER_PASS as u64 + 5);
        let p = r.kept_passes().next().unwrap();
        assert_eq!(p.commands, RECORDER_MAX_COMMANDS_PER_PASS);
        assert_eq!(p.commands_dropped, 5);
    }

    #[test]
    fn fewer_passes_keep_the_newest_and_reset_mid_pass_restarts_the_stretch() {
        let mut r = Recorder::new();
        r.reserve(10, 1000, 1000);
        record(&mut r, 6, 2);
        r.reserve(2, 1000, 1000);
        let kept: Vec<u64> = r.kept_passes().map(|p| p.start_us).collect();
        assert_eq!(kept, [4, 5]);
        assert_eq!(
            r.pass_commands(&r.kept_passes().last().unwrap())
                .map(|c| c.client_id)
                .collect::<Vec<_>>(),
            [10, 11]
        );
        // RESET runs inside a pass: that pass still ends whole.
        r.pass_begin(100, false);
        r.record_command(command(1));
        r.forget_passes();
        r.record_command(command(2));
        r.pass_end(101);
        let kept: Vec<PassRecord> = r.kept_passes().collect();
        assert_eq!(kept.len(), 1);
        assert_eq!(
            r.pass_commands(&kept[0])
                .map(|c| c.client_id)
                .collect::<Vec<_>>(),
            [2]
        );
    }

    #[test]
    fn inline_clips_long_keys() {
        let long = [b'k'; 100];
        assert_eq!(
            Inline::<RECORDER_KEY_BYTES>::copy_of(&long)
                .as_bytes()
                .len(),
            RECORDER_KEY_BYTES
        );
        assert_eq!(Inline::<8>::copy_of(b"abc").as_bytes(), b"abc");
    }
}
