//! E3 MONITOR cost (post 002): `redis-benchmark` SET/GET/HSET with and
//! without one monitor attached, at `-P 1` (the post's command) and `-P 16`,
//! in alternating order (plain, monitor, monitor, plain: medians of two).
//!
//! Requests per second depend on the client as much as on the server: at
//! `-P 1` on 2 cores, redis-benchmark's single thread and the round trips
//! set the pace and the server's main thread idles part of the time, so the
//! monitor's work can hide in that idle time. The cost that does not depend
//! on the client is the server's: main-thread CPU per command (INFO
//! `used_cpu_user_main_thread` + `used_cpu_sys_main_thread` over
//! `total_commands_processed`), measured around every run. That is the
//! number that carries the lesson on any machine.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde_json::json;

use super::{Ctx, ExpOutput};
use crate::cleanup;
use crate::exp;
use crate::plot::{self, BarGroup};
use crate::report::{self, fmt_ratio, Direction, Lesson, Table};
use crate::stats;
use crate::target::{self, Target};

const TESTS: [&str; 3] = ["set", "get", "hset"];
const PIPELINES: [u32; 2] = [1, 16];
/// Alternating order: a drift in the machine's load cancels out; three of
/// each, reported by their medians.
const ORDER: [bool; 6] = [false, true, true, false, false, true];

/// One benchmark run.
#[derive(Clone, Debug, serde::Serialize)]
struct Run {
    server: String,
    test: String,
    pipeline: u32,
    monitor: bool,
    rps: f64,
    /// Main-thread CPU microseconds per command processed.
    cpu_us_per_cmd: Option<f64>,
    /// Main-thread CPU seconds / wall seconds.
    busy: Option<f64>,
    commands: f64,
    monitor_lines: u64,
    source: String,
}

