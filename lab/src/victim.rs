//! Victims: clients that keep sending a cheap command (GET of a hot key)
//! and record each reply time. They do not know about any blocker; what
//! they record is how long an unrelated client waited.
//!
//! Each victim is a thread with its own connection. All of a group's
//! samples share one epoch with the experiment, so the experiment can cut
//! them into windows afterwards (`stats::Window`). With `--compare` the
//! group of the server not being measured is paused, so the two servers'
//! victims never compete for the 2 cores.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::stats::Sample;
use crate::target::Target;

/// The hot key every victim reads.
pub const HOT_KEY: &str = "lab:hot";

/// A group of victim threads on one server.
pub struct VictimGroup {
    stop: Arc<AtomicBool>,
    paused: Arc<AtomicBool>,
    errors: Arc<AtomicU64>,
    threads: Vec<JoinHandle<Vec<Sample>>>,
}

impl VictimGroup {
    /// Start `n` victims on `target`, each sending GET HOT_KEY then sleeping
    /// `pause` (1 ms in the posts' probe), timestamps relative to `epoch`.
    /// The group starts paused.
    pub fn start(
        target: &Target,
        n: usize,
        pause: Duration,
        epoch: Instant,
    ) -> Result<VictimGroup, String> {
        let mut setup = target.connect()?;
        redis::cmd("SET")
            .arg(HOT_KEY)
            .arg("x")
            .query::<()>(&mut setup)
            .map_err(|e| format!("SET {HOT_KEY}: {e}"))?;
        let stop = Arc::new(AtomicBool::new(false));
        let paused = Arc::new(AtomicBool::new(true));
        let errors = Arc::new(AtomicU64::new(0));
        let mut threads = Vec::new();
        for i in 0..n {
            let mut con = target.connect()?;
            let (stop, paused, errors) = (stop.clone(), paused.clone(), errors.clone());
            let t = thread::Builder::new()
                .name(format!("lab-victim-{i}"))
                .spawn(move || {
                    let mut samples = Vec::with_capacity(1 << 16);
                    while !stop.load(Ordering::Relaxed) {
                        if paused.load(Ordering::Relaxed) {
                            thread::sleep(Duration::from_millis(2));
                            continue;
                        }
                        let t0 = Instant::now();
                        let r = redis::cmd("GET")
                            .arg(HOT_KEY)
                            .query::<Option<Vec<u8>>>(&mut con);
                        let lat = t0.elapsed();
                        if r.is_err() {
                            errors.fetch_add(1, Ordering::Relaxed);
                            thread::sleep(Duration::from_millis(10));
                            continue;
                        }
                        samples.push(Sample {
                            t_us: t0.duration_since(epoch).as_micros() as u64,
                            lat_us: lat.as_micros() as u64,
                        });
                        thread::sleep(pause);
                    }
                    samples
                })
                .map_err(|e| e.to_string())?;
            threads.push(t);
        }
        Ok(VictimGroup {
            stop,
            paused,
            errors,
            threads,
        })
    }

    pub fn pause(&self) {
        self.paused.store(true, Ordering::Relaxed);
    }

    pub fn resume(&self) {
        self.paused.store(false, Ordering::Relaxed);
    }

    /// Failed GETs so far (a server that went away, a time-out).
    pub fn errors(&self) -> u64 {
        self.errors.load(Ordering::Relaxed)
    }

    /// Stop every victim and return all samples, ordered by send time.
    pub fn finish(mut self) -> Vec<Sample> {
        self.stop.store(true, Ordering::Relaxed);
        let mut all = Vec::new();
        for t in self.threads.drain(..) {
            if let Ok(s) = t.join() {
                all.extend(s);
            }
        }
        all.sort_by_key(|s| s.t_us);
        all
    }
}

impl Drop for VictimGroup {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Microseconds since `epoch`, now.
pub fn now_us(epoch: Instant) -> u64 {
    epoch.elapsed().as_micros() as u64
}
