//! Snapshots on disk (Redis's rdb.c, the server half): SAVE, BGSAVE by
//! fork, save points, LASTSAVE, loading at start-up and DEBUG RELOAD.
//! The file format itself lives in the `rdb` crate; this file decides
//! *when* to save and load, and what the rest of the server sees meanwhile.
//!
//! BGSAVE is the fork lesson. `fork()` copies the parent's page tables
//! (not its pages): with a big dataset that alone takes milliseconds, and
//! the whole server waits (`latest_fork_usec`, the `fork` LATENCY event).
//! After that the child writes `temp-<pid>.rdb` from its copy-on-write view
//! of memory while the parent keeps serving; every page the parent writes
//! to is copied (the child measures them as Private_Dirty in
//! /proc/self/smaps: `rdb_last_cow_size`). The parent reaps the child in
//! `server_cron` (`check_children_done`) and only then counts the save.
//!
//! The child is a single-threaded copy of a multi-threaded process: it only
//! reads the keyspace, writes a file and leaves with `_exit`. It never
//! touches the lazy-free queue (whose lock the `bio_lazy_free` thread may
//! have held at the fork), runs no destructors, and closes the listening
//! sockets so a restarted server can bind while it still runs. jemalloc
//! handles fork itself (its atfork handlers).

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::time::Instant;

use rdb::load::{Entry, LoadLimits, RdbReader};
use rdb::save::{KeyMeta, RdbWriter};
use rdb::RdbError;
use storage::object::RObj;
use storage::t_hash::HashLimits;
use storage::t_zset::ZSetLimits;

use crate::childinfo::{ChildInfoSender, CHILD_INFO_TYPE_RDB_COW_SIZE};
use crate::evict::{lfu_decr_and_return, lfu_get_time_in_minutes, policy_is_lfu, policy_is_lru};
use crate::log::{server_log, LogLevel};
use crate::networking::Client;
use crate::server::{lru_clock, mstime, Server, REDIS_VERSION};

/// CONFIG_BGSAVE_RETRY_DELAY: after a failed BGSAVE, save points wait this
/// many seconds before trying again (a full disk would otherwise fork every
/// cron tick).
pub const CONFIG_BGSAVE_RETRY_DELAY: i64 = 5;

/// A save failed (C_ERR); the reason is already in the log, as in Redis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SaveError;

/// server.rdb_* / stat_* fields: the persistence state INFO reports.
#[derive(Debug)]
pub struct RdbState {
    /// The BGSAVE child (server.child_pid with child_type RDB).
    pub child_pid: Option<libc::pid_t>,
    /// rdb_save_time_start / rdb_save_time_last (unix seconds, -1 = none).
    pub save_time_start: i64,
    pub save_time_last: i64,
    /// lastbgsave_status == C_OK.
    pub lastbgsave_ok: bool,
    /// When a BGSAVE was last attempted (unix seconds).
    pub lastbgsave_try: i64,
    pub dirty_before_bgsave: u64,
    /// BGSAVE SCHEDULE (or BGSAVE inside MULTI) is waiting for its turn.
    pub bgsave_scheduled: bool,
    /// stat_rdb_saves: SAVE and BGSAVE calls.
    pub stat_rdb_saves: u64,
    /// stat_rdb_cow_bytes: the peak COW the last child reported.
    pub stat_rdb_cow_bytes: u64,
    /// The last load (rdb_last_load_keys_*).
    pub last_load_keys_expired: u64,
    pub last_load_keys_loaded: u64,
    /// The `repl-stream-db` AUX field of the last load (-1: none): the db
    /// a master's stream continues in after a full sync.
    pub last_repl_stream_db: i64,
    /// repl-id / repl-offset of the last RDB loaded (rdbSaveInfo's
    /// repl_id / repl_offset; None / -1 when absent): a replica restarted
    /// from its own RDB continues its master's history from there.
    pub last_repl_id: Option<String>,
    pub last_repl_offset: i64,
    /// RDBFLAGS_FEED_REPL: the start-up load of a master, whose DELs of
    /// keys that expired on disk go into the replication backlog.
    pub feed_repl: bool,
    /// DEBUG SET-SKIP-CHECKSUM-VALIDATION: RDB and DUMP checksums are not
    /// checked (Redis's corrupt-dump tests feed mangled payloads this way).
    pub skip_checksum_validation: bool,
}

impl Default for RdbState {
    fn default() -> Self {
        RdbState {
            child_pid: None,
            save_time_start: -1,
            save_time_last: -1,
            lastbgsave_ok: true,
            lastbgsave_try: 0,
            dirty_before_bgsave: 0,
            bgsave_scheduled: false,
            stat_rdb_saves: 0,
            stat_rdb_cow_bytes: 0,
            last_load_keys_expired: 0,
            last_load_keys_loaded: 0,
            last_repl_stream_db: -1,
            last_repl_id: None,
            last_repl_offset: -1,
            feed_repl: false,
            skip_checksum_validation: false,
        }
    }
}

impl RdbState {
    /// hasActiveChildProcess (the only children redis-lite forks so far).
    pub fn has_active_child(&self) -> bool {
        self.child_pid.is_some()
    }
}

// ---------------------------------------------------------------- config

fn cfg_yes(srv: &Server, name: &str) -> bool {
    srv.config.get_string(name).as_deref() == Some("yes")
}

/// rdbcompression: LZF for strings over 20 bytes.
pub fn rdb_compression(srv: &Server) -> bool {
    cfg_yes(srv, "rdbcompression")
}

