//! The server: global state, `process_command`, `call()` and `server_cron`
//! (Redis's server.c).
//!
//! `Server` holds everything the single thread owns: the databases, the
//! connected clients, the command table, the configuration and the counters
//! INFO reports. Commands receive `&mut Server` and the calling client.
//!
//! `call()` is the one place where a command runs. Everything measured about
//! commands (duration, latency events, SLOWLOG, MONITOR, INFO commandstats)
//! is recorded there and nowhere else, so one breakpoint in `call()` shows
//! every instrument.

use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use lazyfree::LazyFree;
use mio::net::TcpListener;
use mio::{Poll, Token};
use storage::db::Db;
use storage::expire::{CycleType, ExpireCycleState};

use crate::commands::{
    CmdId, CommandTable, CMD_ADMIN, CMD_FAST, CMD_LOADING, CMD_MAY_REPLICATE, CMD_NO_ASYNC_LOADING,
    CMD_NO_AUTH, CMD_NO_MULTI, CMD_PROTECTED, CMD_READONLY, CMD_SKIP_MONITOR, CMD_SKIP_SLOWLOG,
    CMD_STALE, CMD_WRITE,
};
use crate::config::{Config, ProtectedAction};
use crate::latency::LatencyMonitor;
use crate::log::{server_log, LogLevel};
use crate::monitor;
use crate::multi;
use crate::slowlog::{self, Slowlog};
use bytes::BytesMut;

use crate::networking::{
    self, Client, CLIENT_BLOCKED, CLIENT_CLOSE_ASAP, CLIENT_MONITOR, CLIENT_MULTI, CLIENT_PUBSUB,
};

/// The version we answer as: redis-lite behaves like Redis 7.0.15, and
/// clients (redis-cli's hints, redis-py's feature checks) read this number.
pub const REDIS_VERSION: &str = "7.0.15";

/// CONFIG_MIN_HZ / CONFIG_MAX_HZ: the range `hz` is clamped to.
pub const CONFIG_MIN_HZ: i64 = 1;
pub const CONFIG_MAX_HZ: i64 = 500;

/// MAX_CLIENTS_PER_CLOCK_TICK: dynamic-hz doubles hz while there are more
/// clients than this per cron tick.
pub const MAX_CLIENTS_PER_CLOCK_TICK: i64 = 200;

/// CONFIG_RUN_ID_SIZE: run_id is 40 hex characters.
pub const CONFIG_RUN_ID_SIZE: usize = 40;

/// Listening sockets use tokens 0..FIRST_CLIENT_TOKEN; clients the ones after.
pub const LISTENER_TOKEN: Token = Token(0);
/// The `unixsocket` listener's token: after the TCP listeners' (one per
/// `bind` address, counted from 0), before the first client's.
pub const UNIX_LISTENER_TOKEN: Token = Token(FIRST_CLIENT_TOKEN - 1);
pub const FIRST_CLIENT_TOKEN: usize = 64;
/// The pipe a diskless replication child writes its RDB into
/// (replication/master.rs rdb_pipe_read_handler).
pub const RDB_PIPE_TOKEN: Token = Token(FIRST_CLIENT_TOKEN - 2);

/// STATS_METRIC_SAMPLES: instantaneous metrics average this many samples,
/// taken every 100 ms by server_cron.
pub const STATS_METRIC_SAMPLES: usize = 16;

/// Counters reported by INFO stats (server.stat_* in Redis).
#[derive(Default, Debug)]
pub struct Stats {
    /// Errors replied to the AOF loader, our master or a replica.
    pub unexpected_error_replies: u64,
    /// Blobs deep-checked by sanitize-dump-payload (RESTORE and RDB loads).
    pub dump_payload_sanitizations: u64,
    pub numcommands: u64,
    pub numconnections: u64,
    pub rejected_conn: u64,
    pub expiredkeys: u64,
    pub keyspace_hits: u64,
    pub keyspace_misses: u64,
    /// Bytes read from clients other than our master (stat_net_input_bytes).
    pub net_input_bytes: u64,
    /// Bytes written to clients other than replicas (stat_net_output_bytes).
    pub net_output_bytes: u64,
    /// Bytes read from our master: the RDB transfer and the command stream
    /// (stat_net_repl_input_bytes).
    pub net_repl_input_bytes: u64,
    /// Bytes written to replicas: the RDB transfer and the command stream
    /// (stat_net_repl_output_bytes).
    pub net_repl_output_bytes: u64,
    pub total_reads_processed: u64,
    pub total_writes_processed: u64,
    /// Static reply buffers shrunk / grown by the client cron
    /// (clients_cron_resize_output_buffer).
    pub reply_buffer_shrinks: u64,
    pub reply_buffer_expands: u64,
    pub total_error_replies: u64,
    /// errorstat_<CODE>: count per error code.
    pub errors: HashMap<String, u64>,
    pub eventloop_cycles: u64,
    pub eventloop_duration_sum: u64,
    pub eventloop_duration_cmd_sum: u64,
    /// Keys deleted by maxmemory eviction (evict.rs).
    pub evictedkeys: u64,
    /// Clients freed by client eviction (INFO evicted_clients).
    pub evictedclients: u64,
    /// Time spent over maxmemory: closed periods (µs), and the start of
    /// the current one (stat_*_eviction_exceeded_time).
    pub total_eviction_exceeded_time: u64,
    pub last_eviction_exceeded_time: Option<Instant>,
    /// Forks so far and how long the last one took (total_forks,
    /// latest_fork_usec): the Lua debugger's sessions (ldb.rs).
    /// stat_total_forks and stat_fork_time (µs): every fork, whatever its
    /// purpose (redis_fork).
    pub total_forks: u64,
    pub fork_time_us: u64,
}

/// A sampled metric ring (server.inst_metric in Redis).
#[derive(Default, Debug)]
pub struct InstMetric {
    pub last_sample_time_ms: i64,
    pub last_sample_count: u64,
    pub samples: [u64; STATS_METRIC_SAMPLES],
    pub idx: usize,
}

impl InstMetric {
    /// trackInstantaneousMetric: record the per-second rate since the last sample.
    pub fn track(&mut self, current: u64, now_ms: i64) {
        let t = now_ms - self.last_sample_time_ms;
        let ops = current.saturating_sub(self.last_sample_count);
        let rate = if t > 0 { ops * 1000 / t as u64 } else { 0 };
        self.samples[self.idx] = rate;
        self.idx = (self.idx + 1) % STATS_METRIC_SAMPLES;
        self.last_sample_time_ms = now_ms;
        self.last_sample_count = current;
    }

    /// getInstantaneousMetric: the mean of the samples.
    pub fn value(&self) -> u64 {
        self.samples.iter().sum::<u64>() / STATS_METRIC_SAMPLES as u64
    }
}

/// Client tokens are small unique integers handed out by the server
/// itself, so the client table needs no DoS-resistant hash: the token is its
/// own hash (the map is touched twice per read event).
#[derive(Default, Clone, Copy)]
pub struct TokenHasher(u64);

