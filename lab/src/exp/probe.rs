//! E1 probe (post 000): one victim sends GET every 1 ms while a second
//! connection runs one blocker. Reported per step: the blocker's own time
//! (client and SLOWLOG), and the victim's count / median / max during it.
//!
//! Steps, each run on every server before the next (interleaved):
//! PING (the baseline), `KEYS nomatch*` over `DEBUG POPULATE 1000000 user
//! 20`, DEL of a 1M-member set built by the post's EVAL (with MEMORY USAGE
//! and LATENCY LATEST), UNLINK of the same set rebuilt (lazyfreed_objects),
//! a full SCAN, and a BGSAVE fork when the server answers BGSAVE.

use std::time::{Duration, Instant};

use redis::Value;
use serde_json::json;

use super::{Ctx, ExpOutput};
use crate::exp;
use crate::plot::{self, TimelinePanel};
use crate::report::{self, fmt_ms, fmt_opt_ms, Direction, Lesson, Table};
use crate::stats::{self, Sample, Summary, Window};
use crate::target;
use crate::victim::{now_us, VictimGroup};

/// The victim's pace: one GET every 1 ms, as probe.py.
const VICTIM_PAUSE: Duration = Duration::from_millis(1);
/// "During the blocker" includes this much before and after, as probe.py's
/// window did: a 0.1 ms PING still has a few hundred GETs to look at.
const PAD: Duration = Duration::from_millis(150);
/// A victim sample over this counts as "over threshold".
const THRESHOLD_US: u64 = 10_000;

/// One measured step on one server.
struct Row {
    step: String,
    target: usize,
    blocker_ms: Option<f64>,
    slowlog_us: Option<u64>,
    window: Option<Window>,
    notes: String,
}

