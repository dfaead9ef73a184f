//! E2 victims under named conditions (post 001): four victim threads loop
//! GET on one hot key for the whole run; each sample is tagged with the
//! condition active at that moment. Per condition: the blocker's time
//! (client and SLOWLOG), victim p50 / p99 / max, how many samples took over
//! 10 ms, and p99 as a multiple of the baseline's.
//!
//! The lessons the table must carry: the cost of a big DEL follows the
//! number of allocations (a quicklist of a few thousand listpack nodes vs a
//! hashtable with one allocation per member), not the number of elements; a
//! one-off stall hides from p99 and shows in max and the count over 10 ms;
//! SCAN trades total time for not blocking.

use std::time::{Duration, Instant};

use redis::Value;
use serde_json::json;

use super::{Ctx, ExpOutput};
use crate::exp;
use crate::plot::{self, BarGroup, TimelinePanel};
use crate::report::{self, fmt_ms, fmt_opt_ms, fmt_ratio, Direction, Lesson, Table};
use crate::stats::{self, Sample, Summary, Window};
use crate::target::{self, Target};
use crate::victim::{now_us, VictimGroup};

/// Four victims, as the post.
const VICTIMS: usize = 4;
/// Each victim pauses this long between GETs: four victims send about 4000
/// GETs a second without eating the 2 cores the server needs.
const VICTIM_PAUSE: Duration = Duration::from_millis(1);
/// A sample over this counts in "over 10 ms".
const THRESHOLD_US: u64 = 10_000;

/// One condition measured on one server.
struct Row {
    condition: String,
    /// Short name, for plots.
    short: String,
    target: usize,
    blocker_ms: Option<f64>,
    slowlog_us: Option<u64>,
    window: Option<Window>,
    notes: String,
}