pub fn run(ctx: &mut Ctx) -> ExpOutput {
    report::print_banner(
        "monitor (E3, post 002)",
        "redis-benchmark with and without one MONITOR, and what each command costs the server",
    );
    let ids = exp::identities(ctx);
    // -P 1 runs at tens of thousands of requests/s, -P 16 at hundreds of
    // thousands: the requests per run keep each run about a second long.
    let n_for = |p: u32| {
        if p == 1 {
            ctx.size(50_000)
        } else {
            ctx.size(200_000)
        }
    };
    let bench = target::which("redis-benchmark");
    let source = if bench.is_some() {
        "redis-benchmark"
    } else {
        "lab load generator"
    };
    if bench.is_none() {
        report::note(
            "redis-benchmark not found on PATH (install it with: apt-get install -y redis-tools); \
             the requests/s below come from the lab's own load generator (4 connections), \
             and the server-side CPU per command is measured the same way",
        );
    }
    println!(
        "  {source} -q -t set,get,hset, -n {} at -P 1 and -n {} at -P 16, order plain/monitor \
         alternating; the monitor is the lab's own connection reading and discarding (like \
         `redis-cli monitor > /dev/null`)",
        n_for(1),
        n_for(16)
    );
    let mut runs: Vec<Run> = Vec::new();
    let total = PIPELINES.len() * ORDER.len() * ctx.targets.len() * TESTS.len();
    let pb = report::bar(total as u64, "benchmark runs".into());
    for p in PIPELINES {
        for with_monitor in ORDER {
            for t in &ctx.targets {
                if let Ok(mut con) = t.connect() {
                    let _ = exp::flushall(&mut con);
                }
                let mon = if with_monitor {
                    match Monitor::attach(t) {
                        Ok(m) => Some(m),
                        Err(e) => {
                            report::note(&format!("{}: MONITOR failed: {e}", t.label));
                            pb.inc(TESTS.len() as u64);
                            continue;
                        }
                    }
                } else {
                    None
                };
                for test in TESTS {
                    match one_run(t, bench.as_deref(), test, p, n_for(p), mon.as_ref()) {
                        Ok(r) => runs.push(r),
                        Err(e) => report::note(&format!("{} {test} -P {p}: {e}", t.label)),
                    }
                    pb.inc(1);
                }
                drop(mon);
            }
        }
    }
    pb.finish_and_clear();

    // Medians per (server, test, pipeline, monitor).
    let med = |server: &str, test: &str, p: u32, m: bool, f: &dyn Fn(&Run) -> Option<f64>| {
        let v: Vec<f64> = runs
            .iter()
            .filter(|r| r.server == server && r.test == test && r.pipeline == p && r.monitor == m)
            .filter_map(f)
            .collect();
        stats::median(&v)
    };
    let mut table = Table::new(
        "monitor: requests/s (client side) and main-thread CPU per command (server side), medians of 3",
        &[
            "test", "-P", "server", "rps plain", "rps monitor", "rps ratio", "cpu us/cmd plain",
            "cpu us/cmd monitor", "cpu ratio", "busy plain", "busy monitor",
        ],
    );
    let pct = |v: Option<f64>| {
        v.map(|b| format!("{:.0}%", b * 100.0))
            .unwrap_or_else(|| "-".into())
    };
    let us = |v: Option<f64>| v.map(|b| format!("{b:.2}")).unwrap_or_else(|| "-".into());
    let mut rps_ratio: Vec<Vec<(u32, f64)>> = vec![Vec::new(); ctx.targets.len()];
    let mut cpu_ratio: Vec<Vec<f64>> = vec![Vec::new(); ctx.targets.len()];
    let mut cpu_extra: Vec<Vec<f64>> = vec![Vec::new(); ctx.targets.len()];
    let mut busy_p1: Vec<Vec<f64>> = vec![Vec::new(); ctx.targets.len()];
    for p in PIPELINES {
        for test in TESTS {
            for (ti, t) in ctx.targets.iter().enumerate() {
                let l = t.label.as_str();
                let rp = med(l, test, p, false, &|r| Some(r.rps));
                let rm = med(l, test, p, true, &|r| Some(r.rps));
                let cp = med(l, test, p, false, &|r| r.cpu_us_per_cmd);
                let cm = med(l, test, p, true, &|r| r.cpu_us_per_cmd);
                let bp = med(l, test, p, false, &|r| r.busy);
                let bm = med(l, test, p, true, &|r| r.busy);
                if let Some(r) = stats::ratio(rm, rp) {
                    rps_ratio[ti].push((p, r));
                }
                if let Some(r) = stats::ratio(cm, cp) {
                    cpu_ratio[ti].push(r);
                }
                if let (Some(a), Some(b)) = (cm, cp) {
                    cpu_extra[ti].push(a - b);
                }
                if p == 1 {
                    if let Some(b) = bp {
                        busy_p1[ti].push(b);
                    }
                }
                table.row(vec![
                    test.to_uppercase(),
                    p.to_string(),
                    l.to_string(),
                    rp.map(|v| format!("{v:.0}")).unwrap_or_else(|| "-".into()),
                    rm.map(|v| format!("{v:.0}")).unwrap_or_else(|| "-".into()),
                    fmt_ratio(stats::ratio(rm, rp)),
                    us(cp),
                    us(cm),
                    fmt_ratio(stats::ratio(cm, cp)),
                    pct(bp),
                    pct(bm),
                ]);
            }
        }
    }
    table.print();
    let fed: u64 = runs
        .iter()
        .filter(|r| r.monitor)
        .map(|r| r.monitor_lines)
        .sum();
    println!("  (the monitors received {fed} lines in total: one per command, formatted on the main thread)");

    // Lessons.
    let mut l_p16 = Lesson::new(
        "monitor.throughput_p16",
        "with a monitor attached every command is also formatted and copied to the monitor: throughput falls",
        "rps with monitor / without, -P 16 (median of tests)",
        Direction::Below(1.0),
    );
    let mut l_p1 = Lesson::new(
        "monitor.throughput_p1",
        "at -P 1 (the post's command) the client and the round trips set the pace",
        "rps with monitor / without, -P 1 (median of tests)",
        Direction::Below(1.0),
    );
    let mut l_cap = Lesson::new(
        "monitor.server_capacity",
        "what the main thread can serve, 1 / (CPU per command), whatever the client: it falls with a monitor",
        "server-bound throughput with monitor / without (median of tests and -P)",
        Direction::Below(1.0),
    );
    let mut l_cpu = Lesson::new(
        "monitor.cpu_per_command",
        "the server-side cost, whatever the client: main-thread CPU per command",
        "CPU us/cmd with monitor / without (median of tests and -P)",
        Direction::Above(1.0),
    );
    let mut extra_note = Vec::new();
    let mut busy_note = Vec::new();
    for (ti, t) in ctx.targets.iter().enumerate() {
        let of = |p: u32| {
            stats::median(
                &rps_ratio[ti]
                    .iter()
                    .filter(|x| x.0 == p)
                    .map(|x| x.1)
                    .collect::<Vec<_>>(),
            )
        };
        l_p16 = l_p16.value(&t.label, of(16));
        l_p1 = l_p1.value(&t.label, of(1));
        l_cpu = l_cpu.value(&t.label, stats::median(&cpu_ratio[ti]));
        l_cap = l_cap.value(&t.label, stats::median(&cpu_ratio[ti]).map(|r| 1.0 / r));
        if let Some(x) = stats::median(&cpu_extra[ti]) {
            extra_note.push(format!("{} +{x:.2} us", t.label));
        }
        if let Some(b) = stats::median(&busy_p1[ti]) {
            busy_note.push(format!("{} {:.0}%", t.label, b * 100.0));
        }
    }
    if !busy_note.is_empty() {
        l_p1 = l_p1.note(format!(
            "the server's main thread was busy only {} of the time at -P 1 without a monitor: the \
             monitor's extra work fits into its idle time, so requests/s may not fall (and can even \
             rise by noise); read the CPU per command below instead",
            busy_note.join(" | ")
        ));
    }
    if !extra_note.is_empty() {
        l_cpu = l_cpu.note(format!(
            "extra main-thread CPU per command with one monitor: {}. redis-lite's is smaller: it \
             appends each argument's bytes (server/src/monitor.rs cat_repr) where Redis 7.0's \
             sdscatrepr calls sdscatprintf once per printable byte (sds.c)",
            extra_note.join(" | ")
        ));
    }
    l_p16 = l_p16.note(
        "on 2 cores redis-benchmark's single thread, the monitor reader and the server share the \
         machine, so requests/s also measure the client and the scheduler: the two lessons below \
         do not depend on them"
            .into(),
    );
    let lessons = vec![l_p16, l_p1, l_cap, l_cpu];
    for l in &lessons {
        l.print();
    }

    // Plots: throughput bars, CPU-per-command bars.
    let mut svgs = Vec::new();
    let mut rps_groups = Vec::new();
    let mut cpu_groups = Vec::new();
    for p in PIPELINES {
        for test in TESTS {
            let mut rb = Vec::new();
            let mut cb = Vec::new();
            for t in &ctx.targets {
                for m in [false, true] {
                    let name = format!("{} {}", t.label, if m { "+ monitor" } else { "plain" });
                    rb.push((
                        name.clone(),
                        med(&t.label, test, p, m, &|r| Some(r.rps)).unwrap_or(f64::NAN),
                    ));
                    cb.push((
                        name,
                        med(&t.label, test, p, m, &|r| r.cpu_us_per_cmd).unwrap_or(f64::NAN),
                    ));
                }
            }
            let g = format!("{} -P {p}", test.to_uppercase());
            rps_groups.push(BarGroup {
                name: g.clone(),
                bars: rb,
            });
            cpu_groups.push(BarGroup { name: g, bars: cb });
        }
    }
    if let Some(p) = exp::write_svg(ctx.svg_path("monitor_throughput.svg"), |p| {
        plot::bars(
            p,
            "monitor (E3): requests/s with and without one MONITOR",
            "requests per second",
            false,
            &rps_groups,
        )
    }) {
        svgs.push(p);
    }
    if let Some(p) = exp::write_svg(ctx.svg_path("monitor_cpu_per_command.svg"), |p| {
        plot::bars(
            p,
            "monitor (E3): the server's main-thread CPU per command, with and without one MONITOR",
            "main-thread CPU per command (us)",
            false,
            &cpu_groups,
        )
    }) {
        svgs.push(p);
    }

    ExpOutput {
        name: "monitor".into(),
        json: json!({
            "servers": ids,
            "requests_per_run": { "P1": n_for(1), "P16": n_for(16) },
            "source": source,
            "order": "plain, monitor, monitor, plain",
            "runs": runs,
            "table": table.to_json(),
            "lessons": lessons.iter().map(Lesson::to_json).collect::<Vec<_>>(),
        }),
        lessons,
        svgs,
    }
}

