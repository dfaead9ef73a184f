//! What every experiment shares: the run context, seeding helpers that fall
//! back when a command is missing, and the small queries (SLOWLOG, LATENCY,
//! OBJECT ENCODING) whose answers sit beside the victims' numbers.

pub mod monitor;
pub mod probe;
pub mod roundtrips;
pub mod scancount;
pub mod victims;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use redis::Value;
use serde_json::{json, Value as Json};

use crate::report::{self, Lesson};
use crate::target::{self, is_unknown_command, short_err, Target};

/// Everything an experiment needs.
pub struct Ctx {
    pub targets: Vec<Target>,
    /// 10x smaller data and shorter waits: a one-minute smoke run.
    pub quick: bool,
    pub svg_dir: Option<PathBuf>,
    /// Round-trip time the proxy adds (roundtrips, scancount).
    pub rtt_ms: f64,
    /// `roundtrips --cluster`.
    pub cluster: bool,
    /// `--trace DIR`: the server's loop flight recorder around each
    /// experiment (trace.rs; main.rs starts and stops it).
    pub trace_dir: Option<PathBuf>,
}

impl Ctx {
    /// `full` at full size, a tenth of it with --quick.
    pub fn size(&self, full: usize) -> usize {
        if self.quick {
            (full / 10).max(1)
        } else {
            full
        }
    }

    /// A wait: `full` normally, a fifth of it (at least 200 ms) with --quick.
    pub fn wait(&self, full: Duration) -> Duration {
        if self.quick {
            (full / 5).max(Duration::from_millis(200))
        } else {
            full
        }
    }

    pub fn labels(&self) -> Vec<String> {
        self.targets.iter().map(|t| t.label.clone()).collect()
    }

    pub fn svg_path(&self, name: &str) -> Option<PathBuf> {
        self.svg_dir.as_ref().map(|d| d.join(name))
    }
}

/// What an experiment hands back: its JSON, its lessons, the files written.
pub struct ExpOutput {
    pub name: String,
    pub json: Json,
    pub lessons: Vec<Lesson>,
    pub svgs: Vec<PathBuf>,
}

/// Print and collect each server's identity for an experiment's header.
pub fn identities(ctx: &Ctx) -> Json {
    let mut out = serde_json::Map::new();
    for t in &ctx.targets {
        match target::identity(t) {
            Ok(id) => {
                report::print_identity(&t.label, &t.addr.to_string(), &id);
                out.insert(t.label.clone(), id.to_json());
            }
            Err(e) => {
                report::note(&format!("{}: cannot read its identity: {e}", t.label));
                out.insert(t.label.clone(), json!({ "error": e }));
            }
        }
    }
    Json::Object(out)
}

/// FLUSHALL, and wait until a lazy free it started is done.
pub fn flushall(con: &mut redis::Connection) -> Result<(), String> {
    redis::cmd("FLUSHALL")
        .query::<()>(con)
        .map_err(|e| format!("FLUSHALL: {e}"))
}

/// Fill the keyspace with `n` string keys `prefix:0..n` of `size` bytes:
/// DEBUG POPULATE when the server allows it (one command, as the post),
/// otherwise pipelined MSETs (slower, same keys). Returns how it was done.
pub fn populate(
    con: &mut redis::Connection,
    label: &str,
    n: usize,
    prefix: &str,
    size: usize,
) -> Result<String, String> {
    let pb = report::spinner(format!("{label}: DEBUG POPULATE {n} {prefix} {size}"));
    let t0 = Instant::now();
    let r = redis::cmd("DEBUG")
        .arg("POPULATE")
        .arg(n)
        .arg(prefix)
        .arg(size)
        .query::<()>(con);
    pb.finish_and_clear();
    match r {
        Ok(()) => Ok(format!(
            "DEBUG POPULATE {n} {prefix} {size} ({:.1} s)",
            t0.elapsed().as_secs_f64()
        )),
        Err(e) => {
            report::note(&format!(
                "{label}: DEBUG POPULATE refused ({}); seeding with pipelined MSET instead \
                 (enable DEBUG with `enable-debug-command yes` for the post's way)",
                short_err(&e)
            ));
            let value = "v".repeat(size.max(1));
            let pb = report::bar(n as u64, format!("{label}: MSET {prefix}:*"));
            let batch = 1000;
            let mut i = 0;
            while i < n {
                let mut pipe = redis::pipe();
                for _ in 0..50 {
                    if i >= n {
                        break;
                    }
                    let mut cmd = redis::cmd("MSET");
                    for j in i..(i + batch).min(n) {
                        cmd.arg(format!("{prefix}:{j}")).arg(&value);
                    }
                    i = (i + batch).min(n);
                    pipe.add_command(cmd).ignore();
                }
                pipe.query::<()>(con).map_err(|e| format!("MSET: {e}"))?;
                pb.set_position(i as u64);
            }
            pb.finish_and_clear();
            Ok(format!(
                "MSET in batches of {batch} ({:.1} s)",
                t0.elapsed().as_secs_f64()
            ))
        }
    }
}