pub fn run(ctx: &mut Ctx) -> ExpOutput {
    report::print_banner(
        "victims (E2, post 001)",
        "four victims GET a hot key for the whole run; each sample tagged with the active condition",
    );
    let ids = exp::identities(ctx);
    let n_keys = ctx.size(500_000);
    let n_list = ctx.size(1_000_000);
    let n_set = ctx.size(1_000_000);
    let n_expire = ctx.size(250_000);
    // The post settled 15 s and measured the baseline for 10 s.
    let settle = ctx.wait(Duration::from_secs(5));
    let baseline = ctx.wait(Duration::from_secs(5));
    // A short blocker's condition lasts at least this long, so that its
    // aftermath (the bio thread freeing an UNLINKed value) is in it too.
    let hold = ctx.wait(Duration::from_secs(1));
    let epoch = Instant::now();
    let mut rows: Vec<Row> = Vec::new();
    let mut groups: Vec<Option<VictimGroup>> = Vec::new();
    let mut cons: Vec<Option<redis::Connection>> = Vec::new();
    let mut encodings: Vec<serde_json::Value> = Vec::new();

    // Seeding with the victims on (those samples are "idle", not baseline),
    // then a settle period.
    for t in ctx.targets.iter() {
        let r = (|| -> Result<(redis::Connection, VictimGroup), String> {
            let mut con = t.connect()?;
            exp::flushall(&mut con)?;
            let g = VictimGroup::start(t, VICTIMS, VICTIM_PAUSE, epoch)?;
            g.resume();
            let how = exp::populate(&mut con, &t.label, n_keys, "t8:k", 20)?;
            exp::build_list(&mut con, &t.label, "big:list", n_list)?;
            exp::build_set_sadd(&mut con, &t.label, "big:set", n_set)?;
            let enc = json!({
                "server": t.label,
                "big:list": exp::encoding(&mut con, "big:list"),
                "big:set": exp::encoding(&mut con, "big:set"),
            });
            println!(
                "  [{}] seeded {n_keys} keys ({how}), big:list {n_list} small ints (OBJECT ENCODING {}), big:set {n_set} strings (OBJECT ENCODING {})",
                t.label, enc["big:list"].as_str().unwrap_or("?"), enc["big:set"].as_str().unwrap_or("?")
            );
            encodings.push(enc);
            report::wait_with_bar(settle, format!("{}: settling after seeding", t.label));
            g.pause();
            Ok((con, g))
        })();
        match r {
            Ok((c, g)) => {
                cons.push(Some(c));
                groups.push(Some(g));
            }
            Err(e) => {
                report::note(&format!("{}: victims cannot run: {e}", t.label));
                cons.push(None);
                groups.push(None);
            }
        }
    }

    let conditions = [
        "baseline",
        "KEYS",
        "SCAN",
        "LRANGE",
        "DEL list",
        "UNLINK list",
        "DEL set",
        "expire",
    ];
    for cond in conditions {
        for ti in 0..ctx.targets.len() {
            let (Some(con), Some(g)) = (cons[ti].as_mut(), groups[ti].as_ref()) else {
                continue;
            };
            let t = &mut ctx.targets[ti];
            if cond == "baseline" {
                // Log every blocker (they run 1 ms and more), not the GETs.
                if let Err(e) = exp::config_set(t, con, "slowlog-log-slower-than", "1000") {
                    report::note(&format!("{}: {e}", t.label));
                }
            }
            // Victims on, a moment to warm up, the condition, victims off.
            g.resume();
            std::thread::sleep(Duration::from_millis(200));
            let row = match cond {
                "baseline" => {
                    let start = now_us(epoch);
                    report::wait_with_bar(baseline, format!("{}: baseline", t.label));
                    Row {
                        condition: "baseline".into(),
                        short: "baseline".into(),
                        target: ti,
                        blocker_ms: None,
                        slowlog_us: None,
                        window: Some(Window::new(start, now_us(epoch))),
                        notes: format!("{} s, no blocker", baseline.as_secs_f64()),
                    }
                }
                "KEYS" => blocker(
                    con,
                    epoch,
                    ti,
                    hold,
                    &format!("KEYS t8:k:* ({n_keys} keys)"),
                    "KEYS",
                    redis::cmd("KEYS").arg("t8:k:*").clone(),
                    false,
                ),
                "SCAN" => scan_all(con, epoch, ti, n_keys),
                "LRANGE" => blocker(
                    con,
                    epoch,
                    ti,
                    hold,
                    &format!("LRANGE big:list 0 -1 ({n_list})"),
                    "LRANGE",
                    redis::cmd("LRANGE").arg("big:list").arg(0).arg(-1).clone(),
                    false,
                ),
                "DEL list" => blocker(
                    con,
                    epoch,
                    ti,
                    hold,
                    &format!("DEL big:list ({n_list} small ints)"),
                    "DEL list",
                    redis::cmd("DEL").arg("big:list").clone(),
                    true,
                ),
                "UNLINK list" => {
                    let mut r = match exp::build_list(con, &t.label, "big:list", n_list) {
                        Ok(_) => blocker(
                            con,
                            epoch,
                            ti,
                            hold,
                            &format!("UNLINK big:list ({n_list} small ints)"),
                            "UNLINK list",
                            redis::cmd("UNLINK").arg("big:list").clone(),
                            true,
                        ),
                        Err(e) => failed("UNLINK big:list", ti, e),
                    };
                    r.notes = format!("{} (list rebuilt before)", r.notes);
                    r
                }
                "DEL set" => blocker(
                    con,
                    epoch,
                    ti,
                    hold,
                    &format!("DEL big:set ({n_set} strings)"),
                    "DEL set",
                    redis::cmd("DEL").arg("big:set").clone(),
                    true,
                ),
                _ => expire_storm(t, con, epoch, ti, n_expire),
            };
            g.pause();
            let took = row.blocker_ms.map(fmt_ms).unwrap_or_else(|| "-".into());
            println!(
                "  [{}] {}: {} ms {}",
                t.label, row.condition, took, row.notes
            );
            rows.push(row);
        }
    }

    let samples: Vec<Vec<Sample>> = groups
        .into_iter()
        .map(|g| {
            g.map(|g| {
                if g.errors() > 0 {
                    report::note(&format!("{} victim GETs failed", g.errors()));
                }
                g.finish()
            })
            .unwrap_or_default()
        })
        .collect();

    // Per condition and server: the summary, and p99 against the baseline.
    let sums: Vec<Option<Summary>> = rows
        .iter()
        .map(|r| {
            r.window
                .map(|w| stats::summarize_window(&samples[r.target], &w, THRESHOLD_US))
        })
        .collect();
    let get = |short: &str, ti: usize| -> Option<(&Row, &Summary)> {
        rows.iter()
            .zip(&sums)
            .find(|(r, _)| r.short == short && r.target == ti)
            .and_then(|(r, s)| s.as_ref().map(|s| (r, s)))
    };
    let mut table = Table::new(
        "victims: per condition, what four unrelated clients waited",
        &[
            "condition",
            "server",
            "blocker ms",
            "SLOWLOG us",
            "GETs",
            "p50 ms",
            "p99 ms",
            "max ms",
            ">10ms",
            "p99/base",
            "notes",
        ],
    );
    let mut json_rows = Vec::new();
    for (r, s) in rows.iter().zip(&sums) {
        let label = ctx.targets[r.target].label.clone();
        let base_p99 = get("baseline", r.target).map(|(_, b)| b.p99_ms);
        let p99_ratio = s
            .as_ref()
            .and_then(|s| stats::ratio(Some(s.p99_ms), base_p99));
        let cell = |f: &dyn Fn(&Summary) -> String| s.as_ref().map(f).unwrap_or_else(|| "-".into());
        table.row(vec![
            r.condition.clone(),
            label.clone(),
            fmt_opt_ms(r.blocker_ms),
            r.slowlog_us
                .map(|u| u.to_string())
                .unwrap_or_else(|| "-".into()),
            cell(&|s| s.count.to_string()),
            cell(&|s| fmt_ms(s.p50_ms)),
            cell(&|s| fmt_ms(s.p99_ms)),
            cell(&|s| fmt_ms(s.max_ms)),
            cell(&|s| s.over_threshold.to_string()),
            fmt_ratio(p99_ratio),
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
            "condition": r.condition,
            "short": r.short,
            "server": label,
            "blocker_ms": r.blocker_ms,
            "slowlog_us": r.slowlog_us,
            "window_us": r.window,
            "victim": s,
            "p99_over_baseline": p99_ratio,
            "notes": r.notes,
            "samples_ms": window_samples,
        }));
    }
    table.print();
    let idle: Vec<serde_json::Value> = ctx
        .targets
        .iter()
        .enumerate()
        .map(|(ti, t)| {
            // Samples in no condition's window: seeding, settling, warm-ups.
            let windows: Vec<Window> = rows
                .iter()
                .filter(|r| r.target == ti)
                .filter_map(|r| r.window)
                .collect();
            let lats = samples[ti]
                .iter()
                .filter(|s| !windows.iter().any(|w| w.overlaps(s)))
                .map(|s| s.lat_us);
            json!({ "server": t.label, "idle": stats::summarize(lats, THRESHOLD_US) })
        })
        .collect();
    println!(
        "  (a condition lasts while its blocker runs, and at least {} s; SLOWLOG threshold 1 ms)",
        hold.as_secs_f64()
    );
    println!(
        "  (samples outside every condition, taken while seeding and settling, are the \"idle\" bucket in the JSON: not a baseline)"
    );

    // Lessons.
    let mut l_alloc = Lesson::new(
        "victims.del_set_vs_del_list",
        "a big DEL costs what it has to free, allocation by allocation: a 1M-string hashtable set, not a 1M-int quicklist",
        "DEL set time / DEL list time",
        Direction::Above(1.0),
    );
    let mut l_p99 = Lesson::new(
        "victims.one_off_stall",
        "a one-off stall hides from p99 but not from max: the DEL of the set",
        "victim max / victim p99 during DEL set",
        Direction::Above(2.0),
    );
    let mut l_scan = Lesson::new(
        "victims.scan_vs_keys",
        "SCAN trades total time for not blocking",
        "victim max during SCAN / during KEYS",
        Direction::Below(1.0),
    );
    let mut scan_note = Vec::new();
    let mut p99_note = Vec::new();
    for (ti, t) in ctx.targets.iter().enumerate() {
        let bt = |s: &str| get(s, ti).and_then(|(r, _)| r.blocker_ms);
        l_alloc = l_alloc.value(&t.label, stats::ratio(bt("DEL set"), bt("DEL list")));
        let set = get("DEL set", ti).map(|(_, s)| s.clone());
        l_p99 = l_p99.value(
            &t.label,
            set.as_ref()
                .and_then(|s| stats::ratio(Some(s.max_ms), Some(s.p99_ms))),
        );
        if let (Some(s), Some((_, b))) = (&set, get("baseline", ti)) {
            p99_note.push(format!(
                "{}: p99 {} ms (baseline {}), max {} ms, {} sample(s) over 10 ms",
                t.label,
                fmt_ms(s.p99_ms),
                fmt_ms(b.p99_ms),
                fmt_ms(s.max_ms),
                s.over_threshold
            ));
        }
        let max = |c: &str| get(c, ti).map(|(_, s)| s.max_ms);
        l_scan = l_scan.value(&t.label, stats::ratio(max("SCAN"), max("KEYS")));
        if let Some(r) = stats::ratio(bt("SCAN"), bt("KEYS")) {
            scan_note.push(format!("{} {}", t.label, fmt_ratio(Some(r))));
        }
    }
    if !p99_note.is_empty() {
        l_p99 = l_p99.note(p99_note.join(" | "));
    }
    if !scan_note.is_empty() {
        l_scan = l_scan.note(format!(
            "SCAN total time / KEYS time: {}",
            scan_note.join(" | ")
        ));
    }
    let lessons = vec![l_alloc, l_p99, l_scan];
    for l in &lessons {
        l.print();
    }

    // Plots.
    let mut svgs = Vec::new();
    let panels: Vec<TimelinePanel> = ctx
        .targets
        .iter()
        .enumerate()
        .map(|(ti, t)| {
            let end = samples[ti].last().map(|s| s.end_us()).unwrap_or(1);
            TimelinePanel {
                label: t.label.clone(),
                buckets: stats::timeline_buckets(&samples[ti], 0, end, 2000),
                windows: rows
                    .iter()
                    .filter(|r| r.target == ti)
                    .filter_map(|r| {
                        r.window.map(|w| {
                            (
                                r.short.clone(),
                                w.start_us as f64 / 1e6,
                                w.end_us as f64 / 1e6,
                            )
                        })
                    })
                    .collect(),
                t_end_s: end as f64 / 1e6,
            }
        })
        .collect();
    if let Some(p) = exp::write_svg(ctx.svg_path("victims_timeline.svg"), |p| {
        plot::timeline(
            p,
            "victims (E2): four victims' GET latency, conditions shaded",
            &panels,
        )
    }) {
        svgs.push(p);
    }
    let bar_groups = |f: &dyn Fn(&Row, Option<&Summary>) -> Option<f64>| -> Vec<BarGroup> {
        ["DEL list", "UNLINK list", "DEL set"]
            .iter()
            .map(|c| BarGroup {
                name: c.to_string(),
                bars: ctx
                    .targets
                    .iter()
                    .enumerate()
                    .map(|(ti, t)| {
                        let r = rows
                            .iter()
                            .zip(&sums)
                            .find(|(r, _)| r.short == *c && r.target == ti);
                        (
                            t.label.clone(),
                            r.and_then(|(r, s)| f(r, s.as_ref())).unwrap_or(f64::NAN),
                        )
                    })
                    .collect(),
            })
            .collect()
    };
    let blocker_bars = bar_groups(&|r, _| r.blocker_ms);
    if let Some(p) = exp::write_svg(ctx.svg_path("victims_del_blocker.svg"), |p| {
        plot::bars(
            p,
            "victims (E2): DEL/UNLINK time follows allocations, not elements (1M each)",
            "blocker time (ms, log)",
            true,
            &blocker_bars,
        )
    }) {
        svgs.push(p);
    }
    let max_bars = bar_groups(&|_, s| s.map(|s| s.max_ms));
    if let Some(p) = exp::write_svg(ctx.svg_path("victims_del_victim_max.svg"), |p| {
        plot::bars(
            p,
            "victims (E2): the victims' worst GET during each DEL/UNLINK",
            "victim max (ms, log)",
            true,
            &max_bars,
        )
    }) {
        svgs.push(p);
    }

    ExpOutput {
        name: "victims".into(),
        json: json!({
            "servers": ids,
            "sizes": { "keys": n_keys, "list": n_list, "set": n_set, "expiring": n_expire },
            "victims": VICTIMS,
            "victim_pause_ms": VICTIM_PAUSE.as_secs_f64() * 1000.0,
            "settle_s": settle.as_secs_f64(),
            "baseline_s": baseline.as_secs_f64(),
            "hold_s": hold.as_secs_f64(),
            "threshold_ms": THRESHOLD_US as f64 / 1000.0,
            "encodings": encodings,
            "rows": json_rows,
            "idle": idle,
            "table": table.to_json(),
            "lessons": lessons.iter().map(Lesson::to_json).collect::<Vec<_>>(),
        }),
        lessons,
        svgs,
    }
}

