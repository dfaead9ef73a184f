//! Redis-style log lines (server.c serverLog / serverLogRaw).
//!
//! Format, as redis-server prints it:
//! `<pid>:<role> <day> <month> <year> <hh:mm:ss.mmm> <level char> <message>`
//! where role is `C` until the server is initialised (Redis compares the
//! pid with `server.pid`, set by initServer, so the first lines of every
//! start say `C`), `M` afterwards and in forked children `C` again; the
//! level char is `.` debug, `-` verbose, `*` notice, `#` warning.
//!
//! A signal handler may not take the logfile's lock: it logs with
//! `server_log_from_handler` (serverLogFromHandler), plain `write(2)` calls
//! on the descriptor kept in `LOGFILE_FD`, in Redis's own shorter format
//! `<pid>:signal-handler (<unix time>) <message>`.

use std::io::Write;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU8, Ordering};
use std::sync::Mutex;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum LogLevel {
    Debug = 0,
    Verbose = 1,
    Notice = 2,
    Warning = 3,
}

static VERBOSITY: AtomicU8 = AtomicU8::new(LogLevel::Notice as u8);
/// The role letter after the pid: `C` before initServer and in a forked
/// child (BGSAVE, a debugging session), `M` for the initialised master.
static ROLE: AtomicU8 = AtomicU8::new(b'C');
/// The logfile's descriptor for the signal handler, -1 for stdout.
static LOGFILE_FD: AtomicI32 = AtomicI32::new(-1);
/// Daemonized with the log on stdout: stdout is /dev/null, the signal
/// handler does not even write (as serverLogFromHandler).
static DAEMONIZED: AtomicBool = AtomicBool::new(false);

/// Set the role letter of every later line (`M` once initServer ran, `C`
/// in a BGSAVE child).
pub fn set_role(role: char) {
    ROLE.store(role as u8, Ordering::Relaxed);
}
static LOGFILE: Mutex<Option<std::fs::File>> = Mutex::new(None);

/// Remember that the process is a daemon (see `server_log_from_handler`).
pub fn set_daemonized() {
    DAEMONIZED.store(true, Ordering::Relaxed);
}

/// Would a line at `level` be logged? (To skip building costly ones.)
pub fn verbosity_at_most(level: LogLevel) -> bool {
    (level as u8) >= VERBOSITY.load(Ordering::Relaxed)
}

pub fn set_verbosity(level: LogLevel) {
    VERBOSITY.store(level as u8, Ordering::Relaxed);
}

/// Send log lines to a file instead of standard output ("" = stdout).
pub fn set_logfile(path: &str) -> std::io::Result<()> {
    let mut f = LOGFILE.lock().unwrap_or_else(|e| e.into_inner());
    if path.is_empty() {
        *f = None;
        LOGFILE_FD.store(-1, Ordering::Relaxed);
    } else {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        LOGFILE_FD.store(file.as_raw_fd(), Ordering::Relaxed);
        *f = Some(file);
    }
    Ok(())
}

/// serverLogRaw with LL_RAW: `msg` as is, no pid, time or level mark (the
/// logo, the bug report's banner lines).
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

/// The descriptor log lines go to (the logfile, or stdout): for writers
/// that must not allocate or lock, the signal handler and the backtrace.
pub fn log_fd() -> i32 {
    match LOGFILE_FD.load(Ordering::Relaxed) {
        -1 => libc::STDOUT_FILENO,
        fd => fd,
    }
}

/// serverLogFromHandler: log from a signal handler, where only
/// async-signal-safe calls are allowed: no lock, no allocation, no
/// formatting machinery; a few write(2) calls of stack buffers.
pub fn server_log_from_handler(level: LogLevel, msg: &str) {
    let to_stdout = LOGFILE_FD.load(Ordering::Relaxed) == -1;
    if (level as u8) < VERBOSITY.load(Ordering::Relaxed)
        || (to_stdout && DAEMONIZED.load(Ordering::Relaxed))
    {
        return;
    }
    let fd = log_fd();
    let mut buf = [0u8; 20];
    // SAFETY: getpid, time and write are async-signal-safe; every buffer
    // outlives its call.
    unsafe {
        let pid = format_u64(&mut buf, libc::getpid() as u64);
        libc::write(fd, pid.as_ptr().cast(), pid.len());
        let s = b":signal-handler (";
        libc::write(fd, s.as_ptr().cast(), s.len());
        let mut buf = [0u8; 20];
        let t = format_u64(&mut buf, libc::time(std::ptr::null_mut()) as u64);
        libc::write(fd, t.as_ptr().cast(), t.len());
        libc::write(fd, b") ".as_ptr().cast(), 2);
        libc::write(fd, msg.as_ptr().cast(), msg.len());
        libc::write(fd, b"\n".as_ptr().cast(), 1);
    }
}

/// ll2string without allocating: the decimal digits of `n`, in `buf`.
fn format_u64(buf: &mut [u8; 20], mut n: u64) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[i..];
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

    #[test]
    fn handler_digits_are_decimal() {
        let mut buf = [0u8; 20];
        assert_eq!(super::format_u64(&mut buf, 0), b"0");
        assert_eq!(super::format_u64(&mut buf, 1796187769), b"1796187769");
        assert_eq!(
            super::format_u64(&mut buf, u64::MAX),
            b"18446744073709551615"
        );
    }
}