/// The loading server's conversion thresholds.
pub fn load_limits(srv: &Server) -> LoadLimits {
    let c = &srv.config;
    LoadLimits {
        list_max_listpack_size: c.list_max_listpack_size,
        list_compress_depth: c.list_compress_depth,
        set_max_intset_entries: c.set_max_intset_entries.max(0) as usize,
        hash: HashLimits {
            max_listpack_entries: c.hash_max_listpack_entries.max(0) as usize,
            max_listpack_value: c.hash_max_listpack_value.max(0) as usize,
        },
        zset: ZSetLimits {
            max_listpack_entries: c.zset_max_listpack_entries.max(0) as usize,
            max_listpack_value: c.zset_max_listpack_value.max(0) as usize,
        },
    }
}

/// sanitize-dump-payload: `yes` checks listpacks for duplicates everywhere;
/// `clients` only for RESTORE from clients; `no` (the default) nowhere.
/// The structural checks that keep us from crashing always run.
pub fn deep_sanitize(srv: &Server, from_client: bool) -> bool {
    match srv.config.get_string("sanitize-dump-payload").as_deref() {
        Some("yes") => true,
        Some("clients") => from_client,
        _ => false,
    }
}

// ------------------------------------------------------------------ saving

/// rdbSaveRio: the whole dataset as an RDB stream into `out` (with the
/// aof-base AUX field set when it is the base of an AOF, aof.rs).
pub fn rdb_save_rio<W: Write>(
    srv: &Server,
    out: W,
    aof_base: bool,
    mut progress: impl FnMut(u64),
) -> io::Result<W> {
    let mut w = RdbWriter::new(out, rdb_compression(srv), cfg_yes(srv, "rdbchecksum"));
    w.save_header()?;
    let used_mem = crate::memory::used_memory() as u64;
    // rdbPopulateSaveInfo: the repl-* fields, not in an AOF preamble.
    let rsi = if aof_base {
        None
    } else {
        crate::replication::master::rdb_populate_save_info(srv)
    };
    let rsi_ref = rsi.as_ref().map(|(db, id, off)| (*db, id.as_str(), *off));
    w.save_info_aux_fields_rsi(REDIS_VERSION, mstime() / 1000, used_mem, rsi_ref, aof_base)?;
    for lib in srv.functions.lib_ctx.libraries.values() {
        w.save_function(&lib.code)?;
    }
    // rdbSaveKeyValuePair's eviction hints, computed as of now.
    let policy = srv.config.maxmemory_policy;
    let (savelru, savelfu) = (policy_is_lru(policy), policy_is_lfu(policy));
    let lruclock = lru_clock(srv);
    let now_min = lfu_get_time_in_minutes(mstime());
    let decay = srv.config.lfu_decay_time;
    let delay = srv.config.num("rdb-key-save-delay");
    let mut keys = 0u64;
    for (dbid, db) in srv.dbs.iter().enumerate() {
        if db.dict.is_empty() {
            continue;
        }
        w.save_select_db(dbid as u64)?;
        w.save_resize_db(db.dict.len() as u64, db.expires.len() as u64)?;
        for (key, o) in db.dict.iter() {
            let meta = KeyMeta {
                expire_ms: db.get_expire(key),
                idle_secs: savelru
                    .then(|| crate::object::estimate_object_idle_time(lruclock, o.lru) / 1000),
                freq: savelfu.then(|| lfu_decr_and_return(o.lru, now_min, decay) as u8),
            };
            w.save_key_value_pair(key, o, meta)?;
            keys += 1;
            progress(keys);
            // rdb-key-save-delay: slow saves down on purpose (tests).
            if delay != 0 {
                crate::debug::debug_delay(delay);
            }
        }
    }
    w.finish()
}

/// REDIS_AUTOSYNC_BYTES: with rdb-save-incremental-fsync, the file is
/// flushed to disk every 4 MB, so the kernel never holds a whole snapshot
/// of dirty pages and the final fsync is short.
const REDIS_AUTOSYNC_BYTES: u64 = 4 * 1024 * 1024;

/// rioFileWrite with autosync: a file that starts the write-out of each
/// 4 MB as it is complete (sync_file_range WRITE) and waits for the one
/// before it, as Redis does.
struct AutoSyncFile {
    file: File,
    autosync: u64,
    processed: u64,
}

