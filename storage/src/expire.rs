//! The active expiry cycle (Redis 7.0's expire.c activeExpireCycle).
//!
//! Lazy expiry deletes a key when someone touches it. Keys nobody touches
//! would stay forever, so Redis also *samples* the expires dict of each db
//! and deletes what it finds expired, on the main thread, in slices:
//!
//! - the **slow** cycle runs from serverCron (hz times per second) with a
//!   budget of 25% of a cron period: 25 ms at hz 10;
//! - the **fast** cycle runs before each sleep, for at most 1000 us, and only
//!   when the previous cycle ran out of time or too many sampled keys were
//!   stale.
//!
//! Each round of a db walks buckets of the expires table from a persistent
//! cursor and tests every key in each bucket, until 20 keys were sampled.
//! Rounds repeat while more than 10% of the sampled keys were expired. So
//! when 250k keys expire at the same moment, the server spends 25 ms of every
//! 100 ms deleting them, and every client's tail latency shows it.
//!
//! The clock comes in through the `Clock` trait, so tests can run a cycle
//! against a fake clock and check its budget logic deterministically.

use crate::db::Db;

/// ACTIVE_EXPIRE_CYCLE_KEYS_PER_LOOP: keys sampled per db round.
pub const ACTIVE_EXPIRE_CYCLE_KEYS_PER_LOOP: u64 = 20;
/// ACTIVE_EXPIRE_CYCLE_FAST_DURATION: the fast cycle's budget, microseconds.
pub const ACTIVE_EXPIRE_CYCLE_FAST_DURATION: u64 = 1000;
/// ACTIVE_EXPIRE_CYCLE_SLOW_TIME_PERC: share of CPU the slow cycle may use.
pub const ACTIVE_EXPIRE_CYCLE_SLOW_TIME_PERC: u64 = 25;
/// ACTIVE_EXPIRE_CYCLE_ACCEPTABLE_STALE: % of stale keys that is tolerated;
/// above it a db gets another round.
pub const ACTIVE_EXPIRE_CYCLE_ACCEPTABLE_STALE: u64 = 10;
/// CRON_DBS_PER_CALL: dbs visited per call (all of them after a time-out).
pub const CRON_DBS_PER_CALL: usize = 16;
/// DICT_HT_INITIAL_SIZE: a table this small is always worth sampling.
const DICT_HT_INITIAL_SIZE: usize = 4;

/// Where the time comes from (ustime/mstime in Redis).
pub trait Clock {
    /// Unix time in microseconds.
    fn ustime(&self) -> i64;
    /// Unix time in milliseconds.
    fn mstime(&self) -> i64 {
        self.ustime() / 1000
    }
}

/// The real clock.
pub struct SystemClock;

impl Clock for SystemClock {
    fn ustime(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_micros() as i64)
            .unwrap_or(0)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CycleType {
    /// From beforeSleep: short, and only when there is work to catch up.
    Fast,
    /// From serverCron: up to 25% of a cron period.
    Slow,
}

/// The state Redis keeps in statics and server.stat_* between cycles.
#[derive(Debug, Default, Clone)]
pub struct ExpireCycleState {
    /// Next db to test (current_db).
    pub current_db: usize,
    /// Did the previous cycle run out of time? (timelimit_exit)
    pub timelimit_exit: bool,
    /// Start of the last fast cycle, us (last_fast_cycle).
    pub last_fast_cycle: i64,
    /// Running estimate of the share of stale keys, 0..1
    /// (stat_expired_stale_perc).
    pub stale_perc: f64,
    /// Cycles that hit their time limit (expired_time_cap_reached_count).
    pub time_cap_reached_count: u64,
    /// Total time spent in cycles, us (expire_cycle_cpu_milliseconds * 1000).
    pub cycle_time_used_us: u64,
}

/// The knobs, read from the configuration at each call.
#[derive(Debug, Clone, Copy)]
pub struct ExpireCycleConfig {
    /// active-expire-effort, 1..10.
    pub effort: u64,
    /// The effective hz.
    pub hz: u64,
}

/// What one call did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct CycleReport {
    /// false when the cycle decided not to run (fast cycle with nothing to do).
    pub ran: bool,
    pub sampled: u64,
    pub expired: u64,
    pub elapsed_us: u64,
}

