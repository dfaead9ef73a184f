//! Ctrl-C: stop what the lab started, wipe what it wrote elsewhere.
//!
//! Every process the lab spawns (servers, redis-benchmark) is registered
//! here by pid the moment it exists, and every foreign `--target` with the
//! config values to put back. On SIGINT/SIGTERM the handler thread flushes
//! the foreign targets (the lab only ever runs on an empty one, or one the
//! user allowed it to wipe), restores their config, kills the children and
//! exits with 130. Servers the lab started also die with it by
//! PR_SET_PDEATHSIG, should the lab itself be killed with SIGKILL.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

struct Registry {
    children: Vec<u32>,
    foreign: Vec<(SocketAddr, Vec<(String, String)>)>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    children: Vec::new(),
    foreign: Vec::new(),
});

fn registry() -> std::sync::MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn register_child(pid: u32) {
    registry().children.push(pid);
}

pub fn unregister_child(pid: u32) {
    registry().children.retain(|p| *p != pid);
}

/// A foreign target and the config to put back on it.
pub fn register_foreign(addr: SocketAddr, restore: Vec<(String, String)>) {
    let mut r = registry();
    r.foreign.retain(|(a, _)| *a != addr);
    r.foreign.push((addr, restore));
}

pub fn unregister_foreign(addr: SocketAddr) {
    registry().foreign.retain(|(a, _)| *a != addr);
}

/// FLUSHALL and CONFIG SET back, on a foreign target.
pub fn restore_foreign(con: &mut redis::Connection, restore: &[(String, String)]) {
    let _ = redis::cmd("FLUSHALL").query::<redis::Value>(con);
    for (k, v) in restore {
        let _ = redis::cmd("CONFIG")
            .arg("SET")
            .arg(k)
            .arg(v)
            .query::<redis::Value>(con);
    }
}

/// Set the moment Ctrl-C arrives: the main thread then leaves the exit
/// to the handler (which exits with 130 once everything is cleaned up).
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Install the Ctrl-C handler (once, at start-up).
pub fn install() {
    let _ = ctrlc::set_handler(|| {
        INTERRUPTED.store(true, Ordering::SeqCst);
        eprintln!("\ninterrupted: stopping the servers the lab started and cleaning up ...");
        run();
        std::process::exit(130);
    });
}

/// Do the cleanup now (the handler's body, also usable on fatal errors).
pub fn run() {
    let (children, foreign) = {
        let r = registry();
        (r.children.clone(), r.foreign.clone())
    };
    for (addr, restore) in &foreign {
        let url = format!("redis://{addr}/");
        if let Ok(client) = redis::Client::open(url) {
            if let Ok(mut con) = client.get_connection_with_timeout(Duration::from_secs(2)) {
                // A blocker may still be running there; FLUSHALL queues
                // behind it, so give it time.
                let _ = con.set_read_timeout(Some(Duration::from_secs(60)));
                restore_foreign(&mut con, restore);
                eprintln!("  {addr}: keys flushed, config restored");
            }
        }
    }
    for pid in &children {
        // SAFETY: kill(2) on pids we spawned and registered.
        unsafe {
            libc::kill(*pid as i32, libc::SIGTERM);
        }
    }
    let deadline = Instant::now() + Duration::from_secs(2);
    for pid in &children {
        while Instant::now() < deadline && alive(*pid) {
            std::thread::sleep(Duration::from_millis(20));
        }
        if alive(*pid) {
            // SAFETY: as above.
            unsafe {
                libc::kill(*pid as i32, libc::SIGKILL);
            }
        }
    }
    if !children.is_empty() {
        eprintln!("  stopped {} process(es) the lab started", children.len());
    }
    // Temporary server directories.
    if let Ok(rd) = std::fs::read_dir(std::env::temp_dir()) {
        let prefix = format!("redis-lite-lab-{}-", std::process::id());
        for e in rd.flatten() {
            if e.file_name().to_string_lossy().starts_with(&prefix) {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
}

/// True while the process exists and is not a zombie we could reap.
fn alive(pid: u32) -> bool {
    let mut status = 0;
    // SAFETY: waitpid with WNOHANG on our own child; reaps it if it exited.
    let r = unsafe { libc::waitpid(pid as i32, &mut status, libc::WNOHANG) };
    if r == pid as i32 {
        return false;
    }
    // SAFETY: signal 0 only checks existence.
    unsafe { libc::kill(pid as i32, 0) == 0 }
}
