//! Statistics over victim samples: who waited, and for how long.
//!
//! A *sample* is one victim GET: when it was sent (microseconds since the
//! run's epoch) and how long its reply took. A *window* is a span of time
//! during which one condition was active (a blocker running, keys expiring,
//! a quiet baseline). A sample belongs to a window when the two overlap: a
//! GET sent just before `KEYS` started and answered after it finished waited
//! for KEYS, and must be counted there, not before it.
//!
//! Percentiles come from an HDR histogram (3 significant digits, the layout
//! Redis's own LATENCY HISTOGRAM uses); the maximum is exact, because the one
//! sample that waited for the whole stall is the lesson of post 001.

use hdrhistogram::Histogram;
use serde::Serialize;

/// One victim request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Sample {
    /// When the request was sent, in microseconds since the run's epoch.
    pub t_us: u64,
    /// How long the reply took, in microseconds.
    pub lat_us: u64,
}

impl Sample {
    /// When the reply arrived.
    pub fn end_us(&self) -> u64 {
        self.t_us + self.lat_us
    }
}

/// A span of time, in microseconds since the run's epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Window {
    pub start_us: u64,
    pub end_us: u64,
}

impl Window {
    pub fn new(start_us: u64, end_us: u64) -> Window {
        Window {
            start_us,
            end_us: end_us.max(start_us),
        }
    }

    /// The window widened by `pad_us` on both sides (the probe's "during
    /// the blocker" includes a little before and after, as post 000's
    /// probe.py did, so a 0.1 ms PING still has samples to compare with).
    pub fn padded(&self, pad_us: u64) -> Window {
        Window::new(self.start_us.saturating_sub(pad_us), self.end_us + pad_us)
    }

    pub fn duration_us(&self) -> u64 {
        self.end_us - self.start_us
    }

    /// True when the sample was in flight at some moment of the window.
    pub fn overlaps(&self, s: &Sample) -> bool {
        s.t_us <= self.end_us && s.end_us() >= self.start_us
    }
}

/// The samples that overlap a window.
pub fn in_window<'a>(samples: &'a [Sample], w: &Window) -> impl Iterator<Item = &'a Sample> + 'a {
    let w = *w;
    samples.iter().filter(move |s| w.overlaps(s))
}

/// What a set of samples says: the row of every victim table.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Summary {
    pub count: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub mean_ms: f64,
    /// How many samples took longer than `threshold_ms`.
    pub over_threshold: u64,
    pub threshold_ms: f64,
}

/// HDR histogram bounds: 1 us to 10 minutes, 3 significant digits.
const HIST_LOW_US: u64 = 1;
const HIST_HIGH_US: u64 = 600_000_000;
const HIST_SIGFIG: u8 = 3;

/// Summarize latencies (microseconds). `threshold_us` is the "count over"
/// line: a one-off stall hides from p99 but not from this count.
pub fn summarize<I: IntoIterator<Item = u64>>(lat_us: I, threshold_us: u64) -> Summary {
    let mut h = Histogram::<u64>::new_with_bounds(HIST_LOW_US, HIST_HIGH_US, HIST_SIGFIG)
        .expect("valid histogram bounds");
    let mut max = 0u64;
    let mut sum = 0u128;
    let mut over = 0u64;
    for v in lat_us {
        let v = v.clamp(HIST_LOW_US, HIST_HIGH_US);
        h.record(v).expect("value within bounds");
        max = max.max(v);
        sum += v as u128;
        if v > threshold_us {
            over += 1;
        }
    }
    let count = h.len();
    if count == 0 {
        return Summary {
            threshold_ms: us_to_ms(threshold_us),
            ..Summary::default()
        };
    }
    Summary {
        count,
        p50_ms: us_to_ms(h.value_at_quantile(0.50)),
        p99_ms: us_to_ms(h.value_at_quantile(0.99)),
        max_ms: us_to_ms(max),
        mean_ms: sum as f64 / count as f64 / 1000.0,
        over_threshold: over,
        threshold_ms: us_to_ms(threshold_us),
    }
}

/// Summarize the samples of one window.
pub fn summarize_window(samples: &[Sample], w: &Window, threshold_us: u64) -> Summary {
    summarize(in_window(samples, w).map(|s| s.lat_us), threshold_us)
}

pub fn us_to_ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

/// The median of some measurements (the mean of the middle two for an even
/// count); `None` for none. Repeated runs are reported by their median.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v: Vec<f64> = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let mid = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    })
}

/// a / b, when both are known and b is not zero.
pub fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 && a.is_finite() && b.is_finite() => Some(a / b),
        _ => None,
    }
}