impl std::hash::Hasher for TokenHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    fn write_usize(&mut self, n: usize) {
        // Spread the low bits a little (hashbrown uses the top 7 bits too).
        self.0 = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

pub type TokenHasherBuilder = std::hash::BuildHasherDefault<TokenHasher>;

pub struct Server {
    pub config: Config,
    pub dbs: Vec<Db>,
    pub commands: CommandTable,
    /// Connected clients by poller token. While a client's commands run it is
    /// taken out of this map and handed to the handlers as `&mut Client`.
    pub clients: HashMap<Token, Box<Client>, TokenHasherBuilder>,
    pub poll: Poll,
    pub listeners: Vec<TcpListener>,
    /// The `unixsocket` listener, when one is configured.
    pub unix_listener: Option<mio::net::UnixListener>,
    pub next_token: usize,
    /// The cluster node state and bus (cluster/mod.rs); None unless
    /// cluster-enabled yes.
    pub cluster: Option<Box<crate::cluster::ClusterState>>,
    pub next_client_id: u64,
    /// Clients with replies to write before the next poll.
    pub clients_pending_write: Vec<Token>,
    /// Clients whose socket may still hold unread bytes (see networking.rs).
    pub clients_pending_read: Vec<Token>,
    /// The events the last poll returned and the loop has not handled yet
    /// (Redis's `fired` array). A busy script handles the rest of them from
    /// inside the script (networking::process_events_while_blocked): with
    /// edge-triggered polling they would not be reported again.
    pub fired_events: std::collections::VecDeque<crate::ae::FiredEvent>,
    /// A client stopped at the per-pass write cap with more to send: the
    /// next poll must not sleep (see networking::write_to_client).
    pub clients_write_capped: bool,
    /// Clients to close at the next before_sleep (freeClientAsync).
    pub clients_to_close: Vec<Token>,
    pub stats: Stats,
    /// SLOWLOG entries, newest first.
    pub slowlog: Slowlog,
    /// LATENCY events (latency-monitor-threshold).
    pub latency: LatencyMonitor,
    /// Clients that ran MONITOR.
    pub monitors: Vec<Token>,
    /// Blocked clients (blocked.rs): who waits for which (db, key), in
    /// blocking order; keys that got data during the current command; the
    /// number of blocked clients; their time-outs ordered by deadline;
    /// clients to resume before sleeping.
    pub blocking_keys: HashMap<(usize, bytes::Bytes), std::collections::VecDeque<Token>>,
    pub ready_keys: std::collections::VecDeque<(usize, bytes::Bytes)>,
    /// server.blocked_clients: how many clients are parked (INFO).
    pub blocked_clients: usize,
    /// server.clients_timeout_table: (deadline in unix ms, client id) ->
    /// token for every blocked client with a time-out, ordered by deadline
    /// (Redis keeps the same 128-bit keys in a radix tree). The loop finds
    /// the expired time-outs at the front, never visiting the others.
    pub clients_timeout_table: std::collections::BTreeMap<(i64, u64), Token>,
    /// clientsCron's rotation: the clients still to visit in this round
    /// (Redis rotates server.clients itself, see clients_cron).
    pub clients_cron_queue: std::collections::VecDeque<Token>,
    /// A served blocked client's command is running again (call() does
    /// not feed it to MONITOR a second time).
    pub reprocessing_command: bool,
    /// server.in_exec: EXEC is running its queue (CONFIG SET appendonly
    /// then only schedules the rewrite).
    pub in_exec: bool,
    /// WATCHed keys: key -> its watchers as (db, client) (Redis's per-db
    /// db->watched_keys; keyed by the key alone so a write looks it up
    /// without allocating), and touches of the running client's own
    /// watched keys, applied when its command returns (multi.rs).
    pub watched_keys: HashMap<bytes::Bytes, Vec<(usize, Token)>>,
    pub pending_touches: Vec<crate::multi::PendingTouch>,
    pub unblocked_clients: Vec<Token>,
    pub handling_blocked_clients: bool,
    /// CLIENT PAUSE state: what is paused and until when (unix ms): the
    /// strictest of the pauses each purpose asked for
    /// (client_pause_per_purpose, indexed by networking::PausePurpose).
    pub client_pause_type: networking::PauseType,
    pub client_pause_end_time: i64,
    pub client_pause_per_purpose:
        [Option<(networking::PauseType, i64)>; networking::NUM_PAUSE_PURPOSES],
    /// Clients whose command waits for the pause to end, in order.
    pub postponed_clients: Vec<Token>,
    /// The pause ended: the loop resumes the postponed clients.
    pub clients_unpaused: bool,
    /// DEBUG SET-ACTIVE-EXPIRE: whether the active expiry cycle runs.
    /// DEBUG PAUSE-CRON 1: server_cron does nothing (for tests).
    pub pause_cron: bool,
    /// DEBUG REPLYBUFFER RESIZING / PEAK-RESET-TIME (debug.rs).
    pub reply_buffer_resizing_enabled: bool,
    pub reply_buffer_peak_reset_time: i64,
    pub active_expire_enabled: bool,
    /// DEBUG SET-DISABLE-DENY-SCRIPTS: scripts may call `noscript` commands
    /// (Redis's test suite uses it). Redis: script_disable_deny_script.
    pub script_disable_deny_script: bool,
    /// The active expiry cycle's state between calls (cursor, stale estimate).
    pub expire_state: ExpireCycleState,
    /// The `bio_lazy_free` thread: UNLINK, FLUSHALL ASYNC, lazyfree-lazy-*.
    pub lazyfree: LazyFree,
    pub inst_ops: InstMetric,
    pub inst_net_input: InstMetric,
    pub inst_net_output: InstMetric,
    pub inst_net_repl_input: InstMetric,
    pub inst_net_repl_output: InstMetric,
    /// The running fork child's progress and CoW (childinfo.rs).
    pub child_info: crate::childinfo::CurrentChildInfo,
    /// Changes since the last save (rdb_changes_since_last_save).
    pub dirty: u64,
    /// Process start, for uptime.
    pub start_time: Instant,
    pub start_unix: i64,
    pub run_id: String,
    pub cronloops: u64,
    /// Effective hz (dynamic-hz may raise it above the configured one).
    pub hz: i64,
    /// Unix time in ms captured before each command (commandTimeSnapshot):
    /// one command sees one "now", so a key cannot expire half-way.
    pub cmd_time_snapshot: i64,
    /// LRU clock (seconds, 24 bits), refreshed by server_cron.
    pub lruclock: u32,
    /// When the POST/Host: warning was last logged (unix seconds).
    pub last_security_warning: i64,
    pub stat_peak_memory: usize,
    /// used_memory_startup: used_memory once the server is initialised
    /// (Redis's initial_memory_usage, measured in lib.rs).
    pub initial_memory_usage: usize,
    pub lastsave: i64,
    pub executable: String,
    pub config_file: String,
    /// The running script, EVAL or FCALL (script.rs; Redis's curr_run_ctx):
    /// None when no script runs.
    pub script_run_ctx: Option<Box<crate::script::ScriptRunCtx>>,
    /// The fake client scripts run their commands through, kept between
    /// runs (script.rs).
    pub script_client: Option<Box<Client>>,
    /// EVAL's Lua state and script cache (eval.rs, Redis's lctx), created
    /// on first use.
    pub lctx: Option<Box<crate::eval::LuaCtx>>,
    /// Redis Functions: the library registry and its own Lua state
    /// (function.rs, function_lua.rs).
    pub functions: crate::function::Functions,
    /// Pub/Sub (pubsub.rs): subscribers of each channel, pattern and shard
    /// channel (server.pubsub_channels / pubsub_patterns /
    /// pubsubshard_channels in Redis), in subscription order.
    pub pubsub_channels: crate::pubsub::PubsubTable,
    pub pubsub_patterns: crate::pubsub::PubsubTable,
    pub pubsubshard_channels: crate::pubsub::PubsubTable,
    /// The clients whose commands are running (out of `clients`; nested
    /// for EXEC and scripts, innermost last), and the pub/sub messages for
    /// them parked until their command returns: see pubsub.rs, "The running
    /// client and its own messages".
    pub current_clients: Vec<Token>,
    pub pending_self_push: Vec<(Token, crate::pubsub::PendingPush)>,
    /// Client-side caching: the tracking tables (tracking.rs).
    pub tracking: crate::tracking::Tracking,
    /// maxmemory eviction state: the eviction pool and friends (evict.rs).
    pub evict: crate::evict::EvictState,
    /// Client eviction: the per-type client memory sums and the memory
    /// usage buckets (client_eviction.rs).
    pub client_mem: crate::client_eviction::ClientMemState,
    /// Was the server over maxmemory when the current command started?
    /// Scripts check it on their first deny-oom command (script.rs).
    pub pre_command_oom_state: bool,
    /// SAVE / BGSAVE state and statistics (rdb.rs).
    pub rdb: crate::rdb::RdbState,
    /// server.loading and the loading_* progress fields (rdb.rs).
    pub loading: crate::rdb::LoadingState,
    /// ACL users and the ACL LOG (acl.rs).
    pub acl: crate::acl::Acl,
    /// MIGRATE's cached connections to targets (migrate.rs).
    pub migrate_sockets: crate::migrate::MigrateSockets,
    /// The propagation queue and flags (propagate.rs).
    pub propagate: crate::propagate::PropagateState,
    /// The append only file (aof.rs).
    pub aof: crate::aof::AofState,
    /// Replication, both halves (replication/).
    pub repl: crate::replication::ReplicationState,
}

/// Wall-clock unix time in milliseconds.
pub fn mstime() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Wall-clock unix time in microseconds.
pub fn ustime() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

/// LRU_CLOCK_RESOLUTION is 1000 ms: the clock counts seconds, wrapped to 24 bits.
pub fn get_lru_clock() -> u32 {
    ((mstime() / 1000) as u32) & storage::object::LRU_CLOCK_MAX
}

/// LRU_CLOCK(): the clock objects are stamped and read with. serverCron
/// refreshes `srv.lruclock` every 1000/hz ms, which is finer than the clock's
/// own 1000 ms resolution whenever hz >= 1, so the cached value is used (as
/// Redis does); only a cron slower than the resolution would read the time.
/// One clock for stamping (RESTORE, RDB load) and reading (OBJECT IDLETIME)
/// keeps "IDLETIME 1000" reading back as exactly 1000.
pub fn lru_clock(srv: &Server) -> u32 {
    if 1000 / srv.hz.max(1) <= crate::object::LRU_CLOCK_RESOLUTION as i64 {
        srv.lruclock
    } else {
        get_lru_clock()
    }
}

impl Server {
    pub fn new(config: Config) -> std::io::Result<Server> {
        let poll = Poll::new()?;
        // Immutable: read once, before any Lua state exists.
        crate::script_lua::LUA_ENABLE_DEPRECATED_API.store(
            config.get_string("lua-enable-deprecated-api").as_deref() == Some("yes"),
            std::sync::atomic::Ordering::Relaxed,
        );
        let aof = crate::aof::AofState::init(crate::aof::aof_config_from(&config))?;
        let dbs = (0..config.databases as usize).map(Db::new).collect();
        let hz = config.hz;
        let mut commands = CommandTable::new();
        // rename-command lines (checked when the config was read).
        for (old, new) in &config.renamed_commands {
            let _ = commands.rename(old.as_bytes(), new.as_bytes());
        }
        let acl = crate::acl::Acl::new(&commands);
        Ok(Server {
            config,
            dbs,
            commands,
            acl,
            migrate_sockets: Default::default(),
            clients: HashMap::default(),
            poll,
            listeners: Vec::new(),
            unix_listener: None,
            next_token: FIRST_CLIENT_TOKEN,
            cluster: None,
            next_client_id: 1,
            clients_pending_write: Vec::new(),
            clients_pending_read: Vec::new(),
            fired_events: std::collections::VecDeque::new(),
            clients_write_capped: false,
            clients_to_close: Vec::new(),
            stats: Stats::default(),
            slowlog: Slowlog::default(),
            latency: LatencyMonitor::new(),
            monitors: Vec::new(),
            active_expire_enabled: true,
            pause_cron: false,
            reply_buffer_resizing_enabled: true,
            reply_buffer_peak_reset_time: crate::debug::REPLY_BUFFER_DEFAULT_PEAK_RESET_TIME,
            script_disable_deny_script: false,
            blocking_keys: HashMap::new(),
            ready_keys: std::collections::VecDeque::new(),
            blocked_clients: 0,
            clients_timeout_table: std::collections::BTreeMap::new(),
            clients_cron_queue: std::collections::VecDeque::new(),
            reprocessing_command: false,
            in_exec: false,
            watched_keys: HashMap::new(),
            pending_touches: Vec::new(),
            unblocked_clients: Vec::new(),
            handling_blocked_clients: false,
            client_pause_type: networking::PauseType::Off,
            client_pause_end_time: 0,
            client_pause_per_purpose: [None; networking::NUM_PAUSE_PURPOSES],
            postponed_clients: Vec::new(),
            clients_unpaused: false,
            expire_state: ExpireCycleState::default(),
            lazyfree: {
                // The thread that builds the server runs it: count it too.
                crate::memory::register_thread();
                LazyFree::start_with(crate::memory::register_thread)?
            },
            inst_ops: InstMetric::default(),
            inst_net_input: InstMetric::default(),
            inst_net_output: InstMetric::default(),
            inst_net_repl_input: InstMetric::default(),
            inst_net_repl_output: InstMetric::default(),
            child_info: Default::default(),
            dirty: 0,
            start_time: Instant::now(),
            start_unix: mstime() / 1000,
            run_id: random_hex(CONFIG_RUN_ID_SIZE),
            cronloops: 0,
            hz,
            cmd_time_snapshot: mstime(),
            lruclock: get_lru_clock(),
            last_security_warning: 0,
            stat_peak_memory: 0,
            initial_memory_usage: 0,
            lastsave: mstime() / 1000,
            executable: std::env::current_exe()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            config_file: String::new(),
            script_run_ctx: None,
            script_client: None,
            functions: crate::function::Functions::new(),
            lctx: None,
            pubsub_channels: HashMap::new(),
            pubsub_patterns: HashMap::new(),
            pubsubshard_channels: HashMap::new(),
            current_clients: Vec::new(),
            pending_self_push: Vec::new(),
            tracking: Default::default(),
            evict: Default::default(),
            client_mem: Default::default(),
            pre_command_oom_state: false,
            rdb: Default::default(),
            loading: Default::default(),
            propagate: Default::default(),
            repl: Default::default(),
            aof,
        })
    }

