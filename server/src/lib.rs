//! redis-lite's server: the event loop, clients, the command table, `call()`
//! and the commands. Start reading at `ae.rs` (the loop) and `server.rs`
//! (`process_command` and `call`); `docs/tour.md` follows one GET and one
//! KEYS through these files.

pub mod acl;
pub mod ae;
pub mod aof;
pub mod bio;
pub mod bitops;
pub mod blocked;
pub mod childinfo;
pub mod client_eviction;
pub mod cluster;
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
pub mod instrument_logs;
pub mod latency;
pub mod ldb;
pub mod log;
pub mod lolwut;
pub mod loop_step;
pub mod lualib;
pub mod memory;
pub mod memtest;
pub mod migrate;
pub mod module;
pub mod monitor;
pub mod multi;
pub mod networking;
pub mod notify;
pub mod object;
pub mod object_memory;
pub mod propagate;
pub mod pubsub;
pub mod rdb;
// The loop flight recorder (cargo feature `recorder`, on by default);
// without it, recorder_off.rs stands in and the hooks are not compiled.
#[cfg(feature = "recorder")]
pub mod recorder;
#[cfg(not(feature = "recorder"))]
#[path = "recorder_off.rs"]
pub mod recorder;
pub mod replication;
pub mod reply_buffer;
pub mod script;
pub mod script_lua;
pub mod server;
pub mod shared;
pub mod shutdown;
pub mod slowlog;
pub mod sort;
pub mod sparkline;
pub mod syscheck;
pub mod t_hash;
pub mod t_list;
pub mod t_set;
pub mod t_stream;
pub mod t_string;
pub mod t_zset;
pub mod tracking;

use log::{server_log, LogLevel};
use mio::net::TcpListener;
use mio::{Interest, Token};

