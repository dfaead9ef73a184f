//! Config: values and typed mirrors

use super::*;

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

    /// A boolean config's value (false for a name that is not boolean):
    /// how code reads a boolean that has no typed field (jemalloc-bg-thread,
    /// always-show-logo, the cluster switches ...).
    pub fn boolean(&self, name: &str) -> bool {
        self.b(name)
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

    pub(super) fn s(&self, name: &str) -> String {
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
        crate::evict::publish_maxmemory(self.maxmemory);
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
    pub(super) fn clamp_hz(&mut self) {
        if let Some(r) = lookup_config(b"hz") {
            if let Value::Num(h) = &mut self.values[r.idx] {
                *h = (*h).clamp(crate::server::CONFIG_MIN_HZ, crate::server::CONFIG_MAX_HZ);
            }
        }
    }
}
