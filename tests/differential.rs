//! Differential tests: every case file in `tests/cases/*.txt` is replayed
//! against redis-lite AND a real redis-server 7.0.15, and the raw reply
//! bytes must be identical.
//!
//! Both servers are started once for the whole run; before each file both
//! get `FLUSHALL` and each file runs on fresh connections (db 0, RESP2). All
//! mismatches of all files are collected and reported together at the end,
//! as `file:line`, the command and both replies (escaped), so one run shows
//! everything. Set `REDIS_LITE_CASES=strings,protocol` to run only some files
//! and `DIFF_VERBOSE=1` to print every command with redis-server's reply
//! (`cargo test --test differential -- --nocapture`).
//!
//! # Case file syntax
//!
//! One command per line, written as in redis-cli (`sdssplitargs` rules):
//! whitespace separates arguments; `"double quotes"` understand `\n \r \t
//! \b \a \\ \" \xHH`; `'single quotes'` understand only `\'`; a closing quote
//! must be followed by whitespace or the end of the line. Blank lines and
//! lines starting with `#` are skipped, except these directives:
//!
//! | directive            | effect |
//! |----------------------|--------|
//! | `#!resp3`            | send `HELLO 3` now on this file's connections (reply not compared; it holds the client id) |
//! | `#!mask-integers`    | next command: every integer reply (`:N`, at any depth) compares as `:<int>` |
//! | `#!mask-ids`         | next command: every bulk string that is a time-based stream ID (`<ms>-<seq>`, ms of 13+ digits, as XADD `*` makes) compares as `$<id>` |
//! | `#!sort`             | next command: the array/set/map reply compares as a multiset (top level) |
//! | `#!sort-deep`        | next command: like `#!sort`, at every nesting level |
//! | `#!replies N`        | next command: read N replies instead of one (SUBSCRIBE a b c) |
//! | `#!sleep MS`         | sleep MS milliseconds (expiry cases) |
//! | `#!raw BYTES`        | open a fresh connection to each server, send BYTES verbatim, collect everything until the server closes or goes quiet; the bytes AND whether the server closed must match |
//!
//! Consecutive `#!raw` lines run concurrently (each on its own connection), so
//! they must not depend on each other: put a command line between two raw
//! cases that must run in order.
//!
//! `#!raw` takes the rest of the line as a Rust-style escaped byte string
//! (`\r \n \t \0 \\ \" \' \xHH`; use `\x20` for a trailing space) plus one
//! extension for big inputs: `{{CHUNK*N}}` repeats CHUNK (itself escaped) N
//! times, e.g. `#!raw *1\r\n${{9*70000}}`.
//!
//! Keep cases deterministic: mask or sort where Redis's answer depends on
//! time, client ids or hash order, and restore any CONFIG you change.

mod common;

use common::{escape_trunc, split_aggregate, Conn, Process, ReadError, RealRedis, Server};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Largest input a `{{chunk*N}}` repetition may expand to.
const MAX_RAW_BYTES: usize = 16 * 1024 * 1024;

/// A `#!raw` case waits this long for the first byte of a reply...
const RAW_FIRST_BYTE: Duration = Duration::from_millis(600);
/// ...and considers the server done after this much silence.
const RAW_IDLE: Duration = Duration::from_millis(300);

/// Escaped replies longer than this are cut in reports.
const REPORT_MAX: usize = 600;

// ---------------------------------------------------------------------------
// Case files
// ---------------------------------------------------------------------------

#[derive(Debug, Default, Clone, Copy)]
struct Opts {
    mask_integers: bool,
    mask_ids: bool,
    sort: bool,
    sort_deep: bool,
    replies: usize,
}

#[derive(Debug)]
enum Step {
    Cmd {
        line: usize,
        text: String,
        args: Vec<Vec<u8>>,
        opts: Opts,
    },
    Raw {
        line: usize,
        text: String,
        bytes: Vec<u8>,
    },
    Resp3,
    Sleep {
        ms: u64,
    },
}