impl Write for AutoSyncFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.autosync == 0 {
            return self.file.write(buf);
        }
        // Never cross a 4 MB boundary in one write.
        let room = self.autosync - self.processed % self.autosync;
        let n = self.file.write(&buf[..buf.len().min(room as usize)])?;
        self.processed += n as u64;
        if self.processed.is_multiple_of(self.autosync) {
            let fd = self.file.as_raw_fd();
            let a = self.autosync as i64;
            let end = self.processed as i64;
            // SAFETY: sync_file_range on our own descriptor and offsets.
            let r = unsafe {
                let mut r = libc::sync_file_range(fd, end - a, a, libc::SYNC_FILE_RANGE_WRITE);
                if r == 0 && end >= 2 * a {
                    r = libc::sync_file_range(
                        fd,
                        end - 2 * a,
                        a,
                        libc::SYNC_FILE_RANGE_WAIT_BEFORE
                            | libc::SYNC_FILE_RANGE_WRITE
                            | libc::SYNC_FILE_RANGE_WAIT_AFTER,
                    );
                }
                r
            };
            if r == -1 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// The working directory for log lines (get_current_dir_name).
fn cwd() -> String {
    std::env::current_dir()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// rdbSave's file work: write `temp-<pid>.rdb`, fsync it, rename it over
/// `filename`, fsync the directory. Logs Redis's lines on every failure.
/// Runs in the parent (SAVE) and in the BGSAVE child.
fn rdb_save_file(srv: &Server, filename: &str, progress: impl FnMut(u64)) -> Result<(), SaveError> {
    let tmpfile = format!("temp-{}.rdb", std::process::id());
    let file = match File::create(&tmpfile) {
        Ok(f) => f,
        Err(e) => {
            server_log(
                LogLevel::Warning,
                &format!(
                    "Failed opening the temp RDB file {tmpfile} (in server root dir {}) for saving: {}",
                    cwd(),
                    crate::config::strerror(&e)
                ),
            );
            return Err(SaveError);
        }
    };
    let werr = |op: &str, e: &io::Error| {
        server_log(
            LogLevel::Warning,
            &format!(
                "Write error saving DB on disk({op}): {}",
                crate::config::strerror(e)
            ),
        );
        let _ = std::fs::remove_file(&tmpfile);
    };
    let autosync = if cfg_yes(srv, "rdb-save-incremental-fsync") {
        REDIS_AUTOSYNC_BYTES
    } else {
        0
    };
    // RdbWriter already hands over 64 KB chunks: no BufWriter needed.
    let out = AutoSyncFile {
        file,
        autosync,
        processed: 0,
    };
    let file = match rdb_save_rio(srv, out, false, progress) {
        Ok(o) => o.file,
        Err(e) => {
            werr("rdbSaveRio", &e);
            return Err(SaveError);
        }
    };
    if let Err(e) = file.sync_all() {
        werr("fsync", &e);
        return Err(SaveError);
    }
    drop(file);
    if let Err(e) = std::fs::rename(&tmpfile, filename) {
        server_log(
            LogLevel::Warning,
            &format!(
                "Error moving temp DB file {tmpfile} on the final destination {filename} (in server root dir {}): {}",
                cwd(),
                crate::config::strerror(&e)
            ),
        );
        let _ = std::fs::remove_file(&tmpfile);
        return Err(SaveError);
    }
    // fsyncFileDir: make the rename itself durable.
    let dir = std::path::Path::new(filename)
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    if let Err(e) = File::open(dir).and_then(|d| d.sync_all()) {
        werr("fsyncFileDir", &e);
        return Err(SaveError);
    }
    server_log(LogLevel::Notice, "DB saved on disk");
    Ok(())
}

/// rdbSave (in the parent): a synchronous save. The whole server waits
/// for it, which is why SAVE exists mostly for tests and shutdown.
pub fn rdb_save(srv: &mut Server) -> Result<(), SaveError> {
    let filename = srv.config.dbfilename.clone();
    rdb_save_file(srv, &filename, |_| {})?;
    srv.dirty = 0;
    srv.lastsave = mstime() / 1000;
    srv.rdb.lastbgsave_ok = true;
    Ok(())
}

/// rdbSaveBackground: fork, and let the child write the snapshot.
pub fn rdb_save_background(srv: &mut Server) -> Result<(), SaveError> {
    if crate::aof::has_active_child_process(srv) {
        return Err(SaveError);
    }
    srv.rdb.stat_rdb_saves += 1;
    srv.rdb.dirty_before_bgsave = srv.dirty;
    srv.rdb.lastbgsave_try = mstime() / 1000;

    let pid = match crate::server::redis_fork(srv, crate::server::ChildType::Rdb) {
        Ok(0) => rdb_child_main(srv),
        Ok(pid) => pid,
        Err(e) => {
            srv.rdb.lastbgsave_ok = false;
            server_log(
                LogLevel::Warning,
                &format!(
                    "Can't save in background: fork: {}",
                    crate::config::strerror(&e)
                ),
            );
            return Err(SaveError);
        }
    };
    srv.rdb.child_pid = Some(pid);
    server_log(
        LogLevel::Notice,
        &format!("Background saving started by pid {pid}"),
    );
    srv.rdb.save_time_start = mstime() / 1000;
    Ok(())
}

/// The BGSAVE child: write the snapshot, report progress and CoW through
/// the child info pipe (childinfo.rs), `_exit`.
fn rdb_child_main(srv: &Server) -> ! {
    let mut info = ChildInfoSender::new("RDB");
    let filename = srv.config.dbfilename.clone();
    let ok = rdb_save_file(srv, &filename, |keys| info.progress(keys)).is_ok();
    if ok {
        info.send(CHILD_INFO_TYPE_RDB_COW_SIZE, 0);
    }
    // exitFromChild: _exit, so no destructor or atexit handler runs in
    // a process that shares its parent's state.
    // SAFETY: terminating the child process.
    unsafe { libc::_exit(if ok { 0 } else { 1 }) }
}

/// The BGSAVE child ended (reaped by server::check_children_done): count
/// the save or the failure, take its last COW report, forget the child.
pub fn background_save_done(srv: &mut Server, exitcode: i32, bysignal: i32) {
    // A diskless replication child wrote to replicas, not to the file.
    if srv.repl.msrv.rdb_child_socket {
        crate::replication::master::background_save_done_handler_socket(srv, exitcode, bysignal);
    } else {
        background_save_done_handler(srv, exitcode, bysignal);
    }
    if bysignal == 0 && exitcode == 0 {
        crate::childinfo::receive_child_info(srv);
    }
    reset_child_state(srv);
    // Replicas waiting for this RDB get it now (updateSlavesWaitingBgsave).
    crate::replication::master::update_slaves_waiting_bgsave(srv, bysignal == 0 && exitcode == 0);
}

/// backgroundSaveDoneHandlerDisk: count the save (or the failure).
fn background_save_done_handler(srv: &mut Server, exitcode: i32, bysignal: i32) {
    let now = mstime() / 1000;
    if bysignal == 0 && exitcode == 0 {
        server_log(
            LogLevel::Notice,
            "Background saving terminated with success",
        );
        // Changes made while the child was writing still count.
        srv.dirty = srv.dirty.saturating_sub(srv.rdb.dirty_before_bgsave);
        srv.lastsave = now;
        srv.rdb.lastbgsave_ok = true;
    } else if bysignal == 0 {
        server_log(LogLevel::Warning, "Background saving error");
        srv.rdb.lastbgsave_ok = false;
    } else {
        server_log(
            LogLevel::Warning,
            &format!("Background saving terminated by signal {bysignal}"),
        );
        let start = Instant::now();
        if let Some(pid) = srv.rdb.child_pid {
            rdb_remove_temp_file(pid);
        }
        let ms = start.elapsed().as_millis() as u64;
        let threshold = srv.config.latency_monitor_threshold;
        srv.latency
            .add_sample_if_needed(threshold, "rdb-unlink-temp-file", ms);
        // SIGUSR1 is how we stop a child on purpose: not an error.
        if bysignal != libc::SIGUSR1 {
            srv.rdb.lastbgsave_ok = false;
        }
    }
    srv.rdb.save_time_last = now - srv.rdb.save_time_start;
    srv.rdb.save_time_start = -1;
}

/// resetChildState.
fn reset_child_state(srv: &mut Server) {
    srv.rdb.child_pid = None;
    crate::childinfo::close_child_info_pipe(srv);
    storage::dict::set_resize_allowed(true);
}

/// rdbRemoveTempFile.
pub fn rdb_remove_temp_file(childpid: libc::pid_t) {
    let _ = std::fs::remove_file(format!("temp-{childpid}.rdb"));
}

/// killRDBChild: SIGUSR1, reaped (and cleaned up) by check_children_done.
pub fn kill_rdb_child(srv: &mut Server) {
    if let Some(pid) = srv.rdb.child_pid {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(pid, libc::SIGUSR1) };
    }
}

/// The persistence part of serverCron: reap a finished child, read its
/// progress once a second, or start a BGSAVE when a save point is due
/// (or one was scheduled).
pub fn rdb_cron(srv: &mut Server) {
    let now = mstime() / 1000;
    if srv.rdb.has_active_child() {
        return;
    }
    // An AOF rewrite child runs: one child at a time.
    if srv.aof.child_pid.is_some() {
        return;
    }
    // A failed BGSAVE is retried only after CONFIG_BGSAVE_RETRY_DELAY.
    let may_retry =
        now - srv.rdb.lastbgsave_try > CONFIG_BGSAVE_RETRY_DELAY || srv.rdb.lastbgsave_ok;
    let due = srv
        .config
        .save_params
        .iter()
        .copied()
        .find(|&(secs, changes)| {
            srv.dirty >= changes as u64 && now - srv.lastsave > secs && may_retry
        });
    if let Some((secs, changes)) = due {
        server_log(
            LogLevel::Notice,
            &format!("{changes} changes in {secs} seconds. Saving..."),
        );
        let _ = rdb_save_background(srv);
        return;
    }
    if srv.rdb.bgsave_scheduled && may_retry && rdb_save_background(srv).is_ok() {
        srv.rdb.bgsave_scheduled = false;
    }
}

/// writeCommandsDeniedByDiskError (the RDB half): the MISCONF condition.
pub fn write_commands_denied_by_disk_error(srv: &Server) -> bool {
    !srv.rdb.lastbgsave_ok
        && !srv.config.save_params.is_empty()
        && cfg_yes(srv, "stop-writes-on-bgsave-error")
}

/// shared.bgsaveerr.
pub const MISCONF_ERR: &str = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error.";

// ----------------------------------------------------------------- loading

/// shared.loadingerr: the reply to a command without the `loading` flag
/// while a dataset loads.
pub const LOADING_ERR: &str = "LOADING Redis is loading the dataset in memory";

/// server.loading and the loading_* fields: a dataset is being read into
/// memory (start-up RDB or AOF, DEBUG RELOAD, DEBUG LOADAOF, a replica's
/// full sync). Loading is a long blocking operation like a busy script:
/// every `loading-process-events-interval-bytes` the loader serves the
/// other clients for a moment (`rdb_load_progress`, Redis's
/// rdbLoadProgressCallback, and the AOF loader every 1024 commands), and
/// processCommand answers `-LOADING` to every command without the
/// `loading` flag. INFO persistence shows the progress.
#[derive(Debug, Default)]
pub struct LoadingState {
    /// server.loading: between start_loading and stop_loading.
    pub loading: bool,
    /// server.async_loading: a replica's swapdb load that serves reads of
    /// the old data meanwhile (replication/replica.rs, when the master's
    /// replid is ours: the old data is an earlier point of the same history).
    pub async_loading: bool,
    /// diskless_load_tempDb and its functions: a replica's swapdb load
    /// fills these, and they replace the server's only once the whole
    /// payload loaded. None: loads go into `srv.dbs` / `srv.functions`.
    pub temp_db: Option<TempDb>,
    /// loading_start_time, unix seconds.
    pub start_time: i64,
    /// loading_total_bytes: the file's size (all AOF files together).
    pub total_bytes: u64,
    /// loading_rdb_used_mem: the `used-mem` AUX field of the RDB, the
    /// estimate INFO uses when the size is unknown.
    pub rdb_used_mem: u64,
    /// loading_loaded_bytes: how far the loader got.
    pub loaded_bytes: u64,
    /// server.blocked_last_cron: the last whileBlockedCron run, ms.
    pub blocked_last_cron: i64,
}

/// The databases and function libraries a swapdb diskless load fills
/// (disklessLoadInitTempDb, functionsLibCtxCreate).
pub struct TempDb {
    pub dbs: Vec<storage::db::Db>,
    pub functions: crate::function::Functions,
}

impl std::fmt::Debug for TempDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TempDb")
            .field("dbs", &self.dbs.len())
            .finish()
    }
}

