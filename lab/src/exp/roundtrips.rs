//! E4 round trips (post 003): 1000 cached keys read by 1000 sequential
//! GETs, by one MGET, and by one pipeline of 1000 GETs; directly on
//! loopback and through the built-in delaying proxy (`--rtt-ms`, default
//! 0.2 ms), which stands in for the post's netem container.
//!
//! The cost is round trips, not Redis: the server runs 1000 GETs for the
//! loop and for the pipeline alike (its `total_commands_processed` says so),
//! but the loop waits for 1000 round trips and the pipeline for one.
//!
//! `--cluster` adds the post's cluster part when the servers have cluster
//! mode (detected with CLUSTER INFO; reported plainly when absent).

use std::time::{Duration, Instant};

use serde_json::json;

use super::{Ctx, ExpOutput};
use crate::exp;
use crate::plot::{self, BarGroup};
use crate::proxy::DelayProxy;
use crate::report::{self, fmt_ms, Direction, Lesson, Table};
use crate::stats;
use crate::target::{self, Target};

const METHODS: [&str; 3] = ["GET loop", "MGET", "pipeline"];

#[derive(Clone, Debug, serde::Serialize)]
struct Row {
    server: String,
    path: String,
    method: String,
    round_trips: usize,
    /// Every repetition, in ms.
    runs_ms: Vec<f64>,
    median_ms: f64,
    /// Commands the server ran for one repetition.
    server_commands: Option<f64>,
}

