//! The append only file, as Redis 7.0 keeps it (Redis's aof.c).
//!
//! With `appendonly yes` every write command is logged, in the RESP form a
//! client would send it, to a file that replays the dataset at start-up.
//! The commands come from the one propagation path (propagate.rs), already
//! rewritten into deterministic form (PEXPIREAT, SET PXAT, SREM for SPOP).
//!
//! **Multi-part AOF.** Since 7.0 the AOF is a directory (`appenddirname`,
//! `appendonlydir`) of files listed by a manifest,
//! `appendonly.aof.manifest`:
//!
//! ```text
//! file appendonly.aof.1.base.rdb seq 1 type b
//! file appendonly.aof.1.incr.aof seq 1 type i
//! ```
//!
//! - the BASE file is a snapshot taken at the last rewrite: an RDB file
//!   (`aof-use-rdb-preamble yes`, the default, `.base.rdb`) or commands
//!   that rebuild the dataset (`.base.aof`);
//! - INCR files hold the commands since. A rewrite opens a new incr file
//!   at once, so the parent never copies what the child is writing (7.0
//!   dropped the old rewrite buffer and its pipes);
//! - HISTORY files are the base and incrs a finished rewrite made
//!   obsolete; they are deleted in the background (`bio_close_file`).
//!
//! **Writes and fsync.** `feed_append_only_file` only appends to
//! `AofState::buf`. Before the loop sleeps, and so before any reply is
//! written to a socket, `flush_append_only_file` write(2)s the buffer:
//! - `appendfsync always`: and fdatasync()s it right there, on the main
//!   thread (`aof-fsync-always` latency event). A client that got a reply
//!   has its write on the disk; a failed write or fsync stops the server.
//! - `appendfsync everysec`: once a second the fsync is handed to the
//!   `bio_aof_fsync` thread. If that thread is still busy, write(2) would
//!   block on the same file, so the flush is postponed, up to 2 seconds
//!   (`aof_delayed_fsync`, "Asynchronous AOF fsync is taking too long").
//! - `appendfsync no`: the kernel flushes when it likes.
//!
//! **Rewrite** (`BGREWRITEAOF`, `auto-aof-rewrite-percentage`,
//! `CONFIG SET appendonly yes`): fork; the child writes
//! `temp-rewriteaof-bg-<pid>.aof` (as RDB by default) while the parent goes
//! on appending to the new incr file; when the child is reaped the temp
//! file becomes the new base and the manifest is rewritten atomically
//! (temp file, fsync, rename, fsync of the directory).
//!
//! **Loading** (`load_append_only_files`): the base, then each incr file,
//! replayed through a fake client. A file cut short at the end (a crash
//! mid-write) is truncated to its last complete command when
//! `aof-load-truncated yes`; anything else is fatal, as in Redis.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use mio::Token;

use crate::childinfo::{ChildInfoSender, CHILD_INFO_TYPE_AOF_COW_SIZE};
use crate::log::{server_log, LogLevel};
use crate::networking::Client;
use crate::server::{mstime, ustime, Server};

/// Naming rules (aof.c).
const BASE_FILE_SUFFIX: &str = ".base";
const INCR_FILE_SUFFIX: &str = ".incr";
const RDB_FORMAT_SUFFIX: &str = ".rdb";
const AOF_FORMAT_SUFFIX: &str = ".aof";
const MANIFEST_NAME_SUFFIX: &str = ".manifest";
const TEMP_FILE_NAME_PREFIX: &str = "temp-";

/// AOF_FILE_TYPE_*: the `type` of a manifest line.
const AOF_FILE_TYPE_BASE: u8 = b'b';
const AOF_FILE_TYPE_HIST: u8 = b'h';
const AOF_FILE_TYPE_INCR: u8 = b'i';

/// MANIFEST_MAX_LINE: a manifest line longer than this is an error.
const MANIFEST_MAX_LINE: usize = 1024;

/// AOF_ANNOTATION_LINE_MAX_LEN: the line buffer of the loader (`#TS:...`
/// annotations and `*<argc>` / `$<len>` headers fit in it).
const AOF_ANNOTATION_LINE_MAX_LEN: usize = 1024;

/// AOF_WRITE_LOG_ERROR_RATE: at most one write-error log line per 30 s.
const AOF_WRITE_LOG_ERROR_RATE: i64 = 30;

/// AOF_REWRITE_LIMITE_THRESHOLD / AOF_REWRITE_LIMITE_MAX_MINUTES: after 3
/// consecutive failed rewrites, automatic ones back off 1, 2, 4... minutes,
/// up to an hour (each failure would leave one more small incr file).
const AOF_REWRITE_LIMITE_THRESHOLD: u64 = 3;
const AOF_REWRITE_LIMITE_MAX_MINUTES: i64 = 60;

/// AOF_REWRITE_ITEMS_PER_CMD: a rewritten (non-RDB) base uses variadic
/// commands with at most this many elements each.
const AOF_REWRITE_ITEMS_PER_CMD: usize = 64;

/// The client id Redis gives the loading client (CLIENT_ID_AOF).
pub const CLIENT_ID_AOF: u64 = u64::MAX;
const AOF_CLIENT_TOKEN: Token = Token(usize::MAX - 2);

/// An AOF operation failed; the reason is already in the log (C_ERR).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AofError;

/// server.aof_state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AofStatus {
    #[default]
    Off,
    On,
    /// `appendonly yes` was set at run time: commands are logged to a temp
    /// incr file while the first rewrite produces the base.
    WaitRewrite,
}

/// appendfsync.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AofFsync {
    No,
    Always,
    #[default]
    Everysec,
}

/// aofInfo: one manifest line.
#[derive(Debug, Clone)]
pub struct AofInfo {
    pub file_name: String,
    pub file_seq: i64,
    pub file_type: u8,
}

/// aofManifest.
#[derive(Debug, Clone, Default)]
pub struct AofManifest {
    pub base: Option<AofInfo>,
    pub incr_list: Vec<AofInfo>,
    pub history_list: Vec<AofInfo>,
    pub curr_base_file_seq: i64,
    pub curr_incr_file_seq: i64,
    /// Changed since it was last written to disk.
    pub dirty: bool,
}

/// The configuration the AOF reads (refreshed by `aof_update_config`).
#[derive(Debug, Clone, Default)]
pub struct AofConfig {
    pub enabled: bool,
    pub fsync: AofFsync,
    pub filename: String,
    pub dirname: String,
    pub use_rdb_preamble: bool,
    pub load_truncated: bool,
    pub no_fsync_on_rewrite: bool,
    pub rewrite_perc: i64,
    pub rewrite_min_size: i64,
    pub timestamp_enabled: bool,
    pub disable_auto_gc: bool,
    pub rewrite_incremental_fsync: bool,
}

/// The AOF part of Redis's server struct.
#[derive(Default)]
pub struct AofState {
    pub cfg: AofConfig,
    pub state: AofStatus,
    /// Replaying the AOF (nothing is propagated meanwhile).
    pub loading: bool,
    /// DEBUG AOF-FLUSH-SLEEP: microseconds to sleep before each AOF write
    /// (server.aof_flush_sleep), so tests can catch a write in progress.
    pub flush_sleep_us: u64,
    /// The incr file being appended to (server.aof_fd). Shared with the
    /// bio threads' pending jobs (bio.rs).
    fd: Option<Arc<File>>,
    /// server.aof_buf: what the commands of this loop pass added.
    pub buf: Vec<u8>,
    /// The db of the last SELECT written (None: the next op writes one).
    selected_db: Option<usize>,
    pub manifest: AofManifest,
    /// The file threads: bio_aof_fsync and bio_close_file.
    pub bio: Option<crate::bio::Bio>,
    pub current_size: u64,
    pub rewrite_base_size: u64,
    pub last_incr_size: u64,
    pub last_incr_fsync_offset: u64,
    /// Unix seconds of the last fsync (or of its hand-over to the thread).
    last_fsync: i64,
    flush_postponed_start: i64,
    pub delayed_fsync: u64,
    pub rewrite_scheduled: bool,
    /// The rewrite child (child_type == CHILD_TYPE_AOF).
    pub child_pid: Option<libc::pid_t>,
    pub rewrite_time_start: i64,
    pub rewrite_time_last: i64,
    pub lastbgrewrite_ok: bool,
    pub last_write_ok: bool,
    pub last_write_errno: i32,
    pub stat_aof_rewrites: u64,
    pub stat_aofrw_consecutive_failures: u64,
    pub stat_aof_cow_bytes: u64,
    cur_timestamp: i64,
    last_write_error_log: i64,
    next_delay_minutes: i64,
    next_rewrite_time: i64,
}

impl AofState {
    /// initServer's AOF fields.
    pub fn init(cfg: AofConfig) -> io::Result<AofState> {
        Ok(AofState {
            flush_sleep_us: 0,
            state: if cfg.enabled {
                AofStatus::On
            } else {
                AofStatus::Off
            },
            cfg,
            bio: Some(crate::bio::Bio::start()?),
            last_fsync: mstime() / 1000,
            rewrite_time_last: -1,
            rewrite_time_start: -1,
            lastbgrewrite_ok: true,
            last_write_ok: true,
            ..Default::default()
        })
    }
}

fn unixtime() -> i64 {
    mstime() / 1000
}

fn strerror(e: &io::Error) -> String {
    crate::config::strerror(e)
}

pub fn strerror_code(code: i32) -> String {
    strerror(&io::Error::from_raw_os_error(code))
}

/// makePath.
fn make_path(dir: &str, file: &str) -> String {
    format!("{dir}/{file}")
}

// ---------------------------------------------------------------- config

/// The AOF's view of the configuration (read at start-up and after every
/// CONFIG SET of an AOF parameter).
pub fn aof_config_from(config: &crate::config::Config) -> AofConfig {
    let s = |n: &str| config.get_string(n).unwrap_or_default();
    let yes = |n: &str| s(n) == "yes";
    let num = |n: &str| s(n).parse::<i64>().unwrap_or(0);
    AofConfig {
        enabled: config.appendonly,
        fsync: match s("appendfsync").as_str() {
            "always" => AofFsync::Always,
            "no" => AofFsync::No,
            _ => AofFsync::Everysec,
        },
        filename: s("appendfilename"),
        dirname: s("appenddirname"),
        use_rdb_preamble: yes("aof-use-rdb-preamble"),
        load_truncated: yes("aof-load-truncated"),
        no_fsync_on_rewrite: yes("no-appendfsync-on-rewrite"),
        rewrite_perc: num("auto-aof-rewrite-percentage"),
        rewrite_min_size: config
            .value("auto-aof-rewrite-min-size")
            .and_then(|v| match v {
                crate::config::Value::Num(n) => Some(*n),
                _ => None,
            })
            .unwrap_or(64 * 1024 * 1024),
        timestamp_enabled: yes("aof-timestamp-enabled"),
        disable_auto_gc: yes("aof-disable-auto-gc"),
        rewrite_incremental_fsync: yes("aof-rewrite-incremental-fsync"),
    }
}