pub fn run(ctx: &mut Ctx) -> ExpOutput {
    report::print_banner(
        "probe (E1, post 000)",
        "one victim GET every 1 ms while another connection runs one blocker",
    );
    let ids = exp::identities(ctx);
    let n_keys = ctx.size(1_000_000);
    let n_set = ctx.size(1_000_000);
    let epoch = Instant::now();
    let mut rows: Vec<Row> = Vec::new();
    let mut groups: Vec<Option<VictimGroup>> = Vec::new();
    let mut cons = Vec::new();
    let mut notes = Vec::new();

    // Set-up on every server: an empty keyspace, the victim, the keys.
    for (i, t) in ctx.targets.iter().enumerate() {
        let setup = t.connect().and_then(|mut con| {
            exp::flushall(&mut con)?;
            let how = exp::populate(&mut con, &t.label, n_keys, "user", 20)?;
            println!("  [{}] seeded {n_keys} keys: {how}", t.label);
            let g = VictimGroup::start(t, 1, VICTIM_PAUSE, epoch)?;
            Ok((con, g))
        });
        match setup {
            Ok((con, g)) => {
                cons.push(Some(con));
                groups.push(Some(g));
            }
            Err(e) => {
                report::note(&format!("{}: probe cannot run: {e}", t.label));
                notes.push(format!("{}: {e}", t.label));
                cons.push(None);
                groups.push(None);
            }
        }
        let _ = i;
    }

    let steps: [&str; 6] = ["PING", "KEYS", "DEL", "UNLINK", "SCAN", "BGSAVE"];
    for step in steps {
        for ti in 0..ctx.targets.len() {
            let (Some(con), Some(g)) = (cons[ti].as_mut(), groups[ti].as_ref()) else {
                continue;
            };
            let t = &mut ctx.targets[ti];
            if step == "PING" {
                // Log every blocker (1 ms and more), never the victim's GETs.
                if let Err(e) = exp::config_set(t, con, "slowlog-log-slower-than", "1000") {
                    report::note(&format!("{}: {e}", t.label));
                }
            }
            let row = match step {
                "PING" => simple_step(con, g, epoch, ti, "PING", redis::cmd("PING")),
                "KEYS" => {
                    exp::slowlog_reset(con);
                    let mut r = simple_step(
                        con,
                        g,
                        epoch,
                        ti,
                        &format!("KEYS nomatch* ({n_keys} keys)"),
                        redis::cmd("KEYS").arg("nomatch*").clone(),
                    );
                    r.slowlog_us = exp::slowlog_last_us(con, "keys");
                    r
                }
                "DEL" => del_step(t, con, g, epoch, ti, n_set, false),
                "UNLINK" => del_step(t, con, g, epoch, ti, n_set, true),
                "SCAN" => scan_step(con, g, epoch, ti, n_keys),
                _ => bgsave_step(con, g, epoch, ti),
            };
            let took = row.blocker_ms.map(fmt_ms).unwrap_or_else(|| "-".into());
            println!("  [{}] {}: {} ms {}", t.label, row.step, took, row.notes);
            rows.push(row);
        }
    }

    // Samples, then the table.
    let samples: Vec<Vec<Sample>> = groups
        .into_iter()
        .map(|g| g.map(VictimGroup::finish).unwrap_or_default())
        .collect();
    let mut table = Table::new(
        "probe: the blocker's time, and what the victim saw meanwhile",
        &[
            "step",
            "server",
            "blocker ms",
            "SLOWLOG us",
            "victim GETs",
            "p50 ms",
            "max ms",
            "notes",
        ],
    );
    let mut json_rows = Vec::new();
    let mut summaries: Vec<(String, usize, Summary)> = Vec::new();
    for r in &rows {
        let label = &ctx.targets[r.target].label;
        let sum = r
            .window
            .map(|w| stats::summarize_window(&samples[r.target], &w, THRESHOLD_US));
        table.row(vec![
            r.step.clone(),
            label.clone(),
            fmt_opt_ms(r.blocker_ms),
            r.slowlog_us
                .map(|u| u.to_string())
                .unwrap_or_else(|| "-".into()),
            sum.as_ref()
                .map(|s| s.count.to_string())
                .unwrap_or_else(|| "-".into()),
            sum.as_ref()
                .map(|s| fmt_ms(s.p50_ms))
                .unwrap_or_else(|| "-".into()),
            sum.as_ref()
                .map(|s| fmt_ms(s.max_ms))
                .unwrap_or_else(|| "-".into()),
            r.notes.clone(),
        ]);
        let window_samples: Vec<[f64; 2]> = r
            .window
            .map(|w| {
                stats::in_window(&samples[r.target], &w)
                    .map(|s| [s.t_us as f64 / 1000.0, s.lat_us as f64 / 1000.0])
                    .collect()
            })
            .unwrap_or_default();
        json_rows.push(json!({
            "step": r.step,
            "server": label,
            "blocker_ms": r.blocker_ms,
            "slowlog_us": r.slowlog_us,
            "window_us": r.window,
            "victim": sum,
            "notes": r.notes,
            "samples_ms": window_samples,
        }));
        if let Some(s) = sum {
            summaries.push((r.step.clone(), r.target, s));
        }
    }
    table.print();
    println!("  (\"during\" = from {} ms before the blocker to {} ms after it; SLOWLOG threshold set to 1 ms)", PAD.as_millis(), PAD.as_millis());

    // Lessons.
    let find = |prefix: &str, ti: usize| {
        summaries
            .iter()
            .find(|(s, t, _)| s.starts_with(prefix) && *t == ti)
            .map(|(_, _, s)| s.clone())
    };
    let blocker = |prefix: &str, ti: usize| {
        rows.iter()
            .find(|r| r.step.starts_with(prefix) && r.target == ti)
            .and_then(|r| r.blocker_ms)
    };
    let mut l_keys = Lesson::new(
        "probe.keys_vs_ping",
        "one slow command stops everybody: the victim's GET waited for the whole KEYS",
        "victim max during KEYS / during PING",
        Direction::Above(1.0),
    );
    let mut l_del = Lesson::new(
        "probe.del_vs_unlink",
        "DEL frees a 1M-member set on the main thread; UNLINK hands it to bio_lazy_free",
        "victim max during DEL / during UNLINK",
        Direction::Above(1.0),
    );
    let mut l_scan = Lesson::new(
        "probe.scan_vs_keys",
        "SCAN takes longer in total than KEYS, but blocks nobody",
        "victim max during SCAN / during KEYS",
        Direction::Below(1.0),
    );
    let mut scan_time = Vec::new();
    for (ti, t) in ctx.targets.iter().enumerate() {
        let max = |p: &str| find(p, ti).map(|s| s.max_ms);
        l_keys = l_keys.value(&t.label, stats::ratio(max("KEYS"), max("PING")));
        l_del = l_del.value(&t.label, stats::ratio(max("DEL"), max("UNLINK")));
        l_scan = l_scan.value(&t.label, stats::ratio(max("SCAN"), max("KEYS")));
        if let Some(r) = stats::ratio(blocker("SCAN", ti), blocker("KEYS", ti)) {
            scan_time.push(format!("{} {}", t.label, report::fmt_ratio(Some(r))));
        }
    }
    if !scan_time.is_empty() {
        l_scan = l_scan.note(format!(
            "total time of the full SCAN / KEYS: {} (the price of not blocking)",
            scan_time.join(" | ")
        ));
    }
    let lessons = vec![l_keys, l_del, l_scan];
    for l in &lessons {
        l.print();
    }

    // The timeline.
    let mut svgs = Vec::new();
    let panels: Vec<TimelinePanel> = ctx
        .targets
        .iter()
        .enumerate()
        .map(|(ti, t)| {
            let end = samples[ti].last().map(|s| s.end_us()).unwrap_or(1);
            TimelinePanel {
                label: t.label.clone(),
                buckets: stats::timeline_buckets(&samples[ti], 0, end, 1500),
                windows: rows
                    .iter()
                    .filter(|r| r.target == ti)
                    .filter_map(|r| {
                        r.window.map(|w| {
                            let short = r.step.split(" (").next().unwrap_or(&r.step).to_string();
                            (short, w.start_us as f64 / 1e6, w.end_us as f64 / 1e6)
                        })
                    })
                    .collect(),
                t_end_s: end as f64 / 1e6,
            }
        })
        .collect();
    if let Some(p) = exp::write_svg(ctx.svg_path("probe_timeline.svg"), |p| {
        plot::timeline(
            p,
            "probe (E1): victim GET latency, blockers shaded",
            &panels,
        )
    }) {
        svgs.push(p);
    }
    // DEL vs UNLINK vs KEYS: the victim's max, log scale.
    let groups: Vec<plot::BarGroup> = ["PING", "KEYS", "DEL", "UNLINK", "SCAN", "BGSAVE"]
        .iter()
        .map(|p| plot::BarGroup {
            name: p.to_string(),
            bars: ctx
                .targets
                .iter()
                .enumerate()
                .map(|(ti, t)| (t.label.clone(), find(p, ti).map_or(f64::NAN, |s| s.max_ms)))
                .collect(),
        })
        .filter(|g| g.bars.iter().any(|b| b.1.is_finite()))
        .collect();
    if let Some(p) = exp::write_svg(ctx.svg_path("probe_victim_max.svg"), |p| {
        plot::bars(
            p,
            "probe (E1): the victim's worst GET during each blocker",
            "victim max (ms, log)",
            true,
            &groups,
        )
    }) {
        svgs.push(p);
    }

    ExpOutput {
        name: "probe".into(),
        json: json!({
            "servers": ids,
            "keys": n_keys,
            "set_members": n_set,
            "victim_pause_ms": VICTIM_PAUSE.as_secs_f64() * 1000.0,
            "window_pad_ms": PAD.as_secs_f64() * 1000.0,
            "threshold_ms": THRESHOLD_US as f64 / 1000.0,
            "rows": json_rows,
            "table": table.to_json(),
            "notes": notes,
            "lessons": lessons.iter().map(Lesson::to_json).collect::<Vec<_>>(),
        }),
        lessons,
        svgs,
    }
}

