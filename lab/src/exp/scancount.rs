//! E5 SCAN COUNT (post 004): a full `HSCAN key cursor COUNT n` of a large
//! hashtable-encoded hash (default 20,000 fields) with COUNT 10, 100 and
//! 500: how many calls, how long in total, and the slowest single call;
//! directly and through the delaying proxy.
//!
//! Too small a COUNT multiplies round trips; too large a COUNT makes each
//! call (which blocks everybody) longer. MATCH filters after the fetch: it
//! does not reduce the calls, as the glob table shows.

use std::time::{Duration, Instant};

use serde_json::json;

use super::{Ctx, ExpOutput};
use crate::exp;
use crate::plot::{self, LineSeriesData};
use crate::proxy::DelayProxy;
use crate::report::{self, fmt_ms, Direction, Lesson, Table};
use crate::stats;

const COUNTS: [usize; 3] = [10, 100, 500];
/// The post's glob patterns, over fields `field:0..N`.
const PATTERNS: [&str; 4] = ["field:*", "field:1?", "field:[abc]*", "field:[1-3]"];

#[derive(Clone, Debug, serde::Serialize)]
struct Row {
    server: String,
    path: String,
    count: usize,
    calls: u64,
    fields: u64,
    runs_ms: Vec<f64>,
    median_ms: f64,
    slowest_call_ms: f64,
    /// Server-side time per HSCAN call (INFO commandstats usec_per_call):
    /// how long each call held the loop, free of network noise.
    server_us_per_call: Option<f64>,
}