    /// afterErrorReply: move the errors a client replied with into INFO
    /// errorstats, by code. Returns how many errors there were.
    ///
    /// An error sent to the AOF loader, to our master or to a replica
    /// should never happen (the stream only holds commands that worked):
    /// each one is logged as CRITICAL and counted in
    /// unexpected_error_replies, as Redis does.
    pub fn note_errors(&mut self, c: &mut Client) -> usize {
        let n = c.errors.len();
        let peer = if c.id == crate::aof::CLIENT_ID_AOF {
            Some(("server", "AOF-loading-client"))
        } else if c.has_flag(networking::CLIENT_MASTER) {
            Some(("replica", "master"))
        } else if c.has_flag(networking::CLIENT_SLAVE) && !c.has_flag(networking::CLIENT_MONITOR) {
            Some(("master", "replica"))
        } else {
            None
        };
        for msg in c.errors.drain(..) {
            self.stats.total_error_replies += 1;
            let code_end = msg.iter().position(|&b| b == b' ').unwrap_or(msg.len());
            let code = String::from_utf8_lossy(&msg[..code_end]).into_owned();
            *self.stats.errors.entry(code).or_insert(0) += 1;
            if let Some((from, to)) = peer {
                self.stats.unexpected_error_replies += 1;
                // Redis logs the text as the command passed it: plain ERR
                // messages without their "ERR ", other codes with a '-'.
                let text = String::from_utf8_lossy(&msg[..msg.len().min(4096)]);
                let text = match text.strip_prefix("ERR ") {
                    Some(rest) => rest.to_string(),
                    None => format!("-{text}"),
                };
                server_log(
                    LogLevel::Warning,
                    &format!(
                        "== CRITICAL == This {from} is sending an error to its {to}: '{text}' after processing the command '{}'",
                        c.last_cmd
                    ),
                );
            }
        }
        n
    }
}

/// A random hex string (run_id, replication ids).
pub fn random_hex(len: usize) -> String {
    use rand::RngExt;
    let mut rng = rand::rng();
    (0..len)
        .map(|_| char::from_digit(rng.random_range(0..16u32), 16).unwrap_or('0'))
        .collect()
}

/// processCommand: everything between "a complete command arrived" and
/// `call()`: lookup, arity, protection checks. Rejections here are replies
/// (the connection lives on) and count as rejected_calls.
pub fn process_command(srv: &mut Server, c: &mut Client) {
    // One clock reading for the whole command (Redis's
    // server.cmd_time_snapshot): a key's expiry is judged against the same "now"
    // from the first lookup to the last, so a command never sees a key
    // alive and then dead.
    srv.cmd_time_snapshot = mstime();

    // securityWarningCommand: an HTTP request sent to the Redis port (a
    // cross-protocol attack). Redis closes the connection without a reply.
    if c.arg(0).eq_ignore_ascii_case(b"post") || c.arg(0).eq_ignore_ascii_case(b"host:") {
        security_warning(srv, c);
        return;
    }

    // c->lastcmd: set before any check, so CLIENT LIST shows what a
    // blocked, paused or rejected client last asked for ("NULL" when the
    // command does not exist, as in Redis).
    let id = match srv.commands.lookup_argv(&c.argv) {
        Ok(Some(id)) => {
            c.last_cmd = srv.commands.get(id).fullname;
            id
        }
        Ok(None) => {
            c.last_cmd = "NULL";
            let msg = unknown_command_error(&c.argv);
            reject_command(srv, c, None, &msg);
            return;
        }
        Err(container) => {
            c.last_cmd = "NULL";
            let mut msg = b"ERR unknown subcommand '".to_vec();
            msg.extend_from_slice(c_str_prefix(c.arg(1), 128));
            msg.extend_from_slice(b"'. Try ");
            msg.extend_from_slice(
                srv.commands
                    .get(container)
                    .spec
                    .name
                    .to_uppercase()
                    .as_bytes(),
            );
            msg.extend_from_slice(b" HELP.");
            reject_command(srv, c, Some(container), &msg);
            return;
        }
    };

    let cmd = srv.commands.get(id);
    let arity = cmd.spec.arity;
    let argc = c.argc() as i32;
    if (arity > 0 && arity != argc) || argc < -arity {
        let msg = format!(
            "ERR wrong number of arguments for '{}' command",
            cmd.fullname
        );
        reject_command(srv, c, Some(id), msg.as_bytes());
        return;
    }

    // Protected commands: DEBUG behind enable-debug-command, MODULE
    // LOAD/LOADEX/UNLOAD behind enable-module-command.
    if cmd.spec.flags & CMD_PROTECTED != 0 {
        let module = cmd.fullname.starts_with("module|");
        let (allowed, name, option) = if module {
            (
                srv.config.enable_module_command,
                "MODULE",
                "enable-module-command",
            )
        } else {
            (
                srv.config.enable_debug_command,
                "DEBUG",
                "enable-debug-command",
            )
        };
        if !allow_protected_action(allowed, c) {
            let msg = format!(
                "ERR {name} command not allowed. If the {option} option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server."
            );
            reject_command(srv, c, Some(id), msg.as_bytes());
            return;
        }
    }

    // NOAUTH: with requirepass set, only AUTH, HELLO and a few others run
    // before the client authenticates.
    if networking::auth_required(srv, c) && srv.commands.get(id).spec.flags & CMD_NO_AUTH == 0 {
        reject_command(srv, c, Some(id), b"NOAUTH Authentication required.");
        return;
    }

    // Some commands (SHUTDOWN, SAVE...) make no sense inside a transaction.
    if c.has_flag(CLIENT_MULTI) && srv.commands.get(id).spec.flags & CMD_NO_MULTI != 0 {
        reject_command(
            srv,
            c,
            Some(id),
            b"ERR Command not allowed inside a transaction",
        );
        return;
    }

    // ACLCheckAllPerm (acl.rs): may this user run this command on these
    // keys and channels? A denial is logged in the ACL LOG.
    if let Err((why, pos)) = crate::acl::acl_check_all_perm(srv, c, id) {
        let ctx = if c.has_flag(CLIENT_MULTI) {
            crate::acl::AclLogCtx::Multi
        } else {
            crate::acl::AclLogCtx::Toplevel
        };
        let fullname = srv.commands.get(id).fullname;
        crate::acl::add_acl_log_entry_at(srv, c, why, ctx, pos, fullname);
        let msg = crate::acl::noperm_error(why, fullname);
        reject_command(srv, c, Some(id), msg.as_bytes());
        return;
    }

    // Cluster mode: a command whose keys live on another node gets
    // -MOVED/-ASK (or CROSSSLOT, CLUSTERDOWN...) instead of running
    // (cluster/mod.rs get_node_by_query).
    if srv.cluster.is_some() && crate::cluster::cluster_redirect_if_needed(srv, c, id) {
        return;
    }

    // Client eviction (client_eviction.rs): free the biggest clients if
    // all clients together hold too much, before key eviction and after the
    // last command grew some output buffer. If this client was the one to
    // go, its command does not run.
    if crate::client_eviction::evict_clients(srv, Some(c)) {
        return;
    }

    // maxmemory (evict.rs): evict first; still over the limit, refuse the
    // commands that may grow memory. Not from inside a timed-out script:
    // its writes and the evictions would interleave.
    if srv.config.maxmemory != 0 && !crate::script::script_is_timedout(srv) {
        // Invalidations of evicted keys reach this client before its reply.
        let out_of_memory =
            crate::tracking::with_running_client(srv, c, crate::evict::perform_evictions)
                == crate::evict::EvictResult::Fail;
        // deny-oom (EXEC: a queued deny-oom command; EVAL/FCALL: the
        // script's flags). Queuing in MULTI costs memory too: everything
        // but EXEC/DISCARD/QUIT/RESET is refused.
        let mut reject_cmd_on_oom =
            get_command_flags(srv, c, id) & crate::commands::CMD_DENYOOM != 0;
        if c.has_flag(CLIENT_MULTI)
            && !matches!(
                srv.commands.get(id).fullname,
                "exec" | "discard" | "quit" | "reset"
            )
        {
            reject_cmd_on_oom = true;
        }
        if out_of_memory && reject_cmd_on_oom {
            reject_command(
                srv,
                c,
                Some(id),
                b"OOM command not allowed when used memory > 'maxmemory'.",
            );
            return;
        }
        // Remember it for scripts: by their first write the Lua stack and
        // arguments may have pushed memory over the limit.
        srv.pre_command_oom_state = out_of_memory;
    }
    // Keep client-side caching metadata within tracking-table-max-keys.
    crate::tracking::tracking_limit_used_slots_for(srv, c);

    // stop-writes-on-bgsave-error (rdb.rs): while snapshots fail, writes
    // (and PING, so monitoring notices) get MISCONF: the client learns at
    // once that its data is not being persisted.
    if crate::rdb::write_commands_denied_by_disk_error(srv)
        && (get_command_flags(srv, c, id) & CMD_WRITE != 0
            || srv.commands.get(id).fullname == "ping")
    {
        reject_command(srv, c, Some(id), crate::rdb::MISCONF_ERR.as_bytes());
        return;
    }
    // The AOF half: a failed write(2) or background fsync (aof.rs).
    if get_command_flags(srv, c, id) & CMD_WRITE != 0 || srv.commands.get(id).fullname == "ping" {
        if let Some(msg) = crate::aof::write_commands_denied_by_disk_error(srv) {
            reject_command(srv, c, Some(id), msg.as_bytes());
            return;
        }
    }

    // min-replicas-to-write: not enough replicas acked recently.
    if get_command_flags(srv, c, id) & CMD_WRITE != 0
        && !crate::replication::master::check_good_replicas_status(srv)
    {
        let msg = crate::replication::master::NOREPLICAS_ERR;
        reject_command(srv, c, Some(id), msg.as_bytes());
        return;
    }

    // A read-only replica takes writes only from its master
    // (replication/replica.rs).
    if crate::replication::replica::replica_denies_write(srv, c, get_command_flags(srv, c, id)) {
        reject_command(
            srv,
            c,
            Some(id),
            crate::replication::replica::READONLY_ERR.as_bytes(),
        );
        return;
    }

    // RESP2 subscribed mode: the connection only carries pub/sub traffic,
    // so only (un)subscribing, PING, QUIT and RESET may run (RESP3 has push
    // frames and no such limit).
    if c.has_flag(networking::CLIENT_PUBSUB)
        && c.resp == protocol::Resp::V2
        && !crate::pubsub::command_allowed_in_resp2_pubsub_context(srv.commands.get(id).fullname)
    {
        let msg = crate::pubsub::resp2_pubsub_context_error(srv.commands.get(id).fullname);
        reject_command(srv, c, Some(id), msg.as_bytes());
        return;
    }

    // replica-serve-stale-data no: while the link with the master is down
    // only `stale` commands run.
    // EXEC is judged by its commands: refused if any of them is not stale.
    let mut stale_flags = get_command_flags(srv, c, id);
    if srv.commands.get(id).fullname == "exec" && c.mstate.cmd_inv_flags & CMD_STALE != 0 {
        stale_flags &= !CMD_STALE;
    }
    if crate::replication::replica::replica_denies_stale(srv, stale_flags) {
        reject_command(
            srv,
            c,
            Some(id),
            crate::replication::replica::MASTERDOWN_ERR.as_bytes(),
        );
        return;
    }

    // Loading a dataset (rdb.rs start_loading): the loader serves clients
    // now and then, and only commands flagged `loading` (INFO, CONFIG,
    // SHUTDOWN...) may run meanwhile. EXEC is judged by its commands.
    let mut loading_flags = get_command_flags(srv, c, id);
    if srv.commands.get(id).fullname == "exec" && c.mstate.cmd_inv_flags & CMD_LOADING != 0 {
        loading_flags &= !CMD_LOADING;
    }
    if srv.loading.loading && !srv.loading.async_loading && loading_flags & CMD_LOADING == 0 {
        reject_command(srv, c, Some(id), crate::rdb::LOADING_ERR.as_bytes());
        return;
    }
    // A replica's async load (replication/replica.rs) serves the old data,
    // but not the commands flagged no-async-loading (REPLICAOF, FLUSHALL
    // ...), nor an EXEC of any.
    let no_async = loading_flags & CMD_NO_ASYNC_LOADING != 0
        || (srv.commands.get(id).fullname == "exec"
            && c.mstate.cmd_flags & CMD_NO_ASYNC_LOADING != 0);
    if srv.loading.async_loading && no_async {
        reject_command(srv, c, Some(id), crate::rdb::LOADING_ERR.as_bytes());
        return;
    }

    // A MONITOR client is flagged as a replica in Redis, and replicas may
    // not touch the keyspace (so they cannot dodge CLIENT PAUSE).
    let flags = srv.commands.get(id).spec.flags;
    if c.has_flag(CLIENT_MONITOR | networking::CLIENT_SLAVE)
        && flags & (CMD_WRITE | CMD_READONLY | CMD_MAY_REPLICATE) != 0
    {
        reject_command(
            srv,
            c,
            Some(id),
            b"ERR Replica can't interact with the keyspace",
        );
        return;
    }

    // A script runs past busy-reply-threshold and this client was served
    // from inside it (networking::process_events_while_blocked): only allow-busy
    // commands (SCRIPT KILL, FUNCTION KILL, SHUTDOWN NOSAVE...) run.
    if crate::script::script_is_timedout(srv) && flags & crate::commands::CMD_ALLOW_BUSY == 0 {
        let msg = crate::script::script_busy_error(srv);
        reject_command(srv, c, Some(id), msg.as_bytes());
        return;
    }

    // CLIENT PAUSE: park the client until the pause ends. Replicas are
    // exempt (their ACKs must get through); our master's stream is parked
    // too, its offset waiting with it (replica.rs process_master_command).
    if !c.has_flag(networking::CLIENT_SLAVE)
        && networking::check_client_pause_timeout_and_return_if_paused(srv)
        && networking::command_is_paused(srv, get_command_flags(srv, c, id))
    {
        networking::postpone_client(srv, c);
        return;
    }

    // Between MULTI and EXEC commands are queued, not run (multi.rs).
    if c.has_flag(CLIENT_MULTI) && !runs_inside_multi(srv, id) {
        multi::queue_multi_command(c, id, get_command_flags(srv, c, id));
        c.add_reply_status(b"QUEUED");
        return;
    }

    call(srv, c, id);

    // Keys that got data for blocked clients: serve them now, after the
    // command that pushed (handleClientsBlockedOnKeys). Not while a timed-out
    // script is serving allow-busy commands from inside itself
    // (isInsideYieldingLongCommand): the script's own pushes wait for it to
    // end, or a popper would run, and be answered BUSY, in its middle.
    if !srv.ready_keys.is_empty() && !crate::script::script_is_timedout(srv) {
        crate::blocked::handle_clients_blocked_on_keys(srv);
    }
}

/// whileBlockedCron: the part of serverCron that must run even while the
/// server is blocked in a load or a script (networking.rs
/// process_events_while_blocked). Here that is one job: a SIGTERM/SIGINT
/// received while loading shuts the server down at once, without saving
/// (the half-loaded dataset must not overwrite the file). A busy script
/// leaves the signal to the cron that runs after it.
// redis: server.c whileBlockedCron
pub fn while_blocked_cron(srv: &mut Server) {
    if srv.loading.loading && crate::shutdown::shutdown_asap() {
        crate::shutdown::shutdown_while_loading(srv);
    }
}

/// securityWarningCommand: log (at most once a minute) and close the
/// connection without a reply.
fn security_warning(srv: &mut Server, c: &mut Client) {
    let now = mstime() / 1000;
    if now - srv.last_security_warning >= 60 {
        server_log(
            LogLevel::Warning,
            "Possible SECURITY ATTACK detected. It looks like somebody is sending POST or Host: commands to Redis. This is likely due to an attacker attempting to use Cross Protocol Scripting to compromise your Redis instance. Connection aborted.",
        );
        srv.last_security_warning = now;
    }
    c.flags |= CLIENT_CLOSE_ASAP;
}

/// allowProtectedAction: `yes`, or `local` from a loopback connection.
pub fn allow_protected_action(setting: ProtectedAction, c: &Client) -> bool {
    match setting {
        ProtectedAction::Yes => true,
        ProtectedAction::No => false,
        ProtectedAction::Local => networking::conn_is_local(c),
    }
}

/// The commands that run at once even between MULTI and EXEC: the ones that
/// end or shape the transaction, and QUIT/RESET.
fn runs_inside_multi(srv: &Server, id: CmdId) -> bool {
    matches!(
        srv.commands.get(id).fullname,
        "exec" | "discard" | "multi" | "watch" | "quit" | "reset"
    )
}

/// rejectCommand: reply with the error (CR/LF become spaces), count it. A
/// rejected command inside MULTI dooms the transaction; a rejected EXEC
/// reports the reason in its EXECABORT.
pub fn reject_command(srv: &mut Server, c: &mut Client, cmd: Option<CmdId>, msg: &[u8]) {
    let clean: Vec<u8> = msg
        .iter()
        .map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b })
        .collect();
    multi::flag_transaction(c);
    let is_exec = cmd.is_some_and(|id| srv.commands.get(id).fullname == "exec");
    if is_exec {
        multi::exec_command_abort(srv, c, &clean);
    } else {
        c.add_reply_error_bytes(&clean);
    }
    srv.note_errors(c);
    if let Some(id) = cmd {
        srv.commands.get_mut(id).stats.rejected_calls += 1;
    }
}