/// Is `name` a parameter the AOF reads?
pub fn is_aof_config(name: &str) -> bool {
    name.starts_with("aof-")
        || name.starts_with("auto-aof-")
        || name.starts_with("append")
        || name == "no-appendfsync-on-rewrite"
}

/// The apply function of the AOF parameters (updateAppendonly,
/// updateAofAutoGCEnabled): `appendonly` starts or stops the AOF.
pub fn aof_apply_config(srv: &mut Server, name: &str) -> Result<(), &'static str> {
    let was_gc_disabled = srv.aof.cfg.disable_auto_gc;
    srv.aof.cfg = aof_config_from(&srv.config);
    match name {
        "appendonly" => {
            if !srv.aof.cfg.enabled && srv.aof.state != AofStatus::Off {
                stop_append_only(srv);
            } else if srv.aof.cfg.enabled
                && srv.aof.state == AofStatus::Off
                && start_append_only(srv).is_err()
            {
                return Err("Unable to turn on AOF. Check server logs.");
            }
        }
        "aof-disable-auto-gc" if was_gc_disabled && !srv.aof.cfg.disable_auto_gc => {
            let _ = aof_del_history_files(srv);
        }
        _ => {}
    }
    Ok(())
}

// -------------------------------------------------------------- manifest

/// aofInfoFormat: `file <name> seq <n> type <t>`, the name quoted when it
/// needs it (sdsneedsrepr).
fn aof_info_format(buf: &mut String, ai: &AofInfo) {
    let needs_repr = ai.file_name.bytes().any(|b| {
        matches!(b, b'\\' | b'"' | b'\n' | b'\r' | b'\t' | 0x07 | 0x08)
            || !(0x21..=0x7e).contains(&b)
    });
    let name = if needs_repr {
        let mut out = bytes::BytesMut::new();
        crate::monitor::cat_repr(&mut out, ai.file_name.as_bytes());
        String::from_utf8_lossy(&out).into_owned()
    } else {
        ai.file_name.clone()
    };
    buf.push_str(&format!(
        "file {name} seq {} type {}\n",
        ai.file_seq, ai.file_type as char
    ));
}

/// getAofManifestAsString: the base, then history, then incr files.
pub fn get_aof_manifest_as_string(am: &AofManifest) -> String {
    let mut buf = String::new();
    if let Some(b) = &am.base {
        aof_info_format(&mut buf, b);
    }
    for ai in am.history_list.iter().chain(am.incr_list.iter()) {
        aof_info_format(&mut buf, ai);
    }
    buf
}

fn get_aof_manifest_file_name(srv: &Server) -> String {
    format!("{}{MANIFEST_NAME_SUFFIX}", srv.aof.cfg.filename)
}

fn get_temp_aof_manifest_file_name(srv: &Server) -> String {
    format!(
        "{TEMP_FILE_NAME_PREFIX}{}{MANIFEST_NAME_SUFFIX}",
        srv.aof.cfg.filename
    )
}

fn get_temp_incr_aof_name(srv: &Server) -> String {
    format!(
        "{TEMP_FILE_NAME_PREFIX}{}{INCR_FILE_SUFFIX}",
        srv.aof.cfg.filename
    )
}

/// The manifest's lines could not be parsed: Redis's fatal error block.
fn manifest_load_error(linenum: usize, line: Option<&str>, err: &str) -> ! {
    server_log(
        LogLevel::Warning,
        "\n*** FATAL AOF MANIFEST FILE ERROR ***\n",
    );
    if let Some(line) = line {
        server_log(
            LogLevel::Warning,
            &format!("Reading the manifest file, at line {linenum}\n"),
        );
        server_log(LogLevel::Warning, &format!(">>> '{line}'\n"));
    }
    server_log(LogLevel::Warning, &format!("{err}\n"));
    std::process::exit(1);
}

/// aofLoadManifestFromFile: parse a manifest (fatal on any error).
pub fn aof_load_manifest_from_file(path: &str) -> AofManifest {
    let data = match std::fs::read(path) {
        Ok(d) => d,
        Err(e) => {
            server_log(
                LogLevel::Warning,
                &format!(
                    "Fatal error: can't open the AOF manifest file {path} for reading: {}",
                    strerror(&e)
                ),
            );
            std::process::exit(1);
        }
    };
    let mut am = AofManifest::default();
    let mut maxseq = 0i64;
    if data.is_empty() {
        manifest_load_error(0, None, "Found an empty AOF manifest");
    }
    let mut rest = &data[..];
    let mut linenum = 0;
    while !rest.is_empty() {
        let (raw, next, has_nl) = match rest.iter().position(|&b| b == b'\n') {
            Some(i) => (&rest[..=i], &rest[i + 1..], true),
            None => (rest, &rest[rest.len()..], false),
        };
        rest = next;
        linenum += 1;
        if raw.first() == Some(&b'#') {
            continue;
        }
        if !has_nl || raw.len() > MANIFEST_MAX_LINE {
            manifest_load_error(
                linenum,
                None,
                "The AOF manifest file contains too long line",
            );
        }
        let line = String::from_utf8_lossy(raw)
            .trim_matches(|c| " \t\r\n".contains(c))
            .to_string();
        if line.is_empty() {
            manifest_load_error(linenum, Some(&line), "Invalid AOF manifest file format");
        }
        let argv = protocol::request::sdssplitargs(&Bytes::from(line.clone()));
        let argv = match argv {
            Some(a) if a.len() >= 6 && a.len() % 2 == 0 => a,
            _ => manifest_load_error(linenum, Some(&line), "Invalid AOF manifest file format"),
        };
        let (mut name, mut seq, mut ftype) = (None, 0i64, 0u8);
        for pair in argv.chunks(2) {
            let key = pair[0].to_ascii_lowercase();
            match &key[..] {
                b"file" => {
                    let n = String::from_utf8_lossy(&pair[1]).into_owned();
                    if n.contains('/') {
                        manifest_load_error(
                            linenum,
                            Some(&line),
                            "File can't be a path, just a filename",
                        );
                    }
                    name = Some(n);
                }
                b"seq" => {
                    seq = parse_header_num(&[&b" "[..], &pair[1]].concat());
                }
                b"type" => ftype = pair[1].first().copied().unwrap_or(0),
                _ => {}
            }
        }
        let Some(file_name) = name.filter(|_| seq != 0 && ftype != 0) else {
            manifest_load_error(linenum, Some(&line), "Invalid AOF manifest file format");
        };
        let ai = AofInfo {
            file_name,
            file_seq: seq,
            file_type: ftype,
        };
        match ftype {
            AOF_FILE_TYPE_BASE => {
                if am.base.is_some() {
                    manifest_load_error(
                        linenum,
                        Some(&line),
                        "Found duplicate base file information",
                    );
                }
                am.curr_base_file_seq = seq;
                am.base = Some(ai);
            }
            AOF_FILE_TYPE_HIST => am.history_list.push(ai),
            AOF_FILE_TYPE_INCR => {
                if seq <= maxseq {
                    manifest_load_error(
                        linenum,
                        Some(&line),
                        "Found a non-monotonic sequence number",
                    );
                }
                am.curr_incr_file_seq = seq;
                maxseq = seq;
                am.incr_list.push(ai);
            }
            _ => manifest_load_error(linenum, Some(&line), "Unknown AOF file type"),
        }
    }
    am
}

/// aofLoadManifestFromDisk: at start-up; no directory or no manifest is
/// not an error (an empty manifest then).
pub fn aof_load_manifest_from_disk(srv: &mut Server) {
    srv.aof.manifest = AofManifest::default();
    let dir = srv.aof.cfg.dirname.clone();
    if !std::path::Path::new(&dir).is_dir() {
        server_log(
            LogLevel::Debug,
            &format!("The AOF directory {dir} doesn't exist"),
        );
        return;
    }
    let am_name = get_aof_manifest_file_name(srv);
    let am_filepath = make_path(&dir, &am_name);
    if !std::path::Path::new(&am_filepath).exists() {
        server_log(
            LogLevel::Debug,
            &format!("The AOF manifest file {am_name} doesn't exist"),
        );
        return;
    }
    srv.aof.manifest = aof_load_manifest_from_file(&am_filepath);
}

/// getNewBaseFileNameAndMarkPreAsHistory.
fn get_new_base_file_name_and_mark_pre_as_history(srv: &Server, am: &mut AofManifest) -> String {
    if let Some(mut old) = am.base.take() {
        old.file_type = AOF_FILE_TYPE_HIST;
        am.history_list.insert(0, old);
    }
    let suffix = if srv.aof.cfg.use_rdb_preamble {
        RDB_FORMAT_SUFFIX
    } else {
        AOF_FORMAT_SUFFIX
    };
    am.curr_base_file_seq += 1;
    let name = format!(
        "{}.{}{BASE_FILE_SUFFIX}{suffix}",
        srv.aof.cfg.filename, am.curr_base_file_seq
    );
    am.base = Some(AofInfo {
        file_name: name.clone(),
        file_seq: am.curr_base_file_seq,
        file_type: AOF_FILE_TYPE_BASE,
    });
    am.dirty = true;
    name
}

/// getNewIncrAofName.
fn get_new_incr_aof_name(srv: &Server, am: &mut AofManifest) -> String {
    am.curr_incr_file_seq += 1;
    let name = format!(
        "{}.{}{INCR_FILE_SUFFIX}{AOF_FORMAT_SUFFIX}",
        srv.aof.cfg.filename, am.curr_incr_file_seq
    );
    am.incr_list.push(AofInfo {
        file_name: name.clone(),
        file_seq: am.curr_incr_file_seq,
        file_type: AOF_FILE_TYPE_INCR,
    });
    am.dirty = true;
    name
}

/// getLastIncrAofName: the last incr file, or a new one.
fn get_last_incr_aof_name(srv: &Server, am: &mut AofManifest) -> String {
    match am.incr_list.last() {
        Some(ai) => ai.file_name.clone(),
        None => get_new_incr_aof_name(srv, am),
    }
}

/// markRewrittenIncrAofAsHistory: every incr file but the one being
/// written (when the AOF is on) is covered by the new base.
fn mark_rewritten_incr_aof_as_history(srv: &Server, am: &mut AofManifest) {
    if am.incr_list.is_empty() {
        return;
    }
    let keep = usize::from(srv.aof.fd.is_some());
    let n = am.incr_list.len().saturating_sub(keep);
    let moved: Vec<AofInfo> = am.incr_list.drain(..n).collect();
    // Redis walks them from the newest and puts each at the head.
    for mut ai in moved.into_iter() {
        ai.file_type = AOF_FILE_TYPE_HIST;
        am.history_list.insert(0, ai);
    }
    am.dirty = true;
}

