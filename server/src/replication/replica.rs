//! The replica side of replication (the replica half of Redis's
//! replication.c): REPLICAOF, the link with the master, the full sync's
//! RDB, the stream applied through the master client, REPLCONF ACK.
//!
//! The link goes through the states of `ReplState`, all in the one event
//! loop:
//!
//! 1. `Connect`: REPLICAOF was given (or the link dropped).
//!    `connect_with_master` starts a non-blocking connect() and registers
//!    the socket with the poller under its own token (`MasterLink`);
//!    `replication_cron` retries once per second while it fails.
//! 2. `Connecting` .. `ReceivePsyncReply`: the handshake, in
//!    `sync_with_master`. Redis sends each command and waits for its reply
//!    with a short blocking read; here every state waits for one reply
//!    line in the link's buffer, so a slow master never stalls the loop:
//!    PING, AUTH (masterauth / masteruser), REPLCONF listening-port,
//!    REPLCONF ip-address (replica-announce-ip), REPLCONF capa eof capa
//!    psync2, then PSYNC <replid> <offset+1> (`PSYNC ? -1` without a
//!    cached master).
//! 3. `Transfer` (`+FULLRESYNC replid offset`): the `$<len>` or
//!    `$EOF:<mark>` line, then the RDB. A disk load (repl-diskless-load
//!    disabled, or on-empty-db with data) has `read_sync_bulk_payload`
//!    write it into `temp-<unixtime>.<pid>.rdb` (up to the 40-byte mark of
//!    a diskless master) and `replica_load_rdb` renames that over the
//!    dbfilename and loads it. A diskless load
//!    (`replica_load_rdb_from_socket`) parses the RDB straight off the
//!    socket, made blocking with a repl-timeout receive timeout for the
//!    while (`ConnReader`, Redis's rioConnRead); swapdb loads into
//!    temporary databases and functions (`rdb::TempDb`) that replace the
//!    server's only once the whole payload and its mark arrived, so a
//!    broken transfer leaves the old data in place, and when the master's
//!    replid is already ours the old data keeps serving reads meanwhile
//!    (async_loading).
//! 4. `Connected`: the socket becomes a client flagged CLIENT_MASTER
//!    (`replication_create_master_client`). Its commands run through the
//!    normal `process_command`/`call()` path (`process_master_command`),
//!    their replies are dropped, except REPLCONF GETACK which answers
//!    REPLCONF ACK <offset>. `reploff` counts the bytes of complete
//!    commands applied (a MULTI block counts at its EXEC).
//!
//! When the master client is freed, its replid, offset and db are kept
//! (`replication_cache_master`, Redis's cached_master) and the next PSYNC
//! asks to continue from there: `+CONTINUE` resurrects it on the new
//! socket without any data transfer.
//!
//! A replica never expires keys itself (db.rs expire_if_needed): reads
//! from its clients see a logically expired key as missing, the master's
//! DEL removes it.

use std::fs::File;
use std::io::{self, Read, Write};

use mio::net::TcpStream;
use mio::{Interest, Token};

use super::ReplState;
use crate::config::Value;
use crate::log::{server_log, LogLevel};
use crate::networking::{
    self, Client, CLIENT_MASTER, CLIENT_MULTI, CLIENT_PENDING_READ, CLIENT_PENDING_WRITE,
    CLIENT_POSTPONED, CLIENT_SLAVE,
};
use crate::server::{self, Server, CONFIG_RUN_ID_SIZE};

/// PROTO_IOBUF_LEN: one read of the RDB transfer.
const PROTO_IOBUF_LEN: usize = 16 * 1024;
/// How many PROTO_IOBUF_LEN reads of the RDB one loop pass makes before the
/// link goes on `clients_pending_read` and other clients get their turn
/// (Redis reads one buffer per readable event, level-triggered).
const TRANSFER_READS_PER_PASS: usize = 16;
/// The longest handshake reply line we wait for (Redis's handshake reads
/// into a 256-byte buffer; the `$<len>` line into 1024 bytes).
const MAX_HANDSHAKE_LINE: usize = 1024;
/// The client id of the AOF loading client (aof.rs CLIENT_ID_AOF): like
/// the master, it must be obeyed (mustObeyClient).
const CLIENT_ID_AOF: u64 = u64::MAX;

pub const READONLY_ERR: &str = "READONLY You can't write against a read only replica.";
pub const MASTERDOWN_ERR: &str =
    "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.";

/// The replica-side fields of Redis's server struct that the shared
/// ReplicationState does not hold.
#[derive(Debug, Default)]
pub struct ReplicaSide {
    /// The socket to the master while connecting, in the handshake and
    /// during the RDB transfer (repl_transfer_s).
    pub link: Option<MasterLink>,
    /// The link while the transferred RDB loads (replica_load_rdb): the
    /// loader writes a newline to it now and then
    /// (replication_send_newline_to_master). No events are handled for it
    /// meanwhile; the master client re-registers the socket afterwards.
    pub loading_link: Option<MasterLink>,
    /// When the last of those newlines went out (unix seconds).
    newline_sent: i64,
    /// The master client kept after the link dropped, for PSYNC.
    pub cached_master: Option<CachedMaster>,
    /// The replication id of the master client (server.master->replid):
    /// from +FULLRESYNC, or the cached master's after +CONTINUE.
    pub master_replid: String,
    /// The offset +FULLRESYNC announced (master_initial_offset).
    pub master_initial_offset: i64,
    /// Last I/O with the master during connect/handshake/transfer
    /// (repl_transfer_lastio, unix seconds).
    pub transfer_lastio: i64,
    /// A command from the master is running (server.current_client ==
    /// server.master): keys are not expired for it.
    pub executing_master: bool,
    /// Keys that clients of a writable replica gave a TTL, with a bit per
    /// db (slaveKeysWithExpire).
    pub slave_keys_with_expire: std::collections::HashMap<Vec<u8>, u64>,
    /// The applied stream bytes not yet counted in the offset (a MULTI block
    /// until its EXEC), re-encoded, for the backlog.
    pending_stream: Vec<u8>,
}

/// What is kept of a master client whose link dropped (server.cached_master).
#[derive(Debug, Clone)]
pub struct CachedMaster {
    pub replid: String,
    pub reploff: i64,
    pub db: usize,
}

/// The master socket before it becomes the master client.
#[derive(Debug)]
pub struct MasterLink {
    pub token: Token,
    stream: TcpStream,
    /// Bytes read from the master and not consumed yet.
    inbuf: Vec<u8>,
    /// Handshake bytes the socket did not take yet.
    out: Vec<u8>,
    transfer: Option<Transfer>,
}

/// The RDB being received (repl_transfer_*).
#[derive(Debug)]
struct Transfer {
    /// Announced size; -1 until the `$` line arrived, 0 with an EOF mark.
    size: i64,
    read: i64,
    usemark: bool,
    eofmark: Vec<u8>,
    lastbytes: Vec<u8>,
    /// useDisklessLoad when the transfer started: parse the RDB off the
    /// socket (`replica_load_rdb_from_socket`) rather than through a file.
    diskless: bool,
    /// The temp file a disk load receives into (none for a diskless load).
    tmpfile: String,
    file: Option<File>,
}

/// What a step of the handshake leaves of the link.
enum Next {
    Keep(MasterLink),
    Gone,
}

fn now_secs() -> i64 {
    server::mstime() / 1000
}

fn cfg_bool(srv: &Server, name: &str) -> bool {
    matches!(srv.config.value(name), Some(Value::Bool(true)))
}

fn cfg_num(srv: &Server, name: &str) -> i64 {
    match srv.config.value(name) {
        Some(Value::Num(n)) => *n,
        Some(Value::Enum(e)) => i64::from(*e),
        _ => 0,
    }
}

fn cfg_str(srv: &Server, name: &str) -> Option<String> {
    match srv.config.value(name) {
        Some(Value::Str(Some(s))) if !s.is_empty() => Some(s.clone()),
        _ => None,
    }
}