/// The effort-scaled parameters (the first lines of activeExpireCycle).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CycleParams {
    pub keys_per_loop: u64,
    pub fast_duration_us: u64,
    pub slow_time_perc: u64,
    pub acceptable_stale: u64,
}

impl CycleParams {
    pub fn for_effort(effort: u64) -> CycleParams {
        let k = effort.clamp(1, 10) - 1; // rescale 1..10 to 0..9
        CycleParams {
            keys_per_loop: ACTIVE_EXPIRE_CYCLE_KEYS_PER_LOOP
                + ACTIVE_EXPIRE_CYCLE_KEYS_PER_LOOP / 4 * k,
            fast_duration_us: ACTIVE_EXPIRE_CYCLE_FAST_DURATION
                + ACTIVE_EXPIRE_CYCLE_FAST_DURATION / 4 * k,
            slow_time_perc: ACTIVE_EXPIRE_CYCLE_SLOW_TIME_PERC + 2 * k,
            acceptable_stale: ACTIVE_EXPIRE_CYCLE_ACCEPTABLE_STALE - k,
        }
    }
}

/// What the cycle needs from the server: the dbs to sample, and the one
/// function that deletes an expired key. The server's implementation is
/// `db::delete_expired_key`, the same function lazy expiry calls, so one
/// breakpoint there catches every expired key whoever found it (Redis:
/// both paths call deleteExpiredKeyAndPropagate).
pub trait ExpireHost {
    /// The databases, indexed by db id.
    fn dbs(&mut self) -> &mut [Db];
    /// Remove `key` (found expired in db `dbid`) from both dicts, free its
    /// value, and do the bookkeeping: stats, events, latency, WATCH.
    fn delete_expired_key(&mut self, dbid: usize, key: &[u8]);
}

