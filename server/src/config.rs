//! Configuration: the parameter registry, redis.conf parsing, and CONFIG
//! GET / SET / RESETSTAT / REWRITE / HELP (Redis's config.c).
//!
//! Design, as in Redis 7.0:
//! * ONE static table, `CONFIGS`, lists every parameter Redis 7.0.15 knows:
//!   its name, its old alias (`slave-priority`, `hash-max-ziplist-entries`),
//!   flags (immutable, protected, hidden, multi-argument) and its type with
//!   the default and the bounds. Redis's `standardConfig static_configs[]`.
//! * The value of every parameter lives in `Config::values`, one `Value` per
//!   table row, so CONFIG GET returns exactly what CONFIG SET stored (after
//!   Redis's normalisation: memory as bytes, bools yes/no, enums lower-case).
//! * The values the server READS live in typed fields (`port`, `hz`,
//!   `maxmemory`...). They are a mirror refreshed by `Config::sync_typed()`
//!   after every load or CONFIG SET: read them freely, never write them; to
//!   change a parameter go through `Config::set_from_str`.
//! * Type behaviour (parse, print, rewrite) is one `match` per type below,
//!   the counterpart of Redis's boolConfigSet / numericConfigSet /
//!   enumConfigSet ... A breakpoint in `parse_value` sees every CONFIG SET
//!   and every redis.conf line.
//!
//! Differences from Redis, on purpose:
//! * `enable-debug-command` defaults to `local` (Redis: `no`), so DEBUG works
//!   from the loopback in workshops.
//! * Settings of features redis-lite lacks (TLS, cluster, replication, AOF)
//!   are accepted and stored, so configs written for Redis load unchanged.
//! * CONFIG GET with patterns answers in table order; Redis answers in the
//!   order of a randomly seeded hash table, so no client can rely on it.

use std::collections::HashMap;
use std::io;
use std::sync::OnceLock;

use crate::log::{server_log, LogLevel};
use crate::networking::Client;
use crate::server::{Server, REDIS_VERSION};

// ---------------------------------------------------------------------------
// Public types the server reads
// ---------------------------------------------------------------------------

/// enable-debug-command / enable-protected-configs / enable-module-command
/// (PROTECTED_ACTION_ALLOWED_*): never, always, or from a local connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProtectedAction {
    No,
    Yes,
    Local,
}

/// maxmemory-policy (MAXMEMORY_*), in Redis's enum order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaxmemoryPolicy {
    VolatileLru,
    VolatileLfu,
    VolatileRandom,
    VolatileTtl,
    AllkeysLru,
    AllkeysLfu,
    AllkeysRandom,
    NoEviction,
}

impl MaxmemoryPolicy {
    /// The name CONFIG GET and INFO print.
    pub fn name(self) -> &'static str {
        MAXMEMORY_POLICY_ENUM[self as usize].0
    }
}

/// One class of client-output-buffer-limit (clientBufferLimitsConfig).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ClientBufferLimit {
    pub hard_limit_bytes: u64,
    pub soft_limit_bytes: u64,
    pub soft_limit_seconds: i64,
}

/// Client classes with an output buffer limit, in CLIENT_TYPE_* order.
pub const CLIENT_TYPE_NORMAL: usize = 0;
pub const CLIENT_TYPE_SLAVE: usize = 1;
pub const CLIENT_TYPE_PUBSUB: usize = 2;

/// clientBufferLimitsDefaults: normal unlimited; replicas 256mb hard / 64mb
/// for 60 s; pub/sub 32mb hard / 8mb for 60 s.
pub const CLIENT_BUFFER_LIMITS_DEFAULTS: [ClientBufferLimit; 3] = [
    ClientBufferLimit {
        hard_limit_bytes: 0,
        soft_limit_bytes: 0,
        soft_limit_seconds: 0,
    },
    ClientBufferLimit {
        hard_limit_bytes: 256 << 20,
        soft_limit_bytes: 64 << 20,
        soft_limit_seconds: 60,
    },
    ClientBufferLimit {
        hard_limit_bytes: 32 << 20,
        soft_limit_bytes: 8 << 20,
        soft_limit_seconds: 60,
    },
];

// notify-keyspace-events classes (server.h NOTIFY_*), one bit per letter.
pub const NOTIFY_KEYSPACE: i32 = 1 << 0; // K
pub const NOTIFY_KEYEVENT: i32 = 1 << 1; // E
pub const NOTIFY_GENERIC: i32 = 1 << 2; // g
pub const NOTIFY_STRING: i32 = 1 << 3; // $
pub const NOTIFY_LIST: i32 = 1 << 4; // l
pub const NOTIFY_SET: i32 = 1 << 5; // s
pub const NOTIFY_HASH: i32 = 1 << 6; // h
pub const NOTIFY_ZSET: i32 = 1 << 7; // z
pub const NOTIFY_EXPIRED: i32 = 1 << 8; // x
pub const NOTIFY_EVICTED: i32 = 1 << 9; // e
pub const NOTIFY_STREAM: i32 = 1 << 10; // t
pub const NOTIFY_KEY_MISS: i32 = 1 << 11; // m (not part of A)
pub const NOTIFY_LOADED: i32 = 1 << 12; // module only, no letter
pub const NOTIFY_MODULE: i32 = 1 << 13; // d
pub const NOTIFY_NEW: i32 = 1 << 14; // n (not part of A)
/// `A`: every type class, but not m (key miss) nor n (new key).
pub const NOTIFY_ALL: i32 = NOTIFY_GENERIC
    | NOTIFY_STRING
    | NOTIFY_LIST
    | NOTIFY_SET
    | NOTIFY_HASH
    | NOTIFY_ZSET
    | NOTIFY_EXPIRED
    | NOTIFY_EVICTED
    | NOTIFY_STREAM
    | NOTIFY_MODULE;

/// CONFIG_BINDADDR_MAX: at most 16 bind addresses.
pub const CONFIG_BINDADDR_MAX: usize = 16;

/// redis-lite's version banner fields (`redis-server --version`); the build
/// id is fixed because there is no build system stamping one.
pub const REDIS_BUILD_ID: &str = "0000000000000000";

/// The configuration: every parameter's value, plus typed mirrors of the
/// ones the server reads (see the design note at the top of the file).
#[derive(Clone, Debug)]
pub struct Config {
    /// One value per row of `CONFIGS` (the source of truth).
    values: Vec<Value>,

    // ---- typed mirrors, refreshed by sync_typed() ----
    pub port: u16,
    pub bind: Vec<String>,
    /// configured hz, already clamped to CONFIG_MIN_HZ..CONFIG_MAX_HZ.
    pub hz: i64,
    pub dynamic_hz: bool,
    pub maxclients: u64,
    pub databases: i64,
    pub proto_max_bulk_len: i64,
    pub client_query_buffer_limit: u64,
    pub enable_debug_command: ProtectedAction,
    pub enable_protected_configs: ProtectedAction,
    pub enable_module_command: ProtectedAction,
    pub activerehashing: bool,
    pub logfile: String,
    pub loglevel: LogLevel,
    pub daemonize: bool,
    /// "" = none given (a daemon then writes `/var/run/redis_<port>.pid`).
    pub pidfile: String,
    /// SUPERVISED_*: 0 no, 1 upstart, 2 systemd, 3 auto.
    pub supervised: i32,
    /// SHUTDOWN_* flags a SIGINT / SIGTERM shuts down with (0 = default).
    pub shutdown_on_sigint: i32,
    pub shutdown_on_sigterm: i32,
    /// "" = no unix socket.
    pub unixsocket: String,
    /// cluster-enabled (immutable): the server is a cluster node.
    pub cluster_enabled: bool,
    /// cluster-config-file: where the node keeps its view (nodes.conf).
    pub cluster_config_file: String,
    /// cluster-port: the bus port; 0 = port + CLUSTER_PORT_INCR.
    pub cluster_port: u16,
    /// cluster-node-timeout in ms.
    pub cluster_node_timeout: i64,
    pub cluster_require_full_coverage: bool,
    pub cluster_allow_reads_when_down: bool,
    pub cluster_allow_pubsubshard_when_down: bool,
    /// cluster-announce-ip / -hostname / -port / -bus-port ("" or 0: none).
    pub cluster_announce_ip: String,
    pub cluster_announce_hostname: String,
    pub cluster_announce_port: u16,
    pub cluster_announce_bus_port: u16,
    /// cluster-preferred-endpoint-type: 0 ip, 1 hostname, 2 unknown-endpoint.
    pub cluster_preferred_endpoint_type: i32,
    pub unixsocketperm: u32,
    pub disable_thp: bool,
    pub protected_mode: bool,
    /// "" means no password (requirepass unset).
    pub requirepass: String,
    pub timeout: i64,
    pub tcp_keepalive: i64,
    pub tcp_backlog: i64,
    pub slowlog_log_slower_than: i64,
    pub slowlog_max_len: i64,
    pub latency_monitor_threshold: i64,
    pub latency_tracking: bool,
    pub latency_tracking_info_percentiles: Vec<f64>,
    pub lazyfree_lazy_eviction: bool,
    pub lazyfree_lazy_expire: bool,
    pub lazyfree_lazy_server_del: bool,
    pub lazyfree_lazy_user_del: bool,
    pub lazyfree_lazy_user_flush: bool,
    pub active_expire_effort: i64,
    pub maxmemory: u64,
    /// maxmemory-clients: bytes, or a percentage of maxmemory stored as
    /// its negative (-5 is 5%), 0 = no client eviction (client_eviction.rs).
    pub maxmemory_clients: i64,
    pub maxmemory_policy: MaxmemoryPolicy,
    pub maxmemory_samples: i64,
    pub maxmemory_eviction_tenacity: i64,
    pub lfu_log_factor: i64,
    pub lfu_decay_time: i64,
    pub list_max_listpack_size: i64,
    pub list_compress_depth: i64,
    pub set_max_intset_entries: i64,
    pub hash_max_listpack_entries: i64,
    pub hash_max_listpack_value: i64,
    pub zset_max_listpack_entries: i64,
    pub zset_max_listpack_value: i64,
    pub stream_node_max_bytes: i64,
    pub stream_node_max_entries: i64,
    pub hll_sparse_max_bytes: i64,
    pub notify_keyspace_events: i32,
    pub client_output_buffer_limit: [ClientBufferLimit; 3],
    pub busy_reply_threshold: i64,
    pub tracking_table_max_keys: i64,
    pub acllog_max_len: i64,
    /// aclfile ("" = none) and acl-pubsub-default (true: allchannels).
    pub aclfile: String,
    pub acl_pubsub_default_allchannels: bool,
    /// always-show-logo: print the ASCII logo at start-up (lib.rs).
    pub always_show_logo: bool,
    /// The `user` lines of redis.conf, as split arguments, in order; the
    /// users are created once the server starts (acl.rs,
    /// ACLLoadUsersAtStartup).
    pub user_lines: Vec<Vec<String>>,
    /// The `rename-command old new` lines, in order (new "" removes the
    /// command); applied to the command table when the server starts.
    pub renamed_commands: Vec<(String, String)>,
    pub repl_backlog_size: i64,
    /// min-replicas-to-write / min-replicas-max-lag (read on every write).
    pub repl_min_slaves_to_write: i64,
    pub repl_min_slaves_max_lag: i64,
    /// save points: (seconds, changes).
    pub save_params: Vec<(i64, i64)>,
    pub appendonly: bool,
    pub dbfilename: String,
}

// ---------------------------------------------------------------------------
// The registry (config.c static_configs[])
// ---------------------------------------------------------------------------

// Parameter flags (config.c *_CONFIG).
/// CONFIG SET refuses it: "can't set immutable config".
pub const IMMUTABLE_CONFIG: u32 = 1 << 0;
/// Settable only when enable-protected-configs allows the client.
pub const PROTECTED_CONFIG: u32 = 1 << 1;
/// Left out of pattern matches; CONFIG GET needs its exact name.
pub const HIDDEN_CONFIG: u32 = 1 << 2;
/// The value is several space-separated words (`save 900 1 300 10`).
pub const MULTI_ARG_CONFIG: u32 = 1 << 3;
/// Holds a secret (Redis redacts it from SLOWLOG / MONITOR).
pub const SENSITIVE_CONFIG: u32 = 1 << 4;
/// CONFIG SET refuses it with -LOADING while a dataset loads.
pub const DENY_LOADING_CONFIG: u32 = 1 << 5;
const MODIFIABLE_CONFIG: u32 = 0;
const IMM: u32 = IMMUTABLE_CONFIG;

// Numeric flags (config.c *_CONFIG for numericConfigData).
/// Accepts 1gb / 100mb / 2k; printed in bytes.
const MEMORY_CONFIG: u8 = 1 << 0;
/// Also accepts `N%`, stored as -N.
const PERCENT_CONFIG: u8 = 1 << 1;
/// Parsed and printed in octal (unixsocketperm).
const OCTAL_CONFIG: u8 = 1 << 2;

/// The C limits the bounds are written with.
const INT_MAX: i64 = i32::MAX as i64;
const INT_MIN: i64 = i32::MIN as i64;
const UINT_MAX: i64 = u32::MAX as i64;
const LONG_MAX: i64 = i64::MAX;
/// ULLONG_MAX stored in a `long long` bound, as C does: -1.
const ULLONG_MAX: i64 = -1;

/// A string parameter's validity check (config.c is_valid_fn).
pub type Validator = fn(&str) -> Result<(), String>;

/// How a parameter parses, prints and rewrites its value.
#[derive(Debug)]
pub enum Kind {
    Bool {
        default: bool,
    },
    /// A number. `unsigned` marks the C types Redis bound-checks as unsigned
    /// (unsigned int, unsigned long long, size_t).
    Num {
        lower: i64,
        upper: i64,
        default: i64,
        unsigned: bool,
        flags: u8,
    },
    /// Names and values (several names may share a value: oom-score-adj's
    /// yes/relative). `bitflags`: several names at once (shutdown-on-sigint).
    Enum {
        values: &'static [(&'static str, i32)],
        default: i32,
        bitflags: bool,
    },
    /// `null_default`: an unset value (None) prints as "" but is left out of
    /// CONFIG REWRITE (EMPTY_STRING_IS_NULL); `check` validates a new value.
    Str {
        default: Option<&'static str>,
        empty_is_null: bool,
        check: Option<Validator>,
    },
    Special(Special),
}

/// The parameters with their own parser (createSpecialConfig).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    Dir,
    Save,
    ClientOutputBufferLimit,
    OomScoreAdjValues,
    NotifyKeyspaceEvents,
    Bind,
    ReplicaOf,
    LatencyTrackingInfoPercentiles,
}

