//! The latency monitor and per-command latency histograms (Redis's
//! latency.c and the latency-tracking half of server.c; the sparkline drawing
//! is sparkline.rs, as sparkline.c).
//!
//! Two instruments live here, both fed from one place, `call()`:
//!
//! * **The latency monitor** (`LATENCY LATEST/HISTORY/GRAPH/DOCTOR/RESET`).
//!   Code paths that may block the single thread (a slow command, the
//!   expire cycle, a fork...) report how many milliseconds they took under
//!   an *event* name. When `latency-monitor-threshold` is set and the time
//!   reaches it, the sample goes into that event's time series: a ring of
//!   LATENCY_TS_LEN slots holding at most one sample per second (the
//!   largest one seen in that second) plus the all-time maximum. Events
//!   are created on first use, so there is no list of names to maintain.
//!
//! * **Command latency histograms** (`LATENCY HISTOGRAM`, INFO
//!   latencystats). With `latency-tracking yes` (the default) every call of
//!   every command goes into an HDR histogram of nanoseconds, created the
//!   first time the command runs. HDR keeps a fixed relative precision
//!   (two significant digits here) with a few KB of counters per command,
//!   whatever the number of calls. The layout is the one of the C
//!   hdr_histogram Redis vendors; we use the `hdrhistogram` crate, a port of
//!   the same library, and walk its buckets the way Redis's C iterators do.
//!
//! DOCTOR and GRAPH are text for humans: GRAPH draws the series as an ASCII
//! sparkline (sparkline.rs, the twin of sparkline.c), DOCTOR prints
//! statistics per event and advice keyed on the event names and the
//! configuration.

use hdrhistogram::Histogram;

use crate::networking::Client;
use crate::server::Server;
use crate::sparkline::{sparkline_render, SparklineSequence, SPARKLINE_FILL};

/// LATENCY_TS_LEN: each event remembers its last 160 seconds with a spike
/// (one sample per second at most), enough for a sparkline of two screens.
pub const LATENCY_TS_LEN: usize = 160;

/// LATENCY_GRAPH_COLS: LATENCY GRAPH is drawn 80 columns wide, one column
/// per sample; longer series continue in a second block below.
pub const LATENCY_GRAPH_COLS: usize = 80;

/// LATENCY_HISTOGRAM_MIN_VALUE / _MAX_VALUE (server.h): histograms track
/// 1 ns .. 1 s. Shorter calls count as 1 ns, longer ones as 1 s, so a
/// record never fails and the counters stay a fixed size.
pub const LATENCY_HISTOGRAM_MIN_VALUE: u64 = 1;
pub const LATENCY_HISTOGRAM_MAX_VALUE: u64 = 1_000_000_000;

/// LATENCY_HISTOGRAM_PRECISION: two significant digits, i.e. every value
/// is known to within 1%. That is 3072 counters (24 KB) per command.
pub const LATENCY_HISTOGRAM_PRECISION: u8 = 2;

/// LATENCY HISTOGRAM reports cumulative counts at power-of-two steps
/// starting at 1024 ns (~1 us): hdr_iter_log_init(&iter, h, 1024, 2).
const HISTOGRAM_FIRST_STEP_NS: u64 = 1024;
const HISTOGRAM_STEP_FACTOR: u64 = 2;

// ---------------------------------------------------------------------------
// Time series (latency.h: struct latencySample, struct latencyTimeSeries)
// ---------------------------------------------------------------------------

/// One second with a spike: when, and the worst latency in that second.
/// `time == 0` marks a slot never written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LatencySample {
    /// Unix time in seconds (int32_t in Redis).
    pub time: i32,
    /// Milliseconds.
    pub latency: u32,
}

/// The ring of one event: `idx` is the slot the next new second goes to,
/// so the slot before it holds the most recent sample.
#[derive(Clone, Debug)]
pub struct LatencyTimeSeries {
    pub idx: usize,
    /// All-time maximum, kept even after its sample left the ring.
    pub max: u32,
    pub samples: [LatencySample; LATENCY_TS_LEN],
}

impl LatencyTimeSeries {
    fn new() -> Self {
        LatencyTimeSeries {
            idx: 0,
            max: 0,
            samples: [LatencySample::default(); LATENCY_TS_LEN],
        }
    }

    /// The most recent sample (the slot before `idx`).
    pub fn last(&self) -> LatencySample {
        self.samples[(self.idx + LATENCY_TS_LEN - 1) % LATENCY_TS_LEN]
    }

    /// The written samples, oldest first: the ring read from `idx` round.
    pub fn samples_oldest_first(&self) -> impl Iterator<Item = LatencySample> + '_ {
        (0..LATENCY_TS_LEN)
            .map(move |j| self.samples[(self.idx + j) % LATENCY_TS_LEN])
            .filter(|s| s.time != 0)
    }
}

/// One named event and its series (an entry of server.latency_events).
#[derive(Clone, Debug)]
pub struct LatencyEvent {
    pub name: String,
    pub ts: LatencyTimeSeries,
}

/// server.latency_events. Redis keeps a dict; there are a dozen event names
/// at most, so a Vec in creation order is as fast and reads the same in
/// the debugger every time (Redis's own order is the dict's, i.e. random).
#[derive(Default, Debug)]
pub struct LatencyMonitor {
    pub events: Vec<LatencyEvent>,
}

impl LatencyMonitor {
    /// latencyMonitorInit: no series until the first sample of each event.
    pub fn new() -> Self {
        LatencyMonitor { events: Vec::new() }
    }

    /// latencyAddSampleIfNeeded (a macro in latency.h): keep the sample
    /// only when monitoring is on (threshold > 0) and it reaches the
    /// threshold. This is the call every instrumented code path makes.
    pub fn add_sample_if_needed(&mut self, threshold_ms: i64, event: &str, latency_ms: u64) {
        if threshold_ms > 0 && latency_ms >= threshold_ms as u64 {
            self.add_sample(event, latency_ms, crate::server::mstime() / 1000);
        }
    }