/// Run `body` as the blocker while the victim runs: victim on, PAD, the
/// blocker, PAD, victim off. Returns the blocker's window and result.
fn with_victim<T>(g: &VictimGroup, epoch: Instant, body: impl FnOnce() -> T) -> (Window, T) {
    g.resume();
    std::thread::sleep(PAD);
    let start = now_us(epoch);
    let out = body();
    let end = now_us(epoch);
    std::thread::sleep(PAD);
    g.pause();
    (Window::new(start, end), out)
}

fn simple_step(
    con: &mut redis::Connection,
    g: &VictimGroup,
    epoch: Instant,
    ti: usize,
    step: &str,
    cmd: redis::Cmd,
) -> Row {
    let (w, (took, r)) = with_victim(g, epoch, || exp::timed(con, &cmd));
    let notes = match r {
        Ok(Value::Array(a)) => format!("{} keys returned", a.len()),
        Ok(_) => String::new(),
        Err(e) => exp::describe_err(&e, step),
    };
    Row {
        step: step.to_string(),
        target: ti,
        blocker_ms: Some(took.as_secs_f64() * 1000.0),
        slowlog_us: None,
        window: Some(w.padded(PAD.as_micros() as u64)),
        notes,
    }
}

/// DEL or UNLINK of a freshly built 1M-member set, with MEMORY USAGE,
/// LATENCY LATEST (threshold 10 ms) and, for UNLINK, lazyfreed_objects.
fn del_step(
    t: &mut target::Target,
    con: &mut redis::Connection,
    g: &VictimGroup,
    epoch: Instant,
    ti: usize,
    n_set: usize,
    lazy: bool,
) -> Row {
    let name = if lazy { "UNLINK" } else { "DEL" };
    let step = format!("{name} big:set ({n_set} members)");
    let mut notes = Vec::new();
    if let Err(e) = exp::build_set_eval(con, &t.label, "big:set", n_set) {
        return Row {
            step,
            target: ti,
            blocker_ms: None,
            slowlog_us: None,
            window: None,
            notes: e,
        };
    }
    match exp::memory_usage(con, "big:set") {
        Ok(b) => notes.push(format!("MEMORY USAGE {:.1} MB", b as f64 / 1e6)),
        Err(e) => notes.push(format!("MEMORY USAGE n/a ({e})")),
    }
    notes.push(format!("encoding {}", exp::encoding(con, "big:set")));
    if let Err(e) = exp::config_set(t, con, "latency-monitor-threshold", "10") {
        notes.push(e);
    }
    let _ = redis::cmd("LATENCY").arg("RESET").query::<Value>(con);
    exp::slowlog_reset(con);
    let freed_before = lazyfreed(con);
    let cmd = redis::cmd(name).arg("big:set").clone();
    let (w, (took, r)) = with_victim(g, epoch, || exp::timed(con, &cmd));
    if let Err(e) = r {
        notes.push(exp::describe_err(&e, name));
    }
    let slowlog = exp::slowlog_last_us(con, name);
    notes.push(format!("LATENCY LATEST {}", exp::latency_cell(con)));
    if lazy {
        let after = exp::wait_lazyfree(con);
        match (freed_before, after) {
            (Some(b), Some(a)) => notes.push(format!("lazyfreed_objects +{} (now {a})", a - b)),
            _ => notes.push("lazyfreed_objects n/a".into()),
        }
    }
    Row {
        step,
        target: ti,
        blocker_ms: Some(took.as_secs_f64() * 1000.0),
        slowlog_us: slowlog,
        window: Some(w.padded(PAD.as_micros() as u64)),
        notes: notes.join(", "),
    }
}

