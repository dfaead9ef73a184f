//! Clients and their buffers (Redis's networking.c).
//!
//! A `Client` is one connection: the bytes it sent that are not yet parsed
//! (`querybuf`), the command being run (`argv`), and the reply bytes waiting
//! to be written (`reply`: a static buffer plus a list of reply blocks, as
//! Redis's, see reply_buffer.rs). Nothing here blocks: reads and writes are tried
//! once, and `WouldBlock` simply means "come back on the next event".
//!
//! The path of one request, as in Redis:
//! `read_query_from_client` (one read of up to 16 KB) ->
//! `process_input_buffer` (parse every complete command) ->
//! `server::process_command` -> `server::call` -> the handler, which appends to
//! `reply` with the `add_reply_*` functions -> the client is queued on
//! `clients_pending_write` -> `before_sleep` writes it out
//! (`handle_clients_with_pending_writes`).

use std::io::{self, Write};
use std::net::SocketAddr;
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use mio::net::{TcpStream, UnixStream};
use mio::{Interest, Token};
use protocol::reply;
use protocol::{ParseLimits, RequestParser, Resp};

use crate::config::ClientBufferLimit;
use crate::log::{server_log, LogLevel};
use crate::reply_buffer::{DeferredLen, ReplyBuffer};
use crate::server::{self, Server};
use crate::shared;

/// PROTO_IOBUF_LEN: Redis reads at most 16 KB per readable event.
pub const PROTO_IOBUF_LEN: usize = 16 * 1024;

/// PROTO_MBULK_BIG_ARG: arguments of at least 32 KB are read in one piece.
pub const PROTO_MBULK_BIG_ARG: usize = protocol::request::PROTO_MBULK_BIG_ARG;

/// NET_MAX_WRITES_PER_EVENT: at most 64 KB are written to one client per
/// loop pass, so one huge reply (KEYS * on a big db) cannot starve others.
pub const NET_MAX_WRITES_PER_EVENT: usize = 64 * 1024;

/// PROTO_REPLY_CHUNK_BYTES: the static reply buffer's initial size and the
/// smallest reply block (reply_buffer.rs).
pub use crate::reply_buffer::PROTO_REPLY_CHUNK_BYTES;

// Client flags (server.h CLIENT_*), a plain bit set as in Redis.
/// Close the connection once the pending reply has been written.
pub const CLIENT_CLOSE_AFTER_REPLY: u32 = 1 << 0;
/// Close the connection as soon as possible, without writing more.
pub const CLIENT_CLOSE_ASAP: u32 = 1 << 1;
/// This client receives the MONITOR feed.
pub const CLIENT_MONITOR: u32 = 1 << 2;
/// CLIENT_ASKING: the client sent ASKING; the next command may touch an
/// importing slot (cluster mode). Cleared after that command.
pub const CLIENT_ASKING: u32 = 1 << 27;
/// CLIENT_READONLY: READONLY was sent; a cluster replica serves its
/// reads.
pub const CLIENT_READONLY: u32 = 1 << 28;
/// Already queued on `clients_pending_write`.
pub const CLIENT_PENDING_WRITE: u32 = 1 << 3;
/// Already queued on `clients_pending_read` (its socket may hold more bytes).
pub const CLIENT_PENDING_READ: u32 = 1 << 4;
/// Writable interest is registered with the poller (a write hit WouldBlock).
pub const CLIENT_WRITE_INTEREST: u32 = 1 << 5;
/// Do not send replies (CLIENT REPLY OFF). Pub/sub messages still go out.
pub const CLIENT_REPLY_OFF: u32 = 1 << 6;
/// The client's current command waits for CLIENT PAUSE to end
/// (BLOCKED_POSTPONE): its argv is kept and its input is not read on.
pub const CLIENT_POSTPONED: u32 = 1 << 7;
/// Parked by a blocking command (BLPOP...) until a key gets data or the
/// timeout passes: see blocked.rs.
pub const CLIENT_BLOCKED: u32 = 1 << 8;
/// Between MULTI and EXEC/DISCARD: commands are queued (multi.rs).
pub const CLIENT_MULTI: u32 = 1 << 9;
/// A WATCHed key was touched: the next EXEC fails (multi.rs).
pub const CLIENT_DIRTY_CAS: u32 = 1 << 10;
/// A command failed while queueing: EXEC replies EXECABORT (multi.rs).
pub const CLIENT_DIRTY_EXEC: u32 = 1 << 11;
/// The client may not block (inside MULTI/EXEC or a script): blocking
/// commands behave as their non-blocking forms.
pub const CLIENT_DENY_BLOCKING: u32 = 1 << 12;
/// The fake client Lua scripts and functions run commands through.
pub const CLIENT_SCRIPT: u32 = 1 << 13;
/// Subscribed to at least one channel or pattern (pubsub.rs).
pub const CLIENT_PUBSUB: u32 = 1 << 14;
/// Executing EXEC's queued commands.
pub const CLIENT_EXECUTING_MULTI: u32 = 1 << 15;
/// Do not send the reply of the current command (CLIENT REPLY SKIP)...
pub const CLIENT_REPLY_SKIP: u32 = 1 << 16;
/// ...which becomes CLIENT_REPLY_SKIP for the command after CLIENT REPLY SKIP.
pub const CLIENT_REPLY_SKIP_NEXT: u32 = 1 << 17;
/// A replica attached with SYNC/PSYNC: receives the replication stream
/// (replication/master.rs).
pub const CLIENT_SLAVE: u32 = 1 << 20;
/// The link to our own master: its commands are the replication stream
/// and get no replies (replication/replica.rs).
pub const CLIENT_MASTER: u32 = 1 << 21;
/// CLIENT_PRE_PSYNC: a replica that spoke the old SYNC: no +FULLRESYNC,
/// no offsets, no ACKs (so no repl-timeout either).
pub const CLIENT_PRE_PSYNC: u32 = 1 << 22;

/// mustObeyClient: commands from our master or from the AOF loader are
/// applied as they come (they already happened elsewhere): no limits that
/// could make the result differ.
pub fn must_obey_client(c: &Client) -> bool {
    c.id == crate::aof::CLIENT_ID_AOF || c.has_flag(CLIENT_MASTER)
}

/// Whose connection this is, as CLIENT KILL TYPE / CLIENT LIST see it.
pub struct Client {
    /// CLIENT ID: unique, increasing, never reused.
    pub id: u64,
    /// The poller token of this connection.
    pub token: Token,
    /// The connection; `None` for a fake client (Redis's `createClient(NULL)`)
    /// such as the one Lua scripts run their commands through.
    pub stream: Option<Connection>,
    /// `ip:port` of the peer and of our side (CLIENT LIST addr / laddr).
    pub addr: String,
    pub laddr: String,
    pub fd: i32,
    /// Bytes read but not yet parsed into commands.
    pub querybuf: BytesMut,
    /// Bytes the parser has taken off the front of `querybuf` during the
    /// current process_input_buffer pass (redis: `qb_pos`). Redis trims the
    /// processed commands only when the pass ends, so while a command runs
    /// it is still counted in CLIENT LIST's qbuf; we consume at once (the
    /// arguments are slices of the buffer) and add this back when reporting.
    pub qb_pos: usize,
    /// Peak size of the query buffer (for client_recent_max_input_buffer).
    pub querybuf_peak: usize,
    pub parser: RequestParser,
    /// The command being executed: name and arguments.
    pub argv: Vec<Bytes>,
    /// Reply bytes not yet written to the socket: the static buffer and
    /// the reply list (reply_buffer.rs).
    pub reply: ReplyBuffer,
    /// RESP2 or RESP3 (HELLO).
    pub resp: Resp,
    /// SELECTed database.
    pub db: usize,
    /// CLIENT SETNAME.
    pub name: Option<Bytes>,
    pub flags: u32,
    /// When the connection was accepted and when it last sent a command.
    pub ctime: Instant,
    pub last_interaction: Instant,
    /// Full name of the last command run (CLIENT LIST cmd=).
    pub last_cmd: &'static str,
    /// Errors replied during the current command, as full texts
    /// ("ERR syntax error", "WRONGTYPE Operation ..."; scripts' errors may
    /// hold the code alone); `call()` moves their codes into the error
    /// statistics (Server::note_errors).
    pub errors: Vec<Bytes>,
    /// Total bytes read and written (for INFO net counters).
    pub net_input_bytes: u64,
    pub net_output_bytes: u64,
    /// Whether the client passed AUTH (true from the start while the
    /// default user is `nopass`).
    pub authenticated: bool,
    /// The ACL user the client runs as (acl.rs), by name: `default` until
    /// AUTH/HELLO say otherwise.
    pub user: Bytes,
    /// The arguments as SLOWLOG and MONITOR must show them, when a command
    /// redacted some (AUTH passwords): see `redact_client_command_argument`.
    pub original_argv: Option<Vec<Bytes>>,
    /// When the output buffer first went over the soft limit (unix seconds,
    /// 0 = not over it): see `check_client_output_buffer_limits`.
    pub obuf_soft_limit_reached_time: i64,
    /// What a blocked client waits for (blocked.rs).
    pub bstate: Option<crate::blocked::BlockState>,
    /// While a command runs under CLIENT REPLY OFF/SKIP: the real output
    /// buffer. The command's reply goes to a scratch `reply` that is thrown
    /// away; pub/sub messages go here (`push_buf`), as Redis still sends
    /// them (CLIENT_PUSHING).
    pub reply_stash: Option<ReplyBuffer>,
    /// What this client is subscribed to (pubsub.rs): channels, patterns
    /// and shard channels (CLIENT LIST sub= psub= ssub=).
    pub pubsub_channels: std::collections::HashSet<Bytes>,
    pub pubsub_patterns: std::collections::HashSet<Bytes>,
    pub pubsubshard_channels: std::collections::HashSet<Bytes>,
    /// The commands queued since MULTI (multi.rs).
    pub mstate: crate::multi::MultiState,
    /// The keys this client WATCHes (multi.rs).
    pub watched_keys: Vec<crate::multi::WatchedKey>,
    /// Replication: what a master knows of this replica, or the offsets
    /// of our own master's link (replication/).
    pub repl: crate::replication::ClientRepl,
    /// CLIENT TRACKING state (tracking.rs).
    pub tracking: crate::tracking::ClientTracking,
    /// Client eviction (client_eviction.rs): what the client measured last
    /// time, under which client type it was summed, and its memory usage
    /// bucket (bucket index, insertion number) while it is evictable.
    pub last_memory_usage: usize,
    pub last_memory_type: usize,
    pub mem_usage_bucket: Option<(usize, u64)>,
}

/// A client's socket: TCP or the unix socket (Redis's `connection`, with
/// its socket and unix-socket types). Both are non-blocking byte streams
/// the loop reads, writes and registers the same way.
pub enum Connection {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl std::os::fd::AsRawFd for Connection {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        match self {
            Connection::Tcp(s) => s.as_raw_fd(),
            Connection::Unix(s) => s.as_raw_fd(),
        }
    }
}