/// A set of `n` distinct strings `member:1..=n`: the post's EVAL when the
/// server has scripting, else SADD in batches.
pub fn build_set_eval(
    con: &mut redis::Connection,
    label: &str,
    key: &str,
    n: usize,
) -> Result<String, String> {
    let script = format!("for i = 1, {n} do redis.call('SADD', KEYS[1], 'member:' .. i) end");
    let pb = report::spinner(format!(
        "{label}: EVAL \"for i = 1, {n} do redis.call('SADD', ...) end\" 1 {key}"
    ));
    let t0 = Instant::now();
    let r = redis::cmd("EVAL")
        .arg(&script)
        .arg(1)
        .arg(key)
        .query::<Value>(con);
    pb.finish_and_clear();
    match r {
        Ok(_) => Ok(format!(
            "EVAL of {n} SADDs ({:.1} s)",
            t0.elapsed().as_secs_f64()
        )),
        Err(e) => {
            report::note(&format!(
                "{label}: EVAL failed ({}); building the set with SADD batches",
                short_err(&e)
            ));
            build_set_sadd(con, label, key, n)
        }
    }
}

/// A set of `n` distinct strings with SADD, 1000 members a command.
pub fn build_set_sadd(
    con: &mut redis::Connection,
    label: &str,
    key: &str,
    n: usize,
) -> Result<String, String> {
    let t0 = Instant::now();
    let pb = report::bar(n as u64, format!("{label}: SADD {key} (distinct strings)"));
    let mut i = 1;
    while i <= n {
        let mut pipe = redis::pipe();
        for _ in 0..100 {
            if i > n {
                break;
            }
            let mut cmd = redis::cmd("SADD");
            cmd.arg(key);
            let end = (i + 1000).min(n + 1);
            for j in i..end {
                cmd.arg(format!("member:{j}"));
            }
            i = end;
            pipe.add_command(cmd).ignore();
        }
        pipe.query::<()>(con).map_err(|e| format!("SADD: {e}"))?;
        pb.set_position((i - 1) as u64);
    }
    pb.finish_and_clear();
    Ok(format!(
        "SADD batches ({:.1} s)",
        t0.elapsed().as_secs_f64()
    ))
}

/// A list of `n` small integers with RPUSH, 1000 elements a command.
pub fn build_list(
    con: &mut redis::Connection,
    label: &str,
    key: &str,
    n: usize,
) -> Result<String, String> {
    let t0 = Instant::now();
    let pb = report::bar(n as u64, format!("{label}: RPUSH {key} (small integers)"));
    let mut i = 0;
    while i < n {
        let mut pipe = redis::pipe();
        for _ in 0..100 {
            if i >= n {
                break;
            }
            let mut cmd = redis::cmd("RPUSH");
            cmd.arg(key);
            let end = (i + 1000).min(n);
            for j in i..end {
                cmd.arg(j % 1000);
            }
            i = end;
            pipe.add_command(cmd).ignore();
        }
        pipe.query::<()>(con).map_err(|e| format!("RPUSH: {e}"))?;
        pb.set_position(i as u64);
    }
    pb.finish_and_clear();
    Ok(format!(
        "RPUSH batches ({:.1} s)",
        t0.elapsed().as_secs_f64()
    ))
}

/// Run one command and time it from the client.
pub fn timed(
    con: &mut redis::Connection,
    cmd: &redis::Cmd,
) -> (Duration, redis::RedisResult<Value>) {
    let t0 = Instant::now();
    let r = cmd.query::<Value>(con);
    (t0.elapsed(), r)
}

/// SLOWLOG RESET (so that `slowlog_last_us` sees only what follows).
pub fn slowlog_reset(con: &mut redis::Connection) {
    let _ = redis::cmd("SLOWLOG").arg("RESET").query::<Value>(con);
}

