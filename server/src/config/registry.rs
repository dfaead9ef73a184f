//! The registry (config.c static_configs[])

use super::*;

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
pub(super) const MEMORY_CONFIG: u8 = 1 << 0;
/// Also accepts `N%`, stored as -N.
pub(super) const PERCENT_CONFIG: u8 = 1 << 1;
/// Parsed and printed in octal (unixsocketperm).
pub(super) const OCTAL_CONFIG: u8 = 1 << 2;

/// The C limits the bounds are written with.
pub(super) const INT_MAX: i64 = i32::MAX as i64;
const INT_MIN: i64 = i32::MIN as i64;
pub(super) const UINT_MAX: i64 = u32::MAX as i64;
pub(super) const LONG_MAX: i64 = i64::MAX;
/// ULLONG_MAX stored in a `long long` bound, as C does: -1.
pub(super) const ULLONG_MAX: i64 = -1;

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
pub(super) const LOGLEVEL_ENUM: &[(&str, i32)] =
    &[("debug", 0), ("verbose", 1), ("notice", 2), ("warning", 3)];
const SUPERVISED_ENUM: &[(&str, i32)] = &[("upstart", 1), ("systemd", 2), ("auto", 3), ("no", 0)];
const AOF_FSYNC_ENUM: &[(&str, i32)] = &[("everysec", 2), ("always", 1), ("no", 0)];
const REPL_DISKLESS_LOAD_ENUM: &[(&str, i32)] =
    &[("disabled", 0), ("on-empty-db", 1), ("swapdb", 2)];
const TLS_AUTH_CLIENTS_ENUM: &[(&str, i32)] = &[("no", 0), ("yes", 1), ("optional", 2)];
pub(super) const OOM_SCORE_ADJ_ENUM: &[(&str, i32)] =
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
pub(super) const SHUTDOWN_ON_SIG_ENUM: &[(&str, i32)] = &[
    ("default", 0),
    ("save", 1),
    ("nosave", 2),
    ("now", 4),
    ("force", 8),
];
pub(super) const SHUTDOWN_SAVE: i32 = 1;
pub(super) const SHUTDOWN_NOSAVE: i32 = 2;

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
pub(super) fn all_names() -> impl Iterator<Item = ConfigRef> {
    CONFIGS.iter().enumerate().flat_map(|(idx, row)| {
        let main = std::iter::once(ConfigRef { idx, alias: false });
        let alias = row.alias.map(|_| ConfigRef { idx, alias: true });
        main.chain(alias)
    })
}