    /// latencyAddSample: record `latency_ms` for `event` at `now_unix`. A
    /// second sample in the same second only raises that second's value, so
    /// the ring holds at most one sample per second.
    pub fn add_sample(&mut self, event: &str, latency_ms: u64, now_unix: i64) {
        let latency = latency_ms.min(u32::MAX as u64) as u32;
        let now = now_unix as i32;
        let pos = match self.events.iter().position(|e| e.name == event) {
            Some(pos) => pos,
            None => {
                self.events.push(LatencyEvent {
                    name: event.to_string(),
                    ts: LatencyTimeSeries::new(),
                });
                self.events.len() - 1
            }
        };
        let ts = &mut self.events[pos].ts;
        if latency > ts.max {
            ts.max = latency;
        }

        // Same second as the previous sample: keep the worse of the two.
        let prev = (ts.idx + LATENCY_TS_LEN - 1) % LATENCY_TS_LEN;
        if ts.samples[prev].time == now {
            if latency > ts.samples[prev].latency {
                ts.samples[prev].latency = latency;
            }
            return;
        }

        ts.samples[ts.idx] = LatencySample { time: now, latency };
        ts.idx = (ts.idx + 1) % LATENCY_TS_LEN;
    }

    /// dictFetchValue(server.latency_events, name): an exact (case
    /// sensitive) match, as HISTORY and GRAPH look events up.
    pub fn find(&self, name: &[u8]) -> Option<&LatencyEvent> {
        self.events.iter().find(|e| e.name.as_bytes() == name)
    }

    /// latencyResetEvent: drop the series of `event` (compared without
    /// case), or of every event when None. Returns how many were dropped.
    pub fn reset_event(&mut self, event: Option<&[u8]>) -> usize {
        let before = self.events.len();
        match event {
            None => self.events.clear(),
            Some(name) => self
                .events
                .retain(|e| !e.name.as_bytes().eq_ignore_ascii_case(name)),
        }
        before - self.events.len()
    }
}

// ---------------------------------------------------------------------------
// Analysis (latency.c analyzeLatencyForEvent)
// ---------------------------------------------------------------------------

/// struct latencyStats: what DOCTOR says about one event.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LatencyStats {
    pub all_time_high: u32,
    /// Integer mean of the samples in the ring (ms).
    pub avg: u32,
    pub min: u32,
    pub max: u32,
    /// Mean absolute deviation from `avg` (ms).
    pub mad: u32,
    pub samples: u32,
    /// Seconds from the oldest sample to now (at least 1).
    pub period: i64,
}

/// analyzeLatencyForEvent: two passes over the ring, the first for count,
/// min, max, sum and the oldest time, the second for the deviation.
pub fn analyze_latency_for_event(ts: &LatencyTimeSeries, now_unix: i64) -> LatencyStats {
    let mut ls = LatencyStats {
        all_time_high: ts.max,
        ..LatencyStats::default()
    };
    let mut sum: u64 = 0;
    let mut oldest: i64 = 0;
    for s in ts.samples_oldest_first() {
        ls.samples += 1;
        if ls.samples == 1 {
            ls.min = s.latency;
            ls.max = s.latency;
        } else {
            ls.min = ls.min.min(s.latency);
            ls.max = ls.max.max(s.latency);
        }
        sum += s.latency as u64;
        if oldest == 0 || (s.time as i64) < oldest {
            oldest = s.time as i64;
        }
    }
    if ls.samples == 0 {
        return ls;
    }
    ls.avg = (sum / ls.samples as u64) as u32;
    ls.period = (now_unix - oldest).max(0);
    if ls.period == 0 {
        ls.period = 1;
    }

    let deviation: u64 = ts
        .samples_oldest_first()
        .map(|s| (ls.avg as i64 - s.latency as i64).unsigned_abs())
        .sum();
    ls.mad = (deviation / ls.samples as u64) as u32;
    ls
}

/// latencyCommandGenSparkeline: the LATENCY GRAPH text. Each column is
/// labelled with how long ago its sample was taken (12s, 3m, 2h, 1d).
pub fn latency_command_gen_sparkline(event: &str, ts: &LatencyTimeSeries, now_unix: i64) -> String {
    let mut seq = SparklineSequence::new();
    let (mut min, mut max) = (0u32, 0u32);
    for s in ts.samples_oldest_first() {
        if seq.is_empty() {
            min = s.latency;
            max = s.latency;
        } else {
            min = min.min(s.latency);
            max = max.max(s.latency);
        }
        let elapsed = now_unix - s.time as i64;
        let label = if elapsed < 60 {
            format!("{elapsed}s")
        } else if elapsed < 3600 {
            format!("{}m", elapsed / 60)
        } else if elapsed < 3600 * 24 {
            format!("{}h", elapsed / 3600)
        } else {
            format!("{}d", elapsed / (3600 * 24))
        };
        seq.add_sample(s.latency as f64, Some(label));
    }

    let mut graph = format!(
        "{event} - high {max} ms, low {min} ms (all time high {} ms)\n",
        ts.max
    );
    graph.push_str(&"-".repeat(LATENCY_GRAPH_COLS));
    graph.push('\n');
    sparkline_render(&mut graph, &seq, LATENCY_GRAPH_COLS, 4, SPARKLINE_FILL);
    graph
}

// ---------------------------------------------------------------------------
// LATENCY DOCTOR (latency.c createLatencyReport)
// ---------------------------------------------------------------------------

/// The server state the report's advice depends on, gathered by the
/// handler so the report itself is a pure function (and testable).
#[derive(Clone, Debug, Default)]
pub struct ReportContext {
    pub latency_monitor_threshold: i64,
    /// Microseconds; -1 = slowlog disabled.
    pub slowlog_log_slower_than: i64,
    /// Effective hz (server.hz).
    pub hz: i64,
    /// server.stat_fork_rate, GB/sec.
    pub fork_rate: f64,
    /// appendfsync always.
    pub aof_fsync_always: bool,
    /// THPGetAnonHugePagesSize(): bytes of transparent huge pages in use.
    pub anon_huge_pages: u64,
}

