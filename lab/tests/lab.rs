//! Integration tests of `redis-lite-lab`: each runs one `--quick`
//! experiment against redis-lite (and `all --quick --compare` against
//! redis-lite and a real redis-server when one is installed) and checks the
//! *shape* of what it reports: every step and condition present on every
//! server, counts consistent with each other, JSON that holds every figure,
//! SVG files that parse. Never timings: those belong to the lab's output.
//!
//! Missing redis-server: the `--compare` test prints `SKIPPED: ...` and
//! passes, except under `CI=true` where it fails (as tests/common does).

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

const LAB: &str = env!("CARGO_BIN_EXE_redis-lite-lab");

fn in_ci() -> bool {
    std::env::var("CI").map(|v| v == "true").unwrap_or(false)
}

fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The redis-lite built next to the lab (same target dir). `cargo test
/// --workspace` builds it; `cargo test -p lab` alone may not.
fn redis_lite_bin() -> Option<PathBuf> {
    let dir = Path::new(LAB).parent()?;
    let p = dir.join("redis-lite");
    if p.is_file() {
        return Some(p);
    }
    let msg = format!(
        "{} not built (run `cargo build --release` or `cargo test --workspace`)",
        p.display()
    );
    if in_ci() {
        panic!("CI=true and {msg}");
    }
    eprintln!("SKIPPED: {msg}");
    None
}

fn require_redis_server() -> bool {
    if which("redis-server").is_some() {
        return true;
    }
    let msg = "redis-server not found (install redis-server redis-tools to run --compare)";
    if in_ci() {
        panic!("CI=true and {msg}: CI must run this test, not skip it");
    }
    eprintln!("SKIPPED: {msg}");
    false
}

