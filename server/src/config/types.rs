//! Public types the server reads

use super::*;

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
    pub(super) values: Vec<Value>,

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
