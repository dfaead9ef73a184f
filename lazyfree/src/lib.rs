//! Lazy freeing (Redis's lazyfree.c and the lazy-free worker of bio.c).
//!
//! Deleting a key has two parts: unlinking it from the keyspace (always
//! O(1), always on the main thread) and freeing its value, which costs one
//! deallocation per allocation the value owns. A 1M-member hashtable set owns
//! a million allocations; freeing them on the main thread stalls every client
//! for as long as that takes (DEL). UNLINK instead hands the value to a
//! background thread named `bio_lazy_free` and returns at once.
//!
//! Handing a value over is not free either (a queue push, a wake-up), so
//! Redis only does it when the value is expensive to free: when its *free
//! effort* (roughly, its number of allocations) exceeds LAZYFREE_THRESHOLD.
//! A small value is freed inline even by UNLINK.
//!
//! Counters, as INFO memory shows them:
//! - `lazyfree_pending_objects`: handed over, not yet freed;
//! - `lazyfreed_objects`: freed by the thread since start (or CONFIG RESETSTAT).

pub mod log;
pub mod trace;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;

use storage::dict::Dict;
use storage::object::{RObj, Value};

/// LAZYFREE_THRESHOLD: values whose free effort is above this many
/// allocations are freed by the background thread; anything cheaper is freed
/// inline, because the hand-over itself costs about as much.
pub const LAZYFREE_THRESHOLD: usize = 64;

/// The name the worker thread carries in /proc/PID/task/*/comm, as in Redis.
pub const BIO_LAZY_FREE_THREAD_NAME: &str = "bio_lazy_free";

/// lazyfreeGetFreeEffort: how many allocations freeing `obj` will touch.
/// - a quicklist list: its number of nodes (each node is one listpack);
/// - a hashtable set or hash, a skiplist zset: its number of elements;
/// - a stream: its rax nodes, plus groups x (1 + the first group's PEL);
/// - anything else (strings, listpack/intset encodings): 1, a single block.
pub fn lazyfree_get_free_effort(obj: &RObj) -> usize {
    match &obj.value {
        // A string is one allocation whatever its length.
        Value::Str(_) => 1,
        // A quicklist: one node (and its listpack) per ~8 KB of elements.
        Value::List(ql) => ql.node_count(),
        // A hashtable set: one entry + one member allocation per element.
        Value::Set(storage::t_set::SetValue::Hashtable(d)) => d.len(),
        Value::Set(storage::t_set::SetValue::Intset(_)) => 1,
        // A skiplist zset frees one node and one dict entry per member.
        Value::ZSet(z) => z.dict().map_or(1, |d| d.len()),
        // A hashtable frees each field and value; a listpack is one block.
        Value::Hash(storage::t_hash::HashValue::Hashtable(d)) => d.len(),
        Value::Hash(storage::t_hash::HashValue::Listpack(_)) => 1,
        // A stream: one allocation per rax node (each node of the stream
        // tree holds one listpack), plus each group and its PEL, the first
        // group's PEL size standing for every group's (constant time).
        Value::Stream(s) => {
            let mut effort = s.rax.numnodes() as usize;
            if let Some(mut groups) = s.groups() {
                if let Some((_, cg)) = groups.next() {
                    effort += s.num_groups() as usize * (1 + cg.pel.len() as usize);
                }
            }
            effort
        }
    }
}

/// Set in a forked child (the Lua debugger's session, server/src/ldb.rs):
/// the worker thread does not exist there, and the queue's lock may have
/// been held by it at the instant of the fork, so the child frees inline
/// and never touches the queue.
static IN_FORK_CHILD: AtomicBool = AtomicBool::new(false);

/// Called by the child right after fork().
pub fn set_in_fork_child() {
    IN_FORK_CHILD.store(true, Ordering::Relaxed);
}

