//! The servers the lab measures: the redis-lite built in this workspace, a
//! real `redis-server` from PATH (`--compare`), or any running server
//! (`--target HOST:PORT`).
//!
//! Servers the lab starts run on a free port in a temporary directory with
//! the config the posts pin (hz 10, lazyfree-lazy-user-del no, io-threads 1,
//! no save, no appendonly, DEBUG enabled) and are stopped at the end, or on
//! Ctrl-C by `cleanup::run` (every started process and every foreign target
//! is registered there the moment it exists).

use std::fs::File;
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use redis::Value;

use crate::cleanup;

/// The config the posts pin, as command-line directives (both servers
/// accept Redis's `--name value` form).
pub const POST_CONFIG: &[(&str, &str)] = &[
    ("hz", "10"),
    ("lazyfree-lazy-user-del", "no"),
    ("io-threads", "1"),
    ("save", ""),
    ("appendonly", "no"),
    ("enable-debug-command", "yes"),
];

/// The modifiable part of it, set with CONFIG SET on a `--target` server
/// (and put back at the end).
pub const POST_RUNTIME_CONFIG: &[(&str, &str)] = &[("hz", "10"), ("lazyfree-lazy-user-del", "no")];

/// Config that shapes the results, printed before every experiment.
pub const SHAPING_CONFIG: &[&str] = &[
    "hz",
    "lazyfree-lazy-user-del",
    "lazyfree-lazy-expire",
    "lazyfree-lazy-eviction",
    "lazyfree-lazy-server-del",
    "io-threads",
    "maxmemory",
    "maxmemory-policy",
    "latency-monitor-threshold",
    "slowlog-log-slower-than",
];

/// How long a started server may take to answer PING.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(20);

/// One server under test.
pub struct Target {
    /// "redis-lite", "redis" or "target".
    pub label: String,
    pub addr: SocketAddr,
    /// The server's process id, when it runs on this machine (from INFO
    /// server, or the child we started): /proc/PID/task is read for thread
    /// names and main-thread CPU.
    pub pid: Option<u32>,
    /// Started by the lab (and stopped by it), or someone else's.
    pub started: bool,
    child: Option<Child>,
    dir: Option<PathBuf>,
    /// CONFIG values the lab changed on a foreign server, to put back.
    restore: Vec<(String, String)>,
    /// A foreign server is flushed at the end only once it was accepted
    /// (empty, or --force-flush): a refused one is never touched.
    armed: bool,
}

impl Target {
    /// A URL for the redis crate.
    pub fn url(&self) -> String {
        format!("redis://{}/", self.addr)
    }

    /// A fresh connection with generous timeouts (a blocker may run for
    /// seconds; a dead server must not hang the lab forever).
    pub fn connect(&self) -> Result<redis::Connection, String> {
        let client = redis::Client::open(self.url()).map_err(|e| e.to_string())?;
        let con = client
            .get_connection_with_timeout(Duration::from_secs(5))
            .map_err(|e| format!("cannot connect to {} at {}: {e}", self.label, self.addr))?;
        con.set_read_timeout(Some(Duration::from_secs(120)))
            .map_err(|e| e.to_string())?;
        con.set_write_timeout(Some(Duration::from_secs(30)))
            .map_err(|e| e.to_string())?;
        Ok(con)
    }

    /// Start the redis-lite binary `bin` on a free port.
    pub fn start_redis_lite(bin: &Path) -> Result<Target, String> {
        Self::start_local("redis-lite", bin)
    }

    /// Start a real `redis-server` from PATH.
    pub fn start_redis_server() -> Result<Target, String> {
        let bin = which("redis-server").ok_or_else(|| {
            "--compare needs a real redis-server on PATH, and there is none.\n  \
             Install it with:  apt-get install -y redis-server\n  \
             (or run without --compare to measure redis-lite alone)"
                .to_string()
        })?;
        Self::start_local("redis", &bin)
    }