/// Split a line as redis-cli does (sds.c sdssplitargs).
fn split_args(line: &[u8]) -> Result<Vec<Vec<u8>>, String> {
    let mut out = Vec::new();
    let mut p = 0;
    let at = |i: usize| line.get(i).copied().unwrap_or(0);
    let is_space = |c: u8| matches!(c, b' ' | b'\n' | b'\r' | b'\t' | 0x0b | 0x0c);
    loop {
        while p < line.len() && is_space(line[p]) {
            p += 1;
        }
        if p >= line.len() {
            return Ok(out);
        }
        let (mut inq, mut insq) = (false, false);
        let mut cur = Vec::new();
        loop {
            let c = at(p);
            if inq {
                if c == b'\\'
                    && at(p + 1) == b'x'
                    && at(p + 2).is_ascii_hexdigit()
                    && at(p + 3).is_ascii_hexdigit()
                {
                    let hex =
                        std::str::from_utf8(&line[p + 2..p + 4]).map_err(|e| e.to_string())?;
                    cur.push(u8::from_str_radix(hex, 16).map_err(|e| e.to_string())?);
                    p += 3;
                } else if c == b'\\' && p + 1 < line.len() {
                    p += 1;
                    cur.push(match line[p] {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'b' => 0x08,
                        b'a' => 0x07,
                        other => other,
                    });
                } else if c == b'"' {
                    if p + 1 < line.len() && !is_space(line[p + 1]) {
                        return Err("closing quote must be followed by a space".into());
                    }
                    p += 1;
                    break;
                } else if p >= line.len() {
                    return Err("unbalanced double quotes".into());
                } else {
                    cur.push(c);
                }
            } else if insq {
                if c == b'\\' && at(p + 1) == b'\'' {
                    p += 1;
                    cur.push(b'\'');
                } else if c == b'\'' {
                    if p + 1 < line.len() && !is_space(line[p + 1]) {
                        return Err("closing quote must be followed by a space".into());
                    }
                    p += 1;
                    break;
                } else if p >= line.len() {
                    return Err("unbalanced single quotes".into());
                } else {
                    cur.push(c);
                }
            } else if p >= line.len() || is_space(c) {
                break;
            } else if c == b'"' {
                inq = true;
            } else if c == b'\'' {
                insq = true;
            } else {
                cur.push(c);
            }
            p += 1;
        }
        out.push(cur);
    }
}

/// Decode a Rust-style escaped byte string with `{{chunk*N}}` repetition.
fn unescape_raw(s: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(start) = rest.find("{{") {
        out.extend(unescape_plain(&rest[..start])?);
        let end = rest[start..].find("}}").ok_or("unclosed {{")? + start;
        let inner = &rest[start + 2..end];
        let star = inner.rfind('*').ok_or("{{chunk*N}} needs a '*'")?;
        let chunk = unescape_plain(&inner[..star])?;
        let n: usize = inner[star + 1..]
            .trim()
            .parse()
            .map_err(|_| "bad repeat count")?;
        if chunk.len().saturating_mul(n) > MAX_RAW_BYTES {
            return Err(format!("repetition larger than {MAX_RAW_BYTES} bytes"));
        }
        for _ in 0..n {
            out.extend_from_slice(&chunk);
        }
        rest = &rest[end + 2..];
    }
    out.extend(unescape_plain(rest)?);
    Ok(out)
}

fn unescape_plain(s: &str) -> Result<Vec<u8>, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let Some(&e) = b.get(i + 1) else {
            return Err("trailing backslash".into());
        };
        i += 2;
        out.push(match e {
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'0' => 0,
            b'\\' => b'\\',
            b'"' => b'"',
            b'\'' => b'\'',
            b'x' => {
                let hex = s.get(i..i + 2).ok_or("short \\x escape")?;
                i += 2;
                u8::from_str_radix(hex, 16).map_err(|_| format!("bad \\x{hex}"))?
            }
            other => return Err(format!("unknown escape \\{}", other as char)),
        });
    }
    Ok(out)
}