fn failed(condition: &str, ti: usize, e: String) -> Row {
    Row {
        condition: condition.into(),
        short: condition.into(),
        target: ti,
        blocker_ms: None,
        slowlog_us: None,
        window: None,
        notes: e,
    }
}

/// One blocker; its condition lasts while it runs, and at least `hold`.
#[allow(clippy::too_many_arguments)]
fn blocker(
    con: &mut redis::Connection,
    epoch: Instant,
    ti: usize,
    hold: Duration,
    condition: &str,
    short: &str,
    cmd: redis::Cmd,
    show_encoding: bool,
) -> Row {
    let name = String::from_utf8_lossy(&cmd.get_packed_command())
        .split("\r\n")
        .nth(2)
        .unwrap_or("")
        .to_string();
    let key = condition
        .split_whitespace()
        .nth(1)
        .unwrap_or("")
        .to_string();
    let enc = if show_encoding {
        Some(exp::encoding(con, &key))
    } else {
        None
    };
    exp::slowlog_reset(con);
    let start = now_us(epoch);
    let (took, r) = exp::timed(con, &cmd);
    let end = now_us(epoch);
    let remaining = hold.saturating_sub(took);
    std::thread::sleep(remaining);
    let mut notes = Vec::new();
    match r {
        Ok(Value::Array(a)) => notes.push(format!("{} elements returned", a.len())),
        Ok(_) => {}
        Err(e) => notes.push(exp::describe_err(&e, &name)),
    }
    if let Some(enc) = enc {
        notes.push(format!("OBJECT ENCODING {enc}"));
    }
    let _ = end;
    Row {
        condition: condition.into(),
        short: short.into(),
        target: ti,
        blocker_ms: Some(took.as_secs_f64() * 1000.0),
        slowlog_us: exp::slowlog_last_us(con, &name),
        window: Some(Window::new(start, now_us(epoch))),
        notes: notes.join(", "),
    }
}

