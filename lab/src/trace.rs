//! `--trace DIR`: the server's loop flight recorder around each experiment
//! (redis-lite's `DEBUG RECORDER`, server/src/recorder.rs), written as
//! Chrome trace-event JSON that Perfetto UI (https://ui.perfetto.dev) and
//! chrome://tracing open, and the biggest stalls drawn as an SVG timeline
//! so a workshop sees them without any viewer.
//!
//! Around each experiment, on every server that has the recorder:
//! `DEBUG RECORDER RESET`, `DEBUG RECORDER START <TRACE_PASSES>`; after it
//! `DEBUG RECORDER STOP` and `DEBUG RECORDER JSON` (the trace as one bulk
//! string, so a `--target` on another machine works too), written to
//! `DIR/<experiment>-<server>.json`. A real redis-server has no recorder
//! (its DEBUG answers RECORDER with an error): the lab says so and writes
//! nothing for it.
//!
//! The timeline (`<experiment>-<server>-stalls.svg`) has one panel per
//! stall: the main thread's track with the stalling command's slice, the
//! `bio_lazy_free` track, and one row per client whose command waited
//! behind it, its queue wait drawn as a bar under the stall ("GETs queued
//! behind KEYS"); plus a panel around the longest lazy-free job, where the
//! main track keeps serving while the worker frees.

use std::path::{Path, PathBuf};

use redis::Value;
use serde::Deserialize;
use serde_json::{json, Value as Json};

use crate::exp::Ctx;
use crate::plot;
use crate::report;
use crate::target::{short_err, Target};

/// TRACE_PASSES: loop passes the server keeps for one experiment. A victim
/// sending a GET every millisecond makes about a thousand passes a second,
/// so this is the last minute or so of a probe run; older passes are
/// dropped (and counted: DEBUG RECORDER STATUS passes_dropped), and so are
/// they past the server's own bound on the commands kept
/// (RECORDER_MAX_COMMANDS: a pipelined redis-benchmark fills passes fast).
pub const TRACE_PASSES: usize = 50_000;
/// STALLS_DRAWN: stall panels in the timeline (worst first).
pub const STALLS_DRAWN: usize = 3;
/// Victim rows per panel at most.
pub const VICTIM_ROWS: usize = 8;
/// Commands waited behind for less than this are not victims worth a row.
const MIN_VICTIM_WAIT_US: u64 = 100;

/// The thread ids the recorder gives its two tracks (recorder.rs).
pub const MAIN_TID: u64 = 1;
pub const BIO_TID: u64 = 2;

/// Whether the server has the loop flight recorder: DEBUG RECORDER STATUS
/// answers an array (redis-server answers an unknown-subcommand error).
pub fn has_recorder(con: &mut redis::Connection) -> Result<(), String> {
    match redis::cmd("DEBUG")
        .arg("RECORDER")
        .arg("STATUS")
        .query::<Value>(con)
    {
        Ok(Value::Array(_)) => Ok(()),
        Ok(other) => Err(format!("unexpected DEBUG RECORDER STATUS reply {other:?}")),
        Err(e) => Err(short_err(&e)),
    }
}

/// Start recording on every server that can; returns which ones record.
pub fn begin(ctx: &Ctx) -> Vec<bool> {
    if ctx.trace_dir.is_none() {
        return vec![false; ctx.targets.len()];
    }
    ctx.targets.iter().map(begin_one).collect()
}

fn begin_one(t: &Target) -> bool {
    let mut con = match t.connect() {
        Ok(c) => c,
        Err(e) => {
            report::note(&format!("{}: --trace: {e}", t.label));
            return false;
        }
    };
    if let Err(e) = has_recorder(&mut con) {
        report::note(&format!(
            "{}: --trace: this server has no loop flight recorder (DEBUG RECORDER STATUS: {e}); \
             a real redis-server has none: no trace written for it",
            t.label
        ));
        return false;
    }
    let started = redis::cmd("DEBUG")
        .arg("RECORDER")
        .arg("RESET")
        .query::<()>(&mut con)
        .and_then(|_| {
            redis::cmd("DEBUG")
                .arg("RECORDER")
                .arg("START")
                .arg(TRACE_PASSES)
                .query::<()>(&mut con)
        });
    match started {
        Ok(()) => true,
        Err(e) => {
            report::note(&format!(
                "{}: --trace: DEBUG RECORDER START: {}",
                t.label,
                short_err(&e)
            ));
            false
        }
    }
}