/// One row of the registry (standardConfig).
#[derive(Debug)]
pub struct StandardConfig {
    pub name: &'static str,
    pub alias: Option<&'static str>,
    pub flags: u32,
    pub kind: Kind,
}

/// A stored value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Bool(bool),
    Num(i64),
    Enum(i32),
    /// None: unset (NULL in Redis).
    Str(Option<String>),
    Save(Vec<(i64, i64)>),
    ObufLimits([ClientBufferLimit; 3]),
    Oom([i32; 3]),
    Notify(i32),
    Bind(Vec<String>),
    ReplicaOf(Option<(String, i64)>),
    Percentiles(Vec<f64>),
    /// `dir` lives in the process: the current working directory.
    Dir,
}

const fn boolc(
    name: &'static str,
    alias: Option<&'static str>,
    flags: u32,
    default: bool,
) -> StandardConfig {
    StandardConfig {
        name,
        alias,
        flags,
        kind: Kind::Bool { default },
    }
}

#[allow(clippy::too_many_arguments)]
const fn numc(
    name: &'static str,
    alias: Option<&'static str>,
    flags: u32,
    lower: i64,
    upper: i64,
    default: i64,
    unsigned: bool,
    nflags: u8,
) -> StandardConfig {
    StandardConfig {
        name,
        alias,
        flags,
        kind: Kind::Num {
            lower,
            upper,
            default,
            unsigned,
            flags: nflags,
        },
    }
}

const fn enumc(
    name: &'static str,
    flags: u32,
    values: &'static [(&'static str, i32)],
    default: i32,
) -> StandardConfig {
    StandardConfig {
        name,
        alias: None,
        flags,
        kind: Kind::Enum {
            values,
            default,
            bitflags: false,
        },
    }
}

const fn strc(
    name: &'static str,
    alias: Option<&'static str>,
    flags: u32,
    default: Option<&'static str>,
    empty_is_null: bool,
    check: Option<Validator>,
) -> StandardConfig {
    StandardConfig {
        name,
        alias,
        flags,
        kind: Kind::Str {
            default,
            empty_is_null,
            check,
        },
    }
}

const fn special(
    name: &'static str,
    alias: Option<&'static str>,
    flags: u32,
    s: Special,
) -> StandardConfig {
    StandardConfig {
        name,
        alias,
        flags,
        kind: Kind::Special(s),
    }
}

pub const MAXMEMORY_POLICY_ENUM: &[(&str, i32)] = &[
    ("volatile-lru", 0),
    ("volatile-lfu", 1),
    ("volatile-random", 2),
    ("volatile-ttl", 3),
    ("allkeys-lru", 4),
    ("allkeys-lfu", 5),
    ("allkeys-random", 6),
    ("noeviction", 7),
];
const SYSLOG_FACILITY_ENUM: &[(&str, i32)] = &[
    ("user", 8),
    ("local0", 128),
    ("local1", 136),
    ("local2", 144),
    ("local3", 152),
    ("local4", 160),
    ("local5", 168),
    ("local6", 176),
    ("local7", 184),
];
/// In LogLevel order: debug, verbose, notice, warning.
const LOGLEVEL_ENUM: &[(&str, i32)] =
    &[("debug", 0), ("verbose", 1), ("notice", 2), ("warning", 3)];
const SUPERVISED_ENUM: &[(&str, i32)] = &[("upstart", 1), ("systemd", 2), ("auto", 3), ("no", 0)];
const AOF_FSYNC_ENUM: &[(&str, i32)] = &[("everysec", 2), ("always", 1), ("no", 0)];
const REPL_DISKLESS_LOAD_ENUM: &[(&str, i32)] =
    &[("disabled", 0), ("on-empty-db", 1), ("swapdb", 2)];
const TLS_AUTH_CLIENTS_ENUM: &[(&str, i32)] = &[("no", 0), ("yes", 1), ("optional", 2)];
const OOM_SCORE_ADJ_ENUM: &[(&str, i32)] =
    &[("no", 0), ("yes", 1), ("relative", 1), ("absolute", 2)];
const ACL_PUBSUB_DEFAULT_ENUM: &[(&str, i32)] = &[("allchannels", 1), ("resetchannels", 0)];
const SANITIZE_DUMP_PAYLOAD_ENUM: &[(&str, i32)] = &[("no", 0), ("yes", 1), ("clients", 2)];
/// In ProtectedAction order.
const PROTECTED_ACTION_ENUM: &[(&str, i32)] = &[("no", 0), ("yes", 1), ("local", 2)];
const CLUSTER_ENDPOINT_TYPE_ENUM: &[(&str, i32)] =
    &[("ip", 0), ("hostname", 1), ("unknown-endpoint", 2)];
const PROPAGATION_ERROR_BEHAVIOR_ENUM: &[(&str, i32)] =
    &[("ignore", 0), ("panic", 1), ("panic-on-replicas", 2)];
/// SHUTDOWN_* flags for shutdown-on-sigint / shutdown-on-sigterm.
const SHUTDOWN_ON_SIG_ENUM: &[(&str, i32)] = &[
    ("default", 0),
    ("save", 1),
    ("nosave", 2),
    ("now", 4),
    ("force", 8),
];
const SHUTDOWN_SAVE: i32 = 1;
const SHUTDOWN_NOSAVE: i32 = 2;

const fn shutdown_on_sig(name: &'static str) -> StandardConfig {
    StandardConfig {
        name,
        alias: None,
        flags: MULTI_ARG_CONFIG,
        kind: Kind::Enum {
            values: SHUTDOWN_ON_SIG_ENUM,
            default: 0,
            bitflags: true,
        },
    }
}

/// CONFIG_DEFAULT_PROC_TITLE_TEMPLATE.
const PROC_TITLE_TEMPLATE_DEFAULT: &str = "{title} {listen-addr} {server-mode}";