#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// main(): read the configuration, open the listening sockets, run the loop.
/// Returns the process exit code when start-up fails.
// redis: server.c main
pub fn run(args: &[String]) -> i32 {
    // used_memory sums the counters of every thread that allocates.
    memory::register_thread();
    let argv0 = std::env::args()
        .next()
        .unwrap_or_else(|| "redis-lite".into());
    // Sentinel is a different program inside redis-server (sentinel.c):
    // redis-lite has none, and says so instead of starting a plain server.
    let exec_name = argv0.rsplit('/').next().unwrap_or(&argv0);
    if exec_name.contains("redis-sentinel") || args.iter().any(|a| a == "--sentinel") {
        eprintln!("Sentinel mode is not supported by redis-lite (no sentinel.c): run redis-sentinel from Redis for that.");
        return 1;
    }
    // --version / --help print and exit, as redis-server.
    if let Some(code) = config::early_exit_flags(args) {
        return code;
    }
    match args.first().map(String::as_str) {
        Some("--test-memory") => {
            let mb = args.get(1).map(|a| util::atoi(a.as_bytes())).unwrap_or(0);
            if args.len() == 2 {
                memtest::memtest(mb.max(0) as usize, 50);
            }
            eprintln!("Please specify the amount of memory to test in megabytes.");
            eprintln!("Example: ./redis-server --test-memory 4096\n");
            return 1;
        }
        Some("--check-system") => return if syscheck::syscheck() { 0 } else { 1 },
        _ => {}
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
    // A supervisor (systemd, upstart) keeps us in the foreground.
    let supervised = server::redis_is_supervised(config.supervised);
    let background = config.daemonize && !supervised;
    if background {
        server::daemonize();
    }
    server_log(
        LogLevel::Warning,
        "oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo",
    );
    server_log(
        LogLevel::Warning,
        &format!(
            "Redis version={}, bits=64, commit=00000000, modified=0, pid={}, just started",
            server::REDIS_VERSION,
            std::process::id()
        ),
    );
    if args.is_empty() {
        server_log(LogLevel::Warning, &format!("Warning: no config file specified, using the default config. In order to specify a config file use {argv0} /path/to/redis.conf"));
    } else {
        server_log(LogLevel::Warning, "Configuration loaded");
    }

    // initServer: from here on the lines say `M` (Redis sets server.pid
    // before adjustOpenFilesLimit logs).
    log::set_role('M');
    let mut config = config;
    if !server::adjust_open_files_limit(&mut config) {
        return 1;
    }
    // The keyspace dicts grow only when that keeps used_memory under
    // maxmemory (dbDictType's expandAllowed).
    storage::dict::set_expand_allowed(evict::dict_expand_allowed);
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
    shutdown::setup_signal_handlers();
    shutdown::install_panic_hook();
    server_log(LogLevel::Notice, "monotonic clock: POSIX clock_gettime");
    srv.config_file = config_file;
    // The `user` lines of redis.conf (checked while loading it), then
    // requirepass as the default user's password (initServer), then the
    // users themselves (ACLLoadUsersAtStartup).
    for line in std::mem::take(&mut srv.config.user_lines) {
        let argv: Vec<bytes::Bytes> = line
            .iter()
            .map(|a| bytes::Bytes::copy_from_slice(a.as_bytes()))
            .collect();
        let _ = srv.acl.append_user_for_loading(&argv);
    }
    let requirepass = srv.config.requirepass.clone();
    srv.acl.update_default_user_password(&requirepass);
    if let Err(code) = acl::acl_load_users_at_startup(&mut srv) {
        return code;
    }
    // port 0: no TCP at all (a unix-socket-only server).
    if srv.config.port != 0 {
        if let Err(msg) = listen_to_port(&mut srv) {
            server_log(LogLevel::Warning, &msg);
            // initServer's own line after listenToPort's warning (Redis's
            // test suite matches it to retry on another port).
            let failed = format!(
                "Failed listening on port {} (TCP), aborting.",
                srv.config.port
            );
            if msg != failed {
                server_log(LogLevel::Warning, &failed);
            }
            return 1;
        }
    }
    if let Err(msg) = listen_to_unix_socket(&mut srv) {
        server_log(LogLevel::Warning, &msg);
        return 1;
    }
    if srv.listeners.is_empty() && srv.unix_listener.is_none() {
        server_log(
            LogLevel::Warning,
            "Configured to not listen anywhere, exiting.",
        );
        return 1;
    }
    if background || !srv.config.pidfile.is_empty() {
        server::create_pid_file(&srv.config.pidfile, background);
    }
    server::redis_ascii_art(&srv);
    server::check_tcp_backlog_settings(&srv);
    server_log(LogLevel::Warning, "Server initialized");
    server::linux_memory_warnings(&srv);
    // InitServerLast: jemalloc's background purging, then
    // used_memory_startup, what the empty server holds.
    if let Err(rc) = memory::set_jemalloc_bg_thread(srv.config.boolean("jemalloc-bg-thread")) {
        server_log(
            LogLevel::Warning,
            &format!("Failed to set jemalloc background_thread (error {rc})"),
        );
    }
    srv.initial_memory_usage = memory::used_memory();
    // clusterInit: nodes.conf, the bus port, the slot index (before the
    // data loads, so loaded keys are indexed by slot).
    if let Err(msg) = crate::cluster::cluster_init(&mut srv) {
        server_log(LogLevel::Warning, &msg);
        return 1;
    }
    // `replicaof` in the config: a replica from the start (the load keeps
    // keys that expired on disk); cron connects to the master.
    replication::replica::replication_init_from_config(&mut srv);
    // The AOF when appendonly yes, else the RDB file (aof.rs). The
    // listeners are open already: clients that connect meanwhile are
    // served between chunks and get -LOADING (rdb.rs start_loading).
    aof::load_data_from_disk(&mut srv);
    if !srv.listeners.is_empty() {
        server_log(LogLevel::Notice, "Ready to accept connections");
    }
    if srv.unix_listener.is_some() {
        server_log(
            LogLevel::Notice,
            &format!(
                "The server is now ready to accept connections at {}",
                srv.config.unixsocket
            ),
        );
    }
    if server::supervised_mode() == server::SUPERVISED_SYSTEMD {
        server::redis_communicate_systemd("STATUS=Ready to accept connections\n");
        server::redis_communicate_systemd("READY=1\n");
    }
    ae::ae_main(&mut srv);
    0
}

/// listenToPort: bind every `bind` address. A leading `-` marks an optional
/// address (Redis's `-::*`): failing to bind it because it is not on this
/// host is not an error. An empty `bind` listens on no TCP socket.
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
        match anet_tcp_server(parsed, srv.config.tcp_backlog as i32) {
            Ok(mut l) => {
                let token = Token(srv.listeners.len());
                srv.poll
                    .registry()
                    .register(&mut l, token, Interest::READABLE)
                    .map_err(|e| format!("Could not register listener: {e}"))?;
                srv.listeners.push(l);
            }
            Err(e) => {
                server_log(
                    LogLevel::Warning,
                    &format!(
                        "Warning: Could not create server TCP listening socket {addr}:{port}: bind: {}",
                        config::strerror(&e)
                    ),
                );
                // An optional address that is not on this host, or a
                // family the host has no support for, is skipped.
                let skip = match e.raw_os_error() {
                    Some(libc::EADDRNOTAVAIL) => optional,
                    Some(
                        libc::ENOPROTOOPT
                        | libc::EPROTONOSUPPORT
                        | libc::ESOCKTNOSUPPORT
                        | libc::EPFNOSUPPORT
                        | libc::EAFNOSUPPORT,
                    ) => true,
                    _ => false,
                };
                if !skip {
                    for mut l in std::mem::take(&mut srv.listeners) {
                        let _ = srv.poll.registry().deregister(&mut l);
                    }
                    return Err(format!("Failed listening on port {port} (TCP), aborting."));
                }
            }
        }
    }
    // No address at all (`bind ""`) means no TCP listener, as in Redis;
    // initServer then needs the unix socket.
    Ok(())
}