/// The advice flags createLatencyReport accumulates while it walks the
/// events; each one prints one paragraph at the end, in this order.
#[derive(Default, Debug)]
struct Advice {
    better_vm: bool,
    slowlog_enabled: bool,
    slowlog_tuning: bool,
    slowlog_inspect: bool,
    disk_contention: bool,
    scheduler: bool,
    data_writeback: bool,
    no_appendfsync: bool,
    local_disk: bool,
    ssd: bool,
    write_load_info: bool,
    hz: bool,
    large_objects: bool,
    mass_eviction: bool,
    relax_fsync_policy: bool,
    disable_thp: bool,
    /// How many pieces of advice were noted (some twice, as in Redis).
    count: usize,
}

/// createLatencyReport: per-event statistics, then the advice.
pub fn create_latency_report(mon: &LatencyMonitor, ctx: &ReportContext, now_unix: i64) -> String {
    if mon.events.is_empty() && ctx.latency_monitor_threshold == 0 {
        return "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n".to_string();
    }

    let mut report = String::new();
    let mut advice = Advice::default();
    for (i, e) in mon.events.iter().enumerate() {
        if i == 0 {
            report.push_str("Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n");
        }
        let ls = analyze_latency_for_event(&e.ts, now_unix);
        report.push_str(&format!(
            "{}. {}: {} latency spikes (average {}ms, mean deviation {}ms, period {:.2} sec). Worst all time event {}ms.",
            i + 1,
            e.name,
            ls.samples,
            ls.avg,
            ls.mad,
            ls.period as f64 / ls.samples as f64,
            e.ts.max
        ));
        if e.name.eq_ignore_ascii_case("fork") {
            report.push_str(&fork_quality_sentence(ctx.fork_rate, &mut advice));
        }
        note_advice_for_event(&e.name, ctx, &mut advice);
        report.push('\n');
    }

    // Advice not tied to an event.
    if ctx.anon_huge_pages > 0 {
        advice.disable_thp = true;
        advice.count += 1;
    }

    if mon.events.is_empty() && advice.count == 0 {
        report.push_str("Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n");
    } else if !mon.events.is_empty() && advice.count == 0 {
        report.push_str("\nWhile there are latency events logged, I'm not able to suggest any easy fix. Please use the Redis community to get some help, providing this report in your help request.\n");
    } else {
        report.push_str("\nI have a few advices for you:\n\n");
        append_advice(&mut report, &advice, ctx);
    }
    report
}

/// The fork event's extra sentence: how fast fork() copies page tables.
fn fork_quality_sentence(fork_rate: f64, advice: &mut Advice) -> String {
    let quality = if fork_rate < 10.0 {
        "terrible"
    } else if fork_rate < 25.0 {
        "poor"
    } else if fork_rate < 100.0 {
        "good"
    } else {
        "excellent"
    };
    if fork_rate < 25.0 {
        advice.better_vm = true;
        advice.count += 1;
    }
    format!(" Fork rate is {fork_rate:.2} GB/sec ({quality}).")
}

/// Which advice an event calls for (the strcasecmp chain of
/// createLatencyReport).
fn note_advice_for_event(event: &str, ctx: &ReportContext, a: &mut Advice) {
    let is = |name: &str| event.eq_ignore_ascii_case(name);
    if is("command") {
        if ctx.slowlog_log_slower_than < 0 {
            a.slowlog_enabled = true;
            a.count += 1;
        } else if ctx.slowlog_log_slower_than / 1000 > ctx.latency_monitor_threshold {
            a.slowlog_tuning = true;
            a.count += 1;
        }
        a.slowlog_inspect = true;
        a.large_objects = true;
        a.count += 2;
    }
    if is("fast-command") {
        a.scheduler = true;
        a.count += 1;
    }
    if is("aof-write-pending-fsync") {
        (a.local_disk, a.disk_contention, a.ssd, a.data_writeback) = (true, true, true, true);
        a.count += 4;
    }
    if is("aof-write-active-child") {
        (a.no_appendfsync, a.data_writeback, a.ssd) = (true, true, true);
        a.count += 3;
    }
    if is("aof-write-alone") {
        (a.local_disk, a.data_writeback, a.ssd) = (true, true, true);
        a.count += 3;
    }
    if is("aof-fsync-always") {
        a.relax_fsync_policy = true;
        a.count += 1;
    }
    if is("aof-fstat") || is("rdb-unlink-temp-file") {
        (a.disk_contention, a.local_disk) = (true, true);
        a.count += 2;
    }
    if is("aof-rewrite-diff-write") || is("aof-rename") {
        (a.write_load_info, a.data_writeback, a.ssd, a.local_disk) = (true, true, true, true);
        a.count += 4;
    }
    if is("expire-cycle") {
        (a.hz, a.large_objects) = (true, true);
        a.count += 2;
    }
    if is("eviction-del") {
        a.large_objects = true;
        a.count += 1;
    }
    if is("eviction-cycle") {
        a.mass_eviction = true;
        a.count += 1;
    }
}