impl Write for Connection {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Connection::Tcp(s) => s.write(buf),
            Connection::Unix(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl mio::event::Source for Connection {
    fn register(
        &mut self,
        registry: &mio::Registry,
        token: Token,
        interests: Interest,
    ) -> io::Result<()> {
        match self {
            Connection::Tcp(s) => s.register(registry, token, interests),
            Connection::Unix(s) => s.register(registry, token, interests),
        }
    }
    fn reregister(
        &mut self,
        registry: &mio::Registry,
        token: Token,
        interests: Interest,
    ) -> io::Result<()> {
        match self {
            Connection::Tcp(s) => s.reregister(registry, token, interests),
            Connection::Unix(s) => s.reregister(registry, token, interests),
        }
    }
    fn deregister(&mut self, registry: &mio::Registry) -> io::Result<()> {
        match self {
            Connection::Tcp(s) => s.deregister(registry),
            Connection::Unix(s) => s.deregister(registry),
        }
    }
}

impl Client {
    pub fn new(id: u64, token: Token, stream: TcpStream, peer: SocketAddr) -> Client {
        let laddr = stream
            .local_addr()
            .map(|a| format_addr(&a))
            .unwrap_or_default();
        let fd = raw_fd(&stream);
        let mut c = Client::new_fake(id, token);
        c.stream = Some(Connection::Tcp(stream));
        c.addr = format_addr(&peer);
        c.laddr = laddr;
        c.fd = fd;
        c
    }

    /// A client of the unix socket: CLIENT LIST shows `addr` and `laddr`
    /// as `<socket path>:0` and the `U` flag, as Redis.
    pub fn new_unix(id: u64, token: Token, stream: UnixStream, path: &str) -> Client {
        use std::os::fd::AsRawFd;
        let fd = stream.as_raw_fd();
        let mut c = Client::new_fake(id, token);
        c.stream = Some(Connection::Unix(stream));
        c.addr = format!("{path}:0");
        c.laddr = c.addr.clone();
        c.fd = fd;
        c.flags |= CLIENT_UNIX_SOCKET;
        c
    }

    /// createClient(NULL): a client with no connection. Its replies collect
    /// in `reply` for whoever runs commands through it (a script) to read.
    /// CLIENT LIST shows such clients with fd=-1.
    pub fn new_fake(id: u64, token: Token) -> Client {
        let now = Instant::now();
        Client {
            id,
            token,
            stream: None,
            addr: String::new(),
            laddr: String::new(),
            fd: -1,
            // Empty until the first read reserves 16 KB (Redis: sdsempty()),
            // so 10,000 idle connections do not hold 160 MB of buffers.
            querybuf: BytesMut::new(),
            qb_pos: 0,
            querybuf_peak: 0,
            parser: RequestParser::new(),
            argv: Vec::new(),
            reply: ReplyBuffer::new(PROTO_REPLY_CHUNK_BYTES),
            resp: Resp::V2,
            db: 0,
            name: None,
            flags: 0,
            ctime: now,
            last_interaction: now,
            last_cmd: "NULL",
            errors: Vec::new(),
            net_input_bytes: 0,
            net_output_bytes: 0,
            authenticated: true,
            user: Bytes::from_static(crate::acl::DEFAULT_USER),
            original_argv: None,
            obuf_soft_limit_reached_time: 0,
            bstate: None,
            reply_stash: None,
            pubsub_channels: Default::default(),
            pubsub_patterns: Default::default(),
            pubsubshard_channels: Default::default(),
            mstate: crate::multi::MultiState::default(),
            watched_keys: Vec::new(),
            repl: Default::default(),
            tracking: Default::default(),
            last_memory_usage: 0,
            last_memory_type: crate::config::CLIENT_TYPE_NORMAL,
            mem_usage_bucket: None,
        }
    }

    pub fn has_flag(&self, f: u32) -> bool {
        self.flags & f != 0
    }

    /// Where pub/sub messages for this client go: its output buffer, even
    /// while CLIENT REPLY OFF/SKIP silences the current command's reply.
    pub fn push_buf(&mut self) -> &mut ReplyBuffer {
        match self.reply_stash.as_mut() {
            Some(stash) => stash,
            None => &mut self.reply,
        }
    }

    /// The argument at `i` (0 is the command name).
    pub fn arg(&self, i: usize) -> &[u8] {
        &self.argv[i]
    }

    pub fn argc(&self) -> usize {
        self.argv.len()
    }

    /// redactClientCommandArgument: show argument `i` as "(redacted)" in
    /// SLOWLOG and MONITOR (AUTH and HELLO ... AUTH passwords).
    pub fn redact_client_command_argument(&mut self, i: usize) {
        let argv = self.original_argv.get_or_insert_with(|| self.argv.clone());
        if i < argv.len() {
            argv[i] = Bytes::from_static(b"(redacted)");
        }
    }

    // ---- add_reply_*: append one reply to the output buffer (addReply*). ----

    /// After a reply element went into the buffer (_addReplyProtoToList):
    /// once the reply list has blocks, check the output buffer limits *while*
    /// the reply is being built, so one huge reply (KEYS *, LRANGE 0 -1)
    /// to a client over its hard limit stops growing at once instead of
    /// after the command. A client already marked for closing gets nothing
    /// more (prepareClientToWrite refuses it): what it holds is dropped,
    /// as it would never be written.
    #[inline]
    fn reply_added(&mut self) {
        if self.reply.list_len() == 0 {
            return;
        }
        if self.has_flag(CLIENT_CLOSE_ASAP) {
            self.reply.clear();
            return;
        }
        // A fake client (scripts) is never closed: Redis skips clients
        // without a connection ("unsafe to free fake clients").
        if self.stream.is_some() {
            let limits = REPLY_OBUF_LIMITS.with(|l| l.get());
            if close_client_on_output_buffer_limit_reached(&limits, self) {
                self.reply.clear();
            }
        }
    }

    /// addReplyDeferredLen: room for an aggregate's header whose count is
    /// known only after its elements are written (set_deferred_*_len).
    pub fn add_reply_deferred_len(&mut self) -> DeferredLen {
        self.reply.add_deferred_len()
    }

    /// setDeferredArrayLen: `*<n>` where the placeholder is.
    pub fn set_deferred_array_len(&mut self, d: DeferredLen, n: usize) {
        let mut head = BytesMut::new();
        reply::array_len(&mut head, n);
        self.reply.set_deferred(d, &head);
        self.reply_added();
    }

    /// setDeferredMapLen: `%<pairs>` in RESP3, `*<2*pairs>` in RESP2.
    pub fn set_deferred_map_len(&mut self, d: DeferredLen, pairs: usize) {
        let mut head = BytesMut::new();
        reply::map_len(&mut head, pairs, self.resp);
        self.reply.set_deferred(d, &head);
        self.reply_added();
    }

    /// setDeferredSetLen: `~<n>` in RESP3, `*<n>` in RESP2.
    pub fn set_deferred_set_len(&mut self, d: DeferredLen, n: usize) {
        let mut head = BytesMut::new();
        reply::set_len(&mut head, n, self.resp);
        self.reply.set_deferred(d, &head);
        self.reply_added();
    }

    pub fn add_reply_ok(&mut self) {
        self.reply.extend_from_slice(b"+OK\r\n");
    }

    pub fn add_reply_status(&mut self, s: &[u8]) {
        reply::simple(&mut self.reply, s);
        self.reply_added();
    }

    /// addReplyError: `msg` is the full text starting with its code, e.g.
    /// "ERR syntax error" or "WRONGTYPE Operation against ...". It is
    /// remembered for INFO errorstats (and the unexpected-error log).
    pub fn add_reply_error(&mut self, msg: &str) {
        self.add_reply_error_bytes(msg.as_bytes());
    }

    pub fn add_reply_error_bytes(&mut self, msg: &[u8]) {
        let msg = msg.strip_prefix(b"-").unwrap_or(msg);
        self.errors.push(Bytes::copy_from_slice(msg));
        reply::error(&mut self.reply, msg);
    }

    pub fn add_reply_syntax_error(&mut self) {
        self.add_reply_error(shared::SYNTAX_ERR);
    }

    pub fn add_reply_wrongtype(&mut self) {
        self.add_reply_error(shared::WRONGTYPE_ERR);
    }

    pub fn add_reply_integer(&mut self, i: i64) {
        reply::integer(&mut self.reply, i);
        self.reply_added();
    }

    pub fn add_reply_bulk(&mut self, b: &[u8]) {
        reply::bulk(&mut self.reply, b);
        self.reply_added();
    }

    pub fn add_reply_bulk_i64(&mut self, i: i64) {
        reply::bulk_i64(&mut self.reply, i);
        self.reply_added();
    }

    pub fn add_reply_null(&mut self) {
        reply::null(&mut self.reply, self.resp);
    }

    pub fn add_reply_null_array(&mut self) {
        reply::null_array(&mut self.reply, self.resp);
    }

    pub fn add_reply_array_len(&mut self, n: usize) {
        reply::array_len(&mut self.reply, n);
    }

    pub fn add_reply_map_len(&mut self, pairs: usize) {
        reply::map_len(&mut self.reply, pairs, self.resp);
    }

    pub fn add_reply_set_len(&mut self, n: usize) {
        reply::set_len(&mut self.reply, n, self.resp);
    }

    pub fn add_reply_double(&mut self, d: f64) {
        reply::double(&mut self.reply, d, self.resp);
        self.reply_added();
    }

    pub fn add_reply_bool(&mut self, b: bool) {
        reply::boolean(&mut self.reply, b, self.resp);
    }

    pub fn add_reply_verbatim(&mut self, text: &[u8]) {
        reply::verbatim(&mut self.reply, text, self.resp);
        self.reply_added();
    }

    /// addReplyHelp: the `<CMD> <subcommand> ...` header, the lines, and the
    /// HELP line Redis appends to every help text.
    pub fn add_reply_help(&mut self, cmd: &str, lines: &[&str]) {
        self.add_reply_array_len(lines.len() + 3);
        let header = format!(
            "{} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            cmd.to_uppercase()
        );
        self.add_reply_status(header.as_bytes());
        for l in lines {
            self.add_reply_status(l.as_bytes());
        }
        self.add_reply_status(b"HELP");
        self.add_reply_status(b"    Prints this help.");
    }

    /// addReplySubcommandSyntaxError.
    pub fn add_reply_subcommand_syntax_error(&mut self) {
        let cmd = String::from_utf8_lossy(self.arg(0)).to_uppercase();
        let sub = String::from_utf8_lossy(self.arg(1)).into_owned();
        let sub: String = sub.chars().take(128).collect();
        self.add_reply_error(&format!(
            "ERR unknown subcommand or wrong number of arguments for '{sub}'. Try {cmd} HELP."
        ));
    }
}

/// `ip:port`, with IPv6 in brackets, as Redis's connFormatAddr.
pub fn format_addr(a: &SocketAddr) -> String {
    match a {
        SocketAddr::V4(v4) => format!("{}:{}", v4.ip(), v4.port()),
        SocketAddr::V6(v6) => format!("[{}]:{}", v6.ip(), v6.port()),
    }
}

fn raw_fd(stream: &TcpStream) -> i32 {
    use std::os::fd::AsRawFd;
    stream.as_raw_fd()
}

/// readQueryFromClient: one read of up to PROTO_IOBUF_LEN bytes, then run
/// every complete command in the buffer.
///
/// Redis's epoll is level-triggered, so a client with more bytes waiting is
/// simply reported again on the next loop pass. mio is edge-triggered: a
/// read that filled the whole 16 KB may have left bytes in the socket, so the
/// client goes on `clients_pending_read` and the loop reads it again next
/// pass without sleeping. Same fairness as Redis: a pipelining client gets
/// about 16 KB of commands per pass, interleaved with everybody else.
pub fn read_query_from_client(srv: &mut Server, c: &mut Client) {
    let old_len = c.querybuf.len();
    let master = c.has_flag(CLIENT_MASTER);
    // Normally 16 KB. For a big argument (>= 32 KB) being received, read
    // exactly what is still missing of it, so the buffer ends where the
    // argument does (readQueryFromClient's PROTO_MBULK_BIG_ARG case); the
    // master's stream reads at least 16 KB.
    let mut readlen = PROTO_IOBUF_LEN;
    let mut big_arg = false;
    if let Some(bulklen) = c.parser.pending_bulk_len() {
        if bulklen >= PROTO_MBULK_BIG_ARG {
            big_arg = true;
            let remaining = (bulklen + 2).saturating_sub(old_len);
            if remaining > 0 {
                readlen = remaining;
            }
            if master && readlen < PROTO_IOBUF_LEN {
                readlen = PROTO_IOBUF_LEN;
            }
        }
    }
    // A big argument, or a first allocation: exactly the room wanted. Else
    // sds's greedy growth, and read all the room there is.
    if !master && (big_arg || c.querybuf.capacity() < PROTO_IOBUF_LEN) {
        querybuf_make_room_non_greedy(&mut c.querybuf, readlen);
    } else {
        querybuf_make_room_greedy(&mut c.querybuf, readlen);
        readlen = c.querybuf.capacity() - c.querybuf.len();
    }
    let Some(stream) = c.stream.as_mut() else {
        return;
    };
    let res = read_into_spare_capacity(stream, &mut c.querybuf, readlen);
    // Redis counts every read its readable event triggers, the one that
    // finds the connection closed included; a WouldBlock is mio's edge-
    // triggered extra look (see above), which Redis never makes.
    if !matches!(&res, Err(e) if e.kind() == io::ErrorKind::WouldBlock) {
        srv.stats.total_reads_processed += 1;
    }
    match res {
        Ok(0) => {
            // One line with the client's CLIENT LIST fields, as Redis's.
            if crate::log::verbosity_at_most(LogLevel::Verbose) {
                let info = client_info_string(c);
                server_log(
                    LogLevel::Verbose,
                    &format!(
                        "Client closed connection {}",
                        String::from_utf8_lossy(&info)
                    ),
                );
            }
            c.flags |= CLIENT_CLOSE_ASAP;
            return;
        }
        Ok(n) => {
            c.net_input_bytes += n as u64;
            // Our master's stream counts as replication traffic.
            if c.has_flag(CLIENT_MASTER) {
                c.repl.read_reploff += n as i64;
                srv.stats.net_repl_input_bytes += n as u64;
            } else {
                srv.stats.net_input_bytes += n as u64;
            }
            if n == readlen {
                // There may be more in the socket: come back next pass.
                c.flags |= CLIENT_PENDING_READ;
            }
        }
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
        Err(e) if e.kind() == io::ErrorKind::Interrupted => {
            c.flags |= CLIENT_PENDING_READ;
            return;
        }
        Err(e) => {
            server_log(LogLevel::Verbose, &format!("Reading from client: {e}"));
            c.flags |= CLIENT_CLOSE_ASAP;
            return;
        }
    }
    c.last_interaction = Instant::now();
    c.querybuf_peak = c.querybuf_peak.max(c.querybuf.len());

    // client-query-buffer-limit: a client that sends an endless command is
    // closed without a reply (Redis logs it and frees the client).
    // A big argument announced past the limit is refused at once too, before
    // its bytes arrive (the `c->bulklen` half of Redis's check).
    let limit = srv.config.client_query_buffer_limit;
    let big_bulk = c
        .parser
        .pending_bulk_len()
        .is_some_and(|b| b >= PROTO_MBULK_BIG_ARG && b as u64 > limit);
    // The master's stream is never cut.
    if (c.querybuf.len() as u64 > limit || big_bulk) && !c.has_flag(CLIENT_MASTER) {
        // The client's CLIENT LIST line and the first 64 bytes, quoted as
        // sdscatrepr quotes them.
        let info = client_info_string(c);
        let mut head = BytesMut::new();
        crate::monitor::cat_repr(&mut head, &c.querybuf[..c.querybuf.len().min(64)]);
        server_log(
            LogLevel::Warning,
            &format!(
                "Closing client that reached max query buffer length: {} (qbuf initial bytes: {})",
                String::from_utf8_lossy(&info),
                String::from_utf8_lossy(&head)
            ),
        );
        c.flags |= CLIENT_CLOSE_ASAP;
        return;
    }
    process_input_buffer(srv, c);
}

/// The room (sdsalloc) of an sds grown to hold `newlen` bytes: its header
/// (by that length, never sdshdr5), the bytes and the NUL come from one
/// jemalloc size class, and all of the class is room, up to what the header
/// type can count (sdsMakeRoomFor's `usable - hdrlen - 1`). Sizing the query
/// buffer the same way makes CLIENT LIST's qbuf-free and client eviction's
/// measure Redis's numbers.
pub fn sds_room_for(newlen: usize) -> usize {
    let hdr = crate::object::sds_hdr_size(newlen).max(3);
    let type_max = match hdr {
        3 => 0xff,
        5 => 0xffff,
        9 => 0xffff_ffff,
        _ => usize::MAX,
    };
    (crate::object::jemalloc_size_class(hdr + newlen + 1) - hdr - 1).min(type_max)
}

/// The allocation behind a query buffer of `room` bytes (sdsZmallocSize).
pub fn querybuf_alloc_size(buf: &BytesMut) -> usize {
    crate::object::sds_zmalloc_size(buf.len(), buf.capacity())
}

/// Move `buf`'s bytes into a new buffer with exactly `room` bytes of room.
fn querybuf_realloc(buf: &mut BytesMut, room: usize) {
    let mut grown = BytesMut::with_capacity(room);
    grown.extend_from_slice(buf);
    *buf = grown;
}

/// sdsMakeRoomForNonGreedy: room for `addlen` more bytes and no more.
fn querybuf_make_room_non_greedy(buf: &mut BytesMut, addlen: usize) {
    if buf.capacity() - buf.len() >= addlen {
        return;
    }
    querybuf_realloc(buf, sds_room_for(buf.len() + addlen));
}

/// sdsMakeRoomFor: room for `addlen` more bytes, doubling the needed size
/// below 1 MB (SDS_MAX_PREALLOC) and adding 1 MB above it.
fn querybuf_make_room_greedy(buf: &mut BytesMut, addlen: usize) {
    const SDS_MAX_PREALLOC: usize = 1024 * 1024;
    if buf.capacity() - buf.len() >= addlen {
        return;
    }
    let need = buf.len() + addlen;
    let newlen = if need < SDS_MAX_PREALLOC {
        need * 2
    } else {
        need + SDS_MAX_PREALLOC
    };
    querybuf_realloc(buf, sds_room_for(newlen));
}

/// One read(2) of at most `len` bytes appended to `buf`, like Redis's
/// connRead into the free space of its sds query buffer: the bytes land in
/// the buffer's spare capacity, without zero-filling it first.
fn read_into_spare_capacity(
    stream: &mut Connection,
    buf: &mut BytesMut,
    len: usize,
) -> io::Result<usize> {
    use std::os::fd::AsRawFd;
    let spare = buf.spare_capacity_mut();
    let len = len.min(spare.len());
    // SAFETY: read(2) writes at most `len` bytes into memory we own (the
    // spare capacity), and only the `n` bytes it reports are then marked
    // initialised by set_len.
    let n = unsafe {
        libc::read(
            stream.as_raw_fd(),
            spare.as_mut_ptr() as *mut libc::c_void,
            len,
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let n = n as usize;
    // SAFETY: the first n bytes of the spare capacity were just written.
    unsafe { buf.set_len(buf.len() + n) };
    Ok(n)
}

/// processInputBuffer: parse and run every complete command in the query
/// buffer. Stops at a partial command, or when the client is to be closed.
pub fn process_input_buffer(srv: &mut Server, c: &mut Client) {
    let fat_arg = process_commands_in_buffer(srv, c);
    // Trim the processed commands (Redis: sdsrange(querybuf, qb_pos, -1)).
    // Their bytes already left the front of the buffer; when no argument
    // points into it any more, the leftover partial command slides back to
    // the start and the whole allocation is free again. If something still
    // holds a slice of it (a client name, a blocked command's argv, a big
    // value kept as it was read), a fresh buffer: after an argument that
    // was the whole buffer, one as big (Redis assumes another fat argument
    // follows), else a read buffer of the usual size (sdsrange would keep
    // the allocation; a big one the cron would trim anyway).
    if c.qb_pos > 0 {
        let free = c.querybuf.capacity() - c.querybuf.len();
        if !c.querybuf.try_reclaim(free + c.qb_pos) {
            let room = match fat_arg {
                Some(n) => sds_room_for(n),
                None => (c.querybuf.capacity() + c.qb_pos)
                    .min(sds_room_for(c.querybuf.len() + PROTO_IOBUF_LEN)),
            };
            querybuf_realloc(&mut c.querybuf, room);
        }
        c.qb_pos = 0;
    }
    // A big argument on its way (its `$<len>` line read): room for all of
    // it now, so it arrives in one piece and becomes the argument as it is
    // (processMultibulkBuffer's PROTO_MBULK_BIG_ARG hint). Its length is at
    // most proto-max-bulk-len, and one past client-query-buffer-limit
    // closes the client at the next read. Not for our master, whose buffer
    // also feeds the replication stream.
    if !c.has_flag(CLIENT_MASTER) {
        if let Some(bulklen) = c.parser.pending_bulk_len() {
            if bulklen >= PROTO_MBULK_BIG_ARG && c.querybuf.len() <= bulklen + 2 {
                let missing = bulklen + 2 - c.querybuf.len();
                querybuf_make_room_non_greedy(&mut c.querybuf, missing);
            }
        }
    }
    // Measure the client again (client eviction): a big argument still
    // arriving grows the query buffer without any command running.
    crate::client_eviction::update_client_mem_usage(srv, c);
}

/// The loop of processInputBuffer. Every byte the parser takes is counted in
/// `qb_pos`, so CLIENT LIST run from here still sees its own command.
/// Returns the size (with its CRLF) of a big argument that filled the whole
/// buffer and was taken from it, if one was.
fn process_commands_in_buffer(srv: &mut Server, c: &mut Client) -> Option<usize> {
    let mut fat_arg = None;
    loop {
        if c.has_flag(
            CLIENT_CLOSE_AFTER_REPLY | CLIENT_CLOSE_ASAP | CLIENT_POSTPONED | CLIENT_BLOCKED,
        ) {
            break;
        }
        let limits = ParseLimits {
            proto_max_bulk_len: srv.config.proto_max_bulk_len,
            // The tight pre-auth limits apply only while AUTH is required.
            authenticated: !auth_required(srv, c),
        };
        let before = c.querybuf.len();
        // A big argument that is all the buffer holds is taken whole
        // (Redis makes the sds itself the argument).
        let fat = c
            .parser
            .pending_bulk_len()
            .filter(|&b| b >= PROTO_MBULK_BIG_ARG && before == b + 2);
        let parsed = c.parser.next_command(&mut c.querybuf, &limits);
        if fat.is_some() && c.querybuf.is_empty() {
            fat_arg = fat.map(|b| b + 2);
        }
        c.qb_pos += before.saturating_sub(c.querybuf.len());
        match parsed {
            Ok(None) => break,
            Ok(Some(argv)) => {
                if argv.is_empty() {
                    continue; // empty request: Redis ignores it, no reply
                }
                c.argv = argv;
                if c.has_flag(CLIENT_MASTER) {
                    // The replication stream (replication/replica.rs).
                    crate::replication::replica::process_master_command(srv, c);
                } else {
                    // A replica's link carries our stream, never replies.
                    let replica = c.has_flag(CLIENT_SLAVE) && !c.has_flag(CLIENT_MONITOR);
                    let mark = c.reply.len();
                    process_command_maybe_silenced(srv, c);
                    if replica && c.reply.len() > mark {
                        replica_generated_reply(srv, c, mark);
                        break;
                    }
                    // processCommandAndResetClient: the reply may have
                    // grown the output buffer (client eviction).
                    crate::client_eviction::update_client_mem_usage(srv, c);
                }
                // checkClientOutputBufferLimits' cap for clients that still
                // have to AUTH: Redis counts only the reply list, whose first
                // block alone is over its 1024 bytes, so such a client may
                // not queue more than the static reply buffer. One that
                // pipelines without reading is dropped, nothing written.
                if auth_required(srv, c) && c.reply.output_memory() > 1024 {
                    server_log(
                        LogLevel::Warning,
                        &format!(
                            "Client id={} addr={} laddr={} fd={} name= omem={} cmd={} scheduled to be closed ASAP for overcoming of output buffer limits.",
                            c.id, c.addr, c.laddr, c.fd, c.reply.output_memory(), c.last_cmd
                        ),
                    );
                    c.flags |= CLIENT_CLOSE_ASAP;
                    break;
                }
                if c.has_flag(CLIENT_POSTPONED | CLIENT_BLOCKED) {
                    break; // the command waits (PAUSE, BLPOP), so does the rest
                }
                c.argv.clear();
                reset_client_reply_skip(c);
                // resetClient: ASKING is good for one command (or one
                // transaction).
                if !c.has_flag(CLIENT_MULTI) && c.last_cmd != "asking" {
                    c.flags &= !CLIENT_ASKING;
                }
                crate::tracking::reset_client_caching(c);
            }
            Err(e) => {
                // setProtocolError: reply, stop executing, close after the
                // reply is written. The rest of the buffer is dropped.
                // to_bytes, not Display: the "got 'X'" byte may be non-UTF-8.
                c.add_reply_error_bytes(&e.to_bytes());
                // Logged after the error reply is queued, as Redis (obl counts it).
                if crate::log::verbosity_at_most(LogLevel::Verbose) {
                    let info = client_info_string(c);
                    server_log(
                        LogLevel::Verbose,
                        &format!(
                            "Protocol error ({}) from client: {}. {}",
                            e.log_reason(),
                            String::from_utf8_lossy(&info),
                            protocol_error_sample(&c.querybuf)
                        ),
                    );
                }
                srv.note_errors(c);
                c.flags |= CLIENT_CLOSE_AFTER_REPLY;
                c.querybuf.clear();
                break;
            }
        }
    }
    fat_arg
}

/// A replica sent a command that replied (a rogue replica, or a client
/// that sent SYNC and then commands): the reply would corrupt the stream,
/// so it is dropped and the replica closed (_addReplyToBufferOrList's
/// logInvalidUseAndFreeClientAsync).
fn replica_generated_reply(srv: &mut Server, c: &mut Client, mark: usize) {
    c.reply.truncate(mark);
    let info = client_info_string(c);
    server_log(
        LogLevel::Warning,
        &format!(
            "Replica generated a reply to command '{}', disconnecting it: {}",
            c.last_cmd,
            String::from_utf8_lossy(&info)
        ),
    );
    c.flags |= CLIENT_CLOSE_ASAP;
    srv.clients_to_close.push(c.token);
}

/// process_command, with CLIENT REPLY OFF/SKIP applied: Redis's
/// prepareClientToWrite refuses to add replies for such a client, so here the
/// command writes into a scratch buffer that is dropped. A command that turns
/// replies back on (CLIENT REPLY ON) keeps its reply.
pub fn process_command_maybe_silenced(srv: &mut Server, c: &mut Client) {
    if !c.has_flag(CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP) {
        return server::process_command(srv, c);
    }
    c.reply_stash = Some(std::mem::replace(&mut c.reply, ReplyBuffer::unbuffered()));
    server::process_command(srv, c);
    let scratch = std::mem::replace(&mut c.reply, c.reply_stash.take().unwrap_or_default());
    if !c.has_flag(CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP) {
        c.reply.append(&scratch);
    }
}

/// resetClient's part for CLIENT REPLY SKIP: a command is done (run, or a
/// blocked one served or timed out), so the skip is spent, and a CLIENT
/// REPLY SKIP just run arms it for the next command.
pub fn reset_client_reply_skip(c: &mut Client) {
    c.flags &= !CLIENT_REPLY_SKIP;
    if c.has_flag(CLIENT_REPLY_SKIP_NEXT) {
        c.flags = (c.flags | CLIENT_REPLY_SKIP) & !CLIENT_REPLY_SKIP_NEXT;
    }
}

/// A reply written outside process_command (a blocked command's time-out
/// or CLIENT UNBLOCK) under CLIENT REPLY OFF/SKIP is dropped, as Redis's
/// prepareClientToWrite would refuse it.
pub fn add_reply_unless_silenced(c: &mut Client, add: impl FnOnce(&mut Client)) {
    let mark = c.reply.len();
    add(c);
    if c.has_flag(CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP) {
        c.reply.truncate(mark);
    }
}

/// CLIENT REPLY ON|OFF|SKIP
// redis: networking.c clientCommand ("reply")
pub fn client_reply_command(_srv: &mut Server, c: &mut Client) {
    let mode = c.arg(2);
    if mode.eq_ignore_ascii_case(b"on") {
        c.flags &= !(CLIENT_REPLY_SKIP | CLIENT_REPLY_OFF);
        c.add_reply_ok();
    } else if mode.eq_ignore_ascii_case(b"off") {
        c.flags |= CLIENT_REPLY_OFF;
    } else if mode.eq_ignore_ascii_case(b"skip") {
        if !c.has_flag(CLIENT_REPLY_OFF) {
            c.flags |= CLIENT_REPLY_SKIP_NEXT;
        }
    } else {
        c.add_reply_syntax_error();
    }
}

/// writeToClient: write as much of the pending reply as the socket takes,
/// at most NET_MAX_WRITES_PER_EVENT bytes unless the client is a monitor
/// (Redis treats monitors like replicas: uncapped).
/// Returns Err only when the connection is broken.
pub fn write_to_client(srv: &mut Server, c: &mut Client) -> io::Result<()> {
    let res = write_to_client_inner(srv, c);
    // Measure the client after writing (client eviction): what left the
    // buffer no longer counts.
    if res.is_ok() {
        crate::client_eviction::update_client_mem_usage(srv, c);
    }
    res
}

fn write_to_client_inner(srv: &mut Server, c: &mut Client) -> io::Result<()> {
    if c.stream.is_none() {
        // A fake client keeps its reply for the caller to read.
        return Ok(());
    }
    // A replica gets nothing before its RDB, and the RDB itself in
    // SEND_BULK (replication/master.rs).
    if crate::replication::master::slave_stream_on_hold(c)
        && !crate::replication::master::write_to_slave_not_online(srv, c)?
    {
        return Ok(());
    }
    let to_replica = get_client_type(c) == crate::config::CLIENT_TYPE_SLAVE;
    let Some(stream) = c.stream.as_mut() else {
        return Ok(());
    };
    use std::os::fd::AsRawFd;
    let fd = stream.as_raw_fd();
    let mut written = 0usize;
    let mut socket_full = false;
    // Redis's cap spares replicas only, and a MONITOR is one by its flags.
    let cap = if c.flags & (CLIENT_MONITOR | CLIENT_SLAVE) != 0 {
        usize::MAX
    } else {
        NET_MAX_WRITES_PER_EVENT
    };
    // writeToClient's loop: one writev of the static buffer and the first
    // blocks per turn (_writevToClient), until nothing is left, the socket
    // is full (WouldBlock: the kernel's buffer took all it can; control
    // flow, not an error) or more than the cap went out. The cap is
    // fairness: a client that asked for a 1 GB reply must not keep the
    // single thread writing while everybody else waits; the rest goes out
    // on later passes.
    while !c.reply.is_empty() {
        match c.reply.write_to(fd) {
            Ok(0) => return Err(io::Error::from(io::ErrorKind::WriteZero)),
            Ok(n) => written += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                socket_full = true;
                break;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
        if written > cap {
            break;
        }
    }
    if written > 0 {
        c.net_output_bytes += written as u64;
        // The stream to a replica counts as replication traffic (a MONITOR
        // is a replica by its flags, but not by its type).
        if to_replica {
            srv.stats.net_repl_output_bytes += written as u64;
        } else {
            srv.stats.net_output_bytes += written as u64;
        }
        srv.stats.total_writes_processed += 1;
    }
    if c.reply.is_empty() {
        // Every written block was freed as it went out; the static buffer
        // is resized by the client cron only.
        if c.flags & CLIENT_WRITE_INTEREST != 0 {
            // Nothing left: stop asking for writable events.
            srv.poll
                .registry()
                .reregister(stream, c.token, Interest::READABLE)?;
            c.flags &= !CLIENT_WRITE_INTEREST;
        }
        if c.has_flag(CLIENT_CLOSE_AFTER_REPLY) {
            c.flags |= CLIENT_CLOSE_ASAP;
        }
    } else if socket_full {
        // The kernel's buffer is full: let the poller tell us when it can
        // take more (Redis installs a write handler).
        if c.flags & CLIENT_WRITE_INTEREST == 0 {
            srv.poll.registry().reregister(
                stream,
                c.token,
                Interest::READABLE | Interest::WRITABLE,
            )?;
            c.flags |= CLIENT_WRITE_INTEREST;
        }
    } else {
        // We stopped at the 64 KB per-pass cap with the socket still
        // writable. Redis's level-triggered write handler would fire on the
        // very next pass; here the client stays queued and the loop does
        // not sleep (`clients_write_capped`), so others get their turn in
        // between and the big reply keeps flowing.
        srv.clients_write_capped = true;
    }
    Ok(())
}

/// getClientType for output buffer limits: MONITOR clients count as
/// `normal` (Redis flags them as replicas but exposes them as normal); a
/// subscribed client uses the `pubsub` class.
pub fn get_client_type(c: &Client) -> usize {
    if c.has_flag(CLIENT_SLAVE) && !c.has_flag(CLIENT_MONITOR) {
        return crate::config::CLIENT_TYPE_SLAVE;
    }
    if c.has_flag(CLIENT_PUBSUB) {
        return crate::config::CLIENT_TYPE_PUBSUB;
    }
    crate::config::CLIENT_TYPE_NORMAL
}

/// checkClientOutputBufferLimits: true when the pending output is over the
/// hard limit of the client's class, or has stayed over the soft limit for
/// longer than the soft limit's seconds. 0 disables a limit.
pub fn check_client_output_buffer_limits(limits: &[ClientBufferLimit; 3], c: &mut Client) -> bool {
    // getClientOutputBufferMemoryUsage: the reply list, not the static
    // buffer.
    let used = c.reply.output_memory() as u64;
    let limit = &limits[get_client_type(c)];
    let hard = limit.hard_limit_bytes > 0 && used >= limit.hard_limit_bytes;
    let mut soft = limit.soft_limit_bytes > 0 && used >= limit.soft_limit_bytes;
    if soft {
        let now = crate::server::mstime() / 1000;
        if c.obuf_soft_limit_reached_time == 0 {
            c.obuf_soft_limit_reached_time = now;
            soft = false; // the clock starts now
        } else if now - c.obuf_soft_limit_reached_time <= limit.soft_limit_seconds {
            soft = false; // not for long enough yet
        }
    } else {
        c.obuf_soft_limit_reached_time = 0;
    }
    hard || soft
}

/// closeClientOnOutputBufferLimitReached: schedule the client for closing
/// (without writing the rest) when it is over its output limits. This is
/// what keeps memory bounded when a MONITOR or a slow reader stops reading.
/// `limits` is `srv.config.client_output_buffer_limit` (passed alone so the
/// caller can hold another client of `srv.clients` at the same time).
pub fn close_client_on_output_buffer_limit_reached(
    limits: &[ClientBufferLimit; 3],
    c: &mut Client,
) -> bool {
    if c.reply.is_empty() || c.has_flag(CLIENT_CLOSE_ASAP) {
        return false;
    }
    if !check_client_output_buffer_limits(limits, c) {
        return false;
    }
    // The whole CLIENT LIST line (catClientInfoString), as Redis logs it.
    // A command still running shows under its name (process_command set
    // last_cmd before calling it, as Redis sets c->lastcmd).
    let info = client_info_string(c);
    server_log(
        LogLevel::Warning,
        &format!(
            "Client {} scheduled to be closed ASAP for overcoming of output buffer limits.",
            String::from_utf8_lossy(&info)
        ),
    );
    c.flags |= CLIENT_CLOSE_ASAP;
    true
}

thread_local! {
    /// The client-output-buffer-limit classes as the last config change
    /// set them (config.rs sync_typed), for the check inside add_reply_*,
    /// which only has the client at hand.
    static REPLY_OBUF_LIMITS: std::cell::Cell<[ClientBufferLimit; 3]> =
        const { std::cell::Cell::new(crate::config::CLIENT_BUFFER_LIMITS_DEFAULTS) };
}

/// The hard output limit of the client's class (0: none).
pub fn reply_hard_limit(c: &Client) -> u64 {
    REPLY_OBUF_LIMITS.with(|l| l.get()[get_client_type(c)].hard_limit_bytes)
}

/// Publish the output buffer limits to the reply-building check.
pub fn set_reply_obuf_limits(limits: [ClientBufferLimit; 3]) {
    REPLY_OBUF_LIMITS.with(|l| l.set(limits));
}

/// connIsLocal: the peer is exactly 127.0.0.1 or ::1 (or a unix socket,
/// which redis-lite does not listen on). Not every 127.* address: Redis
/// compares the address text with "127.0.0.1" and "::1" only.
// redis: networking.c islocalClient (connIsLocal in later versions)
pub fn conn_is_local(c: &Client) -> bool {
    if c.has_flag(CLIENT_UNIX_SOCKET) {
        return true;
    }
    let peer = match c.stream.as_ref() {
        Some(Connection::Tcp(s)) => s.peer_addr().ok(),
        _ => None,
    };
    match peer {
        Some(peer) => is_local_addr(&peer.ip()),
        None => false,
    }
}

/// The address test of connIsLocal, on its own for unit tests.
pub fn is_local_addr(ip: &std::net::IpAddr) -> bool {
    match ip {
        std::net::IpAddr::V4(v4) => *v4 == std::net::Ipv4Addr::LOCALHOST,
        // An IPv4-mapped ::ffff:127.0.0.1 prints as such, not "::1".
        std::net::IpAddr::V6(v6) => *v6 == std::net::Ipv6Addr::LOCALHOST,
    }
}

/// getClientOutputBufferMemoryUsage: the reply list's blocks and entries
/// (omem in CLIENT LIST, what the output buffer limits compare).
pub fn client_output_memory(c: &Client) -> usize {
    c.reply.output_memory()
}

// ---- Connection commands (networking.c, server.c, acl.c) ----
//
// QUIT, RESET, HELLO, AUTH and the CLIENT subcommands. They only touch the
// calling client, except CLIENT LIST (reads every client) and CLIENT KILL
// (marks other clients for closing). One subtlety runs through both: while a
// command runs, its client is NOT in `srv.clients` (networking.rs handle_client_readable takes it out and
// hands it to us as `c`), so every walk over the clients merges `c` back in.

/// CLIENT_NO_EVICT: CLIENT NO-EVICT ON; shows as `e` in CLIENT LIST. A high
/// bit so it cannot collide with the flags declared at the top of the file.
pub const CLIENT_NO_EVICT: u32 = 1 << 24;
/// CLIENT_UNIX_SOCKET: connected over `unixsocket` (always local).
pub const CLIENT_UNIX_SOCKET: u32 = 1 << 18;

/// authRequired (acl.rs): kept here for the callers in this file.
pub fn auth_required(srv: &Server, c: &Client) -> bool {
    crate::acl::auth_required(srv, c)
}

/// QUIT
// redis: networking.c quitCommand (7.0: any arguments are ignored)
pub fn quit_command(_srv: &mut Server, c: &mut Client) {
    c.add_reply_ok();
    c.flags |= CLIENT_CLOSE_AFTER_REPLY;
}

/// RESET
// redis: networking.c resetCommand -> clearClientConnectionState
pub fn reset_command(srv: &mut Server, c: &mut Client) {
    // A transaction in progress, every WATCH and tracking are dropped.
    // Subscriptions end silently.
    crate::multi::discard_transaction(srv, c);
    crate::tracking::disable_tracking(srv, c);
    crate::pubsub::pubsub_unsubscribe_all(srv, c);
    // A monitor goes back to being a normal client.
    if c.has_flag(CLIENT_MONITOR) {
        srv.monitors.retain(|t| *t != c.token);
        c.flags &= !CLIENT_MONITOR;
    }
    c.db = 0;
    c.resp = Resp::V2;
    c.name = None;
    c.flags &= !(CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP | CLIENT_REPLY_SKIP_NEXT | CLIENT_NO_EVICT);
    // Back to the default user: authenticated only if it needs no password.
    c.user = Bytes::from_static(crate::acl::DEFAULT_USER);
    c.authenticated = crate::acl::default_user_authenticates(srv);
    c.add_reply_status(b"RESET");
}

/// HELLO [protover [AUTH username password] [SETNAME clientname]]
// redis: networking.c helloCommand
pub fn hello_command(srv: &mut Server, c: &mut Client) {
    let mut ver = 0i64;
    if c.argc() >= 2 {
        match protocol::util::string2ll(c.arg(1)) {
            Some(v) => ver = v,
            None => {
                c.add_reply_error("ERR Protocol version is not an integer or out of range");
                return;
            }
        }
        if !(2..=3).contains(&ver) {
            c.add_reply_error("NOPROTO unsupported protocol version");
            return;
        }
    }
    // Options take effect one by one, in order: an error half-way leaves
    // the earlier ones applied (7.0 authenticates and names inside the loop).
    let mut j = 2;
    while j < c.argc() {
        let moreargs = c.argc() - 1 - j;
        if c.arg(j).eq_ignore_ascii_case(b"auth") && moreargs >= 2 {
            let (user, pass) = (c.argv[j + 1].clone(), c.argv[j + 2].clone());
            // SLOWLOG and MONITOR show "(redacted)" for the credentials.
            c.redact_client_command_argument(j + 1);
            c.redact_client_command_argument(j + 2);
            if !crate::acl::acl_authenticate_user(srv, c, &user, &pass) {
                c.add_reply_error("WRONGPASS invalid username-password pair or user is disabled.");
                return;
            }
            j += 3;
        } else if c.arg(j).eq_ignore_ascii_case(b"setname") && moreargs >= 1 {
            if !client_set_name(c, c.argv[j + 1].clone()) {
                return;
            }
            j += 2;
        } else {
            let opt = String::from_utf8_lossy(c.arg(j)).into_owned();
            c.add_reply_error(&format!("ERR Syntax error in HELLO option '{opt}'"));
            return;
        }
    }
    if !c.authenticated {
        c.add_reply_error("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time");
        return;
    }
    // The reply already speaks the new protocol.
    match ver {
        2 => c.resp = Resp::V2,
        3 => c.resp = Resp::V3,
        _ => {}
    }
    add_reply_hello_map(c);
}

/// The HELLO reply: 7 fields (Redis sends 6 in sentinel mode).
fn add_reply_hello_map(c: &mut Client) {
    let proto = if c.resp == Resp::V3 { 3 } else { 2 };
    c.add_reply_map_len(7);
    c.add_reply_bulk(b"server");
    c.add_reply_bulk(b"redis");
    c.add_reply_bulk(b"version");
    c.add_reply_bulk(server::REDIS_VERSION.as_bytes());
    c.add_reply_bulk(b"proto");
    c.add_reply_integer(proto);
    c.add_reply_bulk(b"id");
    c.add_reply_integer(c.id as i64);
    c.add_reply_bulk(b"mode");
    c.add_reply_bulk(b"standalone");
    c.add_reply_bulk(b"role");
    c.add_reply_bulk(b"master");
    c.add_reply_bulk(b"modules");
    c.add_reply_array_len(0);
}

/// AUTH [username] password
// redis: acl.c authCommand
pub fn auth_command(srv: &mut Server, c: &mut Client) {
    if c.argc() > 3 {
        c.add_reply_syntax_error();
        return;
    }
    // The password (and user) never show in SLOWLOG or MONITOR.
    c.redact_client_command_argument(1);
    if c.argc() == 3 {
        c.redact_client_command_argument(2);
    }
    let (user, pass) = if c.argc() == 2 {
        // The one-argument form errors when the default user is nopass:
        // old clients learn that their configuration is probably wrong.
        if srv.acl.default_user().flags & crate::acl::USER_FLAG_NOPASS != 0 {
            c.add_reply_error("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?");
            return;
        }
        (
            Bytes::from_static(crate::acl::DEFAULT_USER),
            c.argv[1].clone(),
        )
    } else {
        (c.argv[1].clone(), c.argv[2].clone())
    };
    if crate::acl::acl_authenticate_user(srv, c, &user, &pass) {
        c.add_reply_ok();
    } else {
        c.add_reply_error("WRONGPASS invalid username-password pair or user is disabled.");
    }
}

/// clientSetName: an empty name clears it; otherwise only printable ASCII
/// without spaces ('!'..='~'), so CLIENT LIST stays one word per field.
/// Replies with the error and returns false when the name is refused.
fn client_set_name(c: &mut Client, name: Bytes) -> bool {
    if name.is_empty() {
        c.name = None;
        return true;
    }
    if name.iter().any(|&b| !(b'!'..=b'~').contains(&b)) {
        c.add_reply_error(
            "ERR Client names cannot contain spaces, newlines or special characters.",
        );
        return false;
    }
    c.name = Some(name);
    true
}

/// CLIENT ID
// redis: networking.c clientCommand ("id")
pub fn client_id_command(_srv: &mut Server, c: &mut Client) {
    c.add_reply_integer(c.id as i64);
}

/// CLIENT SETNAME connection-name
// redis: networking.c clientSetNameOrReply
pub fn client_setname_command(_srv: &mut Server, c: &mut Client) {
    let name = c.argv[2].clone();
    if client_set_name(c, name) {
        c.add_reply_ok();
    }
}

/// CLIENT GETNAME
// redis: networking.c clientCommand ("getname")
pub fn client_getname_command(_srv: &mut Server, c: &mut Client) {
    match c.name.clone() {
        Some(n) => c.add_reply_bulk(&n),
        None => c.add_reply_null(),
    }
}

/// CLIENT INFO
// redis: networking.c clientCommand ("info") -> catClientInfoString
pub fn client_info_command(_srv: &mut Server, c: &mut Client) {
    let mut text = client_info_string(c);
    text.push(b'\n');
    c.add_reply_verbatim(&text);
}

/// CLIENT LIST [TYPE NORMAL|MASTER|REPLICA|PUBSUB] [ID client-id [client-id ...]]
// redis: networking.c clientCommand ("list") -> getAllClientsInfoString
pub fn client_list_command(srv: &mut Server, c: &mut Client) {
    let mut text = Vec::new();
    if c.argc() == 4 && c.arg(2).eq_ignore_ascii_case(b"type") {
        let Some(ty) = client_type_by_name(c.arg(3)) else {
            let t = String::from_utf8_lossy(c.arg(3)).into_owned();
            c.add_reply_error(&format!("ERR Unknown client type '{t}'"));
            return;
        };
        for id in all_client_ids(srv, c) {
            with_client(srv, c, id, |cl| {
                if client_type(cl) == ty {
                    append_info_line(&mut text, cl);
                }
            });
        }
    } else if c.argc() > 3 && c.arg(2).eq_ignore_ascii_case(b"id") {
        // In the order given, repeats included (Redis looks each one up).
        for j in 3..c.argc() {
            let Some(id) = protocol::util::string2ll(c.arg(j)) else {
                c.add_reply_error("ERR Invalid client ID");
                return;
            };
            with_client(srv, c, id as u64, |cl| append_info_line(&mut text, cl));
        }
    } else if c.argc() != 2 {
        c.add_reply_syntax_error();
        return;
    } else {
        for id in all_client_ids(srv, c) {
            with_client(srv, c, id, |cl| append_info_line(&mut text, cl));
        }
    }
    c.add_reply_verbatim(&text);
}

/// The filters of CLIENT KILL's new form; `None` matches everything.
#[derive(Default)]
struct KillFilter {
    id: Option<u64>,
    addr: Option<Bytes>,
    laddr: Option<Bytes>,
    client_type: Option<ClientType>,
    user: Option<Bytes>,
    skipme: bool,
}

/// CLIENT KILL ip:port | CLIENT KILL <filter> <value> [<filter> <value> ...]
// redis: networking.c clientCommand ("kill")
pub fn client_kill_command(srv: &mut Server, c: &mut Client) {
    let old_style = c.argc() == 3;
    let filter = if old_style {
        // Old form: one address, the caller included, error when unknown.
        KillFilter {
            addr: Some(c.argv[2].clone()),
            ..KillFilter::default()
        }
    } else {
        match parse_kill_filter(srv, c) {
            Some(f) => f,
            None => return, // the error is already in the reply
        }
    };
    let mut killed = 0i64;
    for id in all_client_ids(srv, c) {
        if id == c.id {
            if !filter.skipme && kill_filter_matches(&filter, c) {
                c.flags |= CLIENT_CLOSE_AFTER_REPLY;
                killed += 1;
            }
            continue;
        }
        let token = srv
            .clients
            .values()
            .find(|cl| cl.id == id)
            .map(|cl| cl.token);
        let Some(token) = token else { continue };
        let Some(other) = srv.clients.get_mut(&token) else {
            continue;
        };
        if kill_filter_matches(&filter, other) {
            // freeClient for another client: closed at the next beforeSleep.
            if !other.has_flag(CLIENT_CLOSE_ASAP) {
                other.flags |= CLIENT_CLOSE_ASAP;
                srv.clients_to_close.push(token);
            }
            killed += 1;
        }
    }
    if !old_style {
        c.add_reply_integer(killed);
    } else if killed == 0 {
        c.add_reply_error("ERR No such client");
    } else {
        c.add_reply_ok();
    }
}

/// The `<option> <value>` pairs of CLIENT KILL's new form. On error the
/// reply is written and None returned.
fn parse_kill_filter(srv: &Server, c: &mut Client) -> Option<KillFilter> {
    let mut f = KillFilter {
        skipme: true,
        ..KillFilter::default()
    };
    let mut i = 2;
    while i < c.argc() {
        let moreargs = c.argc() > i + 1;
        let opt = c.arg(i);
        if !moreargs {
            c.add_reply_syntax_error();
            return None;
        }
        let val = c.argv[i + 1].clone();
        if opt.eq_ignore_ascii_case(b"id") {
            match protocol::util::string2ll(&val) {
                Some(id) if id >= 1 => f.id = Some(id as u64),
                _ => {
                    c.add_reply_error("ERR client-id should be greater than 0");
                    return None;
                }
            }
        } else if opt.eq_ignore_ascii_case(b"type") {
            let Some(ty) = client_type_by_name(&val) else {
                let t = String::from_utf8_lossy(&val).into_owned();
                c.add_reply_error(&format!("ERR Unknown client type '{t}'"));
                return None;
            };
            f.client_type = Some(ty);
        } else if opt.eq_ignore_ascii_case(b"addr") {
            f.addr = Some(val);
        } else if opt.eq_ignore_ascii_case(b"laddr") {
            f.laddr = Some(val);
        } else if opt.eq_ignore_ascii_case(b"user") {
            if !srv.acl.users.contains_key(&val) {
                let u = String::from_utf8_lossy(&val).into_owned();
                c.add_reply_error(&format!("ERR No such user '{u}'"));
                return None;
            }
            f.user = Some(val);
        } else if opt.eq_ignore_ascii_case(b"skipme") {
            if val.eq_ignore_ascii_case(b"yes") {
                f.skipme = true;
            } else if val.eq_ignore_ascii_case(b"no") {
                f.skipme = false;
            } else {
                c.add_reply_syntax_error();
                return None;
            }
        } else {
            c.add_reply_syntax_error();
            return None;
        }
        i += 2;
    }
    Some(f)
}

fn kill_filter_matches(f: &KillFilter, cl: &Client) -> bool {
    f.addr.as_ref().is_none_or(|a| a[..] == *cl.addr.as_bytes())
        && f.laddr
            .as_ref()
            .is_none_or(|a| a[..] == *cl.laddr.as_bytes())
        && f.client_type.is_none_or(|t| client_type(cl) == t)
        && f.id.is_none_or(|id| cl.id == id)
        && f.user.as_ref().is_none_or(|u| *u == cl.user)
}

/// CLIENT NO-EVICT ON|OFF
// redis: networking.c clientCommand ("no-evict")
pub fn client_no_evict_command(srv: &mut Server, c: &mut Client) {
    if c.arg(2).eq_ignore_ascii_case(b"on") {
        c.flags |= CLIENT_NO_EVICT;
        crate::client_eviction::remove_client_from_mem_usage_bucket(&mut srv.client_mem, c, false);
    } else if c.arg(2).eq_ignore_ascii_case(b"off") {
        c.flags &= !CLIENT_NO_EVICT;
        crate::client_eviction::update_client_mem_usage(srv, c);
    } else {
        c.add_reply_syntax_error();
        return;
    }
    c.add_reply_ok();
}

/// CLIENT UNBLOCK client-id [TIMEOUT|ERROR]
// redis: networking.c clientCommand ("unblock"). Only a client parked by a
// blocking command (BLPOP, XREAD BLOCK, ...) can be unblocked: 1 when one
// was, 0 otherwise (also for a client held by CLIENT PAUSE).
pub fn client_unblock_command(srv: &mut Server, c: &mut Client) {
    if c.argc() > 4 {
        c.add_reply_subcommand_syntax_error();
        return;
    }
    if c.argc() == 4
        && !c.arg(3).eq_ignore_ascii_case(b"timeout")
        && !c.arg(3).eq_ignore_ascii_case(b"error")
    {
        c.add_reply_error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
        return;
    }
    let Some(id) = protocol::util::string2ll(c.arg(2)) else {
        c.add_reply_error(shared::NOT_INTEGER_ERR);
        return;
    };
    let with_error = c.argc() == 4 && c.arg(3).eq_ignore_ascii_case(b"error");
    // Only a client parked by a blocking command can be unblocked.
    let target = srv
        .clients
        .iter()
        .find(|(_, o)| o.id as i64 == id && o.has_flag(CLIENT_BLOCKED))
        .map(|(t, _)| *t);
    let Some(token) = target else {
        c.add_reply_integer(0);
        return;
    };
    if let Some(mut other) = srv.clients.remove(&token) {
        crate::blocked::unblock_client_from_command(srv, &mut other, with_error);
        put_back_client(srv, other);
    }
    c.add_reply_integer(1);
}

/// CLIENT HELP
// redis: networking.c clientCommand ("help"); the text lists every 7.0
// subcommand, including those redis-lite does not have yet.
pub fn client_help_command(_srv: &mut Server, c: &mut Client) {
    c.add_reply_help("CLIENT", CLIENT_HELP);
}

const CLIENT_HELP: &[&str] = &[
    "CACHING (YES|NO)",
    "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
    "GETREDIR",
    "    Return the client ID we are redirecting to when tracking is enabled.",
    "GETNAME",
    "    Return the name of the current connection.",
    "ID",
    "    Return the ID of the current connection.",
    "INFO",
    "    Return information about the current client connection.",
    "KILL <ip:port>",
    "    Kill connection made from <ip:port>.",
    "KILL <option> <value> [<option> <value> [...]]",
    "    Kill connections. Options are:",
    "    * ADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made from the specified address",
    "    * LADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made to specified local address",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Kill connections by type.",
    "    * USER <username>",
    "      Kill connections authenticated by <username>.",
    "    * SKIPME (YES|NO)",
    "      Skip killing current connection (default: yes).",
    "LIST [options ...]",
    "    Return information about client connections. Options:",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Return clients of specified type.",
    "UNPAUSE",
    "    Stop the current client pause, resuming traffic.",
    "PAUSE <timeout> [WRITE|ALL]",
    "    Suspend all, or just write, clients for <timeout> milliseconds.",
    "REPLY (ON|OFF|SKIP)",
    "    Control the replies sent to the current connection.",
    "SETNAME <name>",
    "    Assign the name <name> to the current connection.",
    "UNBLOCK <clientid> [TIMEOUT|ERROR]",
    "    Unblock the specified blocked client.",
    "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
    "         [OPTIN] [OPTOUT] [NOLOOP]",
    "    Control server assisted client side caching.",
    "TRACKINGINFO",
    "    Report tracking status for the current connection.",
    "NO-EVICT (ON|OFF)",
    "    Protect current client connection from eviction.",
];

// ---- CLIENT LIST helpers ----

/// getClientType: what CLIENT LIST TYPE / CLIENT KILL TYPE filter on. No
/// replication yet, so a client is `Pubsub` while subscribed, else `Normal` (a MONITOR
/// client is normal in Redis too).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientType {
    Normal,
    Replica,
    Pubsub,
    Master,
}

pub fn client_type(c: &Client) -> ClientType {
    if c.has_flag(CLIENT_MASTER) {
        return ClientType::Master;
    }
    if c.has_flag(CLIENT_SLAVE) && !c.has_flag(CLIENT_MONITOR) {
        return ClientType::Replica;
    }
    if c.has_flag(CLIENT_PUBSUB) {
        return ClientType::Pubsub;
    }
    ClientType::Normal
}

/// getClientTypeByName (case-insensitive; `slave` is the old `replica`).
fn client_type_by_name(name: &[u8]) -> Option<ClientType> {
    let n = name.to_ascii_lowercase();
    match &n[..] {
        b"normal" => Some(ClientType::Normal),
        b"slave" | b"replica" => Some(ClientType::Replica),
        b"pubsub" => Some(ClientType::Pubsub),
        b"master" => Some(ClientType::Master),
        _ => None,
    }
}

/// Every client id, the caller included, in creation order (Redis walks
/// server.clients, which is in creation order).
fn all_client_ids(srv: &Server, c: &Client) -> Vec<u64> {
    let mut ids: Vec<u64> = srv.clients.values().map(|cl| cl.id).collect();
    ids.push(c.id);
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// Run `f` on the client with this id: the caller or one in `srv.clients`.
fn with_client(srv: &Server, c: &Client, id: u64, f: impl FnOnce(&Client)) {
    if id == c.id {
        f(c);
    } else if let Some(cl) = srv.clients.values().find(|cl| cl.id == id) {
        f(cl);
    }
}

fn append_info_line(out: &mut Vec<u8>, cl: &Client) {
    out.extend_from_slice(&client_info_string(cl));
    out.push(b'\n');
}

/// PROTO_DUMP_LEN: how much of a bad query buffer a protocol error logs
/// (half from its start, half from its end when it is longer).
const PROTO_DUMP_LEN: usize = 128;

/// setProtocolError's sample of the query buffer: at most 255 bytes (Redis
/// formats into a 256-byte buffer; `%s` also stops at a NUL), every
/// unprintable byte shown as `.`.
fn protocol_error_sample(q: &[u8]) -> String {
    let upto_nul = |b: &[u8]| -> Vec<u8> { b.iter().take_while(|&&x| x != 0).copied().collect() };
    let mut buf = b"Query buffer during protocol error: '".to_vec();
    if q.len() < PROTO_DUMP_LEN {
        buf.extend(upto_nul(q));
        buf.push(b'\'');
    } else {
        let half = PROTO_DUMP_LEN / 2;
        buf.extend(&q[..half]);
        buf.extend(format!("' (... more {} bytes ...) '", q.len() - PROTO_DUMP_LEN).as_bytes());
        buf.extend(&q[q.len() - half..]);
        buf.push(b'\'');
    }
    buf.truncate(255);
    buf.iter()
        .map(|&b| {
            if (0x20..0x7f).contains(&b) {
                b as char
            } else {
                '.'
            }
        })
        .collect()
}

/// catClientInfoString: one CLIENT LIST line, fields in 7.0.15's order.
/// cmd= is the client's last command as process_command looked it up
/// (c->lastcmd): the running one, the one a blocked or paused client waits
/// in, "NULL" after an unknown command. Memory fields are redis-lite's own
/// buffers measured the way Redis measures its: they cannot match Redis.
/// tot-mem is client eviction's measure (client_eviction.rs).
pub fn client_info_string(cl: &Client) -> Vec<u8> {
    let now = Instant::now();
    let age = now.saturating_duration_since(cl.ctime).as_secs();
    let idle = now.saturating_duration_since(cl.last_interaction).as_secs();
    let cmd = cl.last_cmd;
    let (argv_mem, _) = client_argv_mem(cl);
    // The command being run is still part of qbuf, as in Redis (qb_pos).
    let qbuf = cl.qb_pos + cl.querybuf.len();
    let qbuf_free = cl.querybuf.capacity() - cl.querybuf.len();
    // The static buffer: its size (rbs), recent peak (rbp) and what it
    // holds (obl); the reply list: its blocks (oll) and their memory (omem).
    let rbs = cl.reply.buf_usable_size();
    let rbp = cl.reply.buf_peak();
    let obl = cl.reply.bufpos();
    let oll = cl.reply.list_len();
    let omem = cl.reply.output_memory();
    // getClientMemoryUsage: the figure client eviction works with.
    let tot_mem = crate::client_eviction::get_client_memory_usage(cl);
    let events = if cl.has_flag(CLIENT_WRITE_INTEREST) {
        "rw"
    } else {
        "r"
    };
    let resp = if cl.resp == Resp::V3 { 3 } else { 2 };
    // Queued commands of a MULTI in progress (-1 outside MULTI) and their
    // memory: the queue array plus the argument bytes.
    let multi = if cl.has_flag(CLIENT_MULTI) {
        cl.mstate.commands.len() as i64
    } else {
        -1
    };
    let multi_mem = cl.mstate.argv_len_sums
        + cl.mstate.commands.capacity() * std::mem::size_of::<crate::multi::MultiCmd>();
    let mut line = format!(
        "id={} addr={} laddr={} fd={} name=",
        cl.id, cl.addr, cl.laddr, cl.fd
    )
    .into_bytes();
    if let Some(n) = &cl.name {
        line.extend_from_slice(n);
    }
    line.extend_from_slice(
        format!(
            " age={age} idle={idle} flags={} db={} sub={} psub={} ssub={} multi={multi} qbuf={qbuf} \
             qbuf-free={qbuf_free} argv-mem={argv_mem} multi-mem={multi_mem} rbs={rbs} rbp={rbp} \
             obl={obl} oll={oll} omem={omem} tot-mem={tot_mem} events={events} cmd={cmd} \
             user={} redir={} resp={resp}",
            crate::tracking::client_flags_with_tracking(client_flags_string(cl.flags), cl),
            cl.db,
            cl.pubsub_channels.len(),
            cl.pubsub_patterns.len(),
            cl.pubsubshard_channels.len(),
            String::from_utf8_lossy(&cl.user),
            crate::tracking::client_redir(cl)
        )
        .as_bytes(),
    );
    line
}

/// c->argv_len_sum and c->argc: the bytes and the number of the current
/// command's arguments, or, while a multibulk request is still arriving,
/// of its arguments complete so far (CLIENT LIST argv-mem, client
/// eviction).
pub fn client_argv_mem(c: &Client) -> (usize, usize) {
    let argv: &[Bytes] = if c.argv.is_empty() {
        c.parser.partial_argv()
    } else {
        &c.argv
    };
    (argv.iter().map(|a| a.len()).sum(), argv.len())
}

/// The `flags=` letters of CLIENT LIST, in Redis's order; `N` when none.
pub fn client_flags_string(flags: u32) -> String {
    let mut s = String::new();
    if flags & CLIENT_MONITOR != 0 {
        s.push('O');
    } else if flags & CLIENT_SLAVE != 0 {
        s.push('S');
    }
    if flags & CLIENT_MASTER != 0 {
        s.push('M');
    }
    if flags & CLIENT_PUBSUB != 0 {
        s.push('P');
    }
    if flags & CLIENT_MULTI != 0 {
        s.push('x');
    }
    if flags & (CLIENT_BLOCKED | CLIENT_POSTPONED) != 0 {
        s.push('b');
    }
    if flags & CLIENT_DIRTY_CAS != 0 {
        s.push('d');
    }
    if flags & CLIENT_CLOSE_AFTER_REPLY != 0 {
        s.push('c');
    }
    if flags & CLIENT_CLOSE_ASAP != 0 {
        s.push('A');
    }
    if flags & CLIENT_UNIX_SOCKET != 0 {
        s.push('U');
    }
    if flags & CLIENT_NO_EVICT != 0 {
        s.push('e');
    }
    if s.is_empty() {
        s.push('N');
    }
    s
}

#[cfg(test)]
mod connection_tests {
    use super::*;

    #[test]
    fn client_flag_bits_are_all_distinct() {
        // The flags live next to their features (ldb.rs, the replication
        // and eviction code): one bit each, or two features share a state.
        let flags = [
            CLIENT_CLOSE_AFTER_REPLY,
            CLIENT_CLOSE_ASAP,
            CLIENT_MONITOR,
            CLIENT_PENDING_WRITE,
            CLIENT_PENDING_READ,
            CLIENT_WRITE_INTEREST,
            CLIENT_REPLY_OFF,
            CLIENT_POSTPONED,
            CLIENT_BLOCKED,
            CLIENT_MULTI,
            CLIENT_DIRTY_CAS,
            CLIENT_DIRTY_EXEC,
            CLIENT_DENY_BLOCKING,
            CLIENT_SCRIPT,
            CLIENT_PUBSUB,
            CLIENT_EXECUTING_MULTI,
            CLIENT_REPLY_SKIP,
            CLIENT_REPLY_SKIP_NEXT,
            CLIENT_UNIX_SOCKET,
            CLIENT_SLAVE,
            CLIENT_MASTER,
            CLIENT_PRE_PSYNC,
            CLIENT_NO_EVICT,
            crate::ldb::CLIENT_LUA_DEBUG,
            crate::ldb::CLIENT_LUA_DEBUG_SYNC,
        ];
        let mut seen = 0u32;
        for f in flags {
            assert_eq!(f.count_ones(), 1);
            assert_eq!(seen & f, 0, "bit {} used twice", f.trailing_zeros());
            seen |= f;
        }
    }

    #[test]
    fn client_flags_string_orders_letters_like_redis() {
        assert_eq!(client_flags_string(0), "N");
        assert_eq!(client_flags_string(CLIENT_NO_EVICT), "e");
        assert_eq!(
            client_flags_string(CLIENT_NO_EVICT | CLIENT_CLOSE_AFTER_REPLY | CLIENT_MONITOR),
            "Oce"
        );
        // Internal bookkeeping flags are not shown.
        assert_eq!(client_flags_string(CLIENT_PENDING_WRITE), "N");
    }

    #[test]
    fn client_type_names_are_case_insensitive_with_slave_alias() {
        assert_eq!(client_type_by_name(b"NORMAL"), Some(ClientType::Normal));
        assert_eq!(client_type_by_name(b"slave"), Some(ClientType::Replica));
        assert_eq!(client_type_by_name(b"Replica"), Some(ClientType::Replica));
        assert_eq!(client_type_by_name(b"pubsub"), Some(ClientType::Pubsub));
        assert_eq!(client_type_by_name(b"master"), Some(ClientType::Master));
        assert_eq!(client_type_by_name(b"foo"), None);
    }
}

// ---- CLIENT PAUSE (networking.c pauseClients / unpauseClients) ----

/// What a CLIENT PAUSE holds back (pause_type).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum PauseType {
    #[default]
    Off,
    /// Only commands that write (or may replicate).
    Write,
    /// Every command.
    All,
}

/// CLIENT PAUSE timeout [WRITE|ALL]
// redis: networking.c clientCommand (pause)
pub fn client_pause_command(srv: &mut Server, c: &mut Client) {
    let Some(timeout) = storage::util::string2ll(c.arg(2)) else {
        c.add_reply_error("ERR timeout is not an integer or out of range");
        return;
    };
    if timeout < 0 {
        c.add_reply_error("ERR timeout is negative");
        return;
    }
    let mut ptype = PauseType::All;
    if c.argc() == 4 {
        if c.arg(3).eq_ignore_ascii_case(b"write") {
            ptype = PauseType::Write;
        } else if !c.arg(3).eq_ignore_ascii_case(b"all") {
            c.add_reply_error("ERR CLIENT PAUSE mode must be WRITE or ALL");
            return;
        }
    } else if c.argc() > 4 {
        c.add_reply_subcommand_syntax_error();
        return;
    }
    pause_clients(
        srv,
        PausePurpose::ByClientCommand,
        crate::server::mstime().saturating_add(timeout),
        ptype,
    );
    c.add_reply_ok();
}

/// CLIENT UNPAUSE
// redis: networking.c clientCommand (unpause)
pub fn client_unpause_command(srv: &mut Server, c: &mut Client) {
    unpause_clients(srv, PausePurpose::ByClientCommand);
    c.add_reply_ok();
}

/// pause_purpose: who paused the clients. Each purpose keeps its own pause
/// (CLIENT UNPAUSE ends only the one CLIENT PAUSE made, not a FAILOVER's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PausePurpose {
    ByClientCommand = 0,
    /// FAILOVER holds writes until the target replica took over
    /// (replication/failover.rs).
    DuringFailover = 1,
    /// A SHUTDOWN waiting for lagging replicas holds writes (shutdown.rs).
    DuringShutdown = 2,
}

/// NUM_PAUSE_PURPOSES.
pub const NUM_PAUSE_PURPOSES: usize = 3;

/// pauseClients: a purpose's pause only ever gets longer or stricter.
pub fn pause_clients(srv: &mut Server, purpose: PausePurpose, end_ms: i64, ptype: PauseType) {
    let p = &mut srv.client_pause_per_purpose[purpose as usize];
    *p = Some(match *p {
        None => (ptype, end_ms),
        Some((t, e)) => (t.max(ptype), e.max(end_ms)),
    });
    update_client_pause_type_and_end_time(srv);
}

/// unpauseClients: end one purpose's pause; postponed commands run (or
/// wait again) once nothing pauses them.
pub fn unpause_clients(srv: &mut Server, purpose: PausePurpose) {
    if srv.client_pause_per_purpose[purpose as usize]
        .take()
        .is_none()
    {
        return;
    }
    update_client_pause_type_and_end_time(srv);
}

/// updateClientPauseTypeAndEndTime: the pause in force is the strictest
/// type among the purposes (expired ones dropped), until the furthest end
/// among those of that type.
fn update_client_pause_type_and_end_time(srv: &mut Server) {
    let old_type = srv.client_pause_type;
    let now = crate::server::mstime();
    let mut ptype = PauseType::Off;
    for p in srv.client_pause_per_purpose.iter_mut() {
        match *p {
            Some((_, end)) if end < now => *p = None,
            Some((t, _)) if t > ptype => ptype = t,
            _ => {}
        }
    }
    let mut end = 0;
    for (t, e) in srv.client_pause_per_purpose.iter().flatten() {
        if *t == ptype && *e > end {
            end = *e;
        }
    }
    srv.client_pause_type = ptype;
    srv.client_pause_end_time = end;
    // Less strict than before: the postponed clients try again (the
    // caller may itself be running a command, CLIENT UNPAUSE: they are
    // resumed by the loop, not from inside here).
    if ptype < old_type {
        srv.clients_unpaused = true;
    }
}

/// checkClientPauseTimeoutAndReturnIfPaused: end an expired pause; true
/// while a pause is in force (expiry then leaves the dataset alone).
pub fn check_client_pause_timeout_and_return_if_paused(srv: &mut Server) -> bool {
    if srv.client_pause_type == PauseType::Off {
        return false;
    }
    if srv.client_pause_end_time < crate::server::mstime() {
        unpause_clients(srv, PausePurpose::ByClientCommand);
    }
    srv.client_pause_type != PauseType::Off
}

/// Whether `flags` (of the command about to run) are held back by the
/// current pause (processCommand's BLOCKED_POSTPONE test).
pub fn command_is_paused(srv: &Server, flags: u64) -> bool {
    use crate::commands::{CMD_MAY_REPLICATE, CMD_WRITE};
    match srv.client_pause_type {
        PauseType::Off => false,
        PauseType::All => true,
        PauseType::Write => flags & (CMD_WRITE | CMD_MAY_REPLICATE) != 0,
    }
}

/// blockClient(c, BLOCKED_POSTPONE): park the client with its command.
/// Redis counts it among blocked_clients and CLIENT LIST shows it with
/// flag b, as any blocked client.
pub fn postpone_client(srv: &mut Server, c: &mut Client) {
    c.flags |= CLIENT_POSTPONED;
    srv.blocked_clients += 1;
    srv.postponed_clients.push(c.token);
}

/// unblockClient for BLOCKED_POSTPONE: the client leaves the count (its
/// token stays in `postponed_clients` until the list is next walked).
pub fn unpostpone_client(srv: &mut Server, c: &mut Client) {
    if c.has_flag(CLIENT_POSTPONED) {
        c.flags &= !CLIENT_POSTPONED;
        srv.blocked_clients = srv.blocked_clients.saturating_sub(1);
    }
}

/// unblockPostponedClients: once the pause is over, run each parked
/// command and then whatever the client sent after it.
pub fn resume_postponed_clients(srv: &mut Server) {
    srv.clients_unpaused = false;
    let postponed = std::mem::take(&mut srv.postponed_clients);
    for token in postponed {
        let Some(mut c) = srv.clients.remove(&token) else {
            continue;
        };
        unpostpone_client(srv, &mut c);
        if c.has_flag(CLIENT_MASTER) {
            // Our master's command: applied and counted in the offset.
            crate::replication::replica::process_master_command(srv, &mut c);
        } else {
            server::process_command(srv, &mut c);
        }
        if !c.has_flag(CLIENT_POSTPONED) {
            c.argv.clear();
            process_input_buffer(srv, &mut c);
        }
        put_back_client(srv, c);
    }
}

// ---- the file event handlers: accept, read, write, free ----
//
// ae.rs's loop calls these when a socket is ready; before_sleep (server.rs)
// calls the write and free queues once per pass.

/// MAX_ACCEPTS_PER_CALL: at most this many accepts per listener event, so a
/// connection storm cannot monopolise a loop pass.
pub const MAX_ACCEPTS_PER_CALL: usize = 1000;

/// acceptTcpHandler: the listener's readable handler. Accept up to
/// MAX_ACCEPTS_PER_CALL connections, until the kernel's backlog is empty
/// (`WouldBlock`), and hand each one to `accept_common_handler`.
pub fn accept_tcp_handler(srv: &mut Server, listener_idx: usize) {
    for _ in 0..MAX_ACCEPTS_PER_CALL {
        let accepted = srv.listeners[listener_idx].accept();
        let (stream, peer) = match accepted {
            Ok(x) => x,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                server_log(
                    LogLevel::Warning,
                    &format!("Accepting client connection: {e}"),
                );
                return;
            }
        };
        let _ = stream.set_nodelay(true);
        let token = Token(srv.next_token);
        let id = srv.next_client_id;
        let c = Box::new(Client::new(id, token, stream, peer));
        server_log(LogLevel::Verbose, &format!("Accepted {}", c.addr));
        accept_common_handler(srv, c);
    }
}

/// acceptUnixHandler: as accept_tcp_handler, for the `unixsocket` listener.
// redis: networking.c acceptUnixHandler
pub fn accept_unix_handler(srv: &mut Server) {
    for _ in 0..MAX_ACCEPTS_PER_CALL {
        let Some(listener) = srv.unix_listener.as_ref() else {
            return;
        };
        let stream = match listener.accept() {
            Ok((stream, _)) => stream,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                server_log(
                    LogLevel::Warning,
                    &format!("Accepting client connection: {e}"),
                );
                return;
            }
        };
        let path = srv.config.unixsocket.clone();
        let token = Token(srv.next_token);
        let id = srv.next_client_id;
        let c = Box::new(Client::new_unix(id, token, stream, &path));
        server_log(LogLevel::Verbose, &format!("Accepted connection to {path}"));
        accept_common_handler(srv, c);
    }
}

/// The reply to a non-loopback client in protected mode, written before the
/// connection is closed (clientAcceptHandler's text, unchanged).
const PROTECTED_MODE_DENIED: &[u8] =
    b"-DENIED Redis is running in protected mode because protected \
mode is enabled and no password is set for the default user. \
In this mode connections are only accepted from the loopback interface. \
If you want to connect from external computers to Redis you \
may adopt one of the following solutions: \
1) Just disable protected mode sending the command \
'CONFIG SET protected-mode no' from the loopback interface \
by connecting to Redis from the same host the server is \
running, however MAKE SURE Redis is not publicly accessible \
from internet if you do so. Use CONFIG REWRITE to make this \
change permanent. \
2) Alternatively you can just disable the protected mode by \
editing the Redis configuration file, and setting the protected \
mode option to 'no', and then restarting the server. \
3) If you started the server manually just for testing, restart \
it with the '--protected-mode no' option. \
4) Setup a an authentication password for the default user. \
NOTE: You only need to do one of the above things in order for \
the server to start accepting connections from the outside.\r\n";

/// anetKeepAlive: SO_KEEPALIVE, the first probe after `interval` seconds
/// idle, then one every interval/3 seconds, the peer declared dead after 3
/// unanswered probes (so about 2 x interval in all). Failures are ignored
/// (Redis ignores connKeepAlive's result too).
// redis: anet.c anetKeepAlive
fn anet_keep_alive(stream: &TcpStream, interval: i32) {
    use std::os::fd::AsRawFd;
    let fd = stream.as_raw_fd();
    let set = |level: i32, name: i32, val: i32| {
        // SAFETY: setsockopt reads an int we own for the duration of the call.
        unsafe {
            libc::setsockopt(
                fd,
                level,
                name,
                &val as *const i32 as *const libc::c_void,
                std::mem::size_of::<i32>() as libc::socklen_t,
            );
        }
    };
    set(libc::SOL_SOCKET, libc::SO_KEEPALIVE, 1);
    set(libc::IPPROTO_TCP, libc::TCP_KEEPIDLE, interval);
    set(
        libc::IPPROTO_TCP,
        libc::TCP_KEEPINTVL,
        (interval / 3).max(1),
    );
    set(libc::IPPROTO_TCP, libc::TCP_KEEPCNT, 3);
}

/// acceptCommonHandler: make a `Client` of a new connection, refuse it
/// past maxclients, and register its socket for reading.
// redis: networking.c acceptCommonHandler
fn accept_common_handler(srv: &mut Server, mut c: Box<Client>) {
    let token = c.token;
    srv.next_token += 1;
    srv.next_client_id += 1;
    // A new connection starts authenticated only while the default user
    // needs no password (nopass, or requirepass unset).
    c.authenticated = crate::acl::default_user_authenticates(srv);

    // maxclients: refuse with Redis's error, written directly.
    if srv.clients.len() as u64 >= srv.config.maxclients {
        if let Some(stream) = c.stream.as_mut() {
            let _ = stream.write_all(b"-ERR max number of clients reached\r\n");
        }
        srv.stats.rejected_conn += 1;
        return;
    }
    // createClient: TCP keepalive probes, so a peer that vanished without a
    // FIN (a dead host, a dropped NAT entry) is noticed.
    if srv.config.tcp_keepalive > 0 {
        if let Some(Connection::Tcp(stream)) = c.stream.as_ref() {
            anet_keep_alive(stream, srv.config.tcp_keepalive as i32);
        }
    }
    // clientAcceptHandler: protected mode. With no password on the default
    // user, only loopback clients get in; others get Redis's explanation.
    if srv.config.protected_mode && crate::acl::default_user_is_nopass(srv) && !conn_is_local(&c) {
        if let Some(stream) = c.stream.as_mut() {
            let _ = stream.write_all(PROTECTED_MODE_DENIED);
        }
        srv.stats.rejected_conn += 1;
        return;
    }
    let registered = match c.stream.as_mut() {
        Some(stream) => srv
            .poll
            .registry()
            .register(stream, token, Interest::READABLE),
        None => Ok(()),
    };
    if let Err(e) = registered {
        server_log(
            LogLevel::Warning,
            &format!("Error registering fd event for the new client: {e}"),
        );
        return;
    }
    srv.stats.numconnections += 1;
    srv.clients.insert(token, c);
}

/// A readable event: take the client out of the table, read and run its
/// commands, put it back.
pub fn handle_client_readable(srv: &mut Server, token: Token) {
    let Some(mut c) = srv.clients.remove(&token) else {
        // Not a client: maybe the master link during its handshake.
        crate::replication::replica::handle_link_event(srv, token);
        return;
    };
    c.flags &= !CLIENT_PENDING_READ;
    read_query_from_client(srv, &mut c);
    put_back_client(srv, c);
    before_next_client(srv, token);
}

/// beforeNextClient: a client marked for closing while it ran (over its
/// output buffer limit, evicted, its connection closed) is freed before
/// the next client runs, not at the end of the pass: what it held must
/// not count against maxmemory-clients when the next command asks for
/// client eviction.
// redis: networking.c beforeNextClient
fn before_next_client(srv: &mut Server, token: Token) {
    if srv
        .clients
        .get(&token)
        .is_some_and(|c| c.has_flag(CLIENT_CLOSE_ASAP))
    {
        free_client(srv, token);
    }
}

/// A writable event: the socket can take more of a pending reply.
pub fn handle_client_writable(srv: &mut Server, token: Token) {
    // appendfsync always: no reply overtakes its AOF write (AE_BARRIER).
    crate::aof::flush_before_reply(srv);
    let Some(mut c) = srv.clients.remove(&token) else {
        crate::replication::replica::handle_link_event(srv, token);
        return;
    };
    if let Err(e) = write_to_client(srv, &mut c) {
        server_log(LogLevel::Verbose, &format!("Error writing to client: {e}"));
        c.flags |= CLIENT_CLOSE_ASAP;
    }
    put_back_client(srv, c);
}

/// Return a client to the table after its turn, queueing what it needs next:
/// a write before sleeping, another read next pass, or closing.
pub fn put_back_client(srv: &mut Server, mut c: Box<Client>) {
    let token = c.token;
    close_client_on_output_buffer_limit_reached(&srv.config.client_output_buffer_limit, &mut c);
    if c.has_flag(CLIENT_CLOSE_ASAP) {
        srv.clients_to_close.push(token);
    } else {
        // A replica not online yet is written by replication/master.rs.
        let slave_waits = crate::replication::master::slave_stream_on_hold(&c);
        if !c.reply.is_empty() && !c.has_flag(CLIENT_PENDING_WRITE) && !slave_waits {
            c.flags |= CLIENT_PENDING_WRITE;
            srv.clients_pending_write.push(token);
        }
        if c.has_flag(CLIENT_PENDING_READ) {
            srv.clients_pending_read.push(token);
        }
    }
    srv.clients.insert(token, c);
}

/// handleClientsWithPendingWrites: write each queued client directly; only
/// a client whose socket is full gets a writable handler (see networking).
pub fn handle_clients_with_pending_writes(srv: &mut Server) {
    srv.clients_write_capped = false;
    let pending: Vec<Token> = std::mem::take(&mut srv.clients_pending_write);
    for token in pending {
        let Some(mut c) = srv.clients.remove(&token) else {
            continue;
        };
        c.flags &= !CLIENT_PENDING_WRITE;
        if !c.has_flag(CLIENT_CLOSE_ASAP) {
            if let Err(e) = write_to_client(srv, &mut c) {
                server_log(LogLevel::Verbose, &format!("Error writing to client: {e}"));
                c.flags |= CLIENT_CLOSE_ASAP;
            }
        }
        put_back_client(srv, c);
    }
}

/// freeClientsInAsyncFreeQueue: close the clients marked for closing.
pub fn free_clients_in_async_free_queue(srv: &mut Server) {
    let to_close: Vec<Token> = std::mem::take(&mut srv.clients_to_close);
    for token in to_close {
        free_client(srv, token);
    }
}

/// freeClient: unregister and drop the connection.
pub fn free_client(srv: &mut Server, token: Token) {
    if let Some(mut c) = srv.clients.remove(&token) {
        // A client that disconnects while blocked leaves its queues, and
        // a watching one its watched keys.
        crate::blocked::unblock_client(srv, &mut c);
        unpostpone_client(srv, &mut c);
        crate::multi::discard_transaction(srv, &mut c);
        // ... and every channel and pattern it subscribed to.
        crate::pubsub::pubsub_unsubscribe_all(srv, &mut c);
        // ... and a replica the list of replicas.
        crate::replication::master::free_slave(srv, &mut c);
        // ... and its tracking prefixes (tracking.rs disableTracking).
        crate::tracking::disable_tracking(srv, &mut c);
        // ... and its share of the clients' memory, and its memory usage
        // bucket (client eviction).
        crate::client_eviction::free_client_mem_usage(&mut srv.client_mem, &mut c);
        if let Some(stream) = c.stream.as_mut() {
            let _ = srv.poll.registry().deregister(stream);
        }
        // Our master: keep its offset for a PSYNC, and reconnect.
        if c.has_flag(CLIENT_MASTER) {
            crate::replication::replica::replication_cache_master(srv, &c);
        }
        // Its token may still sit in clients_pending_write/_read, the
        // close queue or the cron rotation: those lists are not searched
        // (Redis unlinks its list node in O(1); we leave the entry). Tokens
        // are never reused, so whoever pops a stale one finds no client
        // under it and skips it.
    }
}

/// processEventsWhileBlocked: serve OTHER clients from inside a long
/// operation (a script past busy-reply-threshold, called from its hook).
/// Up to 4 loop passes (`ae::ae_process_events` with AE_FILE_EVENTS |
/// AE_DONT_WAIT, the same pass `ae_main` runs, so every instrument on the
/// pass sees these too); stop early when a pass found nothing. Most
/// commands get BUSY (see server::process_command), but SCRIPT KILL,
/// FUNCTION KILL and SHUTDOWN NOSAVE get through.
///
/// The loaders call it too (rdb.rs rdb_load_progress, the AOF loader):
/// while a dataset loads, commands without the `loading` flag get LOADING.
///
/// No cron and no blocked-client, expiry or pause work runs here (Redis
/// replaces serverCron by a small whileBlockedCron): the script must not
/// see keys expire or data change under it. The running client is out of
/// `srv.clients`, so its own input is left alone (AE_WHILE_BLOCKED).
pub fn process_events_while_blocked(srv: &mut Server) {
    let mut events = mio::Events::with_capacity(crate::ae::EVENTS_PER_POLL);
    // Time events are off, so the cron deadline is never read.
    let mut no_cron = std::time::Instant::now();
    let flags = crate::ae::AE_FILE_EVENTS | crate::ae::AE_DONT_WAIT | crate::ae::AE_WHILE_BLOCKED;
    for _ in 0..4 {
        let processed = crate::ae::ae_process_events(srv, &mut events, &mut no_cron, flags);
        if processed == 0 {
            break;
        }
    }
    crate::server::while_blocked_cron(srv);
}

/// beforeSleep's early return while processing events from inside a busy
/// script: only write pending replies and close clients marked for
/// closing. Returns how many clients it wrote to or closed.
// redis: server.c beforeSleep (ProcessingEventsWhileBlocked branch)
pub fn before_sleep_while_blocked(srv: &mut Server) -> usize {
    let mut processed = srv.clients_to_close.len();
    free_clients_in_async_free_queue(srv);
    processed += srv.clients_pending_write.len();
    handle_clients_with_pending_writes(srv);
    processed += srv.clients_to_close.len();
    free_clients_in_async_free_queue(srv);
    processed
}
