//! The file I/O background threads (the BIO_CLOSE_FILE and BIO_AOF_FSYNC
//! workers of Redis's bio.c; `bio_lazy_free` lives in the lazyfree crate).
//!
//! Two system calls on files can stall the event loop for a long time, and
//! Redis moves both off the main thread:
//! - `fsync()` of the AOF with `appendfsync everysec`: the main thread
//!   write(2)s the AOF buffer before every reply, and once a second asks
//!   `bio_aof_fsync` to flush it to the disk. A busy disk stalls that
//!   thread, not the clients (until the next write(2) waits for the same
//!   inode lock: Redis then postpones writes up to 2 s, see aof.rs).
//! - `close()` of the last descriptor of a big unlinked file frees all
//!   its blocks, which can take as long as writing them did. An old AOF
//!   incr file, a history file after a rewrite, a temp file of a failed
//!   rewrite go to `bio_close_file` (optionally fsynced first).
//!
//! Each thread serves one queue in order. The pending counters include the
//! running job, as bioPendingJobsOfType does: `aof_pending_bio_fsync` in
//! INFO, and "is an fsync still in progress" for the AOF flush.
//!
//! Files are handed over as `Arc<File>`: the thread's reference keeps the
//! descriptor open until its job is done, so the main thread may drop its
//! own (switching to a new incr file) without the number being reused
//! under a pending fsync.

use std::fs::File;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::Arc;

/// The threads' names in /proc/PID/task/*/comm, as in Redis.
pub const BIO_CLOSE_FILE_THREAD_NAME: &str = "bio_close_file";
pub const BIO_AOF_FSYNC_THREAD_NAME: &str = "bio_aof_fsync";

/// One job for a file thread.
enum Job {
    /// BIO_CLOSE_FILE: drop the reference (closing the file when it was the
    /// last one), after an fsync when asked (bioCreateCloseJob need_fsync).
    Close { file: Arc<File>, need_fsync: bool },
    /// BIO_AOF_FSYNC: fdatasync the AOF.
    Fsync { file: Arc<File> },
}

/// The two workers and what the main thread reads of them.
pub struct Bio {
    close_tx: Sender<Job>,
    fsync_tx: Sender<Job>,
    pending_close: Arc<AtomicU64>,
    pending_fsync: Arc<AtomicU64>,
    /// server.aof_bio_fsync_status / aof_bio_fsync_errno: 0 while the
    /// background fsyncs succeed, else the errno of the last failure.
    fsync_errno: Arc<AtomicI32>,
}

/// redis_fsync: fdatasync on Linux (the data, not the metadata).
pub fn redis_fsync(file: &File) -> std::io::Result<()> {
    file.sync_data()
}

fn spawn(
    name: &str,
    pending: Arc<AtomicU64>,
    errno: Arc<AtomicI32>,
) -> std::io::Result<Sender<Job>> {
    let (tx, rx) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            crate::memory::register_thread();
            // bioProcessBackgroundJobs: one job at a time, in order.
            for job in rx {
                match job {
                    Job::Close { file, need_fsync } => {
                        if need_fsync {
                            if let Err(e) = redis_fsync(&file) {
                                errno
                                    .store(e.raw_os_error().unwrap_or(libc::EIO), Ordering::SeqCst);
                            }
                        }
                        drop(file);
                    }
                    Job::Fsync { file } => match redis_fsync(&file) {
                        // A success clears an earlier failure (the disk
                        // came back), as Redis does.
                        Ok(()) => errno.store(0, Ordering::SeqCst),
                        Err(e) => {
                            // EBADF/EINVAL: the file went away under us
                            // (not an I/O error of the disk).
                            let code = e.raw_os_error().unwrap_or(libc::EIO);
                            if code != libc::EBADF && code != libc::EINVAL {
                                errno.store(code, Ordering::SeqCst);
                            }
                        }
                    },
                }
                pending.fetch_sub(1, Ordering::SeqCst);
            }
        })?;
    Ok(tx)
}