/// writeAofManifestFile: temp file, fsync, rename, fsync the directory.
fn write_aof_manifest_file(srv: &Server, buf: &str) -> Result<(), AofError> {
    let dir = &srv.aof.cfg.dirname;
    let am_name = get_aof_manifest_file_name(srv);
    let am_filepath = make_path(dir, &am_name);
    let tmp_am_name = get_temp_aof_manifest_file_name(srv);
    let tmp_am_filepath = make_path(dir, &tmp_am_name);
    let mut f = match OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&tmp_am_filepath)
    {
        Ok(f) => f,
        Err(e) => {
            server_log(
                LogLevel::Warning,
                &format!(
                    "Can't open the AOF manifest file {tmp_am_name}: {}",
                    strerror(&e)
                ),
            );
            return Err(AofError);
        }
    };
    if let Err(e) = f.write_all(buf.as_bytes()) {
        server_log(
            LogLevel::Warning,
            &format!(
                "Error trying to write the temporary AOF manifest file {tmp_am_name}: {}",
                strerror(&e)
            ),
        );
        return Err(AofError);
    }
    if let Err(e) = crate::bio::redis_fsync(&f) {
        server_log(
            LogLevel::Warning,
            &format!(
                "Fail to fsync the temp AOF file {tmp_am_name}: {}.",
                strerror(&e)
            ),
        );
        return Err(AofError);
    }
    if let Err(e) = std::fs::rename(&tmp_am_filepath, &am_filepath) {
        server_log(
            LogLevel::Warning,
            &format!(
                "Error trying to rename the temporary AOF manifest file {tmp_am_name} into {am_name}: {}",
                strerror(&e)
            ),
        );
        return Err(AofError);
    }
    if let Err(e) = File::open(dir).and_then(|d| d.sync_all()) {
        server_log(
            LogLevel::Warning,
            &format!(
                "Fail to fsync AOF directory {am_filepath}: {}.",
                strerror(&e)
            ),
        );
        return Err(AofError);
    }
    Ok(())
}

/// persistAofManifest: write it when it changed.
fn persist_aof_manifest(srv: &Server, am: &mut AofManifest) -> Result<(), AofError> {
    if !am.dirty {
        return Ok(());
    }
    let s = get_aof_manifest_as_string(am);
    write_aof_manifest_file(srv, &s)?;
    am.dirty = false;
    Ok(())
}

/// dirCreateIfMissing.
fn dir_create_if_missing(dir: &str) -> io::Result<()> {
    match std::fs::create_dir(dir) {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => Err(e),
        _ => Ok(()),
    }
}

/// aofUpgradePrepare: an old single-file AOF (`appendonly.aof` in `dir`)
/// becomes the base of a new AOF directory.
fn aof_upgrade_prepare(srv: &mut Server) {
    let dir = srv.aof.cfg.dirname.clone();
    let filename = srv.aof.cfg.filename.clone();
    if let Err(e) = dir_create_if_missing(&dir) {
        server_log(
            LogLevel::Warning,
            &format!(
                "Can't open or create append-only dir {dir}: {}",
                strerror(&e)
            ),
        );
        std::process::exit(1);
    }
    let mut am = std::mem::take(&mut srv.aof.manifest);
    am.base = Some(AofInfo {
        file_name: filename.clone(),
        file_seq: 1,
        file_type: AOF_FILE_TYPE_BASE,
    });
    am.curr_base_file_seq = 1;
    am.dirty = true;
    if persist_aof_manifest(srv, &mut am).is_err() {
        std::process::exit(1);
    }
    srv.aof.manifest = am;
    let dest = make_path(&dir, &filename);
    if let Err(e) = std::fs::rename(&filename, &dest) {
        server_log(
            LogLevel::Warning,
            &format!(
                "Error trying to move the old AOF file {filename} into dir {dir}: {}",
                strerror(&e)
            ),
        );
        std::process::exit(1);
    }
    server_log(
        LogLevel::Notice,
        &format!(
            "Successfully migrated an old-style AOF file ({filename}) into the AOF directory ({dir})."
        ),
    );
}

/// aofDelHistoryFiles: delete the history files in the background.
pub fn aof_del_history_files(srv: &mut Server) -> Result<(), AofError> {
    if srv.aof.cfg.disable_auto_gc || srv.aof.manifest.history_list.is_empty() {
        return Ok(());
    }
    let history = std::mem::take(&mut srv.aof.manifest.history_list);
    for ai in history {
        server_log(
            LogLevel::Notice,
            &format!(
                "Removing the history file {} in the background",
                ai.file_name
            ),
        );
        bg_unlink(srv, &make_path(&srv.aof.cfg.dirname, &ai.file_name));
    }
    srv.aof.manifest.dirty = true;
    let mut am = std::mem::take(&mut srv.aof.manifest);
    let r = persist_aof_manifest(srv, &mut am);
    srv.aof.manifest = am;
    r
}