impl TempDb {
    /// As many empty databases as the server has, no libraries.
    pub fn new(count: usize) -> Self {
        TempDb {
            dbs: (0..count).map(storage::db::Db::new).collect(),
            functions: crate::function::Functions::new(),
        }
    }
}

/// The databases a load writes into: the temporary ones of a swapdb load
/// (rdbLoadingCtx.dbarray), else the server's.
fn load_dbs(srv: &mut Server) -> &mut Vec<storage::db::Db> {
    match srv.loading.temp_db.as_mut() {
        Some(t) => &mut t.dbs,
        None => &mut srv.dbs,
    }
}

/// The function libraries a load writes into (rdbLoadingCtx.functions_lib_ctx).
fn load_functions(srv: &mut Server) -> &mut crate::function::Functions {
    match srv.loading.temp_db.as_mut() {
        Some(t) => &mut t.functions,
        None => &mut srv.functions,
    }
}

/// startLoading: mark the server as loading and reset the progress
/// fields (and the rdb_last_load_keys_* counters).
// redis: rdb.c startLoading
pub fn start_loading(srv: &mut Server, size: u64, async_loading: bool) {
    let l = &mut srv.loading;
    l.loading = true;
    l.async_loading = async_loading;
    l.start_time = mstime() / 1000;
    l.loaded_bytes = 0;
    l.total_bytes = size;
    l.rdb_used_mem = 0;
    // blockingOperationStarts: whileBlockedCron counts from here.
    l.blocked_last_cron = mstime();
    srv.rdb.last_load_keys_expired = 0;
    srv.rdb.last_load_keys_loaded = 0;
    crate::shutdown::set_loading(true);
}