/// A fresh temporary directory for one test's JSON and SVGs.
fn temp_dir(tag: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let d = std::env::temp_dir().join(format!(
        "redis-lite-lab-test-{}-{}-{tag}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Run the lab with `args` plus `--redis-lite-bin`, `--json`, `--svg`.
fn run_lab(bin: &Path, dir: &Path, args: &[&str]) -> (Output, Value) {
    let json = dir.join("out.json");
    let out = Command::new(LAB)
        .args(args)
        .arg("--redis-lite-bin")
        .arg(bin)
        .arg("--json")
        .arg(&json)
        .arg("--svg")
        .arg(dir)
        .stdin(Stdio::null())
        .output()
        .expect("run redis-lite-lab");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "lab {args:?} failed: {}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    let doc: Value =
        serde_json::from_slice(&std::fs::read(&json).expect("json written")).expect("valid JSON");
    (out, doc)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The result object of experiment `name`.
fn experiment<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["experiments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == name)
        .unwrap_or_else(|| panic!("experiment {name} missing"))
        .get("result")
        .unwrap()
}

/// Every SVG the experiment reported exists and is well-formed XML whose
/// root is <svg> with some drawing in it.
fn check_svgs(doc: &Value, name: &str, expected: &[&str]) {
    let e = doc["experiments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == name)
        .unwrap();
    let svgs: Vec<String> = e["svgs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    for want in expected {
        assert!(
            svgs.iter().any(|s| s.ends_with(want)),
            "{name}: {want} not written ({svgs:?})"
        );
    }
    for s in &svgs {
        let text = std::fs::read_to_string(s).unwrap();
        let xml = roxmltree::Document::parse(&text)
            .unwrap_or_else(|e| panic!("{s}: not well-formed XML: {e}"));
        assert_eq!(xml.root_element().tag_name().name(), "svg", "{s}");
        let shapes = xml
            .descendants()
            .filter(|n| {
                matches!(
                    n.tag_name().name(),
                    "rect" | "polyline" | "line" | "circle" | "path"
                )
            })
            .count();
        let texts = xml
            .descendants()
            .filter(|n| n.tag_name().name() == "text")
            .count();
        assert!(
            shapes > 5 && texts > 3,
            "{s}: {shapes} shapes, {texts} texts"
        );
    }
}

/// `--trace`: DIR/<experiment>-<server>.json is trace-event JSON (every
/// event has ph/ts/pid/tid) with the main-loop and bio_lazy_free tracks and
/// command slices; the stall timeline SVG beside it parses and draws.
fn check_trace(dir: &Path, svg_dir: &Path, experiment: &str, server: &str) {
    let path = dir.join(format!("{experiment}-{server}.json"));
    let text = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let json: Value = serde_json::from_slice(&text).expect("trace is JSON");
    let events = json["traceEvents"].as_array().expect("traceEvents");
    for e in events {
        for field in ["ph", "ts", "pid", "tid"] {
            assert!(e.get(field).is_some(), "event without {field}: {e}");
        }
    }
    let threads: Vec<&str> = events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .filter_map(|e| e["args"]["name"].as_str())
        .collect();
    assert!(threads.contains(&"main (event loop)"), "{threads:?}");
    assert!(threads.contains(&"bio_lazy_free"), "{threads:?}");
    let commands = events
        .iter()
        .filter(|e| e["ph"] == "X" && e["cat"] == "command")
        .count();
    assert!(commands > 10, "{commands} command slices");
    // The lab's own parser reads it too, and finds a stall to draw.
    let trace = lab::trace::parse(&text).unwrap();
    assert!(!lab::trace::biggest_stalls(&trace, 3).is_empty());
    let svg = svg_dir.join(format!("{experiment}-{server}-stalls.svg"));
    let svg_text =
        std::fs::read_to_string(&svg).unwrap_or_else(|e| panic!("{}: {e}", svg.display()));
    let xml = roxmltree::Document::parse(&svg_text).expect("stall SVG is XML");
    assert_eq!(xml.root_element().tag_name().name(), "svg");
    let texts: Vec<String> = xml
        .descendants()
        .filter(|n| n.tag_name().name() == "text")
        .filter_map(|n| n.text().map(|t| t.trim().to_string()))
        .collect();
    assert!(
        texts.iter().any(|t| t.contains("main (event loop)")),
        "{texts:?}"
    );
    assert!(texts.iter().any(|t| t == "bio_lazy_free"), "{texts:?}");
}

/// Each lesson has a ratio for each server named.
fn check_lessons(result: &Value, servers: &[&str], n: usize) {
    let lessons = result["lessons"].as_array().unwrap();
    assert_eq!(lessons.len(), n, "{lessons:?}");
    for l in lessons {
        let vals = l["values"].as_array().unwrap();
        for s in servers {
            let v = vals
                .iter()
                .find(|v| v["server"] == *s)
                .unwrap_or_else(|| panic!("{l}: no value for {s}"));
            assert!(v["ratio"].is_number(), "{l}: ratio for {s} not measured");
            assert!(v["holds"].is_boolean());
        }
    }
}

/// A victim summary is internally consistent.
fn check_summary(v: &Value, samples: Option<&Value>) {
    let count = v["count"].as_u64().unwrap();
    assert!(count > 0, "{v}");
    let (p50, p99, max) = (
        v["p50_ms"].as_f64().unwrap(),
        v["p99_ms"].as_f64().unwrap(),
        v["max_ms"].as_f64().unwrap(),
    );
    assert!(p50 <= p99 && p99 <= max * 1.001 + 0.001, "{v}");
    assert!(v["over_threshold"].as_u64().unwrap() <= count);
    if let Some(s) = samples {
        let s = s.as_array().unwrap();
        assert_eq!(
            s.len() as u64,
            count,
            "every sample of the window is in the JSON"
        );
        let json_max = s.iter().map(|p| p[1].as_f64().unwrap()).fold(0.0, f64::max);
        assert!(
            (json_max - max).abs() < 0.002,
            "max {max} vs samples {json_max}"
        );
    }
}

#[test]
fn probe_quick_reports_every_step_with_victim_samples() {
    let Some(bin) = redis_lite_bin() else { return };
    let dir = temp_dir("probe");
    let (out, doc) = run_lab(
        &bin,
        &dir,
        &["probe", "--quick", "--trace", dir.to_str().unwrap()],
    );
    let text = stdout(&out);
    for want in [
        "=== probe",
        "redis_version",
        "threads (/proc/PID/task/*/comm)",
        "victim GETs",
        "lesson:",
    ] {
        assert!(text.contains(want), "stdout lacks {want:?}:\n{text}");
    }
    check_trace(&dir, &dir, "probe", "redis-lite");
    assert!(text.contains("trace: "), "{text}");
    let r = experiment(&doc, "probe");
    let rows = r["rows"].as_array().unwrap();
    for step in [
        "PING",
        "KEYS nomatch*",
        "DEL big:set",
        "UNLINK big:set",
        "SCAN full iteration",
        "BGSAVE fork",
    ] {
        let row = rows
            .iter()
            .find(|x| x["step"].as_str().unwrap().starts_with(step) && x["server"] == "redis-lite")
            .unwrap_or_else(|| panic!("step {step} missing"));
        if step == "BGSAVE fork" && row["victim"].is_null() {
            // A server without BGSAVE says so instead of measuring.
            assert!(
                row["notes"].as_str().unwrap().contains("not supported"),
                "{row}"
            );
            continue;
        }
        check_summary(&row["victim"], Some(&row["samples_ms"]));
        assert!(row["blocker_ms"].as_f64().unwrap() >= 0.0);
    }
    let keys = rows
        .iter()
        .find(|x| x["step"].as_str().unwrap().starts_with("KEYS"))
        .unwrap();
    assert!(
        keys["slowlog_us"].is_u64(),
        "KEYS over 100k keys is in SLOWLOG (threshold 1 ms): {keys}"
    );
    let unlink = rows
        .iter()
        .find(|x| x["step"].as_str().unwrap().starts_with("UNLINK"))
        .unwrap();
    assert!(
        unlink["notes"]
            .as_str()
            .unwrap()
            .contains("lazyfreed_objects +1"),
        "{unlink}"
    );
    let del = rows
        .iter()
        .find(|x| x["step"].as_str().unwrap().starts_with("DEL"))
        .unwrap();
    assert!(
        del["notes"]
            .as_str()
            .unwrap()
            .contains("encoding hashtable"),
        "{del}"
    );
    check_lessons(r, &["redis-lite"], 3);
    assert_eq!(r["servers"]["redis-lite"]["config"]["hz"], "10");
    assert_eq!(
        r["servers"]["redis-lite"]["config"]["lazyfree-lazy-user-del"],
        "no"
    );
    check_svgs(
        &doc,
        "probe",
        &["probe_timeline.svg", "probe_victim_max.svg"],
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn victims_quick_tags_every_condition() {
    let Some(bin) = redis_lite_bin() else { return };
    let dir = temp_dir("victims");
    let (out, doc) = run_lab(&bin, &dir, &["victims", "--quick"]);
    assert!(stdout(&out).contains("p99/base"));
    let r = experiment(&doc, "victims");
    let rows = r["rows"].as_array().unwrap();
    let shorts = [
        "baseline",
        "KEYS",
        "SCAN",
        "LRANGE",
        "DEL list",
        "UNLINK list",
        "DEL set",
        "expire",
    ];
    assert_eq!(rows.len(), shorts.len());
    for s in shorts {
        let row = rows
            .iter()
            .find(|x| x["short"] == s)
            .unwrap_or_else(|| panic!("condition {s} missing"));
        check_summary(&row["victim"], Some(&row["samples_ms"]));
        if s == "baseline" {
            assert_eq!(row["p99_over_baseline"].as_f64(), Some(1.0));
        }
    }
    // Windows do not overlap and come in order.
    let mut last_end = 0;
    for row in rows {
        let w = &row["window_us"];
        let (a, b) = (
            w["start_us"].as_u64().unwrap(),
            w["end_us"].as_u64().unwrap(),
        );
        assert!(a >= last_end && b >= a, "{w}");
        last_end = b;
    }
    let expire = rows.iter().find(|x| x["short"] == "expire").unwrap();
    assert!(
        expire["notes"]
            .as_str()
            .unwrap()
            .contains("removed 25000 keys"),
        "{expire}"
    );
    let enc = &r["encodings"][0];
    assert_eq!(enc["big:list"], "quicklist");
    assert_eq!(enc["big:set"], "hashtable");
    check_lessons(r, &["redis-lite"], 3);
    check_svgs(
        &doc,
        "victims",
        &[
            "victims_timeline.svg",
            "victims_del_blocker.svg",
            "victims_del_victim_max.svg",
        ],
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn monitor_quick_feeds_every_command_and_measures_cpu() {
    let Some(bin) = redis_lite_bin() else { return };
    let dir = temp_dir("monitor");
    let (_out, doc) = run_lab(&bin, &dir, &["monitor", "--quick"]);
    let r = experiment(&doc, "monitor");
    let runs = r["runs"].as_array().unwrap();
    // 2 pipelines x 6 slots (plain and monitor alternating) x 3 tests.
    assert_eq!(runs.len(), 36);
    for run in runs {
        let cmds = run["commands"].as_f64().unwrap();
        let n = if run["pipeline"] == 1 {
            5_000.0
        } else {
            20_000.0
        };
        assert!(cmds >= n, "every request ran: {run}");
        assert!(run["rps"].as_f64().unwrap() > 0.0);
        assert!(run["cpu_us_per_cmd"].as_f64().unwrap() > 0.0, "{run}");
        let lines = run["monitor_lines"].as_u64().unwrap();
        if run["monitor"] == true {
            assert!(lines as f64 >= n, "one monitor line per command: {run}");
        } else {
            assert_eq!(lines, 0);
        }
    }
    check_lessons(r, &["redis-lite"], 4);
    check_svgs(
        &doc,
        "monitor",
        &["monitor_throughput.svg", "monitor_cpu_per_command.svg"],
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn roundtrips_quick_counts_round_trips_and_server_commands() {
    let Some(bin) = redis_lite_bin() else { return };
    let dir = temp_dir("roundtrips");
    let (out, doc) = run_lab(
        &bin,
        &dir,
        &["roundtrips", "--cluster", "--quick", "--rtt-ms", "0.5"],
    );
    let r = experiment(&doc, "roundtrips");
    let rows = r["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 6, "2 paths x 3 methods");
    for row in rows {
        let (m, cmds) = (
            row["method"].as_str().unwrap(),
            row["server_commands"].as_f64().unwrap(),
        );
        match m {
            "GET loop" => assert_eq!((row["round_trips"].as_u64(), cmds), (Some(1000), 1000.0)),
            "MGET" => assert_eq!((row["round_trips"].as_u64(), cmds), (Some(1), 1.0)),
            _ => assert_eq!(
                (row["round_trips"].as_u64(), cmds),
                (Some(1), 1000.0),
                "a pipeline is still 1000 commands"
            ),
        }
        assert_eq!(row["runs_ms"].as_array().unwrap().len(), 3);
    }
    assert_eq!(r["rtt_ms_asked"].as_f64(), Some(0.5));
    let cluster = r["cluster"].as_array().unwrap();
    assert_eq!(cluster.len(), 1);
    assert!(stdout(&out).contains("cluster part (--cluster)"));
    check_lessons(r, &["redis-lite"], 3);
    check_svgs(&doc, "roundtrips", &["roundtrips.svg"]);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn scancount_quick_visits_every_field_at_each_count() {
    let Some(bin) = redis_lite_bin() else { return };
    let dir = temp_dir("scancount");
    let (_out, doc) = run_lab(&bin, &dir, &["scancount", "--quick"]);
    let r = experiment(&doc, "scancount");
    assert_eq!(r["encodings"][0]["encoding"], "hashtable");
    let rows = r["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 6, "2 paths x COUNT 10/100/500");
    let calls = |path: &str, c: u64| {
        rows.iter()
            .find(|x| x["path"] == path && x["count"] == c)
            .unwrap()["calls"]
            .as_u64()
            .unwrap()
    };
    for row in rows {
        assert_eq!(
            row["fields"].as_u64(),
            Some(2000),
            "a full scan sees every field: {row}"
        );
        assert!(row["server_us_per_call"].is_number(), "{row}");
    }
    for path in ["direct", "proxy"] {
        assert!(calls(path, 10) > calls(path, 100) && calls(path, 100) > calls(path, 500));
    }
    let matched = |pat: &str| {
        r["match"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["pattern"] == pat)
            .unwrap()["fields"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(matched("field:*"), 2000);
    assert_eq!(matched("field:1?"), 10);
    assert_eq!(matched("field:[abc]*"), 0);
    assert_eq!(matched("field:[1-3]"), 3);
    check_lessons(r, &["redis-lite"], 3);
    check_svgs(&doc, "scancount", &["scancount.svg"]);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn all_quick_compare_prints_every_row_for_both_servers() {
    let Some(bin) = redis_lite_bin() else { return };
    if !require_redis_server() {
        return;
    }
    let dir = temp_dir("compare");
    let trace_dir = dir.join("trace");
    let (out, doc) = run_lab(
        &bin,
        &dir,
        &[
            "all",
            "--quick",
            "--compare",
            "--trace",
            trace_dir.to_str().unwrap(),
        ],
    );
    let text = stdout(&out);
    // A trace per experiment from redis-lite; redis-server has no recorder
    // and says so.
    for name in ["probe", "victims", "monitor", "roundtrips", "scancount"] {
        check_trace(&trace_dir, &dir, name, "redis-lite");
        assert!(!trace_dir.join(format!("{name}-redis.json")).exists());
        assert_eq!(experiment(&doc, name)["trace"]["redis"]["recorder"], false);
    }
    assert!(
        text.contains("a real redis-server has none: no trace written for it"),
        "{text}"
    );
    assert!(
        text.contains("summary: the ratio that carries each lesson"),
        "{text}"
    );
    let servers = ["redis-lite", "redis"];
    for (name, rows_key, n_lessons) in [
        ("probe", "rows", 3),
        ("victims", "rows", 3),
        ("monitor", "runs", 4),
        ("roundtrips", "rows", 3),
        ("scancount", "rows", 3),
    ] {
        let r = experiment(&doc, name);
        let rows = r[rows_key].as_array().unwrap();
        let lite = rows.iter().filter(|x| x["server"] == "redis-lite").count();
        let redis = rows.iter().filter(|x| x["server"] == "redis").count();
        assert!(
            lite > 0 && lite == redis,
            "{name}: {lite} rows for redis-lite, {redis} for redis"
        );
        check_lessons(r, &servers, n_lessons);
        assert!(r["servers"]["redis"]["redis_version"]
            .as_str()
            .unwrap()
            .starts_with("7."));
    }
    // Interleaved: each probe step runs on redis-lite, then on redis.
    let probe = experiment(&doc, "probe")["rows"]
        .as_array()
        .unwrap()
        .clone();
    for pair in probe.chunks(2) {
        assert_eq!(pair[0]["server"], "redis-lite");
        assert_eq!(pair[1]["server"], "redis");
        assert_eq!(pair[0]["step"], pair[1]["step"]);
    }
    // Redis has BGSAVE: its fork is measured.
    let fork = probe
        .iter()
        .find(|x| x["step"] == "BGSAVE fork" && x["server"] == "redis")
        .unwrap();
    check_summary(&fork["victim"], Some(&fork["samples_ms"]));
    assert!(
        fork["notes"].as_str().unwrap().contains("latest_fork_usec"),
        "{fork}"
    );
    assert_eq!(doc["lessons"].as_array().unwrap().len(), 16);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn unreachable_target_is_a_clear_error() {
    // A port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = Command::new(LAB)
        .args(["probe", "--quick", "--target", &format!("127.0.0.1:{port}")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot connect to target"), "{err}");
}

/// A server process killed even when the test panics.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn target_with_keys_is_refused_and_left_alone() {
    let Some(bin) = redis_lite_bin() else { return };
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = temp_dir("target");
    let _server = KillOnDrop(
        Command::new(&bin)
            .args(["--port", &port.to_string(), "--save", ""])
            .current_dir(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}/")).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut con = loop {
        if let Ok(c) = client.get_connection() {
            break c;
        }
        assert!(Instant::now() < deadline, "redis-lite did not start");
        std::thread::sleep(Duration::from_millis(50));
    };
    redis::cmd("SET")
        .arg("precious")
        .arg("1")
        .query::<()>(&mut con)
        .unwrap();
    let out = Command::new(LAB)
        .args(["probe", "--quick", "--target", &format!("127.0.0.1:{port}")])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("holds keys") && err.contains("--force-flush"),
        "{err}"
    );
    let v: Option<String> = redis::cmd("GET").arg("precious").query(&mut con).unwrap();
    assert_eq!(
        v.as_deref(),
        Some("1"),
        "the refused target was not touched"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn compare_without_redis_server_says_how_to_install_it() {
    let Some(bin) = redis_lite_bin() else { return };
    let empty = temp_dir("nopath");
    let out = Command::new(LAB)
        .args(["probe", "--quick", "--compare", "--redis-lite-bin"])
        .arg(&bin)
        .env("PATH", &empty)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("apt-get install -y redis-server"), "{err}");
    // The redis-lite it had started is gone again.
    let stdout = String::from_utf8_lossy(&out.stdout);
    if let Some(port) = started_port(&stdout, "redis-lite") {
        assert!(
            TcpStream::connect(("127.0.0.1", port)).is_err(),
            "redis-lite still running on {port}"
        );
    }
    let _ = std::fs::remove_dir_all(empty);
}

/// The port of "LABEL: 127.0.0.1:PORT (started by the lab ...)" in stdout.
fn started_port(stdout: &str, label: &str) -> Option<u16> {
    stdout.lines().find_map(|l| {
        let rest = l.strip_prefix(&format!("{label}: 127.0.0.1:"))?;
        rest.split_whitespace().next()?.parse().ok()
    })
}

#[test]
fn ctrl_c_stops_the_servers_it_started() {
    let Some(bin) = redis_lite_bin() else { return };
    let mut child = Command::new(LAB)
        .args(["victims", "--quick", "--redis-lite-bin"])
        .arg(&bin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the server runs and the experiment has begun.
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut port = None;
    for line in lines.by_ref() {
        let line = line.unwrap();
        if port.is_none() {
            port = started_port(&line, "redis-lite");
        }
        if line.contains("=== victims") {
            break;
        }
    }
    let port = port.expect("the lab printed the port of its redis-lite");
    assert!(TcpStream::connect(("127.0.0.1", port)).is_ok());
    // SAFETY: SIGINT to our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "exit code after Ctrl-C");
    assert!(
        TcpStream::connect(("127.0.0.1", port)).is_err(),
        "redis-lite still running on {port}"
    );
}

/// A server of `program` on a free port, killed on drop.
struct Spawned(std::process::Child, u16);

impl Drop for Spawned {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn_server(program: &Path) -> Spawned {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(program)
        .args(["--port", &port.to_string(), "--save", ""])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "{} did not start",
            program.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    Spawned(child, port)
}

/// `top` ranks what DEBUG BLAME says: a DEBUG SLEEP that a GET waited on
/// is the worst blocker; the recorder it turned on is off again after.
#[test]
fn top_ranks_the_sleep_a_client_waited_on() {
    let Some(bin) = redis_lite_bin() else { return };
    let srv = spawn_server(&bin);
    let target = format!("127.0.0.1:{}", srv.1);
    let top = Command::new(LAB)
        .args(["top", "--target", &target, "--seconds", "3"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until top has turned the recorder on, then stall with a waiter.
    let client = redis::Client::open(format!("redis://{target}/")).unwrap();
    let mut a = client.get_connection().unwrap();
    let mut b = client.get_connection().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let st: Vec<String> = redis::cmd("DEBUG")
            .arg("RECORDER")
            .arg("STATUS")
            .query(&mut a)
            .unwrap();
        if st.iter().any(|l| l == "recording:1") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "top never turned the recorder on"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let sleeper = std::thread::spawn(move || {
        let _: () = redis::cmd("DEBUG")
            .arg("SLEEP")
            .arg("0.3")
            .query(&mut a)
            .unwrap();
        a
    });
    std::thread::sleep(Duration::from_millis(100));
    let _: Option<String> = redis::cmd("GET").arg("x").query(&mut b).unwrap();
    sleeper.join().unwrap();
    let out = top.wait_with_output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let last = text
        .rsplit("redis-lite-lab top:")
        .next()
        .expect("at least one refresh");
    let first_row = last
        .lines()
        .find(|l| l.trim_start().starts_with("1 "))
        .unwrap_or_else(|| panic!("no ranked row:\n{text}"));
    assert!(first_row.contains("DEBUG"), "{first_row}\n{text}");
    assert!(
        last.to_ascii_lowercase().contains("`debug sleep` (client"),
        "{text}"
    );
    assert!(last.contains(" clients waited "), "{text}");
    let st: Vec<String> = redis::cmd("DEBUG")
        .arg("RECORDER")
        .arg("STATUS")
        .query(&mut b)
        .unwrap();
    assert!(st.iter().any(|l| l == "recording:0"), "{st:?}");
}

/// A real redis-server has no blame: `top` says so and exits 2.
#[test]
fn top_on_redis_server_says_it_has_no_recorder() {
    if !require_redis_server() {
        return;
    }
    let srv = spawn_server(&which("redis-server").unwrap());
    let out = Command::new(LAB)
        .args(["top", "--seconds", "1", "--target"])
        .arg(format!("127.0.0.1:{}", srv.1))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("a real redis-server does not have"), "{err}");
}