/// The advice paragraphs, in Redis's order.
fn append_advice(report: &mut String, a: &Advice, ctx: &ReportContext) {
    let suggested_slowlog = (ctx.latency_monitor_threshold as u64).wrapping_mul(1000);
    if a.better_vm {
        report.push_str("- If you are using a virtual machine, consider upgrading it with a faster one using a hypervisior that provides less latency during fork() calls. Xen is known to have poor fork() performance. Even in the context of the same VM provider, certain kinds of instances can execute fork faster than others.\n");
    }
    if a.slowlog_enabled {
        report.push_str(&format!("- There are latency issues with potentially slow commands you are using. Try to enable the Slow Log Redis feature using the command 'CONFIG SET slowlog-log-slower-than {suggested_slowlog}'. If the Slow log is disabled Redis is not able to log slow commands execution for you.\n"));
    }
    if a.slowlog_tuning {
        report.push_str(&format!("- Your current Slow Log configuration only logs events that are slower than your configured latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than {suggested_slowlog}'.\n"));
    }
    if a.slowlog_inspect {
        report.push_str("- Check your Slow Log to understand what are the commands you are running which are too slow to execute. Please check https://redis.io/commands/slowlog for more information.\n");
    }
    if a.scheduler {
        report.push_str("- The system is slow to execute Redis code paths not containing system calls. This usually means the system does not provide Redis CPU time to run for long periods. You should try to:\n  1) Lower the system load.\n  2) Use a computer / VM just for Redis if you are running other software in the same system.\n  3) Check if you have a \"noisy neighbour\" problem.\n  4) Check with 'redis-cli --intrinsic-latency 100' what is the intrinsic latency in your system.\n  5) Check if the problem is allocator-related by recompiling Redis with MALLOC=libc, if you are using Jemalloc. However this may create fragmentation problems.\n");
    }
    if a.local_disk {
        report.push_str("- It is strongly advised to use local disks for persistence, especially if you are using AOF. Remote disks provided by platform-as-a-service providers are known to be slow.\n");
    }
    if a.ssd {
        report.push_str("- SSD disks are able to reduce fsync latency, and total time needed for snapshotting and AOF log rewriting (resulting in smaller memory usage). With extremely high write load SSD disks can be a good option. However Redis should perform reasonably with high load using normal disks. Use this advice as a last resort.\n");
    }
    if a.data_writeback {
        report.push_str("- Mounting ext3/4 filesystems with data=writeback can provide a performance boost compared to data=ordered, however this mode of operation provides less guarantees, and sometimes it can happen that after a hard crash the AOF file will have a half-written command at the end and will require to be repaired before Redis restarts.\n");
    }
    if a.disk_contention {
        report.push_str("- Try to lower the disk contention. This is often caused by other disk intensive processes running in the same computer (including other Redis instances).\n");
    }
    if a.no_appendfsync {
        report.push_str("- Assuming from the point of view of data safety this is viable in your environment, you could try to enable the 'no-appendfsync-on-rewrite' option, so that fsync will not be performed while there is a child rewriting the AOF file or producing an RDB file (the moment where there is high disk contention).\n");
    }
    if a.relax_fsync_policy && ctx.aof_fsync_always {
        report.push_str("- Your fsync policy is set to 'always'. It is very hard to get good performances with such a setup, if possible try to relax the fsync policy to 'onesec'.\n");
    }
    if a.write_load_info {
        report.push_str("- Latency during the AOF atomic rename operation or when the final difference is flushed to the AOF file at the end of the rewrite, sometimes is caused by very high write load, causing the AOF buffer to get very large. If possible try to send less commands to accomplish the same work, or use Lua scripts to group multiple operations into a single EVALSHA call.\n");
    }
    if a.hz && ctx.hz < 100 {
        report.push_str("- In order to make the Redis keys expiring process more incremental, try to set the 'hz' configuration parameter to 100 using 'CONFIG SET hz 100'.\n");
    }
    if a.large_objects {
        report.push_str("- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If you have very large objects that are often deleted, expired, or evicted, try to fragment those objects into multiple smaller objects.\n");
    }
    if a.mass_eviction {
        report.push_str("- Sudden changes to the 'maxmemory' setting via 'CONFIG SET', or allocation of large objects via sets or sorted sets intersections, STORE option of SORT, Redis Cluster large keys migrations (RESTORE command), may create sudden memory pressure forcing the server to block trying to evict keys. \n");
    }
    if a.disable_thp {
        report.push_str("- I detected a non zero amount of anonymous huge pages used by your process. This creates very serious latency events in different conditions, especially when Redis is persisting on disk. To disable THP support use the command 'echo never > /sys/kernel/mm/transparent_hugepage/enabled', make sure to also add it into /etc/rc.local so that the command will be executed again after a reboot. Note that even if you have already disabled THP, you still need to restart the Redis process to get rid of the huge pages already created.\n");
    }
}

/// THPGetAnonHugePagesSize (zmalloc_get_smap_bytes_by_field): the sum of
/// the `AnonHugePages:` fields of /proc/self/smaps, in bytes. 0 where
/// there is no such file (not Linux).
pub fn thp_get_anon_huge_pages_size() -> u64 {
    let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else {
        return 0;
    };
    smaps
        .lines()
        .filter_map(|l| l.strip_prefix("AnonHugePages:"))
        .filter_map(|rest| rest.split_whitespace().next()?.parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .sum()
}

// ---------------------------------------------------------------------------
// Command latency histograms (server.c updateCommandLatencyHistogram,
// latency.c fillCommandCDF, server.c fillPercentileDistributionLatencies)
// ---------------------------------------------------------------------------

/// The latency distribution of one command (redisCommand.latency_histogram).
/// Empty until the command first runs, like Redis's lazily created one.
#[derive(Default, Debug)]
pub struct CommandHistogram {
    hdr: Option<Histogram<u64>>,
}

impl CommandHistogram {
    pub fn new() -> Self {
        CommandHistogram { hdr: None }
    }

    /// updateCommandLatencyHistogram. Redis times commands in whole
    /// microseconds and records `duration_us * 1000`, so we truncate to
    /// whole microseconds too: a call under 1 us counts as 0 ns, clamped
    /// to LATENCY_HISTOGRAM_MIN_VALUE (INFO shows such a PING as 0.001).
    pub fn record(&mut self, duration_ns: u64) {
        let ns = (duration_ns / 1000 * 1000)
            .clamp(LATENCY_HISTOGRAM_MIN_VALUE, LATENCY_HISTOGRAM_MAX_VALUE);
        if self.hdr.is_none() {
            self.hdr = Histogram::new_with_bounds(
                LATENCY_HISTOGRAM_MIN_VALUE,
                LATENCY_HISTOGRAM_MAX_VALUE,
                LATENCY_HISTOGRAM_PRECISION,
            )
            .ok();
        }
        if let Some(h) = self.hdr.as_mut() {
            // Cannot fail: the value is within the bounds.
            let _ = h.record(ns);
        }
    }

    /// Number of calls recorded (histogram->total_count).
    pub fn count(&self) -> u64 {
        self.hdr.as_ref().map_or(0, |h| h.len())
    }

    /// CONFIG RESETSTAT (resetCommandTableStats): Redis frees the histogram.
    pub fn reset(&mut self) {
        self.hdr = None;
    }

    /// hdr_value_at_percentile, in microseconds. The rank is rounded to
    /// the nearest call (at least the first); the answer is the highest
    /// value of that call's bucket, or the lowest for the 0th percentile.
    pub fn percentile(&self, p: f64) -> f64 {
        let Some(h) = self.hdr.as_ref() else {
            return 0.0;
        };
        let requested = p.min(100.0);
        let rank = ((requested / 100.0) * h.len() as f64 + 0.5) as u64;
        let rank = rank.max(1);
        let mut seen = 0u64;
        for v in h.iter_recorded() {
            seen += v.count_at_value();
            if seen >= rank {
                let ns = if p == 0.0 {
                    h.lowest_equivalent(v.value_iterated_to())
                } else {
                    v.value_iterated_to()
                };
                return ns as f64 / 1000.0;
            }
        }
        0.0
    }

    /// fillCommandCDF's buckets: (upper bound in us, calls up to it) at
    /// 1024 ns, 2048 ns, ... (hdr_iter_log_init(h, 1024, 2)), only the steps
    /// where the cumulative count grew. The bound reported is the highest
    /// value of the HDR bucket holding the step, so the keys read 1, 2, 4,
    /// 8, 16, 33, 66, 132, 264... Calls beyond the last counter of the
    /// histogram (> 2^30 - 2^22 ns) show under the last counter's bound,
    /// as the C iterator does when it runs out of buckets.
    pub fn cdf(&self) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        let Some(h) = self.hdr.as_ref() else {
            return out;
        };
        let total = h.len();
        // The highest value the last counter stands for.
        let top = h.iter_all().last().map_or(0, |v| v.value_iterated_to());
        let mut step = HISTOGRAM_FIRST_STEP_NS;
        let mut previous = 0;
        while previous < total {
            let (bound, cumulative) = if step <= top {
                (h.highest_equivalent(step), h.count_between(0, step))
            } else {
                (top, total)
            };
            if cumulative > previous {
                out.push((bound / 1000, cumulative));
            }
            previous = cumulative;
            if step > top {
                break;
            }
            step *= HISTOGRAM_STEP_FACTOR;
        }
        out
    }
}