/// The text Redis sends for an unknown command: the name (at most 128
/// bytes) and the first arguments, each as `'arg' `, until 128 bytes. Bytes
/// are echoed as they are; like C's `%.128s`, each string ends at a NUL.
fn unknown_command_error(argv: &[bytes::Bytes]) -> Vec<u8> {
    let mut args: Vec<u8> = Vec::new();
    for a in &argv[1..] {
        if args.len() >= 128 {
            break;
        }
        let room = 128 - args.len();
        args.push(b'\'');
        args.extend_from_slice(c_str_prefix(a, room));
        args.extend_from_slice(b"' ");
    }
    let mut msg = b"ERR unknown command '".to_vec();
    msg.extend_from_slice(c_str_prefix(&argv[0], 128));
    msg.extend_from_slice(b"', with args beginning with: ");
    msg.extend_from_slice(&args);
    msg
}

/// `%.<max>s` of a byte string: at most `max` bytes, stopping at a NUL.
pub fn c_str_prefix(b: &[u8], max: usize) -> &[u8] {
    let b = &b[..b.len().min(max)];
    match b.iter().position(|&x| x == 0) {
        Some(nul) => &b[..nul],
        None => b,
    }
}

/// `%.128s` of a byte string as text (for log lines and error messages
/// built with format!).
pub fn lossy_truncated(b: &[u8], max: usize) -> String {
    String::from_utf8_lossy(c_str_prefix(b, max)).into_owned()
}

/// getCommandFlags: the command's flags, except for scripts: EVAL/EVALSHA
/// and FCALL take their write / deny-oom / stale flags from the flags the
/// script or function declared. EXEC counts as a write when its queue holds
/// one (used for CLIENT PAUSE WRITE).
pub fn get_command_flags(srv: &Server, c: &Client, id: CmdId) -> u64 {
    let spec = srv.commands.get(id).spec;
    match spec.name {
        "fcall" | "fcall_ro" => crate::function::fcall_get_command_flags(srv, &c.argv, spec.flags),
        "eval" | "eval_ro" => crate::eval::eval_get_command_flags(srv, &c.argv, false, spec.flags),
        "evalsha" | "evalsha_ro" => {
            crate::eval::eval_get_command_flags(srv, &c.argv, true, spec.flags)
        }
        "exec" => spec.flags | c.mstate.cmd_flags,
        _ => spec.flags,
    }
}