/// stopLoading: loading is over (whether it worked or not).
// redis: rdb.c stopLoading
pub fn stop_loading(srv: &mut Server) {
    srv.loading.loading = false;
    srv.loading.async_loading = false;
    crate::shutdown::set_loading(false);
}

/// loadingAbsProgress: the loader is at byte `pos`. The memory peak is
/// kept up too (no cron runs during the load to do it).
pub fn loading_abs_progress(srv: &mut Server, pos: u64) {
    srv.loading.loaded_bytes = pos;
    update_peak_memory(srv);
}

/// loadingIncrProgress: the loader read `size` more bytes.
pub fn loading_incr_progress(srv: &mut Server, size: u64) {
    srv.loading.loaded_bytes += size;
    update_peak_memory(srv);
}

/// stat_peak_memory = max(stat_peak_memory, used memory).
fn update_peak_memory(srv: &mut Server) {
    let mem = crate::memory::used_memory();
    if mem > srv.stat_peak_memory {
        srv.stat_peak_memory = mem;
    }
}

/// rdbLoadProgressCallback: the loader went from byte `before` to byte
/// `after` of its stream. Each time that crosses a multiple of
/// `loading-process-events-interval-bytes`, record the progress and serve
/// the other clients (they get -LOADING for most commands). Redis calls it
/// on every read, so a huge value is interrupted too; here it runs
/// between entries (one key, one AUX field), which is where the keyspace
/// is consistent anyway.
// redis: rdb.c rdbLoadProgressCallback
/// Returns true when it served clients (who may have changed the configs
/// the loader caches).
pub fn rdb_load_progress(srv: &mut Server, interval: u64, before: u64, after: u64) -> bool {
    if interval == 0 || after / interval <= before / interval {
        return false;
    }
    // A replica keeps its master from timing it out (replicationSendNewlineToMaster).
    crate::replication::replica::replication_send_newline_to_master(srv);
    loading_abs_progress(srv, after);
    crate::networking::process_events_while_blocked(srv);
    true
}

/// How a load treats keys already in memory (RDBFLAGS_ALLOW_DUP).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum LoadMode {
    /// Start-up and DEBUG RELOAD: a duplicate key is a corrupt file.
    Fresh,
    /// DEBUG RELOAD MERGE: a loaded key replaces the one in memory.
    AllowDup,
}

/// Why rdb_load failed: the file is not there (or unreadable), or its
/// contents are bad (then Redis stops the server).
pub enum LoadError {
    Open(io::Error),
    Bad(String),
}

/// rdbLoad: read the file into the (already emptied) databases and the
/// function registry, logging as Redis does.
pub fn rdb_load(srv: &mut Server, filename: &str, mode: LoadMode) -> Result<(), LoadError> {
    let file = File::open(filename).map_err(LoadError::Open)?;
    let size = file.metadata().map(|m| m.len()).ok();
    start_loading(srv, size.unwrap_or(0), false);
    let checksum = cfg_yes(srv, "rdbchecksum");
    let mut r = RdbReader::new(file, size, checksum, load_limits(srv));
    r.deep = deep_sanitize(srv, false);
    let res = rdb_load_rio(srv, &mut r, mode, false);
    srv.stats.dump_payload_sanitizations += r.sanitizations;
    stop_loading(srv);
    res.map_err(|e| {
        let msg = match &e {
            RdbError::Io(_) => {
                server_log(
                    LogLevel::Warning,
                    "Short read or OOM loading DB. Unrecoverable error, aborting now.",
                );
                "Unexpected EOF reading RDB file".to_string()
            }
            other => other.to_string(),
        };
        LoadError::Bad(format!(
            "Internal error in RDB reading offset {}, function at rdb.c:0 -> {msg}",
            r.processed()
        ))
    })
}