/// anetTcpServer: a non-blocking listening socket with SO_REUSEADDR (a
/// restarted server can bind while old connections linger in TIME_WAIT),
/// IPV6_V6ONLY for IPv6 (so `*` and `::*` can both bind the port), and
/// listen(2) with `tcp-backlog` (the kernel caps it at somaxconn).
// redis: anet.c anetTcpServer / anetListen
pub fn anet_tcp_server(addr: std::net::SocketAddr, backlog: i32) -> std::io::Result<TcpListener> {
    use std::os::fd::AsRawFd;
    let sock = anet_create_socket(&addr)?;
    let fd = sock.as_raw_fd();
    // Owned by the std listener from here: every error path closes it.
    let listener = std::net::TcpListener::from(sock);
    let one: libc::c_int = 1;
    let sz = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: plain socket calls on the descriptor the listener owns;
    // errors are checked.
    unsafe {
        if addr.is_ipv6() {
            libc::setsockopt(
                fd,
                libc::IPPROTO_IPV6,
                libc::IPV6_V6ONLY,
                &one as *const _ as *const libc::c_void,
                sz,
            );
        }
        let (sa, len) = sockaddr_of(&addr);
        let bound = libc::bind(fd, &sa as *const _ as *const libc::sockaddr, len);
        if bound < 0 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::listen(fd, backlog) < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(TcpListener::from_std(listener))
    }
}

/// anetCreateSocket: a non-blocking, close-on-exec TCP socket of `addr`'s
/// family, with SO_REUSEADDR (a listener can bind while old connections
/// linger in TIME_WAIT; an outgoing link can bind its source address
/// again). The one place both the listeners and the outgoing links
/// (replica -> master, cluster bus) get their sockets.
// redis: anet.c anetCreateSocket
fn anet_create_socket(addr: &std::net::SocketAddr) -> std::io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    let family = if addr.is_ipv6() {
        libc::AF_INET6
    } else {
        libc::AF_INET
    };
    // SAFETY: socket(2) returns a new descriptor that nothing else owns, so
    // wrapping it in an OwnedFd (closed on drop) is sound; setsockopt is
    // given a valid int of the size it is told.
    unsafe {
        let fd = libc::socket(
            family,
            libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        );
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let sock = std::os::fd::OwnedFd::from_raw_fd(fd);
        let one: libc::c_int = 1;
        if libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_REUSEADDR,
            &one as *const _ as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        ) < 0
        {
            return Err(std::io::Error::last_os_error());
        }
        Ok(sock)
    }
}

/// A `SocketAddr` as the C `struct sockaddr` bind(2) and connect(2) take.
fn sockaddr_of(addr: &std::net::SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: sockaddr_storage is plain data, valid zeroed, and large
    // enough for either family's struct written into it.
    unsafe {
        let mut ss: libc::sockaddr_storage = std::mem::zeroed();
        let len = match addr {
            std::net::SocketAddr::V6(v6) => {
                let sa = &mut *(&mut ss as *mut _ as *mut libc::sockaddr_in6);
                sa.sin6_family = libc::AF_INET6 as libc::sa_family_t;
                sa.sin6_port = v6.port().to_be();
                sa.sin6_addr.s6_addr = v6.ip().octets();
                sa.sin6_scope_id = v6.scope_id();
                std::mem::size_of::<libc::sockaddr_in6>()
            }
            std::net::SocketAddr::V4(v4) => {
                let sa = &mut *(&mut ss as *mut _ as *mut libc::sockaddr_in);
                sa.sin_family = libc::AF_INET as libc::sa_family_t;
                sa.sin_port = v4.port().to_be();
                sa.sin_addr.s_addr = u32::from_ne_bytes(v4.ip().octets());
                std::mem::size_of::<libc::sockaddr_in>()
            }
        };
        (ss, len as libc::socklen_t)
    }
}