/// activeExpireCycle. `host.delete_expired_key(dbid, key)` is called for
/// every key found expired. `state` is passed apart from the host because
/// it lives between cycles and is not the dbs' business.
pub fn active_expire_cycle(
    host: &mut dyn ExpireHost,
    state: &mut ExpireCycleState,
    cycle: CycleType,
    config: ExpireCycleConfig,
    clock: &dyn Clock,
) -> CycleReport {
    let p = CycleParams::for_effort(config.effort);
    let start = clock.ustime();

    if cycle == CycleType::Fast {
        // Only when the last cycle ran out of time; and not again within two
        // fast durations of the previous one.
        //
        // Redis 7.0.15 also means to start a fast cycle when the stale
        // estimate is over the acceptable share, but it compares the estimate
        // (a fraction, 0.0..=1.0) with the percentage itself (10 at effort 1),
        // so that test never fires: Redis's fast cycle runs only after a slow
        // cycle hit its time limit. We keep that behaviour on purpose, because
        // the expiry-storm lesson (victims wait behind the slow cycle in cron,
        // not behind fast cycles in before_sleep) depends on it.
        if !state.timelimit_exit && state.stale_perc < p.acceptable_stale as f64 {
            return CycleReport::default();
        }
        if start < state.last_fast_cycle + 2 * p.fast_duration_us as i64 {
            return CycleReport::default();
        }
        state.last_fast_cycle = start;
    }

    let dbnum = host.dbs().len();
    // Normally a few dbs per call, resuming where the last call stopped
    // (`current_db`), so 16 dbs share the budget over several calls. After
    // a call that ran out of time, every db: expired keys are piling up
    // somewhere, and this call should reach them all.
    let mut dbs_per_call = CRON_DBS_PER_CALL;
    if dbs_per_call > dbnum || state.timelimit_exit {
        dbs_per_call = dbnum;
    }

    // The time budget: slow_time_perc of one cron period, in microseconds
    // (25% of 100 ms = 25 ms at hz 10), or the fast duration.
    let mut timelimit = (p.slow_time_perc * 1_000_000 / config.hz.max(1) / 100) as i64;
    if timelimit <= 0 {
        timelimit = 1;
    }
    if cycle == CycleType::Fast {
        timelimit = p.fast_duration_us as i64;
    }
    state.timelimit_exit = false;

    let mut total_sampled = 0u64;
    let mut total_expired = 0u64;
    let mut iteration = 0u64;

    let mut j = 0;
    while j < dbs_per_call && !state.timelimit_exit {
        let dbid = state.current_db % dbnum;
        state.current_db += 1;
        loop {
            iteration += 1;
            let db = &mut host.dbs()[dbid];
            let num = db.expires.len() as u64;
            if num == 0 {
                db.avg_ttl = 0;
                break;
            }
            let (size0, _, size1, _) = db.expires.table_sizes();
            let slots = (size0 + size1) as u64;
            // A table under 1% full is too sparse: sampling would mostly
            // hit empty buckets. Wait for it to be resized.
            if slots > DICT_HT_INITIAL_SIZE as u64 && num * 100 / slots < 1 {
                break;
            }
            let now = clock.mstime();
            // Sample, do not scan: 20 keys (at effort 1) per round says what
            // share of the db has expired, for a bounded price. Empty buckets
            // are visited too, so they are capped at 20 per wanted key, or a
            // sparse table would make one round walk most of it.
            let target = num.min(p.keys_per_loop);
            let max_buckets = target * 20;
            let (round_sampled, round_expired) = expire_round(host, dbid, now, target, max_buckets);
            total_sampled += round_sampled;
            total_expired += round_expired;

            // Check the time every 16 rounds: reading the clock is not free.
            if iteration & 0xf == 0 {
                let elapsed = clock.ustime() - start;
                if elapsed > timelimit {
                    state.timelimit_exit = true;
                    state.time_cap_reached_count += 1;
                    break;
                }
            }
            // Another round while nothing was sampled or the db looks stale:
            // more than acceptable_stale% of the sample had expired, so
            // more expired keys are likely waiting. Below it, the memory
            // they hold is accepted in exchange for the CPU time.
            let again =
                round_sampled == 0 || round_expired * 100 / round_sampled > p.acceptable_stale;
            if !again {
                break;
            }
        }
        j += 1;
    }

    let elapsed = (clock.ustime() - start).max(0) as u64;
    state.cycle_time_used_us += elapsed;
    let current_perc = if total_sampled > 0 {
        total_expired as f64 / total_sampled as f64
    } else {
        0.0
    };
    // A moving average over many cycles: one cycle's sample is small and
    // noisy, and INFO's expired_stale_perc should not jump about with it.
    state.stale_perc = current_perc * 0.05 + state.stale_perc * 0.95;
    CycleReport {
        ran: true,
        sampled: total_sampled,
        expired: total_expired,
        elapsed_us: elapsed,
    }
}

