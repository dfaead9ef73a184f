//! What stands in for the loop flight recorder (recorder.rs) in a build
//! without the cargo feature `recorder` (`cargo build --release
//! --no-default-features`).
//!
//! That build is the baseline the recorder's cost is measured against
//! (README, "redis-lite extensions"): the hooks in ae.rs and `call()` are
//! not compiled at all (each carries `#[cfg(feature = "recorder")]`), and
//! DEBUG RECORDER / DEBUG BLAME are unknown subcommands, as in Redis. Only
//! the two helpers the cron and before-sleep code call unconditionally
//! remain, and they do nothing but what they wrap.

/// The recorder is never on in this build.
#[inline(always)]
pub const fn on() -> bool {
    false
}

/// Run `f` (recorder.rs times it as a phase of the pass).
#[inline(always)]
pub fn timed<R>(_name: &'static str, f: impl FnOnce() -> R) -> R {
    f()
}
