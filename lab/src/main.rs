//! `redis-lite-lab`: run the seed experiments with one command.
//!
//!     cargo run --release -p lab -- all                  # on redis-lite
//!     cargo run --release -p lab -- all --compare --svg out/
//!     redis-lite-lab probe --target 127.0.0.1:6379 --force-flush

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand};
use serde_json::json;

use lab::cleanup;
use lab::exp::{self, Ctx, ExpOutput};
use lab::report::{self, Table};
use lab::target::{self, Target};
use lab::trace;

#[derive(Parser)]
#[command(
    name = "redis-lite-lab",
    version,
    about = "The five seed experiments on redis-lite (and a real Redis with --compare): \
             who waited for whom, in tables and pictures"
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,

    /// Measure this running server instead of starting redis-lite (the lab
    /// wipes it: refused when it holds keys, unless --force-flush)
    #[arg(long, global = true, value_name = "HOST:PORT")]
    target: Option<String>,

    /// Allow wiping a --target that holds keys
    #[arg(long, global = true)]
    force_flush: bool,

    /// Also start a real redis-server from PATH and run every step on both,
    /// interleaved, each row twice
    #[arg(long, global = true)]
    compare: bool,

    /// Write every figure and sample window as JSON
    #[arg(long, global = true, value_name = "FILE")]
    json: Option<PathBuf>,

    /// Write SVG plots into DIR
    #[arg(long, global = true, value_name = "DIR")]
    svg: Option<PathBuf>,

    /// 10x smaller data, shorter waits: a one-minute smoke run
    #[arg(long, global = true)]
    quick: bool,

    /// Round-trip time the built-in delaying proxy adds (roundtrips, scancount)
    #[arg(long, global = true, default_value_t = 0.2, value_name = "MS")]
    rtt_ms: f64,

    /// The redis-lite binary (default: next to this binary, built if missing)
    #[arg(long, global = true, value_name = "PATH")]
    redis_lite_bin: Option<PathBuf>,

    /// Record a loop trace around each experiment into DIR (needs the
    /// server's flight recorder; reported as not available otherwise)
    #[arg(long, global = true, value_name = "DIR")]
    trace: Option<PathBuf>,
}