fn parse_case_file(text: &[u8]) -> Result<Vec<Step>, Vec<String>> {
    let mut steps = Vec::new();
    let mut errors = Vec::new();
    let mut opts = Opts::default();
    for (i, raw_line) in text.split(|&c| c == b'\n').enumerate() {
        let line_no = i + 1;
        let line = raw_line.strip_suffix(b"\r").unwrap_or(raw_line);
        let trimmed = String::from_utf8_lossy(line).trim().to_string();
        if trimmed.is_empty() {
            continue;
        }
        if let Some(d) = trimmed.strip_prefix("#!") {
            let (name, arg) = d.split_once(' ').unwrap_or((d, ""));
            match name {
                "resp3" => steps.push(Step::Resp3),
                "mask-integers" => opts.mask_integers = true,
                "mask-ids" => opts.mask_ids = true,
                "sort" => opts.sort = true,
                "sort-deep" => opts.sort_deep = true,
                "replies" => match arg.trim().parse() {
                    Ok(n) => opts.replies = n,
                    Err(_) => errors.push(format!("line {line_no}: #!replies needs a number")),
                },
                "sleep" => match arg.trim().parse() {
                    Ok(ms) => steps.push(Step::Sleep { ms }),
                    Err(_) => errors.push(format!("line {line_no}: #!sleep needs milliseconds")),
                },
                "raw" => {
                    // Exact text after "#!raw ", only the line ending removed.
                    let full = String::from_utf8_lossy(line).to_string();
                    let body = full.trim_start().strip_prefix("#!raw").unwrap_or("");
                    let body = body.strip_prefix(' ').unwrap_or(body);
                    match unescape_raw(body) {
                        Ok(bytes) => steps.push(Step::Raw {
                            line: line_no,
                            text: body.to_string(),
                            bytes,
                        }),
                        Err(e) => errors.push(format!("line {line_no}: #!raw: {e}")),
                    }
                }
                other => errors.push(format!("line {line_no}: unknown directive #!{other}")),
            }
            continue;
        }
        if trimmed.starts_with('#') {
            continue;
        }
        match split_args(line) {
            Ok(args) if args.is_empty() => {}
            Ok(args) => {
                steps.push(Step::Cmd {
                    line: line_no,
                    text: trimmed,
                    args,
                    opts,
                });
                opts = Opts::default();
            }
            Err(e) => errors.push(format!("line {line_no}: {e}: {trimmed}")),
        }
    }
    if errors.is_empty() {
        Ok(steps)
    } else {
        Err(errors)
    }
}

// ---------------------------------------------------------------------------
// Reply normalisation for #!mask-integers / #!sort
// ---------------------------------------------------------------------------

fn normalise(reply: &[u8], opts: &Opts, depth: usize) -> Vec<u8> {
    if opts.mask_integers && reply.first() == Some(&b':') {
        return b":<int>\r\n".to_vec();
    }
    if opts.mask_ids && is_time_stream_id_bulk(reply) {
        return b"$<id>\r\n".to_vec();
    }
    let Some((header, elems)) = split_aggregate(reply) else {
        return reply.to_vec();
    };
    let mut elems: Vec<Vec<u8>> = elems
        .iter()
        .map(|e| normalise(e, opts, depth + 1))
        .collect();
    if (opts.sort && depth == 0) || opts.sort_deep {
        if header.first() == Some(&b'%') {
            let mut pairs: Vec<Vec<u8>> = elems.chunks(2).map(|p| p.concat()).collect();
            pairs.sort();
            elems = pairs;
        } else {
            elems.sort();
        }
    }
    let mut out = header;
    for e in elems {
        out.extend(e);
    }
    out
}