    fn start_local(label: &str, bin: &Path) -> Result<Target, String> {
        let mut last = String::new();
        for _attempt in 0..3 {
            let port = free_port()?;
            let dir = std::env::temp_dir().join(format!(
                "redis-lite-lab-{}-{}-{}",
                std::process::id(),
                label,
                port
            ));
            std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            let log = dir.join("server.log");
            let out = File::create(&log).map_err(|e| e.to_string())?;
            let err = out.try_clone().map_err(|e| e.to_string())?;
            let mut cmd = Command::new(bin);
            cmd.arg("--port").arg(port.to_string());
            cmd.arg("--bind").arg("127.0.0.1");
            cmd.arg("--dir").arg(&dir);
            for (k, v) in POST_CONFIG {
                cmd.arg(format!("--{k}")).arg(v);
            }
            cmd.current_dir(&dir)
                .stdin(Stdio::null())
                .stdout(out)
                .stderr(err);
            // SAFETY: prctl is async-signal-safe; it asks the kernel to kill
            // the server when the lab dies, even by SIGKILL.
            unsafe {
                cmd.pre_exec(|| {
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                    Ok(())
                });
            }
            // Ctrl-C in the terminal goes to the whole foreground process
            // group; the server must not die before the lab has cleaned up,
            // so it gets a group of its own.
            cmd.process_group(0);
            let child = cmd
                .spawn()
                .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
            let pid = child.id();
            cleanup::register_child(pid);
            let addr: SocketAddr = ([127, 0, 0, 1], port).into();
            let mut t = Target {
                label: label.to_string(),
                addr,
                pid: Some(pid),
                started: true,
                child: Some(child),
                dir: Some(dir.clone()),
                restore: Vec::new(),
                armed: true,
            };
            match t.wait_ready() {
                Ok(()) => return Ok(t),
                Err(e) => {
                    let tail = std::fs::read_to_string(&log).unwrap_or_default();
                    last = format!(
                        "{e}\n{}",
                        tail.lines().rev().take(10).collect::<Vec<_>>().join("\n")
                    );
                }
            }
        }
        Err(format!("{label} ({}) did not start: {last}", bin.display()))
    }