/// anetTcpNonBlockBestEffortBindConnect: resolve `host`, and for each of
/// its addresses open a non-blocking socket and start connect(2)
/// (EINPROGRESS is the normal answer), the next address when socket() or
/// connect() fails. With `source` (`bind-source-addr`) the socket is first
/// bound to the first address of it that binds; when none does (or nothing
/// connects) the whole attempt is made again without a source address, the
/// "best effort" binding of Redis's replica and cluster links. The error is
/// the text Redis logs after "Unable to connect to MASTER: ".
// redis: anet.c anetTcpGenericConnect (ANET_CONNECT_BE_BINDING)
pub fn anet_tcp_nonblock_bind_connect(
    host: &str,
    port: u16,
    source: Option<&str>,
) -> Result<mio::net::TcpStream, String> {
    match tcp_generic_connect(host, port, source) {
        Err(_) if source.is_some() => tcp_generic_connect(host, port, None),
        done => done,
    }
}

/// One attempt of anetTcpGenericConnect (see above).
fn tcp_generic_connect(
    host: &str,
    port: u16,
    source: Option<&str>,
) -> Result<mio::net::TcpStream, String> {
    use std::net::ToSocketAddrs;
    use std::os::fd::AsRawFd;
    let targets: Vec<std::net::SocketAddr> = match (host, port).to_socket_addrs() {
        Ok(a) => a.collect(),
        Err(e) => return Err(gai_error(&e)),
    };
    let mut last = String::from("no address");
    for target in targets {
        let sock = match anet_create_socket(&target) {
            Ok(sock) => sock,
            Err(e) => {
                last = config::strerror(&e);
                continue;
            }
        };
        let fd = sock.as_raw_fd();
        // Owned by the std stream from here: every early return closes it.
        let stream = std::net::TcpStream::from(sock);
        // SAFETY: plain socket calls on the descriptor the stream owns.
        unsafe {
            if let Some(src) = source {
                let sources = (src, 0).to_socket_addrs().map_err(|e| gai_error(&e))?;
                let mut bound = false;
                let mut err = std::io::Error::from_raw_os_error(libc::EADDRNOTAVAIL);
                for s in sources {
                    let (sa, len) = sockaddr_of(&s);
                    if libc::bind(fd, &sa as *const _ as *const libc::sockaddr, len) == 0 {
                        bound = true;
                        break;
                    }
                    err = std::io::Error::last_os_error();
                }
                if !bound {
                    return Err(format!("bind: {}", config::strerror(&err)));
                }
            }
            let (sa, len) = sockaddr_of(&target);
            if libc::connect(fd, &sa as *const _ as *const libc::sockaddr, len) < 0 {
                let err = std::io::Error::last_os_error();
                if err.raw_os_error() != Some(libc::EINPROGRESS) {
                    last = config::strerror(&err);
                    continue;
                }
            }
            return Ok(mio::net::TcpStream::from_std(stream));
        }
    }
    Err(last)
}

/// A failed name lookup as gai_strerror says it (std prefixes its own words).
fn gai_error(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.strip_prefix("failed to lookup address information: ") {
        Some(rest) => rest.to_string(),
        None => s,
    }
}

/// The `unixsocket` listener (initServer's anetUnixServer): a stale socket
/// file from an earlier run is removed first, `unixsocketperm` applied,
/// `tcp-backlog` used for it too. Failing is fatal, as in Redis.
pub fn listen_to_unix_socket(srv: &mut server::Server) -> Result<(), String> {
    use std::os::fd::AsRawFd;
    let path = srv.config.unixsocket.clone();
    if path.is_empty() {
        return Ok(());
    }
    let _ = std::fs::remove_file(&path);
    let mut l = mio::net::UnixListener::bind(&path)
        .map_err(|e| format!("Failed opening Unix socket: {}", config::strerror(&e)))?;
    // SAFETY: listen(2) again on our own listening socket only changes its
    // backlog (mio bound it with a fixed one).
    unsafe { libc::listen(l.as_raw_fd(), srv.config.tcp_backlog as i32) };
    if srv.config.unixsocketperm != 0 {
        use std::os::unix::fs::PermissionsExt;
        let perm = std::fs::Permissions::from_mode(srv.config.unixsocketperm);
        std::fs::set_permissions(&path, perm)
            .map_err(|e| format!("Failed opening Unix socket: {}", config::strerror(&e)))?;
    }
    srv.poll
        .registry()
        .register(&mut l, server::UNIX_LISTENER_TOKEN, Interest::READABLE)
        .map_err(|e| format!("Could not register the unix socket: {e}"))?;
    srv.unix_listener = Some(l);
    Ok(())
}