/// A full SCAN iteration (default COUNT) as one condition.
fn scan_all(con: &mut redis::Connection, epoch: Instant, ti: usize, n: usize) -> Row {
    let start = now_us(epoch);
    let t0 = Instant::now();
    let mut cursor = 0u64;
    let mut calls = 0u64;
    let mut slowest = Duration::ZERO;
    let mut note = None;
    loop {
        let c0 = Instant::now();
        let r: redis::RedisResult<(u64, Vec<Vec<u8>>)> = redis::cmd("SCAN").arg(cursor).query(con);
        slowest = slowest.max(c0.elapsed());
        calls += 1;
        match r {
            Ok((0, _)) => break,
            Ok((next, _)) => cursor = next,
            Err(e) => {
                note = Some(exp::describe_err(&e, "SCAN"));
                break;
            }
        }
    }
    let took = t0.elapsed();
    Row {
        condition: format!("SCAN full iteration ({n} keys)"),
        short: "SCAN".into(),
        target: ti,
        blocker_ms: Some(took.as_secs_f64() * 1000.0),
        slowlog_us: None,
        window: Some(Window::new(start, now_us(epoch))),
        notes: note.unwrap_or_else(|| {
            format!(
                "{calls} calls, slowest {} ms",
                fmt_ms(slowest.as_secs_f64() * 1000.0)
            )
        }),
    }
}