    fn wait_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + STARTUP_TIMEOUT;
        loop {
            if let Some(child) = self.child.as_mut() {
                if let Ok(Some(status)) = child.try_wait() {
                    return Err(format!("{} exited during start-up: {status}", self.label));
                }
            }
            if let Ok(mut con) = self.connect() {
                if redis::cmd("PING").query::<String>(&mut con).is_ok() {
                    return Ok(());
                }
            }
            if Instant::now() > deadline {
                return Err(format!("{} did not answer PING in time", self.label));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// A running server at HOST:PORT. Refuses one that holds keys unless
    /// `force_flush`: the lab wipes its target.
    pub fn external(hostport: &str, force_flush: bool) -> Result<Target, String> {
        let addr = hostport
            .to_socket_addrs()
            .map_err(|e| format!("--target {hostport}: {e}"))?
            .next()
            .ok_or_else(|| format!("--target {hostport}: no address"))?;
        let mut t = Target {
            label: "target".to_string(),
            addr,
            pid: None,
            started: false,
            child: None,
            dir: None,
            restore: Vec::new(),
            armed: false,
        };
        let mut con = t.connect().map_err(|e| {
            format!("{e}\n  (is a server running there? start one, or drop --target to let the lab start redis-lite)")
        })?;
        let keyspace = info_section(&mut con, "keyspace")?;
        let dbs: Vec<String> = keyspace
            .lines()
            .filter(|l| l.starts_with("db"))
            .map(|l| l.trim().to_string())
            .collect();
        if !dbs.is_empty() && !force_flush {
            return Err(format!(
                "the target {addr} holds keys ({}).\n  The lab wipes its target (FLUSHALL); \
                 pass --force-flush to allow that, or point it at an empty server.",
                dbs.join(", ")
            ));
        }
        // The pid from INFO is only meaningful for a server on this machine.
        if addr.ip().is_loopback() {
            let server = info_section(&mut con, "server")?;
            if let Some(pid) = info_field(&server, "process_id").and_then(|p| p.parse().ok()) {
                if Path::new(&format!("/proc/{pid}/task")).exists() {
                    t.pid = Some(pid);
                }
            }
        }
        // The posts' modifiable config, remembered for putting back.
        for (k, v) in POST_RUNTIME_CONFIG {
            if let Some(old) = config_get(&mut con, k) {
                if old != *v {
                    t.restore.push((k.to_string(), old));
                }
            }
            let _ = redis::cmd("CONFIG")
                .arg("SET")
                .arg(*k)
                .arg(*v)
                .query::<Value>(&mut con);
        }
        cleanup::register_foreign(addr, t.restore.clone());
        t.armed = true;
        Ok(t)
    }

    /// Remember a CONFIG value to put back at the end (foreign targets only).
    pub fn remember_config(&mut self, con: &mut redis::Connection, name: &str) {
        if self.started || self.restore.iter().any(|(k, _)| k == name) {
            return;
        }
        if let Some(old) = config_get(con, name) {
            self.restore.push((name.to_string(), old));
            cleanup::register_foreign(self.addr, self.restore.clone());
        }
    }

    /// Wipe the keys and put back the config of a foreign target; stop a
    /// started server and remove its directory.
    pub fn finish(&mut self) {
        if !self.armed || cleanup::interrupted() {
            return; // never accepted, or the Ctrl-C handler does it
        }
        self.armed = false;
        if self.started {
            if let Some(mut child) = self.child.take() {
                stop_child(&mut child);
                cleanup::unregister_child(child.id());
            }
            if let Some(dir) = self.dir.take() {
                let _ = std::fs::remove_dir_all(dir);
            }
        } else if let Ok(mut con) = self.connect() {
            cleanup::restore_foreign(&mut con, &self.restore);
            cleanup::unregister_foreign(self.addr);
        }
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        self.finish();
    }
}

/// SIGTERM, then SIGKILL after a second.
pub fn stop_child(child: &mut Child) {
    // SAFETY: plain kill(2) on our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// A port that was free a moment ago.
pub fn free_port() -> Result<u16, String> {
    let l = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("bind 127.0.0.1:0: {e}"))?;
    Ok(l.local_addr().map_err(|e| e.to_string())?.port())
}

/// Find an executable on PATH, like `command -v`.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

pub fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// Where the redis-lite of this workspace is: `--redis-lite-bin`, else
/// `redis-lite` next to the lab's own binary (same cargo target dir), built
/// with cargo when it is missing or older than the server's sources.
pub fn locate_redis_lite(explicit: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(p) = explicit {
        return if is_executable(p) {
            Ok(p.to_path_buf())
        } else {
            Err(format!(
                "--redis-lite-bin {}: not an executable",
                p.display()
            ))
        };
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let dir = exe.parent().ok_or("the lab binary has no directory")?;
    // target/<profile>/redis-lite-lab, or target/<profile>/deps/... for tests.
    let profile_dir = if dir.file_name().is_some_and(|n| n == "deps") {
        dir.parent().unwrap_or(dir)
    } else {
        dir
    };
    let candidate = profile_dir.join("redis-lite");
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf);
    let stale = match (&workspace, modified(&candidate)) {
        (_, None) => true,
        (Some(ws), Some(built)) => newest_source(ws).is_some_and(|src| src > built),
        (None, Some(_)) => false,
    };
    if !stale {
        return Ok(candidate);
    }
    let Some(ws) = workspace.filter(|w| w.join("Cargo.toml").exists()) else {
        return if is_executable(&candidate) {
            Ok(candidate)
        } else {
            Err(format!(
                "redis-lite not found at {} and the workspace is not here to build it;\n  \
                 pass --redis-lite-bin PATH",
                candidate.display()
            ))
        };
    };
    let profile = profile_dir
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("release")
        .to_string();
    let profile_arg = if profile == "debug" {
        "dev".to_string()
    } else {
        profile.clone()
    };
    let what = if is_executable(&candidate) {
        "older than its sources"
    } else {
        "not built yet"
    };
    eprintln!(
        "redis-lite is {what}: building it (cargo build --profile {profile_arg} --bin redis-lite) ..."
    );
    let target_dir = profile_dir.parent().unwrap_or(profile_dir);
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args([
            "build",
            "--profile",
            &profile_arg,
            "--bin",
            "redis-lite",
            "--target-dir",
        ])
        .arg(target_dir)
        .current_dir(&ws)
        .stdin(Stdio::null())
        .status()
        .map_err(|e| format!("cannot run cargo to build redis-lite: {e}"))?;
    if !status.success() || !is_executable(&candidate) {
        return Err(format!(
            "building redis-lite failed ({status}); build it yourself with\n  \
             cargo build --release --bin redis-lite   (then run the lab again)"
        ));
    }
    Ok(candidate)
}

fn modified(p: &Path) -> Option<SystemTime> {
    std::fs::metadata(p).ok()?.modified().ok()
}

/// The newest modification time among the server's sources.
fn newest_source(ws: &Path) -> Option<SystemTime> {
    let mut newest = modified(&ws.join("Cargo.toml"));
    let mut stack: Vec<PathBuf> = ["server", "protocol", "storage", "lazyfree"]
        .iter()
        .map(|d| ws.join(d))
        .collect();
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Some(m) = modified(&p) {
                newest = Some(newest.map_or(m, |n| n.max(m)));
            }
        }
    }
    newest
}