/// call(): run one command and measure it. In Redis's order, after the
/// handler: latency sample, slowlog entry, monitor feed, command statistics.
/// Every instrument hooks in here, so one breakpoint shows them all.
pub fn call(srv: &mut Server, c: &mut Client, id: CmdId) {
    let (proc, flags) = {
        let spec = srv.commands.get(id).spec;
        (spec.proc, spec.flags)
    };

    // Messages the command publishes to its own client go before its
    // reply (pubsub.rs).
    let pubsub_scope = crate::pubsub::pubsub_call_begin(srv, c);
    // ... and so do invalidations for it (tracking.rs).
    let tracking_scope = crate::tracking::tracking_call_begin(srv, c);
    // Propagation (propagate.rs): ops queued outside any command (expiry,
    // evictions) go out on their own first; then this call's own flags,
    // and the dirty counter to tell whether the command wrote.
    if srv.propagate.in_nested_call == 0 {
        crate::propagate::propagate_pending_commands(srv, true);
    }
    let prev_call_flags = std::mem::replace(&mut srv.propagate.call_flags, 0);
    let strip = std::mem::take(&mut srv.propagate.next_call_strip);
    let dirty_before = srv.dirty;
    let repl_offset_before = srv.repl.master_repl_offset;
    #[cfg(feature = "recorder")]
    let reply_len_before = crate::recorder::call_begin(c);
    let start = Instant::now();
    // The lazy-free and encoding logs name the running command and the key
    // it names first (storage/src/encoding_log.rs), only while one is on.
    let log_context = storage::encoding_log::context_wanted().then(|| {
        let spec = srv.commands.get(id).spec;
        let key = usize::try_from(spec.first_key)
            .ok()
            .filter(|&i| i > 0)
            .and_then(|i| c.argv.get(i));
        storage::encoding_log::set_context(static_fullname(srv, id), key.map(|k| &k[..]))
    });
    srv.propagate.in_nested_call += 1;
    proc(srv, c);
    srv.propagate.in_nested_call -= 1;
    if let Some(prev) = log_context {
        storage::encoding_log::restore_context(prev);
    }
    let duration = start.elapsed();
    crate::pubsub::pubsub_call_end(srv, c, pubsub_scope);
    // The command touched keys this very client WATCHes (multi.rs).
    if !srv.pending_touches.is_empty() {
        multi::apply_pending_touches(srv, c);
    }
    let micros = duration.as_micros() as u64;

    // Propagate the command as it was rewritten (c.argv: SET EX became
    // SET PXAT...), then, at the outermost call, everything it queued
    // (afterCommand -> propagatePendingCommands). SCAN and RANDOMKEY
    // delete arbitrary expired keys: no MULTI around those.
    let dirty = srv.dirty > dirty_before;
    let is_exec = srv.commands.get(id).fullname == "exec";
    crate::propagate::call_propagate(srv, c.db, &c.argv, dirty, is_exec, strip);
    srv.propagate.call_flags = prev_call_flags;
    if srv.propagate.in_nested_call == 0 {
        let arbitrary = matches!(srv.commands.get(id).fullname, "scan" | "randomkey");
        crate::propagate::propagate_pending_commands(srv, arbitrary);
    }
    // c->woff: the stream offset right after this client's last write,
    // what its WAIT waits for (replication/master.rs).
    if srv.repl.master_repl_offset != repl_offset_before {
        c.repl.woff = srv.repl.master_repl_offset;
    }
    // Client-side caching: remember what a read served to a tracking
    // client; at the outermost call, the client's own invalidations follow
    // its reply (trackingRememberKeys, trackingHandlePendingKeyInvalidations).
    crate::tracking::tracking_call_end(srv, c, id, tracking_scope);

    // The arguments as instruments show them (AUTH passwords redacted).
    let argv = match c.original_argv.take() {
        Some(redacted) => redacted,
        None => std::mem::take(&mut c.argv),
    };

    // 1. Latency monitor: `command`, or `fast-command` for O(1)/O(log N)
    //    commands, when at least latency-monitor-threshold ms.
    let event = if flags & CMD_FAST != 0 {
        "fast-command"
    } else {
        "command"
    };
    let threshold = srv.config.latency_monitor_threshold;
    srv.latency
        .add_sample_if_needed(threshold, event, duration.as_millis() as u64);

    // A command that blocked (BLPOP on empty lists) is counted as a call
    // now, as Redis 7.0 counts it in call(); it goes to SLOWLOG when it is
    // served or times out (updateStatsOnUnblock). When it is served it runs
    // again here (`reprocessing`): MONITOR must not show it twice and
    // INFO must not count it twice.
    let blocked = c.has_flag(CLIENT_BLOCKED);
    let reprocessing = srv.reprocessing_command;

    // 2. SLOWLOG: execution time only, no I/O.
    if flags & CMD_SKIP_SLOWLOG == 0 && !blocked {
        slowlog::slowlog_push_entry_if_needed(srv, c, &argv, micros);
    }

    // 3. MONITOR: admin commands (CONFIG, DEBUG, ...) are never shown.
    if flags & (CMD_SKIP_MONITOR | CMD_ADMIN) == 0 && !reprocessing {
        monitor::replication_feed_monitors(srv, c, c.db, &argv);
    }
    c.argv = argv;
    // Scripts and the AOF loader call() without process_command and set
    // lastcmd here, as scriptCall does; EXEC's commands leave it at exec.
    if !c.has_flag(networking::CLIENT_EXECUTING_MULTI) {
        c.last_cmd = static_fullname(srv, id);
    }
    // 4a. redis-lite's flight recorder and blame (recorder.rs), when on.
    #[cfg(feature = "recorder")]
    if crate::recorder::on() {
        let name = static_fullname(srv, id);
        crate::recorder::call_end(srv, c, id, name, reply_len_before, start, micros);
    }

    // 4. Command statistics (INFO commandstats, LATENCY HISTOGRAM) and
    //    error statistics (INFO errorstats).
    let failed = srv.note_errors(c) > 0;
    let tracking = srv.config.latency_tracking;
    let cmd = srv.commands.get_mut(id);
    if !reprocessing {
        cmd.stats.calls += 1;
        srv.stats.numcommands += 1;
    }
    cmd.stats.microseconds += micros;
    srv.stats.eventloop_duration_cmd_sum += micros;
    if blocked {
        return; // its latency and failure are known when it is unblocked
    }
    if failed {
        cmd.stats.failed_calls += 1;
    }
    if tracking {
        cmd.histogram.record(duration.as_nanos() as u64);
    }
}

/// updateStatsOnUnblock for a blocked command that ends without being run
/// again (time-out, CLIENT UNBLOCK, a stream reader served from the key):
/// its call was counted when it blocked; an error reply (CLIENT UNBLOCK
/// ... ERROR) makes it a failed call.
pub fn update_stats_on_unblock(srv: &mut Server, c: &mut Client) {
    let failed = srv.note_errors(c) > 0;
    if let Some(id) = srv.commands.lookup(c.last_cmd.as_bytes()) {
        if failed {
            srv.commands.get_mut(id).stats.failed_calls += 1;
        }
    }
}

/// The command's full name for CLIENT LIST's cmd= ("get", "config|get").
fn static_fullname(srv: &Server, id: CmdId) -> &'static str {
    srv.commands.get(id).fullname
}

/// The proc of a container command: only reached when the container is
/// called alone with enough arguments, which the arity check prevents; kept
/// for COMMAND INFO's sake (Redis's container commands have no proc at all).
pub fn container_command(_srv: &mut Server, c: &mut Client) {
    c.add_reply_subcommand_syntax_error();
}

/// serverCron: runs `hz` times per second, after the file events of a loop
/// pass. Everything periodic lives here, as in Redis.
pub fn server_cron(srv: &mut Server) {
    let now_ms = mstime();
    srv.lruclock = get_lru_clock();

    // dynamic-hz: with many clients, tick faster so clientsCron can visit
    // each of them often enough (MAX_CLIENTS_PER_CLOCK_TICK per tick).
    srv.hz = srv.config.hz.clamp(CONFIG_MIN_HZ, CONFIG_MAX_HZ);
    if srv.config.dynamic_hz {
        while srv.clients.len() as i64 / srv.hz > MAX_CLIENTS_PER_CLOCK_TICK {
            srv.hz *= 2;
            if srv.hz > CONFIG_MAX_HZ {
                srv.hz = CONFIG_MAX_HZ;
                break;
            }
        }
    }

    // DEBUG PAUSE-CRON: skip the actual cron work.
    if srv.pause_cron {
        return;
    }

    // run_with_period(100): instantaneous metrics.
    if run_with_period(srv, 100) {
        srv.inst_ops.track(srv.stats.numcommands, now_ms);
        // The plain kbps figures count replication traffic too; the repl
        // ones count only it (server.c serverCron).
        let st = &srv.stats;
        let (inp, out) = (st.net_input_bytes, st.net_output_bytes);
        let (rinp, rout) = (st.net_repl_input_bytes, st.net_repl_output_bytes);
        srv.inst_net_input.track(inp + rinp, now_ms);
        srv.inst_net_output.track(out + rout, now_ms);
        srv.inst_net_repl_input.track(rinp, now_ms);
        srv.inst_net_repl_output.track(rout, now_ms);
    }

    let mem = crate::memory::used_memory();
    if mem > srv.stat_peak_memory {
        srv.stat_peak_memory = mem;
    }

    // SIGTERM / SIGINT arrived: shut down here, where it is safe
    // (shutdown.rs; the handler only set a flag).
    crate::shutdown::shutdown_cron(srv);

    // Show some info about non-empty databases / the clients.
    if srv.config.loglevel <= LogLevel::Verbose && run_with_period(srv, 5000) {
        for (j, db) in srv.dbs.iter().enumerate() {
            let (used, vkeys) = (db.dict.len(), db.expires.len());
            if used > 0 || vkeys > 0 {
                server_log(
                    LogLevel::Verbose,
                    &format!(
                        "DB {j}: {used} keys ({vkeys} volatile) in {} slots HT.",
                        db.dict.buckets()
                    ),
                );
            }
        }
    }
    if srv.config.loglevel <= LogLevel::Debug && run_with_period(srv, 5000) {
        server_log(
            LogLevel::Debug,
            &format!(
                "{} clients connected ({} replicas), {} bytes in use",
                srv.clients.len().saturating_sub(srv.repl.slaves.len()),
                srv.repl.slaves.len(),
                crate::memory::used_memory()
            ),
        );
    }

    crate::recorder::timed("clients cron", || clients_cron(srv));
    databases_cron(srv);
    // The tracking table limit also applies while idle (after a CONFIG SET
    // of tracking-table-max-keys, say).
    if srv.tracking.clients > 0 {
        crate::tracking::tracking_limit_used_slots(srv);
    }
    // A running child's progress, once a second (receiveChildInfo), then
    // checkChildrenDone and the save points (rdb.rs).
    if (srv.rdb.child_pid.is_some() || srv.aof.child_pid.is_some()) && run_with_period(srv, 1000) {
        crate::childinfo::receive_child_info(srv);
    }
    check_children_done(srv);
    // Reap a BGSAVE child, or start one when a save point is due.
    crate::rdb::rdb_cron(srv);
    // A scheduled or automatic AOF rewrite, postponed flushes (aof.rs).
    crate::aof::aof_cron(srv);
    // clusterCron, every 100 ms in cluster mode.
    if srv.cluster.is_some() && run_with_period(srv, 100) {
        crate::cluster::cluster_cron(srv);
    }
    // replicationCron, once a second, ten times a second while a FAILOVER
    // runs (its handshake then moves faster): the failover's progress
    // first, then the replica half and the master half
    // (replication/failover.rs, replica.rs, master.rs).
    let repl_period =
        if srv.repl.failover.state != crate::replication::failover::FailoverState::None {
            100
        } else {
            1000
        };
    if run_with_period(srv, repl_period) {
        crate::replication::failover::update_failover_status(srv);
        crate::replication::replica::replication_cron(srv);
        crate::replication::master::replication_cron_master(srv);
    }
    // Close MIGRATE connections idle for too long.
    if run_with_period(srv, 1000) {
        crate::migrate::migrate_close_timedout_sockets(srv);
    }
    // Deletions the cron made (expiry) reach the AOF on their own.
    crate::propagate::propagate_pending_outside_call(srv);

    srv.cronloops += 1;
}