fn lazyfreed(con: &mut redis::Connection) -> Option<i64> {
    let info = target::info_section(con, "memory").ok()?;
    target::info_f64(&info, "lazyfreed_objects").map(|v| v as i64)
}

/// A full SCAN (default COUNT) of the keyspace, timed as one blocker.
fn scan_step(
    con: &mut redis::Connection,
    g: &VictimGroup,
    epoch: Instant,
    ti: usize,
    n: usize,
) -> Row {
    let mut calls = 0u64;
    let mut seen = 0usize;
    let mut error = None;
    let (w, took) = with_victim(g, epoch, || {
        let t0 = Instant::now();
        let mut cursor = 0u64;
        loop {
            let r: redis::RedisResult<(u64, Vec<Vec<u8>>)> =
                redis::cmd("SCAN").arg(cursor).query(con);
            calls += 1;
            match r {
                Ok((next, keys)) => {
                    seen += keys.len();
                    cursor = next;
                    if cursor == 0 {
                        break;
                    }
                }
                Err(e) => {
                    error = Some(exp::describe_err(&e, "SCAN"));
                    break;
                }
            }
        }
        t0.elapsed()
    });
    Row {
        step: format!("SCAN full iteration ({n} keys)"),
        target: ti,
        blocker_ms: Some(took.as_secs_f64() * 1000.0),
        slowlog_us: None,
        window: Some(w),
        notes: error.unwrap_or_else(|| format!("{calls} calls, {seen} keys returned")),
    }
}

/// BGSAVE: the fork copies the page tables on the main thread. Shown only
/// when the server answers BGSAVE (redis-lite gains it with persistence);
/// an "unknown command" reply is reported as such.
fn bgsave_step(con: &mut redis::Connection, g: &VictimGroup, epoch: Instant, ti: usize) -> Row {
    let step = "BGSAVE fork".to_string();
    let mut notes = Vec::new();
    let mut took = None;
    let mut unsupported = false;
    let (w, _) = with_victim(g, epoch, || {
        let t0 = Instant::now();
        match redis::cmd("BGSAVE").query::<Value>(con) {
            Ok(_) => {
                took = Some(t0.elapsed().as_secs_f64() * 1000.0);
                // The child writes; the parent goes on. Wait for the end.
                let deadline = Instant::now() + Duration::from_secs(120);
                while Instant::now() < deadline {
                    let info = target::info_section(con, "persistence").unwrap_or_default();
                    if target::info_field(&info, "rdb_bgsave_in_progress").as_deref() == Some("0") {
                        notes.push(format!(
                            "rdb_last_bgsave_status {}",
                            target::info_field(&info, "rdb_last_bgsave_status").unwrap_or_default()
                        ));
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
            Err(e) => {
                unsupported = target::is_unknown_command(&e);
                notes.push(exp::describe_err(&e, "BGSAVE"));
            }
        }
    });
    if unsupported {
        return Row {
            step,
            target: ti,
            blocker_ms: None,
            slowlog_us: None,
            window: None,
            notes: format!("{}: no fork to show", notes.join(", ")),
        };
    }
    let stats = target::info_section(con, "stats").unwrap_or_default();
    if let Some(f) = target::info_field(&stats, "latest_fork_usec") {
        notes.insert(0, format!("latest_fork_usec {f}"));
    }
    Row {
        step,
        target: ti,
        blocker_ms: took,
        slowlog_us: None,
        window: Some(w),
        notes: notes.join(", "),
    }
}