/// rdbReportError for a load from the master's socket, where no file is
/// left to check: a short read means the connection broke, the replica
/// logs it and carries on; a corrupt payload stops the server, as Redis
/// stops. `offset` is how far the loader got (loading_loaded_bytes).
// redis: rdb.c rdbReportError (the diskless branches)
pub fn rdb_report_socket_load_error(e: &RdbError, offset: u64) {
    let head = format!("Internal error in RDB reading offset {offset}, function at rdb.c:0 -> ");
    match e {
        RdbError::Io(_) => {
            server_log(
                LogLevel::Warning,
                "Short read or OOM loading DB. Unrecoverable error, aborting now.",
            );
            server_log(
                LogLevel::Warning,
                &format!("{head}Unexpected EOF reading RDB file. Failure loading rdb format from socket, assuming connection error, resuming operation."),
            );
        }
        other => {
            server_log(
                LogLevel::Warning,
                &format!("{head}{other}. Failure loading rdb format"),
            );
            server_log(
                LogLevel::Warning,
                "Terminating server after rdb file reading failure.",
            );
            std::process::exit(1);
        }
    }
}

/// rdbLoadRio with RDBFLAGS_AOF_PREAMBLE: the RDB base of an AOF (aof.rs).
/// Returns the bytes the RDB part took (an old-style AOF goes on with
/// commands after it), or the error text to log.
pub fn rdb_load_aof_preamble(srv: &mut Server, path: &str) -> Result<u64, String> {
    let file = File::open(path).map_err(|e| crate::config::strerror(&e))?;
    let size = file.metadata().map(|m| m.len()).ok();
    // Inside the AOF's start_loading (aof.rs): only the key counters
    // start over (rdbLoadRio does not reset them; startLoading did, once
    // for all the files).
    let checksum = cfg_yes(srv, "rdbchecksum");
    let mut r = RdbReader::new(file, size, checksum, load_limits(srv));
    r.deep = deep_sanitize(srv, false);
    let res = rdb_load_rio(srv, &mut r, LoadMode::Fresh, true);
    srv.stats.dump_payload_sanitizations += r.sanitizations;
    match res {
        Ok(()) => {
            loading_abs_progress(srv, r.processed());
            Ok(r.processed())
        }
        Err(e) => Err(format!(
            "Internal error in RDB reading offset {}, function at rdb.c:0 -> {e}",
            r.processed()
        )),
    }
}

/// rdbLoadRioWithLoadingCtx: the loop over the file's entries, into
/// `load_dbs` / `load_functions`.
pub fn rdb_load_rio<R: io::Read>(
    srv: &mut Server,
    r: &mut RdbReader<R>,
    mode: LoadMode,
    aof_preamble: bool,
) -> Result<(), RdbError> {
    r.load_header()?;
    srv.rdb.last_repl_stream_db = -1;
    srv.rdb.last_repl_id = None;
    srv.rdb.last_repl_offset = -1;
    let now = mstime();
    let lru_clock = i64::from(lru_clock(srv));
    let mut dbid = 0usize;
    let mut empty_keys_skipped = 0u64;
    // key-load-delay (debugDelay per key, for tests that need a slow
    // load); re-read after serving clients, who may CONFIG SET it.
    let mut key_load_delay = srv.config.num("key-load-delay");
    let mut interval = srv
        .config
        .num("loading-process-events-interval-bytes")
        .max(0) as u64;
    let mut processed = r.processed();
    loop {
        let entry = r.next_entry()?;
        let is_key = matches!(entry, Entry::Key { .. } | Entry::EmptyKey { .. });
        match entry {
            Entry::Aux { key, value } => {
                if key.eq_ignore_ascii_case(b"repl-stream-db") {
                    srv.rdb.last_repl_stream_db = storage::util::string2ll(&value).unwrap_or(-1);
                } else if key.eq_ignore_ascii_case(b"repl-id") && value.len() == 40 {
                    srv.rdb.last_repl_id = Some(String::from_utf8_lossy(&value).into_owned());
                } else if key.eq_ignore_ascii_case(b"repl-offset") {
                    srv.rdb.last_repl_offset = storage::util::string2ll(&value).unwrap_or(-1);
                }
                log_aux_field(srv, &key, &value)
            }
            Entry::Function(code) => {
                let code = bytes::Bytes::from(code);
                let timeout = std::time::Duration::from_millis(500);
                let replace = mode == LoadMode::AllowDup;
                if let Err(e) = crate::function::functions_create_with_library_ctx(
                    load_functions(srv),
                    &code,
                    replace,
                    timeout,
                ) {
                    let e = String::from_utf8_lossy(&e).into_owned();
                    server_log(LogLevel::Warning, &format!("Failed loading library, {e}"));
                    // rdbLoad goes to its eoferr path, as for a short read.
                    return Err(RdbError::Io(io::Error::other("Failed loading library")));
                }
            }
            Entry::SelectDb(id) => {
                if id >= load_dbs(srv).len() as u64 {
                    server_log(
                        LogLevel::Warning,
                        &format!(
                            "FATAL: Data file was created with a Redis server configured to handle more than {} databases. Exiting\n",
                            srv.dbs.len()
                        ),
                    );
                    std::process::exit(1);
                }
                dbid = id as usize;
            }
            Entry::ResizeDb {
                db_size,
                expires_size,
            } => {
                // Presize, but never beyond what the file could hold.
                let (db_size, expires_size) = (r.cap(db_size), r.cap(expires_size));
                let db = &mut load_dbs(srv)[dbid];
                db.dict.expand(db_size);
                db.expires.expand(expires_size);
            }
            Entry::EmptyKey { key } => {
                empty_keys_skipped += 1;
                if empty_keys_skipped <= 10 {
                    server_log(
                        LogLevel::Warning,
                        &format!(
                            "rdbLoadObject skipping empty key: {}",
                            String::from_utf8_lossy(&key)
                        ),
                    );
                }
            }
            Entry::Key { key, value, meta } => {
                // A master drops keys that expired while the file sat on
                // disk (not from an AOF base: the commands after it may
                // still read them, as they did when they were logged).
                // A replica keeps them: its master sends the DELs.
                if !aof_preamble
                    && srv.repl.masterhost.is_none()
                    && meta.expire_ms.is_some_and(|t| t < now)
                {
                    srv.rdb.last_load_keys_expired += 1;
                    if srv.rdb.feed_repl {
                        let del = if srv.config.lazyfree_lazy_expire {
                            "UNLINK"
                        } else {
                            "DEL"
                        };
                        let argv = [bytes::Bytes::from_static(del.as_bytes()), key.into()];
                        crate::replication::master::replication_feed_slaves(
                            srv,
                            dbid as i64,
                            &argv,
                        );
                    }
                } else {
                    let mut o = RObj::new(value, crate::evict::object_lru_init(srv));
                    crate::object::object_set_lru_or_lfu(
                        srv,
                        &mut o,
                        meta.freq.map_or(-1, i64::from),
                        meta.idle_secs.map_or(-1, |v| v.min(i64::MAX as u64) as i64),
                        lru_clock,
                        1000,
                    );
                    srv.rdb.last_load_keys_loaded += 1;
                    let db = &mut load_dbs(srv)[dbid];
                    if db.dict.contains_key(&key) {
                        if mode != LoadMode::AllowDup {
                            server_log(
                                LogLevel::Warning,
                                &format!(
                                    "RDB has duplicated key '{}' in DB {dbid}",
                                    String::from_utf8_lossy(&key)
                                ),
                            );
                            return Err(RdbError::Corrupt(
                                "Duplicated key found in RDB file".into(),
                            ));
                        }
                        db.delete(&key);
                    }
                    if let Some(when) = meta.expire_ms {
                        db.add(key.clone().into_boxed_slice(), o);
                        db.set_expire(&key, when);
                    } else {
                        db.add(key.into_boxed_slice(), o);
                    }
                }
            }
            Entry::Eof { stored, computed } => {
                if let Some(stored) = stored {
                    if cfg_yes(srv, "rdbchecksum") && !srv.rdb.skip_checksum_validation {
                        if stored == 0 {
                            server_log(
                                LogLevel::Warning,
                                "RDB file was saved with checksum disabled: no check performed.",
                            );
                        } else if stored != computed {
                            server_log(
                                LogLevel::Warning,
                                &format!(
                                    "Wrong RDB checksum expected: ({computed:x}) but got ({stored:x}). Aborting now."
                                ),
                            );
                            return Err(RdbError::Corrupt("RDB CRC error".into()));
                        }
                    }
                }
                break;
            }
        }
        if is_key && key_load_delay != 0 {
            crate::debug::debug_delay(key_load_delay);
        }
        // Serve the other clients every loading-process-events-interval-bytes.
        let now_processed = r.processed();
        if srv.loading.loading && rdb_load_progress(srv, interval, processed, now_processed) {
            key_load_delay = srv.config.num("key-load-delay");
            interval = srv
                .config
                .num("loading-process-events-interval-bytes")
                .max(0) as u64;
        }
        processed = now_processed;
    }
    let (loaded, expired) = (
        srv.rdb.last_load_keys_loaded,
        srv.rdb.last_load_keys_expired,
    );
    if empty_keys_skipped > 0 {
        server_log(
            LogLevel::Warning,
            &format!("Done loading RDB, keys loaded: {loaded}, keys expired: {expired}, empty keys skipped: {empty_keys_skipped}."),
        );
    } else {
        server_log(
            LogLevel::Notice,
            &format!("Done loading RDB, keys loaded: {loaded}, keys expired: {expired}."),
        );
    }
    Ok(())
}