/// RESP multibulk of `args`, as a client (and the master) sends commands.
fn encode_command(args: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// slaveIsInHandshakeState
fn in_handshake_state(s: ReplState) -> bool {
    matches!(
        s,
        ReplState::ReceivePingReply
            | ReplState::SendHandshake
            | ReplState::ReceiveAuthReply
            | ReplState::ReceivePortReply
            | ReplState::ReceiveIpReply
            | ReplState::ReceiveCapaReply
            | ReplState::SendPsync
            | ReplState::ReceivePsyncReply
    )
}

// ---------------------------------------------------------------- REPLICAOF

/// replicationGetSlaveOffset: the stream offset this replica processed
/// (its master client's, or the cached master's), 0 if none.
pub fn replication_get_slave_offset(srv: &Server) -> i64 {
    let mut offset = 0;
    if srv.repl.masterhost.is_some() {
        if let Some(m) = srv.repl.master.and_then(|t| srv.clients.get(&t)) {
            offset = m.repl.reploff;
        } else if let Some(cm) = &srv.repl.replica.cached_master {
            offset = cm.reploff;
        }
    }
    offset.max(0)
}

/// REPLICAOF host port | REPLICAOF NO ONE (and SLAVEOF, the old name)
// redis: replication.c replicaofCommand
pub fn replicaof_command(srv: &mut Server, c: &mut Client) {
    // In cluster mode a node's master is chosen with CLUSTER REPLICATE.
    if srv.cluster.is_some() {
        return c.add_reply_error("ERR REPLICAOF not allowed in cluster mode.");
    }
    if srv.repl.failover.state != super::failover::FailoverState::None {
        return c.add_reply_error("ERR REPLICAOF not allowed while failing over.");
    }
    if c.arg(1).eq_ignore_ascii_case(b"no") && c.arg(2).eq_ignore_ascii_case(b"one") {
        if srv.repl.masterhost.is_some() {
            replication_unset_master(srv);
            let info = client_info_for_log(c);
            server_log(
                LogLevel::Notice,
                &format!("MASTER MODE enabled (user request from '{info}')"),
            );
        }
        return c.add_reply_ok();
    }
    if c.has_flag(CLIENT_SLAVE) {
        return c.add_reply_error("ERR Command is not valid when client is a replica.");
    }
    let port = std::str::from_utf8(c.arg(2))
        .ok()
        .and_then(|s| storage::util::string2ll(s.as_bytes()))
        .filter(|p| (0..=65535).contains(p));
    let Some(port) = port else {
        return c.add_reply_error("ERR Invalid master port");
    };
    let host = String::from_utf8_lossy(c.arg(1)).into_owned();
    if srv
        .repl
        .masterhost
        .as_deref()
        .is_some_and(|h| h.eq_ignore_ascii_case(&host))
        && i64::from(srv.repl.masterport) == port
    {
        server_log(
            LogLevel::Notice,
            "REPLICAOF would result into synchronization with the master we are already connected with. No operation performed.",
        );
        return c.add_reply_status(b"OK Already connected to specified master");
    }
    replication_set_master(srv, &host, port as u16);
    let info = client_info_for_log(c);
    server_log(
        LogLevel::Notice,
        &format!("REPLICAOF {host}:{port} enabled (user request from '{info}')"),
    );
    c.add_reply_ok();
}

/// catClientInfoString of the client running REPLICAOF.
fn client_info_for_log(c: &Client) -> String {
    String::from_utf8_lossy(&networking::client_info_string(c)).into_owned()
}

/// replicationSetMaster: follow host:port from now on.
pub fn replication_set_master(srv: &mut Server, host: &str, port: u16) {
    let was_master = srv.repl.masterhost.is_none();
    // masterhost is cleared first so that freeing the master client does
    // not reconnect to the old master.
    srv.repl.masterhost = None;
    if let Some(t) = srv.repl.master {
        networking::free_client(srv, t);
    }
    // Clients blocked while we were a master.
    crate::blocked::disconnect_all_blocked_clients(srv);
    srv.repl.masterhost = Some(host.to_string());
    srv.repl.masterport = port;
    srv.config
        .set_replicaof(Some((host.to_string(), i64::from(port))));
    cancel_replication_handshake(srv, false);
    // A master that becomes a replica may continue the stream it produced
    // with the new master (PSYNC2): its own replid and offset become the
    // cached master.
    if was_master {
        replication_discard_cached_master(srv);
        replication_cache_master_using_myself(srv);
    }
    srv.repl.repl_state = ReplState::Connect;
    server_log(
        LogLevel::Notice,
        &format!("Connecting to MASTER {host}:{port}"),
    );
    connect_with_master(srv);
}

/// replicationUnsetMaster: REPLICAOF NO ONE, become a master.
pub fn replication_unset_master(srv: &mut Server) {
    if srv.repl.masterhost.is_none() {
        return;
    }
    srv.repl.masterhost = None;
    srv.config.set_replicaof(None);
    if let Some(t) = srv.repl.master {
        networking::free_client(srv, t);
    }
    replication_discard_cached_master(srv);
    cancel_replication_handshake(srv, false);
    shift_replication_id(srv);
    // Our own replicas reconnect and learn the new replid (they can PSYNC
    // at once: the new id continues the old history).
    super::master::disconnect_slaves(srv);
    srv.repl.repl_state = ReplState::None;
    restart_aof_after_sync(srv);
    srv.repl.slaveseldb = -1;
    srv.repl.repl_no_slaves_since = now_secs();
    srv.repl.repl_down_since = 0;
}

/// shiftReplicationId: a promoted replica starts a new history; the old
/// id stays valid (as replid2) up to the current offset, so the other
/// replicas of the old master can PSYNC with it.
pub fn shift_replication_id(srv: &mut Server) {
    let r = &mut srv.repl;
    r.replid2 = std::mem::replace(&mut r.replid, server::random_hex(CONFIG_RUN_ID_SIZE));
    // +1: PSYNC asks for the *next* byte it wants, so offset+1 is the
    // first byte of the new history.
    r.second_replid_offset = r.master_repl_offset + 1;
    server_log(
        LogLevel::Warning,
        &format!(
            "Setting secondary replication ID to {}, valid up to offset: {}. New replication ID is {}",
            r.replid2, r.second_replid_offset, r.replid
        ),
    );
}

/// `replicaof` in the config file or on the command line: be a replica
/// from the start (before the data is loaded: a replica keeps the keys
/// that expired on disk); replication_cron connects within a second.
pub fn replication_init_from_config(srv: &mut Server) {
    if let Some(Value::ReplicaOf(Some((host, port)))) = srv.config.value("replicaof").cloned() {
        srv.repl.masterhost = Some(host);
        srv.repl.masterport = port as u16;
        srv.repl.repl_state = ReplState::Connect;
    }
}

/// loadDataFromDisk, the replica branch: the RDB we started from carries
/// our master's id and offset: synthesize a cached master from them, so
/// the first PSYNC may continue instead of a full sync.
pub fn restore_replica_history(srv: &mut Server, id: String, offset: i64, db: usize) {
    srv.repl.replid = id;
    srv.repl.master_repl_offset = offset;
    replication_cache_master_using_myself(srv);
    if let Some(cm) = srv.repl.replica.cached_master.as_mut() {
        cm.db = db;
    }
}

// ------------------------------------------------------------ the link

/// connectWithMaster: start the non-blocking connect.
pub fn connect_with_master(srv: &mut Server) -> bool {
    let host = srv.repl.masterhost.clone().unwrap_or_default();
    let port = srv.repl.masterport;
    let source = srv
        .config
        .get_string("bind-source-addr")
        .unwrap_or_default();
    let source = (!source.is_empty()).then_some(source.as_str());
    let mut stream = match crate::anet_tcp_nonblock_bind_connect(&host, port, source) {
        Ok(s) => s,
        Err(e) => {
            server_log(
                LogLevel::Warning,
                &format!("Unable to connect to MASTER: {e}"),
            );
            return false;
        }
    };
    let token = Token(srv.next_token);
    srv.next_token += 1;
    if let Err(e) =
        srv.poll
            .registry()
            .register(&mut stream, token, Interest::READABLE | Interest::WRITABLE)
    {
        server_log(
            LogLevel::Warning,
            &format!("Unable to connect to MASTER: {e}"),
        );
        return false;
    }
    srv.repl.replica.link = Some(MasterLink {
        token,
        stream,
        inbuf: Vec::new(),
        out: Vec::new(),
        transfer: None,
    });
    srv.repl.replica.transfer_lastio = now_secs();
    srv.repl.repl_state = ReplState::Connecting;
    server_log(LogLevel::Notice, "MASTER <-> REPLICA sync started");
    true
}

/// Close the link socket and remove a half-received RDB
/// (undoConnectWithMaster / replicationAbortSyncTransfer).
fn drop_link(srv: &mut Server, mut link: MasterLink) {
    let _ = srv.poll.registry().deregister(&mut link.stream);
    if let Some(t) = link.transfer.take() {
        if let Some(file) = t.file {
            drop(file);
            let _ = std::fs::remove_file(&t.tmpfile);
        }
    }
}

/// cancelReplicationHandshake: abort a connect, handshake or transfer in
/// progress; with `reconnect`, start over at once.
pub fn cancel_replication_handshake(srv: &mut Server, reconnect: bool) -> bool {
    let s = srv.repl.repl_state;
    if s == ReplState::Transfer || s == ReplState::Connecting || in_handshake_state(s) {
        if let Some(link) = srv.repl.replica.link.take() {
            drop_link(srv, link);
        }
        srv.repl.repl_state = ReplState::Connect;
    } else {
        return false;
    }
    if !reconnect {
        return true;
    }
    server_log(
        LogLevel::Notice,
        &format!(
            "Reconnecting to MASTER {}:{} after failure",
            srv.repl.masterhost.as_deref().unwrap_or(""),
            srv.repl.masterport
        ),
    );
    connect_with_master(srv);
    true
}

/// The `error:` exit of syncWithMaster: close, and let cron reconnect.
fn handshake_error(srv: &mut Server, link: MasterLink) -> Next {
    drop_link(srv, link);
    srv.repl.repl_state = ReplState::Connect;
    Next::Gone
}

/// An exit of readSyncBulkPayload through cancelReplicationHandshake(1).
fn transfer_error(srv: &mut Server, link: MasterLink) -> Next {
    srv.repl.replica.link = Some(link);
    cancel_replication_handshake(srv, true);
    Next::Gone
}

/// A poller event on a token that is no client: the master link's, if it
/// is ours (networking::handle_client_readable / _writable call this).
pub fn handle_link_event(srv: &mut Server, token: Token) {
    let Some(link) = srv.repl.replica.link.take() else {
        return;
    };
    if link.token != token {
        srv.repl.replica.link = Some(link);
        return;
    }
    if let Next::Keep(link) = sync_with_master(srv, link) {
        srv.repl.replica.link = Some(link);
    }
}

/// Queue `args` as a command to the master and write what the socket
/// takes (sendCommand).
fn send_command(link: &mut MasterLink, args: &[&[u8]]) -> io::Result<()> {
    link.out.extend_from_slice(&encode_command(args));
    flush_out(link)
}

fn flush_out(link: &mut MasterLink) -> io::Result<()> {
    while !link.out.is_empty() {
        match link.stream.write(&link.out) {
            Ok(0) => return Err(io::Error::from(io::ErrorKind::WriteZero)),
            Ok(n) => {
                link.out.drain(..n);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Read what the socket has, stopping at the first complete line (the
/// bytes after a handshake reply may be the RDB). Ok(true): the master
/// closed the connection.
fn fill_for_line(srv: &mut Server, link: &mut MasterLink) -> io::Result<bool> {
    let mut buf = [0u8; PROTO_IOBUF_LEN];
    // At most a line's worth without a newline: a master that sends an
    // endless line is cut off by the caller, not buffered.
    while !link.inbuf.contains(&b'\n') && link.inbuf.len() <= MAX_HANDSHAKE_LINE {
        match link.stream.read(&mut buf) {
            Ok(0) => return Ok(true),
            Ok(n) => {
                link.inbuf.extend_from_slice(&buf[..n]);
                srv.repl.replica.transfer_lastio = now_secs();
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    // The socket may hold more: come back next pass (edge-triggered poll).
    srv.clients_pending_read.push(link.token);
    Ok(false)
}

/// One reply line off the front of the buffer, without its CRLF.
fn take_line(link: &mut MasterLink) -> Option<String> {
    let pos = link.inbuf.iter().position(|&b| b == b'\n')?;
    let mut line: Vec<u8> = link.inbuf.drain(..=pos).collect();
    line.pop();
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Some(String::from_utf8_lossy(&line).into_owned())
}

/// syncWithMaster: one step of the handshake, run on every event of the
/// link until the RDB transfer starts or the master accepts a PSYNC.
fn sync_with_master(srv: &mut Server, mut link: MasterLink) -> Next {
    if srv.repl.repl_state == ReplState::None {
        // REPLICAOF NO ONE came first.
        drop_link(srv, link);
        return Next::Gone;
    }
    if srv.repl.repl_state == ReplState::Transfer {
        return read_sync_bulk_payload(srv, link);
    }
    if srv.repl.repl_state == ReplState::Connecting {
        let err = match link.stream.take_error() {
            Ok(Some(e)) | Err(e) => Some(e),
            Ok(None) => match link.stream.peer_addr() {
                Ok(_) => None,
                // Not connected yet: a spurious wake-up.
                Err(e) if e.kind() == io::ErrorKind::NotConnected => return Next::Keep(link),
                Err(e) => Some(e),
            },
        };
        if let Some(e) = err {
            server_log(
                LogLevel::Warning,
                &format!(
                    "Error condition on socket for SYNC: {}",
                    crate::config::strerror(&e)
                ),
            );
            return handshake_error(srv, link);
        }
        server_log(
            LogLevel::Notice,
            "Non blocking connect for SYNC fired the event.",
        );
        srv.repl.repl_state = ReplState::ReceivePingReply;
        if let Err(e) = send_command(&mut link, &[b"PING"]) {
            return write_error(srv, link, &e.to_string());
        }
        return Next::Keep(link);
    }
    if let Err(e) = flush_out(&mut link) {
        return write_error(srv, link, &e.to_string());
    }
    // A read error ends the handshake as a close does.
    let closed = fill_for_line(srv, &mut link).unwrap_or(true);
    loop {
        let state = srv.repl.repl_state;
        if state == ReplState::Transfer {
            return read_sync_bulk_payload(srv, link);
        }
        if link.inbuf.len() > MAX_HANDSHAKE_LINE && !link.inbuf.contains(&b'\n') {
            return no_response_error(srv, link);
        }
        let Some(reply) = take_line(&mut link) else {
            if closed {
                return no_response_error(srv, link);
            }
            return Next::Keep(link);
        };
        match state {
            ReplState::ReceivePingReply => {
                // +PONG, or an authentication error (AUTH comes next).
                if !reply.starts_with('+')
                    && !reply.starts_with("-NOAUTH")
                    && !reply.starts_with("-NOPERM")
                    && !reply.starts_with("-ERR operation not permitted")
                {
                    server_log(
                        LogLevel::Warning,
                        &format!("Error reply to PING from master: '{reply}'"),
                    );
                    return handshake_error(srv, link);
                }
                server_log(
                    LogLevel::Notice,
                    "Master replied to PING, replication can continue...",
                );
                srv.repl.repl_state = ReplState::SendHandshake;
                if let Err(e) = send_handshake(srv, &mut link) {
                    return write_error(srv, link, &e.to_string());
                }
            }
            ReplState::ReceiveAuthReply => {
                if reply.starts_with('-') {
                    server_log(
                        LogLevel::Warning,
                        &format!("Unable to AUTH to MASTER: {reply}"),
                    );
                    return handshake_error(srv, link);
                }
                srv.repl.repl_state = ReplState::ReceivePortReply;
            }
            ReplState::ReceivePortReply => {
                if reply.starts_with('-') {
                    server_log(
                        LogLevel::Notice,
                        &format!("(Non critical) Master does not understand REPLCONF listening-port: {reply}"),
                    );
                }
                srv.repl.repl_state = if cfg_str(srv, "replica-announce-ip").is_some() {
                    ReplState::ReceiveIpReply
                } else {
                    ReplState::ReceiveCapaReply
                };
            }
            ReplState::ReceiveIpReply => {
                if reply.starts_with('-') {
                    server_log(
                        LogLevel::Notice,
                        &format!("(Non critical) Master does not understand REPLCONF ip-address: {reply}"),
                    );
                }
                srv.repl.repl_state = ReplState::ReceiveCapaReply;
            }
            ReplState::ReceiveCapaReply => {
                if reply.starts_with('-') {
                    server_log(
                        LogLevel::Notice,
                        &format!(
                            "(Non critical) Master does not understand REPLCONF capa: {reply}"
                        ),
                    );
                }
                srv.repl.repl_state = ReplState::SendPsync;
                if let Err(e) = slave_send_psync(srv, &mut link) {
                    server_log(
                        LogLevel::Warning,
                        &format!("Unable to send PSYNC to master: {e}"),
                    );
                    let next = write_error(srv, link, "Write error sending the PSYNC command.");
                    super::failover::abort_failover(srv, "Write error to failover target");
                    return next;
                }
                srv.repl.repl_state = ReplState::ReceivePsyncReply;
            }
            ReplState::ReceivePsyncReply => match slave_read_psync_reply(srv, link, &reply) {
                Next::Keep(l) => link = l,
                Next::Gone => return Next::Gone,
            },
            other => {
                server_log(
                    LogLevel::Warning,
                    &format!("syncWithMaster(): state machine error, state should be RECEIVE_PSYNC but is {other:?}"),
                );
                return handshake_error(srv, link);
            }
        }
    }
}

fn no_response_error(srv: &mut Server, link: MasterLink) -> Next {
    server_log(
        LogLevel::Warning,
        "Master did not respond to command during SYNC handshake",
    );
    handshake_error(srv, link)
}

fn write_error(srv: &mut Server, link: MasterLink, err: &str) -> Next {
    server_log(
        LogLevel::Warning,
        &format!("Sending command to master in replication handshake: {err}"),
    );
    handshake_error(srv, link)
}

/// REPL_STATE_SEND_HANDSHAKE: AUTH, REPLCONF listening-port, REPLCONF
/// ip-address, REPLCONF capa, sent together; the replies are read one
/// state at a time.
fn send_handshake(srv: &mut Server, link: &mut MasterLink) -> io::Result<()> {
    let auth = cfg_str(srv, "masterauth");
    if let Some(pass) = &auth {
        match cfg_str(srv, "masteruser") {
            Some(user) => send_command(link, &[b"AUTH", user.as_bytes(), pass.as_bytes()])?,
            None => send_command(link, &[b"AUTH", pass.as_bytes()])?,
        }
    }
    let announce_port = cfg_num(srv, "replica-announce-port");
    let port = if announce_port != 0 {
        announce_port
    } else {
        i64::from(srv.config.port)
    };
    send_command(
        link,
        &[b"REPLCONF", b"listening-port", port.to_string().as_bytes()],
    )?;
    if let Some(ip) = cfg_str(srv, "replica-announce-ip") {
        send_command(link, &[b"REPLCONF", b"ip-address", ip.as_bytes()])?;
    }
    // EOF: we take `$EOF:<mark>` diskless transfers; PSYNC2: we understand
    // `+CONTINUE <new replid>`.
    send_command(link, &[b"REPLCONF", b"capa", b"eof", b"capa", b"psync2"])?;
    srv.repl.repl_state = if auth.is_some() {
        ReplState::ReceiveAuthReply
    } else {
        ReplState::ReceivePortReply
    };
    Ok(())
}

/// slaveTryPartialResynchronization, writing half: PSYNC with the cached
/// master's id and next offset, or `PSYNC ? -1` for a full sync.
fn slave_send_psync(srv: &mut Server, link: &mut MasterLink) -> io::Result<()> {
    srv.repl.replica.master_initial_offset = -1;
    let (replid, offset) = match &srv.repl.replica.cached_master {
        Some(cm) => {
            let off = (cm.reploff + 1).to_string();
            server_log(
                LogLevel::Notice,
                &format!(
                    "Trying a partial resynchronization (request {}:{off}).",
                    cm.replid
                ),
            );
            (cm.replid.clone(), off)
        }
        None => {
            server_log(
                LogLevel::Notice,
                "Partial resynchronization not possible (no cached master)",
            );
            ("?".to_string(), "-1".to_string())
        }
    };
    // A master failing over to this link's server: FAILOVER asks it to
    // become the master (failover.rs).
    if srv.repl.failover.state == super::failover::FailoverState::InProgress {
        send_command(
            link,
            &[b"PSYNC", replid.as_bytes(), offset.as_bytes(), b"FAILOVER"],
        )
    } else {
        send_command(link, &[b"PSYNC", replid.as_bytes(), offset.as_bytes()])
    }
}

/// slaveTryPartialResynchronization, reading half, and what syncWithMaster
/// does with each answer.
fn slave_read_psync_reply(srv: &mut Server, link: MasterLink, reply: &str) -> Next {
    if reply.is_empty() {
        // Newlines keep the link alive until the master answers.
        return Next::Keep(link);
    }
    if reply.starts_with("+FULLRESYNC") {
        let mut parts = reply.splitn(3, ' ');
        parts.next();
        let replid = parts.next().unwrap_or("");
        let offset = parts.next();
        match offset {
            Some(off) if replid.len() == CONFIG_RUN_ID_SIZE => {
                srv.repl.replica.master_replid = replid.to_string();
                srv.repl.replica.master_initial_offset =
                    storage::util::string2ll(off.trim().as_bytes()).unwrap_or(0);
                server_log(
                    LogLevel::Notice,
                    &format!(
                        "Full resync from master: {replid}:{}",
                        srv.repl.replica.master_initial_offset
                    ),
                );
            }
            _ => {
                server_log(
                    LogLevel::Warning,
                    "Master replied with wrong +FULLRESYNC syntax.",
                );
                // Blank: the next PSYNC must not match anything.
                srv.repl.replica.master_replid = String::new();
            }
        }
        // A failover expects +CONTINUE, but a full sync works as well.
        if srv.repl.failover.state == super::failover::FailoverState::InProgress {
            super::failover::clear_failover_state(srv);
        }
        return start_transfer(srv, link);
    }
    if reply.starts_with("+CONTINUE") {
        server_log(
            LogLevel::Notice,
            "Successful partial resynchronization with master.",
        );
        let newid = reply.get(10..).unwrap_or("").trim_end();
        let Some(mut cm) = srv.repl.replica.cached_master.take() else {
            return handshake_error(srv, link);
        };
        // The target of our FAILOVER is the master now: writes resume
        // (and get READONLY here).
        if srv.repl.failover.state == super::failover::FailoverState::InProgress {
            super::failover::clear_failover_state(srv);
        }
        if newid.len() == CONFIG_RUN_ID_SIZE && newid != cm.replid {
            server_log(
                LogLevel::Warning,
                &format!("Master replication ID changed to {newid}"),
            );
            srv.repl.replid2 = std::mem::replace(&mut cm.replid, newid.to_string());
            srv.repl.second_replid_offset = srv.repl.master_repl_offset + 1;
            srv.repl.replid = newid.to_string();
            // Our replicas must learn the new id too.
            super::master::disconnect_slaves(srv);
        }
        replication_create_master_client(srv, link, cm.db, cm.replid, cm.reploff);
        if srv.repl.backlog.is_none() {
            super::master::create_replication_backlog(srv);
        }
        server_log(
            LogLevel::Notice,
            "MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization.",
        );
        return Next::Gone;
    }
    if reply.starts_with("-NOMASTERLINK") || reply.starts_with("-LOADING") {
        server_log(
            LogLevel::Notice,
            &format!("Master is currently unable to PSYNC but should be in the future: {reply}"),
        );
        return match psync_refused(srv, link) {
            Next::Keep(link) => handshake_error(srv, link),
            Next::Gone => Next::Gone,
        };
    }
    if reply.starts_with("-ERR") {
        server_log(
            LogLevel::Notice,
            &format!("Master does not support PSYNC or is in error state (reply: {reply})"),
        );
    } else {
        server_log(
            LogLevel::Warning,
            &format!("Unexpected reply to PSYNC from master: {reply}"),
        );
    }
    // PSYNC_NOT_SUPPORTED: the old protocol (not for a failover).
    let Next::Keep(mut link) = psync_refused(srv, link) else {
        return Next::Gone;
    };
    server_log(LogLevel::Notice, "Retrying with SYNC...");
    link.out.extend_from_slice(b"SYNC\r\n");
    if let Err(e) = flush_out(&mut link) {
        server_log(
            LogLevel::Warning,
            &format!("I/O error writing to MASTER: {e}"),
        );
        return handshake_error(srv, link);
    }
    start_transfer(srv, link)
}

/// A PSYNC answered with an error while our FAILOVER is in progress: the
/// target refused to take over. Abort (we become a master again) and drop
/// the link: Gone. Keep(link) when no failover runs.
fn psync_refused(srv: &mut Server, link: MasterLink) -> Next {
    if srv.repl.failover.state != super::failover::FailoverState::InProgress {
        return Next::Keep(link);
    }
    drop_link(srv, link);
    super::failover::abort_failover(srv, "Failover target rejected psync request");
    Next::Gone
}

/// The end of syncWithMaster: the temp file (for a disk load) and
/// REPL_STATE_TRANSFER.
fn start_transfer(srv: &mut Server, mut link: MasterLink) -> Next {
    let diskless = use_diskless_load(srv);
    let tmpfile = format!("temp-{}.{}.rdb", now_secs(), std::process::id());
    let opened = if diskless {
        Ok(None)
    } else {
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmpfile)
            .map(Some)
    };
    let file = match opened {
        Ok(f) => f,
        Err(e) => {
            server_log(
                LogLevel::Warning,
                &format!(
                    "Opening the temp file needed for MASTER <-> REPLICA synchronization: {}",
                    crate::config::strerror(&e)
                ),
            );
            return handshake_error(srv, link);
        }
    };
    link.transfer = Some(Transfer {
        size: -1,
        read: 0,
        usemark: false,
        eofmark: Vec::new(),
        lastbytes: Vec::new(),
        diskless,
        tmpfile,
        file,
    });
    srv.repl.repl_state = ReplState::Transfer;
    srv.repl.replica.transfer_lastio = now_secs();
    Next::Keep(link)
}

/// useDisklessLoad: load the transfer straight into memory (swapdb, or
/// on-empty-db with no keys) rather than through the dbfilename.
fn use_diskless_load(srv: &Server) -> bool {
    match cfg_num(srv, "repl-diskless-load") {
        2 => true,
        1 => srv.dbs.iter().all(|db| db.size() == 0),
        _ => false,
    }
}

/// readSyncBulkPayload: receive the RDB of a full sync into the temp file,
/// then load it.
fn read_sync_bulk_payload(srv: &mut Server, mut link: MasterLink) -> Next {
    let mut reads = 0;
    let mut buf = vec![0u8; PROTO_IOBUF_LEN];
    loop {
        let size = link.transfer.as_ref().map_or(-1, |t| t.size);
        // A diskless load reads the payload itself, once its size is known.
        if size != -1 && link.transfer.as_ref().is_some_and(|t| t.diskless) {
            return replica_load_rdb_from_socket(srv, link);
        }
        let done = link
            .transfer
            .as_ref()
            .is_some_and(|t| !t.usemark && t.size >= 0 && t.read == t.size);
        if done {
            return replica_load_rdb(srv, link);
        }
        if link.inbuf.is_empty() || (size == -1 && !link.inbuf.contains(&b'\n')) {
            if reads == TRANSFER_READS_PER_PASS {
                srv.clients_pending_read.push(link.token);
                return Next::Keep(link);
            }
            match link.stream.read(&mut buf) {
                Ok(0) => {
                    server_log(
                        LogLevel::Warning,
                        "I/O error trying to sync with MASTER: connection lost",
                    );
                    return transfer_error(srv, link);
                }
                Ok(n) => {
                    reads += 1;
                    link.inbuf.extend_from_slice(&buf[..n]);
                    srv.repl.replica.transfer_lastio = now_secs();
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Next::Keep(link),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    server_log(
                        LogLevel::Warning,
                        &format!(
                            "I/O error trying to sync with MASTER: {}",
                            crate::config::strerror(&e)
                        ),
                    );
                    return transfer_error(srv, link);
                }
            }
            continue;
        }
        if size == -1 {
            if link.inbuf.len() > MAX_HANDSHAKE_LINE && !link.inbuf.contains(&b'\n') {
                server_log(
                    LogLevel::Warning,
                    "Bad protocol from MASTER, the first byte is not '$', are you sure the host and port are right?",
                );
                return transfer_error(srv, link);
            }
            let Some(line) = take_line(&mut link) else {
                continue;
            };
            // Redis counts a line without its CRLF, plus one.
            srv.stats.net_repl_input_bytes += line.len() as u64 + 1;
            if !bulk_count_line(srv, &mut link, &line) {
                return transfer_error(srv, link);
            }
            continue;
        }
        // Payload bytes.
        let t = link.transfer.as_mut().expect("transfer state");
        let take = if t.usemark {
            link.inbuf.len()
        } else {
            link.inbuf.len().min((t.size - t.read) as usize)
        };
        let chunk: Vec<u8> = link.inbuf.drain(..take).collect();
        srv.stats.net_repl_input_bytes += take as u64;
        let mut eof = false;
        if t.usemark {
            t.lastbytes.extend_from_slice(&chunk);
            let excess = t.lastbytes.len().saturating_sub(CONFIG_RUN_ID_SIZE);
            t.lastbytes.drain(..excess);
            eof = t.lastbytes == t.eofmark;
        }
        let written = match t.file.as_mut() {
            Some(file) => file.write_all(&chunk),
            None => Err(io::Error::from_raw_os_error(libc::EBADF)),
        };
        if let Err(e) = written {
            server_log(
                LogLevel::Warning,
                &format!(
                    "Write error or short write writing to the DB dump file needed for MASTER <-> REPLICA synchronization: {}",
                    crate::config::strerror(&e)
                ),
            );
            return transfer_error(srv, link);
        }
        t.read += take as i64;
        if eof {
            // The mark is no part of the RDB.
            let len = (t.read - CONFIG_RUN_ID_SIZE as i64) as u64;
            if let Err(e) = t.file.as_ref().map_or(Ok(()), |f| f.set_len(len)) {
                server_log(
                    LogLevel::Warning,
                    &format!(
                        "Error truncating the RDB file received from the master for SYNC: {}",
                        crate::config::strerror(&e)
                    ),
                );
                return transfer_error(srv, link);
            }
            return replica_load_rdb(srv, link);
        }
    }
}

/// The `$<count>` / `$EOF:<mark>` line that opens the transfer. False: a
/// protocol error (logged).
fn bulk_count_line(srv: &mut Server, link: &mut MasterLink, line: &str) -> bool {
    let t = link.transfer.as_mut().expect("transfer state");
    let diskless = t.diskless;
    if let Some(err) = line.strip_prefix('-') {
        server_log(
            LogLevel::Warning,
            &format!("MASTER aborted replication with an error: {err}"),
        );
        return false;
    }
    if line.is_empty() {
        // A bare newline is the master's keep-alive while it prepares the RDB.
        srv.repl.replica.transfer_lastio = now_secs();
        return true;
    }
    if !line.starts_with('$') {
        server_log(
            LogLevel::Warning,
            &format!("Bad protocol from MASTER, the first byte is not '$' (we received '{line}'), are you sure the host and port are right?"),
        );
        return false;
    }
    let to = if diskless { "to parser" } else { "to disk" };
    if let Some(mark) = line[1..]
        .strip_prefix("EOF:")
        .filter(|m| m.len() >= CONFIG_RUN_ID_SIZE)
    {
        t.usemark = true;
        t.eofmark = mark.as_bytes()[..CONFIG_RUN_ID_SIZE].to_vec();
        t.size = 0;
        server_log(
            LogLevel::Notice,
            &format!("MASTER <-> REPLICA sync: receiving streamed RDB from master with EOF {to}"),
        );
        return true;
    }
    // strtol: the leading digits, 0 for none.
    let digits: String = line[1..]
        .chars()
        .take_while(|ch| ch.is_ascii_digit() || *ch == '-')
        .collect();
    let size = digits.parse::<i64>().unwrap_or(0);
    if size < 0 {
        server_log(
            LogLevel::Warning,
            &format!("Bad protocol from MASTER, negative bulk count '{line}'"),
        );
        return false;
    }
    t.usemark = false;
    t.size = size;
    server_log(
        LogLevel::Notice,
        &format!("MASTER <-> REPLICA sync: receiving {size} bytes from master {to}"),
    );
    true
}

/// emptyData(-1): every db and the functions.
pub fn empty_data(srv: &mut Server) {
    srv.repl.replica.slave_keys_with_expire.clear();
    for dbid in 0..srv.dbs.len() {
        crate::multi::touch_all_watched_keys_in_db(srv, dbid, None);
        srv.dbs[dbid].empty();
    }
    srv.functions = crate::function::Functions::new();
}

/// replicationAttachToNewMaster: a full sync starts a new history, so the
/// cached master and the backlog are useless now.
fn replication_attach_to_new_master(srv: &mut Server) {
    replication_discard_cached_master(srv);
    // Our replicas followed the old history: they must sync again.
    super::master::disconnect_slaves(srv);
    srv.repl.backlog = None;
}

/// What readSyncBulkPayload does before either load: no AOF rewrite or
/// BGSAVE child while the data is replaced (the AOF starts over from the
/// new data once it loaded, restartAOFAfterSYNC; a BGSAVE would write
/// the old data over the synced file).
fn stop_children_before_load(srv: &mut Server, diskless: bool) {
    if srv.aof.state != crate::aof::AofStatus::Off {
        crate::aof::stop_append_only(srv);
    }
    if srv.rdb.has_active_child() {
        if !diskless {
            server_log(
                LogLevel::Notice,
                &format!("Replica is about to load the RDB file received from the master, but there is a pending RDB child running. Killing process {} and removing its temp file to avoid any race", srv.rdb.child_pid.unwrap_or(0)),
            );
        }
        crate::rdb::kill_rdb_child(srv);
    }
}

/// Flush before a load that goes straight into the server's databases
/// (disk loads, and on-empty-db).
fn flush_old_data(srv: &mut Server) {
    replication_attach_to_new_master(srv);
    server_log(
        LogLevel::Notice,
        "MASTER <-> REPLICA sync: Flushing old data",
    );
    empty_data(srv);
}

/// The second half of readSyncBulkPayload for a disk load: the received
/// file becomes the dbfilename and loads from there, then the link turns
/// into the master client.
fn replica_load_rdb(srv: &mut Server, mut link: MasterLink) -> Next {
    let Some(t) = link.transfer.take() else {
        return transfer_error(srv, link);
    };
    let usemark = t.usemark;
    if let Some(file) = t.file {
        let _ = file.sync_all();
    }
    stop_children_before_load(srv, false);
    flush_old_data(srv);
    server_log(
        LogLevel::Notice,
        "MASTER <-> REPLICA sync: Loading DB in memory",
    );
    let dbfilename = srv.config.dbfilename.clone();
    if let Err(e) = std::fs::rename(&t.tmpfile, &dbfilename) {
        server_log(
            LogLevel::Warning,
            &format!(
                "Failed trying to rename the temp DB into {dbfilename} in MASTER <-> REPLICA synchronization: {}",
                crate::config::strerror(&e)
            ),
        );
        let _ = std::fs::remove_file(&t.tmpfile);
        return transfer_error(srv, link);
    }
    // The loader pings the master through the link (rdb_load_progress).
    srv.repl.replica.loading_link = Some(link);
    let loaded = crate::rdb::rdb_load(srv, &dbfilename, crate::rdb::LoadMode::Fresh);
    // Nothing served during the load may drop the link (REPLICAOF and
    // the like are refused with -LOADING).
    let Some(link) = srv.repl.replica.loading_link.take() else {
        return Next::Gone;
    };
    if let Err(e) = loaded {
        let why = match e {
            crate::rdb::LoadError::Open(e) => crate::config::strerror(&e),
            crate::rdb::LoadError::Bad(msg) => msg,
        };
        server_log(
            LogLevel::Warning,
            &format!("Failed trying to load the MASTER synchronization DB from disk: {why}"),
        );
        return transfer_error(srv, link);
    }
    finish_full_sync(srv, link, usemark)
}

/// rioConnRead: the RDB of a diskless load, read straight off the master
/// socket. The socket is blocking with a repl-timeout receive timeout for
/// the load (connBlock, connRecvTimeout), as in Redis: the replica does
/// nothing else meanwhile but serve clients from the loader's progress
/// callback. A `$<len>` transfer never reads past its length (the master's
/// command stream follows it); an EOF-marked one ends at the mark.
struct ConnReader {
    sock: std::net::TcpStream,
    /// Payload bytes that arrived with the `$` line.
    pending: Vec<u8>,
    pos: usize,
    /// The announced length, 0 for an EOF-marked transfer (read_limit).
    limit: u64,
    read_so_far: u64,
}

impl ConnReader {
    /// A blocking duplicate of the link's socket (the flags are shared:
    /// `restore` puts the link back into non-blocking mode).
    fn new(link: &MasterLink, pending: Vec<u8>, limit: u64, timeout_secs: i64) -> io::Result<Self> {
        use std::os::fd::{AsRawFd, FromRawFd};
        // SAFETY: dup() returns a new descriptor that we own from here on.
        let fd = unsafe { libc::dup(link.stream.as_raw_fd()) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a fresh, valid descriptor of a connected TCP socket.
        let sock = unsafe { std::net::TcpStream::from_raw_fd(fd) };
        sock.set_nonblocking(false)?;
        let timeout = u64::try_from(timeout_secs).ok().filter(|&t| t > 0);
        sock.set_read_timeout(timeout.map(std::time::Duration::from_secs))?;
        Ok(ConnReader {
            sock,
            pending,
            pos: 0,
            limit,
            read_so_far: 0,
        })
    }

    /// connNonBlock + connRecvTimeout(0): the link goes back to the loop.
    fn restore(&self) {
        let _ = self.sock.set_read_timeout(None);
        let _ = self.sock.set_nonblocking(true);
    }
}

impl Read for ConnReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut want = buf.len();
        if self.limit != 0 {
            let left = self.limit.saturating_sub(self.read_so_far);
            if left == 0 {
                return Ok(0);
            }
            want = want.min(usize::try_from(left).unwrap_or(usize::MAX));
        }
        let n = if self.pos < self.pending.len() {
            let n = want.min(self.pending.len() - self.pos);
            buf[..n].copy_from_slice(&self.pending[self.pos..self.pos + n]);
            self.pos += n;
            n
        } else {
            match self.sock.read(&mut buf[..want]) {
                Ok(n) => n,
                // The receive timeout expired (rioConnRead: ETIMEDOUT).
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    return Err(io::Error::from_raw_os_error(libc::ETIMEDOUT))
                }
                Err(e) => return Err(e),
            }
        };
        self.read_so_far += n as u64;
        Ok(n)
    }
}

/// The second half of readSyncBulkPayload for a diskless load: parse the
/// RDB off the socket. swapdb loads into temporary databases and
/// functions and swaps them in only once the whole payload (and its EOF
/// mark) arrived, so a broken transfer leaves the old data in place; when
/// the master's replid is already ours the old data stays readable
/// meanwhile (async_loading). on-empty-db loads into the emptied server.
fn replica_load_rdb_from_socket(srv: &mut Server, mut link: MasterLink) -> Next {
    // The transfer state stays on the link for INFO (master_sync_*: the
    // announced size, nothing counted as read, as Redis's diskless path).
    let Some((usemark, eofmark, size)) = link
        .transfer
        .as_ref()
        .map(|t| (t.usemark, t.eofmark.clone(), t.size))
    else {
        return transfer_error(srv, link);
    };
    stop_children_before_load(srv, true);
    let swapdb = cfg_num(srv, "repl-diskless-load") == 2;
    if swapdb {
        srv.loading.temp_db = Some(crate::rdb::TempDb::new(srv.dbs.len()));
    } else {
        flush_old_data(srv);
    }
    server_log(
        LogLevel::Notice,
        "MASTER <-> REPLICA sync: Loading DB in memory",
    );
    // The old data is an earlier point of the history we are receiving:
    // reads may go on serving it.
    let async_loading = swapdb && srv.repl.replid == srv.repl.replica.master_replid;
    let pending = std::mem::take(&mut link.inbuf);
    let limit = if usemark { 0 } else { size as u64 };
    let conn = match ConnReader::new(&link, pending, limit, cfg_num(srv, "repl-timeout")) {
        Ok(c) => c,
        Err(e) => {
            server_log(
                LogLevel::Warning,
                &format!(
                    "Failed trying to load the MASTER synchronization DB from socket: {}",
                    crate::config::strerror(&e)
                ),
            );
            return abort_socket_load(srv, link, swapdb);
        }
    };
    crate::rdb::start_loading(srv, limit, async_loading);
    srv.repl.replica.loading_link = Some(link);
    let checksum = cfg_bool(srv, "rdbchecksum");
    let mut r = rdb::load::RdbReader::new(
        conn,
        (!usemark).then_some(limit),
        checksum,
        crate::rdb::load_limits(srv),
    );
    r.deep = crate::rdb::deep_sanitize(srv, false);
    let loaded = socket_load_rio(srv, &mut r);
    let mut ok = loaded.is_ok();
    if ok && usemark {
        // The 40 bytes after the RDB must be the announced mark.
        ok = r.read_raw(CONFIG_RUN_ID_SIZE).is_ok_and(|b| b == eofmark);
        if !ok {
            server_log(LogLevel::Warning, "Replication stream EOF marker is broken");
        }
    }
    srv.stats.dump_payload_sanitizations += r.sanitizations;
    // rdbLoadProgressCallback counts the payload as replication input.
    srv.stats.net_repl_input_bytes += r.processed();
    let (conn, rest) = r.into_parts();
    conn.restore();
    if let Err(errno) = loaded {
        server_log(
            LogLevel::Warning,
            &format!("Failed trying to load the MASTER synchronization DB from socket: {errno}"),
        );
    }
    // Nothing served during the load may drop the link (REPLICAOF and
    // the like are refused with -LOADING).
    let Some(mut link) = srv.repl.replica.loading_link.take() else {
        crate::rdb::stop_loading(srv);
        if let Some(temp) = srv.loading.temp_db.take() {
            discard_temp_db(srv, temp);
        }
        return Next::Gone;
    };
    if !ok {
        crate::rdb::stop_loading(srv);
        return abort_socket_load(srv, link, swapdb);
    }
    // The stream bytes the master sent after the payload.
    let mut rest = rest;
    rest.extend_from_slice(&conn.pending[conn.pos..]);
    link.inbuf = rest;
    drop(conn);
    if let Some(temp) = srv.loading.temp_db.take() {
        // Our cached master and our replicas follow the old history.
        replication_attach_to_new_master(srv);
        server_log(
            LogLevel::Notice,
            "MASTER <-> REPLICA sync: Swapping active DB with loaded DB",
        );
        let old = swap_main_db_with_temp_db(srv, temp);
        discard_temp_db(srv, old);
        server_log(
            LogLevel::Notice,
            "MASTER <-> REPLICA sync: Discarding old DB in background",
        );
    }
    // No save happened: the data changed all the same.
    srv.dirty += 1;
    crate::rdb::stop_loading(srv);
    link.transfer = None;
    finish_full_sync(srv, link, usemark)
}

/// rdbLoadRioWithLoadingCtx on the socket, with rdbReportError's
/// diskless branches. A wrong signature or version is logged and fails
/// the sync (errno EINVAL); a short read (the connection broke, or timed
/// out) is logged and the replica goes on; a corrupt body stops the
/// server (rdb_report_socket_load_error). Err: the errno text to log.
fn socket_load_rio(
    srv: &mut Server,
    r: &mut rdb::load::RdbReader<ConnReader>,
) -> Result<(), String> {
    if let Err(e) = r.load_header() {
        return Err(match e {
            rdb::RdbError::Corrupt(msg) => {
                server_log(LogLevel::Warning, &msg);
                crate::config::strerror(&io::Error::from_raw_os_error(libc::EINVAL))
            }
            rdb::RdbError::Io(e) => {
                let why = crate::config::strerror(&e);
                crate::rdb::rdb_report_socket_load_error(
                    &rdb::RdbError::Io(e),
                    srv.loading.loaded_bytes,
                );
                why
            }
            other => {
                crate::rdb::rdb_report_socket_load_error(&other, srv.loading.loaded_bytes);
                String::new()
            }
        });
    }
    match crate::rdb::rdb_load_rio(srv, r, crate::rdb::LoadMode::Fresh, false) {
        Ok(()) => Ok(()),
        Err(e) => {
            let why = match &e {
                rdb::RdbError::Io(io) => crate::config::strerror(io),
                _ => String::new(),
            };
            crate::rdb::rdb_report_socket_load_error(&e, srv.loading.loaded_bytes);
            Err(why)
        }
    }
}

/// The failed exit of a diskless load: reconnect, and either drop the
/// half-loaded temporary data (swapdb: the old data stays) or empty the
/// half-loaded server (on-empty-db started from nothing anyway).
fn abort_socket_load(srv: &mut Server, link: MasterLink, swapdb: bool) -> Next {
    let next = transfer_error(srv, link);
    if swapdb {
        if let Some(temp) = srv.loading.temp_db.take() {
            discard_temp_db(srv, temp);
        }
        server_log(
            LogLevel::Notice,
            "MASTER <-> REPLICA sync: Discarding temporary DB in background",
        );
    } else {
        empty_data(srv);
    }
    next
}

/// swapMainDbWithTempDb: the loaded databases and functions take the
/// place of the server's, which come back to be discarded. Watchers of
/// keys in either see them change; clients blocked on keys may find data
/// now, and XREADGROUP readers of a stream that went away get their error.
// redis: db.c swapMainDbWithTempDb
fn swap_main_db_with_temp_db(srv: &mut Server, temp: crate::rdb::TempDb) -> crate::rdb::TempDb {
    let n = srv.dbs.len();
    // The loaded databases sit behind the server's for a moment, as
    // dbids n..2n, so that the SWAPDB helpers can compare the two.
    srv.dbs.extend(temp.dbs);
    for dbid in 0..n {
        crate::multi::touch_all_watched_keys_in_db(srv, dbid, Some(n + dbid));
        crate::blocked::scan_database_for_deleted_streams(srv, dbid, Some(n + dbid));
    }
    let mut old: Vec<storage::db::Db> = srv.dbs.drain(..n).collect();
    for (dbid, (db, old_db)) in srv.dbs.iter_mut().zip(old.iter_mut()).enumerate() {
        db.id = dbid;
        old_db.id = dbid;
    }
    for dbid in 0..n {
        crate::blocked::scan_database_for_ready_keys(srv, dbid);
    }
    let functions = std::mem::replace(&mut srv.functions, temp.functions);
    crate::tracking::tracking_invalidate_keys_on_flush(srv);
    srv.repl.replica.slave_keys_with_expire.clear();
    crate::rdb::TempDb {
        dbs: old,
        functions,
    }
}

/// disklessLoadDiscardTempDb: the keys go to the lazy-free worker, as
/// Redis frees them in the background.
fn discard_temp_db(srv: &mut Server, temp: crate::rdb::TempDb) {
    for mut db in temp.dbs {
        let (dict, expires) = db.take_tables();
        srv.lazyfree.free_database_async(dict, expires, None);
    }
    drop(temp.functions);
}

/// The end of readSyncBulkPayload once the data loaded: the link becomes
/// the master client, and we take the master's replid and offset.
fn finish_full_sync(srv: &mut Server, link: MasterLink, usemark: bool) -> Next {
    let db = usize::try_from(srv.rdb.last_repl_stream_db)
        .ok()
        .filter(|&d| d < srv.dbs.len())
        .unwrap_or(0);
    let replid = srv.repl.replica.master_replid.clone();
    let reploff = srv.repl.replica.master_initial_offset;
    // After a full sync we take the master's id and offset; the secondary
    // id is cleared, a new history starts.
    srv.repl.replid = replid.clone();
    srv.repl.master_repl_offset = reploff;
    srv.repl.replid2 = "0".repeat(CONFIG_RUN_ID_SIZE);
    srv.repl.second_replid_offset = -1;
    // A replica keeps a backlog whether or not it has replicas, to answer
    // PSYNC after a failover makes it a master.
    if srv.repl.backlog.is_none() {
        super::master::create_replication_backlog(srv);
    }
    server_log(
        LogLevel::Notice,
        "MASTER <-> REPLICA sync: Finished with success",
    );
    replication_create_master_client(srv, link, db, replid, reploff);
    // A diskless master puts us online on our first ACK.
    if usemark {
        replication_send_ack(srv);
    }
    restart_aof_after_sync(srv);
    Next::Gone
}

/// replicationSendNewlineToMaster: while a full sync's RDB loads, one
/// newline a second to the master, which reads it as a ping and does not
/// time us out. Best effort: the socket takes it or not.
// redis: replication.c replicationSendNewlineToMaster
pub fn replication_send_newline_to_master(srv: &mut Server) {
    if srv.repl.masterhost.is_none() || srv.repl.repl_state != ReplState::Transfer {
        return;
    }
    let now = now_secs();
    let side = &mut srv.repl.replica;
    if now == side.newline_sent {
        return;
    }
    side.newline_sent = now;
    if let Some(link) = side.loading_link.as_mut() {
        let _ = link.stream.write(b"\n");
    }
}

/// restartAOFAfterSYNC: appendonly yes starts again with a rewrite of the
/// data just loaded. (Redis retries ten times and then exits; here a
/// failure is logged and the next sync or promotion tries again.)
fn restart_aof_after_sync(srv: &mut Server) {
    if srv.aof.cfg.enabled
        && srv.aof.state == crate::aof::AofStatus::Off
        && crate::aof::start_append_only(srv).is_err()
    {
        server_log(
            LogLevel::Warning,
            "Failed enabling the AOF after successful master synchronization!",
        );
    }
}

// ------------------------------------------------------ the master client

/// replicationCreateMasterClient (and replicationResurrectCachedMaster):
/// the link socket becomes a client flagged CLIENT_MASTER, linked.
fn replication_create_master_client(
    srv: &mut Server,
    link: MasterLink,
    db: usize,
    replid: String,
    reploff: i64,
) {
    let MasterLink {
        token,
        mut stream,
        inbuf,
        ..
    } = link;
    let _ = srv
        .poll
        .registry()
        .reregister(&mut stream, token, Interest::READABLE);
    let peer = stream
        .peer_addr()
        .unwrap_or_else(|_| std::net::SocketAddr::from(([0, 0, 0, 0], 0)));
    let id = srv.next_client_id;
    srv.next_client_id += 1;
    let mut c = Box::new(Client::new(id, token, stream, peer));
    c.flags |= CLIENT_MASTER;
    c.authenticated = true;
    c.db = db;
    c.repl.reploff = reploff;
    c.repl.read_reploff = reploff + inbuf.len() as i64;
    c.querybuf.extend_from_slice(&inbuf);
    srv.repl.replica.master_replid = replid;
    srv.repl.replica.pending_stream.clear();
    srv.repl.master = Some(token);
    srv.repl.repl_state = ReplState::Connected;
    srv.repl.repl_down_since = 0;
    // Stream bytes that arrived with the last handshake read.
    if !c.querybuf.is_empty() {
        networking::process_input_buffer(srv, &mut c);
        c.flags |= CLIENT_PENDING_READ;
    }
    networking::put_back_client(srv, c);
}

/// One command of the master's stream (from process_commands_in_buffer):
/// run it with no reply, count its bytes in the offset.
pub fn process_master_command(srv: &mut Server, c: &mut Client) {
    // Everything parsed so far is complete commands: the offset after this one.
    let end_off = c.repl.read_reploff - c.querybuf.len() as i64;
    let args: Vec<&[u8]> = c.argv.iter().map(|a| &a[..]).collect();
    let pending_before = srv.repl.replica.pending_stream.len();
    srv.repl
        .replica
        .pending_stream
        .extend_from_slice(&encode_command(&args));
    if c.argc() >= 2
        && c.arg(0).eq_ignore_ascii_case(b"replconf")
        && c.arg(1).eq_ignore_ascii_case(b"getack")
    {
        // The one command the master wants an answer to (the offset before it).
        add_reply_ack(c);
    } else {
        let mark = c.reply.len();
        srv.repl.replica.executing_master = true;
        server::process_command(srv, c);
        srv.repl.replica.executing_master = false;
        if c.has_flag(CLIENT_POSTPONED) {
            // CLIENT PAUSE parked the command: nothing applied, the offset
            // stays; it runs from scratch when the pause ends
            // (networking::resume_postponed_clients).
            srv.repl.replica.pending_stream.truncate(pending_before);
            return;
        }
        if c.reply.byte_at(mark) == Some(b'-') {
            show_latest_backlog(srv);
        }
        // A master gets no replies (prepareClientToWrite).
        c.reply.truncate(mark);
    }
    if !c.has_flag(CLIENT_MULTI) {
        c.repl.reploff = end_off;
        let applied = std::mem::take(&mut srv.repl.replica.pending_stream);
        replication_feed_stream_from_master_stream(srv, &applied, end_off);
    }
}

/// replicationFeedStreamFromMasterStream: what we applied of our master's
/// stream goes, as is, into our backlog and to our own replicas (a chain).
/// A replica does not feed its replicas from call(): its stream is the
/// master's, byte for byte, so that offsets agree along the chain.
fn replication_feed_stream_from_master_stream(srv: &mut Server, buf: &[u8], end_off: i64) {
    // The master side's feedReplicationBuffer: backlog, offset, and every
    // replica of ours that accumulates the stream (with its output limit).
    super::master::feed_replication_buffer(srv, buf);
    srv.repl.master_repl_offset = end_off;
}

/// showLatestBacklog: after server.rs note_errors logged `== CRITICAL ==`
/// for an error replied to the master (it never reaches the master; the
/// replica may have diverged), the end of the backlog, for debugging.
fn show_latest_backlog(srv: &Server) {
    let Some(b) = srv.repl.backlog.as_ref().filter(|b| b.histlen > 0) else {
        return;
    };
    let from = b.offset + b.histlen as i64 - (b.histlen.min(256)) as i64;
    let tail = b.copy_from(from).unwrap_or_default();
    let mut dump = bytes::BytesMut::new();
    crate::monitor::cat_repr(&mut dump, &tail);
    // sdscatrepr's quoted form, inside the log line's own quotes.
    server_log(
        LogLevel::Warning,
        &format!("Latest backlog is: '{}'", String::from_utf8_lossy(&dump)),
    );
}

/// REPLCONF ACK <reploff> into the master's output.
fn add_reply_ack(c: &mut Client) {
    let off = c.repl.reploff.to_string();
    c.reply
        .extend_from_slice(&encode_command(&[b"REPLCONF", b"ACK", off.as_bytes()]));
}

/// replicationSendAck: tell the master how far we applied its stream.
pub fn replication_send_ack(srv: &mut Server) {
    let Some(token) = srv.repl.master else {
        return;
    };
    let Some(c) = srv.clients.get_mut(&token) else {
        return;
    };
    add_reply_ack(c);
    if !c.has_flag(CLIENT_PENDING_WRITE) {
        c.flags |= CLIENT_PENDING_WRITE;
        srv.clients_pending_write.push(token);
    }
}

/// freeClient of the master client: keep its state for PSYNC
/// (replicationCacheMaster), then reconnect
/// (replicationHandleMasterDisconnection).
pub fn replication_cache_master(srv: &mut Server, c: &Client) {
    if srv.repl.master != Some(c.token) {
        return;
    }
    server_log(LogLevel::Warning, "Connection with master lost.");
    server_log(LogLevel::Notice, "Caching the disconnected master state.");
    // What was read but not applied is dropped: the PSYNC asks for it again.
    srv.repl.replica.pending_stream.clear();
    srv.repl.replica.cached_master = Some(CachedMaster {
        replid: srv.repl.replica.master_replid.clone(),
        reploff: c.repl.reploff,
        db: c.db,
    });
    srv.repl.master = None;
    srv.repl.repl_state = ReplState::Connect;
    srv.repl.repl_down_since = now_secs();
    if let Some(host) = srv.repl.masterhost.clone() {
        server_log(
            LogLevel::Notice,
            &format!("Reconnecting to MASTER {host}:{}", srv.repl.masterport),
        );
        connect_with_master(srv);
    }
}

/// replicationCacheMasterUsingMyself
fn replication_cache_master_using_myself(srv: &mut Server) {
    server_log(
        LogLevel::Notice,
        "Before turning into a replica, using my own master parameters to synthesize a cached master: I may be able to synchronize with the new master with just a partial transfer.",
    );
    srv.repl.replica.cached_master = Some(CachedMaster {
        replid: srv.repl.replid.clone(),
        reploff: srv.repl.master_repl_offset,
        db: 0,
    });
}

/// replicationDiscardCachedMaster
fn replication_discard_cached_master(srv: &mut Server) {
    if srv.repl.replica.cached_master.take().is_some() {
        server_log(
            LogLevel::Notice,
            "Discarding previously cached master state.",
        );
    }
}

// ------------------------------------------------------------------- cron

/// The replica half of replicationCron (once per second): time-outs,
/// (re)connecting, REPLCONF ACK.
pub fn replication_cron(srv: &mut Server) {
    if srv.repl.masterhost.is_none() {
        return;
    }
    let now = now_secs();
    let timeout = cfg_num(srv, "repl-timeout");
    let state = srv.repl.repl_state;
    let idle = now - srv.repl.replica.transfer_lastio;
    if (state == ReplState::Connecting || in_handshake_state(state)) && idle > timeout {
        server_log(LogLevel::Warning, "Timeout connecting to the MASTER...");
        cancel_replication_handshake(srv, true);
    }
    if state == ReplState::Transfer && idle > timeout {
        server_log(
            LogLevel::Warning,
            "Timeout receiving bulk data from MASTER... If the problem persists try to set the 'repl-timeout' parameter in redis.conf to a larger value.",
        );
        cancel_replication_handshake(srv, true);
    }
    if state == ReplState::Connected {
        if let Some(token) = srv.repl.master {
            let silent = srv
                .clients
                .get(&token)
                .map_or(0, |c| c.last_interaction.elapsed().as_secs() as i64);
            if silent > timeout {
                server_log(
                    LogLevel::Warning,
                    "MASTER timeout: no data nor PING received...",
                );
                networking::free_client(srv, token);
            }
        }
    }
    if srv.repl.repl_state == ReplState::Connect {
        server_log(
            LogLevel::Notice,
            &format!(
                "Connecting to MASTER {}:{}",
                srv.repl.masterhost.as_deref().unwrap_or(""),
                srv.repl.masterport
            ),
        );
        connect_with_master(srv);
    }
    replication_send_ack(srv);
}

// ------------------------------------------------- what a replica refuses

/// processCommand's READONLY check: a client's write on a read-only
/// replica (the master and the AOF loader are obeyed).
pub fn replica_denies_write(srv: &Server, c: &Client, cmd_flags: u64) -> bool {
    srv.repl.masterhost.is_some()
        && cmd_flags & crate::commands::CMD_WRITE != 0
        && !c.has_flag(CLIENT_MASTER)
        && c.id != CLIENT_ID_AOF
        && cfg_bool(srv, "replica-read-only")
}

/// scriptVerifyWriteCommandAllow's replica check: a write from a script
/// that a client (not the master, not the AOF) runs on a read-only replica.
pub fn replica_denies_script_write(srv: &Server, cmd_flags: u64) -> bool {
    srv.repl.masterhost.is_some()
        && cmd_flags & crate::commands::CMD_WRITE != 0
        && !srv.repl.replica.executing_master
        && !srv.aof.loading
        && cfg_bool(srv, "replica-read-only")
}

/// processCommand's MASTERDOWN check: with replica-serve-stale-data no,
/// only `stale` commands run while the link is down.
pub fn replica_denies_stale(srv: &Server, cmd_flags: u64) -> bool {
    srv.repl.masterhost.is_some()
        && srv.repl.repl_state != ReplState::Connected
        && cmd_flags & crate::commands::CMD_STALE == 0
        && !cfg_bool(srv, "replica-serve-stale-data")
}

/// expireIfNeeded on a replica: the master's commands see every key (the
/// master sends a DEL when one expires); other clients see a logically
/// expired key as missing, but it stays, unless a write on a writable
/// replica looks it up (`force_delete`). Some(expired) when this server is
/// a replica and decides; None: delete as a master does.
pub fn replica_expire_verdict(srv: &Server, force_delete: bool) -> Option<bool> {
    srv.repl.masterhost.as_ref()?;
    if srv.repl.replica.executing_master {
        return Some(false);
    }
    if force_delete && !cfg_bool(srv, "replica-read-only") {
        return None;
    }
    Some(true)
}

/// rememberSlaveKeyWithExpire: a client of a writable replica gave a key a
/// TTL; no master will send its DEL, so the replica expires it itself.
pub fn remember_slave_key_with_expire(srv: &mut Server, dbid: usize, key: &[u8]) {
    if srv.repl.masterhost.is_none()
        || srv.repl.replica.executing_master
        || cfg_bool(srv, "replica-read-only")
        || dbid >= 64
    {
        return;
    }
    *srv.repl
        .replica
        .slave_keys_with_expire
        .entry(key.to_vec())
        .or_insert(0) |= 1u64 << dbid;
}

/// expireSlaveKeys: from databases_cron on a replica (instead of the
/// active expire cycle): delete the remembered keys whose TTL passed.
pub fn expire_slave_keys(srv: &mut Server) {
    if srv.repl.replica.slave_keys_with_expire.is_empty() {
        return;
    }
    let now = server::mstime();
    let keys: Vec<(Vec<u8>, u64)> = srv
        .repl
        .replica
        .slave_keys_with_expire
        .iter()
        .map(|(k, m)| (k.clone(), *m))
        .collect();
    for (key, mask) in keys {
        let mut left = 0u64;
        for dbid in 0..srv.dbs.len().min(64) {
            if mask & (1u64 << dbid) == 0 {
                continue;
            }
            match srv.dbs[dbid].get_expire(&key) {
                Some(when) if when <= now => crate::db::delete_expired_key(srv, dbid, &key),
                Some(_) => left |= 1u64 << dbid,
                None => {}
            }
        }
        if left == 0 {
            srv.repl.replica.slave_keys_with_expire.remove(&key);
        } else {
            srv.repl.replica.slave_keys_with_expire.insert(key, left);
        }
    }
}

// ------------------------------------------------------- INFO and ROLE

/// The replica lines of INFO replication, after `role:slave` and before
/// `connected_slaves`, as genRedisInfoString prints them.
pub fn info_replica_fields(srv: &Server) -> String {
    let r = &srv.repl;
    let now = now_secs();
    let master = r.master.and_then(|t| srv.clients.get(&t));
    let (reploff, read_reploff) = match (master, &r.replica.cached_master) {
        (Some(c), _) => (c.repl.reploff, c.repl.read_reploff),
        (None, Some(cm)) => (cm.reploff, cm.reploff),
        _ => (1, 1),
    };
    let last_io = master.map_or(-1, |c| c.last_interaction.elapsed().as_secs() as i64);
    let mut s = String::new();
    s.push_str(&format!(
        "master_host:{}\r\nmaster_port:{}\r\nmaster_link_status:{}\r\nmaster_last_io_seconds_ago:{}\r\nmaster_sync_in_progress:{}\r\nslave_read_repl_offset:{}\r\nslave_repl_offset:{}\r\n",
        r.masterhost.as_deref().unwrap_or(""),
        r.masterport,
        if r.repl_state == ReplState::Connected { "up" } else { "down" },
        last_io,
        (r.repl_state == ReplState::Transfer) as i32,
        read_reploff,
        reploff,
    ));
    if r.repl_state == ReplState::Transfer {
        let (size, read) = r
            .replica
            .link
            .as_ref()
            .or(r.replica.loading_link.as_ref())
            .and_then(|l| l.transfer.as_ref())
            .map_or((-1, 0), |t| (t.size, t.read));
        let perc = if size > 0 {
            read as f64 / size as f64 * 100.0
        } else {
            0.0
        };
        s.push_str(&format!(
            "master_sync_total_bytes:{size}\r\nmaster_sync_read_bytes:{read}\r\nmaster_sync_left_bytes:{}\r\nmaster_sync_perc:{perc:.2}\r\nmaster_sync_last_io_seconds_ago:{}\r\n",
            size - read,
            now - r.replica.transfer_lastio,
        ));
    }
    if r.repl_state != ReplState::Connected {
        let down = if r.repl_down_since != 0 {
            now - r.repl_down_since
        } else {
            -1
        };
        s.push_str(&format!("master_link_down_since_seconds:{down}\r\n"));
    }
    s.push_str(&format!(
        "slave_priority:{}\r\nslave_read_only:{}\r\nreplica_announced:{}\r\n",
        cfg_num(srv, "replica-priority"),
        cfg_bool(srv, "replica-read-only") as i32,
        cfg_bool(srv, "replica-announced") as i32,
    ));
    s
}

/// ROLE's replica form: ["slave", host, port, state, offset].
// redis: replication.c roleCommand (the masterhost branch)
pub fn role_replica(srv: &Server, c: &mut Client) {
    let r = &srv.repl;
    let state = if in_handshake_state(r.repl_state) {
        "handshake"
    } else {
        match r.repl_state {
            ReplState::None => "none",
            ReplState::Connect => "connect",
            ReplState::Connecting => "connecting",
            ReplState::Transfer => "sync",
            ReplState::Connected => "connected",
            _ => "unknown",
        }
    };
    let off = r
        .master
        .and_then(|t| srv.clients.get(&t))
        .map_or(-1, |m| m.repl.reploff);
    c.add_reply_array_len(5);
    c.add_reply_bulk(b"slave");
    c.add_reply_bulk(r.masterhost.as_deref().unwrap_or("").as_bytes());
    c.add_reply_integer(i64::from(r.masterport));
    c.add_reply_bulk(state.as_bytes());
    c.add_reply_integer(off);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_command_is_a_multibulk() {
        assert_eq!(
            encode_command(&[b"REPLCONF", b"ACK", b"42"]),
            b"*3\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n$2\r\n42\r\n".to_vec()
        );
    }

    #[test]
    fn handshake_states_are_redis_slave_is_in_handshake_state() {
        assert!(!in_handshake_state(ReplState::Connecting));
        assert!(in_handshake_state(ReplState::ReceivePingReply));
        assert!(in_handshake_state(ReplState::ReceivePsyncReply));
        assert!(!in_handshake_state(ReplState::Transfer));
    }
}
