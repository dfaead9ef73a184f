//! `redis-lite-lab top`: the worst blockers, live. Every second it reads
//! redis-lite's blame (`DEBUG BLAME COMMANDS`, `DEBUG BLAME`;
//! server/src/recorder.rs) and prints the commands ranked by the wait they
//! made other clients suffer: runs, total run time, how many clients had
//! a command waiting while they ran, and the sum of those waits. Below,
//! the worst single runs in the server's own words.
//!
//! Blame is computed only while the flight recorder is on, so `top` turns
//! it on (DEBUG RECORDER START) when it is off and back off when it
//! leaves (Ctrl-C or `--seconds N`). It never flushes or writes keys: it
//! is safe on a server someone is using. A server without the recorder (a
//! real redis-server) is told apart and refused with a plain message.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::report::Table;
use crate::target::short_err;

/// How often the view refreshes.
pub const TOP_INTERVAL: Duration = Duration::from_secs(1);
/// Commands shown.
pub const TOP_ROWS: usize = 15;
/// Worst single runs shown.
pub const TOP_WORST: usize = 5;

/// One line of DEBUG BLAME COMMANDS.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlameRow {
    pub command: String,
    pub calls: u64,
    pub run_us: u64,
    pub queue_wait_us: u64,
    pub waiters: u64,
    pub waited_us: u64,
}

/// Parse "KEYS: calls=1 run_us=97000 queue_wait_us=3 waiters=4 waited_us=371000".
pub fn parse_blame_line(line: &str) -> Option<BlameRow> {
    let (command, rest) = line.split_once(": ")?;
    let mut row = BlameRow {
        command: command.to_string(),
        calls: 0,
        run_us: 0,
        queue_wait_us: 0,
        waiters: 0,
        waited_us: 0,
    };
    for kv in rest.split_whitespace() {
        let (k, v) = kv.split_once('=')?;
        let v: u64 = v.parse().ok()?;
        match k {
            "calls" => row.calls = v,
            "run_us" => row.run_us = v,
            "queue_wait_us" => row.queue_wait_us = v,
            "waiters" => row.waiters = v,
            "waited_us" => row.waited_us = v,
            _ => {}
        }
    }
    Some(row)
}

/// Worst first: by the wait caused, then by run time.
pub fn rank(mut rows: Vec<BlameRow>) -> Vec<BlameRow> {
    rows.sort_by(|a, b| {
        b.waited_us
            .cmp(&a.waited_us)
            .then(b.run_us.cmp(&a.run_us))
            .then(a.command.cmp(&b.command))
    });
    rows
}

fn query_lines(con: &mut redis::Connection, args: &[&str]) -> Result<Vec<String>, String> {
    let mut cmd = redis::cmd(args[0]);
    for a in &args[1..] {
        cmd.arg(*a);
    }
    cmd.query(con).map_err(|e| short_err(&e))
}

fn ms(us: u64) -> String {
    format!("{:.3}", us as f64 / 1000.0)
}

/// One refresh: the table and the worst runs, as text.
pub fn render(addr: &str, rows: &[BlameRow], worst: &[String], elapsed: Duration) -> String {
    let mut t = Table::new(
        &format!(
            "redis-lite-lab top: {addr}, blame since {:.0} s (Ctrl-C to leave)",
            elapsed.as_secs_f64()
        ),
        &[
            "#",
            "command",
            "runs",
            "run ms (total)",
            "clients made to wait",
            "their wait ms (sum)",
        ],
    );
    for (i, r) in rows.iter().take(TOP_ROWS).enumerate() {
        t.row(vec![
            (i + 1).to_string(),
            r.command.clone(),
            r.calls.to_string(),
            ms(r.run_us),
            r.waiters.to_string(),
            ms(r.waited_us),
        ]);
    }
    let mut out = t.render();
    if rows.is_empty() {
        out.push_str("  (no command has run since blame was turned on)\n");
    }
    out.push_str("\nworst single runs:\n");
    if worst.is_empty() {
        out.push_str("  (none yet made another client wait)\n");
    }
    for w in worst.iter().take(TOP_WORST) {
        out.push_str("  ");
        out.push_str(w);
        out.push('\n');
    }
    out
}

