//! The encoding-transition log: a redis-lite extension, no Redis twin
//! (`DEBUG ENCODING-LOG`, server/src/debug.rs).
//!
//! Every conversion a value goes through (intset -> hashtable, listpack ->
//! hashtable, listpack -> skiplist and back on a STORE) happens in the one
//! conversion function its type API owns: `set_type_convert`,
//! `hash_type_convert`, `zset_type_convert`. Each of them calls [`record`]
//! with what it converted and the size that made it convert, so a
//! breakpoint on `record` (or on the conversion function) catches every
//! switch, and the log tells the class which command did it to which key.
//!
//! Lists have no entry: in Redis 7.0 every list is a quicklist from its
//! first element (storage/src/t_list.rs), so nothing converts.
//!
//! The type API does not know keys or commands, so the server names them
//! before it runs a command ([`set_context`], from `call()`), and SMOVE
//! names its destination ([`set_context_key`]). Off by default: the
//! conversion functions and `call()` test one relaxed atomic
//! ([`context_wanted`]) and do nothing more.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// ENCODING_LOG_MAX_LEN: entries kept (the oldest go first), so a loop of
/// SADDs on fresh keys cannot grow the log without bound.
pub const ENCODING_LOG_MAX_LEN: usize = 1024;
/// Bytes of a key kept in an entry.
const ENCODING_LOG_MAX_KEY: usize = 128;

/// Whether conversions are logged (DEBUG ENCODING-LOG ON / OFF).
static ON: AtomicBool = AtomicBool::new(false);
/// Whether `call()` must name the running command and key: set while this
/// log or the lazy-free log (lazyfree/src/log.rs) is on.
static CONTEXT_WANTED: AtomicBool = AtomicBool::new(false);

/// Whether the encoding log is on (one relaxed load).
#[inline]
pub fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// Turn the log on or off.
pub fn set_on(on: bool) {
    ON.store(on, Ordering::Relaxed);
}

/// Whether some log wants the command context (one relaxed load: the
/// whole cost of the logs in `call()` while they are off).
#[inline]
pub fn context_wanted() -> bool {
    CONTEXT_WANTED.load(Ordering::Relaxed)
}

/// Set by the server when either log is switched.
pub fn set_context_wanted(wanted: bool) {
    CONTEXT_WANTED.store(wanted, Ordering::Relaxed);
}

/// What the running command is, as the logs name it.
#[derive(Clone, Debug, Default)]
pub struct CommandContext {
    /// The command's full name ("sadd", "config|set"); "" outside a command.
    pub command: &'static str,
    /// The key it names first (its destination for SMOVE).
    pub key: Vec<u8>,
}

thread_local! {
    // The main thread runs every command and every conversion.
    static CONTEXT: RefCell<CommandContext> = RefCell::new(CommandContext::default());
}

/// `call()`: name the command about to run; returns the previous context,
/// which `call()` puts back afterwards (a script's commands nest).
pub fn set_context(command: &'static str, key: Option<&[u8]>) -> CommandContext {
    let new = CommandContext {
        command,
        key: key.map(clip).unwrap_or_default(),
    };
    CONTEXT.with(|c| std::mem::replace(&mut *c.borrow_mut(), new))
}

/// Put back what [`set_context`] returned.
pub fn restore_context(prev: CommandContext) {
    CONTEXT.with(|c| *c.borrow_mut() = prev);
}

/// A command whose converting key is not its first (SMOVE's destination).
pub fn set_context_key(key: &[u8]) {
    if context_wanted() {
        CONTEXT.with(|c| c.borrow_mut().key = clip(key));
    }
}

/// The running command's name ("" outside a command).
pub fn context_command() -> &'static str {
    CONTEXT.with(|c| c.borrow().command)
}

fn clip(k: &[u8]) -> Vec<u8> {
    k[..k.len().min(ENCODING_LOG_MAX_KEY)].to_vec()
}

/// One conversion, as DEBUG ENCODING-LOG shows it.
#[derive(Clone, Debug)]
pub struct EncodingChange {
    /// Counts from 0 since start (not reset by RESET), as SLOWLOG ids do.
    pub id: u64,
    /// Unix time in microseconds.
    pub time_us: i64,
    pub key: Vec<u8>,
    pub command: &'static str,
    /// "set", "hash", "zset".
    pub type_name: &'static str,
    pub from: &'static str,
    pub to: &'static str,
    /// The size that triggered it: the element count, or the length of the
    /// element too long for the compact encoding.
    pub size: u64,
    /// Why, in words: "513 entries > set-max-intset-entries 512".
    pub trigger: String,
}

struct Log {
    next_id: u64,
    entries: VecDeque<EncodingChange>,
}

static LOG: Mutex<Log> = Mutex::new(Log {
    next_id: 0,
    entries: VecDeque::new(),
});

fn log() -> std::sync::MutexGuard<'static, Log> {
    LOG.lock().unwrap_or_else(|e| e.into_inner())
}

/// Called by the conversion functions, only when [`on`]: log one
/// conversion under the running command and key.
pub fn record(
    type_name: &'static str,
    from: &'static str,
    to: &'static str,
    size: u64,
    trigger: String,
) {
    let ctx = CONTEXT.with(|c| c.borrow().clone());
    let time_us = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0);
    let mut log = log();
    let id = log.next_id;
    log.next_id += 1;
    if log.entries.len() >= ENCODING_LOG_MAX_LEN {
        log.entries.pop_front();
    }
    log.entries.push_back(EncodingChange {
        id,
        time_us,
        key: ctx.key,
        command: ctx.command,
        type_name,
        from,
        to,
        size,
        trigger,
    });
}

/// The entries, newest first (DEBUG ENCODING-LOG).
pub fn entries() -> Vec<EncodingChange> {
    log().entries.iter().rev().cloned().collect()
}

/// DEBUG ENCODING-LOG RESET.
pub fn reset() {
    log().entries.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_conversion_is_logged_under_the_context_and_the_log_is_bounded() {
        // Other tests may convert on other threads meanwhile (their context
        // is empty): look at this thread's entries only.
        set_on(true);
        set_context_wanted(true);
        let prev = set_context("sadd", Some(b"myset"));
        for i in 0..ENCODING_LOG_MAX_LEN + 5 {
            record("set", "intset", "hashtable", i as u64, "test".into());
        }
        restore_context(prev);
        let e = entries();
        assert!(e.len() <= ENCODING_LOG_MAX_LEN);
        let mine: Vec<&EncodingChange> = e.iter().filter(|x| x.key == b"myset").collect();
        assert!(mine.len() > ENCODING_LOG_MAX_LEN / 2);
        assert_eq!(mine[0].command, "sadd");
        assert_eq!(mine[0].size, (ENCODING_LOG_MAX_LEN + 4) as u64);
        assert_eq!(context_command(), "");
        reset();
        assert!(entries().iter().all(|x| x.key != b"myset"));
        set_on(false);
        set_context_wanted(false);
    }
}