/// `$N\r\n<ms>-<seq>\r\n` where `<ms>` has 13 digits or more: an ID that
/// XADD `*` generated from the clock (explicit test IDs are small).
fn is_time_stream_id_bulk(reply: &[u8]) -> bool {
    let Some(rest) = reply.strip_prefix(b"$") else {
        return false;
    };
    let Some(nl) = rest.iter().position(|&b| b == b'\n') else {
        return false;
    };
    let body = rest[nl + 1..].strip_suffix(b"\r\n").unwrap_or(&[]);
    let Some(dash) = body.iter().position(|&b| b == b'-') else {
        return false;
    };
    let (ms, seq) = (&body[..dash], &body[dash + 1..]);
    ms.len() >= 13
        && !seq.is_empty()
        && ms.iter().all(u8::is_ascii_digit)
        && seq.iter().all(u8::is_ascii_digit)
}

// ---------------------------------------------------------------------------
// Running a file
// ---------------------------------------------------------------------------

/// One server under comparison: its process and the file's connection.
struct Side {
    name: &'static str,
    conn: Option<Conn>,
}

/// The outcome of reading one reply, rendered for comparison.
fn outcome(r: Result<Vec<u8>, ReadError>, opts: &Opts) -> (Vec<u8>, bool) {
    match r {
        Ok(bytes) => (normalise(&bytes, opts, 0), true),
        Err(e) => (format!("{e}").into_bytes(), false),
    }
}

fn show(b: &[u8]) -> String {
    format!("\"{}\"", escape_trunc(b, REPORT_MAX))
}

struct Runner<'a> {
    lite: &'a mut Process,
    real: &'a Process,
    file: String,
    mismatches: Vec<String>,
    commands: usize,
    /// Set when redis-lite stopped answering: the next file gets a new one.
    lite_hung: bool,
}