/// trimDoubleString over "%f": 50 -> "50", 99.9 -> "99.9".
fn percentile_label(p: f64) -> String {
    let s = format!("{p:.6}");
    let s = s.trim_end_matches('0');
    s.strip_suffix('.').unwrap_or(s).to_string()
}

/// fillPercentileDistributionLatencies: one INFO line,
/// `latency_percentiles_usec_<name>:p50=1.003,p99=2.007,p99.9=2.007`.
pub fn fill_percentile_distribution_latencies(
    name: &str,
    h: &CommandHistogram,
    percentiles: &[f64],
) -> String {
    let fields: Vec<String> = percentiles
        .iter()
        .map(|&p| format!("p{}={:.3}", percentile_label(p), h.percentile(p)))
        .collect();
    format!("latency_percentiles_usec_{name}:{}\r\n", fields.join(","))
}

/// The body of INFO latencystats (after the `# Latencystats` header): a
/// line per command that has run, subcommands as `config|get`. Empty with
/// `latency-tracking no`.
pub fn latencystats_info(srv: &Server) -> String {
    if !srv.config.latency_tracking {
        return String::new();
    }
    let percentiles = &srv.config.latency_tracking_info_percentiles;
    let mut info = String::new();
    for cmd in &srv.commands.commands {
        if cmd.histogram.count() > 0 {
            info.push_str(&fill_percentile_distribution_latencies(
                cmd.fullname,
                &cmd.histogram,
                percentiles,
            ));
        }
    }
    info
}

// ---------------------------------------------------------------------------
// The LATENCY command (latency.c latencyCommand)
// ---------------------------------------------------------------------------

/// An argument as the C string Redis sees (`c->argv[j]->ptr` passed to
/// strcmp/printf): up to its first NUL byte.
fn cstr(arg: &[u8]) -> &[u8] {
    let end = arg.iter().position(|&b| b == 0).unwrap_or(arg.len());
    &arg[..end]
}

/// LATENCY LATEST
// redis: latency.c latencyCommandReplyWithLatestEvents
pub fn latency_latest_command(srv: &mut Server, c: &mut Client) {
    c.add_reply_array_len(srv.latency.events.len());
    for e in &srv.latency.events {
        let last = e.ts.last();
        c.add_reply_array_len(4);
        c.add_reply_bulk(e.name.as_bytes());
        c.add_reply_integer(last.time as i64);
        c.add_reply_integer(last.latency as i64);
        c.add_reply_integer(e.ts.max as i64);
    }
}

/// LATENCY HISTORY event
// redis: latency.c latencyCommandReplyWithSamples
pub fn latency_history_command(srv: &mut Server, c: &mut Client) {
    let Some(e) = srv.latency.find(cstr(c.arg(2))) else {
        c.add_reply_array_len(0);
        return;
    };
    let samples: Vec<LatencySample> = e.ts.samples_oldest_first().collect();
    c.add_reply_array_len(samples.len());
    for s in samples {
        c.add_reply_array_len(2);
        c.add_reply_integer(s.time as i64);
        c.add_reply_integer(s.latency as i64);
    }
}

/// LATENCY RESET [event [event ...]]
// redis: latency.c latencyCommand (reset), latencyResetEvent
pub fn latency_reset_command(srv: &mut Server, c: &mut Client) {
    let resets = if c.argc() == 2 {
        srv.latency.reset_event(None)
    } else {
        let mut resets = 0;
        for j in 2..c.argc() {
            resets += srv.latency.reset_event(Some(cstr(c.arg(j))));
        }
        resets
    };
    c.add_reply_integer(resets as i64);
}

/// LATENCY GRAPH event
// redis: latency.c latencyCommand (graph), latencyCommandGenSparkeline
pub fn latency_graph_command(srv: &mut Server, c: &mut Client) {
    let name = cstr(c.arg(2));
    let Some(e) = srv.latency.find(name) else {
        // addReplyErrorFormat: newlines in the name become spaces.
        let shown: String = String::from_utf8_lossy(name)
            .chars()
            .map(|ch| if ch == '\r' || ch == '\n' { ' ' } else { ch })
            .collect();
        c.add_reply_error(&format!("ERR No samples available for event '{shown}'"));
        return;
    };
    let graph = latency_command_gen_sparkline(&e.name, &e.ts, crate::server::mstime() / 1000);
    c.add_reply_verbatim(graph.as_bytes());
}