/// One round over one db: walk buckets of the expires dict from the db's
/// cursor, testing every key of each bucket, until `target` keys were
/// sampled or `max_buckets` buckets visited. Returns (sampled, expired).
fn expire_round(
    host: &mut dyn ExpireHost,
    dbid: usize,
    now: i64,
    target: u64,
    max_buckets: u64,
) -> (u64, u64) {
    let mut sampled = 0u64;
    let mut expired = 0u64;
    let mut checked_buckets = 0u64;
    let mut ttl_sum = 0i64;
    let mut ttl_samples = 0i64;
    while sampled < target && checked_buckets < max_buckets {
        for table in 0..2 {
            let db = &mut host.dbs()[dbid];
            let (size0, _, size1, _) = db.expires.table_sizes();
            let size = if table == 0 { size0 } else { size1 };
            if size == 0 {
                continue; // table 1 exists only while rehashing
            }
            let idx = (db.expires_cursor as usize) & (size - 1);
            checked_buckets += 1;
            // Collect the bucket first: deleting while walking a chain is
            // what Redis does with a saved `next` pointer.
            let bucket: Vec<(Box<[u8]>, i64)> = db
                .expires
                .bucket_iter(table, idx)
                .map(|(k, when)| (k.clone(), *when))
                .collect();
            for (key, when) in bucket {
                let ttl = when - now;
                if now > when {
                    // activeExpireCycleTryExpire: the key is expired (it is
                    // in the expires dict, so in the main dict too).
                    host.delete_expired_key(dbid, &key);
                    expired += 1;
                }
                if ttl > 0 {
                    ttl_sum = ttl_sum.saturating_add(ttl);
                    ttl_samples += 1;
                }
                sampled += 1;
            }
        }
        let db = &mut host.dbs()[dbid];
        db.expires_cursor = db.expires_cursor.wrapping_add(1);
    }
    let db = &mut host.dbs()[dbid];
    // avg_ttl: a running mean, 2% new sample, as Redis computes it.
    if ttl_samples > 0 {
        let avg_ttl = ttl_sum / ttl_samples;
        if db.avg_ttl == 0 {
            db.avg_ttl = avg_ttl;
        }
        db.avg_ttl = (db.avg_ttl / 50) * 49 + (avg_ttl / 50);
    }
    (sampled, expired)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::object::{RObj, StrValue, Value};
    use std::cell::Cell;

    /// A clock that moves forward `step_us` every time it is read.
    struct FakeClock {
        now_us: Cell<i64>,
        step_us: i64,
    }

    impl Clock for FakeClock {
        fn ustime(&self) -> i64 {
            let t = self.now_us.get();
            self.now_us.set(t + self.step_us);
            t
        }
    }

    fn db_with_volatile_keys(n: usize, expire_at: i64) -> Db {
        let mut db = Db::new(0);
        for i in 0..n {
            let key = format!("k{i}");
            db.add(
                key.as_bytes().into(),
                RObj::new(Value::Str(StrValue::Int(i as i64)), 0),
            );
            db.set_expire(key.as_bytes(), expire_at);
        }
        db
    }

    /// The dbs plus a count of deleted keys, as the server would keep.
    struct TestHost {
        dbs: Vec<Db>,
        freed: u64,
    }

    impl ExpireHost for TestHost {
        fn dbs(&mut self) -> &mut [Db] {
            &mut self.dbs
        }
        fn delete_expired_key(&mut self, dbid: usize, key: &[u8]) {
            if self.dbs[dbid].delete(key).is_some() {
                self.freed += 1;
            }
        }
    }

    fn host(db: Db) -> TestHost {
        TestHost {
            dbs: vec![db],
            freed: 0,
        }
    }

    fn cfg() -> ExpireCycleConfig {
        ExpireCycleConfig { effort: 1, hz: 10 }
    }

    #[test]
    fn effort_scales_like_redis() {
        let p1 = CycleParams::for_effort(1);
        assert_eq!(
            (
                p1.keys_per_loop,
                p1.fast_duration_us,
                p1.slow_time_perc,
                p1.acceptable_stale
            ),
            (20, 1000, 25, 10)
        );
        let p10 = CycleParams::for_effort(10);
        assert_eq!(
            (
                p10.keys_per_loop,
                p10.fast_duration_us,
                p10.slow_time_perc,
                p10.acceptable_stale
            ),
            (65, 3250, 43, 1)
        );
    }

    #[test]
    fn slow_cycle_deletes_expired_keys_without_any_access() {
        let mut h = host(db_with_volatile_keys(1000, 1_000));
        let clock = FakeClock {
            now_us: Cell::new(2_000_000),
            step_us: 1,
        };
        let mut state = ExpireCycleState::default();
        let report = active_expire_cycle(&mut h, &mut state, CycleType::Slow, cfg(), &clock);
        // All stale: rounds repeat (1 us per clock read is far below the
        // 25 ms budget) until the table is under 1% full, then wait for
        // cron to shrink it, as Redis does.
        assert!(report.ran);
        assert!(report.expired >= 990, "expired {}", report.expired);
        assert_eq!(h.freed, report.expired);
        assert_eq!(h.dbs[0].size() as u64, 1000 - report.expired);
        assert_eq!(h.dbs[0].expires.len(), h.dbs[0].size());
        // After the cron resize the rest goes too.
        h.dbs[0].expires.resize_to_fit();
        while h.dbs[0].expires.is_rehashing() {
            h.dbs[0].expires.rehash(100);
        }
        active_expire_cycle(&mut h, &mut state, CycleType::Slow, cfg(), &clock);
        assert_eq!(h.dbs[0].size(), 0);
        assert_eq!(h.freed, 1000);
    }

    #[test]
    fn slow_cycle_stops_at_its_budget_and_says_so() {
        let mut h = host(db_with_volatile_keys(100_000, 1_000));
        // Every clock read costs 1 ms: the 25 ms budget runs out quickly.
        let clock = FakeClock {
            now_us: Cell::new(2_000_000_000),
            step_us: 1000,
        };
        let mut state = ExpireCycleState::default();
        let report = active_expire_cycle(&mut h, &mut state, CycleType::Slow, cfg(), &clock);
        assert!(state.timelimit_exit);
        assert_eq!(state.time_cap_reached_count, 1);
        assert!(report.expired > 0 && report.expired < 100_000);
        assert_eq!(h.dbs[0].size() as u64, 100_000 - report.expired);
    }

    #[test]
    fn fast_cycle_runs_only_when_there_is_catching_up_to_do() {
        let mut h = host(db_with_volatile_keys(10, 4_000_000_000_000));
        let clock = FakeClock {
            now_us: Cell::new(1_000_000),
            step_us: 1,
        };
        let mut state = ExpireCycleState::default();
        let r = active_expire_cycle(&mut h, &mut state, CycleType::Fast, cfg(), &clock);
        assert!(
            !r.ran,
            "nothing stale and last cycle finished: fast cycle skipped"
        );

        state.timelimit_exit = true;
        let r = active_expire_cycle(&mut h, &mut state, CycleType::Fast, cfg(), &clock);
        assert!(r.ran);
        // Not again within 2x the fast duration of the previous start.
        state.timelimit_exit = true;
        let r = active_expire_cycle(&mut h, &mut state, CycleType::Fast, cfg(), &clock);
        assert!(!r.ran);
    }

    #[test]
    fn fast_cycle_ignores_the_stale_estimate_as_redis_7_0_does() {
        // Every key stale and the estimate at 100%: Redis 7.0.15 compares the
        // fraction (1.0) with the percentage (10), so it still skips.
        let mut h = host(db_with_volatile_keys(100, 1_000));
        let clock = FakeClock {
            now_us: Cell::new(2_000_000),
            step_us: 1,
        };
        let mut state = ExpireCycleState {
            stale_perc: 1.0,
            ..ExpireCycleState::default()
        };
        let r = active_expire_cycle(&mut h, &mut state, CycleType::Fast, cfg(), &clock);
        assert!(!r.ran, "a high stale estimate alone starts no fast cycle");
        assert_eq!(h.dbs[0].size(), 100);
    }

    #[test]
    fn stale_estimate_moves_five_percent_per_cycle() {
        let mut h = host(db_with_volatile_keys(100, 1_000));
        let clock = FakeClock {
            now_us: Cell::new(2_000_000),
            step_us: 1,
        };
        let mut state = ExpireCycleState::default();
        active_expire_cycle(&mut h, &mut state, CycleType::Slow, cfg(), &clock);
        assert!((state.stale_perc - 0.05).abs() < 1e-9);
    }

    #[test]
    fn live_keys_feed_avg_ttl_and_stay() {
        let mut h = host(db_with_volatile_keys(50, 2_000 + 60_000));
        let clock = FakeClock {
            now_us: Cell::new(2_000_000),
            step_us: 1,
        };
        let mut state = ExpireCycleState::default();
        let r = active_expire_cycle(&mut h, &mut state, CycleType::Slow, cfg(), &clock);
        assert_eq!(r.expired, 0);
        assert_eq!(h.dbs[0].size(), 50);
        assert!(h.dbs[0].avg_ttl > 0 && h.dbs[0].avg_ttl <= 60_000);
    }
}