fn bg_unlink(srv: &Server, path: &str) {
    match &srv.aof.bio {
        Some(bio) => {
            let _ = bio.bg_unlink(path);
        }
        None => {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// aofDelTempIncrAofFile: a failed rewrite's temp incr file.
fn aof_del_temp_incr_aof_file(srv: &Server) {
    let name = get_temp_incr_aof_name(srv);
    server_log(
        LogLevel::Notice,
        &format!("Removing the temp incr aof file {name} in the background"),
    );
    bg_unlink(srv, &make_path(&srv.aof.cfg.dirname, &name));
}

/// getAppendOnlyFileSize (with the `aof-fstat` latency event).
fn get_append_only_file_size(srv: &mut Server, filename: &str) -> Result<u64, io::Error> {
    let start = Instant::now();
    let path = make_path(&srv.aof.cfg.dirname, filename);
    let r = std::fs::metadata(&path).map(|m| m.len());
    if let Err(e) = &r {
        server_log(
            LogLevel::Warning,
            &format!(
                "Unable to obtain the AOF file {filename} length. stat: {}",
                strerror(e)
            ),
        );
    }
    let ms = start.elapsed().as_millis() as u64;
    let threshold = srv.config.latency_monitor_threshold;
    srv.latency.add_sample_if_needed(threshold, "aof-fstat", ms);
    r
}

// ------------------------------------------------------------- start-up

/// aofOpenIfNeededOnServerStart: with `appendonly yes`, after loading:
/// create a base file for an empty start, open the last incr file for
/// appending (or create one), write the manifest. Any failure is fatal.
pub fn aof_open_if_needed_on_server_start(srv: &mut Server) {
    if srv.aof.state != AofStatus::On {
        return;
    }
    let dir = srv.aof.cfg.dirname.clone();
    if let Err(e) = dir_create_if_missing(&dir) {
        server_log(
            LogLevel::Warning,
            &format!(
                "Can't open or create append-only dir {dir}: {}",
                strerror(&e)
            ),
        );
        std::process::exit(1);
    }
    let mut am = std::mem::take(&mut srv.aof.manifest);
    let incr_aof_len = am.incr_list.len();
    if am.base.is_none() && incr_aof_len == 0 {
        let base_name = get_new_base_file_name_and_mark_pre_as_history(srv, &mut am);
        let mut no_child = ChildInfoSender::new("AOF rewrite");
        if rewrite_append_only_file(srv, &make_path(&dir, &base_name), &mut no_child).is_err() {
            std::process::exit(1);
        }
        server_log(
            LogLevel::Notice,
            &format!("Creating AOF base file {base_name} on server start"),
        );
    }
    let aof_name = get_last_incr_aof_name(srv, &mut am);
    let path = make_path(&dir, &aof_name);
    match OpenOptions::new().append(true).create(true).open(&path) {
        Ok(f) => srv.aof.fd = Some(Arc::new(f)),
        Err(e) => {
            server_log(
                LogLevel::Warning,
                &format!(
                    "Can't open the append-only file {aof_name}: {}",
                    strerror(&e)
                ),
            );
            std::process::exit(1);
        }
    }
    if persist_aof_manifest(srv, &mut am).is_err() {
        std::process::exit(1);
    }
    srv.aof.manifest = am;
    srv.aof.last_incr_size = get_append_only_file_size(srv, &aof_name).unwrap_or(0);
    srv.aof.last_incr_fsync_offset = srv.aof.last_incr_size;
    if incr_aof_len > 0 {
        server_log(
            LogLevel::Notice,
            &format!("Opening AOF incr file {aof_name} on server start"),
        );
    } else {
        server_log(
            LogLevel::Notice,
            &format!("Creating AOF incr file {aof_name} on server start"),
        );
    }
}

/// openNewIncrAofForAppend: a rewrite starts; the parent goes on in a new
/// incr file (a temp one while waiting for the first rewrite). Atomic: on
/// failure nothing changed.
fn open_new_incr_aof_for_append(srv: &mut Server) -> Result<(), AofError> {
    if srv.aof.state == AofStatus::Off {
        return Ok(());
    }
    let mut temp_am = None;
    let new_aof_name = if srv.aof.state == AofStatus::WaitRewrite {
        get_temp_incr_aof_name(srv)
    } else {
        let mut am = srv.aof.manifest.clone();
        let name = get_new_incr_aof_name(srv, &mut am);
        temp_am = Some(am);
        name
    };
    let path = make_path(&srv.aof.cfg.dirname, &new_aof_name);
    let newfd = match OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
    {
        Ok(f) => f,
        Err(e) => {
            server_log(
                LogLevel::Warning,
                &format!(
                    "Can't open the append-only file {new_aof_name}: {}",
                    strerror(&e)
                ),
            );
            return Err(AofError);
        }
    };
    if let Some(am) = temp_am.as_mut() {
        persist_aof_manifest(srv, am)?;
    }
    server_log(
        LogLevel::Notice,
        &format!("Creating AOF incr file {new_aof_name} on background rewrite"),
    );
    // The old file: fsynced and closed by bio_close_file.
    if let Some(old) = srv.aof.fd.take() {
        if let Some(bio) = &srv.aof.bio {
            bio.create_close_job(old, true);
        }
        srv.aof.last_fsync = unixtime();
    }
    srv.aof.fd = Some(Arc::new(newfd));
    srv.aof.last_incr_size = 0;
    srv.aof.last_incr_fsync_offset = 0;
    if let Some(am) = temp_am {
        srv.aof.manifest = am;
    }
    Ok(())
}

/// aofRewriteLimited: back off after repeated failures.
fn aof_rewrite_limited(srv: &mut Server) -> bool {
    let st = &mut srv.aof;
    if st.stat_aofrw_consecutive_failures < AOF_REWRITE_LIMITE_THRESHOLD {
        st.next_delay_minutes = 0;
        st.next_rewrite_time = 0;
        return false;
    }
    if st.next_rewrite_time != 0 {
        if unixtime() < st.next_rewrite_time {
            return true;
        }
        st.next_rewrite_time = 0;
        return false;
    }
    st.next_delay_minutes = if st.next_delay_minutes == 0 {
        1
    } else {
        (st.next_delay_minutes * 2).min(AOF_REWRITE_LIMITE_MAX_MINUTES)
    };
    st.next_rewrite_time = unixtime() + st.next_delay_minutes * 60;
    server_log(
        LogLevel::Warning,
        &format!(
            "Background AOF rewrite has repeatedly failed and triggered the limit, will retry in {} minutes",
            st.next_delay_minutes
        ),
    );
    true
}

/// aofFsyncInProgress: a background fsync is queued or running.
fn aof_fsync_in_progress(srv: &Server) -> bool {
    srv.aof
        .bio
        .as_ref()
        .is_some_and(|b| b.pending_fsync_jobs() != 0)
}

/// hasActiveChildProcess: a BGSAVE or a rewrite child runs (one at a time).
pub fn has_active_child_process(srv: &Server) -> bool {
    srv.rdb.has_active_child() || srv.aof.child_pid.is_some()
}

/// killAppendOnlyChild: SIGUSR1, and wait for it.
pub fn kill_append_only_child(srv: &mut Server) {
    let Some(pid) = srv.aof.child_pid else {
        return;
    };
    server_log(
        LogLevel::Notice,
        &format!("Killing running AOF rewrite child: {pid}"),
    );
    // SAFETY: signalling and reaping our own child.
    unsafe {
        if libc::kill(pid, libc::SIGUSR1) != -1 {
            let mut st = 0;
            while libc::waitpid(pid, &mut st, 0) == -1
                && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
            {}
        }
    }
    aof_remove_temp_file(srv, pid);
    srv.aof.child_pid = None;
    crate::childinfo::close_child_info_pipe(srv);
    storage::dict::set_resize_allowed(true);
    srv.aof.rewrite_time_start = -1;
}

/// stopAppendOnly: CONFIG SET appendonly no.
pub fn stop_append_only(srv: &mut Server) {
    flush_append_only_file(srv, true);
    if let Some(fd) = srv.aof.fd.take() {
        match crate::bio::redis_fsync(&fd) {
            Err(e) => server_log(
                LogLevel::Warning,
                &format!("Fail to fsync the AOF file: {}", strerror(&e)),
            ),
            Ok(()) => srv.aof.last_fsync = unixtime(),
        }
    }
    srv.aof.selected_db = None;
    srv.aof.state = AofStatus::Off;
    srv.aof.rewrite_scheduled = false;
    srv.aof.last_incr_size = 0;
    srv.aof.last_incr_fsync_offset = 0;
    kill_append_only_child(srv);
    srv.aof.buf = Vec::new();
}

/// startAppendOnly: CONFIG SET appendonly yes. The AOF exists only once a
/// rewrite has written its base: until then commands go to a temp incr.
pub fn start_append_only(srv: &mut Server) -> Result<(), AofError> {
    srv.aof.state = AofStatus::WaitRewrite;
    let in_exec = srv.in_exec;
    if srv.rdb.has_active_child() {
        srv.aof.rewrite_scheduled = true;
        server_log(LogLevel::Warning, "AOF was enabled but there is already another background operation. An AOF background was scheduled to start when possible.");
    } else if in_exec {
        srv.aof.rewrite_scheduled = true;
        server_log(LogLevel::Warning, "AOF was enabled during a transaction. An AOF background was scheduled to start when possible.");
    } else {
        if srv.aof.child_pid.is_some() {
            server_log(LogLevel::Warning, "AOF was enabled but there is already an AOF rewriting in background. Stopping background AOF and starting a rewrite now.");
            kill_append_only_child(srv);
        }
        if rewrite_append_only_file_background(srv).is_err() {
            srv.aof.state = AofStatus::Off;
            server_log(LogLevel::Warning, "Redis needs to enable the AOF but can't trigger a background AOF rewrite operation. Check the above logs for more info about the error.");
            return Err(AofError);
        }
    }
    srv.aof.last_fsync = unixtime();
    if let Some(bio) = &srv.aof.bio {
        if bio.fsync_errno() != 0 {
            server_log(
                LogLevel::Warning,
                "AOF reopen, just ignore the AOF fsync error in bio job",
            );
            bio.clear_fsync_error();
        }
    }
    if !srv.aof.last_write_ok {
        server_log(LogLevel::Warning, "AOF reopen, just ignore the last error.");
        srv.aof.last_write_ok = true;
    }
    Ok(())
}

// --------------------------------------------------------------- writing

/// aofWrite: write all of `buf`, retrying short writes and EINTR. Returns
/// how much was written and the error that stopped it, if any.
fn aof_write(file: &File, buf: &[u8]) -> (usize, Option<io::Error>) {
    let mut total = 0;
    let mut f = file;
    while total < buf.len() {
        match f.write(&buf[total..]) {
            Ok(0) => return (total, Some(io::Error::from_raw_os_error(libc::ENOSPC))),
            Ok(n) => total += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return (total, Some(e)),
        }
    }
    (total, None)
}

/// flushAppendOnlyFile: write the buffer, and fsync per `appendfsync`.
/// Runs before the loop sleeps (so before replies go out). With everysec a
/// flush may be postponed while a background fsync runs, unless `force`.
pub fn flush_append_only_file(srv: &mut Server, force: bool) {
    let now = unixtime();
    let fsync = srv.aof.cfg.fsync;
    let Some(fd) = srv.aof.fd.clone() else {
        return;
    };
    let mut sync_in_progress = false;
    let threshold = srv.config.latency_monitor_threshold;
    if srv.aof.buf.is_empty() {
        // Nothing to write, but an everysec fsync may still be due for
        // what was written less than a second ago.
        let unsynced = srv.aof.last_incr_fsync_offset != srv.aof.last_incr_size;
        if fsync == AofFsync::Everysec && unsynced && now > srv.aof.last_fsync {
            sync_in_progress = aof_fsync_in_progress(srv);
            if sync_in_progress {
                return;
            }
        } else if !(fsync == AofFsync::Always && unsynced) {
            return;
        }
    } else {
        if fsync == AofFsync::Everysec {
            sync_in_progress = aof_fsync_in_progress(srv);
        }
        if fsync == AofFsync::Everysec && !force && sync_in_progress {
            // write(2) would block behind the fsync: wait up to 2 s.
            if srv.aof.flush_postponed_start == 0 {
                srv.aof.flush_postponed_start = now;
                return;
            } else if now - srv.aof.flush_postponed_start < 2 {
                return;
            }
            srv.aof.delayed_fsync += 1;
            server_log(LogLevel::Notice, "Asynchronous AOF fsync is taking too long (disk is busy?). Writing the AOF buffer without waiting for fsync to complete, this may slow down Redis.");
        }

        if srv.aof.flush_sleep_us > 0 {
            std::thread::sleep(std::time::Duration::from_micros(srv.aof.flush_sleep_us));
        }
        let start = Instant::now();
        let (nwritten, err) = aof_write(&fd, &srv.aof.buf);
        let ms = start.elapsed().as_millis() as u64;
        let event = if sync_in_progress {
            "aof-write-pending-fsync"
        } else if has_active_child_process(srv) {
            "aof-write-active-child"
        } else {
            "aof-write-alone"
        };
        srv.latency.add_sample_if_needed(threshold, event, ms);
        srv.latency.add_sample_if_needed(threshold, "aof-write", ms);
        srv.aof.flush_postponed_start = 0;

        if let Some(e) = err {
            if !flush_write_error(srv, &fd, nwritten, e) {
                return;
            }
        } else if !srv.aof.last_write_ok {
            server_log(
                LogLevel::Warning,
                "AOF write error looks solved, Redis can write again.",
            );
            srv.aof.last_write_ok = true;
        }
        let n = srv.aof.buf.len() as u64;
        srv.aof.current_size += n;
        srv.aof.last_incr_size += n;
        // Keep a small buffer's allocation for the next pass.
        if srv.aof.buf.capacity() < 4000 {
            srv.aof.buf.clear();
        } else {
            srv.aof.buf = Vec::new();
        }
    }

    // try_fsync: not while a child writes, with no-appendfsync-on-rewrite.
    if srv.aof.cfg.no_fsync_on_rewrite && has_active_child_process(srv) {
        return;
    }
    if fsync == AofFsync::Always {
        let start = Instant::now();
        if let Err(e) = crate::bio::redis_fsync(&fd) {
            server_log(
                LogLevel::Warning,
                &format!(
                    "Can't persist AOF for fsync error when the AOF fsync policy is 'always': {}. Exiting...",
                    strerror(&e)
                ),
            );
            std::process::exit(1);
        }
        let ms = start.elapsed().as_millis() as u64;
        srv.latency
            .add_sample_if_needed(threshold, "aof-fsync-always", ms);
        srv.aof.last_incr_fsync_offset = srv.aof.last_incr_size;
        srv.aof.last_fsync = now;
    } else if fsync == AofFsync::Everysec && now > srv.aof.last_fsync {
        if !sync_in_progress {
            if let Some(bio) = &srv.aof.bio {
                bio.create_fsync_job(fd);
            }
            srv.aof.last_incr_fsync_offset = srv.aof.last_incr_size;
        }
        srv.aof.last_fsync = now;
    }
}

/// The error half of flushAppendOnlyFile. Returns true when the buffer
/// went out after all (never, today: kept for the shape of Redis's code).
fn flush_write_error(srv: &mut Server, fd: &File, nwritten: usize, e: io::Error) -> bool {
    let now = unixtime();
    let can_log = now - srv.aof.last_write_error_log > AOF_WRITE_LOG_ERROR_RATE;
    if can_log {
        srv.aof.last_write_error_log = now;
    }
    let mut nwritten = nwritten as i64;
    if nwritten == 0 {
        if can_log {
            server_log(
                LogLevel::Warning,
                &format!("Error writing to the AOF file: {}", strerror(&e)),
            );
        }
        srv.aof.last_write_errno = e.raw_os_error().unwrap_or(libc::EIO);
        nwritten = -1;
    } else {
        if can_log {
            server_log(
                LogLevel::Warning,
                &format!(
                    "Short write while writing to the AOF file: (nwritten={nwritten}, expected={})",
                    srv.aof.buf.len()
                ),
            );
        }
        // Undo the partial write, so the file ends on a whole command.
        match fd.set_len(srv.aof.last_incr_size) {
            Err(te) => {
                if can_log {
                    server_log(LogLevel::Warning, &format!("Could not remove short write from the append-only file.  Redis may refuse to load the AOF the next time it starts.  ftruncate: {}", strerror(&te)));
                }
            }
            Ok(()) => nwritten = -1,
        }
        srv.aof.last_write_errno = libc::ENOSPC;
    }
    if srv.aof.cfg.fsync == AofFsync::Always {
        // The reply is already queued and the change made: the promise
        // that acknowledged writes are on disk cannot be kept.
        server_log(
            LogLevel::Warning,
            "Can't recover from AOF write error when the AOF fsync policy is 'always'. Exiting...",
        );
        std::process::exit(1);
    }
    srv.aof.last_write_ok = false;
    if nwritten > 0 {
        let n = nwritten as u64;
        srv.aof.current_size += n;
        srv.aof.last_incr_size += n;
        srv.aof.buf.drain(..nwritten as usize);
    }
    false
}

/// catAppendOnlyGenericCommand: the command as a RESP array of bulks.
pub fn cat_append_only_generic_command(dst: &mut Vec<u8>, argv: &[Bytes]) {
    dst.extend_from_slice(format!("*{}\r\n", argv.len()).as_bytes());
    for a in argv {
        dst.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        dst.extend_from_slice(a);
        dst.extend_from_slice(b"\r\n");
    }
}

/// feedAppendOnlyFile: append one propagated command to the buffer, with
/// a SELECT first when it targets another db than the last one.
pub fn feed_append_only_file(srv: &mut Server, dbid: usize, argv: &[Bytes]) {
    let st = &mut srv.aof;
    let accept =
        st.state == AofStatus::On || (st.state == AofStatus::WaitRewrite && st.child_pid.is_some());
    if !accept {
        return;
    }
    if st.cfg.timestamp_enabled {
        let now = unixtime();
        if st.cur_timestamp < now {
            st.cur_timestamp = now;
            st.buf
                .extend_from_slice(format!("#TS:{now}\r\n").as_bytes());
        }
    }
    if st.selected_db != Some(dbid) {
        let seldb = dbid.to_string();
        st.buf.extend_from_slice(
            format!("*2\r\n$6\r\nSELECT\r\n${}\r\n{seldb}\r\n", seldb.len()).as_bytes(),
        );
        st.selected_db = Some(dbid);
    }
    cat_append_only_generic_command(&mut st.buf, argv);
}

/// The AOF's part of beforeSleep: anything queued outside a command is
/// propagated, then the buffer is written (and fsynced with `always`)
/// before any reply leaves.
pub fn before_sleep(srv: &mut Server) {
    crate::propagate::propagate_pending_outside_call(srv);
    if matches!(srv.aof.state, AofStatus::On | AofStatus::WaitRewrite) {
        flush_append_only_file(srv, false);
    }
}

/// A socket became writable in the middle of a loop pass: with `always`,
/// replies must not overtake the AOF (Redis's AE_BARRIER).
pub fn flush_before_reply(srv: &mut Server) {
    if srv.aof.cfg.fsync == AofFsync::Always
        && !srv.aof.buf.is_empty()
        && matches!(srv.aof.state, AofStatus::On | AofStatus::WaitRewrite)
    {
        crate::propagate::propagate_pending_outside_call(srv);
        flush_append_only_file(srv, true);
    }
}

// --------------------------------------------------------------- loading

/// The result of loading one file (AOF_OK...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AofLoad {
    Ok,
    NotExist,
    Empty,
    OpenErr,
    Failed,
    Truncated,
}

/// How a command read from the file ended.
enum ReadEnd {
    /// The file ended cleanly between commands.
    Eof,
    /// Cut short (unexpected EOF): the truncation case.
    Short,
    /// Not RESP: a corrupt file.
    Format,
    Io(io::Error),
}

/// fgets(buf, AOF_ANNOTATION_LINE_MAX_LEN): one line, at most 1023 bytes.
fn read_line<R: BufRead>(r: &mut R, pos: &mut u64) -> Result<Vec<u8>, io::Error> {
    let mut line = Vec::new();
    let mut limited = r.by_ref().take(AOF_ANNOTATION_LINE_MAX_LEN as u64 - 1);
    limited.read_until(b'\n', &mut line)?;
    *pos += line.len() as u64;
    Ok(line)
}

/// atoi / strtol of a header line after its first byte.
fn parse_header_num(line: &[u8]) -> i64 {
    let s = &line[1..];
    let s: Vec<u8> = s
        .iter()
        .copied()
        .skip_while(|b| b.is_ascii_whitespace())
        .collect();
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, &s[..]),
    };
    let mut n: i64 = 0;
    for &b in digits.iter().take_while(|b| b.is_ascii_digit()) {
        n = n.saturating_mul(10).saturating_add(i64::from(b - b'0'));
    }
    if neg {
        -n
    } else {
        n
    }
}