impl Bio {
    /// bioInit (the two file threads).
    pub fn start() -> std::io::Result<Bio> {
        let pending_close = Arc::new(AtomicU64::new(0));
        let pending_fsync = Arc::new(AtomicU64::new(0));
        let fsync_errno = Arc::new(AtomicI32::new(0));
        let close_tx = spawn(
            BIO_CLOSE_FILE_THREAD_NAME,
            pending_close.clone(),
            fsync_errno.clone(),
        )?;
        let fsync_tx = spawn(
            BIO_AOF_FSYNC_THREAD_NAME,
            pending_fsync.clone(),
            fsync_errno.clone(),
        )?;
        Ok(Bio {
            close_tx,
            fsync_tx,
            pending_close,
            pending_fsync,
            fsync_errno,
        })
    }

    /// bioCreateFsyncJob.
    pub fn create_fsync_job(&self, file: Arc<File>) {
        self.pending_fsync.fetch_add(1, Ordering::SeqCst);
        if self.fsync_tx.send(Job::Fsync { file }).is_err() {
            self.pending_fsync.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// bioCreateCloseJob.
    pub fn create_close_job(&self, file: Arc<File>, need_fsync: bool) {
        self.pending_close.fetch_add(1, Ordering::SeqCst);
        if self.close_tx.send(Job::Close { file, need_fsync }).is_err() {
            self.pending_close.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// bioPendingJobsOfType(BIO_AOF_FSYNC).
    pub fn pending_fsync_jobs(&self) -> u64 {
        self.pending_fsync.load(Ordering::SeqCst)
    }

    /// bioPendingJobsOfType(BIO_CLOSE_FILE).
    pub fn pending_close_jobs(&self) -> u64 {
        self.pending_close.load(Ordering::SeqCst)
    }

    /// The errno of the last failed background fsync, 0 if none.
    pub fn fsync_errno(&self) -> i32 {
        self.fsync_errno.load(Ordering::SeqCst)
    }

    /// Forget a background fsync error (AOF turned on again).
    pub fn clear_fsync_error(&self) {
        self.fsync_errno.store(0, Ordering::SeqCst);
    }

    /// bg_unlink: unlink `path` now, and let `bio_close_file` close it, so
    /// freeing the blocks of a big file does not stall the loop. A file
    /// that cannot be opened is just unlinked.
    pub fn bg_unlink(&self, path: &str) -> std::io::Result<()> {
        match File::open(path) {
            Ok(f) => {
                let r = std::fs::remove_file(path);
                self.create_close_job(Arc::new(f), false);
                r
            }
            Err(_) => std::fs::remove_file(path),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bio_threads_carry_redis_names() {
        let bio = Bio::start().unwrap();
        // A new thread names itself as it starts: look until both show up.
        let names = || -> Vec<String> {
            std::fs::read_dir("/proc/self/task")
                .unwrap()
                .filter_map(|e| e.ok())
                .filter_map(|e| std::fs::read_to_string(e.path().join("comm")).ok())
                .map(|s| s.trim().to_string())
                .collect()
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut tid_names = names();
        while !(tid_names.iter().any(|n| n == BIO_CLOSE_FILE_THREAD_NAME)
            && tid_names.iter().any(|n| n == BIO_AOF_FSYNC_THREAD_NAME))
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(10));
            tid_names = names();
        }
        assert!(tid_names.iter().any(|n| n == BIO_CLOSE_FILE_THREAD_NAME));
        assert!(tid_names.iter().any(|n| n == BIO_AOF_FSYNC_THREAD_NAME));
        drop(bio);
    }

    #[test]
    fn fsync_job_is_pending_until_done() {
        let bio = Bio::start().unwrap();
        let path = std::env::temp_dir().join(format!("bio-test-{}", std::process::id()));
        let f = Arc::new(File::create(&path).unwrap());
        bio.create_fsync_job(f.clone());
        while bio.pending_fsync_jobs() > 0 {
            std::thread::yield_now();
        }
        assert_eq!(bio.fsync_errno(), 0);
        bio.bg_unlink(path.to_str().unwrap()).unwrap();
        assert!(!path.exists());
    }
}