/// Every parameter of Redis 7.0.15, grouped by type as config.c lists them.
#[rustfmt::skip]
pub static CONFIGS: &[StandardConfig] = &[
    // ---- bool ----
    boolc("rdbchecksum", None, IMM, true),
    boolc("daemonize", None, IMM, false),
    boolc("io-threads-do-reads", None, IMM, false),
    boolc("always-show-logo", None, IMM, false),
    boolc("protected-mode", None, MODIFIABLE_CONFIG, true),
    boolc("rdbcompression", None, MODIFIABLE_CONFIG, true),
    boolc("rdb-del-sync-files", None, MODIFIABLE_CONFIG, false),
    boolc("activerehashing", None, MODIFIABLE_CONFIG, true),
    boolc("stop-writes-on-bgsave-error", None, MODIFIABLE_CONFIG, true),
    boolc("set-proc-title", None, IMM, true),
    boolc("dynamic-hz", None, MODIFIABLE_CONFIG, true),
    boolc("lazyfree-lazy-eviction", None, MODIFIABLE_CONFIG, false),
    boolc("lazyfree-lazy-expire", None, MODIFIABLE_CONFIG, false),
    boolc("lazyfree-lazy-server-del", None, MODIFIABLE_CONFIG, false),
    boolc("lazyfree-lazy-user-del", None, MODIFIABLE_CONFIG, false),
    boolc("lazyfree-lazy-user-flush", None, MODIFIABLE_CONFIG, false),
    boolc("repl-disable-tcp-nodelay", None, MODIFIABLE_CONFIG, false),
    boolc("repl-diskless-sync", None, MODIFIABLE_CONFIG, true),
    boolc("aof-rewrite-incremental-fsync", None, MODIFIABLE_CONFIG, true),
    boolc("no-appendfsync-on-rewrite", None, MODIFIABLE_CONFIG, false),
    boolc("cluster-require-full-coverage", None, MODIFIABLE_CONFIG, true),
    boolc("rdb-save-incremental-fsync", None, MODIFIABLE_CONFIG, true),
    boolc("aof-load-truncated", None, MODIFIABLE_CONFIG, true),
    boolc("aof-use-rdb-preamble", None, MODIFIABLE_CONFIG, true),
    boolc("aof-timestamp-enabled", None, MODIFIABLE_CONFIG, false),
    boolc("cluster-replica-no-failover", Some("cluster-slave-no-failover"), MODIFIABLE_CONFIG, false),
    boolc("replica-lazy-flush", Some("slave-lazy-flush"), MODIFIABLE_CONFIG, false),
    boolc("replica-serve-stale-data", Some("slave-serve-stale-data"), MODIFIABLE_CONFIG, true),
    boolc("replica-read-only", Some("slave-read-only"), MODIFIABLE_CONFIG, true),
    boolc("replica-ignore-maxmemory", Some("slave-ignore-maxmemory"), MODIFIABLE_CONFIG, true),
    boolc("jemalloc-bg-thread", None, MODIFIABLE_CONFIG, true),
    boolc("activedefrag", None, MODIFIABLE_CONFIG, false),
    boolc("syslog-enabled", None, IMM, false),
    boolc("cluster-enabled", None, IMM, false),
    boolc("appendonly", None, DENY_LOADING_CONFIG, false),
    boolc("cluster-allow-reads-when-down", None, MODIFIABLE_CONFIG, false),
    boolc("cluster-allow-pubsubshard-when-down", None, MODIFIABLE_CONFIG, true),
    boolc("crash-log-enabled", None, MODIFIABLE_CONFIG, true),
    boolc("crash-memcheck-enabled", None, MODIFIABLE_CONFIG, true),
    boolc("use-exit-on-panic", None, HIDDEN_CONFIG, false),
    boolc("lua-enable-deprecated-api", None, IMM | HIDDEN_CONFIG, false),
    boolc("disable-thp", None, IMM, true),
    boolc("cluster-allow-replica-migration", None, MODIFIABLE_CONFIG, true),
    boolc("replica-announced", None, MODIFIABLE_CONFIG, true),
    boolc("latency-tracking", None, MODIFIABLE_CONFIG, true),
    boolc("aof-disable-auto-gc", None, MODIFIABLE_CONFIG, false),
    boolc("replica-ignore-disk-write-errors", None, MODIFIABLE_CONFIG, false),
    // ---- string ----
    strc("aclfile", None, IMM, Some(""), false, None),
    strc("unixsocket", None, IMM, None, true, None),
    strc("pidfile", None, IMM, None, true, None),
    strc("replica-announce-ip", Some("slave-announce-ip"), MODIFIABLE_CONFIG, None, true, None),
    strc("masteruser", None, SENSITIVE_CONFIG, None, true, None),
    strc("cluster-announce-ip", None, MODIFIABLE_CONFIG, None, true, None),
    strc("cluster-config-file", None, IMM, Some("nodes.conf"), false, None),
    strc("cluster-announce-hostname", None, MODIFIABLE_CONFIG, None, true, Some(is_valid_announced_hostname)),
    strc("syslog-ident", None, IMM, Some("redis"), false, None),
    strc("dbfilename", None, PROTECTED_CONFIG, Some("dump.rdb"), false, Some(is_valid_dbfilename)),
    strc("appendfilename", None, IMM, Some("appendonly.aof"), false, Some(is_valid_aof_filename)),
    strc("appenddirname", None, IMM, Some("appendonlydir"), false, Some(is_valid_aof_dirname)),
    strc("server_cpulist", None, IMM, None, true, None),
    strc("bio_cpulist", None, IMM, None, true, None),
    strc("aof_rewrite_cpulist", None, IMM, None, true, None),
    strc("bgsave_cpulist", None, IMM, None, true, None),
    strc("ignore-warnings", None, MODIFIABLE_CONFIG, Some(""), false, None),
    strc("proc-title-template", None, MODIFIABLE_CONFIG, Some(PROC_TITLE_TEMPLATE_DEFAULT), false, Some(is_valid_proc_title_template)),
    strc("bind-source-addr", None, MODIFIABLE_CONFIG, None, true, None),
    strc("logfile", None, IMM, Some(""), false, None),
    strc("masterauth", None, SENSITIVE_CONFIG, None, true, None),
    strc("requirepass", None, SENSITIVE_CONFIG, None, true, None),
    // ---- enum ----
    enumc("supervised", IMM, SUPERVISED_ENUM, 0),
    enumc("syslog-facility", IMM, SYSLOG_FACILITY_ENUM, 128),
    enumc("repl-diskless-load", DENY_LOADING_CONFIG, REPL_DISKLESS_LOAD_ENUM, 0),
    enumc("loglevel", MODIFIABLE_CONFIG, LOGLEVEL_ENUM, 2),
    enumc("maxmemory-policy", MODIFIABLE_CONFIG, MAXMEMORY_POLICY_ENUM, 7),
    enumc("appendfsync", MODIFIABLE_CONFIG, AOF_FSYNC_ENUM, 2),
    enumc("oom-score-adj", MODIFIABLE_CONFIG, OOM_SCORE_ADJ_ENUM, 0),
    enumc("acl-pubsub-default", MODIFIABLE_CONFIG, ACL_PUBSUB_DEFAULT_ENUM, 0),
    enumc("sanitize-dump-payload", MODIFIABLE_CONFIG, SANITIZE_DUMP_PAYLOAD_ENUM, 0),
    enumc("enable-protected-configs", IMM, PROTECTED_ACTION_ENUM, 0),
    // redis-lite: `local` (Redis: `no`), see the file's design note.
    enumc("enable-debug-command", IMM, PROTECTED_ACTION_ENUM, 2),
    enumc("enable-module-command", IMM, PROTECTED_ACTION_ENUM, 0),
    enumc("cluster-preferred-endpoint-type", MODIFIABLE_CONFIG, CLUSTER_ENDPOINT_TYPE_ENUM, 0),
    enumc("propagation-error-behavior", MODIFIABLE_CONFIG, PROPAGATION_ERROR_BEHAVIOR_ENUM, 0),
    shutdown_on_sig("shutdown-on-sigint"),
    shutdown_on_sig("shutdown-on-sigterm"),
    // ---- int ----
    numc("databases", None, IMM, 1, INT_MAX, 16, false, 0),
    numc("port", None, MODIFIABLE_CONFIG, 0, 65535, 6379, false, 0),
    numc("io-threads", None, IMM, 1, 128, 1, false, 0),
    numc("auto-aof-rewrite-percentage", None, MODIFIABLE_CONFIG, 0, INT_MAX, 100, false, 0),
    numc("cluster-replica-validity-factor", Some("cluster-slave-validity-factor"), MODIFIABLE_CONFIG, 0, INT_MAX, 10, false, 0),
    numc("list-max-listpack-size", Some("list-max-ziplist-size"), MODIFIABLE_CONFIG, INT_MIN, INT_MAX, -2, false, 0),
    numc("tcp-keepalive", None, MODIFIABLE_CONFIG, 0, INT_MAX, 300, false, 0),
    numc("cluster-migration-barrier", None, MODIFIABLE_CONFIG, 0, INT_MAX, 1, false, 0),
    numc("active-defrag-cycle-min", None, MODIFIABLE_CONFIG, 1, 99, 1, false, 0),
    numc("active-defrag-cycle-max", None, MODIFIABLE_CONFIG, 1, 99, 25, false, 0),
    numc("active-defrag-threshold-lower", None, MODIFIABLE_CONFIG, 0, 1000, 10, false, 0),
    numc("active-defrag-threshold-upper", None, MODIFIABLE_CONFIG, 0, 1000, 100, false, 0),
    numc("lfu-log-factor", None, MODIFIABLE_CONFIG, 0, INT_MAX, 10, false, 0),
    numc("lfu-decay-time", None, MODIFIABLE_CONFIG, 0, INT_MAX, 1, false, 0),
    numc("replica-priority", Some("slave-priority"), MODIFIABLE_CONFIG, 0, INT_MAX, 100, false, 0),
    numc("repl-diskless-sync-delay", None, MODIFIABLE_CONFIG, 0, INT_MAX, 5, false, 0),
    numc("maxmemory-samples", None, MODIFIABLE_CONFIG, 1, INT_MAX, 5, false, 0),
    numc("maxmemory-eviction-tenacity", None, MODIFIABLE_CONFIG, 0, 100, 10, false, 0),
    numc("timeout", None, MODIFIABLE_CONFIG, 0, INT_MAX, 0, false, 0),
    numc("replica-announce-port", Some("slave-announce-port"), MODIFIABLE_CONFIG, 0, 65535, 0, false, 0),
    numc("tcp-backlog", None, IMM, 0, INT_MAX, 511, false, 0),
    numc("cluster-port", None, IMM, 0, 65535, 0, false, 0),
    numc("cluster-announce-bus-port", None, MODIFIABLE_CONFIG, 0, 65535, 0, false, 0),
    numc("cluster-announce-port", None, MODIFIABLE_CONFIG, 0, 65535, 0, false, 0),
    numc("cluster-announce-tls-port", None, MODIFIABLE_CONFIG, 0, 65535, 0, false, 0),
    numc("repl-timeout", None, MODIFIABLE_CONFIG, 1, INT_MAX, 60, false, 0),
    numc("repl-ping-replica-period", Some("repl-ping-slave-period"), MODIFIABLE_CONFIG, 1, INT_MAX, 10, false, 0),
    numc("list-compress-depth", None, MODIFIABLE_CONFIG, 0, INT_MAX, 0, false, 0),
    numc("rdb-key-save-delay", None, HIDDEN_CONFIG, INT_MIN, INT_MAX, 0, false, 0),
    numc("key-load-delay", None, HIDDEN_CONFIG, INT_MIN, INT_MAX, 0, false, 0),
    numc("active-expire-effort", None, MODIFIABLE_CONFIG, 1, 10, 1, false, 0),
    numc("hz", None, MODIFIABLE_CONFIG, 0, INT_MAX, 10, false, 0),
    numc("min-replicas-to-write", Some("min-slaves-to-write"), MODIFIABLE_CONFIG, 0, INT_MAX, 0, false, 0),
    numc("min-replicas-max-lag", Some("min-slaves-max-lag"), MODIFIABLE_CONFIG, 0, INT_MAX, 10, false, 0),
    numc("watchdog-period", None, HIDDEN_CONFIG, 0, INT_MAX, 0, false, 0),
    numc("shutdown-timeout", None, MODIFIABLE_CONFIG, 0, INT_MAX, 10, false, 0),
    numc("repl-diskless-sync-max-replicas", None, MODIFIABLE_CONFIG, 0, INT_MAX, 0, false, 0),
    numc("socket-mark-id", None, IMM, 0, UINT_MAX, 0, true, 0),
    // ---- unsigned int ----
    numc("maxclients", None, MODIFIABLE_CONFIG, 1, UINT_MAX, 10000, true, 0),
    numc("unixsocketperm", None, IMM, 0, 0o777, 0, true, OCTAL_CONFIG),
    // ---- unsigned long (bound-checked as signed, as Redis does) ----
    numc("active-defrag-max-scan-fields", None, MODIFIABLE_CONFIG, 1, LONG_MAX, 1000, false, 0),
    numc("slowlog-max-len", None, MODIFIABLE_CONFIG, 0, LONG_MAX, 128, false, 0),
    numc("acllog-max-len", None, MODIFIABLE_CONFIG, 0, LONG_MAX, 128, false, 0),
    // ---- long long ----
    numc("busy-reply-threshold", Some("lua-time-limit"), MODIFIABLE_CONFIG, 0, LONG_MAX, 5000, false, 0),
    numc("cluster-node-timeout", None, MODIFIABLE_CONFIG, 0, LONG_MAX, 15000, false, 0),
    numc("slowlog-log-slower-than", None, MODIFIABLE_CONFIG, -1, LONG_MAX, 10000, false, 0),
    numc("latency-monitor-threshold", None, MODIFIABLE_CONFIG, 0, LONG_MAX, 0, false, 0),
    numc("proto-max-bulk-len", None, MODIFIABLE_CONFIG, 1024 * 1024, LONG_MAX, 512 * 1024 * 1024, false, MEMORY_CONFIG),
    numc("stream-node-max-entries", None, MODIFIABLE_CONFIG, 0, LONG_MAX, 100, false, 0),
    numc("repl-backlog-size", None, MODIFIABLE_CONFIG, 1, LONG_MAX, 1024 * 1024, false, MEMORY_CONFIG),
    // ---- unsigned long long ----
    numc("maxmemory", None, MODIFIABLE_CONFIG, 0, ULLONG_MAX, 0, true, MEMORY_CONFIG),
    numc("cluster-link-sendbuf-limit", None, MODIFIABLE_CONFIG, 0, ULLONG_MAX, 0, true, MEMORY_CONFIG),
    // ---- size_t ----
    numc("hash-max-listpack-entries", Some("hash-max-ziplist-entries"), MODIFIABLE_CONFIG, 0, LONG_MAX, 512, true, 0),
    numc("set-max-intset-entries", None, MODIFIABLE_CONFIG, 0, LONG_MAX, 512, true, 0),
    numc("zset-max-listpack-entries", Some("zset-max-ziplist-entries"), MODIFIABLE_CONFIG, 0, LONG_MAX, 128, true, 0),
    numc("active-defrag-ignore-bytes", None, MODIFIABLE_CONFIG, 1, LONG_MAX, 100 << 20, true, MEMORY_CONFIG),
    numc("hash-max-listpack-value", Some("hash-max-ziplist-value"), MODIFIABLE_CONFIG, 0, LONG_MAX, 64, true, MEMORY_CONFIG),
    numc("stream-node-max-bytes", None, MODIFIABLE_CONFIG, 0, LONG_MAX, 4096, true, MEMORY_CONFIG),
    numc("zset-max-listpack-value", Some("zset-max-ziplist-value"), MODIFIABLE_CONFIG, 0, LONG_MAX, 64, true, MEMORY_CONFIG),
    numc("hll-sparse-max-bytes", None, MODIFIABLE_CONFIG, 0, LONG_MAX, 3000, true, MEMORY_CONFIG),
    numc("tracking-table-max-keys", None, MODIFIABLE_CONFIG, 0, LONG_MAX, 1_000_000, true, 0),
    numc("client-query-buffer-limit", None, MODIFIABLE_CONFIG, 1024 * 1024, LONG_MAX, 1024 * 1024 * 1024, true, MEMORY_CONFIG),
    numc("maxmemory-clients", None, MODIFIABLE_CONFIG, -100, LONG_MAX, 0, false, MEMORY_CONFIG | PERCENT_CONFIG),
    // ---- time_t / off_t ----
    numc("repl-backlog-ttl", None, MODIFIABLE_CONFIG, 0, LONG_MAX, 3600, false, 0),
    numc("auto-aof-rewrite-min-size", None, MODIFIABLE_CONFIG, 0, LONG_MAX, 64 * 1024 * 1024, false, MEMORY_CONFIG),
    numc("loading-process-events-interval-bytes", None, HIDDEN_CONFIG, 1024, INT_MAX, 2 * 1024 * 1024, false, 0),
    // ---- TLS (stored only: redis-lite has no TLS) ----
    numc("tls-port", None, MODIFIABLE_CONFIG, 0, 65535, 0, false, 0),
    numc("tls-session-cache-size", None, MODIFIABLE_CONFIG, 0, INT_MAX, 20 * 1024, false, 0),
    numc("tls-session-cache-timeout", None, MODIFIABLE_CONFIG, 0, INT_MAX, 300, false, 0),
    boolc("tls-cluster", None, MODIFIABLE_CONFIG, false),
    boolc("tls-replication", None, MODIFIABLE_CONFIG, false),
    enumc("tls-auth-clients", MODIFIABLE_CONFIG, TLS_AUTH_CLIENTS_ENUM, 1),
    boolc("tls-prefer-server-ciphers", None, MODIFIABLE_CONFIG, false),
    boolc("tls-session-caching", None, MODIFIABLE_CONFIG, true),
    strc("tls-cert-file", None, MODIFIABLE_CONFIG, None, true, None),
    strc("tls-key-file", None, MODIFIABLE_CONFIG, None, true, None),
    strc("tls-key-file-pass", None, MODIFIABLE_CONFIG, None, true, None),
    strc("tls-client-cert-file", None, MODIFIABLE_CONFIG, None, true, None),
    strc("tls-client-key-file", None, MODIFIABLE_CONFIG, None, true, None),
    strc("tls-client-key-file-pass", None, MODIFIABLE_CONFIG, None, true, None),
    strc("tls-dh-params-file", None, MODIFIABLE_CONFIG, None, true, None),
    strc("tls-ca-cert-file", None, MODIFIABLE_CONFIG, None, true, None),
    strc("tls-ca-cert-dir", None, MODIFIABLE_CONFIG, None, true, None),
    strc("tls-protocols", None, MODIFIABLE_CONFIG, None, true, None),
    strc("tls-ciphers", None, MODIFIABLE_CONFIG, None, true, None),
    strc("tls-ciphersuites", None, MODIFIABLE_CONFIG, None, true, None),
    // ---- special ----
    special("dir", None, PROTECTED_CONFIG | DENY_LOADING_CONFIG, Special::Dir),
    special("save", None, MULTI_ARG_CONFIG, Special::Save),
    special("client-output-buffer-limit", None, MULTI_ARG_CONFIG, Special::ClientOutputBufferLimit),
    special("oom-score-adj-values", None, MULTI_ARG_CONFIG, Special::OomScoreAdjValues),
    special("notify-keyspace-events", None, MODIFIABLE_CONFIG, Special::NotifyKeyspaceEvents),
    special("bind", None, MULTI_ARG_CONFIG, Special::Bind),
    special("replicaof", Some("slaveof"), IMM | MULTI_ARG_CONFIG, Special::ReplicaOf),
    special("latency-tracking-info-percentiles", None, MULTI_ARG_CONFIG, Special::LatencyTrackingInfoPercentiles),
];

/// A parameter found by name: its row, and whether the name was the alias
/// (Redis registers an alias as a separate copy of the row).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConfigRef {
    pub idx: usize,
    pub alias: bool,
}

impl ConfigRef {
    /// The name this entry is registered under (alias or canonical).
    pub fn name(self) -> &'static str {
        let row = &CONFIGS[self.idx];
        if self.alias {
            row.alias.unwrap_or(row.name)
        } else {
            row.name
        }
    }
}

/// lookupConfig: case-insensitive lookup of a name or alias.
pub fn lookup_config(name: &[u8]) -> Option<ConfigRef> {
    static INDEX: OnceLock<HashMap<String, ConfigRef>> = OnceLock::new();
    let index = INDEX.get_or_init(|| {
        let mut m = HashMap::new();
        for (idx, row) in CONFIGS.iter().enumerate() {
            m.insert(row.name.to_string(), ConfigRef { idx, alias: false });
            if let Some(a) = row.alias {
                m.insert(a.to_string(), ConfigRef { idx, alias: true });
            }
        }
        m
    });
    let lower = std::str::from_utf8(name).ok()?.to_ascii_lowercase();
    index.get(&lower).copied()
}

/// Every registered name (canonical names and aliases) in table order.
fn all_names() -> impl Iterator<Item = ConfigRef> {
    CONFIGS.iter().enumerate().flat_map(|(idx, row)| {
        let main = std::iter::once(ConfigRef { idx, alias: false });
        let alias = row.alias.map(|_| ConfigRef { idx, alias: true });
        main.chain(alias)
    })
}

// ---------------------------------------------------------------------------
// Validators (config.c isValid*)
// ---------------------------------------------------------------------------

/// pathIsBaseName: no directory separators.
fn path_is_base_name(p: &str) -> bool {
    !p.contains('/') && !p.contains('\\')
}

fn is_valid_dbfilename(v: &str) -> Result<(), String> {
    if !path_is_base_name(v) {
        return Err("dbfilename can't be a path, just a filename".into());
    }
    Ok(())
}

fn is_valid_aof_filename(v: &str) -> Result<(), String> {
    if v.is_empty() {
        return Err("appendfilename can't be empty".into());
    }
    if !path_is_base_name(v) {
        return Err("appendfilename can't be a path, just a filename".into());
    }
    Ok(())
}

fn is_valid_aof_dirname(v: &str) -> Result<(), String> {
    if v.is_empty() {
        return Err("appenddirname can't be empty".into());
    }
    if !path_is_base_name(v) {
        return Err("appenddirname can't be a path, just a dirname".into());
    }
    Ok(())
}

/// NET_HOST_STR_LEN: hostnames are shorter than 256 bytes.
const NET_HOST_STR_LEN: usize = 256;

fn is_valid_announced_hostname(v: &str) -> Result<(), String> {
    if v.len() >= NET_HOST_STR_LEN {
        return Err(format!(
            "Hostnames must be less than {NET_HOST_STR_LEN} characters"
        ));
    }
    if !v
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'.')
    {
        return Err("Hostnames may only contain alphanumeric characters, hyphens or dots".into());
    }
    Ok(())
}