/// CONFIG_MIN_RESERVED_FDS: descriptors kept back from `maxclients` for
/// the server's own use (listeners, log file, RDB child pipes, ...).
pub const CONFIG_MIN_RESERVED_FDS: u64 = 32;

/// adjustOpenFilesLimit: make RLIMIT_NOFILE big enough for `maxclients`
/// clients plus CONFIG_MIN_RESERVED_FDS. When the OS refuses, try 16 fewer
/// descriptors at a time down to the current limit, and lower `maxclients`
/// to what is left, with Redis's three warnings; below the reserve the
/// server cannot start (Redis exits; here the caller gets `false`).
// redis: server.c adjustOpenFilesLimit
pub fn adjust_open_files_limit(config: &mut crate::config::Config) -> bool {
    let maxfiles = config.maxclients + CONFIG_MIN_RESERVED_FDS;
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == -1 {
        server_log(
            LogLevel::Warning,
            &format!(
                "Unable to obtain the current NOFILE limit ({}), assuming 1024 and setting the max clients configuration accordingly.",
                std::io::Error::last_os_error()
            ),
        );
        set_maxclients(config, 1024 - CONFIG_MIN_RESERVED_FDS);
        return true;
    }
    let oldlimit = limit.rlim_cur;
    if oldlimit >= maxfiles {
        return true;
    }
    const DECR_STEP: u64 = 16;
    let mut bestlimit = maxfiles;
    let mut setrlimit_error = std::io::Error::from_raw_os_error(0);
    while bestlimit > oldlimit {
        limit.rlim_cur = bestlimit;
        limit.rlim_max = bestlimit;
        // SAFETY: setrlimit only reads the struct.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) } != -1 {
            break;
        }
        setrlimit_error = std::io::Error::last_os_error();
        if bestlimit < DECR_STEP {
            bestlimit = oldlimit;
            break;
        }
        bestlimit -= DECR_STEP;
    }
    bestlimit = bestlimit.max(oldlimit);
    if bestlimit >= maxfiles {
        server_log(
            LogLevel::Notice,
            &format!("Increased maximum number of open files to {maxfiles} (it was originally set to {oldlimit})."),
        );
        return true;
    }
    let old_maxclients = config.maxclients;
    if bestlimit <= CONFIG_MIN_RESERVED_FDS {
        server_log(
            LogLevel::Warning,
            &format!("Your current 'ulimit -n' of {oldlimit} is not enough for the server to start. Please increase your open file limit to at least {maxfiles}. Exiting."),
        );
        return false;
    }
    set_maxclients(config, bestlimit - CONFIG_MIN_RESERVED_FDS);
    server_log(
        LogLevel::Warning,
        &format!("You requested maxclients of {old_maxclients} requiring at least {maxfiles} max file descriptors."),
    );
    // strerror's text: io::Error's Display adds " (os error N)".
    let why = setrlimit_error.to_string();
    let why = why.split(" (os error").next().unwrap_or("");
    server_log(
        LogLevel::Warning,
        &format!("Server can't set maximum open files to {maxfiles} because of OS error: {why}."),
    );
    server_log(
        LogLevel::Warning,
        &format!(
            "Current maximum open files is {bestlimit}. maxclients has been reduced to {} to compensate for low ulimit. If you need higher maxclients increase 'ulimit -n'.",
            config.maxclients
        ),
    );
    true
}

/// Lower `maxclients` in the config table too, so CONFIG GET shows it.
fn set_maxclients(config: &mut crate::config::Config, n: u64) {
    if config.set_from_str("maxclients", &n.to_string()).is_err() {
        config.maxclients = n;
    }
}

/// CLIENTS_CRON_MIN_ITERATIONS: clientsCron visits numclients/hz clients
/// per call, but at least this many, so a few clients are still looked at
/// often when there are not many of them.
pub const CLIENTS_CRON_MIN_ITERATIONS: usize = 5;

/// clientsCron: per-client housekeeping, a slice of the clients per call:
/// numclients/hz of them (at least CLIENTS_CRON_MIN_ITERATIONS), so that at
/// `hz` calls per second every client is visited about once a second and
/// 10,000 idle clients cost a tick 1/hz of a full walk, not all of it.
/// Each visited client may be closed for idling past `timeout` seconds,
/// and gets back query buffer space it no longer needs
/// (clientsCronHandleTimeout, clientsCronResizeQueryBuffer).
///
/// Redis rotates its client list (tail to head) and looks at the head. The
/// clients here live in a map, so the rotation is a queue of tokens: taken
/// from the front; when it runs out, a new round starts with the tokens of
/// the clients connected now (one copy per round, ~1 s). A client closed
/// meanwhile is simply not found when its token comes up.
// redis: server.c clientsCron
fn clients_cron(srv: &mut Server) {
    let numclients = srv.clients.len();
    let mut iterations = numclients / srv.hz.max(1) as usize;
    if iterations < CLIENTS_CRON_MIN_ITERATIONS {
        iterations = numclients.min(CLIENTS_CRON_MIN_ITERATIONS);
    }
    let now = Instant::now();
    while iterations > 0 && !srv.clients.is_empty() {
        let Some(token) = srv.clients_cron_queue.pop_front() else {
            srv.clients_cron_queue.extend(srv.clients.keys().copied());
            continue;
        };
        let Some(c) = srv.clients.get_mut(&token) else {
            continue; // closed since this round began
        };
        iterations -= 1;
        if clients_cron_handle_timeout(srv.config.timeout, c, now) {
            srv.clients_to_close.push(token);
            continue;
        }
        let idle = now.saturating_duration_since(c.last_interaction);
        clients_cron_resize_query_buffer(c, idle.as_secs());
        clients_cron_resize_output_buffer(
            &mut srv.stats,
            srv.reply_buffer_resizing_enabled,
            srv.reply_buffer_peak_reset_time,
            c,
        );
        // The clients' memory, measured again once a second (INFO's
        // figures), and for client eviction the bucket too.
        let limit = srv.config.maxmemory_clients;
        if !crate::client_eviction::update_client_mem_usage_and_bucket(
            &mut srv.client_mem,
            limit,
            c,
        ) && !c.has_flag(CLIENT_CLOSE_ASAP)
        {
            crate::client_eviction::update_client_memory_usage(&mut srv.client_mem, c);
        }
    }
}

/// clientsCronHandleTimeout: with `timeout` set, close a client idle for
/// longer than that many seconds, unless it is a MONITOR (Redis's replicas
/// and monitors have no timeout), blocked (BLPOP waits as long as it
/// asked) or subscribed (a subscriber may wait for messages forever).
// redis: timeout.c clientsCronHandleTimeout
fn clients_cron_handle_timeout(maxidletime: i64, c: &mut Client, now: Instant) -> bool {
    // Replicas and our master are never idle-closed (mustObeyClient).
    let never = CLIENT_MONITOR
        | CLIENT_BLOCKED
        | CLIENT_PUBSUB
        | networking::CLIENT_SLAVE
        | networking::CLIENT_MASTER;
    if maxidletime <= 0 || c.has_flag(never) {
        return false;
    }
    let idle = now.saturating_duration_since(c.last_interaction).as_secs() as i64;
    if idle > maxidletime {
        server_log(LogLevel::Verbose, "Closing idle client");
        c.flags |= CLIENT_CLOSE_ASAP;
        return true;
    }
    false
}

/// clientsCronResizeOutputBuffer: fit the client's static reply buffer to
/// its recent use (reply_buffer.rs cron_resize: halve toward the peak when
/// the peak stayed under half, double up to 16 KB when it filled), unless
/// DEBUG REPLYBUFFER RESIZING 0 turned it off.
// redis: server.c clientsCronResizeOutputBuffer
fn clients_cron_resize_output_buffer(
    stats: &mut Stats,
    enabled: bool,
    peak_reset_time: i64,
    c: &mut Client,
) {
    if !enabled {
        return;
    }
    match c.reply.cron_resize(mstime(), peak_reset_time) {
        -1 => stats.reply_buffer_shrinks += 1,
        1 => stats.reply_buffer_expands += 1,
        _ => {}
    }
}

/// PROTO_RESIZE_THRESHOLD: a busy client's query buffer is trimmed only
/// above 32 KB, so the usual 16 KB read buffer is never reallocated.
const PROTO_RESIZE_THRESHOLD: usize = 32 * 1024;

/// clientsCronResizeQueryBuffer: give back query buffer space that wastes
/// more than 4 KB. An idle client (> 2 s) keeps only the bytes it holds; a
/// busy one whose buffer is over 32 KB and more than twice its recent peak
/// shrinks to that peak (or the bulk being received).
fn clients_cron_resize_query_buffer(c: &mut Client, idle_secs: u64) {
    let (len, cap) = (c.querybuf.len(), c.querybuf.capacity());
    let bulk = c.parser.pending_bulk_len().unwrap_or(0);
    if cap - len > 4 * 1024 {
        let resize = if idle_secs > 2 {
            Some(len)
        } else if cap > PROTO_RESIZE_THRESHOLD && cap / 2 > c.querybuf_peak {
            Some(len.max(c.querybuf_peak).max(bulk))
        } else {
            None
        };
        if let Some(size) = resize {
            let mut fresh = BytesMut::with_capacity(size);
            fresh.extend_from_slice(&c.querybuf);
            c.querybuf = fresh;
        }
    }
    // Start measuring the next cycle's peak from what is held now.
    c.querybuf_peak = len.max(bulk);
}