impl Runner<'_> {
    fn connect_pair(&mut self, resp3: bool) -> (Side, Side) {
        let mut lite = Side {
            name: "redis-lite",
            conn: Conn::connect(self.lite.port).ok(),
        };
        let mut real = Side {
            name: "redis",
            conn: Some(self.real.connect()),
        };
        if resp3 {
            for s in [&mut lite, &mut real] {
                if let Some(c) = s.conn.as_mut() {
                    let _ = c.cmd(&["HELLO", "3"]);
                }
            }
        }
        (lite, real)
    }

    fn mismatch(&mut self, line: usize, what: &str, lite: &[u8], real: &[u8]) {
        self.mismatches.push(format!(
            "{}:{}: {}\n    redis-lite: {}\n    redis     : {}",
            self.file,
            line,
            what,
            show(lite),
            show(real)
        ));
    }

    fn run_raw_group(&mut self, group: &[(usize, &String, &Vec<u8>)]) {
        let (lp, rp) = (self.lite.port, self.real.port);
        let results: Vec<(RawOutcome, RawOutcome)> = std::thread::scope(|sc| {
            let handles: Vec<_> = group
                .iter()
                .map(|(_, _, bytes)| {
                    let bytes: &[u8] = bytes;
                    (
                        sc.spawn(move || raw_exchange(lp, bytes)),
                        sc.spawn(move || raw_exchange(rp, bytes)),
                    )
                })
                .collect();
            handles
                .into_iter()
                .map(|(hl, hr)| {
                    (
                        hl.join().expect("raw thread"),
                        hr.join().expect("raw thread"),
                    )
                })
                .collect()
        });
        for ((line, text, _), (l, r)) in group.iter().zip(results) {
            self.commands += 1;
            if verbose() {
                println!(
                    "{}:{}: #!raw {} -> {} closed={}",
                    self.file,
                    line,
                    trunc(text),
                    show(&r.0),
                    r.1
                );
            }
            if l != r {
                let render = |(b, closed): &RawOutcome| {
                    let mut v = b.clone();
                    v.extend_from_slice(if *closed {
                        b" <closed>"
                    } else {
                        b" <still open>"
                    });
                    v
                };
                self.mismatch(
                    *line,
                    &format!("#!raw {}", trunc(text)),
                    &render(&l),
                    &render(&r),
                );
            }
        }
    }

    fn run(&mut self, steps: &[Step]) {
        let mut resp3 = false;
        let (mut lite, mut real) = self.connect_pair(false);
        if lite.conn.is_none() {
            self.mismatch(0, "(connect)", b"<cannot connect>", b"");
            return;
        }
        let mut idx = 0;
        while let Some(step) = steps.get(idx) {
            idx += 1;
            match step {
                Step::Sleep { ms } => std::thread::sleep(Duration::from_millis(*ms)),
                Step::Resp3 => {
                    resp3 = true;
                    for s in [&mut lite, &mut real] {
                        if let Some(c) = s.conn.as_mut() {
                            let _ = c.cmd(&["HELLO", "3"]);
                        }
                    }
                }
                Step::Raw { .. } => {
                    // A run of consecutive #!raw lines: independent fresh
                    // connections, so they all run at once (each may have to
                    // wait RAW_IDLE to conclude "still open").
                    let mut group = Vec::new();
                    idx -= 1; // back to this first raw step
                    while let Some(Step::Raw { line, text, bytes }) = steps.get(idx) {
                        group.push((*line, text, bytes));
                        idx += 1;
                    }
                    self.run_raw_group(&group);
                    continue;
                }
                Step::Cmd {
                    line,
                    text,
                    args,
                    opts,
                } => {
                    self.commands += 1;
                    let n = opts.replies.max(1);
                    for s in [&mut lite, &mut real] {
                        if let Some(c) = s.conn.as_mut() {
                            if c.send_cmd(args).is_err() {
                                s.conn = None;
                            }
                        }
                    }
                    let mut broken = false;
                    for i in 0..n {
                        let mut got = Vec::new();
                        for s in [&mut lite, &mut real] {
                            let o = match s.conn.as_mut() {
                                Some(c) => outcome(c.read_reply(), opts),
                                None => {
                                    (format!("<{} connection lost>", s.name).into_bytes(), false)
                                }
                            };
                            got.push(o);
                        }
                        let ((lb, lok), (rb, rok)) = (&got[0], &got[1]);
                        if verbose() {
                            println!("{}:{}: {} -> {}", self.file, line, trunc(text), show(rb));
                        }
                        if lb != rb || !lok || !rok {
                            let what = if n > 1 {
                                format!("{} (reply {})", trunc(text), i + 1)
                            } else {
                                trunc(text)
                            };
                            self.mismatch(*line, &what, lb, rb);
                        }
                        if !lok || !rok {
                            broken = true;
                            break;
                        }
                    }
                    if broken {
                        // Start over on fresh connections so the rest of the
                        // file still runs (SELECT state is lost).
                        if !self.lite.is_alive() {
                            let tail = self.lite.log_tail();
                            self.mismatch(
                                *line,
                                "redis-lite DIED here; log tail:",
                                tail.as_bytes(),
                                b"",
                            );
                            return;
                        }
                        let pair = self.connect_pair(resp3);
                        lite = pair.0;
                        real = pair.1;
                        if !lite_answers_ping(self.lite.port) {
                            self.mismatch(
                                *line,
                                "redis-lite UNRESPONSIVE after this command; rest of file skipped",
                                b"<no PONG within 5 s>",
                                b"",
                            );
                            self.lite_hung = true;
                            return;
                        }
                    }
                }
            }
        }
    }
}

/// `DIFF_VERBOSE=1`: print every command and the real server's reply.
fn verbose() -> bool {
    std::env::var("DIFF_VERBOSE").is_ok_and(|v| !v.is_empty() && v != "0")
}

fn trunc(s: &str) -> String {
    if s.len() <= 200 {
        s.to_string()
    } else {
        let mut end = 200;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}... ({} chars)", &s[..end], s.len())
    }
}

/// What a `#!raw` case saw: every byte received, and whether the server
/// closed the connection.
type RawOutcome = (Vec<u8>, bool);