/// LATENCY DOCTOR
// redis: latency.c latencyCommand (doctor), createLatencyReport
pub fn latency_doctor_command(srv: &mut Server, c: &mut Client) {
    let ctx = ReportContext {
        latency_monitor_threshold: srv.config.latency_monitor_threshold,
        slowlog_log_slower_than: srv.config.slowlog_log_slower_than,
        hz: srv.hz,
        // No fork() and no AOF in redis-lite yet: no `fork` or `aof-*`
        // events can exist, so these never reach the text.
        fork_rate: 0.0,
        aof_fsync_always: false,
        anon_huge_pages: thp_get_anon_huge_pages_size(),
    };
    let report = create_latency_report(&srv.latency, &ctx, crate::server::mstime() / 1000);
    c.add_reply_verbatim(report.as_bytes());
}

/// LATENCY HISTOGRAM [command [command ...]]
// redis: latency.c latencyAllCommandsFillCDF, latencySpecificCommandsFillCDF
pub fn latency_histogram_command(srv: &mut Server, c: &mut Client) {
    // Which commands to show, in reply order: all of them, or each named
    // one (a container brings its subcommands; duplicates repeat).
    let mut ids: Vec<usize> = Vec::new();
    if c.argc() == 2 {
        ids.extend(0..srv.commands.commands.len());
    } else {
        for j in 2..c.argc() {
            if let Some(id) = lookup_command_by_fullname(srv, c.arg(j)) {
                ids.push(id);
                ids.extend(subcommand_ids(srv, id));
            }
        }
    }
    ids.retain(|&id| srv.commands.commands[id].histogram.count() > 0);

    c.add_reply_map_len(ids.len());
    for id in ids {
        let cmd = &srv.commands.commands[id];
        fill_command_cdf(c, cmd.fullname, &cmd.histogram);
    }
}

/// fillCommandCDF: `name => {calls: n, histogram_usec: {bound: count...}}`.
fn fill_command_cdf(c: &mut Client, fullname: &str, h: &CommandHistogram) {
    c.add_reply_bulk(fullname.as_bytes());
    c.add_reply_map_len(2);
    c.add_reply_bulk(b"calls");
    c.add_reply_integer(h.count() as i64);
    c.add_reply_bulk(b"histogram_usec");
    let buckets = h.cdf();
    c.add_reply_map_len(buckets.len());
    for (usec, cumulative) in buckets {
        c.add_reply_integer(usec as i64);
        c.add_reply_integer(cumulative as i64);
    }
}

/// lookupCommandBySds: "get", or "config|get" for a subcommand (one level
/// only). Case-insensitive; None for anything else.
fn lookup_command_by_fullname(srv: &Server, name: &[u8]) -> Option<usize> {
    let mut parts = name.split(|&b| b == b'|');
    let base = srv.commands.lookup(parts.next()?)?;
    match (parts.next(), parts.next()) {
        (None, _) => Some(base.0),
        (Some(sub), None) => srv.commands.lookup_sub(base, sub).map(|id| id.0),
        (Some(_), Some(_)) => None,
    }
}

/// The subcommands of a container, in table order.
fn subcommand_ids(srv: &Server, id: usize) -> Vec<usize> {
    let mut subs: Vec<usize> = srv.commands.commands[id]
        .subcommands
        .values()
        .map(|s| s.0)
        .collect();
    subs.sort_unstable();
    subs
}