/// Read one command: `*<argc>` then argc `$<len>` bulks. Annotations
/// (`#...`) are skipped.
fn read_command<R: BufRead>(r: &mut R, pos: &mut u64) -> Result<Vec<Bytes>, ReadEnd> {
    let line = loop {
        let line = read_line(r, pos).map_err(ReadEnd::Io)?;
        if line.is_empty() {
            return Err(ReadEnd::Eof);
        }
        if line[0] != b'#' {
            break line;
        }
    };
    if line[0] != b'*' {
        return Err(ReadEnd::Format);
    }
    if line.len() == 1 {
        return Err(ReadEnd::Short);
    }
    let argc = parse_header_num(&line);
    if argc < 1 {
        return Err(ReadEnd::Format);
    }
    let mut argv = Vec::with_capacity((argc as usize).min(1024));
    for _ in 0..argc {
        let line = read_line(r, pos).map_err(ReadEnd::Io)?;
        if line.is_empty() {
            return Err(ReadEnd::Short);
        }
        if line[0] != b'$' {
            return Err(ReadEnd::Format);
        }
        let len = parse_header_num(&line).max(0) as u64;
        let mut arg = Vec::new();
        let got = r
            .by_ref()
            .take(len)
            .read_to_end(&mut arg)
            .map_err(ReadEnd::Io)?;
        *pos += got as u64;
        if (got as u64) < len {
            return Err(ReadEnd::Short);
        }
        // Discard CRLF.
        let mut crlf = Vec::new();
        let got = r
            .by_ref()
            .take(2)
            .read_to_end(&mut crlf)
            .map_err(ReadEnd::Io)?;
        *pos += got as u64;
        if got < 2 {
            return Err(ReadEnd::Short);
        }
        argv.push(Bytes::from(arg));
    }
    Ok(argv)
}

/// The AOF loader serves clients once every this many commands (Redis's
/// `loops++ % 1024` in loadSingleAppendOnlyFile).
const AOF_LOAD_EVENTS_EVERY: u64 = 1024;

/// loadSingleAppendOnlyFile: replay one file of the AOF directory.
pub fn load_single_append_only_file(srv: &mut Server, filename: &str) -> AofLoad {
    let path = make_path(&srv.aof.cfg.dirname, filename);
    let file = match File::open(&path) {
        Ok(f) => f,
        Err(e) => {
            if e.kind() == io::ErrorKind::NotFound {
                server_log(
                    LogLevel::Warning,
                    &format!(
                        "The append log file {filename} doesn't exist: {}",
                        strerror(&e)
                    ),
                );
                return AofLoad::NotExist;
            }
            server_log(
                LogLevel::Warning,
                &format!(
                    "Fatal error: can't open the append log file {filename} for reading: {}",
                    strerror(&e)
                ),
            );
            return AofLoad::OpenErr;
        }
    };
    if file.metadata().map(|m| m.len()).unwrap_or(0) == 0 {
        return AofLoad::Empty;
    }
    let mut r = BufReader::with_capacity(64 * 1024, file);
    let mut pos: u64 = 0;

    // An RDB base file (or an old-style RDB preamble): load it first.
    let is_rdb = r
        .fill_buf()
        .map(|b| b.starts_with(b"REDIS"))
        .unwrap_or(false);
    if is_rdb {
        let old_style = filename == srv.aof.cfg.filename;
        if old_style {
            server_log(LogLevel::Notice, "Reading RDB preamble from AOF file...");
        } else {
            server_log(LogLevel::Notice, "Reading RDB base file on AOF loading...");
        }
        match crate::rdb::rdb_load_aof_preamble(srv, &path) {
            Ok(consumed) => {
                pos = consumed;
                if r.get_mut().seek(SeekFrom::Start(consumed)).is_err() {
                    return AofLoad::Failed;
                }
                r = BufReader::with_capacity(64 * 1024, r.into_inner());
                if old_style {
                    server_log(LogLevel::Notice, "Reading the remaining AOF tail...");
                }
            }
            Err(msg) => {
                server_log(LogLevel::Warning, &msg);
                if old_style {
                    server_log(LogLevel::Warning, &format!("Error reading the RDB preamble of the AOF file {filename}, AOF loading aborted"));
                } else {
                    server_log(
                        LogLevel::Warning,
                        &format!("Error reading the RDB base file {filename}, AOF loading aborted"),
                    );
                }
                return AofLoad::Failed;
            }
        }
    }

    let id = srv.next_client_id;
    let _ = id;
    let mut fake = Client::new_fake(CLIENT_ID_AOF, AOF_CLIENT_TOKEN);
    fake.flags |= crate::networking::CLIENT_DENY_BLOCKING;
    let mut valid_up_to: u64 = 0;
    let mut valid_before_multi: u64 = 0;
    let truncated_ok = srv.aof.cfg.load_truncated;
    // Progress is counted from the end of the RDB part (loadingAbsProgress
    // there, loadingIncrProgress from here on).
    let mut last_progress_report_size = pos;
    let mut loops: u64 = 0;
    let mut key_load_delay = srv.config.num("key-load-delay");
    let end = loop {
        // Serve the clients from time to time (they get -LOADING).
        if loops.is_multiple_of(AOF_LOAD_EVENTS_EVERY) {
            crate::rdb::loading_incr_progress(srv, pos - last_progress_report_size);
            last_progress_report_size = pos;
            crate::networking::process_events_while_blocked(srv);
            key_load_delay = srv.config.num("key-load-delay");
        }
        loops += 1;
        let argv = match read_command(&mut r, &mut pos) {
            Ok(argv) => argv,
            Err(end) => break end,
        };
        let id = match srv.commands.lookup_argv(&argv) {
            Ok(Some(id)) => id,
            _ => {
                server_log(
                    LogLevel::Warning,
                    &format!(
                        "Unknown command '{}' reading the append only file {filename}",
                        String::from_utf8_lossy(&argv[0])
                    ),
                );
                return AofLoad::Failed;
            }
        };
        let name = srv.commands.get(id).fullname;
        if name == "multi" {
            valid_before_multi = valid_up_to;
        }
        srv.cmd_time_snapshot = mstime();
        fake.argv = argv;
        fake.last_cmd = name;
        if fake.has_flag(crate::networking::CLIENT_MULTI) && name != "exec" {
            let flags = srv.commands.get(id).spec.flags;
            crate::multi::queue_multi_command(&mut fake, id, flags);
        } else {
            let proc = srv.commands.get(id).spec.proc;
            proc(srv, &mut fake);
        }
        fake.reply.clear();
        // Errors still count in INFO errorstats, and are logged as
        // unexpected (afterErrorReply).
        srv.note_errors(&mut fake);
        fake.argv.clear();
        fake.original_argv = None;
        if truncated_ok {
            valid_up_to = pos;
        }
        if key_load_delay != 0 {
            crate::debug::debug_delay(key_load_delay);
        }
    };
    crate::rdb::loading_incr_progress(srv, pos - last_progress_report_size);
    match end {
        ReadEnd::Eof if fake.has_flag(crate::networking::CLIENT_MULTI) => {
            server_log(
                LogLevel::Warning,
                &format!("Revert incomplete MULTI/EXEC transaction in AOF file {filename}"),
            );
            load_truncated(srv, filename, &path, valid_before_multi)
        }
        ReadEnd::Eof => AofLoad::Ok,
        ReadEnd::Short => load_truncated(srv, filename, &path, valid_up_to),
        ReadEnd::Io(e) => {
            server_log(
                LogLevel::Warning,
                &format!(
                    "Unrecoverable error reading the append only file {filename}: {}",
                    strerror(&e)
                ),
            );
            AofLoad::Failed
        }
        ReadEnd::Format => {
            server_log(LogLevel::Warning, &format!("Bad file format reading the append only file {filename}: make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>"));
            AofLoad::Failed
        }
    }
}