/// Stop, fetch and write each recording, draw its stalls. Returns the
/// JSON summary and the SVGs written.
pub fn end(ctx: &Ctx, experiment: &str, recording: &[bool]) -> (Json, Vec<PathBuf>) {
    let Some(dir) = ctx.trace_dir.as_ref() else {
        return (Json::Null, Vec::new());
    };
    let mut summary = serde_json::Map::new();
    let mut svgs = Vec::new();
    for (t, on) in ctx.targets.iter().zip(recording) {
        if !*on {
            summary.insert(t.label.clone(), json!({ "trace": null, "recorder": false }));
            continue;
        }
        match end_one(ctx, dir, experiment, t) {
            Ok((s, svg)) => {
                summary.insert(t.label.clone(), s);
                svgs.extend(svg);
            }
            Err(e) => {
                report::note(&format!("{}: --trace: {e}", t.label));
                summary.insert(t.label.clone(), json!({ "error": e }));
            }
        }
    }
    (Json::Object(summary), svgs)
}

fn end_one(
    ctx: &Ctx,
    dir: &Path,
    experiment: &str,
    t: &Target,
) -> Result<(Json, Option<PathBuf>), String> {
    let mut con = t.connect()?;
    redis::cmd("DEBUG")
        .arg("RECORDER")
        .arg("STOP")
        .query::<()>(&mut con)
        .map_err(|e| format!("DEBUG RECORDER STOP: {}", short_err(&e)))?;
    let status: Vec<String> = redis::cmd("DEBUG")
        .arg("RECORDER")
        .arg("STATUS")
        .query(&mut con)
        .unwrap_or_default();
    let dropped = status
        .iter()
        .find_map(|l| l.strip_prefix("passes_dropped:"))
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0);
    let text: Vec<u8> = redis::cmd("DEBUG")
        .arg("RECORDER")
        .arg("JSON")
        .query(&mut con)
        .map_err(|e| format!("DEBUG RECORDER JSON: {}", short_err(&e)))?;
    // Forget the recording on the server: it can be large.
    let _ = redis::cmd("DEBUG")
        .arg("RECORDER")
        .arg("RESET")
        .query::<()>(&mut con);
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = dir.join(format!("{experiment}-{}.json", t.label));
    std::fs::write(&path, &text).map_err(|e| format!("{}: {e}", path.display()))?;
    let trace = parse(&text)?;
    println!(
        "  trace: {} ({} events{}; open it in https://ui.perfetto.dev)",
        path.display(),
        trace.events.len(),
        if dropped > 0 {
            format!(", the oldest {dropped} loop passes dropped from the ring")
        } else {
            String::new()
        }
    );
    let stalls = biggest_stalls(&trace, STALLS_DRAWN);
    let panels = panels(&trace, &stalls);
    let svg_dir = ctx.svg_dir.as_deref().unwrap_or(dir);
    let svg_path = svg_dir.join(format!("{experiment}-{}-stalls.svg", t.label));
    let svg = if panels.is_empty() {
        report::note(&format!(
            "{}: the trace holds no command slice to draw",
            t.label
        ));
        None
    } else {
        crate::exp::write_svg(Some(svg_path), |p| {
            plot::stall_timeline(
                p,
                &format!(
                    "{experiment} on {}: the biggest stalls, from the loop flight recorder",
                    t.label
                ),
                &panels,
            )
        })
    };
    let summary = json!({
        "trace": path.display().to_string(),
        "events": trace.events.len(),
        "passes_dropped": dropped,
        "stalls": stalls.iter().map(|s| json!({
            "command": s.name,
            "client_id": s.args.client_id,
            "ts_us": s.ts,
            "dur_us": s.dur,
            "waiters": s.args.waiters,
            "waited_us": s.args.waited_us,
        })).collect::<Vec<_>>(),
        "svg": svg.as_ref().map(|p| p.display().to_string()),
    });
    Ok((summary, svg))
}