/// The AUX fields Redis logs while loading.
fn log_aux_field(srv: &mut Server, key: &[u8], value: &[u8]) {
    let v = String::from_utf8_lossy(value);
    let num = || v.trim().parse::<i64>().unwrap_or(0);
    if key.first() == Some(&b'%') {
        server_log(
            LogLevel::Notice,
            &format!("RDB '{}': {v}", String::from_utf8_lossy(key)),
        );
        return;
    }
    match &key.to_ascii_lowercase()[..] {
        b"redis-ver" => server_log(
            LogLevel::Notice,
            &format!("Loading RDB produced by version {v}"),
        ),
        b"ctime" => {
            let age = (mstime() / 1000 - num()).max(0);
            server_log(LogLevel::Notice, &format!("RDB age {age} seconds"));
        }
        b"used-mem" => {
            server_log(
                LogLevel::Notice,
                &format!(
                    "RDB memory usage when created {:.2} Mb",
                    num() as f64 / (1024.0 * 1024.0)
                ),
            );
            srv.loading.rdb_used_mem = num().max(0) as u64;
        }
        b"aof-preamble" if num() != 0 => server_log(LogLevel::Notice, "RDB has an AOF tail"),
        b"aof-base" if num() != 0 => server_log(LogLevel::Notice, "RDB is base AOF"),
        b"redis-bits" | b"repl-stream-db" | b"repl-id" | b"repl-offset" | b"lua"
        | b"aof-preamble" | b"aof-base" => {}
        _ => server_log(
            LogLevel::Debug,
            &format!(
                "Unrecognized RDB AUX field: '{}'",
                String::from_utf8_lossy(key)
            ),
        ),
    }
}