// ---------------------------------------------------------------------------
// Small queries every experiment uses
// ---------------------------------------------------------------------------

/// INFO <section> as text.
pub fn info_section(con: &mut redis::Connection, section: &str) -> Result<String, String> {
    redis::cmd("INFO")
        .arg(section)
        .query::<String>(con)
        .map_err(|e| format!("INFO {section}: {e}"))
}

/// One `name:value` field of INFO text.
pub fn info_field(info: &str, name: &str) -> Option<String> {
    info.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k == name).then(|| v.trim().to_string())
    })
}

/// A numeric INFO field.
pub fn info_f64(info: &str, name: &str) -> Option<f64> {
    info_field(info, name)?.parse().ok()
}

/// CONFIG GET name -> value.
pub fn config_get(con: &mut redis::Connection, name: &str) -> Option<String> {
    let v: Vec<String> = redis::cmd("CONFIG").arg("GET").arg(name).query(con).ok()?;
    v.get(1).cloned()
}

/// The server's identity and the config that shapes the results.
pub struct Identity {
    pub version: String,
    pub multiplexing_api: String,
    pub io_threads_active: String,
    pub config: Vec<(String, String)>,
    pub threads: Vec<String>,
}

impl Identity {
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "redis_version": self.version,
            "multiplexing_api": self.multiplexing_api,
            "io_threads_active": self.io_threads_active,
            "config": self.config.iter().map(|(k, v)| (k.clone(), serde_json::Value::from(v.clone()))).collect::<serde_json::Map<_, _>>(),
            "threads": self.threads,
        })
    }
}

pub fn identity(t: &Target) -> Result<Identity, String> {
    let mut con = t.connect()?;
    let server = info_section(&mut con, "server")?;
    let config = SHAPING_CONFIG
        .iter()
        .map(|k| {
            (
                k.to_string(),
                config_get(&mut con, k).unwrap_or_else(|| "(unknown)".into()),
            )
        })
        .collect();
    Ok(Identity {
        version: info_field(&server, "redis_version").unwrap_or_default(),
        multiplexing_api: info_field(&server, "multiplexing_api").unwrap_or_default(),
        io_threads_active: info_field(&server, "io_threads_active").unwrap_or_default(),
        config,
        threads: t.pid.map(thread_names).unwrap_or_default(),
    })
}

/// /proc/PID/task/*/comm: one thread runs the commands, the others are
/// helpers (bio_lazy_free, bio_close_file, bio_aof, jemalloc).
pub fn thread_names(pid: u32) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut tasks: Vec<(u32, String)> = rd
        .flatten()
        .filter_map(|e| {
            let tid: u32 = e.file_name().to_str()?.parse().ok()?;
            let comm = std::fs::read_to_string(e.path().join("comm")).ok()?;
            Some((tid, comm.trim().to_string()))
        })
        .collect();
    tasks.sort();
    tasks.into_iter().map(|(_, c)| c).collect()
}

/// CPU seconds (user + system) of a process's main thread, from
/// /proc/PID/task/PID/stat (fields 14 and 15, in clock ticks).
pub fn main_thread_cpu_proc(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/stat")).ok()?;
    // The command name may hold spaces: fields start after the last ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = f.get(11)?.parse().ok()?;
    let stime: f64 = f.get(12)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    Some((utime + stime) / hz)
}

/// An error reply or transport failure, as one line for a table.
pub fn short_err(e: &redis::RedisError) -> String {
    let s = e.to_string();
    let s = s.strip_prefix("ResponseError: ").unwrap_or(&s);
    let s = s.trim_end_matches(", with args beginning with: ");
    s.lines()
        .next()
        .unwrap_or("error")
        .chars()
        .take(90)
        .collect()
}

/// True when an error says the server does not know the command.
pub fn is_unknown_command(e: &redis::RedisError) -> bool {
    let s = e.to_string().to_ascii_lowercase();
    s.contains("unknown command") || s.contains("unknown subcommand")
}
