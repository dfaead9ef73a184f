//! Redis-style log lines (server.c serverLog / serverLogRaw).
//!
//! Format, as redis-server prints it:
//! `<pid>:<role> <day> <month> <year> <hh:mm:ss.mmm> <level char> <message>`
//! where role is `M` (master) and the level char is `.` debug, `-` verbose,
//! `*` notice, `#` warning.

use std::io::Write;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Mutex;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum LogLevel {
    Debug = 0,
    Verbose = 1,
    Notice = 2,
    Warning = 3,
}

static VERBOSITY: AtomicU8 = AtomicU8::new(LogLevel::Notice as u8);
/// The role letter after the pid: `M` master, `C` a forked child (BGSAVE, a debugging session).
static ROLE: AtomicU8 = AtomicU8::new(b'M');

/// Set the role letter of every later line (a BGSAVE child logs as `C`).
pub fn set_role(role: char) {
    ROLE.store(role as u8, Ordering::Relaxed);
}
static LOGFILE: Mutex<Option<std::fs::File>> = Mutex::new(None);

pub fn set_verbosity(level: LogLevel) {
    VERBOSITY.store(level as u8, Ordering::Relaxed);
}

/// Send log lines to a file instead of standard output ("" = stdout).
pub fn set_logfile(path: &str) -> std::io::Result<()> {
    let mut f = LOGFILE.lock().unwrap_or_else(|e| e.into_inner());
    if path.is_empty() {
        *f = None;
    } else {
        *f = Some(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)?,
        );
    }
    Ok(())
}

/// serverLogRaw(LL_NOTICE|LL_RAW): `msg` as is, without the pid/time
/// prefix (the start-up logo).
pub fn server_log_raw(level: LogLevel, msg: &str) {
    if (level as u8) < VERBOSITY.load(Ordering::Relaxed) {
        return;
    }
    let mut f = LOGFILE.lock().unwrap_or_else(|e| e.into_inner());
    match f.as_mut() {
        Some(file) => {
            let _ = file.write_all(msg.as_bytes());
        }
        None => {
            let _ = std::io::stdout().write_all(msg.as_bytes());
        }
    }
}

pub fn server_log(level: LogLevel, msg: &str) {
    if (level as u8) < VERBOSITY.load(Ordering::Relaxed) {
        return;
    }
    let c = match level {
        LogLevel::Debug => '.',
        LogLevel::Verbose => '-',
        LogLevel::Notice => '*',
        LogLevel::Warning => '#',
    };
    let role = ROLE.load(Ordering::Relaxed) as char;
    let line = format!(
        "{}:{role} {} {} {}\n",
        std::process::id(),
        timestamp(),
        c,
        msg
    );
    let mut f = LOGFILE.lock().unwrap_or_else(|e| e.into_inner());
    match f.as_mut() {
        Some(file) => {
            let _ = file.write_all(line.as_bytes());
        }
        None => {
            let _ = std::io::stdout().write_all(line.as_bytes());
        }
    }
}

/// `30 Nov 2026 03:25:12.345` in local time (UTC here), like strftime
/// "%d %b %Y %H:%M:%S" plus milliseconds.
fn timestamp() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = now.as_secs() as i64;
    let ms = now.subsec_millis();
    let days = secs.div_euclid(86400);
    let rem = secs.rem_euclid(86400);
    let (y, m, d) = civil_from_days(days);
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{:02} {} {} {:02}:{:02}:{:02}.{:03}",
        d,
        MONTHS[(m - 1) as usize],
        y,
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60,
        ms
    )
}

/// Days since 1970-01-01 -> (year, month, day), Howard Hinnant's algorithm.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    #[test]
    fn civil_dates_are_right() {
        assert_eq!(super::civil_from_days(0), (1970, 1, 1));
        assert_eq!(super::civil_from_days(20787), (2026, 11, 30));
    }
}