/// `#!raw`: fresh connection, send the bytes (write errors are fine: the
/// server may close mid-send), then collect all output until the server
/// closes or goes quiet. Returns (bytes, closed).
fn raw_exchange(port: u16, bytes: &[u8]) -> RawOutcome {
    let mut c = match Conn::connect(port) {
        Ok(c) => c,
        Err(e) => return (format!("<connect failed: {e}>").into_bytes(), true),
    };
    let _ = c.send(bytes);
    c.read_until_close_or_idle(RAW_FIRST_BYTE, RAW_IDLE)
}

fn case_files() -> Vec<PathBuf> {
    let dir = match std::env::var_os("REDIS_LITE_CASES_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases"),
    };
    let filter: Option<Vec<String>> = std::env::var("REDIS_LITE_CASES")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .map(|s| {
            s.split(',')
                .map(|x| x.trim().trim_end_matches(".txt").to_string())
                .collect()
        });
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "txt"));
    if let Some(f) = filter {
        files.retain(|p| {
            let stem = p
                .file_stem()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_default();
            f.contains(&stem)
        });
    }
    files.sort();
    files
}

fn lite_answers_ping(port: u16) -> bool {
    let Ok(mut c) = Conn::connect(port) else {
        return false;
    };
    c.set_timeout(Duration::from_secs(5));
    matches!(c.cmd(&["PING"]), Ok(r) if r == b"+PONG\r\n")
}

fn flushall(p: &Process) -> Result<(), String> {
    let mut c = Conn::connect(p.port).map_err(|e| format!("connect {}: {e}", p.name))?;
    match c.cmd(&["FLUSHALL"]) {
        Ok(r) if r == b"+OK\r\n" => Ok(()),
        Ok(r) => Err(format!("{} FLUSHALL replied {}", p.name, show(&r))),
        Err(e) => Err(format!("{} FLUSHALL: {e}", p.name)),
    }
}

#[test]
fn case_files_parse() {
    let mut errors = Vec::new();
    for f in case_files() {
        let text = std::fs::read(&f).expect("read case file");
        if let Err(es) = parse_case_file(&text) {
            for e in es {
                errors.push(format!("{}: {e}", f.display()));
            }
        }
    }
    assert!(
        errors.is_empty(),
        "case file syntax errors:\n{}",
        errors.join("\n")
    );
}

#[test]
fn differential_against_real_redis() {
    let Some(real) = RealRedis::start() else {
        return;
    };
    let mut lite = Server::start();
    let files = case_files();
    let mut report = Vec::new();
    let mut summary = Vec::new();
    let started = Instant::now();
    let mut restart_lite = false;
    for f in &files {
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        let text = std::fs::read(f).expect("read case file");
        let steps = match parse_case_file(&text) {
            Ok(s) => s,
            Err(es) => {
                report.extend(es.into_iter().map(|e| format!("{name}: syntax: {e}")));
                continue;
            }
        };
        if restart_lite || !lite.is_alive() {
            // A previous file killed or hung it: start a new one so the rest
            // still run.
            lite = Server::start();
        }
        if let Err(e) = flushall(&real) {
            panic!("real redis-server unusable: {e}");
        }
        if let Err(e) = flushall(&lite) {
            report.push(format!("{name}: before the file: {e}"));
        }
        let t = Instant::now();
        let mut r = Runner {
            lite: &mut lite,
            real: &real,
            file: name.clone(),
            mismatches: Vec::new(),
            commands: 0,
            lite_hung: false,
        };
        r.run(&steps);
        let hung = r.lite_hung;
        summary.push(format!(
            "{:<28} {:>5} commands {:>4} mismatches  {:>6} ms",
            name,
            r.commands,
            r.mismatches.len(),
            t.elapsed().as_millis()
        ));
        report.extend(r.mismatches);
        restart_lite = hung;
    }
    println!(
        "differential: {} files in {:?}",
        files.len(),
        started.elapsed()
    );
    for s in &summary {
        println!("  {s}");
    }
    if !report.is_empty() {
        panic!(
            "{} differences from redis-server:\n\n{}\n\nper file:\n  {}",
            report.len(),
            report.join("\n"),
            summary.join("\n  ")
        );
    }
}