/// The `uxeof` path of the loader: truncate to the last whole command
/// when `aof-load-truncated yes`, otherwise fail.
fn load_truncated(srv: &mut Server, filename: &str, path: &str, valid_up_to: u64) -> AofLoad {
    if srv.aof.cfg.load_truncated {
        server_log(
            LogLevel::Warning,
            &format!("!!! Warning: short read while loading the AOF file {filename}!!!"),
        );
        server_log(
            LogLevel::Warning,
            &format!("!!! Truncating the AOF {filename} at offset {valid_up_to} !!!"),
        );
        match OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|f| f.set_len(valid_up_to))
        {
            Err(e) => server_log(
                LogLevel::Warning,
                &format!("Error truncating the AOF file {filename}: {}", strerror(&e)),
            ),
            Ok(()) => {
                server_log(
                    LogLevel::Warning,
                    &format!("AOF {filename} loaded anyway because aof-load-truncated is enabled"),
                );
                return AofLoad::Truncated;
            }
        }
    }
    server_log(LogLevel::Warning, &format!("Unexpected end of file reading the append only file {filename}. You can: 1) Make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>. 2) Alternatively you can set the 'aof-load-truncated' configuration option to yes and restart the server."));
    AofLoad::Failed
}

/// loadAppendOnlyFiles: the base, then the incr files, in order.
pub fn load_append_only_files(srv: &mut Server) -> AofLoad {
    let filename = srv.aof.cfg.filename.clone();
    let dir = srv.aof.cfg.dirname.clone();
    // An old single-file AOF in `dir`: migrate it into the directory.
    if std::path::Path::new(&filename).exists() {
        let am = &srv.aof.manifest;
        let dir_missing = !std::path::Path::new(&dir).is_dir();
        let empty = am.base.is_none() && am.incr_list.is_empty();
        let only_old_base = am.base.as_ref().is_some_and(|b| b.file_name == filename)
            && am.incr_list.is_empty()
            && !std::path::Path::new(&make_path(&dir, &filename)).exists();
        if dir_missing || empty || only_old_base {
            aof_upgrade_prepare(srv);
        }
    }
    let am = srv.aof.manifest.clone();
    if am.base.is_none() && am.incr_list.is_empty() {
        return AofLoad::NotExist;
    }
    let total_num = usize::from(am.base.is_some()) + am.incr_list.len();
    let mut total_size = 0u64;
    for ai in am.base.iter().chain(am.incr_list.iter()) {
        match get_append_only_file_size(srv, &ai.file_name) {
            Ok(n) => total_size += n,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return AofLoad::Failed,
            Err(_) => return AofLoad::OpenErr,
        }
    }
    if total_size == 0 {
        return AofLoad::Empty;
    }
    crate::rdb::start_loading(srv, total_size, false);
    srv.aof.loading = true;
    let mut ret = AofLoad::Ok;
    let mut base_size = 0;
    let mut aof_num = 0;
    for ai in am.base.iter().chain(am.incr_list.iter()) {
        let is_base = ai.file_type == AOF_FILE_TYPE_BASE;
        if is_base {
            base_size = get_append_only_file_size(srv, &ai.file_name).unwrap_or(0);
        }
        aof_num += 1;
        let last_file = aof_num == total_num;
        let start = ustime();
        ret = load_single_append_only_file(srv, &ai.file_name);
        if ret == AofLoad::Ok || (ret == AofLoad::Truncated && last_file) {
            server_log(
                LogLevel::Notice,
                &format!(
                    "DB loaded from {} file {}: {:.3} seconds",
                    if is_base { "base" } else { "incr" },
                    ai.file_name,
                    (ustime() - start) as f64 / 1_000_000.0
                ),
            );
        }
        if ret == AofLoad::Empty && !is_base {
            ret = AofLoad::Ok;
        }
        if ret == AofLoad::Truncated && !last_file {
            ret = AofLoad::Failed;
            server_log(
                LogLevel::Warning,
                "Fatal error: the truncated file is not the last file",
            );
        }
        if matches!(ret, AofLoad::OpenErr | AofLoad::Failed) {
            break;
        }
    }
    srv.aof.loading = false;
    crate::rdb::stop_loading(srv);
    if !matches!(ret, AofLoad::OpenErr | AofLoad::Failed) {
        srv.aof.current_size = total_size;
        srv.aof.rewrite_base_size = base_size;
    }
    ret
}

/// loadDataFromDisk with `appendonly yes` (lib.rs start-up): the AOF wins
/// over the RDB file. Then the incr file is opened for appending and the
/// history files are removed (aofOpenIfNeededOnServerStart,
/// aofDelHistoryFiles).
pub fn load_data_from_disk(srv: &mut Server) {
    aof_load_manifest_from_disk(srv);
    if srv.aof.state == AofStatus::On {
        let start = ustime();
        let ret = load_append_only_files(srv);
        if matches!(ret, AofLoad::Failed | AofLoad::OpenErr) {
            std::process::exit(1);
        }
        if ret != AofLoad::NotExist {
            server_log(
                LogLevel::Notice,
                &format!(
                    "DB loaded from append only file: {:.3} seconds",
                    (ustime() - start) as f64 / 1_000_000.0
                ),
            );
        }
    } else {
        crate::rdb::load_data_from_disk(srv);
    }
    aof_open_if_needed_on_server_start(srv);
    let _ = aof_del_history_files(srv);
}

// --------------------------------------------------------------- rewrite

/// A file that counts what went through it, for the rewrite's autosync.
struct SyncingFile {
    file: File,
    autosync: u64,
    since_sync: u64,
}

impl Write for SyncingFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        if self.autosync > 0 {
            self.since_sync += n as u64;
            if self.since_sync >= self.autosync {
                self.file.sync_data()?;
                self.since_sync = 0;
            }
        }
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// REDIS_AUTOSYNC_BYTES: with aof-rewrite-incremental-fsync, fsync every
/// 4 MB so the final fsync is short.
const REDIS_AUTOSYNC_BYTES: u64 = 4 * 1024 * 1024;

/// rewriteAppendOnlyFile: the whole dataset into `filename`, through
/// `temp-rewriteaof-<pid>.aof` and a rename. As an RDB with the aof-base
/// flag (aof-use-rdb-preamble yes) or as commands.
/// In the rewrite child, `info` reports progress to the parent
/// (childinfo.rs); elsewhere it has no pipe and does nothing.
pub fn rewrite_append_only_file(
    srv: &Server,
    filename: &str,
    info: &mut ChildInfoSender,
) -> Result<(), AofError> {
    let tmpfile = format!("temp-rewriteaof-{}.aof", std::process::id());
    let file = match File::create(&tmpfile) {
        Ok(f) => f,
        Err(e) => {
            server_log(
                LogLevel::Warning,
                &format!(
                    "Opening the temp file for AOF rewrite in rewriteAppendOnlyFile(): {}",
                    strerror(&e)
                ),
            );
            return Err(AofError);
        }
    };
    let werr = |e: &io::Error| {
        server_log(
            LogLevel::Warning,
            &format!(
                "Write error writing append only file on disk: {}",
                strerror(e)
            ),
        );
        let _ = std::fs::remove_file(&tmpfile);
    };
    let out = SyncingFile {
        file,
        autosync: if srv.aof.cfg.rewrite_incremental_fsync {
            REDIS_AUTOSYNC_BYTES
        } else {
            0
        },
        since_sync: 0,
    };
    let written = if srv.aof.cfg.use_rdb_preamble {
        crate::rdb::rdb_save_rio(srv, out, true, |keys| info.progress(keys))
    } else {
        let w = io::BufWriter::with_capacity(64 * 1024, out);
        rewrite_append_only_file_rio(srv, w, |keys| info.progress(keys))
            .and_then(|w| w.into_inner().map_err(|e| e.into_error()))
    };
    let file = match written {
        Ok(o) => o.file,
        Err(e) => {
            werr(&e);
            return Err(AofError);
        }
    };
    if let Err(e) = file.sync_all() {
        werr(&e);
        return Err(AofError);
    }
    drop(file);
    if let Err(e) = std::fs::rename(&tmpfile, filename) {
        server_log(
            LogLevel::Warning,
            &format!(
                "Error moving temp append only file on the final destination: {}",
                strerror(&e)
            ),
        );
        let _ = std::fs::remove_file(&tmpfile);
        return Err(AofError);
    }
    Ok(())
}

/// A bulk string in RESP (rioWriteBulkString).
fn write_bulk<W: Write>(w: &mut W, s: &[u8]) -> io::Result<()> {
    write!(w, "${}\r\n", s.len())?;
    w.write_all(s)?;
    w.write_all(b"\r\n")
}

/// One command of a rewritten base.
fn write_command<W: Write>(w: &mut W, argv: &[&[u8]]) -> io::Result<()> {
    write!(w, "*{}\r\n", argv.len())?;
    for a in argv {
        write_bulk(w, a)?;
    }
    Ok(())
}