/// One unit of work for the background thread (a bio job).
enum Job {
    /// One value (UNLINK of a big key): lazyfreeFreeObject. The trace
    /// note is there only while the flight recorder is on.
    /// The id is its lazy-free log entry (log.rs), while that log is on.
    FreeObject(RObj, Option<TraceNote>, Option<u64>),
    /// A whole database (FLUSHALL/FLUSHDB ASYNC): lazyfreeFreeDatabase.
    /// `count` is the number of keys, counted in the pending objects.
    FreeDatabase {
        dict: Dict<RObj>,
        expires: Dict<i64>,
        count: u64,
        trace: Option<TraceNote>,
        log_id: Option<u64>,
    },
}

/// What the flight recorder wants to know of a job, taken when it is
/// queued (trace.rs): what it frees, its effort, when it was queued.
struct TraceNote {
    what: String,
    effort: u64,
    queued: std::time::Instant,
}

/// The counters shared between the main thread and the worker.
#[derive(Default)]
struct Counters {
    /// lazyfree_objects: handed over, not yet freed.
    pending: AtomicU64,
    /// lazyfreed_objects: freed by the worker.
    freed: AtomicU64,
}

/// The `bio_lazy_free` worker and its queue (bio.c BIO_LAZY_FREE).
pub struct LazyFree {
    queue: Sender<Job>,
    counters: Arc<Counters>,
    _thread: JoinHandle<()>,
}

impl LazyFree {
    /// bioInit for the lazy-free worker: start the thread.
    pub fn start() -> std::io::Result<LazyFree> {
        LazyFree::start_with(|| {})
    }

    /// `start`, with `on_thread_start` run first on the new thread (the
    /// server registers the thread's allocation counters there, so that
    /// used_memory sees what the worker frees).
    pub fn start_with(on_thread_start: fn()) -> std::io::Result<LazyFree> {
        let (tx, rx) = mpsc::channel::<Job>();
        let counters = Arc::new(Counters::default());
        let worker_counters = Arc::clone(&counters);
        let thread = std::thread::Builder::new()
            .name(BIO_LAZY_FREE_THREAD_NAME.to_string())
            .spawn(move || {
                on_thread_start();
                bio_process_background_jobs(rx, worker_counters)
            })?;
        Ok(LazyFree {
            queue: tx,
            counters,
            _thread: thread,
        })
    }

    /// freeObjAsync: free `obj` on the worker if it is expensive to free,
    /// inline otherwise. Returns true when the value was handed over.
    /// `log_note` is there while the lazy-free log is on (log.rs): when
    /// the value goes to the worker it becomes an entry the worker
    /// completes with its own duration; when it is freed inline the caller
    /// logs it (it times the free).
    pub fn free_object_async(&self, obj: RObj, log_note: Option<log::FreeNote>) -> bool {
        if IN_FORK_CHILD.load(Ordering::Relaxed)
            || lazyfree_get_free_effort(&obj) <= LAZYFREE_THRESHOLD
        {
            drop(obj); // cheap: free it right here
            return false;
        }
        self.counters.pending.fetch_add(1, Ordering::Relaxed);
        let note = trace::recording().then(|| TraceNote {
            what: format!("{}/{}", obj.type_name(), obj.encoding_name()),
            effort: lazyfree_get_free_effort(&obj) as u64,
            queued: std::time::Instant::now(),
        });
        let log_id = log_note.map(log::push);
        if let Err(mpsc::SendError(job)) = self.queue.send(Job::FreeObject(obj, note, log_id)) {
            // The worker is gone (only at exit): free inline instead.
            self.counters.pending.fetch_sub(1, Ordering::Relaxed);
            drop(job);
            return false;
        }
        true
    }

    /// emptyDbAsync: the caller already put fresh empty dicts in place; the
    /// old ones, with all their keys, are freed on the worker.
    /// `log_note`: the lazy-free log's entry for it, while that log is on.
    pub fn free_database_async(
        &self,
        dict: Dict<RObj>,
        expires: Dict<i64>,
        log_note: Option<log::FreeNote>,
    ) {
        if IN_FORK_CHILD.load(Ordering::Relaxed) {
            drop((dict, expires)); // no worker in a forked child
            return;
        }
        let count = dict.len() as u64;
        let log_id = log_note.map(log::push);
        self.counters.pending.fetch_add(count, Ordering::Relaxed);
        let trace = trace::recording().then(|| TraceNote {
            what: "database".to_string(),
            effort: count,
            queued: std::time::Instant::now(),
        });
        let job = Job::FreeDatabase {
            dict,
            expires,
            count,
            trace,
            log_id,
        };
        if let Err(mpsc::SendError(job)) = self.queue.send(job) {
            self.counters.pending.fetch_sub(count, Ordering::Relaxed);
            drop(job);
        }
    }