#[test]
fn splitargs_matches_redis_cli() {
    let v = |s: &str| split_args(s.as_bytes()).unwrap();
    assert_eq!(
        v("SET a b"),
        vec![b"SET".to_vec(), b"a".to_vec(), b"b".to_vec()]
    );
    assert_eq!(
        v("  SET   \"a b\"  'c d' "),
        vec![b"SET".to_vec(), b"a b".to_vec(), b"c d".to_vec()]
    );
    assert_eq!(
        v(r#"ECHO "\x41\n\"" 'it\'s'"#),
        vec![b"ECHO".to_vec(), b"A\n\"".to_vec(), b"it's".to_vec()]
    );
    assert_eq!(v(r#"ECHO """#), vec![b"ECHO".to_vec(), b"".to_vec()]);
    assert_eq!(
        v(r#"ECHO a"b c""#),
        vec![b"ECHO".to_vec(), b"ab c".to_vec()]
    );
    assert!(split_args(b"ECHO \"abc").is_err());
    assert!(split_args(b"ECHO \"a\"b").is_err());
    assert!(split_args(b"ECHO 'a").is_err());
    assert_eq!(
        unescape_raw(r"*1\r\n$4\r\nPING\r\n").unwrap(),
        b"*1\r\n$4\r\nPING\r\n"
    );
    assert_eq!(unescape_raw(r"a{{\x00b*3}}c").unwrap(), b"a\0b\0b\0bc");
}

#[test]
fn mask_ids_takes_only_clock_ids() {
    assert!(is_time_stream_id_bulk(b"$15\r\n1700000000000-0\r\n"));
    assert!(!is_time_stream_id_bulk(b"$3\r\n1-0\r\n"));
    assert!(!is_time_stream_id_bulk(b"$14\r\n1700000000000-\r\n"));
    assert!(!is_time_stream_id_bulk(b":1700000000000\r\n"));
}

#[test]
fn normalise_masks_and_sorts() {
    let o = Opts {
        mask_integers: true,
        sort: true,
        ..Opts::default()
    };
    assert_eq!(
        normalise(b"*3\r\n:5\r\n$1\r\nb\r\n$1\r\na\r\n", &o, 0),
        b"*3\r\n$1\r\na\r\n$1\r\nb\r\n:<int>\r\n"
    );
    let o = Opts {
        sort: true,
        ..Opts::default()
    };
    assert_eq!(
        normalise(b"%2\r\n+b\r\n:1\r\n+a\r\n:2\r\n", &o, 0),
        b"%2\r\n+a\r\n:2\r\n+b\r\n:1\r\n"
    );
}

#[test]
fn reply_framer_finds_reply_ends() {
    assert_eq!(common::reply_len(b"+OK\r\n"), Ok(Some(5)));
    assert_eq!(common::reply_len(b"+OK\r"), Ok(None));
    assert_eq!(common::reply_len(b"$3\r\nfoo\r\n+X"), Ok(Some(9)));
    assert_eq!(common::reply_len(b"$3\r\nfo"), Ok(None));
    assert_eq!(common::reply_len(b"$-1\r\n"), Ok(Some(5)));
    assert_eq!(common::reply_len(b"*2\r\n:1\r\n$1\r\na\r\n"), Ok(Some(15)));
    assert_eq!(common::reply_len(b"*2\r\n:1\r\n"), Ok(None));
    assert_eq!(common::reply_len(b"%1\r\n+a\r\n:1\r\n"), Ok(Some(12)));
    assert_eq!(common::reply_len(b"_\r\n"), Ok(Some(3)));
    assert!(common::reply_len(b"?\r\n").is_err());
}