#[derive(Subcommand, Clone, Copy, PartialEq, Eq)]
enum Cmd {
    /// E1 (post 000): KEYS, DEL vs UNLINK, SCAN (and a BGSAVE fork) seen by a GET-every-1ms victim
    Probe,
    /// E2 (post 001): four victims for the whole run, per-condition p50/p99/max
    Victims,
    /// E3 (post 002): redis-benchmark with and without MONITOR, and the server's CPU per command
    Monitor,
    /// E4 (post 003): 1000 GETs vs one MGET vs one pipeline, directly and through a delaying proxy
    Roundtrips {
        /// Add the post's cluster part (CROSSSLOT, hash tags, MGET split by slot)
        #[arg(long)]
        cluster: bool,
    },
    /// E5 (post 004): full HSCAN with COUNT 10/100/500, directly and through the proxy
    Scancount,
    /// All five, in order
    All,
    /// The worst blockers, live: redis-lite's DEBUG BLAME every second
    /// (default target 127.0.0.1:6379; never flushes it)
    Top {
        /// Leave after this many seconds (default: at Ctrl-C)
        #[arg(long, value_name = "N")]
        seconds: Option<u64>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Cmd::Top { seconds } = cli.command {
        return top(cli.target.as_deref(), seconds);
    }
    cleanup::install();
    let result = run(cli);
    if cleanup::interrupted() {
        // The handler is cleaning up and will exit with 130.
        loop {
            std::thread::sleep(std::time::Duration::from_secs(1));
        }
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("redis-lite-lab: {e}");
            cleanup::run();
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<(), String> {
    if !(cli.rtt_ms >= 0.0 && cli.rtt_ms <= 10_000.0) {
        return Err(format!(
            "--rtt-ms {}: must be between 0 and 10000",
            cli.rtt_ms
        ));
    }
    let started = Instant::now();
    let mut targets = Vec::new();
    match &cli.target {
        Some(hp) => targets.push(Target::external(hp, cli.force_flush)?),
        None => {
            let bin = target::locate_redis_lite(cli.redis_lite_bin.as_deref())?;
            println!("redis-lite: {}", bin.display());
            targets.push(Target::start_redis_lite(&bin)?);
        }
    }
    if cli.compare {
        targets.push(Target::start_redis_server()?);
    }
    for t in &targets {
        println!(
            "{}: {} ({})",
            t.label,
            t.addr,
            if t.started {
                "started by the lab, stopped at the end"
            } else {
                "your server: keys flushed and config restored at the end"
            }
        );
    }
    if let Some(d) = &cli.svg {
        std::fs::create_dir_all(d).map_err(|e| format!("--svg {}: {e}", d.display()))?;
    }
    let cluster = matches!(cli.command, Cmd::Roundtrips { cluster: true });
    let mut ctx = Ctx {
        targets,
        quick: cli.quick,
        svg_dir: cli.svg.clone(),
        rtt_ms: cli.rtt_ms,
        cluster,
        trace_dir: cli.trace.clone(),
    };
    let which: Vec<&str> = match cli.command {
        Cmd::Probe => vec!["probe"],
        Cmd::Victims => vec!["victims"],
        Cmd::Monitor => vec!["monitor"],
        Cmd::Roundtrips { .. } => vec!["roundtrips"],
        Cmd::Scancount => vec!["scancount"],
        Cmd::All => vec!["probe", "victims", "monitor", "roundtrips", "scancount"],
        Cmd::Top { .. } => unreachable!("top runs before any server is started"),
    };
    if let Some(d) = &cli.trace {
        std::fs::create_dir_all(d).map_err(|e| format!("--trace {}: {e}", d.display()))?;
    }
    let mut outputs: Vec<ExpOutput> = Vec::new();
    let mut timings = Vec::new();
    for name in which {
        let t0 = Instant::now();
        let recording = trace::begin(&ctx);
        let mut out = match name {
            "probe" => exp::probe::run(&mut ctx),
            "victims" => exp::victims::run(&mut ctx),
            "monitor" => exp::monitor::run(&mut ctx),
            "roundtrips" => exp::roundtrips::run(&mut ctx),
            _ => exp::scancount::run(&mut ctx),
        };
        if ctx.trace_dir.is_some() {
            let (summary, svgs) = trace::end(&ctx, name, &recording);
            if let Some(obj) = out.json.as_object_mut() {
                obj.insert("trace".to_string(), summary);
            }
            out.svgs.extend(svgs);
        }
        let secs = t0.elapsed().as_secs_f64();
        println!("  ({name} took {secs:.0} s)");
        timings.push((name.to_string(), secs));
        outputs.push(out);
        // Leave the servers empty between experiments.
        for t in &ctx.targets {
            if let Ok(mut con) = t.connect() {
                let _ = exp::flushall(&mut con);
            }
        }
    }

    if outputs.len() > 1 {
        print_summary(&ctx, &outputs);
    }
    let total = started.elapsed().as_secs_f64();
    println!("\nlab finished in {total:.0} s");

    if let Some(path) = &cli.json {
        let doc = json!({
            "lab": "redis-lite-lab",
            "version": env!("CARGO_PKG_VERSION"),
            "args": std::env::args().collect::<Vec<_>>(),
            "quick": cli.quick,
            "rtt_ms": cli.rtt_ms,
            "servers": ctx.targets.iter().map(|t| json!({
                "label": t.label,
                "addr": t.addr.to_string(),
                "started_by_lab": t.started,
            })).collect::<Vec<_>>(),
            "experiments": outputs.iter().map(|o| json!({
                "name": o.name,
                "result": o.json,
                "svgs": o.svgs.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "lessons": outputs.iter().flat_map(|o| o.lessons.iter().map(|l| l.to_json())).collect::<Vec<_>>(),
            "timings_s": timings.iter().map(|(n, s)| json!({ "experiment": n, "seconds": s })).collect::<Vec<_>>(),
            "total_s": total,
        });
        let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
        std::fs::write(path, text).map_err(|e| format!("--json {}: {e}", path.display()))?;
        println!("json: {}", path.display());
    }
    for t in &mut ctx.targets {
        t.finish();
    }
    Ok(())
}

/// The headline of every lesson, one line each.
fn print_summary(ctx: &Ctx, outputs: &[ExpOutput]) {
    let labels = ctx.labels();
    let mut headers: Vec<&str> = vec!["experiment", "lesson ratio"];
    for l in &labels {
        headers.push(l.as_str());
    }
    headers.push("holds");
    let mut t = Table::new("summary: the ratio that carries each lesson", &headers);
    for o in outputs {
        for l in &o.lessons {
            let mut row = vec![o.name.clone(), l.ratio_name.clone()];
            let mut verdicts = Vec::new();
            for lab in &labels {
                let v = l
                    .values
                    .iter()
                    .find(|(x, _)| x == lab)
                    .and_then(|(_, v)| *v);
                row.push(report::fmt_ratio(v));
                verdicts.push(match l.holds_on(lab) {
                    Some(true) => "yes",
                    Some(false) => "NO",
                    None => "?",
                });
            }
            row.push(verdicts.join("/"));
            t.row(row);
        }
    }
    t.print();
}

/// `top`: no server is started and nothing is flushed; Ctrl-C leaves.
fn top(target: Option<&str>, seconds: Option<u64>) -> ExitCode {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    if let Err(e) = ctrlc::set_handler(move || flag.store(true, Ordering::Relaxed)) {
        eprintln!("redis-lite-lab: cannot catch Ctrl-C: {e}");
    }
    let addr = target.unwrap_or("127.0.0.1:6379");
    match lab::top::run(addr, seconds, &stop) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("redis-lite-lab top: {e}");
            ExitCode::from(2)
        }
    }
}
