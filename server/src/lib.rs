//! redis-lite's server: the event loop, clients, the command table, `call()`
//! and the commands. Start reading at `ae.rs` (the loop) and `server.rs`
//! (`process_command` and `call`); `docs/tour.md` follows one GET and one
//! KEYS through these files.

pub mod ae;
pub mod bitops;
pub mod blocked;
pub mod commands;
pub mod commands_meta;
pub mod config;
pub mod db;
pub mod debug;
pub mod dump;
pub mod eval;
pub mod evict;
pub mod expire;
pub mod function;
pub mod function_lua;
pub mod geo;
pub mod hyperloglog;
pub mod info;
pub mod latency;
pub mod ldb;
pub mod log;
pub mod loop_step;
pub mod lualib;
pub mod memory;
pub mod monitor;
pub mod multi;
pub mod networking;
pub mod notify;
pub mod object;
pub mod object_memory;
pub mod pubsub;
pub mod rdb;
pub mod recorder;
pub mod script;
pub mod script_lua;
pub mod server;
pub mod slowlog;
pub mod sort;
pub mod t_hash;
pub mod t_list;
pub mod t_set;
pub mod t_stream;
pub mod t_string;
pub mod t_zset;

use log::{server_log, LogLevel};
use mio::net::TcpListener;
use mio::{Interest, Token};

#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// main(): read the configuration, open the listening sockets, run the loop.
/// Returns the process exit code when start-up fails.
pub fn run(args: &[String]) -> i32 {
    // --version / --help print and exit, as redis-server.
    if let Some(code) = config::early_exit_flags(args) {
        return code;
    }
    let (config, config_file) = match config::Config::from_args(args) {
        Ok(c) => c,
        Err(e) => {
            // The whole FATAL CONFIG FILE ERROR block, built by config.rs.
            eprint!("{e}");
            return 1;
        }
    };
    if !config.logfile.is_empty() {
        if let Err(e) = log::set_logfile(&config.logfile) {
            eprintln!("Can't open the log file: {e}");
            return 1;
        }
    }
    server_log(
        LogLevel::Warning,
        "oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo",
    );
    server_log(
        LogLevel::Warning,
        &format!(
            "Redis version={}, bits=64, commit=00000000, modified=0, pid={}, just started (redis-lite)",
            server::REDIS_VERSION,
            std::process::id()
        ),
    );
    let mut srv = match server::Server::new(config) {
        Ok(s) => s,
        Err(e) => {
            server_log(
                LogLevel::Warning,
                &format!("Failed creating the event loop. Error message: '{e}'"),
            );
            return 1;
        }
    };
    srv.config_file = config_file;
    if let Err(msg) = listen_to_port(&mut srv) {
        server_log(LogLevel::Warning, &msg);
        return 1;
    }
    // used_memory_startup: what the empty server holds (InitServerLast).
    memory::thread_cache_flush();
    srv.initial_memory_usage = memory::used_memory();
    server_log(LogLevel::Notice, "Server initialized");
    rdb::setup_signal_handlers();
    rdb::load_data_from_disk(&mut srv);
    server_log(LogLevel::Notice, "Ready to accept connections tcp");
    ae::ae_main(&mut srv);
    0
}

/// listenToPort: bind every `bind` address. A leading `-` marks an optional
/// address (Redis's `-::*`): failing to bind it is not an error.
pub fn listen_to_port(srv: &mut server::Server) -> Result<(), String> {
    let port = srv.config.port;
    let binds = srv.config.bind.clone();
    for b in binds {
        let (optional, addr) = match b.strip_prefix('-') {
            Some(rest) => (true, rest.to_string()),
            None => (false, b.clone()),
        };
        let host = match addr.as_str() {
            "*" => "0.0.0.0".to_string(),
            "::*" => "::".to_string(),
            other => other.to_string(),
        };
        let sockaddr = if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        let parsed: std::net::SocketAddr = match sockaddr.parse() {
            Ok(a) => a,
            Err(_) => return Err(format!("Invalid bind address '{addr}'")),
        };
        match bind_listener(parsed) {
            Ok(mut l) => {
                let token = Token(srv.listeners.len());
                srv.poll
                    .registry()
                    .register(&mut l, token, Interest::READABLE)
                    .map_err(|e| format!("Could not register listener: {e}"))?;
                srv.listeners.push(l);
            }
            Err(e) if optional => {
                server_log(
                    LogLevel::Verbose,
                    &format!("Skipping optional bind {addr}: {e}"),
                );
            }
            Err(e) => {
                return Err(format!(
                    "Warning: Could not create server TCP listening socket {addr}:{port}: {e}"
                ));
            }
        }
    }
    if srv.listeners.is_empty() {
        return Err("Failed listening on port (tcp), aborting.".into());
    }
    Ok(())
}

/// A listening socket with SO_REUSEADDR (mio sets it) and, for IPv6,
/// IPV6_V6ONLY so `*` and `::*` can both bind the same port.
fn bind_listener(addr: std::net::SocketAddr) -> std::io::Result<TcpListener> {
    if addr.is_ipv6() {
        let std_listener = ipv6_only_listener(addr)?;
        Ok(TcpListener::from_std(std_listener))
    } else {
        TcpListener::bind(addr)
    }
}

fn ipv6_only_listener(addr: std::net::SocketAddr) -> std::io::Result<std::net::TcpListener> {
    use std::os::fd::FromRawFd;
    // SAFETY: plain socket calls on a descriptor we own; errors are checked.
    unsafe {
        let fd = libc::socket(
            libc::AF_INET6,
            libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        );
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let listener = std::net::TcpListener::from_raw_fd(fd);
        let one: libc::c_int = 1;
        let sz = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_REUSEADDR,
            &one as *const _ as *const libc::c_void,
            sz,
        );
        libc::setsockopt(
            fd,
            libc::IPPROTO_IPV6,
            libc::IPV6_V6ONLY,
            &one as *const _ as *const libc::c_void,
            sz,
        );
        let std::net::SocketAddr::V6(v6) = addr else {
            return Err(std::io::Error::from(std::io::ErrorKind::InvalidInput));
        };
        let mut sa: libc::sockaddr_in6 = std::mem::zeroed();
        sa.sin6_family = libc::AF_INET6 as libc::sa_family_t;
        sa.sin6_port = v6.port().to_be();
        sa.sin6_addr.s6_addr = v6.ip().octets();
        if libc::bind(
            fd,
            &sa as *const _ as *const libc::sockaddr,
            std::mem::size_of::<libc::sockaddr_in6>() as libc::socklen_t,
        ) < 0
        {
            return Err(std::io::Error::last_os_error());
        }
        if libc::listen(fd, 511) < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(listener)
    }
}