/// Per-bucket (median, max) of a timeline, for plots: `buckets` equal
/// spans between `from_us` and `to_us`; empty buckets are left out.
/// Returns (bucket start in seconds, median ms, max ms).
pub fn timeline_buckets(
    samples: &[Sample],
    from_us: u64,
    to_us: u64,
    buckets: usize,
) -> Vec<(f64, f64, f64)> {
    if to_us <= from_us || buckets == 0 {
        return Vec::new();
    }
    let span = (to_us - from_us).div_ceil(buckets as u64).max(1);
    let mut per: Vec<Vec<u64>> = vec![Vec::new(); buckets];
    for s in samples {
        if s.t_us < from_us || s.t_us >= to_us {
            continue;
        }
        let i = (((s.t_us - from_us) / span) as usize).min(buckets - 1);
        per[i].push(s.lat_us);
    }
    let mut out = Vec::new();
    for (i, mut lats) in per.into_iter().enumerate() {
        if lats.is_empty() {
            continue;
        }
        lats.sort_unstable();
        let med = lats[lats.len() / 2];
        let max = *lats.last().expect("non-empty");
        let t = (from_us + i as u64 * span) as f64 / 1e6;
        out.push((t, us_to_ms(med), us_to_ms(max)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(t_us: u64, lat_us: u64) -> Sample {
        Sample { t_us, lat_us }
    }

    #[test]
    fn summary_of_nothing_is_zero_with_the_threshold_kept() {
        let sum = summarize(Vec::<u64>::new(), 10_000);
        assert_eq!(sum.count, 0);
        assert_eq!(sum.max_ms, 0.0);
        assert_eq!(sum.threshold_ms, 10.0);
    }

    #[test]
    fn percentiles_of_a_known_distribution() {
        // 1..=1000 us: p50 = 500 us, p99 = 990 us, max = 1000 us.
        let sum = summarize(1..=1000u64, 10_000);
        assert_eq!(sum.count, 1000);
        assert!((sum.p50_ms - 0.500).abs() < 0.001, "{}", sum.p50_ms);
        assert!((sum.p99_ms - 0.990).abs() < 0.001, "{}", sum.p99_ms);
        assert_eq!(sum.max_ms, 1.0);
        assert!((sum.mean_ms - 0.5005).abs() < 1e-9);
        assert_eq!(sum.over_threshold, 0);
    }

    #[test]
    fn one_off_stall_hides_from_p99_but_not_from_max_or_the_count_over() {
        // post 001's DEL of a 1M-member set: thousands of fast samples,
        // one that waited 120 ms.
        let mut lats = vec![300u64; 5000];
        lats.push(120_000);
        let sum = summarize(lats, 10_000);
        assert!(sum.p99_ms < 0.31, "p99 {}", sum.p99_ms);
        assert_eq!(sum.max_ms, 120.0);
        assert_eq!(sum.over_threshold, 1);
    }

    #[test]
    fn max_is_exact_not_bucketed() {
        let sum = summarize([1u64, 123_457], 0);
        assert_eq!(sum.max_ms, 123.457);
        assert_eq!(sum.over_threshold, 2);
    }

    #[test]
    fn a_sample_stuck_across_the_window_start_belongs_to_it() {
        let w = Window::new(1_000, 2_000);
        assert!(w.overlaps(&s(500, 600)), "sent before, answered during");
        assert!(w.overlaps(&s(1_500, 10)), "inside");
        assert!(w.overlaps(&s(1_999, 5_000)), "sent during, answered after");
        assert!(w.overlaps(&s(0, 5_000)), "spans the whole window");
        assert!(!w.overlaps(&s(100, 100)), "answered before");
        assert!(!w.overlaps(&s(2_001, 1)), "sent after");
        let samples = [s(100, 100), s(500, 600), s(1_500, 10), s(2_001, 1)];
        assert_eq!(in_window(&samples, &w).count(), 2);
    }

    #[test]
    fn padded_window_never_goes_below_zero() {
        let w = Window::new(100, 200).padded(1_000);
        assert_eq!(w, Window::new(0, 1_200));
        assert_eq!(Window::new(5, 3).duration_us(), 0, "end clamped to start");
    }

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn ratio_refuses_unknown_and_zero() {
        assert_eq!(ratio(Some(6.0), Some(2.0)), Some(3.0));
        assert_eq!(ratio(Some(6.0), Some(0.0)), None);
        assert_eq!(ratio(None, Some(2.0)), None);
        assert_eq!(ratio(Some(f64::NAN), Some(2.0)), None);
    }

    #[test]
    fn timeline_buckets_keep_median_and_max_per_bucket() {
        let samples = [s(0, 100), s(10, 300), s(20, 200), s(600, 5_000), s(999, 1)];
        let b = timeline_buckets(&samples, 0, 1_000, 2);
        assert_eq!(b.len(), 2);
        assert_eq!(b[0], (0.0, 0.2, 0.3));
        assert_eq!(b[1], (0.0005, 5.0, 5.0));
        assert!(timeline_buckets(&samples, 10, 10, 4).is_empty());
    }
}
