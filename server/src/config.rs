//! Configuration (Redis's config.c). TEMPORARY minimal version: being
//! replaced by the full registry.

use crate::networking::Client;
use crate::server::Server;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProtectedAction {
    No,
    Yes,
    Local,
}

#[derive(Clone, Debug)]
pub struct Config {
    pub port: u16,
    pub bind: Vec<String>,
    pub hz: i64,
    pub dynamic_hz: bool,
    pub maxclients: u64,
    pub databases: i64,
    pub proto_max_bulk_len: i64,
    pub client_query_buffer_limit: u64,
    pub enable_debug_command: ProtectedAction,
    pub activerehashing: bool,
    pub logfile: String,
    pub daemonize: bool,
    pub slowlog_log_slower_than: i64,
    pub slowlog_max_len: i64,
    pub latency_monitor_threshold: i64,
    pub latency_tracking: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            port: 6379,
            bind: vec!["*".into(), "-::*".into()],
            hz: 10,
            dynamic_hz: true,
            maxclients: 10000,
            databases: 16,
            proto_max_bulk_len: 512 * 1024 * 1024,
            client_query_buffer_limit: 1024 * 1024 * 1024,
            enable_debug_command: ProtectedAction::Local,
            activerehashing: true,
            logfile: String::new(),
            daemonize: false,
            slowlog_log_slower_than: 10000,
            slowlog_max_len: 128,
            latency_monitor_threshold: 0,
            latency_tracking: true,
        }
    }
}

impl Config {
    /// Parse `redis-lite [config-file] [--name value ...]`.
    pub fn from_args(args: &[String]) -> Result<(Config, String), String> {
        let mut cfg = Config::default();
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            if let Some(name) = a.strip_prefix("--") {
                let v = args.get(i + 1).cloned().unwrap_or_default();
                match name {
                    "port" => cfg.port = v.parse().map_err(|_| "bad port".to_string())?,
                    "hz" => cfg.hz = v.parse().map_err(|_| "bad hz".to_string())?,
                    _ => {}
                }
                i += 2;
            } else {
                i += 1;
            }
        }
        Ok((cfg, String::new()))
    }
}

pub fn config_get_command(_srv: &mut Server, c: &mut Client) {
    c.add_reply_array_len(0);
}
pub fn config_set_command(_srv: &mut Server, c: &mut Client) {
    c.add_reply_ok();
}
pub fn config_resetstat_command(_srv: &mut Server, c: &mut Client) {
    c.add_reply_ok();
}
pub fn config_rewrite_command(_srv: &mut Server, c: &mut Client) {
    c.add_reply_error("ERR The server is running without a config file");
}
pub fn config_help_command(_srv: &mut Server, c: &mut Client) {
    c.add_reply_help("CONFIG", &[]);
}