/// run_with_period(ms): true on the cron ticks that fall every `ms` ms.
pub fn run_with_period(srv: &Server, ms: i64) -> bool {
    let period = 1000 / srv.hz;
    ms <= period || srv.cronloops.is_multiple_of((ms / period) as u64)
}

/// databasesCron: resize hash tables that became too sparse, and spend up to
/// 1 ms per call on incremental rehashing (activerehashing yes).
fn databases_cron(srv: &mut Server) {
    // Expire keys by sampling (the slow cycle, 25% of a cron period). A
    // replica waits for its master's DELs.
    if srv.active_expire_enabled && srv.repl.masterhost.is_none() {
        crate::recorder::timed("slow expire cycle", || {
            crate::expire::active_expire_cycle(srv, CycleType::Slow)
        });
    }
    // ... except for keys its own clients wrote (writable replica).
    if srv.active_expire_enabled && srv.repl.masterhost.is_some() {
        crate::replication::replica::expire_slave_keys(srv);
    }

    // tryResizeHashTables: shrink dicts whose fill fell under 10%.
    for db in srv.dbs.iter_mut() {
        if db.dict.needs_resize() {
            db.dict.resize_to_fit();
        }
        if db.expires.needs_resize() {
            db.expires.resize_to_fit();
        }
    }
    // incrementallyRehash: the first db that is rehashing gets 1 ms.
    if srv.config.activerehashing {
        for db in srv.dbs.iter_mut() {
            if db.dict.is_rehashing() {
                crate::recorder::timed("incremental rehash", || db.dict.rehash_milliseconds(1));
                break;
            }
            if db.expires.is_rehashing() {
                crate::recorder::timed("incremental rehash", || db.expires.rehash_milliseconds(1));
                break;
            }
        }
    }
}

/// Milliseconds until the next server_cron tick, from the effective hz.
pub fn cron_period(srv: &Server) -> Duration {
    Duration::from_millis((1000 / srv.hz.clamp(CONFIG_MIN_HZ, CONFIG_MAX_HZ)) as u64)
}

// ---- commands that live in server.c ----

/// PING [message]
// redis: server.c pingCommand
pub fn ping_command(_srv: &mut Server, c: &mut Client) {
    if c.argc() > 2 {
        c.add_reply_error("ERR wrong number of arguments for 'ping' command");
        return;
    }
    // RESP2 subscribed mode: a reply that looks like a pub/sub message.
    if c.has_flag(networking::CLIENT_PUBSUB) && c.resp == protocol::Resp::V2 {
        c.add_reply_array_len(2);
        c.add_reply_bulk(b"pong");
        let msg = c.argv.get(1).cloned().unwrap_or_default();
        c.add_reply_bulk(&msg);
        return;
    }
    if c.argc() == 1 {
        c.add_reply_status(b"PONG");
    } else {
        let msg = c.argv[1].clone();
        c.add_reply_bulk(&msg);
    }
}

/// ECHO message
// redis: server.c echoCommand
pub fn echo_command(_srv: &mut Server, c: &mut Client) {
    let msg = c.argv[1].clone();
    c.add_reply_bulk(&msg);
}

/// TIME
// redis: server.c timeCommand
pub fn time_command(_srv: &mut Server, c: &mut Client) {
    let us = ustime();
    c.add_reply_array_len(2);
    c.add_reply_bulk(format!("{}", us / 1_000_000).as_bytes());
    c.add_reply_bulk(format!("{}", us % 1_000_000).as_bytes());
}

/// LASTSAVE
// redis: rdb.c lastsaveCommand
pub fn lastsave_command(srv: &mut Server, c: &mut Client) {
    c.add_reply_integer(srv.lastsave);
}

// ---- beforeSleep ----

/// beforeSleep: work done once per pass before waiting for events.
pub fn before_sleep(srv: &mut Server) {
    // CLIENT PAUSE over (timed out or CLIENT UNPAUSE): run what waited.
    networking::check_client_pause_timeout_and_return_if_paused(srv);
    if srv.clients_unpaused {
        networking::resume_postponed_clients(srv);
    }
    // Blocked clients: time-outs, then those served or unblocked go on
    // with the rest of their input.
    crate::blocked::handle_blocked_clients_timeout(srv);
    crate::blocked::process_unblocked_clients(srv);

    // The fast expire cycle: at most 1 ms, only when the slow cycle could
    // not keep up (activeExpireCycle(ACTIVE_EXPIRE_CYCLE_FAST)).
    if srv.active_expire_enabled && srv.repl.masterhost.is_none() {
        crate::recorder::timed("fast expire cycle", || {
            crate::expire::active_expire_cycle(srv, CycleType::Fast)
        });
    }
    // REPLCONF GETACK for new WAITs, then the WAITs that can be answered,
    // and what their clients sent after them.
    crate::replication::master::before_sleep_master(srv);
    crate::blocked::process_unblocked_clients(srv);
    // BCAST clients get this iteration's modified keys, one batch each.
    crate::tracking::tracking_broadcast_invalidation_messages(srv);
    networking::free_clients_in_async_free_queue(srv);
    // clusterBeforeSleep: state update, nodes.conf, queued bus packets.
    if srv.cluster.is_some() {
        crate::cluster::cluster_before_sleep(srv);
    }
    // The AOF is written (and fsynced with `always`) before any reply.
    crate::aof::before_sleep(srv);
    crate::recorder::timed("pending writes", || {
        networking::handle_clients_with_pending_writes(srv)
    });
    networking::free_clients_in_async_free_queue(srv);
    // Disconnect some clients if together they hold too much memory.
    crate::client_eviction::evict_clients(srv, None);
}

// ---- children (redisFork and checkChildrenDone) ----

/// CHILD_TYPE_*: why the server forked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildType {
    /// BGSAVE (rdb.rs): one at a time, its pid in `srv.rdb.child_pid`.
    Rdb,
    /// A Lua debugging session (ldb.rs, SCRIPT DEBUG YES): any number, in
    /// parallel with a save, as in Redis.
    Ldb,
    /// BGREWRITEAOF (aof.rs): its pid in `srv.aof.child_pid`; never at
    /// the same time as a BGSAVE.
    Aof,
}

/// redisFork: the one place the server forks, whatever for. `fork()`
/// copies the page tables of the whole process while every client waits:
/// that stall is measured here (`latest_fork_usec`, the `fork` LATENCY
/// event) for BGSAVE and debugger sessions alike. Returns the child's pid
/// in the parent and 0 in the child, as fork() does.
///
/// The child is a single-threaded copy of a multi-threaded process: the
/// `bio_lazy_free` thread does not exist there, and a lock it held at the
/// fork stays held for ever. So the child frees inline (never touching the
/// lazy-free queue), ignores the shutdown signals the parent handles (in
/// Redis it inherits a handler that only sets a flag nobody reads there),
/// closes the listening sockets so a restarted server can bind while the
/// child still runs, logs with role `C`, and leaves with `_exit`. jemalloc
/// makes malloc safe across fork itself (its pthread_atfork handlers).
pub fn redis_fork(srv: &mut Server, purpose: ChildType) -> std::io::Result<libc::pid_t> {
    // The persistence children report progress and CoW (childinfo.rs).
    let persistence = purpose == ChildType::Rdb || purpose == ChildType::Aof;
    if persistence {
        crate::childinfo::open_child_info_pipe(srv);
    }
    let start = Instant::now();
    // SAFETY: fork() in a multi-threaded process; the child follows the
    // rules above.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        crate::log::set_role('C');
        // SAFETY: installing SIG_IGN has no preconditions.
        unsafe {
            libc::signal(libc::SIGTERM, libc::SIG_IGN);
            libc::signal(libc::SIGINT, libc::SIG_IGN);
        }
        lazyfree::set_in_fork_child();
        // closeChildUnusedResourceAfterFork.
        for l in &srv.listeners {
            use std::os::fd::AsRawFd;
            // SAFETY: the child's copy of the descriptor; the listener that
            // owns it is never dropped (the child leaves with _exit).
            unsafe { libc::close(l.as_raw_fd()) };
        }
        if let Some(l) = &srv.unix_listener {
            use std::os::fd::AsRawFd;
            // SAFETY: as above.
            unsafe { libc::close(l.as_raw_fd()) };
        }
        crate::shutdown::forget_pidfile();
        return Ok(0);
    }
    if pid < 0 {
        let e = std::io::Error::last_os_error();
        if persistence {
            crate::childinfo::close_child_info_pipe(srv);
        }
        return Err(e);
    }
    let fork_us = start.elapsed().as_micros() as u64;
    srv.stats.total_forks += 1;
    srv.stats.fork_time_us = fork_us;
    let threshold = srv.config.latency_monitor_threshold;
    srv.latency
        .add_sample_if_needed(threshold, "fork", fork_us / 1000);
    if persistence {
        crate::childinfo::child_forked(srv);
        // updateDictResizePolicy: no rehashing while pages are shared
        // with a saving child (every moved entry would be a copied page).
        storage::dict::set_resize_allowed(false);
    }
    Ok(pid)
}

/// checkChildrenDone: reap every child that ended (server_cron), and hand
/// it to whoever forked it.
pub fn check_children_done(srv: &mut Server) {
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: waiting for any of our children without blocking.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid <= 0 {
            return;
        }
        let exitcode = if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else {
            -1
        };
        let bysignal = if libc::WIFSIGNALED(status) {
            libc::WTERMSIG(status)
        } else {
            0
        };
        if srv.rdb.child_pid == Some(pid) {
            crate::rdb::background_save_done(srv, exitcode, bysignal);
        } else if srv.aof.child_pid == Some(pid) {
            crate::aof::background_rewrite_done(srv, exitcode, bysignal);
        } else if !crate::ldb::ldb_remove_child(pid) {
            server_log(
                LogLevel::Warning,
                &format!("Warning, detected child with unmatched pid: {pid}"),
            );
        }
    }
}

// ---- the process: supervision, daemonize, pid file, start-up notes ----