    /// lazyfreeGetPendingObjectsCount (INFO lazyfree_pending_objects).
    pub fn pending_objects(&self) -> u64 {
        self.counters.pending.load(Ordering::Relaxed)
    }

    /// lazyfreeGetFreedObjectsCount (INFO lazyfreed_objects).
    pub fn freed_objects(&self) -> u64 {
        self.counters.freed.load(Ordering::Relaxed)
    }

    /// lazyfreeResetStats (CONFIG RESETSTAT).
    pub fn reset_stats(&self) {
        self.counters.freed.store(0, Ordering::Relaxed);
    }
}

/// bioProcessBackgroundJobs for BIO_LAZY_FREE: take jobs in FIFO order and
/// free them. The drop is the whole job: this is where the million
/// deallocations of a big set happen, off the main thread.
fn bio_process_background_jobs(rx: Receiver<Job>, counters: Arc<Counters>) {
    for job in rx {
        let start = std::time::Instant::now();
        let (freed, note, log_id) = match job {
            Job::FreeObject(obj, note, log_id) => {
                drop(obj);
                (1, note, log_id)
            }
            Job::FreeDatabase {
                dict,
                expires,
                count,
                trace,
                log_id,
            } => {
                drop(dict);
                drop(expires);
                (count, trace, log_id)
            }
        };
        if let Some(id) = log_id {
            log::finish(id, start, start.elapsed().as_micros() as u64);
        }
        if let Some(note) = note {
            trace::record_job(trace::BioJobRecord {
                what: note.what,
                effort: note.effort,
                queued_us: trace::micros_since_epoch(note.queued),
                start_us: trace::micros_since_epoch(start),
                duration_us: start.elapsed().as_micros() as u64,
            });
        }
        counters.pending.fetch_sub(freed, Ordering::Relaxed);
        counters.freed.fetch_add(freed, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use storage::object::StrValue;

    fn string_obj(s: &str) -> RObj {
        RObj::new(Value::Str(StrValue::Raw(s.as_bytes().to_vec())), 0)
    }

    #[test]
    fn a_string_costs_one_allocation_to_free() {
        assert_eq!(lazyfree_get_free_effort(&string_obj("x")), 1);
        let big = RObj::new(Value::Str(StrValue::Raw(vec![0; 1 << 20])), 0);
        assert_eq!(lazyfree_get_free_effort(&big), 1);
    }

    #[test]
    fn cheap_values_are_freed_inline() {
        let lf = LazyFree::start().unwrap();
        assert!(!lf.free_object_async(string_obj("small"), None));
        assert_eq!(lf.pending_objects(), 0);
        assert_eq!(lf.freed_objects(), 0);
    }

    #[test]
    fn a_database_is_freed_on_the_worker_and_counted() {
        let lf = LazyFree::start().unwrap();
        let mut dict = Dict::new();
        for i in 0..1000 {
            dict.insert(
                format!("k{i}").into_bytes().into_boxed_slice(),
                string_obj("v"),
            );
        }
        lf.free_database_async(dict, Dict::new(), None);
        // The worker drains the queue; wait (bounded) for it.
        for _ in 0..1000 {
            if lf.freed_objects() == 1000 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(lf.freed_objects(), 1000);
        assert_eq!(lf.pending_objects(), 0);
    }

    #[test]
    fn the_worker_thread_has_redis_name() {
        let lf = LazyFree::start().unwrap();
        assert_eq!(lf._thread.thread().name(), Some(BIO_LAZY_FREE_THREAD_NAME));
    }
}