/// Main-thread CPU seconds and commands processed, now.
fn server_counters(t: &Target) -> Result<(Option<f64>, f64), String> {
    let mut con = t.connect()?;
    let cpu = target::info_section(&mut con, "cpu")?;
    let st = target::info_section(&mut con, "stats")?;
    let main = match (
        target::info_f64(&cpu, "used_cpu_user_main_thread"),
        target::info_f64(&cpu, "used_cpu_sys_main_thread"),
    ) {
        (Some(u), Some(s)) => Some(u + s),
        // Older servers: /proc/PID/task/PID/stat of a local one.
        _ => t.pid.and_then(target::main_thread_cpu_proc),
    };
    let cmds = target::info_f64(&st, "total_commands_processed").unwrap_or(0.0);
    Ok((main, cmds))
}

fn one_run(
    t: &Target,
    bench: Option<&std::path::Path>,
    test: &str,
    p: u32,
    n: usize,
    mon: Option<&Monitor>,
) -> Result<Run, String> {
    let (cpu0, cmd0) = server_counters(t)?;
    let lines0 = mon.map(|m| m.lines()).unwrap_or(0);
    let t0 = Instant::now();
    let (rps, source) = match bench {
        Some(b) => (redis_benchmark(b, t, test, p, n)?, "redis-benchmark"),
        None => (lab_load(t, test, p, n)?, "lab load generator"),
    };
    let wall = t0.elapsed().as_secs_f64();
    // The last monitor lines may still be in flight.
    std::thread::sleep(Duration::from_millis(20));
    let (cpu1, cmd1) = server_counters(t)?;
    let cmds = cmd1 - cmd0;
    let cpu = match (cpu0, cpu1) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    Ok(Run {
        server: t.label.clone(),
        test: test.into(),
        pipeline: p,
        monitor: mon.is_some(),
        rps,
        cpu_us_per_cmd: cpu.filter(|_| cmds > 0.0).map(|c| c * 1e6 / cmds),
        busy: cpu.map(|c| c / wall),
        commands: cmds,
        monitor_lines: mon.map(|m| m.lines() - lines0).unwrap_or(0),
        source: source.into(),
    })
}