/// LATENCY HELP
// redis: latency.c latencyCommand (help)
pub fn latency_help_command(_srv: &mut Server, c: &mut Client) {
    c.add_reply_help(
        "LATENCY",
        &[
            "DOCTOR",
            "    Return a human readable latency analysis report.",
            "GRAPH <event>",
            "    Return an ASCII latency graph for the <event> class.",
            "HISTORY <event>",
            "    Return time-latency samples for the <event> class.",
            "LATEST",
            "    Return the latest latency samples for all events.",
            "RESET [<event> ...]",
            "    Reset latency data of one or more <event> classes.",
            "    (default: reset all data for all event classes)",
            "HISTOGRAM [COMMAND ...]",
            "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
            "    If no commands are specified then all histograms are replied.",
        ],
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real redis-server 7.0.15 with latency-monitor-threshold 1, fed
    /// `DEBUG SLEEP 0.0NN` (NN = (i*37)%23+2 ms) once a second for 100 s,
    /// then asked TIME, LATENCY HISTORY command, GRAPH command and DOCTOR
    /// in one pipeline. These are the times (offsets from the first) and
    /// latencies HISTORY returned.
    const CAPTURE_NOW: i64 = 1796010151;
    const CAPTURE_BASE: i64 = 1796010020;
    const CAPTURE_OFFSETS: [i64; 100] = [
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
        25, 26, 27, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48,
        49, 50, 51, 52, 53, 54, 55, 56, 57, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72,
        73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 89, 90, 91, 92, 93, 94, 95, 96,
        97, 98, 99, 100, 101, 102,
    ];
    const CAPTURE_LATENCIES: [u64; 100] = [
        16, 7, 22, 12, 3, 17, 8, 22, 13, 4, 18, 9, 23, 14, 6, 19, 10, 24, 15, 6, 20, 11, 2, 16, 7,
        21, 12, 3, 17, 8, 22, 13, 4, 18, 9, 23, 14, 5, 19, 10, 24, 15, 6, 20, 11, 2, 18, 7, 21, 12,
        3, 19, 8, 22, 13, 4, 18, 9, 23, 14, 5, 19, 10, 24, 15, 6, 20, 11, 2, 17, 7, 21, 12, 3, 17,
        8, 22, 13, 4, 19, 9, 23, 14, 5, 19, 10, 24, 15, 6, 20, 11, 2, 16, 7, 21, 12, 3, 17, 8, 22,
    ];

    fn captured_monitor() -> LatencyMonitor {
        let mut mon = LatencyMonitor::new();
        for (off, ms) in CAPTURE_OFFSETS.iter().zip(CAPTURE_LATENCIES) {
            mon.add_sample("command", ms, CAPTURE_BASE + off);
        }
        mon
    }

    fn ctx(threshold: i64, slowlog: i64, hz: i64) -> ReportContext {
        ReportContext {
            latency_monitor_threshold: threshold,
            slowlog_log_slower_than: slowlog,
            hz,
            ..ReportContext::default()
        }
    }

    #[test]
    fn add_sample_keeps_one_sample_per_second_with_the_max() {
        let mut mon = LatencyMonitor::new();
        mon.add_sample("command", 5, 1000);
        mon.add_sample("command", 3, 1000);
        mon.add_sample("command", 9, 1000);
        mon.add_sample("command", 4, 1001);
        let ts = &mon.find(b"command").unwrap().ts;
        let samples: Vec<_> = ts.samples_oldest_first().collect();
        assert_eq!(
            samples,
            vec![
                LatencySample {
                    time: 1000,
                    latency: 9
                },
                LatencySample {
                    time: 1001,
                    latency: 4
                }
            ]
        );
        assert_eq!(ts.max, 9);
        assert_eq!(
            ts.last(),
            LatencySample {
                time: 1001,
                latency: 4
            }
        );
    }

    #[test]
    fn add_sample_if_needed_honours_the_threshold() {
        let mut mon = LatencyMonitor::new();
        mon.add_sample_if_needed(0, "command", 100); // monitoring off
        mon.add_sample_if_needed(10, "command", 9); // below threshold
        assert!(mon.events.is_empty());
        mon.add_sample_if_needed(10, "command", 10);
        assert_eq!(mon.find(b"command").unwrap().ts.last().latency, 10);
    }

    #[test]
    fn ring_wraps_at_latency_ts_len_keeping_the_all_time_max() {
        let mut mon = LatencyMonitor::new();
        mon.add_sample("expire-cycle", 500, 1);
        for t in 2..=(LATENCY_TS_LEN as i64 + 10) {
            mon.add_sample("expire-cycle", t as u64, t);
        }
        let ts = &mon.find(b"expire-cycle").unwrap().ts;
        let samples: Vec<_> = ts.samples_oldest_first().collect();
        assert_eq!(samples.len(), LATENCY_TS_LEN);
        assert_eq!(samples[0].time, 11); // 1..=10 were overwritten
        assert_eq!(samples[LATENCY_TS_LEN - 1].time, LATENCY_TS_LEN as i32 + 10);
        assert_eq!(ts.max, 500);
        assert_eq!(analyze_latency_for_event(ts, 170).max, 170);
    }

    #[test]
    fn reset_event_is_case_insensitive_and_counts() {
        let mut mon = LatencyMonitor::new();
        mon.add_sample("command", 1, 1);
        mon.add_sample("fast-command", 1, 1);
        mon.add_sample("expire-cycle", 1, 1);
        assert_eq!(mon.reset_event(Some(b"COMMAND")), 1);
        assert_eq!(mon.reset_event(Some(b"command")), 0);
        assert!(mon.find(b"Fast-Command").is_none()); // lookups are exact
        assert_eq!(mon.reset_event(None), 2);
        assert!(mon.events.is_empty());
    }

    #[test]
    fn graph_matches_redis_for_captured_series() {
        let mon = captured_monitor();
        let e = mon.find(b"command").unwrap();
        let graph = latency_command_gen_sparkline(&e.name, &e.ts, CAPTURE_NOW);
        let expected = [
            "command - high 24 ms, low 2 ms (all time high 24 ms)",
            "--------------------------------------------------------------------------------",
            "  o    o    #  _ #  _    o    o    #  _ #  _    o  _ o    #  _ #  _    o    o  _",
            "o |  # |_ # |_ | |o |  o |  # |_ # |_ | |o |  # |  | |_ # |_ | |o |  # |  # |_ |",
            "| |# |_|| |_|| |o|| |o | |# |_|| |_|| |o|| |o | |# |_|| |_|| |o|| |o | |# |_|| |",
            "|#||_||||o||||#||||#||_|#||_||||o||||o||||#||_|#||_||||o||||o||||#||_|#||_||||o|",
            "                                                                                ",
            "22222222222211111111111111111111111111111111111111111111111111111111115555555555",
            "mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm9876543210",
            "                                                                      ssssssssss",
            "",
            " #  _ #  _    o    o",
            " |_ | |o |  o |  # |",
            "_|| |o|| |o | |# |_|",
            "|||o||||#||_|#||_|||",
            "                    ",
            "44444444433333333332",
            "98765421098765432109",
            "ssssssssssssssssssss",
            "",
        ]
        .join("\n");
        assert_eq!(graph, expected);
    }

    #[test]
    fn graph_of_a_short_series_matches_redis() {
        // The expire-cycle series of a second capture (300k keys expiring).
        let mut mon = LatencyMonitor::new();
        for (t, ms) in [
            (1796010296, 31),
            (1796010297, 28),
            (1796010298, 25),
            (1796010299, 7),
        ] {
            mon.add_sample("expire-cycle", ms, t);
        }
        let e = mon.find(b"expire-cycle").unwrap();
        let graph = latency_command_gen_sparkline(&e.name, &e.ts, 1796010310);
        assert_eq!(
            graph,
            "expire-cycle - high 31 ms, low 7 ms (all time high 31 ms)\n\
             --------------------------------------------------------------------------------\n\
             #o_ \n||| \n||| \n|||_\n    \n1111\n4321\nssss\n"
        );
    }

    #[test]
    fn doctor_matches_redis_for_captured_series() {
        let mon = captured_monitor();
        // slowlog-log-slower-than 10000 us > threshold 1 ms: tuning advice.
        let report = create_latency_report(&mon, &ctx(1, 10000, 10), CAPTURE_NOW);
        assert_eq!(
            report,
            "Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n\
             1. command: 100 latency spikes (average 13ms, mean deviation 5ms, period 1.31 sec). Worst all time event 24ms.\n\n\
             I have a few advices for you:\n\n\
             - Your current Slow Log configuration only logs events that are slower than your configured latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than 1000'.\n\
             - Check your Slow Log to understand what are the commands you are running which are too slow to execute. Please check https://redis.io/commands/slowlog for more information.\n\
             - Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If you have very large objects that are often deleted, expired, or evicted, try to fragment those objects into multiple smaller objects.\n"
        );
    }

    #[test]
    fn doctor_matches_redis_for_three_events_slowlog_off() {
        // Second capture: slowlog-log-slower-than -1, hz 10, three events
        // in the order the real server's dict listed them.
        let mut mon = LatencyMonitor::new();
        for (t, ms) in [
            (1796010296, 10),
            (1796010297, 8),
            (1796010298, 6),
            (1796010299, 5),
        ] {
            mon.add_sample("expire-del", ms, t);
        }
        for (t, ms) in [
            (1796010296, 31),
            (1796010297, 28),
            (1796010298, 25),
            (1796010299, 7),
        ] {
            mon.add_sample("expire-cycle", ms, t);
        }
        for (off, ms) in CAPTURE_OFFSETS.iter().zip(CAPTURE_LATENCIES) {
            mon.add_sample("command", ms, CAPTURE_BASE + off);
        }
        for (t, ms) in [
            (1796010293, 11),
            (1796010294, 42),
            (1796010295, 36),
            (1796010296, 2753),
            (1796010298, 1),
        ] {
            mon.add_sample("command", ms, t);
        }
        let report = create_latency_report(&mon, &ctx(1, -1, 10), 1796010310);
        assert_eq!(
            report,
            "Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n\
             1. expire-del: 4 latency spikes (average 7ms, mean deviation 1ms, period 3.50 sec). Worst all time event 10ms.\n\
             2. expire-cycle: 4 latency spikes (average 22ms, mean deviation 8ms, period 3.50 sec). Worst all time event 31ms.\n\
             3. command: 105 latency spikes (average 39ms, mean deviation 51ms, period 2.76 sec). Worst all time event 2753ms.\n\n\
             I have a few advices for you:\n\n\
             - There are latency issues with potentially slow commands you are using. Try to enable the Slow Log Redis feature using the command 'CONFIG SET slowlog-log-slower-than 1000'. If the Slow log is disabled Redis is not able to log slow commands execution for you.\n\
             - Check your Slow Log to understand what are the commands you are running which are too slow to execute. Please check https://redis.io/commands/slowlog for more information.\n\
             - In order to make the Redis keys expiring process more incremental, try to set the 'hz' configuration parameter to 100 using 'CONFIG SET hz 100'.\n\
             - Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If you have very large objects that are often deleted, expired, or evicted, try to fragment those objects into multiple smaller objects.\n"
        );
        // With hz 100 the hz paragraph goes (checked on the real server too).
        let report = create_latency_report(&mon, &ctx(1, -1, 100), 1796010310);
        assert!(!report.contains("'hz'"));
    }

    #[test]
    fn doctor_without_events() {
        let mon = LatencyMonitor::new();
        assert!(create_latency_report(&mon, &ctx(0, 10000, 10), 0)
            .starts_with("I'm sorry, Dave, I can't do that. Latency monitoring is disabled"));
        assert_eq!(
            create_latency_report(&mon, &ctx(1, 10000, 10), 0),
            "Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n"
        );
        // An event that calls for no advice.
        let mut mon = LatencyMonitor::new();
        mon.add_sample("expire-del", 3, 100);
        assert_eq!(
            create_latency_report(&mon, &ctx(1, 10000, 10), 100),
            "Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n\
             1. expire-del: 1 latency spikes (average 3ms, mean deviation 0ms, period 1.00 sec). Worst all time event 3ms.\n\n\
             While there are latency events logged, I'm not able to suggest any easy fix. Please use the Redis community to get some help, providing this report in your help request.\n"
        );
    }

    /// Six DEBUG SLEEPs on a real 7.0.15 (0.6, 0.3, 0, 0.001, 0.04, 0.0001
    /// s) gave LATENCY HISTOGRAM debug = {132:1, 264:2, 2113:3, 67633:4,
    /// 541065:5, 1073741:6} and, with latency-tracking-info-percentiles
    /// "0 0.1 50 99.99 100", the INFO line below. The durations here are
    /// ones consistent with both.
    #[test]
    fn histogram_matches_redis_debug_sleeps() {
        let mut h = CommandHistogram::new();
        for ns in [
            600_000_000,
            300_100_000,
            93_000,
            1_105_000,
            40_500_000,
            200_000,
        ] {
            h.record(ns);
        }
        assert_eq!(h.count(), 6);
        assert_eq!(
            h.cdf(),
            vec![
                (132, 1),
                (264, 2),
                (2113, 3),
                (67633, 4),
                (541065, 5),
                (1073741, 6)
            ]
        );
        assert_eq!(
            fill_percentile_distribution_latencies("debug", &h, &[0.0, 0.1, 50.0, 99.99, 100.0]),
            "latency_percentiles_usec_debug:p0=92.672,p0.1=93.183,p50=1105.919,p99.99=603979.775,p100=603979.775\r\n"
        );
        h.reset();
        assert_eq!(h.count(), 0);
        assert!(h.cdf().is_empty());
    }

    #[test]
    fn histogram_of_sub_microsecond_calls_reads_like_redis_ping() {
        // Redis records 0 us as 1 ns: INFO shows p50=0.001, HISTOGRAM {1: n}.
        let mut h = CommandHistogram::new();
        h.record(300);
        h.record(999);
        assert_eq!(h.percentile(50.0), 0.001);
        assert_eq!(h.cdf(), vec![(1, 2)]);
        h.record(2_000);
        h.record(20_000);
        assert_eq!(h.cdf(), vec![(1, 2), (2, 3), (33, 4)]);
    }

    #[test]
    fn percentile_labels_trim_like_trim_double_string() {
        assert_eq!(percentile_label(50.0), "50");
        assert_eq!(percentile_label(99.9), "99.9");
        assert_eq!(percentile_label(0.0), "0");
        assert_eq!(percentile_label(99.99), "99.99");
    }
}