/// Emit `cmd key items...` in batches of AOF_REWRITE_ITEMS_PER_CMD
/// elements (each element being `per` arguments).
fn write_batched<W: Write>(
    w: &mut W,
    cmd: &[u8],
    key: &[u8],
    items: &[Vec<u8>],
    per: usize,
) -> io::Result<()> {
    for chunk in items.chunks(AOF_REWRITE_ITEMS_PER_CMD * per) {
        write!(w, "*{}\r\n", 2 + chunk.len())?;
        write_bulk(w, cmd)?;
        write_bulk(w, key)?;
        for a in chunk {
            write_bulk(w, a)?;
        }
    }
    Ok(())
}

/// rewriteAppendOnlyFileRio: the dataset as commands (aof-use-rdb-preamble
/// no): FUNCTION LOAD per library, then per db a SELECT and per key the
/// commands that rebuild it (RPUSH, SADD, ZADD, HMSET in batches of 64,
/// SET for strings) and a PEXPIREAT for its TTL.
fn rewrite_append_only_file_rio<W: Write>(
    srv: &Server,
    mut w: W,
    mut progress: impl FnMut(u64),
) -> io::Result<W> {
    use storage::object::Value;
    if srv.aof.cfg.timestamp_enabled {
        write!(w, "#TS:{}\r\n", unixtime())?;
    }
    for lib in srv.functions.lib_ctx.libraries.values() {
        write_command(&mut w, &[b"FUNCTION", b"LOAD", &lib.code])?;
    }
    let mut keys = 0u64;
    let key_save_delay = srv.config.num("rdb-key-save-delay");
    for (dbid, db) in srv.dbs.iter().enumerate() {
        if db.dict.is_empty() {
            continue;
        }
        write_command(&mut w, &[b"SELECT", dbid.to_string().as_bytes()])?;
        for (key, o) in db.dict.iter() {
            match &o.value {
                Value::Str(s) => write_command(&mut w, &[b"SET", key, &s.as_bytes()])?,
                Value::List(l) => {
                    let items: Vec<Vec<u8>> = l.iter().map(|e| e.to_vec()).collect();
                    write_batched(&mut w, b"RPUSH", key, &items, 1)?;
                }
                Value::Set(s) => {
                    let items: Vec<Vec<u8>> = storage::t_set::set_type_iter(s)
                        .map(|e| e.as_bytes().to_vec())
                        .collect();
                    write_batched(&mut w, b"SADD", key, &items, 1)?;
                }
                Value::ZSet(z) => {
                    let mut items = Vec::new();
                    for (member, score) in z.to_vec(false) {
                        items.push(storage::t_zset::d2string(score));
                        items.push(member.to_vec());
                    }
                    write_batched(&mut w, b"ZADD", key, &items, 2)?;
                }
                Value::Hash(h) => {
                    let mut items = Vec::new();
                    for (f, v) in storage::t_hash::hash_type_iter(h) {
                        items.push(f.to_vec());
                        items.push(v.to_vec());
                    }
                    write_batched(&mut w, b"HMSET", key, &items, 2)?;
                }
                Value::Stream(_) => {
                    // Streams are only rewritten through the RDB preamble.
                    return Err(io::Error::other(
                        "streams need aof-use-rdb-preamble yes in redis-lite",
                    ));
                }
            }
            if let Some(when) = db.get_expire(key) {
                write_command(&mut w, &[b"PEXPIREAT", key, when.to_string().as_bytes()])?;
            }
            keys += 1;
            progress(keys);
            // rdb-key-save-delay slows the rewrite down too (tests).
            if key_save_delay != 0 {
                crate::debug::debug_delay(key_save_delay);
            }
        }
    }
    Ok(w)
}

/// rewriteAppendOnlyFileBackground: open a new incr file, fork, let the
/// child write the new base.
pub fn rewrite_append_only_file_background(srv: &mut Server) -> Result<(), AofError> {
    if has_active_child_process(srv) {
        return Err(AofError);
    }
    let dir = srv.aof.cfg.dirname.clone();
    if let Err(e) = dir_create_if_missing(&dir) {
        server_log(
            LogLevel::Warning,
            &format!(
                "Can't open or create append-only dir {dir}: {}",
                strerror(&e)
            ),
        );
        srv.aof.lastbgrewrite_ok = false;
        return Err(AofError);
    }
    // The new incr file starts with a SELECT.
    srv.aof.selected_db = None;
    flush_append_only_file(srv, true);
    if open_new_incr_aof_for_append(srv).is_err() {
        srv.aof.lastbgrewrite_ok = false;
        return Err(AofError);
    }
    srv.aof.stat_aof_rewrites += 1;
    match crate::server::redis_fork(srv, crate::server::ChildType::Aof) {
        Ok(0) => {
            // The child: progress and CoW go through the child info pipe.
            let mut info = ChildInfoSender::new("AOF rewrite");
            let tmpfile = format!("temp-rewriteaof-bg-{}.aof", std::process::id());
            let code = if rewrite_append_only_file(srv, &tmpfile, &mut info).is_ok() {
                server_log(
                    LogLevel::Notice,
                    &format!("Successfully created the temporary AOF base file {tmpfile}"),
                );
                info.send(CHILD_INFO_TYPE_AOF_COW_SIZE, 0);
                0
            } else {
                1
            };
            // SAFETY: exitFromChild: no destructors in the forked copy.
            unsafe { libc::_exit(code) }
        }
        Ok(pid) => {
            server_log(
                LogLevel::Notice,
                &format!("Background append only file rewriting started by pid {pid}"),
            );
            srv.aof.child_pid = Some(pid);
            srv.aof.rewrite_scheduled = false;
            srv.aof.rewrite_time_start = unixtime();
            Ok(())
        }
        Err(e) => {
            srv.aof.lastbgrewrite_ok = false;
            server_log(
                LogLevel::Warning,
                &format!(
                    "Can't rewrite append only file in background: fork: {}",
                    strerror(&e)
                ),
            );
            Err(AofError)
        }
    }
}

/// BGREWRITEAOF
// redis: aof.c bgrewriteaofCommand
pub fn bgrewriteaof_command(srv: &mut Server, c: &mut Client) {
    let in_exec = c.has_flag(crate::networking::CLIENT_EXECUTING_MULTI);
    if srv.aof.child_pid.is_some() {
        c.add_reply_error("ERR Background append only file rewriting already in progress");
    } else if has_active_child_process(srv) || in_exec {
        srv.aof.rewrite_scheduled = true;
        // A manual rewrite is not held back by earlier failures.
        srv.aof.stat_aofrw_consecutive_failures = 0;
        c.add_reply_status(b"Background append only file rewriting scheduled");
    } else if rewrite_append_only_file_background(srv).is_ok() {
        c.add_reply_status(b"Background append only file rewriting started");
    } else {
        c.add_reply_error(
            "ERR Can't execute an AOF background rewriting. Please check the server logs for more information.",
        );
    }
}

/// aofRemoveTempFile.
fn aof_remove_temp_file(srv: &Server, childpid: libc::pid_t) {
    bg_unlink(srv, &format!("temp-rewriteaof-bg-{childpid}.aof"));
    bg_unlink(srv, &format!("temp-rewriteaof-{childpid}.aof"));
}

/// backgroundRewriteDoneHandler: the rewrite child ended (reaped by
/// server::check_children_done).
pub fn background_rewrite_done(srv: &mut Server, exitcode: i32, bysignal: i32) {
    let Some(child_pid) = srv.aof.child_pid else {
        return;
    };
    if bysignal == 0 && exitcode == 0 {
        crate::childinfo::receive_child_info(srv);
        let _ = rewrite_done_ok(srv, child_pid);
    } else if bysignal == 0 {
        srv.aof.lastbgrewrite_ok = false;
        srv.aof.stat_aofrw_consecutive_failures += 1;
        server_log(
            LogLevel::Warning,
            "Background AOF rewrite terminated with error",
        );
    } else {
        // SIGUSR1 is how a child is stopped on purpose.
        if bysignal != libc::SIGUSR1 {
            srv.aof.lastbgrewrite_ok = false;
            srv.aof.stat_aofrw_consecutive_failures += 1;
        }
        server_log(
            LogLevel::Warning,
            &format!("Background AOF rewrite terminated by signal {bysignal}"),
        );
    }
    // cleanup:
    aof_remove_temp_file(srv, child_pid);
    if srv.aof.state == AofStatus::WaitRewrite {
        srv.aof.buf = Vec::new();
        aof_del_temp_incr_aof_file(srv);
    }
    srv.aof.rewrite_time_last = unixtime() - srv.aof.rewrite_time_start;
    srv.aof.rewrite_time_start = -1;
    if srv.aof.state == AofStatus::WaitRewrite {
        srv.aof.rewrite_scheduled = true;
    }
    srv.aof.child_pid = None;
    crate::childinfo::close_child_info_pipe(srv);
    storage::dict::set_resize_allowed(true);
}