pub fn run(ctx: &mut Ctx) -> ExpOutput {
    report::print_banner(
        "roundtrips (E4, post 003)",
        "1000 keys by 1000 GETs, one MGET, one pipeline; directly and through a delaying proxy",
    );
    let ids = exp::identities(ctx);
    let n = 1000;
    let reps = if ctx.quick { 3 } else { 7 };
    let one_way = Duration::from_secs_f64(ctx.rtt_ms / 2000.0);
    let mut rows: Vec<Row> = Vec::new();
    let mut rtts = Vec::new();
    let mut proxies: Vec<Option<DelayProxy>> = Vec::new();
    let keys: Vec<String> = (0..n).map(|i| format!("cache:{i}")).collect();
    for t in &ctx.targets {
        let setup = (|| -> Result<DelayProxy, String> {
            let mut con = t.connect()?;
            exp::flushall(&mut con)?;
            let mut cmd = redis::cmd("MSET");
            for k in &keys {
                cmd.arg(k).arg(format!("{k}:{}", "v".repeat(48)));
            }
            cmd.query::<()>(&mut con)
                .map_err(|e| format!("MSET: {e}"))?;
            DelayProxy::start(t.addr, one_way).map_err(|e| format!("proxy: {e}"))
        })();
        match setup {
            Ok(p) => proxies.push(Some(p)),
            Err(e) => {
                report::note(&format!("{}: {e}", t.label));
                proxies.push(None);
            }
        }
    }
    // The round trip each path really has (PING, median of 50).
    for (ti, t) in ctx.targets.iter().enumerate() {
        let Some(p) = &proxies[ti] else { continue };
        let direct = ping_rtt(&t.url());
        let proxied = ping_rtt(&format!("redis://{}/", p.addr()));
        println!(
            "  [{}] PING round trip: direct {} ms, through the proxy {} ms (asked for +{} ms)",
            t.label,
            direct.map(fmt_ms).unwrap_or_else(|| "?".into()),
            proxied.map(fmt_ms).unwrap_or_else(|| "?".into()),
            ctx.rtt_ms
        );
        rtts.push(json!({ "server": t.label, "direct_ms": direct, "proxy_ms": proxied }));
    }

    let paths = ["direct", "proxy"];
    for path in paths {
        for method in METHODS {
            for (ti, t) in ctx.targets.iter().enumerate() {
                let Some(p) = &proxies[ti] else { continue };
                let url = if path == "direct" {
                    t.url()
                } else {
                    format!("redis://{}/", p.addr())
                };
                match measure(t, &url, method, &keys, reps) {
                    Ok((runs, cmds)) => {
                        let median = stats::median(&runs).unwrap_or(f64::NAN);
                        println!("  [{}] {path} {method}: {} ms", t.label, fmt_ms(median));
                        rows.push(Row {
                            server: t.label.clone(),
                            path: path.into(),
                            method: method.into(),
                            round_trips: if method == "GET loop" { n } else { 1 },
                            runs_ms: runs,
                            median_ms: median,
                            server_commands: cmds,
                        });
                    }
                    Err(e) => report::note(&format!("{} {path} {method}: {e}", t.label)),
                }
            }
        }
    }

    let mut table = Table::new(
        &format!("roundtrips: reading {n} keys (median of {reps}), directly and through +{} ms of round trip", ctx.rtt_ms),
        &["path", "method", "server", "round trips", "server commands", "median ms", "us per key"],
    );
    for r in &rows {
        table.row(vec![
            r.path.clone(),
            r.method.clone(),
            r.server.clone(),
            r.round_trips.to_string(),
            r.server_commands
                .map(|c| format!("{c:.0}"))
                .unwrap_or_else(|| "-".into()),
            fmt_ms(r.median_ms),
            format!("{:.2}", r.median_ms * 1000.0 / n as f64),
        ]);
    }
    table.print();

    let get = |server: &str, path: &str, method: &str| {
        rows.iter()
            .find(|r| r.server == server && r.path == path && r.method == method)
            .map(|r| r.median_ms)
    };
    let mut l_proxy = Lesson::new(
        "roundtrips.get_loop_vs_mget",
        "the cost is round trips, not Redis: 1000 GETs wait for 1000 round trips, one MGET for one",
        "GET loop / MGET time, through the proxy",
        Direction::Above(1.0),
    );
    let mut l_direct = Lesson::new(
        "roundtrips.get_loop_vs_mget_direct",
        "even on loopback, where a round trip is tens of microseconds",
        "GET loop / MGET time, direct",
        Direction::Above(1.0),
    );
    let mut l_pipe = Lesson::new(
        "roundtrips.pipeline_vs_loop",
        "a pipeline also pays one round trip, though the server still runs 1000 GETs",
        "pipeline / GET loop time, through the proxy",
        Direction::Below(1.0),
    );
    for t in &ctx.targets {
        let l = t.label.as_str();
        l_proxy = l_proxy.value(
            l,
            stats::ratio(get(l, "proxy", "GET loop"), get(l, "proxy", "MGET")),
        );
        l_direct = l_direct.value(
            l,
            stats::ratio(get(l, "direct", "GET loop"), get(l, "direct", "MGET")),
        );
        l_pipe = l_pipe.value(
            l,
            stats::ratio(get(l, "proxy", "pipeline"), get(l, "proxy", "GET loop")),
        );
    }
    let mut lessons = vec![l_proxy, l_direct, l_pipe];
    for l in &lessons {
        l.print();
    }

    // The cluster part.
    let cluster = cluster_part(ctx);
    if let Some(l) = cluster.1 {
        l.print();
        lessons.push(l);
    }

    let mut svgs = Vec::new();
    let groups: Vec<BarGroup> = paths
        .iter()
        .flat_map(|path| METHODS.iter().map(move |m| (path, m)))
        .map(|(path, m)| BarGroup {
            name: format!("{m} ({path})"),
            bars: ctx
                .targets
                .iter()
                .map(|t| (t.label.clone(), get(&t.label, path, m).unwrap_or(f64::NAN)))
                .collect(),
        })
        .collect();
    if let Some(p) = exp::write_svg(ctx.svg_path("roundtrips.svg"), |p| {
        plot::bars(
            p,
            &format!(
                "roundtrips (E4): reading 1000 keys, directly and with +{} ms round trip",
                ctx.rtt_ms
            ),
            "time to read 1000 keys (ms, log)",
            true,
            &groups,
        )
    }) {
        svgs.push(p);
    }
    drop(proxies);

    ExpOutput {
        name: "roundtrips".into(),
        json: json!({
            "servers": ids,
            "keys": n,
            "repetitions": reps,
            "rtt_ms_asked": ctx.rtt_ms,
            "rtt_measured": rtts,
            "rows": rows,
            "cluster": cluster.0,
            "table": table.to_json(),
            "lessons": lessons.iter().map(Lesson::to_json).collect::<Vec<_>>(),
        }),
        lessons,
        svgs,
    }
}

