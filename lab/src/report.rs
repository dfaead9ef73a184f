//! What a run prints: tables, the lesson lines with their ratios, progress.
//!
//! Every experiment prints the same way: a header per server (identity and
//! the config that shapes the result), one table whose rows carry a
//! `server` column (with `--compare` each row appears twice, redis-lite then
//! redis), then one line per lesson with the measured ratio on each server
//! and whether it points the way the post says.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{json, Value};

use crate::target::Identity;

/// A table: headers and rows of already formatted cells.
pub struct Table {
    pub title: String,
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(title: &str, headers: &[&str]) -> Table {
        Table {
            title: title.to_string(),
            headers: headers.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// Render with columns padded to their widest cell; text columns are
    /// left-aligned, numeric ones right-aligned.
    pub fn render(&self) -> String {
        let ncol = self.headers.len();
        let mut width: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for r in &self.rows {
            for (i, c) in r.iter().enumerate().take(ncol) {
                width[i] = width[i].max(c.chars().count());
            }
        }
        let numeric: Vec<bool> = (0..ncol)
            .map(|i| {
                self.rows
                    .iter()
                    .any(|r| r.get(i).is_some_and(|c| looks_numeric(c)))
                    && self.rows.iter().all(|r| {
                        r.get(i)
                            .is_none_or(|c| looks_numeric(c) || c == "-" || c.starts_with("n/a"))
                    })
            })
            .collect();
        let mut out = String::new();
        out.push_str(&format!("\n{}\n", self.title));
        let line = |cells: &[String], out: &mut String| {
            let mut parts = Vec::new();
            for i in 0..ncol {
                let c = cells.get(i).map(String::as_str).unwrap_or("");
                let pad = width[i].saturating_sub(c.chars().count());
                if numeric[i] {
                    parts.push(format!("{}{}", " ".repeat(pad), c));
                } else {
                    parts.push(format!("{}{}", c, " ".repeat(pad)));
                }
            }
            out.push_str("  ");
            out.push_str(parts.join("  ").trim_end());
            out.push('\n');
        };
        line(&self.headers, &mut out);
        let rule: Vec<String> = width.iter().map(|w| "-".repeat(*w)).collect();
        line(&rule, &mut out);
        for r in &self.rows {
            line(r, &mut out);
        }
        out
    }

    pub fn print(&self) {
        print!("{}", self.render());
    }

    pub fn to_json(&self) -> Value {
        let rows: Vec<Value> = self
            .rows
            .iter()
            .map(|r| {
                let mut m = serde_json::Map::new();
                for (h, c) in self.headers.iter().zip(r) {
                    m.insert(h.clone(), Value::from(c.clone()));
                }
                Value::Object(m)
            })
            .collect();
        json!({ "title": self.title, "rows": rows })
    }
}

fn looks_numeric(c: &str) -> bool {
    let c = c.trim_end_matches(['x', '%']).replace(',', "");
    !c.is_empty() && c.parse::<f64>().is_ok()
}

/// Milliseconds with a precision that suits their size.
pub fn fmt_ms(v: f64) -> String {
    if !v.is_finite() {
        "n/a".into()
    } else if v < 1.0 {
        format!("{v:.3}")
    } else if v < 10.0 {
        format!("{v:.2}")
    } else if v < 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

pub fn fmt_opt_ms(v: Option<f64>) -> String {
    v.map(fmt_ms).unwrap_or_else(|| "-".into())
}

/// A ratio as "12.3x".
pub fn fmt_ratio(v: Option<f64>) -> String {
    match v {
        Some(r) if r.is_finite() => {
            if r >= 10.0 {
                format!("{r:.1}x")
            } else if r >= 0.1 || r == 0.0 {
                format!("{r:.2}x")
            } else {
                // Three significant digits for small ratios (0.00312x).
                let digits = (-r.log10()).ceil() as usize + 2;
                format!("{r:.digits$}x")
            }
        }
        _ => "n/a".into(),
    }
}

/// Which way a lesson's ratio must point for the lesson to hold.
#[derive(Clone, Copy, Debug)]
pub enum Direction {
    /// The ratio must be above this (e.g. KEYS max / PING max > 1).
    Above(f64),
    /// The ratio must be below this (e.g. throughput with monitor / without < 1).
    Below(f64),
}

impl Direction {
    pub fn holds(&self, r: f64) -> bool {
        match *self {
            Direction::Above(t) => r > t,
            Direction::Below(t) => r < t,
        }
    }

    fn describe(&self) -> String {
        match *self {
            Direction::Above(t) => format!("> {t}"),
            Direction::Below(t) => format!("< {t}"),
        }
    }
}

/// One lesson: a sentence, the ratio that carries it, its value per server.
pub struct Lesson {
    pub id: String,
    pub sentence: String,
    pub ratio_name: String,
    pub direction: Direction,
    pub values: Vec<(String, Option<f64>)>,
    /// An extra sentence printed under the ratio (how to read it).
    pub note: Option<String>,
}

impl Lesson {
    pub fn new(id: &str, sentence: &str, ratio_name: &str, direction: Direction) -> Lesson {
        Lesson {
            id: id.into(),
            sentence: sentence.into(),
            ratio_name: ratio_name.into(),
            direction,
            values: Vec::new(),
            note: None,
        }
    }

    pub fn value(mut self, label: &str, v: Option<f64>) -> Lesson {
        self.values.push((label.to_string(), v));
        self
    }

    pub fn note(mut self, n: String) -> Lesson {
        self.note = Some(n);
        self
    }

    /// Some(true) when the ratio points the post's way on this server.
    pub fn holds_on(&self, label: &str) -> Option<bool> {
        let v = self.values.iter().find(|(l, _)| l == label)?.1?;
        Some(self.direction.holds(v))
    }

    pub fn render(&self) -> String {
        let mut s = format!("lesson: {}\n", self.sentence);
        let parts: Vec<String> = self
            .values
            .iter()
            .map(|(l, v)| {
                let verdict = match v {
                    Some(r) if self.direction.holds(*r) => "holds",
                    Some(_) => "does NOT hold",
                    None => "not measured",
                };
                format!("{l} {} ({verdict})", fmt_ratio(*v))
            })
            .collect();
        s.push_str(&format!(
            "        {} [{}]: {}\n",
            self.ratio_name,
            self.direction.describe(),
            parts.join(" | ")
        ));
        let known: Vec<bool> = self
            .values
            .iter()
            .filter_map(|(_, v)| v.map(|r| self.direction.holds(r)))
            .collect();
        if known.len() >= 2 {
            let same = known.iter().all(|h| *h == known[0]);
            s.push_str(&format!(
                "        {}\n",
                if same {
                    "same direction on both servers"
                } else {
                    "the servers DISAGREE on this lesson"
                }
            ));
        }
        if let Some(n) = &self.note {
            s.push_str(&format!("        {n}\n"));
        }
        s
    }

    pub fn print(&self) {
        print!("{}", self.render());
    }

    pub fn to_json(&self) -> Value {
        json!({
            "id": self.id,
            "sentence": self.sentence,
            "ratio": self.ratio_name,
            "holds_if": self.direction.describe(),
            "values": self.values.iter().map(|(l, v)| json!({
                "server": l,
                "ratio": v,
                "holds": v.map(|r| self.direction.holds(r)),
            })).collect::<Vec<_>>(),
            "note": self.note,
        })
    }
}

/// The header of an experiment for one server.
pub fn print_identity(label: &str, addr: &str, id: &Identity) {
    println!(
        "  {label} at {addr}: redis_version {} | multiplexing_api {} | io_threads_active {}",
        id.version, id.multiplexing_api, id.io_threads_active
    );
    let cfg: Vec<String> = id.config.iter().map(|(k, v)| format!("{k} {v}")).collect();
    println!("    config: {}", cfg.join(", "));
    if !id.threads.is_empty() {
        println!(
            "    threads (/proc/PID/task/*/comm): {} (one of them, the first, runs every command)",
            id.threads.join(", ")
        );
    }
}

/// The banner of an experiment.
pub fn print_banner(name: &str, what: &str) {
    println!("\n=== {name}: {what}");
}

/// A note line under a table (missing tools, unsupported commands...).
pub fn note(msg: &str) {
    println!("  note: {msg}");
}

/// A spinner for one long step (a command that runs for seconds).
pub fn spinner(msg: String) -> ProgressBar {
    let pb = ProgressBar::new_spinner();
    pb.set_style(
        ProgressStyle::with_template("  {spinner} {msg} ({elapsed})").expect("valid template"),
    );
    pb.set_message(msg);
    pb.enable_steady_tick(Duration::from_millis(120));
    pb
}

/// A bar for a long step done in pieces (building a set, settling).
pub fn bar(len: u64, msg: String) -> ProgressBar {
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template("  {msg} [{bar:30}] {pos}/{len} ({elapsed})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    pb.set_message(msg);
    pb
}

/// Sleep `d` while a bar counts the seconds (settle periods, baselines).
pub fn wait_with_bar(d: Duration, msg: String) {
    let steps = (d.as_millis() / 100).max(1) as u64;
    let pb = bar(steps, msg);
    for _ in 0..steps {
        std::thread::sleep(Duration::from_millis(100));
        pb.inc(1);
    }
    pb.finish_and_clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_aligns_numbers_right_and_text_left() {
        let mut t = Table::new("T", &["step", "server", "max ms"]);
        t.row(vec!["PING".into(), "redis-lite".into(), "0.5".into()]);
        t.row(vec!["KEYS nomatch*".into(), "redis".into(), "68.4".into()]);
        let r = t.render();
        let lines: Vec<&str> = r.lines().collect();
        assert_eq!(lines[1], "T");
        assert_eq!(lines[2], "  step           server      max ms");
        assert_eq!(lines[4], "  PING           redis-lite     0.5");
        assert_eq!(lines[5], "  KEYS nomatch*  redis         68.4");
    }

    #[test]
    fn lesson_says_whether_it_holds_and_agrees() {
        let l = Lesson::new(
            "x",
            "KEYS blocks",
            "KEYS max / PING max",
            Direction::Above(1.0),
        )
        .value("redis-lite", Some(90.0))
        .value("redis", Some(0.5));
        let r = l.render();
        assert!(r.contains("redis-lite 90.0x (holds)"), "{r}");
        assert!(r.contains("redis 0.50x (does NOT hold)"), "{r}");
        assert!(r.contains("DISAGREE"), "{r}");
        assert_eq!(l.holds_on("redis-lite"), Some(true));
        assert_eq!(l.holds_on("redis"), Some(false));
        assert_eq!(l.holds_on("nobody"), None);
    }

    #[test]
    fn number_formats() {
        assert_eq!(fmt_ms(0.1234), "0.123");
        assert_eq!(fmt_ms(5.678), "5.68");
        assert_eq!(fmt_ms(68.44), "68.4");
        assert_eq!(fmt_ms(517.4), "517");
        assert_eq!(fmt_ratio(Some(93.12)), "93.1x");
        assert_eq!(fmt_ratio(None), "n/a");
        assert_eq!(fmt_ratio(Some(0.5)), "0.50x");
        assert_eq!(fmt_ratio(Some(0.00312)), "0.00312x");
    }
}