/// The success branch of backgroundRewriteDoneHandler: the temp file
/// becomes the new base, the temp incr (WAIT_REWRITE) the new incr, the
/// covered files history; then the manifest is written.
fn rewrite_done_ok(srv: &mut Server, child_pid: libc::pid_t) -> Result<(), AofError> {
    let now = ustime();
    server_log(
        LogLevel::Notice,
        "Background AOF rewrite terminated with success",
    );
    let tmpfile = format!("temp-rewriteaof-bg-{child_pid}.aof");
    let dir = srv.aof.cfg.dirname.clone();
    let mut temp_am = srv.aof.manifest.clone();
    let new_base_filename = get_new_base_file_name_and_mark_pre_as_history(srv, &mut temp_am);
    let new_base_filepath = make_path(&dir, &new_base_filename);
    let threshold = srv.config.latency_monitor_threshold;
    let fail = |srv: &mut Server| {
        srv.aof.lastbgrewrite_ok = false;
        srv.aof.stat_aofrw_consecutive_failures += 1;
    };
    let start = Instant::now();
    if let Err(e) = std::fs::rename(&tmpfile, &new_base_filepath) {
        server_log(
            LogLevel::Warning,
            &format!(
                "Error trying to rename the temporary AOF base file {tmpfile} into {new_base_filepath}: {}",
                strerror(&e)
            ),
        );
        fail(srv);
        return Err(AofError);
    }
    srv.latency
        .add_sample_if_needed(threshold, "aof-rename", start.elapsed().as_millis() as u64);
    server_log(
        LogLevel::Notice,
        &format!(
            "Successfully renamed the temporary AOF base file {tmpfile} into {new_base_filename}"
        ),
    );
    let mut new_incr_filepath = None;
    if srv.aof.state == AofStatus::WaitRewrite {
        let temp_incr_aof_name = get_temp_incr_aof_name(srv);
        let temp_incr_filepath = make_path(&dir, &temp_incr_aof_name);
        let new_incr_filename = get_new_incr_aof_name(srv, &mut temp_am);
        let path = make_path(&dir, &new_incr_filename);
        let start = Instant::now();
        if let Err(e) = std::fs::rename(&temp_incr_filepath, &path) {
            server_log(
                LogLevel::Warning,
                &format!(
                    "Error trying to rename the temporary AOF incr file {temp_incr_filepath} into {path}: {}",
                    strerror(&e)
                ),
            );
            bg_unlink(srv, &new_base_filepath);
            fail(srv);
            return Err(AofError);
        }
        srv.latency.add_sample_if_needed(
            threshold,
            "aof-rename",
            start.elapsed().as_millis() as u64,
        );
        server_log(
            LogLevel::Notice,
            &format!(
                "Successfully renamed the temporary AOF incr file {temp_incr_aof_name} into {new_incr_filename}"
            ),
        );
        new_incr_filepath = Some(path);
    }
    mark_rewritten_incr_aof_as_history(srv, &mut temp_am);
    if persist_aof_manifest(srv, &mut temp_am).is_err() {
        bg_unlink(srv, &new_base_filepath);
        if let Some(p) = new_incr_filepath {
            bg_unlink(srv, &p);
        }
        fail(srv);
        return Err(AofError);
    }
    srv.aof.manifest = temp_am;
    if srv.aof.state != AofStatus::Off {
        let base = get_append_only_file_size(srv, &new_base_filename).unwrap_or(0);
        srv.aof.current_size = base + srv.aof.last_incr_size;
        srv.aof.rewrite_base_size = srv.aof.current_size;
    }
    let _ = aof_del_history_files(srv);
    srv.aof.lastbgrewrite_ok = true;
    srv.aof.stat_aofrw_consecutive_failures = 0;
    server_log(
        LogLevel::Notice,
        "Background AOF rewrite finished successfully",
    );
    if srv.aof.state == AofStatus::WaitRewrite {
        srv.aof.state = AofStatus::On;
    }
    server_log(
        LogLevel::Verbose,
        &format!(
            "Background AOF rewrite signal handler took {}us",
            ustime() - now
        ),
    );
    Ok(())
}

/// DEBUG LOADAOF: flush the AOF, empty the dataset, load the AOF again.
// redis: debug.c debugCommand (loadaof)
pub fn debug_loadaof(srv: &mut Server, c: &mut Client) {
    if srv.aof.state != AofStatus::Off {
        flush_append_only_file(srv, true);
    }
    // emptyData(-1, EMPTYDB_NO_FLAGS): every db and the functions.
    for dbid in 0..srv.dbs.len() {
        crate::multi::touch_all_watched_keys_in_db(srv, dbid, None);
        srv.dbs[dbid].empty();
    }
    crate::tracking::tracking_invalidate_keys_on_flush(srv);
    srv.functions = crate::function::Functions::new();
    aof_load_manifest_from_disk(srv);
    let _ = aof_del_history_files(srv);
    let ret = load_append_only_files(srv);
    if ret != AofLoad::Ok && ret != AofLoad::Empty {
        std::process::exit(1);
    }
    // Nothing of the reload is propagated.
    srv.dirty = 0;
    server_log(
        LogLevel::Warning,
        "Append Only File loaded by DEBUG LOADAOF",
    );
    c.add_reply_ok();
}

// ------------------------------------------------------------------ cron

/// The AOF parts of serverCron: a scheduled rewrite, the automatic
/// rewrite on growth, a postponed flush, and retrying after write errors.
pub fn aof_cron(srv: &mut Server) {
    if !has_active_child_process(srv) && srv.aof.rewrite_scheduled && !aof_rewrite_limited(srv) {
        let _ = rewrite_append_only_file_background(srv);
    }
    let st = &srv.aof;
    if st.state == AofStatus::On
        && !has_active_child_process(srv)
        && st.cfg.rewrite_perc != 0
        && st.current_size as i64 > st.cfg.rewrite_min_size
    {
        let base = if st.rewrite_base_size > 0 {
            st.rewrite_base_size as i64
        } else {
            1
        };
        let growth = (st.current_size as i64 * 100 / base) - 100;
        if growth >= st.cfg.rewrite_perc && !aof_rewrite_limited(srv) {
            server_log(
                LogLevel::Notice,
                &format!("Starting automatic rewriting of AOF on {growth}% growth"),
            );
            let _ = rewrite_append_only_file_background(srv);
        }
    }
    let on = matches!(srv.aof.state, AofStatus::On | AofStatus::WaitRewrite);
    if on && srv.aof.flush_postponed_start != 0 {
        flush_append_only_file(srv, false);
    }
    if on && !srv.aof.last_write_ok && crate::server::run_with_period(srv, 1000) {
        flush_append_only_file(srv, false);
    }
}

/// writeCommandsDeniedByDiskError (the AOF half): a failed write or
/// background fsync stops writes until the disk works again.
pub fn write_commands_denied_by_disk_error(srv: &mut Server) -> Option<String> {
    if srv.aof.state == AofStatus::Off {
        return None;
    }
    let errno = if !srv.aof.last_write_ok {
        srv.aof.last_write_errno
    } else {
        let e = srv.aof.bio.as_ref().map_or(0, |b| b.fsync_errno());
        if e == 0 {
            return None;
        }
        srv.aof.last_write_errno = e;
        e
    };
    Some(format!(
        "MISCONF Errors writing to the AOF file: {}",
        strerror_code(errno)
    ))
}

/// prepareForShutdown's AOF steps: stop a rewrite child (refusing while
/// the first base is not written, unless FORCE), flush and fsync.
pub fn aof_prepare_for_shutdown(srv: &mut Server, force: bool) -> Result<(), AofError> {
    if srv.aof.child_pid.is_some() {
        if srv.aof.state == AofStatus::WaitRewrite {
            if force {
                server_log(LogLevel::Warning, "Writing initial AOF. Exit anyway.");
            } else {
                server_log(LogLevel::Warning, "Writing initial AOF, can't exit.");
                return Err(AofError);
            }
        }
        server_log(
            LogLevel::Warning,
            "There is a child rewriting the AOF. Killing it!",
        );
        kill_append_only_child(srv);
    }
    if srv.aof.state != AofStatus::Off {
        server_log(LogLevel::Notice, "Calling fsync() on the AOF file.");
        flush_append_only_file(srv, true);
        if let Some(fd) = &srv.aof.fd {
            if let Err(e) = crate::bio::redis_fsync(fd) {
                server_log(
                    LogLevel::Warning,
                    &format!("Fail to fsync the AOF file: {}.", strerror(&e)),
                );
            }
        }
    }
    Ok(())
}

/// The aof_* fields of INFO persistence, in Redis's order.
pub fn info_persistence_fields(srv: &Server) -> Vec<(&'static str, String)> {
    let st = &srv.aof;
    let bio_ok = st.bio.as_ref().is_none_or(|b| b.fsync_errno() == 0);
    let mut v = vec![
        (
            "aof_enabled",
            i32::from(st.state != AofStatus::Off).to_string(),
        ),
        (
            "aof_rewrite_in_progress",
            i32::from(st.child_pid.is_some()).to_string(),
        ),
        (
            "aof_rewrite_scheduled",
            i32::from(st.rewrite_scheduled).to_string(),
        ),
        (
            "aof_last_rewrite_time_sec",
            st.rewrite_time_last.to_string(),
        ),
        (
            "aof_current_rewrite_time_sec",
            if st.child_pid.is_some() {
                (unixtime() - st.rewrite_time_start).to_string()
            } else {
                "-1".to_string()
            },
        ),
        ("aof_last_bgrewrite_status", ok_err(st.lastbgrewrite_ok)),
        ("aof_rewrites", st.stat_aof_rewrites.to_string()),
        (
            "aof_rewrites_consecutive_failures",
            st.stat_aofrw_consecutive_failures.to_string(),
        ),
        ("aof_last_write_status", ok_err(st.last_write_ok && bio_ok)),
        ("aof_last_cow_size", st.stat_aof_cow_bytes.to_string()),
    ];
    v.push(("module_fork_in_progress", "0".into()));
    v.push(("module_fork_last_cow_size", "0".into()));
    if st.cfg.enabled {
        v.push(("aof_current_size", st.current_size.to_string()));
        v.push(("aof_base_size", st.rewrite_base_size.to_string()));
        v.push((
            "aof_pending_rewrite",
            i32::from(st.rewrite_scheduled).to_string(),
        ));
        v.push(("aof_buffer_length", st.buf.len().to_string()));
        v.push((
            "aof_pending_bio_fsync",
            st.bio
                .as_ref()
                .map_or(0, |b| b.pending_fsync_jobs())
                .to_string(),
        ));
        v.push(("aof_delayed_fsync", st.delayed_fsync.to_string()));
    }
    v
}

fn ok_err(ok: bool) -> String {
    if ok { "ok" } else { "err" }.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_lines_are_formatted_as_redis() {
        let am = AofManifest {
            base: Some(AofInfo {
                file_name: "appendonly.aof.1.base.rdb".into(),
                file_seq: 1,
                file_type: AOF_FILE_TYPE_BASE,
            }),
            incr_list: vec![AofInfo {
                file_name: "appendonly.aof.1.incr.aof".into(),
                file_seq: 1,
                file_type: AOF_FILE_TYPE_INCR,
            }],
            ..Default::default()
        };
        assert_eq!(
            get_aof_manifest_as_string(&am),
            "file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n"
        );
    }

    #[test]
    fn a_name_with_a_space_is_quoted() {
        let mut s = String::new();
        aof_info_format(
            &mut s,
            &AofInfo {
                file_name: "a b".into(),
                file_seq: 2,
                file_type: AOF_FILE_TYPE_HIST,
            },
        );
        assert_eq!(s, "file \"a b\" seq 2 type h\n");
    }

    #[test]
    fn commands_are_read_back_and_short_tails_detected() {
        let mut buf = Vec::new();
        cat_append_only_generic_command(
            &mut buf,
            &[
                Bytes::from_static(b"SET"),
                Bytes::from_static(b"k"),
                Bytes::from_static(b"v"),
            ],
        );
        let whole = buf.len() as u64;
        buf.extend_from_slice(b"*2\r\n$3\r\nDEL\r\n$1\r\n");
        let mut r = io::Cursor::new(buf);
        let mut pos = 0;
        let argv = read_command(&mut r, &mut pos).ok().unwrap();
        assert_eq!(argv.len(), 3);
        assert_eq!(pos, whole);
        assert!(matches!(
            read_command(&mut r, &mut pos),
            Err(ReadEnd::Short)
        ));
    }
}