/// The duration (us) of the newest SLOWLOG entry whose command is `name`.
pub fn slowlog_last_us(con: &mut redis::Connection, name: &str) -> Option<u64> {
    let v: Value = redis::cmd("SLOWLOG").arg("GET").arg(16).query(con).ok()?;
    let Value::Array(entries) = v else {
        return None;
    };
    for e in entries {
        let Value::Array(f) = e else { continue };
        let (Some(Value::Int(us)), Some(Value::Array(argv))) = (f.get(2), f.get(3)) else {
            continue;
        };
        if let Some(Value::BulkString(cmd)) = argv.first() {
            if cmd.eq_ignore_ascii_case(name.as_bytes()) {
                return Some(*us as u64);
            }
        }
    }
    None
}

/// LATENCY LATEST as (event, latest ms, max ms).
pub fn latency_latest(con: &mut redis::Connection) -> Result<Vec<(String, i64, i64)>, String> {
    let v: Value = redis::cmd("LATENCY")
        .arg("LATEST")
        .query(con)
        .map_err(|e| short_err(&e))?;
    let Value::Array(events) = v else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for e in events {
        let Value::Array(f) = e else { continue };
        let name = match f.first() {
            Some(Value::BulkString(b)) => String::from_utf8_lossy(b).into_owned(),
            Some(Value::SimpleString(s)) => s.clone(),
            _ => continue,
        };
        let int = |i: usize| match f.get(i) {
            Some(Value::Int(n)) => *n,
            _ => 0,
        };
        out.push((name, int(2), int(3)));
    }
    Ok(out)
}

/// LATENCY LATEST in one cell: "command 67 ms" or "(empty)".
pub fn latency_cell(con: &mut redis::Connection) -> String {
    match latency_latest(con) {
        Ok(ev) if ev.is_empty() => "(empty array)".into(),
        Ok(ev) => ev
            .iter()
            .map(|(n, last, max)| format!("{n} {last} ms (max {max})"))
            .collect::<Vec<_>>()
            .join("; "),
        Err(e) => format!("n/a ({e})"),
    }
}

/// OBJECT ENCODING key.
pub fn encoding(con: &mut redis::Connection, key: &str) -> String {
    match redis::cmd("OBJECT")
        .arg("ENCODING")
        .arg(key)
        .query::<Option<String>>(con)
    {
        Ok(Some(e)) => e,
        Ok(None) => "(no key)".into(),
        Err(e) => format!("n/a ({})", short_err(&e)),
    }
}

/// MEMORY USAGE key in bytes.
pub fn memory_usage(con: &mut redis::Connection, key: &str) -> Result<i64, String> {
    redis::cmd("MEMORY")
        .arg("USAGE")
        .arg(key)
        .query::<Option<i64>>(con)
        .map_err(|e| short_err(&e))
        .map(|v| v.unwrap_or(0))
}

/// Wait until the bio thread has freed what UNLINK handed it; returns
/// lazyfreed_objects.
pub fn wait_lazyfree(con: &mut redis::Connection) -> Option<i64> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let info = target::info_section(con, "memory").ok()?;
        let pending = target::info_f64(&info, "lazyfree_pending_objects").unwrap_or(0.0);
        if pending == 0.0 || Instant::now() > deadline {
            return target::info_f64(&info, "lazyfreed_objects").map(|v| v as i64);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// CONFIG SET, remembering the old value on a foreign target.
pub fn config_set(
    t: &mut Target,
    con: &mut redis::Connection,
    name: &str,
    value: &str,
) -> Result<(), String> {
    t.remember_config(con, name);
    redis::cmd("CONFIG")
        .arg("SET")
        .arg(name)
        .arg(value)
        .query::<()>(con)
        .map_err(|e| format!("CONFIG SET {name} {value}: {}", short_err(&e)))
}

/// True when the server knows the command (COMMAND INFO has an entry).
pub fn knows_command(con: &mut redis::Connection, name: &str) -> bool {
    match redis::cmd("COMMAND")
        .arg("INFO")
        .arg(name)
        .query::<Value>(con)
    {
        Ok(Value::Array(v)) => v.first().is_some_and(|e| !matches!(e, Value::Nil)),
        _ => false,
    }
}

/// An error string for a row: unknown commands said plainly.
pub fn describe_err(e: &redis::RedisError, what: &str) -> String {
    if is_unknown_command(e) {
        format!("not supported by this server ({})", short_err(e))
    } else {
        format!("{what}: {}", short_err(e))
    }
}

/// Write a plot, reporting failures as notes; returns the path on success.
pub fn write_svg(
    path: Option<PathBuf>,
    f: impl FnOnce(&Path) -> Result<(), String>,
) -> Option<PathBuf> {
    let path = path?;
    match f(&path) {
        Ok(()) => {
            println!("  plot: {}", path.display());
            Some(path)
        }
        Err(e) => {
            report::note(&format!("could not write {}: {e}", path.display()));
            None
        }
    }
}