pub fn run(ctx: &mut Ctx) -> ExpOutput {
    report::print_banner(
        "scancount (E5, post 004)",
        "a full HSCAN with COUNT 10 / 100 / 500, directly and through the delaying proxy",
    );
    let ids = exp::identities(ctx);
    let n = ctx.size(20_000);
    let reps = 3;
    let one_way = Duration::from_secs_f64(ctx.rtt_ms / 2000.0);
    let mut proxies: Vec<Option<DelayProxy>> = Vec::new();
    let mut encodings = Vec::new();
    for t in &ctx.targets {
        let setup = (|| -> Result<DelayProxy, String> {
            let mut con = t.connect()?;
            exp::flushall(&mut con)?;
            let mut i = 0;
            while i < n {
                let mut cmd = redis::cmd("HSET");
                cmd.arg("big:hash");
                for j in i..(i + 1000).min(n) {
                    cmd.arg(format!("field:{j}")).arg(format!("value:{j}"));
                }
                cmd.query::<()>(&mut con)
                    .map_err(|e| format!("HSET: {e}"))?;
                i += 1000;
            }
            let enc = exp::encoding(&mut con, "big:hash");
            println!(
                "  [{}] big:hash: {n} fields, OBJECT ENCODING {enc}",
                t.label
            );
            encodings.push(json!({ "server": t.label, "encoding": enc }));
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

    let mut rows: Vec<Row> = Vec::new();
    for path in ["direct", "proxy"] {
        for count in COUNTS {
            for (ti, t) in ctx.targets.iter().enumerate() {
                let Some(p) = &proxies[ti] else { continue };
                let url = if path == "direct" {
                    t.url()
                } else {
                    format!("redis://{}/", p.addr())
                };
                let mut runs = Vec::new();
                let mut last = None;
                let mut admin = t.connect().ok();
                if let Some(a) = admin.as_mut() {
                    let _ = redis::cmd("CONFIG")
                        .arg("RESETSTAT")
                        .query::<redis::Value>(a);
                }
                for _ in 0..reps {
                    match full_hscan(&url, count, None) {
                        Ok(r) => {
                            runs.push(r.total_ms);
                            last = Some(r);
                        }
                        Err(e) => {
                            report::note(&format!("{} {path} COUNT {count}: {e}", t.label));
                            break;
                        }
                    }
                }
                let Some(r) = last else { continue };
                let server_us = admin.as_mut().and_then(hscan_usec_per_call);
                let median = stats::median(&runs).unwrap_or(f64::NAN);
                println!(
                    "  [{}] {path} COUNT {count}: {} calls, {} ms",
                    t.label,
                    r.calls,
                    fmt_ms(median)
                );
                rows.push(Row {
                    server: t.label.clone(),
                    path: path.into(),
                    count,
                    calls: r.calls,
                    fields: r.fields,
                    runs_ms: runs,
                    median_ms: median,
                    slowest_call_ms: r.slowest_ms,
                    server_us_per_call: server_us,
                });
            }
        }
    }
    let mut table = Table::new(
        &format!(
            "scancount: full HSCAN of {n} fields (median of {reps}), directly and through +{} ms",
            ctx.rtt_ms
        ),
        &[
            "path",
            "COUNT",
            "server",
            "calls",
            "fields/call",
            "total ms",
            "slowest call ms",
            "server us/call",
        ],
    );
    for r in &rows {
        table.row(vec![
            r.path.clone(),
            r.count.to_string(),
            r.server.clone(),
            r.calls.to_string(),
            format!("{:.1}", r.fields as f64 / r.calls.max(1) as f64),
            fmt_ms(r.median_ms),
            fmt_ms(r.slowest_call_ms),
            r.server_us_per_call
                .map(|u| format!("{u:.1}"))
                .unwrap_or_else(|| "-".into()),
        ]);
    }
    table.print();
    println!("  (server us/call: INFO commandstats usec_per_call of HSCAN, how long each call held the loop)");

    // MATCH: the same calls, fewer fields back.
    let mut globs = Table::new(
        "scancount: MATCH filters after the fetch (COUNT 500, direct): same calls, fewer fields",
        &["MATCH", "server", "calls", "fields matched"],
    );
    let mut glob_json = Vec::new();
    for pat in PATTERNS {
        for t in &ctx.targets {
            match full_hscan(&t.url(), 500, Some(pat)) {
                Ok(r) => {
                    globs.row(vec![
                        pat.into(),
                        t.label.clone(),
                        r.calls.to_string(),
                        r.fields.to_string(),
                    ]);
                    glob_json.push(json!({ "pattern": pat, "server": t.label, "calls": r.calls, "fields": r.fields }));
                }
                Err(e) => report::note(&format!("{} MATCH {pat}: {e}", t.label)),
            }
        }
    }
    globs.print();

    let get = |server: &str, path: &str, count: usize| {
        rows.iter()
            .find(|r| r.server == server && r.path == path && r.count == count)
    };
    let mut l_proxy = Lesson::new(
        "scancount.count10_vs_count500",
        "too small a COUNT multiplies the round trips",
        "COUNT 10 / COUNT 500 total time, through the proxy",
        Direction::Above(1.0),
    );
    let mut l_direct = Lesson::new(
        "scancount.count10_vs_count500_direct",
        "even on loopback",
        "COUNT 10 / COUNT 500 total time, direct",
        Direction::Above(1.0),
    );
    let mut l_block = Lesson::new(
        "scancount.per_call_block",
        "a larger COUNT holds the loop longer per call",
        "server time per call, COUNT 500 / COUNT 10",
        Direction::Above(1.0),
    );
    for t in &ctx.targets {
        let l = t.label.as_str();
        let tot = |p: &str, c: usize| get(l, p, c).map(|r| r.median_ms);
        l_proxy = l_proxy.value(l, stats::ratio(tot("proxy", 10), tot("proxy", 500)));
        l_direct = l_direct.value(l, stats::ratio(tot("direct", 10), tot("direct", 500)));
        l_block = l_block.value(
            l,
            stats::ratio(
                get(l, "direct", 500).and_then(|r| r.server_us_per_call),
                get(l, "direct", 10).and_then(|r| r.server_us_per_call),
            ),
        );
    }
    let lessons = vec![l_proxy, l_direct, l_block];
    for l in &lessons {
        l.print();
    }

    let mut svgs = Vec::new();
    let series: Vec<LineSeriesData> = ctx
        .targets
        .iter()
        .flat_map(|t| {
            ["direct", "proxy"]
                .into_iter()
                .map(move |p| (t.label.clone(), p))
        })
        .map(|(l, p)| LineSeriesData {
            name: format!("{l} {p}"),
            points: COUNTS
                .iter()
                .filter_map(|c| get(&l, p, *c).map(|r| (*c as f64, r.median_ms)))
                .collect(),
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    if let Some(p) = exp::write_svg(ctx.svg_path("scancount.svg"), |p| {
        plot::lines(
            p,
            &format!("scancount (E5): full HSCAN of {n} fields, total time by COUNT"),
            "COUNT (log)",
            "total time of the full scan (ms, log)",
            &series,
        )
    }) {
        svgs.push(p);
    }
    drop(proxies);

    ExpOutput {
        name: "scancount".into(),
        json: json!({
            "servers": ids,
            "fields": n,
            "repetitions": reps,
            "rtt_ms_asked": ctx.rtt_ms,
            "encodings": encodings,
            "rows": rows,
            "match": glob_json,
            "table": table.to_json(),
            "lessons": lessons.iter().map(Lesson::to_json).collect::<Vec<_>>(),
        }),
        lessons,
        svgs,
    }
}

/// usec_per_call of cmdstat_hscan in INFO commandstats.
fn hscan_usec_per_call(con: &mut redis::Connection) -> Option<f64> {
    let info = crate::target::info_section(con, "commandstats").ok()?;
    let line = crate::target::info_field(&info, "cmdstat_hscan")?;
    line.split(',')
        .find_map(|kv| kv.strip_prefix("usec_per_call="))
        .and_then(|v| v.parse().ok())
}

struct ScanResult {
    calls: u64,
    fields: u64,
    total_ms: f64,
    slowest_ms: f64,
}

/// HSCAN big:hash from cursor 0 until 0 again.
fn full_hscan(url: &str, count: usize, pattern: Option<&str>) -> Result<ScanResult, String> {
    let client = redis::Client::open(url).map_err(|e| e.to_string())?;
    let mut con = client
        .get_connection_with_timeout(Duration::from_secs(5))
        .map_err(|e| e.to_string())?;
    let t0 = Instant::now();
    let mut cursor = 0u64;
    let (mut calls, mut fields) = (0u64, 0u64);
    let mut slowest = Duration::ZERO;
    loop {
        let mut cmd = redis::cmd("HSCAN");
        cmd.arg("big:hash").arg(cursor);
        if let Some(p) = pattern {
            cmd.arg("MATCH").arg(p);
        }
        cmd.arg("COUNT").arg(count);
        let c0 = Instant::now();
        let (next, items): (u64, Vec<Vec<u8>>) = cmd.query(&mut con).map_err(|e| e.to_string())?;
        slowest = slowest.max(c0.elapsed());
        calls += 1;
        fields += items.len() as u64 / 2;
        cursor = next;
        if cursor == 0 {
            break;
        }
    }
    Ok(ScanResult {
        calls,
        fields,
        total_ms: t0.elapsed().as_secs_f64() * 1000.0,
        slowest_ms: slowest.as_secs_f64() * 1000.0,
    })
}