/// Median PING round trip over a fresh connection, in ms.
fn ping_rtt(url: &str) -> Option<f64> {
    let client = redis::Client::open(url).ok()?;
    let mut con = client
        .get_connection_with_timeout(Duration::from_secs(5))
        .ok()?;
    let mut v = Vec::new();
    for _ in 0..50 {
        let t0 = Instant::now();
        redis::cmd("PING").query::<String>(&mut con).ok()?;
        v.push(t0.elapsed().as_secs_f64() * 1000.0);
    }
    stats::median(&v)
}

/// `reps` repetitions of one method over `url`; returns the times (ms) and
/// how many commands the server ran for one repetition.
fn measure(
    t: &Target,
    url: &str,
    method: &str,
    keys: &[String],
    reps: usize,
) -> Result<(Vec<f64>, Option<f64>), String> {
    let client = redis::Client::open(url).map_err(|e| e.to_string())?;
    let mut con = client
        .get_connection_with_timeout(Duration::from_secs(5))
        .map_err(|e| e.to_string())?;
    let mut counters = t.connect()?;
    let commands = |c: &mut redis::Connection| {
        target::info_section(c, "stats")
            .ok()
            .and_then(|s| target::info_f64(&s, "total_commands_processed"))
    };
    let mut runs = Vec::new();
    let mut per_rep = None;
    for rep in 0..reps {
        let c0 = commands(&mut counters);
        let t0 = Instant::now();
        let got: usize = match method {
            "GET loop" => {
                let mut found = 0;
                for k in keys {
                    let v: Option<Vec<u8>> = redis::cmd("GET")
                        .arg(k)
                        .query(&mut con)
                        .map_err(|e| e.to_string())?;
                    found += v.is_some() as usize;
                }
                found
            }
            "MGET" => {
                let v: Vec<Option<Vec<u8>>> = redis::cmd("MGET")
                    .arg(keys)
                    .query(&mut con)
                    .map_err(|e| e.to_string())?;
                v.iter().filter(|x| x.is_some()).count()
            }
            _ => {
                let mut pipe = redis::pipe();
                for k in keys {
                    pipe.cmd("GET").arg(k);
                }
                let v: Vec<Option<Vec<u8>>> = pipe.query(&mut con).map_err(|e| e.to_string())?;
                v.iter().filter(|x| x.is_some()).count()
            }
        };
        runs.push(t0.elapsed().as_secs_f64() * 1000.0);
        if got != keys.len() {
            return Err(format!("{method} found {got} of {} keys", keys.len()));
        }
        if rep == 0 {
            if let (Some(a), Some(b)) = (c0, commands(&mut counters)) {
                // Minus the INFO that read the counter.
                per_rep = Some(b - a - 1.0);
            }
        }
    }
    Ok((runs, per_rep))
}

/// `--cluster`: the post's cluster part needs servers in cluster mode.
/// Detects CLUSTER INFO on each server and says plainly what is missing.
fn cluster_part(ctx: &Ctx) -> (serde_json::Value, Option<Lesson>) {
    if !ctx.cluster {
        return (serde_json::Value::Null, None);
    }
    let mut out = Vec::new();
    println!("\n  cluster part (--cluster):");
    for t in &ctx.targets {
        let status = match t.connect() {
            Ok(mut con) => match redis::cmd("CLUSTER").arg("INFO").query::<String>(&mut con) {
                Ok(info) => match target::info_field(&info, "cluster_state") {
                    Some(s) => format!("cluster mode present (cluster_state {s}) on this node; the lab does not build a cluster from it yet"),
                    None => "CLUSTER INFO answered without cluster_state".into(),
                },
                Err(e) if target::is_unknown_command(&e) => format!(
                    "cluster mode is not supported by this server ({}): CROSSSLOT, hash tags and MOVED need it (issue 15)",
                    target::short_err(&e)
                ),
                Err(e) => format!("cluster mode is off on this server ({})", target::short_err(&e)),
            },
            Err(e) => e,
        };
        println!("    {}: {status}", t.label);
        out.push(json!({ "server": t.label, "status": status }));
    }
    println!(
        "    (what it would show: keys hash to CRC16(key) % 16384 slots; MGET over keys of different \
         slots gets \"CROSSSLOT Keys in request don't hash to the same slot\"; a hash tag {{user:1000}} \
         puts keys in one slot; a cluster client splits an MGET by slot and merges the replies)"
    );
    (serde_json::Value::Array(out), None)
}