/// SUPERVISED_*: the `supervised` values (none, upstart, systemd, auto).
pub const SUPERVISED_NONE: i32 = 0;
pub const SUPERVISED_UPSTART: i32 = 1;
pub const SUPERVISED_SYSTEMD: i32 = 2;
pub const SUPERVISED_AUTODETECT: i32 = 3;

/// CONFIG_DEFAULT_PID_FILE: a daemon's pid file when `pidfile` is unset.
pub const CONFIG_DEFAULT_PID_FILE: &str = "/var/run/redis.pid";

/// server.supervised_mode: who supervises us, once redis_is_supervised
/// confirmed it (read by the shutdown sequence, before and after the
/// Server exists).
static SUPERVISED_MODE: std::sync::atomic::AtomicI32 =
    std::sync::atomic::AtomicI32::new(SUPERVISED_NONE);

pub fn supervised_mode() -> i32 {
    SUPERVISED_MODE.load(std::sync::atomic::Ordering::Relaxed)
}

/// sd_notify(0, msg): one datagram to the socket systemd names in
/// NOTIFY_SOCKET (`@name` is an abstract socket). 0 when there is no
/// socket, negative on error, positive on success, as sd_notify.
fn sd_notify(msg: &str) -> i32 {
    use std::os::unix::net::UnixDatagram;
    let Ok(path) = std::env::var("NOTIFY_SOCKET") else {
        return 0;
    };
    let Ok(sock) = UnixDatagram::unbound() else {
        return -libc::EIO;
    };
    let sent = if let Some(name) = path.strip_prefix('@') {
        use std::os::linux::net::SocketAddrExt;
        match std::os::unix::net::SocketAddr::from_abstract_name(name) {
            Ok(addr) => sock.send_to_addr(msg.as_bytes(), &addr),
            Err(e) => Err(e),
        }
    } else {
        sock.send_to(msg.as_bytes(), &path)
    };
    match sent {
        Ok(_) => 1,
        Err(e) => -e.raw_os_error().unwrap_or(libc::EIO),
    }
}

/// redisCommunicateSystemd: tell systemd our state (READY=1, STATUS=...).
pub fn redis_communicate_systemd(msg: &str) -> i32 {
    let ret = sd_notify(msg);
    if ret == 0 {
        server_log(
            LogLevel::Warning,
            "systemd supervision error: NOTIFY_SOCKET not found!",
        );
    } else if ret < 0 {
        server_log(
            LogLevel::Warning,
            &format!("systemd supervision error: sd_notify: {ret}"),
        );
    }
    ret
}

/// redisIsSupervised: settle `supervised` (auto looks at UPSTART_JOB and
/// NOTIFY_SOCKET); true when a supervisor is really there, in which case
/// `daemonize yes` is ignored (the supervisor wants us in the foreground).
// redis: server.c redisIsSupervised
pub fn redis_is_supervised(mut mode: i32) -> bool {
    if mode == SUPERVISED_AUTODETECT {
        if std::env::var_os("UPSTART_JOB").is_some() {
            server_log(LogLevel::Verbose, "Upstart supervision detected.");
            mode = SUPERVISED_UPSTART;
        } else if std::env::var_os("NOTIFY_SOCKET").is_some() {
            server_log(LogLevel::Verbose, "Systemd supervision detected.");
            mode = SUPERVISED_SYSTEMD;
        }
    }
    let ok = match mode {
        SUPERVISED_UPSTART => {
            if std::env::var_os("UPSTART_JOB").is_none() {
                server_log(
                    LogLevel::Warning,
                    "upstart supervision requested, but UPSTART_JOB not found!",
                );
                false
            } else {
                server_log(
                    LogLevel::Notice,
                    "supervised by upstart, will stop to signal readiness.",
                );
                // SAFETY: stopping ourselves; upstart continues us.
                unsafe { libc::raise(libc::SIGSTOP) };
                std::env::remove_var("UPSTART_JOB");
                true
            }
        }
        SUPERVISED_SYSTEMD => {
            if redis_communicate_systemd("STATUS=Redis is loading...\n") <= 0 {
                false
            } else {
                server_log(LogLevel::Notice, "Supervised by systemd. Please make sure you set appropriate values for TimeoutStartSec and TimeoutStopSec in your service unit.");
                true
            }
        }
        _ => false,
    };
    if ok {
        SUPERVISED_MODE.store(mode, std::sync::atomic::Ordering::Relaxed);
    }
    ok
}

/// daemonize: fork, the parent exits at once (so `redis-lite redis.conf`
/// with `daemonize yes` returns to the shell), the child starts a new
/// session and points stdin/stdout/stderr at /dev/null. With no logfile
/// the log lines then go nowhere, as in Redis.
// redis: server.c daemonize
pub fn daemonize() {
    // SAFETY: called before any other thread exists (the lazy-free thread
    // starts with the Server); the parent only exits.
    unsafe {
        if libc::fork() != 0 {
            libc::_exit(0);
        }
        libc::setsid();
        let fd = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR, 0);
        if fd != -1 {
            libc::dup2(fd, libc::STDIN_FILENO);
            libc::dup2(fd, libc::STDOUT_FILENO);
            libc::dup2(fd, libc::STDERR_FILENO);
            if fd > libc::STDERR_FILENO {
                libc::close(fd);
            }
        }
    }
    crate::log::set_daemonized();
}

/// createPidFile: best effort, `<pid>\n`; remembered for the shutdown.
// redis: server.c createPidFile
pub fn create_pid_file(pidfile: &str, daemon: bool) {
    let path = if pidfile.is_empty() {
        CONFIG_DEFAULT_PID_FILE
    } else {
        pidfile
    };
    let _ = std::fs::write(path, format!("{}\n", std::process::id()));
    crate::shutdown::set_pidfile(path, daemon && supervised_mode() == SUPERVISED_NONE);
}

/// redisAsciiArt: the logo (with the " PID: " line Redis's test suite
/// waits for) when always-show-logo is set or the log is a terminal;
/// otherwise one "Running mode" line.
pub fn redis_ascii_art(srv: &Server) {
    use std::io::IsTerminal;
    let port = srv.config.port;
    let mode = if srv.config.cluster_enabled {
        "cluster"
    } else {
        "standalone"
    };
    let show = srv.config.always_show_logo
        || (srv.config.logfile.is_empty() && std::io::stdout().is_terminal());
    if !show {
        server_log(
            LogLevel::Notice,
            &format!("Running mode={mode}, port={port}."),
        );
        return;
    }
    let pid = std::process::id();
    let v = REDIS_VERSION;
    let logo = format!(
        concat!(
            "                _._                                                  \n",
            "           _.-``__ ''-._                                             \n",
            "      _.-``    `.  `_.  ''-._           Redis {v} (00000000/0) 64 bit\n",
            "  .-`` .-```.  ```\\/    _.,_ ''-._                                  \n",
            " (    '      ,       .-`  | `,    )     Running in standalone mode\n",
            " |`-._`-...-` __...-.``-._|'` _.-'|     Port: {port}\n",
            " |    `-._   `._    /     _.-'    |     PID: {pid}\n",
            "  `-._    `-._  `-./  _.-'    _.-'                                   \n",
            " |`-._`-._    `-.__.-'    _.-'_.-'|                                  \n",
            " |    `-._`-._        _.-'_.-'    |           https://redis.io       \n",
            "  `-._    `-._`-.__.-'_.-'    _.-'                                   \n",
            " |`-._`-._    `-.__.-'    _.-'_.-'|                                  \n",
            " |    `-._`-._        _.-'_.-'    |                                  \n",
            "  `-._    `-._`-.__.-'_.-'    _.-'                                   \n",
            "      `-._    `-.__.-'    _.-'                                       \n",
            "          `-._        _.-'                                           \n",
            "              `-.__.-'                                               \n\n"
        ),
        v = v,
        port = port,
        pid = pid
    );
    crate::log::server_log_raw(LogLevel::Notice, &logo);
}

/// checkTcpBacklogSettings: the kernel silently caps listen()'s backlog at
/// net.core.somaxconn.
pub fn check_tcp_backlog_settings(srv: &Server) {
    let Ok(text) = std::fs::read_to_string("/proc/sys/net/core/somaxconn") else {
        return;
    };
    let somaxconn: i64 = text.trim().parse().unwrap_or(0);
    let backlog = srv.config.tcp_backlog;
    if somaxconn > 0 && somaxconn < backlog {
        server_log(LogLevel::Warning, &format!("WARNING: The TCP backlog setting of {backlog} cannot be enforced because /proc/sys/net/core/somaxconn is set to the lower value of {somaxconn}."));
    }
}

/// linuxMemoryWarnings: overcommit off and THP `always` hurt a forking
/// server (see syscheck.rs). With `disable-thp yes` (the default) THP is
/// switched off for this process instead of warned about.
pub fn linux_memory_warnings(srv: &Server) {
    if let crate::syscheck::Check::Warning(msg) = crate::syscheck::check_overcommit() {
        server_log(LogLevel::Warning, &format!("WARNING {msg}"));
    }
    if let crate::syscheck::Check::Warning(msg) = crate::syscheck::check_thp_enabled() {
        let disabled = srv.config.disable_thp
            // SAFETY: PR_SET_THP_DISABLE takes plain integer arguments.
            && unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) } == 0;
        if !disabled {
            server_log(LogLevel::Warning, &format!("WARNING {msg}"));
        }
    }
    if let crate::syscheck::Check::Warning(msg) = crate::syscheck::check_xen_clocksource() {
        server_log(LogLevel::Warning, &format!("WARNING {msg}"));
    }
}

/// closeListeningSockets: stop accepting (at shutdown: a restarted server
/// can bind the port while this one finishes exiting).
pub fn close_listening_sockets(srv: &mut Server, unlink_unix_socket: bool) {
    for mut l in std::mem::take(&mut srv.listeners) {
        let _ = srv.poll.registry().deregister(&mut l);
    }
    if let Some(mut l) = srv.unix_listener.take() {
        let _ = srv.poll.registry().deregister(&mut l);
    }
    if unlink_unix_socket && !srv.config.unixsocket.is_empty() {
        server_log(LogLevel::Notice, "Removing the unix socket file.");
        if let Err(e) = std::fs::remove_file(&srv.config.unixsocket) {
            server_log(
                LogLevel::Warning,
                &format!(
                    "Error removing the unix socket file: {}",
                    crate::config::strerror(&e)
                ),
            );
        }
    }
}