/// loadDataFromDisk (the RDB branch): at start-up, before serving.
pub fn load_data_from_disk(srv: &mut Server) {
    let start = Instant::now();
    let filename = srv.config.dbfilename.clone();
    // A master may drop keys that expired on disk: their DELs go into a
    // backlog made now, for the replicas that continue after the restart.
    let i_am_master = srv.repl.masterhost.is_none();
    if i_am_master {
        crate::replication::master::create_replication_backlog(srv);
        srv.rdb.feed_repl = true;
    }
    let loaded = rdb_load(srv, &filename, LoadMode::Fresh);
    srv.rdb.feed_repl = false;
    let mut history = false;
    match loaded {
        Ok(()) => {
            server_log(
                LogLevel::Notice,
                &format!(
                    "DB loaded from disk: {:.3} seconds",
                    start.elapsed().as_secs_f64()
                ),
            );
            // Restore the replication id and offset the file was saved at.
            let (db, off) = (srv.rdb.last_repl_stream_db, srv.rdb.last_repl_offset);
            if let Some(id) = srv
                .rdb
                .last_repl_id
                .clone()
                .filter(|_| off != -1 && db != -1)
            {
                history = true;
                if i_am_master {
                    crate::replication::master::restore_master_history(srv, id, off);
                } else if (db as usize) < srv.dbs.len() {
                    crate::replication::replica::restore_replica_history(srv, id, off, db as usize);
                }
            }
        }
        Err(LoadError::Open(e)) if e.kind() == io::ErrorKind::NotFound => {}
        Err(LoadError::Open(e)) => {
            server_log(
                LogLevel::Warning,
                &format!(
                    "Fatal error loading the DB: {}. Exiting.",
                    crate::config::strerror(&e)
                ),
            );
            std::process::exit(1);
        }
        Err(LoadError::Bad(msg)) => fatal_load_error(&msg),
    }
    // Without a history to continue, the backlog only costs memory.
    if !history && srv.repl.backlog.is_some() {
        crate::replication::master::free_replication_backlog(srv);
    }
}

/// rdbReportError while loading a file: log, and stop the server.
fn fatal_load_error(msg: &str) -> ! {
    server_log(LogLevel::Warning, msg);
    server_log(
        LogLevel::Warning,
        "Terminating server after rdb file reading failure.",
    );
    std::process::exit(1);
}

// ---------------------------------------------------------------- commands

/// SAVE
// redis: rdb.c saveCommand
pub fn save_command(srv: &mut Server, c: &mut Client) {
    if srv.rdb.has_active_child() {
        return c.add_reply_error("ERR Background save already in progress");
    }
    srv.rdb.stat_rdb_saves += 1;
    match rdb_save(srv) {
        Ok(()) => c.add_reply_ok(),
        Err(SaveError) => c.add_reply_error("ERR"),
    }
}

/// BGSAVE [SCHEDULE]
// redis: rdb.c bgsaveCommand
pub fn bgsave_command(srv: &mut Server, c: &mut Client) {
    let mut schedule = false;
    if c.argc() > 1 {
        if c.argc() == 2 && c.arg(1).eq_ignore_ascii_case(b"schedule") {
            schedule = true;
        } else {
            return c.add_reply_syntax_error();
        }
    }
    let in_exec = c.has_flag(crate::networking::CLIENT_EXECUTING_MULTI);
    if srv.rdb.has_active_child() {
        c.add_reply_error("ERR Background save already in progress");
    } else if crate::aof::has_active_child_process(srv) || in_exec {
        // Forking inside EXEC would snapshot half a transaction's effects
        // for nothing, and there is one child at a time: Redis schedules
        // it for the next cron instead (always inside EXEC).
        if schedule || in_exec {
            srv.rdb.bgsave_scheduled = true;
            c.add_reply_status(b"Background saving scheduled");
        } else {
            c.add_reply_error("ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.");
        }
    } else if rdb_save_background(srv).is_ok() {
        c.add_reply_status(b"Background saving started");
    } else {
        c.add_reply_error("ERR");
    }
}

/// flushAllDataAndResetRDB's persistence half (after emptyData): stop a
/// BGSAVE child (its snapshot is stale now) and, with save points, save
/// the empty dataset right away, which resets the dirty counter.
pub fn flushall_reset_rdb(srv: &mut Server) {
    if srv.rdb.has_active_child() {
        kill_rdb_child(srv);
    }
    if !srv.config.save_params.is_empty() {
        let _ = rdb_save(srv);
    }
}

/// DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE]
// redis: debug.c debugCommand (reload)
pub fn debug_reload(srv: &mut Server, c: &mut Client) {
    let (mut flush, mut save, mut mode) = (true, true, LoadMode::Fresh);
    for j in 2..c.argc() {
        let opt = c.arg(j);
        if opt.eq_ignore_ascii_case(b"merge") {
            mode = LoadMode::AllowDup;
        } else if opt.eq_ignore_ascii_case(b"noflush") {
            flush = false;
        } else if opt.eq_ignore_ascii_case(b"nosave") {
            save = false;
        } else {
            return c.add_reply_error(
                "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.",
            );
        }
    }
    if save && rdb_save(srv).is_err() {
        return c.add_reply_error("ERR");
    }
    if flush {
        // emptyData(-1, EMPTYDB_NO_FLAGS): every db and the functions.
        for dbid in 0..srv.dbs.len() {
            crate::multi::touch_all_watched_keys_in_db(srv, dbid, None);
            srv.dbs[dbid].empty();
        }
        crate::tracking::tracking_invalidate_keys_on_flush(srv);
        srv.functions = crate::function::Functions::new();
    }
    let filename = srv.config.dbfilename.clone();
    match rdb_load(srv, &filename, mode) {
        Ok(()) => {
            server_log(LogLevel::Warning, "DB reloaded by DEBUG RELOAD");
            c.add_reply_ok();
        }
        Err(LoadError::Open(_)) => c.add_reply_error("ERR Error trying to load the RDB dump"),
        Err(LoadError::Bad(msg)) => {
            // rdbReportError with a client in context: log and return,
            // the server lives on (only a start-up load is fatal).
            server_log(LogLevel::Verbose, &msg);
            c.add_reply_error("ERR Error trying to load the RDB dump");
        }
    }
}