/// The parts of a trace event the lab reads (serde skips the rest).
#[derive(Deserialize, Clone, Debug)]
pub struct Event {
    pub ph: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub cat: String,
    #[serde(default)]
    pub pid: u64,
    #[serde(default)]
    pub tid: u64,
    #[serde(default)]
    pub ts: u64,
    #[serde(default)]
    pub dur: u64,
    #[serde(default)]
    pub args: Args,
}

/// The args the lab reads.
#[derive(Deserialize, Clone, Debug, Default)]
pub struct Args {
    pub client_id: Option<u64>,
    pub queue_wait_us: Option<u64>,
    pub waiters: Option<u64>,
    pub waited_us: Option<u64>,
    pub effort: Option<u64>,
    /// thread_name / process_name metadata.
    pub name: Option<String>,
}

/// A parsed trace.
pub struct Trace {
    pub events: Vec<Event>,
}

#[derive(Deserialize)]
struct TraceFile {
    #[serde(rename = "traceEvents")]
    trace_events: Vec<Event>,
}

/// Parse trace-event JSON (the object form, with `traceEvents`).
pub fn parse(text: &[u8]) -> Result<Trace, String> {
    let f: TraceFile =
        serde_json::from_slice(text).map_err(|e| format!("trace is not trace-event JSON: {e}"))?;
    Ok(Trace {
        events: f.trace_events,
    })
}

impl Trace {
    /// Command slices on the main track, in time order.
    pub fn commands(&self) -> impl Iterator<Item = &Event> {
        self.events
            .iter()
            .filter(|e| e.ph == "X" && e.cat == "command" && e.tid == MAIN_TID)
    }

    /// Lazy-free jobs on the bio track.
    pub fn bio_jobs(&self) -> impl Iterator<Item = &Event> {
        self.events
            .iter()
            .filter(|e| e.ph == "X" && e.tid == BIO_TID)
    }

    /// The name of thread `tid` (thread_name metadata).
    pub fn thread_name(&self, tid: u64) -> Option<&str> {
        self.events
            .iter()
            .find(|e| e.ph == "M" && e.name == "thread_name" && e.tid == tid)
            .and_then(|e| e.args.name.as_deref())
    }
}

/// The worst stalls: commands ranked by the other clients' wait they
/// caused, then by their own run time; the recorder's own DEBUG RECORDER
/// commands are left out.
pub fn biggest_stalls(trace: &Trace, n: usize) -> Vec<Event> {
    let mut cmds: Vec<&Event> = trace
        .commands()
        .filter(|e| !e.name.starts_with("DEBUG recorder") && !e.name.starts_with("DEBUG RECORDER"))
        .collect();
    cmds.sort_by(|a, b| {
        let wa = a.args.waited_us.unwrap_or(0);
        let wb = b.args.waited_us.unwrap_or(0);
        wb.cmp(&wa).then(b.dur.cmp(&a.dur)).then(a.ts.cmp(&b.ts))
    });
    cmds.into_iter().take(n).cloned().collect()
}