/// validateProcTitleTemplate: every `{var}` is known and the expansion
/// (with an empty title) is not blank. `{{` is a literal brace.
fn is_valid_proc_title_template(v: &str) -> Result<(), String> {
    const ERR: &str = "template format is invalid or contains unknown variables";
    let mut out = String::new();
    let mut rest = v;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        if after.is_empty() {
            return Err(ERR.into());
        }
        if let Some(stripped) = after.strip_prefix('{') {
            out.push('{');
            rest = stripped;
            continue;
        }
        let Some(close) = after.find('}') else {
            return Err(ERR.into());
        };
        // The values a process title would use; only emptiness matters here.
        let value = match &after[..close] {
            "title" | "server-mode" | "unixsocket" | "config-file" => "",
            "listen-addr" => "*:6379",
            "port" => "6379",
            "tls-port" => "0",
            _ => return Err(ERR.into()),
        };
        out.push_str(value);
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    if out.trim_matches(' ').is_empty() {
        return Err(ERR.into());
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Value parsing helpers (util.c)
// ---------------------------------------------------------------------------

/// memtoull: digits then an optional unit (b, k, kb, m, mb, g, gb; any
/// case). k/m/g are powers of 1000, kb/mb/gb of 1024. Like C's strtoull the
/// number saturates on overflow and the multiplication wraps; no digits at
/// all reads as 0 ("gb" is 0). None = not a memory value.
pub fn memtoull(p: &str) -> Option<u64> {
    if p.starts_with('-') {
        return None;
    }
    let digits = p.bytes().take_while(|c| c.is_ascii_digit()).count();
    let mul: u64 = match p[digits..].to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" => 1000,
        "kb" => 1024,
        "m" => 1000 * 1000,
        "mb" => 1024 * 1024,
        "g" => 1000 * 1000 * 1000,
        "gb" => 1024 * 1024 * 1024,
        _ => return None,
    };
    // buf[128] in C: longer digit strings are refused.
    if digits >= 128 {
        return None;
    }
    let val = if digits == 0 {
        0
    } else {
        p[..digits].parse::<u64>().unwrap_or(u64::MAX)
    };
    Some(val.wrapping_mul(mul))
}

/// strtoll(s, &end, base) that must consume the whole string (`*end ==
/// '\0'`): leading blanks and a sign are allowed, overflow saturates, and an
/// empty string is 0 (end == start points at the NUL).
fn strtoll_full(s: &str, base: u32) -> Option<i64> {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let ndig = body
        .bytes()
        .take_while(|c| (*c as char).is_digit(base))
        .count();
    if ndig == 0 {
        // Nothing converted: end == s, fine only when s is empty.
        return if s.is_empty() { Some(0) } else { None };
    }
    if ndig != body.len() {
        return None;
    }
    let mag = u64::from_str_radix(body, base).unwrap_or(u64::MAX);
    Some(if neg {
        if mag > i64::MAX as u64 {
            i64::MIN
        } else {
            -(mag as i64)
        }
    } else if mag > i64::MAX as u64 {
        i64::MAX
    } else {
        mag as i64
    })
}

/// yesnotoi.
fn yesnotoi(s: &str) -> Option<bool> {
    if s.eq_ignore_ascii_case("yes") {
        Some(true)
    } else if s.eq_ignore_ascii_case("no") {
        Some(false)
    } else {
        None
    }
}

/// sdssplitlen(value, " "): CONFIG SET's split of a multi-argument value.
/// Exactly one space separates; "" gives no arguments.
fn split_spaces(v: &str) -> Vec<String> {
    if v.is_empty() {
        return Vec::new();
    }
    v.split(' ').map(str::to_string).collect()
}

/// sdssplitargs on a config line: None on unbalanced quotes.
pub fn split_args(line: &str) -> Option<Vec<String>> {
    let bytes = bytes::Bytes::copy_from_slice(line.as_bytes());
    let argv = protocol::request::sdssplitargs(&bytes)?;
    Some(
        argv.iter()
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect(),
    )
}

/// sdscatrepr: a double-quoted, escaped copy of `s` (CONFIG REWRITE).
pub fn repr(s: &str) -> String {
    let mut out = String::from("\"");
    for &b in s.as_bytes() {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            7 => out.push_str("\\a"),
            8 => out.push_str("\\b"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('"');
    out
}

/// `%f` then trimDoubleString: "99.900000" -> "99.9", "50.000000" -> "50".
fn trim_double(d: f64) -> String {
    let s = format!("{d:.6}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// The text of the last OS error of an io::Error, as strerror() prints it.
pub fn strerror(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(code) => {
            // SAFETY: strerror returns a valid NUL-terminated static string.
            let p = unsafe { libc::strerror(code) };
            if p.is_null() {
                return e.to_string();
            }
            unsafe { std::ffi::CStr::from_ptr(p) }
                .to_string_lossy()
                .into_owned()
        }
        None => e.to_string(),
    }
}

// ---------------------------------------------------------------------------
// Per-type parse / print (the interface.set / interface.get of config.c)
// ---------------------------------------------------------------------------

/// numericParseString + numericBoundaryCheck.
fn parse_numeric(
    v: &str,
    lower: i64,
    upper: i64,
    unsigned: bool,
    flags: u8,
) -> Result<i64, String> {
    let mut res: Option<i64> = None;
    if flags & MEMORY_CONFIG != 0 {
        res = memtoull(v).map(|m| m as i64);
    }
    if res.is_none() && flags & PERCENT_CONFIG != 0 && v.len() > 1 && v.ends_with('%') {
        if let Some(p) = storage::util::string2ll(&v.as_bytes()[..v.len() - 1]) {
            if p >= 0 {
                res = Some(-p);
            }
        }
    }
    if res.is_none() && flags & OCTAL_CONFIG != 0 {
        res = strtoll_full(v, 8);
    }
    if res.is_none() && flags == 0 {
        res = storage::util::string2ll(v.as_bytes());
    }
    let Some(ll) = res else {
        let msg = if flags & MEMORY_CONFIG != 0 && flags & PERCENT_CONFIG != 0 {
            "argument must be a memory or percent value"
        } else if flags & MEMORY_CONFIG != 0 {
            "argument must be a memory value"
        } else if flags & OCTAL_CONFIG != 0 {
            "argument couldn't be parsed as an octal number"
        } else {
            "argument couldn't be parsed into an integer"
        };
        return Err(msg.into());
    };
    if unsigned {
        let (u, lo, hi) = (ll as u64, lower as u64, upper as u64);
        if u > hi || u < lo {
            return Err(if flags & OCTAL_CONFIG != 0 {
                format!("argument must be between {lo:o} and {hi:o} inclusive")
            } else {
                format!("argument must be between {lo} and {hi} inclusive")
            });
        }
    } else if flags & PERCENT_CONFIG != 0 && ll < 0 {
        if ll < lower {
            return Err(format!(
                "percentage argument must be less or equal to {}",
                -lower
            ));
        }
    } else if ll > upper || ll < lower {
        return Err(format!(
            "argument must be between {lower} and {upper} inclusive"
        ));
    }
    Ok(ll)
}

/// numericConfigGet.
fn format_numeric(v: i64, flags: u8) -> String {
    if flags & PERCENT_CONFIG != 0 && v < 0 {
        format!("{}%", -(v as i128))
    } else if flags & MEMORY_CONFIG != 0 {
        (v as u64).to_string()
    } else if flags & OCTAL_CONFIG != 0 {
        format!("{v:o}")
    } else {
        v.to_string()
    }
}

/// configEnumGetValue: one name, or for bitflags several names OR-ed.
fn parse_enum(values: &[(&str, i32)], args: &[String], bitflags: bool) -> Option<i32> {
    if args.is_empty() || (!bitflags && args.len() != 1) {
        return None;
    }
    let mut out = 0;
    for a in args {
        let mut matched = false;
        for (name, val) in values {
            if a.eq_ignore_ascii_case(name) {
                out |= val;
                matched = true;
            }
        }
        if !matched {
            return None;
        }
    }
    Some(out)
}

/// configEnumGetName: the first exact match, else (bitflags) the names of
/// the set bits in table order; "unknown" when nothing fits.
fn enum_name(values: &[(&str, i32)], v: i32, bitflags: bool) -> String {
    let mut names: Vec<&str> = Vec::new();
    let mut unmatched = v;
    for (name, val) in values {
        if *val == v {
            return name.to_string();
        }
        if bitflags && *val != 0 && *val == (unmatched & val) {
            names.push(name);
            unmatched &= !val;
        }
    }
    if names.is_empty() || unmatched != 0 {
        return "unknown".into();
    }
    names.join(" ")
}

/// keyspaceEventsStringToFlags: None on an unknown letter.
pub fn keyspace_events_string_to_flags(s: &str) -> Option<i32> {
    let mut flags = 0;
    for c in s.chars() {
        flags |= match c {
            'A' => NOTIFY_ALL,
            'g' => NOTIFY_GENERIC,
            '$' => NOTIFY_STRING,
            'l' => NOTIFY_LIST,
            's' => NOTIFY_SET,
            'h' => NOTIFY_HASH,
            'z' => NOTIFY_ZSET,
            'x' => NOTIFY_EXPIRED,
            'e' => NOTIFY_EVICTED,
            'K' => NOTIFY_KEYSPACE,
            'E' => NOTIFY_KEYEVENT,
            't' => NOTIFY_STREAM,
            'm' => NOTIFY_KEY_MISS,
            'd' => NOTIFY_MODULE,
            'n' => NOTIFY_NEW,
            _ => return None,
        };
    }
    Some(flags)
}

/// keyspaceEventsFlagsToString: `A` when every type class is on, else the
/// class letters; then K, E, m. (n is not printed when A is, as in Redis.)
pub fn keyspace_events_flags_to_string(flags: i32) -> String {
    let mut res = String::new();
    if flags & NOTIFY_ALL == NOTIFY_ALL {
        res.push('A');
    } else {
        for (bit, c) in [
            (NOTIFY_GENERIC, 'g'),
            (NOTIFY_STRING, '$'),
            (NOTIFY_LIST, 'l'),
            (NOTIFY_SET, 's'),
            (NOTIFY_HASH, 'h'),
            (NOTIFY_ZSET, 'z'),
            (NOTIFY_EXPIRED, 'x'),
            (NOTIFY_EVICTED, 'e'),
            (NOTIFY_STREAM, 't'),
            (NOTIFY_MODULE, 'd'),
            (NOTIFY_NEW, 'n'),
        ] {
            if flags & bit != 0 {
                res.push(c);
            }
        }
    }
    for (bit, c) in [
        (NOTIFY_KEYSPACE, 'K'),
        (NOTIFY_KEYEVENT, 'E'),
        (NOTIFY_KEY_MISS, 'm'),
    ] {
        if flags & bit != 0 {
            res.push(c);
        }
    }
    res
}

/// getClientTypeByName for output buffer classes (master is refused).
fn client_class(name: &str) -> Option<usize> {
    match name.to_ascii_lowercase().as_str() {
        "normal" => Some(CLIENT_TYPE_NORMAL),
        "slave" | "replica" => Some(CLIENT_TYPE_SLAVE),
        "pubsub" => Some(CLIENT_TYPE_PUBSUB),
        _ => None,
    }
}

const CLIENT_CLASS_NAMES: [&str; 3] = ["normal", "slave", "pubsub"];

/// How a value is being set: a redis.conf line (the first `save` line
/// replaces the defaults, later ones add) or CONFIG SET.
#[derive(Clone, Copy, PartialEq, Eq)]
enum SetMode {
    File { save_loaded: bool },
    ConfigSet,
}

/// interface.set minus the side effects: parse `args` for row `idx` into the
/// value to store. `current` is the value stored now (save, c-o-b-l and
/// bind keep parts of it). Errors are Redis's texts.
fn parse_value(
    idx: usize,
    args: &[String],
    current: &Value,
    mode: SetMode,
) -> Result<Value, String> {
    let row = &CONFIGS[idx];
    let first = args.first().map(String::as_str).unwrap_or("");
    match &row.kind {
        Kind::Bool { .. } => match yesnotoi(first) {
            Some(b) => Ok(Value::Bool(b)),
            None => Err("argument must be 'yes' or 'no'".into()),
        },
        Kind::Num {
            lower,
            upper,
            unsigned,
            flags,
            ..
        } => parse_numeric(first, *lower, *upper, *unsigned, *flags).map(Value::Num),
        Kind::Enum {
            values, bitflags, ..
        } => {
            let Some(v) = parse_enum(values, args, *bitflags) else {
                let names: Vec<&str> = values.iter().map(|(n, _)| *n).collect();
                return Err(format!(
                    "argument(s) must be one of the following: {}",
                    names.join(", ")
                ));
            };
            if *bitflags && v & SHUTDOWN_SAVE != 0 && v & SHUTDOWN_NOSAVE != 0 {
                return Err("shutdown options SAVE and NOSAVE can't be used simultaneously".into());
            }
            Ok(Value::Enum(v))
        }
        Kind::Str {
            empty_is_null,
            check,
            ..
        } => {
            if let Some(check) = check {
                check(first)?;
            }
            if *empty_is_null && first.is_empty() {
                Ok(Value::Str(None))
            } else {
                Ok(Value::Str(Some(first.to_string())))
            }
        }
        Kind::Special(s) => parse_special(*s, args, current, mode),
    }
}

fn parse_special(
    s: Special,
    args: &[String],
    current: &Value,
    mode: SetMode,
) -> Result<Value, String> {
    match s {
        Special::Dir => {
            if args.len() != 1 {
                return Err("wrong number of arguments".into());
            }
            // setConfigDirOption: chdir right away (its "value" is the cwd).
            std::env::set_current_dir(&args[0]).map_err(|e| strerror(&e))?;
            Ok(Value::Dir)
        }
        Special::Save => {
            // A single "" means "no save points": it clears the points set
            // so far, even those of earlier redis.conf lines.
            if args.len() == 1 && args[0].is_empty() {
                return Ok(Value::Save(Vec::new()));
            }
            if args.len() % 2 == 1 {
                return Err("Invalid save parameters".into());
            }
            let mut points = Vec::new();
            for pair in args.chunks(2) {
                let secs = strtoll_full(&pair[0], 10).filter(|v| *v >= 1);
                let changes = strtoll_full(&pair[1], 10).filter(|v| *v >= 0);
                match (secs, changes) {
                    (Some(s), Some(c)) => points.push((s, c as i32 as i64)),
                    _ => return Err("Invalid save parameters".into()),
                }
            }
            // While reading redis.conf the first `save` line replaces the
            // defaults and the next ones add to it.
            if let (SetMode::File { save_loaded: true }, Value::Save(old)) = (mode, current) {
                let mut all = old.clone();
                all.extend(points);
                return Ok(Value::Save(all));
            }
            Ok(Value::Save(points))
        }
        Special::ClientOutputBufferLimit => {
            if !args.len().is_multiple_of(4) {
                return Err("Wrong number of arguments in buffer limit configuration.".into());
            }
            let mut limits = match current {
                Value::ObufLimits(l) => *l,
                _ => CLIENT_BUFFER_LIMITS_DEFAULTS,
            };
            for q in args.chunks(4) {
                let Some(class) = client_class(&q[0]) else {
                    return Err(
                        "Invalid client class specified in buffer limit configuration.".into(),
                    );
                };
                let hard = memtoull(&q[1]);
                let soft = memtoull(&q[2]);
                let secs = strtoll_full(&q[3], 10)
                    .map(|v| v as i32 as i64)
                    .filter(|v| *v >= 0);
                let (Some(hard), Some(soft), Some(secs)) = (hard, soft, secs) else {
                    return Err("Error in hard, soft or soft_seconds setting in buffer limit configuration.".into());
                };
                limits[class] = ClientBufferLimit {
                    hard_limit_bytes: hard,
                    soft_limit_bytes: soft,
                    soft_limit_seconds: secs,
                };
            }
            Ok(Value::ObufLimits(limits))
        }
        Special::OomScoreAdjValues => {
            if args.len() != 3 {
                return Err("wrong number of arguments".into());
            }
            let mut v = [0i32; 3];
            for (slot, a) in v.iter_mut().zip(args) {
                match strtoll_full(a, 10) {
                    Some(n) if (-2000..=2000).contains(&n) => *slot = n as i32,
                    _ => return Err(
                        "Invalid oom-score-adj-values, elements must be between -2000 and 2000."
                            .into(),
                    ),
                }
            }
            Ok(Value::Oom(v))
        }
        Special::NotifyKeyspaceEvents => {
            if args.len() != 1 {
                return Err("wrong number of arguments".into());
            }
            match keyspace_events_string_to_flags(&args[0]) {
                Some(f) => Ok(Value::Notify(f)),
                None => Err("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.".into()),
            }
        }
        Special::Bind => {
            if args.len() > CONFIG_BINDADDR_MAX {
                return Err("Too many bind addresses specified.".into());
            }
            if args.len() == 1 && args[0].is_empty() {
                return Ok(Value::Bind(Vec::new()));
            }
            Ok(Value::Bind(args.to_vec()))
        }
        Special::ReplicaOf => {
            if args.len() != 2 {
                return Err("wrong number of arguments".into());
            }
            if args[0].eq_ignore_ascii_case("no") && args[1].eq_ignore_ascii_case("one") {
                return Ok(Value::ReplicaOf(None));
            }
            match strtoll_full(&args[1], 10) {
                Some(p) if (0..=65535).contains(&p) => {
                    Ok(Value::ReplicaOf(Some((args[0].clone(), p))))
                }
                _ => Err("Invalid master port".into()),
            }
        }
        Special::LatencyTrackingInfoPercentiles => {
            if args.len() == 1 && args[0].is_empty() {
                return Ok(Value::Percentiles(Vec::new()));
            }
            let mut out = Vec::with_capacity(args.len().min(64));
            for a in args {
                let Some(p) = storage::util::string2d(a.as_bytes()) else {
                    return Err("Invalid latency-tracking-info-percentiles parameters".into());
                };
                if !(0.0..=100.0).contains(&p) {
                    return Err("latency-tracking-info-percentiles parameters should sit between [0.0,100.0]".into());
                }
                out.push(p);
            }
            Ok(Value::Percentiles(out))
        }
    }
}

/// interface.get: the text CONFIG GET returns.
fn format_value(idx: usize, v: &Value) -> String {
    let row = &CONFIGS[idx];
    match (v, &row.kind) {
        (Value::Bool(b), _) => if *b { "yes" } else { "no" }.into(),
        (Value::Num(n), Kind::Num { flags, .. }) => format_numeric(*n, *flags),
        (Value::Num(n), _) => n.to_string(),
        (
            Value::Enum(e),
            Kind::Enum {
                values, bitflags, ..
            },
        ) => enum_name(values, *e, *bitflags),
        (Value::Enum(e), _) => e.to_string(),
        (Value::Str(s), _) => s.clone().unwrap_or_default(),
        (Value::Save(points), _) => points
            .iter()
            .map(|(s, c)| format!("{s} {c}"))
            .collect::<Vec<_>>()
            .join(" "),
        (Value::ObufLimits(l), _) => (0..3)
            .map(|j| {
                format!(
                    "{} {} {} {}",
                    CLIENT_CLASS_NAMES[j],
                    l[j].hard_limit_bytes,
                    l[j].soft_limit_bytes,
                    l[j].soft_limit_seconds
                )
            })
            .collect::<Vec<_>>()
            .join(" "),
        (Value::Oom(v), _) => format!("{} {} {}", v[0], v[1], v[2]),
        (Value::Notify(f), _) => keyspace_events_flags_to_string(*f),
        (Value::Bind(b), _) => b.join(" "),
        (Value::ReplicaOf(r), _) => match r {
            Some((h, p)) => format!("{h} {p}"),
            None => String::new(),
        },
        (Value::Percentiles(p), _) => p
            .iter()
            .map(|d| trim_double(*d))
            .collect::<Vec<_>>()
            .join(" "),
        (Value::Dir, _) => std::env::current_dir()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
    }
}

/// The value a row starts with (interface.init).
fn default_value(idx: usize) -> Value {
    match &CONFIGS[idx].kind {
        Kind::Bool { default } => Value::Bool(*default),
        Kind::Num { default, .. } => Value::Num(*default),
        Kind::Enum { default, .. } => Value::Enum(*default),
        Kind::Str { default, .. } => Value::Str(default.map(str::to_string)),
        Kind::Special(s) => match s {
            Special::Dir => Value::Dir,
            // The compiled-in save points (what a bare redis-server shows).
            Special::Save => Value::Save(vec![(3600, 1), (300, 100), (60, 10000)]),
            Special::ClientOutputBufferLimit => Value::ObufLimits(CLIENT_BUFFER_LIMITS_DEFAULTS),
            Special::OomScoreAdjValues => Value::Oom([0, 200, 800]),
            Special::NotifyKeyspaceEvents => Value::Notify(0),
            Special::Bind => Value::Bind(vec!["*".into(), "-::*".into()]),
            Special::ReplicaOf => Value::ReplicaOf(None),
            Special::LatencyTrackingInfoPercentiles => Value::Percentiles(vec![50.0, 99.0, 99.9]),
        },
    }
}

// ---------------------------------------------------------------------------
// Config: values and typed mirrors
// ---------------------------------------------------------------------------

impl Default for Config {
    fn default() -> Self {
        let values = (0..CONFIGS.len()).map(default_value).collect();
        let mut c = Config {
            values,
            port: 6379,
            bind: Vec::new(),
            hz: 10,
            dynamic_hz: true,
            maxclients: 10000,
            databases: 16,
            proto_max_bulk_len: 0,
            client_query_buffer_limit: 0,
            enable_debug_command: ProtectedAction::Local,
            enable_protected_configs: ProtectedAction::No,
            enable_module_command: ProtectedAction::No,
            activerehashing: true,
            logfile: String::new(),
            loglevel: LogLevel::Notice,
            daemonize: false,
            pidfile: String::new(),
            supervised: 0,
            shutdown_on_sigint: 0,
            shutdown_on_sigterm: 0,
            unixsocket: String::new(),
            cluster_enabled: false,
            cluster_config_file: String::new(),
            cluster_port: 0,
            cluster_node_timeout: 15000,
            cluster_require_full_coverage: true,
            cluster_allow_reads_when_down: false,
            cluster_allow_pubsubshard_when_down: true,
            cluster_announce_ip: String::new(),
            cluster_announce_hostname: String::new(),
            cluster_announce_port: 0,
            cluster_announce_bus_port: 0,
            cluster_preferred_endpoint_type: 0,
            unixsocketperm: 0,
            disable_thp: true,
            protected_mode: true,
            requirepass: String::new(),
            timeout: 0,
            tcp_keepalive: 0,
            tcp_backlog: 0,
            slowlog_log_slower_than: 0,
            slowlog_max_len: 0,
            latency_monitor_threshold: 0,
            latency_tracking: true,
            latency_tracking_info_percentiles: Vec::new(),
            lazyfree_lazy_eviction: false,
            lazyfree_lazy_expire: false,
            lazyfree_lazy_server_del: false,
            lazyfree_lazy_user_del: false,
            lazyfree_lazy_user_flush: false,
            active_expire_effort: 1,
            maxmemory: 0,
            maxmemory_clients: 0,
            maxmemory_policy: MaxmemoryPolicy::NoEviction,
            maxmemory_samples: 0,
            maxmemory_eviction_tenacity: 0,
            lfu_log_factor: 0,
            lfu_decay_time: 0,
            list_max_listpack_size: 0,
            list_compress_depth: 0,
            set_max_intset_entries: 0,
            hash_max_listpack_entries: 0,
            hash_max_listpack_value: 0,
            zset_max_listpack_entries: 0,
            zset_max_listpack_value: 0,
            stream_node_max_bytes: 0,
            stream_node_max_entries: 0,
            hll_sparse_max_bytes: 0,
            notify_keyspace_events: 0,
            client_output_buffer_limit: CLIENT_BUFFER_LIMITS_DEFAULTS,
            busy_reply_threshold: 0,
            tracking_table_max_keys: 0,
            acllog_max_len: 0,
            aclfile: String::new(),
            acl_pubsub_default_allchannels: false,
            always_show_logo: false,
            user_lines: Vec::new(),
            renamed_commands: Vec::new(),
            repl_backlog_size: 0,
            repl_min_slaves_to_write: 0,
            repl_min_slaves_max_lag: 0,
            save_params: Vec::new(),
            appendonly: false,
            dbfilename: String::new(),
        };
        c.sync_typed();
        c
    }
}

fn protected_action(v: i32) -> ProtectedAction {
    match v {
        1 => ProtectedAction::Yes,
        2 => ProtectedAction::Local,
        _ => ProtectedAction::No,
    }
}

fn loglevel_of(v: i32) -> LogLevel {
    match v {
        0 => LogLevel::Debug,
        1 => LogLevel::Verbose,
        3 => LogLevel::Warning,
        _ => LogLevel::Notice,
    }
}

fn policy_of(v: i32) -> MaxmemoryPolicy {
    use MaxmemoryPolicy::*;
    [
        VolatileLru,
        VolatileLfu,
        VolatileRandom,
        VolatileTtl,
        AllkeysLru,
        AllkeysLfu,
        AllkeysRandom,
        NoEviction,
    ]
    .get(v as usize)
    .copied()
    .unwrap_or(NoEviction)
}

impl Config {
    /// The stored value of a parameter (by canonical name or alias).
    pub fn value(&self, name: &str) -> Option<&Value> {
        lookup_config(name.as_bytes()).map(|r| &self.values[r.idx])
    }

    /// What CONFIG GET prints for `name`.
    pub fn get_string(&self, name: &str) -> Option<String> {
        lookup_config(name.as_bytes()).map(|r| format_value(r.idx, &self.values[r.idx]))
    }

    /// `replicaof` follows REPLICAOF: CONFIG GET and CONFIG REWRITE show
    /// the master this server replicates now (server.masterhost).
    pub fn set_replicaof(&mut self, v: Option<(String, i64)>) {
        if let Some(r) = lookup_config(b"replicaof") {
            self.values[r.idx] = Value::ReplicaOf(v);
        }
    }

    /// always-show-logo (read once at start-up, by redis_ascii_art).
    pub fn always_show_logo(&self) -> bool {
        self.b("always-show-logo")
    }

    fn b(&self, name: &str) -> bool {
        matches!(self.value(name), Some(Value::Bool(true)))
    }

    /// A numeric config's value, read without formatting it (0 for a
    /// name that is not numeric).
    pub fn num(&self, name: &str) -> i64 {
        match self.value(name) {
            Some(Value::Num(n)) => *n,
            _ => 0,
        }
    }

    fn e(&self, name: &str) -> i32 {
        match self.value(name) {
            Some(Value::Enum(e)) => *e,
            _ => 0,
        }
    }

    fn s(&self, name: &str) -> String {
        match self.value(name) {
            Some(Value::Str(Some(s))) => s.clone(),
            _ => String::new(),
        }
    }

    /// Refresh the typed fields from the stored values. Called after every
    /// load and every successful CONFIG SET.
    pub fn sync_typed(&mut self) {
        self.port = self.num("port") as u16;
        self.bind = match self.value("bind") {
            Some(Value::Bind(b)) => b.clone(),
            _ => Vec::new(),
        };
        self.hz = self.num("hz");
        self.dynamic_hz = self.b("dynamic-hz");
        self.maxclients = self.num("maxclients") as u64;
        self.databases = self.num("databases");
        self.proto_max_bulk_len = self.num("proto-max-bulk-len");
        self.client_query_buffer_limit = self.num("client-query-buffer-limit") as u64;
        self.enable_debug_command = protected_action(self.e("enable-debug-command"));
        self.enable_protected_configs = protected_action(self.e("enable-protected-configs"));
        self.enable_module_command = protected_action(self.e("enable-module-command"));
        self.activerehashing = self.b("activerehashing");
        self.logfile = self.s("logfile");
        self.loglevel = loglevel_of(self.e("loglevel"));
        self.daemonize = self.b("daemonize");
        self.pidfile = self.s("pidfile");
        self.supervised = self.e("supervised");
        self.shutdown_on_sigint = self.e("shutdown-on-sigint");
        self.shutdown_on_sigterm = self.e("shutdown-on-sigterm");
        self.unixsocket = self.s("unixsocket");
        self.cluster_enabled = self.b("cluster-enabled");
        self.cluster_config_file = self.s("cluster-config-file");
        self.cluster_port = self.num("cluster-port") as u16;
        self.cluster_node_timeout = self.num("cluster-node-timeout");
        self.cluster_require_full_coverage = self.b("cluster-require-full-coverage");
        self.cluster_allow_reads_when_down = self.b("cluster-allow-reads-when-down");
        self.cluster_allow_pubsubshard_when_down = self.b("cluster-allow-pubsubshard-when-down");
        self.cluster_announce_ip = self.s("cluster-announce-ip");
        self.cluster_announce_hostname = self.s("cluster-announce-hostname");
        self.cluster_announce_port = self.num("cluster-announce-port") as u16;
        self.cluster_announce_bus_port = self.num("cluster-announce-bus-port") as u16;
        self.cluster_preferred_endpoint_type = self.e("cluster-preferred-endpoint-type");
        self.unixsocketperm = self.num("unixsocketperm") as u32;
        self.disable_thp = self.b("disable-thp");
        self.protected_mode = self.b("protected-mode");
        self.requirepass = self.s("requirepass");
        self.timeout = self.num("timeout");
        self.tcp_keepalive = self.num("tcp-keepalive");
        self.tcp_backlog = self.num("tcp-backlog");
        self.slowlog_log_slower_than = self.num("slowlog-log-slower-than");
        self.slowlog_max_len = self.num("slowlog-max-len");
        self.latency_monitor_threshold = self.num("latency-monitor-threshold");
        self.latency_tracking = self.b("latency-tracking");
        self.latency_tracking_info_percentiles =
            match self.value("latency-tracking-info-percentiles") {
                Some(Value::Percentiles(p)) => p.clone(),
                _ => Vec::new(),
            };
        self.lazyfree_lazy_eviction = self.b("lazyfree-lazy-eviction");
        self.lazyfree_lazy_expire = self.b("lazyfree-lazy-expire");
        self.lazyfree_lazy_server_del = self.b("lazyfree-lazy-server-del");
        self.lazyfree_lazy_user_del = self.b("lazyfree-lazy-user-del");
        self.lazyfree_lazy_user_flush = self.b("lazyfree-lazy-user-flush");
        self.active_expire_effort = self.num("active-expire-effort");
        self.maxmemory = self.num("maxmemory") as u64;
        self.maxmemory_clients = self.num("maxmemory-clients");
        self.maxmemory_policy = policy_of(self.e("maxmemory-policy"));
        self.maxmemory_samples = self.num("maxmemory-samples");
        self.maxmemory_eviction_tenacity = self.num("maxmemory-eviction-tenacity");
        self.lfu_log_factor = self.num("lfu-log-factor");
        self.lfu_decay_time = self.num("lfu-decay-time");
        self.list_max_listpack_size = self.num("list-max-listpack-size");
        self.list_compress_depth = self.num("list-compress-depth");
        self.set_max_intset_entries = self.num("set-max-intset-entries");
        self.hash_max_listpack_entries = self.num("hash-max-listpack-entries");
        self.hash_max_listpack_value = self.num("hash-max-listpack-value");
        self.zset_max_listpack_entries = self.num("zset-max-listpack-entries");
        self.zset_max_listpack_value = self.num("zset-max-listpack-value");
        self.stream_node_max_bytes = self.num("stream-node-max-bytes");
        self.stream_node_max_entries = self.num("stream-node-max-entries");
        self.hll_sparse_max_bytes = self.num("hll-sparse-max-bytes");
        self.notify_keyspace_events = match self.value("notify-keyspace-events") {
            Some(Value::Notify(f)) => *f,
            _ => 0,
        };
        if let Some(Value::ObufLimits(l)) = self.value("client-output-buffer-limit") {
            let l = *l;
            self.client_output_buffer_limit = l;
            crate::networking::set_reply_obuf_limits(l);
        }
        self.busy_reply_threshold = self.num("busy-reply-threshold");
        self.tracking_table_max_keys = self.num("tracking-table-max-keys");
        self.acllog_max_len = self.num("acllog-max-len");
        self.aclfile = self.s("aclfile");
        self.always_show_logo = self.b("always-show-logo");
        self.acl_pubsub_default_allchannels = self.e("acl-pubsub-default") == 1;
        self.repl_backlog_size = self.num("repl-backlog-size");
        self.repl_min_slaves_to_write = self.num("min-replicas-to-write");
        self.repl_min_slaves_max_lag = self.num("min-replicas-max-lag");
        self.save_params = match self.value("save") {
            Some(Value::Save(s)) => s.clone(),
            _ => Vec::new(),
        };
        self.appendonly = self.b("appendonly");
        self.dbfilename = self.s("dbfilename");
    }

    /// Set one parameter from a CONFIG SET style value (multi-argument
    /// values are space separated), with its validation but without the
    /// server-side effects (no rebinding). For tests and internal callers.
    pub fn set_from_str(&mut self, name: &str, value: &str) -> Result<(), String> {
        let r = lookup_config(name.as_bytes()).ok_or_else(|| format!("Unknown option '{name}'"))?;
        let args = if CONFIGS[r.idx].flags & MULTI_ARG_CONFIG != 0 {
            split_spaces(value)
        } else {
            vec![value.to_string()]
        };
        let v = parse_value(r.idx, &args, &self.values[r.idx], SetMode::ConfigSet)?;
        self.values[r.idx] = v;
        self.clamp_hz();
        self.sync_typed();
        Ok(())
    }

    /// updateHZ: hz is a hint; out-of-range values are clamped, and the
    /// clamped value is what CONFIG GET shows.
    fn clamp_hz(&mut self) {
        if let Some(r) = lookup_config(b"hz") {
            if let Value::Num(h) = &mut self.values[r.idx] {
                *h = (*h).clamp(crate::server::CONFIG_MIN_HZ, crate::server::CONFIG_MAX_HZ);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Start-up: command line and redis.conf (server.c main, config.c
// loadServerConfig / loadServerConfigFromString)
// ---------------------------------------------------------------------------

/// The usage text `redis-server --help` prints (to stderr, exit 1).
const USAGE: &str = "Usage: ./redis-server [/path/to/redis.conf] [options] [-]
       ./redis-server - (read config from stdin)
       ./redis-server -v or --version
       ./redis-server -h or --help
       ./redis-server --test-memory <megabytes>
       ./redis-server --check-system

Examples:
       ./redis-server (run the server with default conf)
       echo 'maxmemory 128mb' | ./redis-server -
       ./redis-server /etc/redis/6379.conf
       ./redis-server --port 7777
       ./redis-server --port 7777 --replicaof 127.0.0.1 8888
       ./redis-server /etc/myredis.conf --loglevel verbose -
       ./redis-server /etc/myredis.conf --loglevel verbose

Sentinel mode:
       ./redis-server /etc/sentinel.conf --sentinel
";

/// The `--version` line. Same format as redis-server's, which tools parse
/// (`v=` is the version); redis-lite is named in the log banner instead.
pub fn version_string() -> String {
    format!("Redis server v={REDIS_VERSION} sha=00000000:0 malloc=jemalloc-5.3.0 bits=64 build={REDIS_BUILD_ID}")
}

/// `-v/--version` and `-h/--help` as the first argument: print and return
/// the exit code (0 for the version, 1 for the usage, as redis-server).
/// None: start normally.
pub fn early_exit_flags(args: &[String]) -> Option<i32> {
    match args.first().map(String::as_str) {
        Some("-v") | Some("--version") => {
            println!("{}", version_string());
            Some(0)
        }
        Some("-h") | Some("--help") => {
            eprint!("{USAGE}");
            Some(1)
        }
        _ => None,
    }
}

/// The FATAL CONFIG FILE ERROR text (loadServerConfigFromString loaderr).
fn fatal_config_error(line: Option<(usize, &str)>, err: &str) -> String {
    let mut s = format!("\n*** FATAL CONFIG FILE ERROR (Redis {REDIS_VERSION}) ***\n");
    if let Some((n, l)) = line {
        s.push_str(&format!(
            "Reading the configuration file, at line {n}\n>>> '{l}'\n"
        ));
    }
    s.push_str(err);
    s.push('\n');
    s
}

/// Directives Redis accepts and ignores (deprecatedConfig), with argc.
const DEPRECATED_CONFIGS: &[(&str, usize)] = &[
    ("list-max-ziplist-entries", 2),
    ("list-max-ziplist-value", 2),
    ("lua-replicate-commands", 2),
];

/// State of one start-up load: `save` lines after the first one add points.
struct Loader {
    cfg: Config,
    save_loaded: bool,
    /// A scratch ACL to check `user` lines against (built on the first one).
    acl_checker: Option<crate::acl::Acl>,
    /// A scratch command table the `rename-command` lines are checked on.
    renamer: Option<crate::commands::CommandTable>,
}

impl Loader {
    /// loadServerConfig for one file (include, or the main file): read it,
    /// then parse it. Unreadable: Redis logs and exits.
    fn load_file(&mut self, filename: &str) -> Result<(), String> {
        let text = read_config_files(filename)?;
        self.load_string(&text)
    }

    /// loadServerConfigFromString: one directive per line.
    fn load_string(&mut self, config: &str) -> Result<(), String> {
        for (i, raw) in config.split('\n').enumerate() {
            let line = raw.trim_matches([' ', '\t', '\r', '\n']);
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let err_at = |e: &str| fatal_config_error(Some((i + 1, line)), e);
            let Some(mut argv) = split_args(line) else {
                return Err(err_at("Unbalanced quotes in configuration line"));
            };
            if argv.is_empty() {
                continue;
            }
            argv[0] = argv[0].to_ascii_lowercase();
            if let Some(r) = lookup_config(argv[0].as_bytes()) {
                self.apply_directive(r, &argv).map_err(|e| err_at(&e))?;
                continue;
            }
            let argc = argv.len();
            if DEPRECATED_CONFIGS
                .iter()
                .any(|(n, c)| argv[0] == *n && argc == *c)
            {
                continue;
            }
            match argv[0].as_str() {
                "include" if argc == 2 => self.load_file(&argv[1])?,
                "rename-command" if argc == 3 => {
                    let t = self
                        .renamer
                        .get_or_insert_with(crate::commands::CommandTable::new);
                    t.rename(argv[1].as_bytes(), argv[2].as_bytes())
                        .map_err(err_at)?;
                    self.cfg
                        .renamed_commands
                        .push((argv[1].clone(), argv[2].clone()));
                }
                "user" if argc >= 2 => {
                    // ACLAppendUserForLoading: the rules are checked now
                    // (unknown commands excepted), the user made later.
                    let argv_b: Vec<bytes::Bytes> = argv
                        .iter()
                        .map(|a| bytes::Bytes::copy_from_slice(a.as_bytes()))
                        .collect();
                    let checker = self.acl_checker.get_or_insert_with(|| {
                        crate::acl::Acl::new(&crate::commands::CommandTable::new())
                    });
                    if let Err((idx, e)) = checker.append_user_for_loading(&argv_b) {
                        let bad = argv.get(idx).cloned().unwrap_or_default();
                        return Err(err_at(&format!(
                            "Error in user declaration '{bad}': {}",
                            e.message()
                        )));
                    }
                    self.cfg.user_lines.push(argv.clone());
                }
                "loadmodule" if argc >= 2 => {
                    return Err(err_at("Modules are not supported by redis-lite"));
                }
                "sentinel" => {
                    if argc != 1 {
                        return Err(err_at("sentinel directive while not in sentinel mode"));
                    }
                }
                name if name.contains('.') => {
                    if argc != 2 {
                        return Err(err_at("Module config specified without value"));
                    }
                    return Err(err_at("Module configs are not supported by redis-lite"));
                }
                _ => return Err(err_at("Bad directive or wrong number of arguments")),
            }
        }
        Ok(())
    }

    /// One known parameter from redis.conf / the command line.
    fn apply_directive(&mut self, r: ConfigRef, argv: &[String]) -> Result<(), String> {
        let row = &CONFIGS[r.idx];
        let multi = row.flags & MULTI_ARG_CONFIG != 0;
        if !multi && argv.len() != 2 {
            return Err("wrong number of arguments".into());
        }
        // `--save "900 1"` arrives as one argument: split it again.
        let args: Vec<String> = if multi && argv.len() == 2 && !argv[1].is_empty() {
            split_args(&argv[1]).unwrap_or_default()
        } else {
            argv[1..].to_vec()
        };
        let mode = SetMode::File {
            save_loaded: self.save_loaded,
        };
        let v = parse_value(r.idx, &args, &self.cfg.values[r.idx], mode)?;
        if let Kind::Special(Special::Save) = row.kind {
            self.save_loaded = true;
        }
        self.cfg.values[r.idx] = v;
        Ok(())
    }
}

/// Read a config file, or every file a glob pattern matches (include
/// conf.d/*.conf; no match is fine). A plain file that cannot be opened is
/// fatal, with Redis's log line.
fn read_config_files(filename: &str) -> Result<String, String> {
    let fail = |path: &str, e: &io::Error| {
        server_log(
            LogLevel::Warning,
            &format!(
                "Fatal error, can't open config file '{path}': {}",
                strerror(e)
            ),
        );
        String::new()
    };
    if !filename.contains(['*', '?', '[']) {
        return std::fs::read(filename)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .map_err(|e| fail(filename, &e));
    }
    let dir = std::path::Path::new(filename)
        .parent()
        .unwrap_or(std::path::Path::new("."));
    let pattern = std::path::Path::new(filename)
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut paths: Vec<std::path::PathBuf> =
        match std::fs::read_dir(if dir.as_os_str().is_empty() {
            std::path::Path::new(".")
        } else {
            dir
        }) {
            Ok(rd) => rd
                .filter_map(|e| e.ok())
                .filter(|e| {
                    storage::util::string_match(
                        pattern.as_bytes(),
                        e.file_name().to_string_lossy().as_bytes(),
                        false,
                    )
                })
                .map(|e| e.path())
                .collect(),
            Err(_) => Vec::new(),
        };
    paths.sort();
    let mut text = String::new();
    for p in paths {
        let s = p.display().to_string();
        let b = std::fs::read(&p).map_err(|e| fail(&s, &e))?;
        text.push_str(&String::from_utf8_lossy(&b));
    }
    Ok(text)
}

impl Config {
    /// Parse `redis-lite [/path/redis.conf] [--name value ...] [-]` as
    /// redis-server's main() does: the file, then stdin (`-`), then the
    /// options, each `--name` starting a new directive line. Returns the
    /// configuration and the absolute config file path ("" without one).
    /// Err holds the whole text for stderr (the FATAL CONFIG FILE ERROR
    /// block); the caller exits with status 1.
    pub fn from_args(args: &[String]) -> Result<(Config, String), String> {
        let mut j = 0;
        let mut config_file = String::new();
        if let Some(first) = args.first() {
            if !first.starts_with('-') {
                config_file = absolute_path(first);
                j = 1;
            }
        }
        let mut options = String::new();
        let mut from_stdin = false;
        let mut handled_last_config_arg = true;
        let argc = args.len();
        while j < argc {
            let a = &args[j];
            let next_is_option = j + 1 < argc && args[j + 1].starts_with("--");
            if a == "-" && (j == 0 || j == argc - 1) {
                from_stdin = true;
            } else if handled_last_config_arg && a.starts_with("--") {
                if !options.is_empty() {
                    options.push('\n');
                }
                options.push_str(&a[2..]);
                options.push(' ');
                if split_args(a).map(|v| v.len()) == Some(1) {
                    // Only a name: its value(s) follow.
                    handled_last_config_arg = false;
                    if a.eq_ignore_ascii_case("--save") && (next_is_option || j == argc - 1) {
                        // `--save` with no value means `--save ""`.
                        options.push_str("\"\"");
                        handled_last_config_arg = true;
                    } else if a.eq_ignore_ascii_case("--sentinel")
                        && (next_is_option || j == argc - 1)
                    {
                        handled_last_config_arg = true;
                    }
                } else {
                    handled_last_config_arg = true;
                }
            } else {
                options.push_str(&repr(a));
                options.push(' ');
                handled_last_config_arg = true;
            }
            j += 1;
        }

        let mut loader = Loader {
            cfg: Config::default(),
            save_loaded: false,
            acl_checker: None,
            renamer: None,
        };
        let mut text = String::new();
        if !config_file.is_empty() {
            text = read_config_files(&config_file)?;
        }
        if from_stdin {
            server_log(LogLevel::Warning, "Reading config from stdin");
            let mut s = String::new();
            let _ = io::Read::read_to_string(&mut io::stdin(), &mut s);
            text.push_str(&s);
        }
        if !options.is_empty() {
            text.push('\n');
            text.push_str(&options);
        }
        loader.load_string(&text)?;

        let mut cfg = loader.cfg;
        // Checked after the whole file, so no line is quoted.
        let logfile = cfg.s("logfile");
        if !logfile.is_empty() {
            if let Err(e) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&logfile)
            {
                return Err(fatal_config_error(
                    None,
                    &format!("Can't open the log file: {}", strerror(&e)),
                ));
            }
        }
        cfg.clamp_hz();
        cfg.sync_typed();
        crate::log::set_verbosity(cfg.loglevel);
        Ok((cfg, config_file))
    }
}

/// getAbsolutePath: the config file as INFO and CONFIG REWRITE see it.
fn absolute_path(p: &str) -> String {
    let path = std::path::Path::new(p);
    if path.is_absolute() {
        return p.to_string();
    }
    match std::env::current_dir() {
        Ok(cwd) => cwd.join(path).display().to_string(),
        Err(_) => p.to_string(),
    }
}

// ---------------------------------------------------------------------------
// CONFIG REWRITE (config.c rewriteConfig and friends)
// ---------------------------------------------------------------------------

/// REDIS_CONFIG_REWRITE_SIGNATURE: marks where appended lines start.
const REWRITE_SIGNATURE: &str = "# Generated by CONFIG REWRITE";

/// rewriteConfigState: the old file's lines, where each option appeared,
/// and which options the rewrite handled.
struct RewriteState {
    lines: Vec<String>,
    option_to_line: HashMap<String, Vec<usize>>,
    rewritten: std::collections::HashSet<String>,
    needs_signature: bool,
    /// DEBUG CONFIG-REWRITE-FORCE-ALL: write every option, defaults too.
    force_write: bool,
}

impl RewriteState {
    /// rewriteConfigReadOldFile. A missing file gives an empty state.
    fn read_old_file(path: &str) -> io::Result<RewriteState> {
        let mut st = RewriteState {
            lines: Vec::new(),
            option_to_line: HashMap::new(),
            rewritten: Default::default(),
            needs_signature: true,
            force_write: false,
        };
        let content = match std::fs::read(path) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(st),
            Err(e) => return Err(e),
        };
        if content.is_empty() {
            return Ok(st);
        }
        for raw in content.split('\n') {
            let line = raw.trim_matches(['\r', '\n', '\t', ' ']).to_string();
            if line.is_empty() || line.starts_with('#') {
                if st.needs_signature && line == REWRITE_SIGNATURE {
                    st.needs_signature = false;
                }
                st.lines.push(line);
                continue;
            }
            let argv = split_args(&line);
            let known = argv.as_ref().and_then(|a| a.first()).map(|name| {
                let lower = name.to_ascii_lowercase();
                let found =
                    lookup_config(lower.as_bytes()).map(|r| CONFIGS[r.idx].name.to_string());
                let directive = [
                    "include",
                    "rename-command",
                    "user",
                    "loadmodule",
                    "sentinel",
                ]
                .contains(&lower.as_str());
                (found, directive, lower)
            });
            match known {
                Some((found, directive, lower)) if found.is_some() || directive => {
                    // Aliases (slave-*, *-ziplist-*) count as their
                    // canonical option: the rewrite replaces them.
                    let option = found.unwrap_or(lower);
                    st.option_to_line
                        .entry(option)
                        .or_default()
                        .push(st.lines.len());
                    st.lines.push(line);
                }
                _ => st.lines.push(format!("# ??? {line}")),
            }
        }
        Ok(st)
    }

    /// rewriteConfigRewriteLine: reuse the option's first old line, or
    /// append (after the signature) when `force`.
    fn rewrite_line(&mut self, option: &str, line: String, force: bool) {
        self.rewritten.insert(option.to_string());
        let slot = self.option_to_line.get_mut(option).and_then(|l| {
            if l.is_empty() {
                None
            } else {
                Some(l.remove(0))
            }
        });
        match slot {
            Some(n) => self.lines[n] = line,
            None if force || self.force_write => {
                if self.needs_signature {
                    self.lines.push(REWRITE_SIGNATURE.to_string());
                    self.needs_signature = false;
                }
                self.lines.push(line);
            }
            None => {}
        }
    }

    fn mark_processed(&mut self, option: &str) {
        self.rewritten.insert(option.to_string());
    }

    /// rewriteConfigRemoveOrphaned + rewriteConfigGetContentFromState: blank
    /// the unused old lines of handled options, squeeze blank runs.
    fn content(mut self) -> String {
        for (opt, lines) in &self.option_to_line {
            if self.rewritten.contains(opt) {
                for &n in lines {
                    self.lines[n].clear();
                }
            }
        }
        let mut out = String::new();
        let mut was_empty = false;
        for l in &self.lines {
            if l.is_empty() {
                if was_empty {
                    continue;
                }
                was_empty = true;
            } else {
                was_empty = false;
            }
            out.push_str(l);
            out.push('\n');
        }
        out
    }
}

/// rewriteConfigFormatMemory: 1gb / 64mb / 4kb when exact, else bytes.
fn format_memory(bytes: i64) -> String {
    const GB: i64 = 1 << 30;
    const MB: i64 = 1 << 20;
    const KB: i64 = 1 << 10;
    if bytes != 0 && bytes % GB == 0 {
        format!("{}gb", bytes / GB)
    } else if bytes != 0 && bytes % MB == 0 {
        format!("{}mb", bytes / MB)
    } else if bytes != 0 && bytes % KB == 0 {
        format!("{}kb", bytes / KB)
    } else {
        bytes.to_string()
    }
}

/// interface.rewrite for one row.
fn rewrite_option(st: &mut RewriteState, idx: usize, v: &Value) {
    let row = &CONFIGS[idx];
    let name = row.name;
    let def = default_value(idx);
    let force = *v != def;
    match (&row.kind, v) {
        (Kind::Bool { .. }, Value::Bool(b)) => st.rewrite_line(
            name,
            format!("{name} {}", if *b { "yes" } else { "no" }),
            force,
        ),
        (Kind::Num { flags, .. }, Value::Num(n)) => {
            let text = if flags & PERCENT_CONFIG != 0 && *n < 0 {
                format!("{}%", -(*n as i128))
            } else if flags & MEMORY_CONFIG != 0 {
                format_memory(*n)
            } else if flags & OCTAL_CONFIG != 0 {
                format!("{n:o}")
            } else {
                n.to_string()
            };
            st.rewrite_line(name, format!("{name} {text}"), force)
        }
        (Kind::Enum { .. }, Value::Enum(_)) => {
            st.rewrite_line(name, format!("{name} {}", format_value(idx, v)), force)
        }
        (Kind::Str { .. }, Value::Str(None)) => st.mark_processed(name),
        (Kind::Str { default, .. }, Value::Str(Some(s))) => {
            let force = default.map(|d| d != s).unwrap_or(true);
            st.rewrite_line(name, format!("{name} {}", repr(s)), force)
        }
        (_, Value::Dir) => st.rewrite_line(
            name,
            format!("{name} {}", repr(&format_value(idx, v))),
            true,
        ),
        (_, Value::Save(points)) => {
            if points.is_empty() {
                st.rewrite_line(name, "save \"\"".into(), true);
            }
            for (s, c) in points {
                st.rewrite_line(name, format!("save {s} {c}"), true);
            }
            st.mark_processed(name);
        }
        (_, Value::ObufLimits(l)) => {
            for j in 0..3 {
                let force = l[j] != CLIENT_BUFFER_LIMITS_DEFAULTS[j];
                let class = if j == CLIENT_TYPE_SLAVE {
                    "replica"
                } else {
                    CLIENT_CLASS_NAMES[j]
                };
                let line = format!(
                    "{name} {class} {} {} {}",
                    format_memory(l[j].hard_limit_bytes as i64),
                    format_memory(l[j].soft_limit_bytes as i64),
                    l[j].soft_limit_seconds
                );
                st.rewrite_line(name, line, force);
            }
        }
        (_, Value::Oom(o)) => {
            st.rewrite_line(name, format!("{name} {} {} {}", o[0], o[1], o[2]), force)
        }
        (_, Value::Notify(f)) => st.rewrite_line(
            name,
            format!("{name} {}", repr(&keyspace_events_flags_to_string(*f))),
            force,
        ),
        (_, Value::Bind(b)) => {
            if !force {
                st.mark_processed(name);
            } else if b.is_empty() {
                st.rewrite_line(name, format!("{name} \"\""), true);
            } else {
                st.rewrite_line(name, format!("{name} {}", b.join(" ")), true);
            }
        }
        (_, Value::ReplicaOf(None)) => st.mark_processed(name),
        (_, Value::ReplicaOf(Some((h, p)))) => {
            st.rewrite_line(name, format!("{name} {h} {p}"), true)
        }
        (_, Value::Percentiles(p)) => {
            let line = if p.is_empty() {
                format!("{name} \"\"")
            } else {
                let parts: Vec<String> = p.iter().map(|d| trim_double(*d)).collect();
                format!("{name} {}", parts.join(" "))
            };
            st.rewrite_line(name, line, true)
        }
        _ => st.mark_processed(name),
    }
}

/// rewriteConfig + rewriteConfigOverwriteFile (write a temp file, then
/// rename it over the old one).
fn rewrite_config(
    cfg: &Config,
    path: &str,
    user_lines: &[String],
    force_write: bool,
) -> io::Result<()> {
    let mut st = RewriteState::read_old_file(path)?;
    st.force_write = force_write;
    for (idx, v) in cfg.values.iter().enumerate() {
        rewrite_option(&mut st, idx, v);
    }
    // rewriteConfigUserOption: every user, unless they live in an ACL
    // file; rewriteConfigLoadmoduleOption: no modules.
    if cfg.aclfile.is_empty() {
        for line in user_lines {
            st.rewrite_line("user", line.clone(), true);
        }
    }
    st.mark_processed("user");
    st.mark_processed("loadmodule");
    let content = st.content();
    let tmp = format!("{path}.{}", crate::server::random_hex(6));
    let res = (|| {
        use std::io::Write;
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(content.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if res.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    res
}

// ---------------------------------------------------------------------------
// The CONFIG command
// ---------------------------------------------------------------------------

/// CONFIG GET parameter [parameter ...]
// redis: config.c configGetCommand
pub fn config_get_command(srv: &mut Server, c: &mut Client) {
    // Matches in first-found order; each parameter once, under the name the
    // client typed (exact names) or the registered name (patterns).
    let mut matches: Vec<(String, ConfigRef)> = Vec::new();
    let seen = |m: &Vec<(String, ConfigRef)>, name: &str| {
        m.iter().any(|(n, _)| n.eq_ignore_ascii_case(name))
    };
    for i in 2..c.argc() {
        let pattern = c.arg(i).to_vec();
        if !pattern.iter().any(|b| matches!(b, b'[' | b'*' | b'?')) {
            let typed = String::from_utf8_lossy(&pattern).into_owned();
            if seen(&matches, &typed) {
                continue;
            }
            if let Some(r) = lookup_config(&pattern) {
                matches.push((typed, r));
            }
            continue;
        }
        for r in all_names() {
            // Hidden parameters need their exact name.
            if CONFIGS[r.idx].flags & HIDDEN_CONFIG != 0 || seen(&matches, r.name()) {
                continue;
            }
            if storage::util::string_match(&pattern, r.name().as_bytes(), true) {
                matches.push((r.name().to_string(), r));
            }
        }
    }
    c.add_reply_map_len(matches.len());
    for (name, r) in matches {
        c.add_reply_bulk(name.as_bytes());
        c.add_reply_bulk(format_value(r.idx, &srv.config.values[r.idx]).as_bytes());
    }
}

/// CONFIG SET parameter value [parameter value ...]
// redis: config.c configSetCommand
pub fn config_set_command(srv: &mut Server, c: &mut Client) {
    if c.argc() % 2 == 1 {
        c.add_reply_syntax_error();
        return;
    }
    // 1. Find every parameter; the first problem wins (unknown name,
    //    immutable / protected, duplicate).
    let mut targets: Vec<(ConfigRef, String)> = Vec::new();
    let mut unknown: Option<String> = None;
    let mut failure: Option<(String, String)> = None; // (argument, reason)
    let mut deny_loading = false;
    for i in (2..c.argc()).step_by(2) {
        let typed = String::from_utf8_lossy(c.arg(i)).into_owned();
        let Some(r) = lookup_config(c.arg(i)) else {
            if unknown.is_none() && failure.is_none() {
                unknown = Some(typed);
            }
            continue;
        };
        let flags = CONFIGS[r.idx].flags;
        // Every sensitive value is hidden from SLOWLOG and MONITOR, even
        // when an earlier argument already failed the command.
        if flags & SENSITIVE_CONFIG != 0 {
            c.redact_client_command_argument(i + 1);
        }
        if unknown.is_some() || failure.is_some() {
            continue;
        }
        if flags & IMMUTABLE_CONFIG != 0 {
            failure = Some((typed, "can't set immutable config".into()));
        } else if flags & PROTECTED_CONFIG != 0
            && !crate::server::allow_protected_action(srv.config.enable_protected_configs, c)
        {
            failure = Some((typed, "can't set protected config".into()));
        } else if flags & DENY_LOADING_CONFIG != 0 && srv.loading.loading {
            deny_loading = true;
            failure = Some((typed, "loading".into()));
        } else if targets.iter().any(|(t, _)| *t == r) {
            failure = Some((typed, "duplicate parameter".into()));
        } else {
            targets.push((r, String::from_utf8_lossy(c.arg(i + 1)).into_owned()));
        }
    }
    // The loading error first: clients may handle it (retry later).
    if deny_loading {
        c.add_reply_error(crate::rdb::LOADING_ERR);
        return;
    }
    if let Some(name) = unknown {
        c.add_reply_error(&format!(
            "ERR Unknown option or number of arguments for CONFIG SET - '{name}'"
        ));
        return;
    }
    if let Some((arg, why)) = failure {
        c.add_reply_error(&format!(
            "ERR CONFIG SET failed (possibly related to argument '{arg}') - {why}"
        ));
        return;
    }
    // 2. Parse every value into a copy: all or nothing.
    let old = srv.config.clone();
    let mut changed: Vec<usize> = Vec::new();
    for (r, value) in &targets {
        let args = if CONFIGS[r.idx].flags & MULTI_ARG_CONFIG != 0 {
            split_spaces(value)
        } else {
            vec![value.clone()]
        };
        match parse_value(r.idx, &args, &srv.config.values[r.idx], SetMode::ConfigSet) {
            Ok(v) => {
                if v != srv.config.values[r.idx] || v == Value::Dir {
                    changed.push(r.idx);
                }
                srv.config.values[r.idx] = v;
            }
            Err(why) => {
                srv.config = old;
                c.add_reply_error(&format!(
                    "ERR CONFIG SET failed (possibly related to argument '{}') - {why}",
                    r.name()
                ));
                return;
            }
        }
    }
    // 3. Apply the side effects (the apply functions), restoring all on failure.
    srv.config.clamp_hz();
    srv.config.sync_typed();
    if let Err((idx, why)) = apply_changes(srv, &changed) {
        server_log(
            LogLevel::Warning,
            &format!(
                "Failed applying new configuration. Possibly related to new {} setting. Restoring previous settings.",
                CONFIGS[idx].name
            ),
        );
        srv.config = old;
        let _ = apply_changes(srv, &changed);
        c.add_reply_error(&format!(
            "ERR CONFIG SET failed (possibly related to argument '{}') - {why}",
            CONFIGS[idx].name
        ));
        return;
    }
    c.add_reply_ok();
}

/// The apply functions (updateHZ, changeListenPort / changeBindAddr, the
/// log verbosity) for the rows whose value changed.
fn apply_changes(srv: &mut Server, changed: &[usize]) -> Result<(), (usize, String)> {
    let mut rebind = None;
    for &idx in changed {
        match CONFIGS[idx].name {
            "hz" => srv.hz = srv.config.hz,
            // updateRequirePass: the default user's password follows.
            "requirepass" => {
                let pass = srv.config.requirepass.clone();
                srv.acl.update_default_user_password(&pass);
            }
            // updateMaxclients: a bigger maxclients needs more descriptors;
            // when the system gives fewer, adjustOpenFilesLimit lowers
            // maxclients to what they allow, and that is the error.
            "maxclients" => {
                let wanted = srv.config.maxclients;
                let _ = crate::server::adjust_open_files_limit(&mut srv.config);
                if srv.config.maxclients != wanted {
                    return Err((
                        idx,
                        format!(
                            "The operating system is not able to handle the specified number of clients, try with {}",
                            srv.config.maxclients
                        ),
                    ));
                }
            }
            "maxmemory" => crate::evict::update_maxmemory(srv),
            "maxmemory-clients" => crate::client_eviction::apply_client_max_memory_usage(srv),
            "loglevel" => crate::log::set_verbosity(srv.config.loglevel),
            // updateGoodSlaves: recount at once, not at the next cron.
            "min-replicas-to-write" | "min-replicas-max-lag" => {
                crate::replication::master::refresh_good_slaves_count(srv, None)
            }
            name if crate::aof::is_aof_config(name) => {
                crate::aof::aof_apply_config(srv, name).map_err(|why| (idx, why.to_string()))?
            }
            "port" => rebind = Some((idx, "Unable to listen on this port. Check server logs.")),
            "bind" => rebind = rebind.or(Some((idx, "Failed to bind to specified addresses."))),
            _ => {}
        }
    }
    if let Some((idx, why)) = rebind {
        // Close the old listeners first (the same port may be reused).
        for mut l in std::mem::take(&mut srv.listeners) {
            let _ = srv.poll.registry().deregister(&mut l);
        }
        if let Err(msg) = crate::listen_to_port(srv) {
            server_log(LogLevel::Warning, &msg);
            for mut l in std::mem::take(&mut srv.listeners) {
                let _ = srv.poll.registry().deregister(&mut l);
            }
            return Err((idx, why.to_string()));
        }
    }
    Ok(())
}

/// CONFIG RESETSTAT
// redis: config.c configResetStatCommand
pub fn config_resetstat_command(srv: &mut Server, c: &mut Client) {
    // resetServerStats, resetCommandTableStats, resetErrorTableStats.
    srv.stats = Default::default();
    srv.inst_ops = Default::default();
    srv.inst_net_input = Default::default();
    srv.inst_net_output = Default::default();
    srv.inst_net_repl_input = Default::default();
    srv.inst_net_repl_output = Default::default();
    // The counters that live beside their subsystem's state.
    srv.repl.stat_sync_full = 0;
    srv.repl.stat_sync_partial_ok = 0;
    srv.repl.stat_sync_partial_err = 0;
    srv.rdb.stat_rdb_saves = 0;
    srv.aof.stat_aof_rewrites = 0;
    srv.aof.stat_aofrw_consecutive_failures = 0;
    srv.aof.delayed_fsync = 0;
    for cmd in srv.commands.commands.iter_mut() {
        cmd.stats = Default::default();
        cmd.histogram.reset();
    }
    // The expiry cycle's statistics and lazyfreed_objects go too.
    srv.expire_state.stale_perc = 0.0;
    srv.expire_state.time_cap_reached_count = 0;
    srv.expire_state.cycle_time_used_us = 0;
    srv.lazyfree.reset_stats();
    c.add_reply_ok();
}

/// CONFIG REWRITE
// redis: config.c configRewriteCommand
pub fn config_rewrite_command(srv: &mut Server, c: &mut Client) {
    if srv.config_file.is_empty() {
        c.add_reply_error("ERR The server is running without a config file");
        return;
    }
    let user_lines = srv.acl.config_user_lines();
    match rewrite_config(&srv.config, &srv.config_file, &user_lines, false) {
        Ok(()) => {
            server_log(LogLevel::Warning, "CONFIG REWRITE executed with success.");
            c.add_reply_ok();
        }
        Err(e) => {
            let why = strerror(&e);
            server_log(LogLevel::Warning, &format!("CONFIG REWRITE failed: {why}"));
            c.add_reply_error(&format!("ERR Rewriting config file: {why}"));
        }
    }
}

/// DEBUG CONFIG-REWRITE-FORCE-ALL: CONFIG REWRITE writing every option,
/// defaults included (the test suite restarts from such a file to check
/// that every option written can be read back).
// redis: debug.c debugCommand ("config-rewrite-force-all")
pub fn debug_config_rewrite_force_all(srv: &mut Server, c: &mut Client) {
    let user_lines = srv.acl.config_user_lines();
    match rewrite_config(&srv.config, &srv.config_file, &user_lines, true) {
        Ok(()) => c.add_reply_ok(),
        Err(e) => c.add_reply_error(&format!(
            "ERR CONFIG-REWRITE-FORCE-ALL failed: {}",
            strerror(&e)
        )),
    }
}

/// CONFIG HELP
// redis: config.c configHelpCommand
pub fn config_help_command(_srv: &mut Server, c: &mut Client) {
    c.add_reply_help(
        "CONFIG",
        &[
            "GET <pattern>",
            "    Return parameters matching the glob-like <pattern> and their values.",
            "SET <directive> <value>",
            "    Set the configuration <directive> to <value>.",
            "RESETSTAT",
            "    Reset statistics reported by the INFO command.",
            "REWRITE",
            "    Rewrite the configuration file.",
        ],
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_units_parse_like_memtoull() {
        assert_eq!(memtoull("1gb"), Some(1 << 30));
        assert_eq!(memtoull("1GB"), Some(1 << 30));
        assert_eq!(memtoull("100mb"), Some(100 << 20));
        assert_eq!(memtoull("2k"), Some(2000));
        assert_eq!(memtoull("2kb"), Some(2048));
        assert_eq!(memtoull("7b"), Some(7));
        assert_eq!(memtoull("gb"), Some(0));
        assert_eq!(memtoull(""), Some(0));
        assert_eq!(memtoull("99999999999999999999999"), Some(u64::MAX));
        assert_eq!(memtoull("17179869184gb"), Some(0)); // wraps, as in C
        assert_eq!(memtoull("-1"), None);
        assert_eq!(memtoull("1.5g"), None);
        assert_eq!(memtoull("+5"), None);
        assert_eq!(memtoull(" 5"), None);
    }

    #[test]
    fn numeric_bounds_and_errors_match_redis() {
        let hz = parse_numeric("abc", 0, INT_MAX, false, 0).unwrap_err();
        assert_eq!(hz, "argument couldn't be parsed into an integer");
        let e = parse_numeric("-1", 0, INT_MAX, false, 0).unwrap_err();
        assert_eq!(e, "argument must be between 0 and 2147483647 inclusive");
        let e = parse_numeric("-1", 1, UINT_MAX, true, 0).unwrap_err();
        assert_eq!(e, "argument must be between 1 and 4294967295 inclusive");
        assert_eq!(
            parse_numeric("1mb", 1 << 20, LONG_MAX, false, MEMORY_CONFIG),
            Ok(1 << 20)
        );
        let e = parse_numeric("-1", 1 << 20, LONG_MAX, false, MEMORY_CONFIG).unwrap_err();
        assert_eq!(e, "argument must be a memory value");
        assert_eq!(
            parse_numeric("10%", -100, LONG_MAX, false, MEMORY_CONFIG | PERCENT_CONFIG),
            Ok(-10)
        );
        let e = parse_numeric(
            "101%",
            -100,
            LONG_MAX,
            false,
            MEMORY_CONFIG | PERCENT_CONFIG,
        )
        .unwrap_err();
        assert_eq!(e, "percentage argument must be less or equal to 100");
        assert_eq!(format_numeric(-10, MEMORY_CONFIG | PERCENT_CONFIG), "10%");
        assert_eq!(
            parse_numeric("777", 0, 0o777, true, OCTAL_CONFIG),
            Ok(0o777)
        );
        assert_eq!(format_numeric(0o755, OCTAL_CONFIG), "755");
        // ULLONG_MAX bound: any u64 fits.
        assert_eq!(
            parse_numeric("18446744073709551615", 0, ULLONG_MAX, true, MEMORY_CONFIG),
            Ok(-1)
        );
        assert_eq!(format_numeric(-1, MEMORY_CONFIG), "18446744073709551615");
    }

    #[test]
    fn bools_and_enums() {
        assert_eq!(yesnotoi("YES"), Some(true));
        assert_eq!(yesnotoi("no"), Some(false));
        assert_eq!(yesnotoi("1"), None);
        assert_eq!(
            parse_enum(LOGLEVEL_ENUM, &["WARNING".into()], false),
            Some(3)
        );
        assert_eq!(parse_enum(LOGLEVEL_ENUM, &["x".into()], false), None);
        let v = parse_enum(SHUTDOWN_ON_SIG_ENUM, &["now".into(), "save".into()], true).unwrap();
        assert_eq!(enum_name(SHUTDOWN_ON_SIG_ENUM, v, true), "save now");
        assert_eq!(enum_name(OOM_SCORE_ADJ_ENUM, 1, false), "yes");
    }

    #[test]
    fn notify_flags_round_trip() {
        let f = keyspace_events_string_to_flags("KEA").unwrap();
        assert_eq!(keyspace_events_flags_to_string(f), "AKE");
        let f = keyspace_events_string_to_flags("Ex").unwrap();
        assert_eq!(keyspace_events_flags_to_string(f), "xE");
        assert_eq!(keyspace_events_string_to_flags("Kq"), None);
    }

    #[test]
    fn registry_lists_what_config_get_star_lists() {
        // redis-server 7.0.15 answers CONFIG GET * with 192 names.
        let visible = all_names()
            .filter(|r| CONFIGS[r.idx].flags & HIDDEN_CONFIG == 0)
            .count();
        assert_eq!(visible, 192);
        assert_eq!(
            lookup_config(b"SLAVE-PRIORITY").map(|r| r.name()),
            Some("slave-priority")
        );
        assert!(lookup_config(b"nosuch").is_none());
    }

    #[test]
    fn defaults_and_set_update_typed_fields() {
        let mut c = Config::default();
        assert_eq!(
            c.get_string("save").as_deref(),
            Some("3600 1 300 100 60 10000")
        );
        assert_eq!(
            c.get_string("enable-debug-command").as_deref(),
            Some("local")
        );
        assert_eq!(c.proto_max_bulk_len, 512 << 20);
        c.set_from_str("hz", "1000").unwrap();
        assert_eq!(c.hz, 500);
        c.set_from_str("maxmemory", "1gb").unwrap();
        assert_eq!(c.maxmemory, 1 << 30);
        c.set_from_str("maxmemory-policy", "ALLKEYS-LRU").unwrap();
        assert_eq!(c.maxmemory_policy, MaxmemoryPolicy::AllkeysLru);
        c.set_from_str("list-max-ziplist-size", "5").unwrap();
        assert_eq!(c.list_max_listpack_size, 5);
        assert!(c.set_from_str("save", "1 2 3").is_err());
        c.set_from_str("save", "").unwrap();
        assert!(c.save_params.is_empty());
    }

    #[test]
    fn command_line_builds_redis_options() {
        let args: Vec<String> = ["--port", "7000", "--save", "900 1", "--hz", "20"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let (c, file) = Config::from_args(&args).unwrap();
        assert_eq!((c.port, c.hz, file.as_str()), (7000, 20, ""));
        assert_eq!(c.save_params, vec![(900, 1)]);
        let bad: Vec<String> = ["--port", "7000", "--nosuch", "1"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let err = Config::from_args(&bad).unwrap_err();
        assert!(err
            .contains("at line 3\n>>> 'nosuch \"1\"'\nBad directive or wrong number of arguments"));
    }

    /// An empty `save` clears the points of earlier lines (setConfigSaveOption
    /// resets on a single ""), in a file or from the command line; a bare
    /// `--save` before another option or at the end means `--save ""`.
    #[test]
    fn empty_save_clears_earlier_save_points() {
        let points = |args: &[&str]| {
            let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
            Config::from_args(&args).unwrap().0.save_params
        };
        assert_eq!(points(&["--save", "900 1", "--save", ""]), vec![]);
        assert_eq!(points(&["--save", "900 1", "--save"]), vec![]);
        assert_eq!(points(&["--save", "900 1", "--save", "--hz", "20"]), vec![]);
        assert_eq!(points(&["--save", "", "--save", "5 5"]), vec![(5, 5)]);
        assert_eq!(
            points(&["--save", "900 1", "--save", "60 2"]),
            vec![(900, 1), (60, 2)]
        );
        let file = std::env::temp_dir().join(format!("save-{}.conf", std::process::id()));
        std::fs::write(&file, "save 900 1\nsave \"\"\n").unwrap();
        assert_eq!(points(&[file.to_str().unwrap()]), vec![]);
        assert_eq!(
            points(&[file.to_str().unwrap(), "--save", "7 7"]),
            vec![(7, 7)]
        );
        let _ = std::fs::remove_file(&file);
    }

    #[test]
    fn repr_and_memory_format() {
        assert_eq!(repr("a\"b c"), "\"a\\\"b c\"");
        assert_eq!(format_memory(100 << 20), "100mb");
        assert_eq!(format_memory(1000), "1000");
        assert_eq!(trim_double(99.9), "99.9");
        assert_eq!(trim_double(50.0), "50");
    }
}