/// `redis-benchmark -q -n N -P P -t TEST --csv`, requests per second.
fn redis_benchmark(
    bin: &std::path::Path,
    t: &Target,
    test: &str,
    p: u32,
    n: usize,
) -> Result<f64, String> {
    let child = Command::new(bin)
        .args([
            "-h",
            &t.addr.ip().to_string(),
            "-p",
            &t.addr.port().to_string(),
        ])
        .args([
            "-q",
            "-n",
            &n.to_string(),
            "-P",
            &p.to_string(),
            "-t",
            test,
            "--csv",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
    cleanup::register_child(child.id());
    let pid = child.id();
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    cleanup::unregister_child(pid);
    let text = String::from_utf8_lossy(&out.stdout);
    parse_benchmark_csv(&text, test).ok_or_else(|| {
        format!(
            "redis-benchmark printed no result for {test} ({}{})",
            out.status,
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .next()
                .map(|l| format!(": {l}"))
                .unwrap_or_default()
        )
    })
}

/// The rps of `test` in redis-benchmark's CSV (`"SET","53219.80",...`).
pub fn parse_benchmark_csv(text: &str, test: &str) -> Option<f64> {
    text.lines().find_map(|l| {
        let mut f = l.split(',').map(|c| c.trim().trim_matches('"'));
        let name = f.next()?;
        if !name.eq_ignore_ascii_case(test) {
            return None;
        }
        f.next()?.parse().ok()
    })
}

/// Without redis-benchmark: 4 connections, each sending its share of the
/// requests in pipelines of `p`.
fn lab_load(t: &Target, test: &str, p: u32, n: usize) -> Result<f64, String> {
    let conns = 4;
    let t0 = Instant::now();
    let mut handles = Vec::new();
    for c in 0..conns {
        let mut con = t.connect()?;
        let test = test.to_string();
        let share = n / conns;
        handles.push(thread::spawn(move || -> Result<(), String> {
            let mut done = 0;
            while done < share {
                let mut pipe = redis::pipe();
                for i in 0..(p as usize).min(share - done) {
                    let k = format!("key:{c}:{}", done + i);
                    match test.as_str() {
                        "set" => pipe.cmd("SET").arg(&k).arg("xxx").ignore(),
                        "get" => pipe.cmd("GET").arg(&k).ignore(),
                        _ => pipe.cmd("HSET").arg("myhash").arg(&k).arg("xxx").ignore(),
                    };
                }
                pipe.query::<()>(&mut con).map_err(|e| e.to_string())?;
                done += p as usize;
            }
            Ok(())
        }));
    }
    for h in handles {
        h.join().map_err(|_| "load thread panicked".to_string())??;
    }
    Ok(n as f64 / t0.elapsed().as_secs_f64())
}

/// One monitor client: sends MONITOR, then reads and discards, counting
/// lines.
struct Monitor {
    stop: Arc<AtomicBool>,
    lines: Arc<AtomicU64>,
    thread: Option<JoinHandle<()>>,
}

impl Monitor {
    fn attach(t: &Target) -> Result<Monitor, String> {
        let mut s = TcpStream::connect_timeout(&t.addr, Duration::from_secs(5))
            .map_err(|e| e.to_string())?;
        s.set_read_timeout(Some(Duration::from_millis(100)))
            .map_err(|e| e.to_string())?;
        s.write_all(b"MONITOR\r\n").map_err(|e| e.to_string())?;
        // Wait for +OK so the monitor is attached before the benchmark.
        let mut ok = [0u8; 5];
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut got = 0;
        while got < 5 {
            match s.read(&mut ok[got..]) {
                Ok(0) => return Err("connection closed".into()),
                Ok(k) => got += k,
                Err(_) if Instant::now() < deadline => continue,
                Err(e) => return Err(e.to_string()),
            }
        }
        if &ok != b"+OK\r\n" {
            return Err(format!(
                "MONITOR answered {:?}",
                String::from_utf8_lossy(&ok)
            ));
        }
        let stop = Arc::new(AtomicBool::new(false));
        let lines = Arc::new(AtomicU64::new(0));
        let (st, li) = (stop.clone(), lines.clone());
        let thread = thread::Builder::new()
            .name("lab-monitor".into())
            .spawn(move || {
                let mut buf = vec![0u8; 64 * 1024];
                while !st.load(Ordering::Relaxed) {
                    match s.read(&mut buf) {
                        Ok(0) => break,
                        Ok(k) => {
                            let nl = buf[..k].iter().filter(|b| **b == b'\n').count();
                            li.fetch_add(nl as u64, Ordering::Relaxed);
                        }
                        Err(e)
                            if matches!(
                                e.kind(),
                                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                            ) => {}
                        Err(_) => break,
                    }
                }
            })
            .map_err(|e| e.to_string())?;
        Ok(Monitor {
            stop,
            lines,
            thread: Some(thread),
        })
    }

    fn lines(&self) -> u64 {
        self.lines.load(Ordering::Relaxed)
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_benchmark_csv;

    #[test]
    fn benchmark_csv_is_parsed_by_test_name() {
        let out = "\"test\",\"rps\",\"avg_latency_ms\"\n\"SET\",\"53219.80\",\"0.634\"\n\"HSET\",\"1000.5\",\"1\"\n";
        assert_eq!(parse_benchmark_csv(out, "set"), Some(53219.80));
        assert_eq!(parse_benchmark_csv(out, "hset"), Some(1000.5));
        assert_eq!(parse_benchmark_csv(out, "get"), None);
        assert_eq!(parse_benchmark_csv("\"test\",\"rps\"\n", "set"), None);
    }
}