/// `n` keys with the same PEXPIREAT deadline; the condition runs from the
/// deadline until the active expiry cycle has removed them all.
fn expire_storm(
    t: &Target,
    con: &mut redis::Connection,
    epoch: Instant,
    ti: usize,
    n: usize,
) -> Row {
    let condition = format!("{n} keys expiring at one moment");
    let stats0 = target::info_section(con, "stats").unwrap_or_default();
    let expired0 = target::info_f64(&stats0, "expired_keys").unwrap_or(0.0);
    // The deadline: far enough ahead for the writes to finish.
    let now_ms = server_time_ms(con).unwrap_or(0);
    let lead_ms = 1000 + n as u64 / 100; // about 3.5 s for 250k keys
    let deadline_ms = now_ms + lead_ms;
    let pb = report::bar(
        n as u64,
        format!("{}: SET exp:* PXAT {deadline_ms}", t.label),
    );
    let mut i = 0;
    while i < n {
        let mut pipe = redis::pipe();
        for _ in 0..1000 {
            if i >= n {
                break;
            }
            pipe.cmd("SET")
                .arg(format!("exp:{i}"))
                .arg("v")
                .arg("PXAT")
                .arg(deadline_ms)
                .ignore();
            i += 1;
        }
        if let Err(e) = pipe.query::<()>(con) {
            pb.finish_and_clear();
            return failed(
                &condition,
                ti,
                format!("SET .. PXAT: {}", target::short_err(&e)),
            );
        }
        pb.set_position(i as u64);
    }
    pb.finish_and_clear();
    let now2 = server_time_ms(con).unwrap_or(deadline_ms);
    if now2 >= deadline_ms {
        report::note(&format!(
            "{}: writing the keys took past their deadline",
            t.label
        ));
    }
    std::thread::sleep(Duration::from_millis(deadline_ms.saturating_sub(now2)));
    let start = now_us(epoch);
    let t0 = Instant::now();
    let limit = Duration::from_secs(60);
    let mut expired = 0.0;
    let pb = report::bar(n as u64, format!("{}: active expiry", t.label));
    while t0.elapsed() < limit {
        let s = target::info_section(con, "stats").unwrap_or_default();
        expired = target::info_f64(&s, "expired_keys").unwrap_or(0.0) - expired0;
        pb.set_position(expired.max(0.0) as u64);
        if expired >= n as f64 {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    pb.finish_and_clear();
    let took = t0.elapsed();
    let stats1 = target::info_section(con, "stats").unwrap_or_default();
    let stale = target::info_field(&stats1, "expired_stale_perc").unwrap_or_default();
    Row {
        condition,
        short: "expire".into(),
        target: ti,
        blocker_ms: None,
        slowlog_us: None,
        window: Some(Window::new(start, now_us(epoch))),
        notes: format!(
            "active expiry removed {expired:.0} keys in {:.2} s (expired_stale_perc {stale})",
            took.as_secs_f64()
        ),
    }
}

/// The server's clock (TIME) in milliseconds.
fn server_time_ms(con: &mut redis::Connection) -> Option<u64> {
    let (s, us): (u64, u64) = redis::cmd("TIME").query(con).ok()?;
    Some(s * 1000 + us / 1000)
}