/// Run the view until `stop` or `seconds` have passed.
pub fn run(addr: &str, seconds: Option<u64>, stop: &AtomicBool) -> Result<(), String> {
    let client = redis::Client::open(format!("redis://{addr}/")).map_err(|e| e.to_string())?;
    let mut con = client
        .get_connection_with_timeout(Duration::from_secs(5))
        .map_err(|e| format!("cannot connect to {addr}: {e}"))?;
    let status = query_lines(&mut con, &["DEBUG", "RECORDER", "STATUS"]).map_err(|e| {
        format!(
            "{addr} has no blame to show (DEBUG RECORDER STATUS: {e}); \
             `top` needs redis-lite's flight recorder, which a real redis-server does not have"
        )
    })?;
    let we_started = !status.iter().any(|l| l == "recording:1");
    if we_started {
        redis::cmd("DEBUG")
            .arg("RECORDER")
            .arg("START")
            .query::<()>(&mut con)
            .map_err(|e| format!("DEBUG RECORDER START: {}", short_err(&e)))?;
        println!("top: turned the flight recorder on (DEBUG RECORDER START); it goes off when top leaves");
    }
    let started = Instant::now();
    let deadline = seconds.map(|s| started + Duration::from_secs(s));
    let tty = std::io::stdout().is_terminal();
    let result = loop {
        let rows = match query_lines(&mut con, &["DEBUG", "BLAME", "COMMANDS"]) {
            Ok(lines) => rank(lines.iter().filter_map(|l| parse_blame_line(l)).collect()),
            Err(e) => break Err(format!("DEBUG BLAME COMMANDS: {e}")),
        };
        let worst = query_lines(&mut con, &["DEBUG", "BLAME"]).unwrap_or_default();
        let text = render(addr, &rows, &worst, started.elapsed());
        let mut out = std::io::stdout().lock();
        if tty {
            // Clear the screen and go home, as top(1) does.
            let _ = write!(out, "\x1b[2J\x1b[H");
        } else {
            let _ = writeln!(out);
        }
        let _ = write!(out, "{text}");
        let _ = out.flush();
        drop(out);
        // Sleep a second in small steps, so Ctrl-C is prompt.
        let next = Instant::now() + TOP_INTERVAL;
        while Instant::now() < next && !stop.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(50));
        }
        if stop.load(Ordering::Relaxed) || deadline.is_some_and(|d| Instant::now() >= d) {
            break Ok(());
        }
    };
    if we_started {
        let _ = redis::cmd("DEBUG")
            .arg("RECORDER")
            .arg("STOP")
            .query::<()>(&mut con);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blame_lines_parse_and_rank_by_wait_caused() {
        let rows = [
            "GET: calls=100 run_us=500 queue_wait_us=9 waiters=0 waited_us=0",
            "KEYS: calls=1 run_us=97000 queue_wait_us=3 waiters=4 waited_us=371000",
            "DEBUG: calls=2 run_us=200000 queue_wait_us=1 waiters=3 waited_us=450000",
        ];
        let ranked = rank(rows.iter().filter_map(|l| parse_blame_line(l)).collect());
        let names: Vec<&str> = ranked.iter().map(|r| r.command.as_str()).collect();
        assert_eq!(names, ["DEBUG", "KEYS", "GET"]);
        assert_eq!(ranked[1].waiters, 4);
        assert_eq!(ranked[1].waited_us, 371_000);
        assert!(parse_blame_line("garbage").is_none());
        let text = render("127.0.0.1:6379", &ranked, &[], Duration::from_secs(3));
        assert!(text.contains("KEYS") && text.contains("371.000"), "{text}");
    }
}