/// One panel's rows and slices, in microseconds relative to its focus.
fn panel_for(trace: &Trace, title: String, focus_ts: u64, focus_dur: u64) -> plot::StallPanel {
    let pad = (focus_dur / 6).max(1_000);
    let focus_end = focus_ts + focus_dur.max(1);
    // Victims: commands that ran after the focus began (within a horizon:
    // the loop may do other work first) and whose queue wait reaches back
    // into it.
    let horizon = focus_end + focus_dur.max(10_000);
    let mut victims_ev: Vec<&Event> = Vec::new();
    for e in trace.commands() {
        let qw = e.args.queue_wait_us.unwrap_or(0);
        if e.ts <= focus_ts || qw < MIN_VICTIM_WAIT_US || e.ts > horizon {
            continue;
        }
        if e.ts.saturating_sub(qw) >= focus_end {
            continue;
        }
        let client = e.args.client_id.unwrap_or(0);
        if victims_ev
            .iter()
            .any(|v| v.args.client_id.unwrap_or(0) == client)
            || victims_ev.len() >= VICTIM_ROWS
        {
            continue;
        }
        victims_ev.push(e);
    }
    let last_victim = victims_ev.iter().map(|e| e.ts + e.dur).max().unwrap_or(0);
    let t0 = focus_ts.saturating_sub(pad);
    let t1 = (focus_end + pad).max(last_victim + pad / 2);
    let rel = |ts: u64| (ts as f64 - focus_ts as f64) / 1000.0;
    let overlaps = |a: u64, b: u64| a < t1 && b > t0;
    let mut main = Vec::new();
    for e in trace.events.iter().filter(|e| {
        e.ph == "X"
            && e.tid == MAIN_TID
            && (e.cat == "command" || e.name == "poll" || e.name.starts_with("loop pass"))
    }) {
        if overlaps(e.ts, e.ts + e.dur.max(1)) {
            main.push(plot::Slice {
                name: e.name.clone(),
                start_ms: rel(e.ts),
                end_ms: rel(e.ts + e.dur),
                kind: if e.name == "poll" {
                    plot::SliceKind::Idle
                } else if e.cat == "loop" {
                    plot::SliceKind::Pass
                } else if e.ts == focus_ts {
                    plot::SliceKind::Focus
                } else {
                    plot::SliceKind::Other
                },
            });
        }
    }
    let bio = trace
        .bio_jobs()
        .filter(|e| overlaps(e.ts, e.ts + e.dur.max(1)))
        .map(|e| plot::Slice {
            name: format!("{} (effort {})", e.name, e.args.effort.unwrap_or(0)),
            start_ms: rel(e.ts),
            end_ms: rel(e.ts + e.dur),
            kind: if e.ts == focus_ts {
                plot::SliceKind::Focus
            } else {
                plot::SliceKind::Bio
            },
        })
        .collect();
    let victims = victims_ev
        .iter()
        .map(|e| {
            let qw = e.args.queue_wait_us.unwrap_or(0);
            plot::Victim {
                client_id: e.args.client_id.unwrap_or(0),
                command: e.name.clone(),
                queued_ms: rel(e.ts.saturating_sub(qw).max(t0)),
                start_ms: rel(e.ts),
                end_ms: rel(e.ts + e.dur),
                wait_ms: qw as f64 / 1000.0,
            }
        })
        .collect();
    plot::StallPanel {
        title,
        from_ms: rel(t0),
        to_ms: rel(t1),
        main_track: trace.thread_name(MAIN_TID).unwrap_or("main").to_string(),
        bio_track: trace
            .thread_name(BIO_TID)
            .unwrap_or("bio_lazy_free")
            .to_string(),
        main,
        bio,
        victims,
    }
}

/// The panels to draw: each stall, then the longest lazy-free job.
pub fn panels(trace: &Trace, stalls: &[Event]) -> Vec<plot::StallPanel> {
    let mut out: Vec<plot::StallPanel> = stalls
        .iter()
        .map(|s| {
            let title = format!(
                "{} ran {:.1} ms; {} clients waited {:.1} ms in total",
                s.name,
                s.dur as f64 / 1000.0,
                s.args.waiters.unwrap_or(0),
                s.args.waited_us.unwrap_or(0) as f64 / 1000.0
            );
            panel_for(trace, title, s.ts, s.dur)
        })
        .collect();
    if let Some(job) = trace.bio_jobs().max_by_key(|e| e.dur) {
        let title = format!(
            "{} on {} took {:.1} ms: the main thread kept serving",
            job.name,
            trace.thread_name(BIO_TID).unwrap_or("bio_lazy_free"),
            job.dur as f64 / 1000.0
        );
        out.push(panel_for(trace, title, job.ts, job.dur));
    }
    out
}
