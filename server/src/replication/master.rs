//! The master side of replication (the master half of Redis's
//! replication.c): see mod.rs for the shared state.
//!
//! A replica's life, as this master sees it (`c.repl.replstate`):
//!
//! 1. It connects as a normal client, says REPLCONF listening-port /
//!    capa eof / capa psync2, then `PSYNC <replid> <offset>` (or the old
//!    `SYNC`). `sync_command` first tries a partial resync
//!    (`master_try_partial_resynchronization`): when the replid matches
//!    (or replid2, up to `second_replid_offset`) and the backlog still
//!    holds the offset, the reply is `+CONTINUE <replid>` followed by the
//!    backlog tail, and the replica is ONLINE at once.
//! 2. Otherwise a full sync: the client becomes a replica in
//!    WAIT_BGSAVE_START. When a BGSAVE starts for it
//!    (`start_bgsave_for_replication`, which forks through rdb.rs), it
//!    gets `+FULLRESYNC <replid> <offset>` and moves to WAIT_BGSAVE_END;
//!    from that moment the stream is accumulated in its output buffer
//!    (not written: nothing may reach the replica before the RDB).
//!    A replica arriving while that BGSAVE runs shares it: it copies the
//!    first one's accumulated buffer and its offset.
//! 3. The child ends (`update_slaves_waiting_bgsave`, from rdb.rs): the
//!    replica goes to SEND_BULK and the file is sent as `$<len>\r\n` +
//!    bytes by `send_bulk_to_slave`, from the writable event of its
//!    socket, never blocking the loop.
//! 4. File sent: ONLINE. Its output buffer (the stream since the fork) is
//!    written like any reply, and every later write reaches it through
//!    `replication_feed_slaves`, the exit of propagate.rs.
//!
//! Diskless sync (`repl-diskless-sync yes`, the 7.0 default, for
//! replicas that said `capa eof`): after `repl-diskless-sync-delay`
//! seconds (more replicas may join), the child writes
//! `$EOF:<40 random chars>\r\n` + RDB + the same 40 chars into a pipe
//! (`rdb_save_to_slaves_sockets`); the parent relays each 16 KB it reads
//! to every replica of that transfer (`rdb_pipe_read_handler`) and reads
//! no more until all of them took it (`rdb_pipe_write_handler`), so the
//! slowest replica paces the child. The child exits only when the parent
//! has read everything (the safe-to-exit pipe). Then the replicas are
//! online but get the stream only after their first REPLCONF ACK, which
//! proves they loaded the RDB. Replicas without `capa eof` (old SYNC,
//! redis-cli --rdb without it) get the file from disk.

use std::io::{self, Write};
use std::os::unix::fs::FileExt;

use bytes::Bytes;
use mio::{Interest, Token};

use crate::blocked::BlockType;
use crate::log::{server_log, LogLevel};
use crate::networking::{
    Client, CLIENT_BLOCKED, CLIENT_CLOSE_AFTER_REPLY, CLIENT_CLOSE_ASAP, CLIENT_DENY_BLOCKING,
    CLIENT_PENDING_WRITE, CLIENT_PRE_PSYNC, CLIENT_SLAVE, CLIENT_WRITE_INTEREST,
};
use crate::server::{mstime, Server, CONFIG_RUN_ID_SIZE};
use crate::shared;

use super::{ReplBacklog, SlaveState, SLAVE_CAPA_EOF, SLAVE_CAPA_PSYNC2};

/// PROTO_IOBUF_LEN: the RDB file is read and sent 16 KB at a time.
const PROTO_IOBUF_LEN: usize = 16 * 1024;

/// How many 16 KB chunks of the RDB one writable event sends at most
/// before the loop serves the others (Redis sends one per event, its
/// level-triggered loop comes back at once; here the client stays queued
/// as a capped write does in networking.rs).
const SEND_BULK_CHUNKS_PER_EVENT: usize = 64;

/// CONFIG_REPL_BACKLOG_MIN_SIZE: the backlog is never smaller than 16 KB.
const CONFIG_REPL_BACKLOG_MIN_SIZE: usize = 16 * 1024;

/// RDB_EOF_MARK_SIZE: the random delimiter of a diskless RDB.
const RDB_EOF_MARK_SIZE: usize = 40;

/// NET_HOST_STR_LEN: the longest REPLCONF ip-address accepted.
const NET_HOST_STR_LEN: usize = 256;

/// The master-wide state that is not in ReplicationState's shared fields.
#[derive(Debug, Default)]
pub struct MasterState {
    /// A WAIT blocked during this loop pass: send REPLCONF GETACK before
    /// sleeping (server.get_ack_from_slaves).
    pub get_ack_from_slaves: bool,
    /// Clients blocked in WAIT (server.clients_waiting_acks).
    pub clients_waiting_acks: Vec<Token>,
    /// replication_cron_loops: the PING period counts these.
    pub cron_loops: u64,
    /// The running RDB child writes to replicas' sockets through a pipe
    /// (rdb_child_type == RDB_CHILD_TYPE_SOCKET), and that transfer.
    pub rdb_child_socket: bool,
    pub rdb_pipe: Option<RdbPipe>,
    /// Every replica caught up with the last chunk: read the pipe again
    /// before sleeping (not from inside one replica's write, when that
    /// replica is out of the client table).
    pub rdb_pipe_resume: bool,
    /// The diskless child ended while its replica ran REPLCONF ACK (out
    /// of the client table): that replica and whether the transfer worked.
    pub socket_done_running: Option<(Token, bool)>,
}

/// A diskless transfer (server.rdb_pipe_*).
#[derive(Debug)]
pub struct RdbPipe {
    /// The read end (non-blocking), and the write end of the pipe whose
    /// closing tells the child it may exit (rdb_child_exit_pipe).
    pub read: std::fs::File,
    pub child_exit: Option<std::fs::File>,
    /// The replicas fed (rdb_pipe_conns), with how much of `buf` each has
    /// taken and when it last took a part of it (repl_last_partial_write,
    /// 0 when it is not behind); `writing` counts those still behind
    /// (rdb_pipe_numconns_writing).
    pub conns: Vec<(Token, usize, i64)>,
    pub writing: usize,
    /// The last chunk read from the pipe (rdb_pipe_buff / bufflen).
    pub buf: Vec<u8>,
    /// Read to the end: the child wrote everything.
    pub eof: bool,
}

/// One replica's RDB transfer in SEND_BULK.
#[derive(Debug)]
pub struct BulkTransfer {
    pub file: std::fs::File,
    /// repldboff / repldbsize.
    pub off: u64,
    pub size: u64,
    /// replpreamble: `$<size>\r\n`, what of it is still to send.
    pub preamble: Vec<u8>,
}

fn unixtime() -> i64 {
    mstime() / 1000
}

/// replicationGetSlaveName: `ip:port` as the replica announced it, for
/// log lines.
pub fn replication_get_slave_name(c: &Client) -> String {
    let ip = match &c.repl.slave_addr {
        Some(a) => a.clone(),
        None => slave_peer_ip(c),
    };
    if ip.is_empty() {
        return format!("client id #{}", c.id);
    }
    if c.repl.slave_listening_port != 0 {
        if ip.contains(':') {
            format!("[{ip}]:{}", c.repl.slave_listening_port)
        } else {
            format!("{ip}:{}", c.repl.slave_listening_port)
        }
    } else {
        format!("{ip}:<unknown-replica-port>")
    }
}

/// The peer's IP (connPeerToString without the port).
pub(crate) fn slave_peer_ip(c: &Client) -> String {
    match c.addr.rsplit_once(':') {
        Some((ip, _)) => ip.trim_start_matches('[').trim_end_matches(']').to_string(),
        None => String::new(),
    }
}

/// connWrite of a short control line (+FULLRESYNC, +CONTINUE, the
/// newline keep-alive): written at once, as Redis does, because the socket
/// buffer of a replica in these states is empty. False if it did not all go.
fn conn_write(c: &mut Client, buf: &[u8]) -> bool {
    match c.stream.as_mut() {
        Some(s) => matches!(s.write(buf), Ok(n) if n == buf.len()),
        None => false,
    }
}

// ---------------------------------------------------------------- ids and backlog

/// changeReplicationId: a new random history id.
pub fn change_replication_id(srv: &mut Server) {
    srv.repl.replid = crate::server::random_hex(CONFIG_RUN_ID_SIZE);
}

/// clearReplicationId2: forget the previous history.
pub fn clear_replication_id2(srv: &mut Server) {
    srv.repl.replid2 = "0".repeat(CONFIG_RUN_ID_SIZE);
    srv.repl.second_replid_offset = -1;
}

fn backlog_size(srv: &Server) -> usize {
    (srv.config.repl_backlog_size.max(0) as usize).max(CONFIG_REPL_BACKLOG_MIN_SIZE)
}

/// createReplicationBacklog: from now on the stream is recorded, and
/// propagate.rs sends PROPAGATE_REPL ops here.
pub fn create_replication_backlog(srv: &mut Server) {
    let size = backlog_size(srv);
    srv.repl.backlog = Some(ReplBacklog::new(size, srv.repl.master_repl_offset));
    srv.propagate.repl_enabled = true;
}

/// loadDataFromDisk, the master branch: the history the RDB was saved at
/// becomes our secondary id, valid up to its offset, so replicas of the
/// master we were before the restart continue with +CONTINUE. The backlog
/// (created before loading) holds the DELs of the keys that expired on
/// disk; its offsets are moved on top of the old history.
pub fn restore_master_history(srv: &mut Server, id: String, offset: i64) {
    srv.repl.replid2 = id;
    srv.repl.second_replid_offset = offset + 1;
    srv.repl.master_repl_offset += offset;
    let off = srv.repl.master_repl_offset;
    if let Some(b) = srv.repl.backlog.as_mut() {
        b.offset = off - b.histlen as i64 + 1;
    }
    srv.repl.repl_no_slaves_since = unixtime();
}

/// freeReplicationBacklog.
pub fn free_replication_backlog(srv: &mut Server) {
    srv.repl.backlog = None;
    srv.propagate.repl_enabled = false;
}

/// resizeReplicationBacklog after CONFIG SET repl-backlog-size.
fn resize_replication_backlog(srv: &mut Server) {
    let size = backlog_size(srv);
    let off = srv.repl.master_repl_offset;
    if let Some(b) = srv.repl.backlog.as_mut() {
        if b.buf.len() != size {
            b.resize(size, off);
        }
    }
}

// ---------------------------------------------------------------- the stream

/// feedReplicationBuffer: append stream bytes to the backlog and to every
/// replica that accumulates the stream, advancing master_repl_offset.
/// A replica waiting for its BGSAVE to start gets nothing (its RDB will
/// contain these writes), an rdb-only one never does. An online replica is
/// queued for writing; a replica over its output buffer limit is closed.
pub fn feed_replication_buffer(srv: &mut Server, buf: &[u8]) {
    if srv.repl.backlog.is_none() {
        return;
    }
    resize_replication_backlog(srv);
    srv.repl.master_repl_offset += buf.len() as i64;
    let off = srv.repl.master_repl_offset;
    if let Some(b) = srv.repl.backlog.as_mut() {
        b.feed(buf, off);
    }
    let limits = srv.config.client_output_buffer_limit;
    for i in 0..srv.repl.slaves.len() {
        let token = srv.repl.slaves[i];
        // The client running a command is out of the table (it is never a
        // replica receiving the stream while it runs one).
        let Some(slave) = srv.clients.get_mut(&token) else {
            continue;
        };
        if slave.repl.replstate == SlaveState::WaitBgsaveStart
            || slave.repl.rdb_only
            || slave.has_flag(CLIENT_CLOSE_ASAP)
        {
            continue;
        }
        slave.reply.extend_from_slice(buf);
        if crate::networking::close_client_on_output_buffer_limit_reached(&limits, slave) {
            srv.clients_to_close.push(token);
            continue;
        }
        if slave.repl.replstate == SlaveState::Online && !slave.has_flag(CLIENT_PENDING_WRITE) {
            slave.flags |= CLIENT_PENDING_WRITE;
            srv.clients_pending_write.push(token);
        }
    }
}

/// replicationFeedSlaves: one command into the stream, after a SELECT
/// when it runs in another db than the last one sent (slaveseldb).
/// `dictid` -1 (the cron's PING, GETACK) never selects.
pub fn replication_feed_slaves(srv: &mut Server, dictid: i64, argv: &[Bytes]) {
    // A replica does not produce a stream of its own: it proxies its
    // master's (replica.rs).
    if srv.repl.masterhost.is_some() {
        return;
    }
    if srv.repl.backlog.is_none() && srv.repl.slaves.is_empty() {
        return;
    }
    let mut out = Vec::with_capacity(64);
    if srv.repl.slaveseldb != dictid {
        let id = dictid.to_string();
        out.extend_from_slice(
            format!("*2\r\n$6\r\nSELECT\r\n${}\r\n{id}\r\n", id.len()).as_bytes(),
        );
        srv.repl.slaveseldb = dictid;
    }
    // The stream carries a command exactly as the AOF stores it.
    crate::aof::cat_append_only_generic_command(&mut out, argv);
    feed_replication_buffer(srv, &out);
}

// ---------------------------------------------------------------- SYNC / PSYNC

/// SYNC
/// PSYNC replicationid offset
// redis: replication.c syncCommand
pub fn sync_command(srv: &mut Server, c: &mut Client) {
    // Already a replica: ignore (a retried SYNC on a live link).
    if c.has_flag(CLIENT_SLAVE) {
        return;
    }
    // PSYNC replid offset FAILOVER: our master hands us its role
    // (failover.rs). With our own replid (we follow it), become a master
    // first; the PSYNC then continues the old history through replid2.
    if c.argc() > 3
        && c.arg(0).eq_ignore_ascii_case(b"psync")
        && c.arg(3).eq_ignore_ascii_case(b"failover")
    {
        server_log(
            LogLevel::Warning,
            &format!(
                "Failover request received for replid {}.",
                String::from_utf8_lossy(c.arg(1))
            ),
        );
        if srv.repl.masterhost.is_none() {
            c.add_reply_error("ERR PSYNC FAILOVER can't be sent to a master.");
            return;
        }
        if !c.arg(1).eq_ignore_ascii_case(srv.repl.replid.as_bytes()) {
            c.add_reply_error("ERR PSYNC FAILOVER replid must match my replid.");
            return;
        }
        super::replica::replication_unset_master(srv);
        let info = String::from_utf8_lossy(&crate::networking::client_info_string(c)).into_owned();
        server_log(
            LogLevel::Notice,
            &format!("MASTER MODE enabled (failover request from '{info}')"),
        );
    }
    // No replica may attach while we fail over.
    if srv.repl.failover.state != super::failover::FailoverState::None {
        c.add_reply_error("NOMASTERLINK Can't SYNC while failing over");
        return;
    }
    if srv.repl.masterhost.is_some() && srv.repl.repl_state != super::ReplState::Connected {
        c.add_reply_error("NOMASTERLINK Can't SYNC while not connected with my master");
        return;
    }
    if !c.reply.is_empty() {
        c.add_reply_error("ERR SYNC and PSYNC are invalid with pending output");
        return;
    }
    server_log(
        LogLevel::Notice,
        &format!(
            "Replica {} asks for synchronization",
            replication_get_slave_name(c)
        ),
    );
    if c.arg(0).eq_ignore_ascii_case(b"psync") {
        let Some(psync_offset) = storage::util::string2ll(c.arg(2)) else {
            c.add_reply_error(shared::NOT_INTEGER_ERR);
            server_log(
                LogLevel::Warning,
                &format!(
                    "Replica {} asks for synchronization but with a wrong offset",
                    replication_get_slave_name(c)
                ),
            );
            return;
        };
        if master_try_partial_resynchronization(srv, c, psync_offset) {
            srv.repl.stat_sync_partial_ok += 1;
            return;
        }
        if !c.arg(1).starts_with(b"?") {
            srv.repl.stat_sync_partial_err += 1;
        }
    } else {
        // The old protocol: no +FULLRESYNC line, no offsets, no ACKs.
        c.flags |= CLIENT_PRE_PSYNC;
    }

    // A full resynchronization.
    srv.repl.stat_sync_full += 1;
    c.repl.replstate = SlaveState::WaitBgsaveStart;
    c.flags |= CLIENT_SLAVE;
    srv.repl.slaves.push(c.token);

    // The first replica: start recording the stream, under a new id (there
    // is no valid past history to continue).
    if srv.repl.slaves.len() == 1 && srv.repl.backlog.is_none() {
        change_replication_id(srv);
        clear_replication_id2(srv);
        create_replication_backlog(srv);
        server_log(
            LogLevel::Notice,
            &format!(
                "Replication backlog created, my new replication IDs are '{}' and '{}'",
                srv.repl.replid, srv.repl.replid2
            ),
        );
    }

    if srv.rdb.has_active_child() && srv.repl.msrv.rdb_child_socket {
        // Case 2: the running child streams to other replicas' sockets.
        server_log(
            LogLevel::Notice,
            "Current BGSAVE has socket target. Waiting for next BGSAVE for SYNC",
        );
    } else if srv.rdb.has_active_child() {
        // Case 1: a BGSAVE to disk runs. If another replica waits for its
        // end, this one can share it: same RDB, and a copy of what the
        // other accumulated since the fork.
        let other = srv.repl.slaves.iter().copied().find(|t| {
            srv.clients.get(t).is_some_and(|s| {
                s.repl.replstate == SlaveState::WaitBgsaveEnd
                    && (!s.repl.rdb_only || c.repl.rdb_only)
            })
        });
        let shared = other.and_then(|t| srv.clients.get(&t)).and_then(|s| {
            ((c.repl.slave_capa & s.repl.slave_capa) == s.repl.slave_capa)
                .then(|| (s.reply.clone(), s.repl.psync_initial_offset))
        });
        match shared {
            Some((buf, offset)) => {
                if !c.repl.rdb_only {
                    c.reply = buf;
                }
                let (replid, seldb) = (srv.repl.replid.clone(), &mut srv.repl.slaveseldb);
                replication_setup_slave_for_full_resync(&replid, seldb, c, offset);
                server_log(LogLevel::Notice, "Waiting for end of BGSAVE for SYNC");
            }
            None => server_log(
                LogLevel::Notice,
                "Can't attach the replica to the current BGSAVE. Waiting for next BGSAVE for SYNC",
            ),
        }
    } else if repl_diskless_sync(srv)
        && c.repl.slave_capa & SLAVE_CAPA_EOF != 0
        && srv.config.num("repl-diskless-sync-delay") > 0
    {
        // Case 3 with a delay: more replicas may come; the cron starts it.
        server_log(LogLevel::Notice, "Delay next BGSAVE for diskless SYNC");
    } else if !crate::aof::has_active_child_process(srv) {
        let capa = c.repl.slave_capa;
        start_bgsave_for_replication(srv, Some(c), capa);
    } else {
        server_log(
            LogLevel::Notice,
            "No BGSAVE in progress, but another BG operation is active. BGSAVE for replication delayed",
        );
    }
}

fn repl_diskless_sync(srv: &Server) -> bool {
    srv.config.get_string("repl-diskless-sync").as_deref() == Some("yes")
}

/// masterTryPartialResynchronization: true when the replica continues
/// from the backlog (`+CONTINUE`), false when it needs a full sync.
fn master_try_partial_resynchronization(
    srv: &mut Server,
    c: &mut Client,
    psync_offset: i64,
) -> bool {
    let master_replid = String::from_utf8_lossy(c.arg(1)).into_owned();
    let repl = &srv.repl;
    let is_id1 = master_replid.eq_ignore_ascii_case(&repl.replid);
    let is_id2 = master_replid.eq_ignore_ascii_case(&repl.replid2);
    if !is_id1 && (!is_id2 || psync_offset > repl.second_replid_offset) {
        if !master_replid.starts_with('?') {
            if !is_id1 && !is_id2 {
                server_log(
                    LogLevel::Notice,
                    &format!(
                        "Partial resynchronization not accepted: Replication ID mismatch (Replica asked for '{master_replid}', my replication IDs are '{}' and '{}')",
                        repl.replid, repl.replid2
                    ),
                );
            } else {
                server_log(
                    LogLevel::Notice,
                    &format!(
                        "Partial resynchronization not accepted: Requested offset for second ID was {psync_offset}, but I can reply up to {}",
                        repl.second_replid_offset
                    ),
                );
            }
        } else {
            server_log(
                LogLevel::Notice,
                &format!(
                    "Full resync requested by replica {}",
                    replication_get_slave_name(c)
                ),
            );
        }
        return false;
    }
    // Do we still hold what it asks for?
    let tail = repl
        .backlog
        .as_ref()
        .and_then(|b| b.copy_from(psync_offset));
    let Some(tail) = tail else {
        server_log(
            LogLevel::Notice,
            &format!(
                "Unable to partial resync with replica {} for lack of backlog (Replica request was: {psync_offset}).",
                replication_get_slave_name(c)
            ),
        );
        if psync_offset > repl.master_repl_offset {
            server_log(
                LogLevel::Warning,
                &format!(
                    "Warning: replica {} tried to PSYNC with an offset that is greater than the master replication offset.",
                    replication_get_slave_name(c)
                ),
            );
        }
        return false;
    };

    // Partial resync: a replica, online, continuing from psync_offset.
    c.flags |= CLIENT_SLAVE;
    c.repl.replstate = SlaveState::Online;
    c.repl.repl_ack_time = unixtime();
    srv.repl.slaves.push(c.token);
    let line = if c.repl.slave_capa & SLAVE_CAPA_PSYNC2 != 0 {
        format!("+CONTINUE {}\r\n", srv.repl.replid)
    } else {
        "+CONTINUE\r\n".to_string()
    };
    if !conn_write(c, line.as_bytes()) {
        c.flags |= CLIENT_CLOSE_ASAP;
        return true;
    }
    // addReplyReplicationBacklog: the tail goes out as normal output.
    c.reply.extend_from_slice(&tail);
    server_log(
        LogLevel::Notice,
        &format!(
            "Partial resynchronization request from {} accepted. Sending {} bytes of backlog starting from offset {psync_offset}.",
            replication_get_slave_name(c),
            tail.len()
        ),
    );
    // No SELECT reset: the replica kept its selected db from the old link.
    refresh_good_slaves_count(srv, Some(c));
    true
}

/// replicationSetupSlaveForFullResync: the replica's RDB is being taken
/// at `offset`: tell it (+FULLRESYNC, unless it spoke old SYNC) and start
/// accumulating its stream. The stream after the RDB starts with a SELECT.
fn replication_setup_slave_for_full_resync(
    replid: &str,
    slaveseldb: &mut i64,
    slave: &mut Client,
    offset: i64,
) -> bool {
    slave.repl.psync_initial_offset = offset;
    slave.repl.replstate = SlaveState::WaitBgsaveEnd;
    *slaveseldb = -1;
    if !slave.has_flag(CLIENT_PRE_PSYNC) {
        let line = format!("+FULLRESYNC {replid} {offset}\r\n");
        if !conn_write(slave, line.as_bytes()) {
            slave.flags |= CLIENT_CLOSE_ASAP;
            return false;
        }
    }
    true
}

/// startBgsaveForReplication: fork the RDB (to disk, see the file
/// comment) and move every replica waiting for a BGSAVE to start onto it.
/// `running` is the client whose SYNC is executing (out of the table).
fn start_bgsave_for_replication(srv: &mut Server, mut running: Option<&mut Client>, mincapa: u8) {
    let socket_target = repl_diskless_sync(srv) && mincapa & SLAVE_CAPA_EOF != 0;
    server_log(
        LogLevel::Notice,
        &format!(
            "Starting BGSAVE for SYNC with target: {}",
            if socket_target {
                "replicas sockets"
            } else {
                "disk"
            }
        ),
    );
    let ok = if socket_target {
        rdb_save_to_slaves_sockets(srv, running.as_deref_mut())
    } else {
        crate::rdb::rdb_save_background(srv).is_ok()
    };
    let waiting: Vec<Token> = srv.repl.slaves.clone();
    if !ok {
        server_log(LogLevel::Warning, "BGSAVE for replication failed");
        for token in waiting {
            let fail = |s: &mut Client| {
                if s.repl.replstate == SlaveState::WaitBgsaveStart {
                    s.repl.replstate = SlaveState::None;
                    s.flags &= !CLIENT_SLAVE;
                    s.add_reply_error("ERR BGSAVE failed, replication can't continue");
                    s.flags |= CLIENT_CLOSE_AFTER_REPLY;
                    true
                } else {
                    false
                }
            };
            let failed = match running.as_deref_mut() {
                Some(rc) if rc.token == token => fail(rc),
                _ => srv.clients.get_mut(&token).is_some_and(|b| fail(b)),
            };
            if failed {
                srv.repl.slaves.retain(|t| *t != token);
                if let Some(s) = srv.clients.get_mut(&token) {
                    if !s.has_flag(CLIENT_PENDING_WRITE) {
                        s.flags |= CLIENT_PENDING_WRITE;
                        srv.clients_pending_write.push(token);
                    }
                }
            }
        }
        return;
    }
    if socket_target {
        return; // its replicas were set up before the fork
    }
    let offset = srv.repl.master_repl_offset;
    let replid = srv.repl.replid.clone();
    for token in waiting {
        let slave = match running.as_deref_mut() {
            Some(rc) if rc.token == token => Some(rc),
            _ => srv.clients.get_mut(&token).map(|b| &mut **b),
        };
        if let Some(s) = slave {
            if s.repl.replstate == SlaveState::WaitBgsaveStart {
                replication_setup_slave_for_full_resync(
                    &replid,
                    &mut srv.repl.slaveseldb,
                    s,
                    offset,
                );
            }
        }
    }
}

/// replicationStartPendingFork (shouldStartChildReplication): replicas
/// wait for a BGSAVE to start and no child runs: start one, unless the
/// diskless delay still lets more replicas join.
pub fn replication_start_pending_fork(srv: &mut Server) {
    if srv.repl.slaves.is_empty()
        || crate::aof::has_active_child_process(srv)
        || srv.repl.msrv.rdb_pipe.is_some()
    {
        return;
    }
    let mut waiting = 0;
    let mut max_idle = 0i64;
    let mut mincapa: u8 = 0xff;
    let now = std::time::Instant::now();
    for t in &srv.repl.slaves {
        if let Some(s) = srv.clients.get(t) {
            if s.repl.replstate == SlaveState::WaitBgsaveStart {
                waiting += 1;
                let idle = now.saturating_duration_since(s.last_interaction).as_secs() as i64;
                max_idle = max_idle.max(idle);
                mincapa &= s.repl.slave_capa;
            }
        }
    }
    if waiting == 0 {
        return;
    }
    let max_replicas = srv.config.num("repl-diskless-sync-max-replicas");
    if !repl_diskless_sync(srv)
        || mincapa & SLAVE_CAPA_EOF == 0
        || (max_replicas > 0 && waiting >= max_replicas)
        || max_idle >= srv.config.num("repl-diskless-sync-delay")
    {
        start_bgsave_for_replication(srv, None, mincapa);
    }
}

/// updateSlavesWaitingBgsave: a BGSAVE ended (rdb.rs). Replicas that
/// waited for it start receiving the file, or are dropped if it failed.
pub fn update_slaves_waiting_bgsave(srv: &mut Server, ok: bool) {
    let socket = std::mem::take(&mut srv.repl.msrv.rdb_child_socket);
    let filename = srv.config.dbfilename.clone();
    for token in srv.repl.slaves.clone() {
        let Some(slave) = srv.clients.get_mut(&token) else {
            // The client running a command (its REPLCONF ACK reaped the
            // child): the ACK handler finishes it.
            if socket {
                srv.repl.msrv.socket_done_running = Some((token, ok));
            }
            continue;
        };
        if slave.repl.replstate != SlaveState::WaitBgsaveEnd {
            continue;
        }
        if !ok {
            slave.flags |= CLIENT_CLOSE_ASAP;
            srv.clients_to_close.push(token);
            server_log(
                LogLevel::Warning,
                "SYNC failed. BGSAVE child returned an error",
            );
            continue;
        }
        if socket {
            server_log(
                LogLevel::Notice,
                &format!(
                    "Streamed RDB transfer with replica {} succeeded (socket). Waiting for REPLCONF ACK from slave to enable streaming",
                    replication_get_slave_name(slave)
                ),
            );
            let Some(mut slave) = srv.clients.remove(&token) else {
                continue;
            };
            if replica_put_online(srv, &mut slave) {
                slave.repl.repl_start_cmd_stream_on_ack = true;
            } else {
                srv.clients_to_close.push(token);
            }
            srv.clients.insert(token, slave);
            continue;
        }
        let opened =
            std::fs::File::open(&filename).and_then(|f| f.metadata().map(|m| (f, m.len())));
        match opened {
            Ok((file, size)) => {
                slave.repl.repldb = Some(Box::new(BulkTransfer {
                    file,
                    off: 0,
                    size,
                    preamble: format!("${size}\r\n").into_bytes(),
                }));
                slave.repl.replstate = SlaveState::SendBulk;
                if !slave.has_flag(CLIENT_PENDING_WRITE) {
                    slave.flags |= CLIENT_PENDING_WRITE;
                    srv.clients_pending_write.push(token);
                }
            }
            Err(e) => {
                slave.flags |= CLIENT_CLOSE_ASAP;
                srv.clients_to_close.push(token);
                server_log(
                    LogLevel::Warning,
                    &format!(
                        "SYNC failed. Can't open/stat DB after BGSAVE: {}",
                        crate::config::strerror(&e)
                    ),
                );
            }
        }
    }
    // startBgsaveForReplication for those that could not share this one.
    replication_start_pending_fork(srv);
}

/// Ask the poller for the writable event (the socket is full).
fn want_writable(srv: &mut Server, c: &mut Client) -> io::Result<()> {
    if c.flags & CLIENT_WRITE_INTEREST == 0 {
        if let Some(stream) = c.stream.as_mut() {
            srv.poll.registry().reregister(
                stream,
                c.token,
                Interest::READABLE | Interest::WRITABLE,
            )?;
        }
        c.flags |= CLIENT_WRITE_INTEREST;
    }
    Ok(())
}

/// write_to_client's first step for a replica that is not online:
/// nothing is written before its RDB, and in SEND_BULK the RDB is.
/// Returns true when the replica is online now and its output buffer (the
/// stream accumulated since the fork) may be written as usual.
pub fn write_to_slave_not_online(srv: &mut Server, c: &mut Client) -> io::Result<bool> {
    match c.repl.replstate {
        SlaveState::SendBulk => send_bulk_to_slave(srv, c),
        SlaveState::WaitBgsaveEnd if srv.repl.msrv.rdb_pipe.is_some() => {
            rdb_pipe_write_handler(srv, c)?;
            Ok(false)
        }
        _ => Ok(false),
    }
}

/// Is this client a replica whose stream must not be written yet (before
/// its RDB, or before the first ACK after a diskless one)?
pub fn slave_stream_on_hold(c: &Client) -> bool {
    c.has_flag(CLIENT_SLAVE)
        && (c.repl.replstate != SlaveState::Online || c.repl.repl_start_cmd_stream_on_ack)
}

/// replicaStartCommandStream: the stream accumulated so far may go.
fn replica_start_command_stream(srv: &mut Server, c: &mut Client) {
    c.repl.repl_start_cmd_stream_on_ack = false;
    if !c.reply.is_empty() && !c.has_flag(CLIENT_PENDING_WRITE) {
        c.flags |= CLIENT_PENDING_WRITE;
        srv.clients_pending_write.push(c.token);
    }
}

/// Write `buf` until it is all sent or the socket is full: how many bytes
/// went, and whether the socket filled up (the loop then waits for the
/// writable event to go on).
fn write_until_full(
    stream: &mut crate::networking::Connection,
    buf: &[u8],
) -> io::Result<(usize, bool)> {
    let mut sent = 0;
    while sent < buf.len() {
        match stream.write(&buf[sent..]) {
            Ok(w) => sent += w,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok((sent, true)),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok((sent, false))
}

/// sendBulkToSlave: send `$<len>\r\n` then the file, until the socket is
/// full (then the writable event brings us back) or a per-event cap.
fn send_bulk_to_slave(srv: &mut Server, c: &mut Client) -> io::Result<bool> {
    let Some(mut x) = c.repl.repldb.take() else {
        return Ok(false);
    };
    let Some(stream) = c.stream.as_mut() else {
        return Ok(false);
    };
    let mut buf = vec![0u8; PROTO_IOBUF_LEN];
    let mut chunks = 0;
    let mut blocked = false;
    if !x.preamble.is_empty() {
        let (sent, full) = write_until_full(stream, &x.preamble).inspect_err(|e| {
            server_log(
                LogLevel::Warning,
                &format!("Write error sending RDB preamble to replica: {e}"),
            );
        })?;
        x.preamble.drain(..sent);
        c.net_output_bytes += sent as u64;
        srv.stats.net_repl_output_bytes += sent as u64;
        blocked = full;
    }
    while !blocked && x.off < x.size && chunks < SEND_BULK_CHUNKS_PER_EVENT {
        let want = ((x.size - x.off) as usize).min(PROTO_IOBUF_LEN);
        let n = match x.file.read_at(&mut buf[..want], x.off) {
            Ok(0) => {
                server_log(
                    LogLevel::Warning,
                    "Read error sending DB to replica: premature EOF",
                );
                return Err(io::Error::from(io::ErrorKind::UnexpectedEof));
            }
            Ok(n) => n,
            Err(e) => {
                server_log(
                    LogLevel::Warning,
                    &format!(
                        "Read error sending DB to replica: {}",
                        crate::config::strerror(&e)
                    ),
                );
                return Err(e);
            }
        };
        let (sent, full) = write_until_full(stream, &buf[..n]).inspect_err(|e| {
            server_log(
                LogLevel::Warning,
                &format!("Write error sending DB to replica: {e}"),
            );
        })?;
        blocked = full;
        x.off += sent as u64;
        c.net_output_bytes += sent as u64;
        srv.stats.net_repl_output_bytes += sent as u64;
        chunks += 1;
    }
    if x.preamble.is_empty() && x.off == x.size {
        // The whole file went out.
        return Ok(replica_put_online(srv, c));
    }
    c.repl.repldb = Some(x);
    if blocked {
        want_writable(srv, c)?;
    } else {
        // Capped: stay queued, and let the loop not sleep.
        srv.clients_write_capped = true;
        if !c.has_flag(CLIENT_PENDING_WRITE) {
            c.flags |= CLIENT_PENDING_WRITE;
            srv.clients_pending_write.push(c.token);
        }
    }
    Ok(false)
}

/// replicaPutOnline: the RDB is there; the stream may flow. An rdb-only
/// client (redis-cli --rdb) is closed instead.
fn replica_put_online(srv: &mut Server, c: &mut Client) -> bool {
    if c.repl.rdb_only {
        c.repl.replstate = SlaveState::RdbTransmitted;
        server_log(
            LogLevel::Notice,
            &format!(
                "RDB transfer completed, rdb only replica ({}) should be disconnected asap",
                replication_get_slave_name(c)
            ),
        );
        c.flags |= CLIENT_CLOSE_ASAP;
        return false;
    }
    c.repl.replstate = SlaveState::Online;
    c.repl.repl_ack_time = unixtime(); // no false timeout
    refresh_good_slaves_count(srv, Some(c));
    server_log(
        LogLevel::Notice,
        &format!(
            "Synchronization with replica {} succeeded",
            replication_get_slave_name(c)
        ),
    );
    true
}

/// freeClient's replica part: leave server.slaves; with none left, the
/// backlog's time-to-live starts.
pub fn free_slave(srv: &mut Server, c: &mut Client) {
    if !c.has_flag(CLIENT_SLAVE) {
        return;
    }
    server_log(
        LogLevel::Warning,
        &format!(
            "Connection with replica {} lost.",
            replication_get_slave_name(c)
        ),
    );
    // The last replica waiting for a disk BGSAVE is gone: the child need
    // not go on (less memory, and the next full sync can fork at once),
    // unless save points make the file worth having anyway.
    if srv.config.save_params.is_empty()
        && c.repl.replstate == SlaveState::WaitBgsaveEnd
        && srv.rdb.has_active_child()
        && !srv.repl.msrv.rdb_child_socket
        && !any_other_slave_wait_rdb(srv, c.token)
    {
        crate::rdb::kill_rdb_child(srv);
    }
    c.repl.repldb = None;
    srv.repl.slaves.retain(|t| *t != c.token);
    rdb_pipe_conn_removed(srv, c.token);
    if srv.repl.slaves.is_empty() {
        srv.repl.repl_no_slaves_since = unixtime();
    }
    refresh_good_slaves_count(srv, None);
}

/// anyOtherSlaveWaitRdb: does a replica other than `except` wait for the
/// BGSAVE in progress?
// redis: networking.c anyOtherSlaveWaitRdb
fn any_other_slave_wait_rdb(srv: &Server, except: Token) -> bool {
    srv.repl.slaves.iter().any(|t| {
        *t != except
            && srv
                .clients
                .get(t)
                .is_some_and(|s| s.repl.replstate == SlaveState::WaitBgsaveEnd)
    })
}

/// disconnectSlaves: close every replica (a replica of ours that got a new
/// history, or a promotion: they reconnect and PSYNC, and learn the new
/// replication id). Closed before the next loop pass, as freeClientAsync.
pub fn disconnect_slaves(srv: &mut Server) {
    for token in srv.repl.slaves.clone() {
        if let Some(s) = srv.clients.get_mut(&token) {
            s.flags |= CLIENT_CLOSE_ASAP;
            srv.clients_to_close.push(token);
        }
    }
}

// ---------------------------------------------------------------- REPLCONF

/// REPLCONF [listening-port port] [ip-address ip] [capa eof|psync2]
///          [ack offset] [getack *] [rdb-only 0|1]
// redis: replication.c replconfCommand
pub fn replconf_command(srv: &mut Server, c: &mut Client) {
    if c.argc().is_multiple_of(2) {
        c.add_reply_syntax_error();
        return;
    }
    let mut j = 1;
    while j < c.argc() {
        let opt = c.arg(j).to_ascii_lowercase();
        let val = c.argv[j + 1].clone();
        match &opt[..] {
            b"listening-port" => match storage::util::string2ll(&val) {
                Some(port) => c.repl.slave_listening_port = port as u16,
                None => {
                    c.add_reply_error(shared::NOT_INTEGER_ERR);
                    return;
                }
            },
            b"ip-address" => {
                if val.len() < NET_HOST_STR_LEN {
                    c.repl.slave_addr = Some(String::from_utf8_lossy(&val).into_owned());
                } else {
                    c.add_reply_error(&format!(
                        "ERR REPLCONF ip-address provided by replica instance is too long: {} bytes",
                        val.len()
                    ));
                    return;
                }
            }
            b"capa" => {
                // Capabilities this master does not know are ignored.
                if val.eq_ignore_ascii_case(b"eof") {
                    c.repl.slave_capa |= SLAVE_CAPA_EOF;
                } else if val.eq_ignore_ascii_case(b"psync2") {
                    c.repl.slave_capa |= SLAVE_CAPA_PSYNC2;
                }
            }
            b"ack" => {
                // The replica's processed offset. Never replied to.
                if !c.has_flag(CLIENT_SLAVE) {
                    return;
                }
                let Some(offset) = storage::util::string2ll(&val) else {
                    return;
                };
                if offset > c.repl.repl_ack_off {
                    c.repl.repl_ack_off = offset;
                }
                c.repl.repl_ack_time = unixtime();
                // The ACK may come before the cron noticed the diskless
                // child is done: look now (checkChildrenDone).
                if srv.rdb.has_active_child()
                    && srv.repl.msrv.rdb_child_socket
                    && c.repl.replstate == SlaveState::WaitBgsaveEnd
                {
                    crate::server::check_children_done(srv);
                    if let Some((token, ok)) = srv.repl.msrv.socket_done_running.take() {
                        if token == c.token && ok {
                            server_log(
                                LogLevel::Notice,
                                &format!(
                                    "Streamed RDB transfer with replica {} succeeded (socket). Waiting for REPLCONF ACK from slave to enable streaming",
                                    replication_get_slave_name(c)
                                ),
                            );
                            if replica_put_online(srv, c) {
                                c.repl.repl_start_cmd_stream_on_ack = true;
                            }
                        } else if token == c.token {
                            c.flags |= CLIENT_CLOSE_ASAP;
                        }
                    }
                }
                // After a diskless transfer the first ACK proves the
                // replica loaded the RDB: the stream may flow now.
                if c.repl.repl_start_cmd_stream_on_ack && c.repl.replstate == SlaveState::Online {
                    replica_start_command_stream(srv, c);
                }
                return;
            }
            b"getack" => {
                // Our master asks for an ACK now: the replica side answers
                // (replica.rs); a master has nothing to say.
                return;
            }
            b"rdb-only" => match storage::util::string2ll(&val) {
                Some(v @ 0..=1) => c.repl.rdb_only = v == 1,
                Some(_) => {
                    c.add_reply_error("ERR value is out of range, value must between 0 and 1");
                    return;
                }
                None => {
                    c.add_reply_error(shared::NOT_INTEGER_ERR);
                    return;
                }
            },
            _ => {
                c.add_reply_error(&format!(
                    "ERR Unrecognized REPLCONF option: {}",
                    String::from_utf8_lossy(c.arg(j))
                ));
                return;
            }
        }
        j += 2;
    }
    c.add_reply_ok();
}

// ---------------------------------------------------------------- WAIT

/// replicationCountAcksByOffset: online replicas that acknowledged at
/// least `offset`.
pub fn replication_count_acks_by_offset(srv: &Server, offset: i64) -> i64 {
    srv.repl
        .slaves
        .iter()
        .filter_map(|t| srv.clients.get(t))
        .filter(|s| s.repl.replstate == SlaveState::Online && s.repl.repl_ack_off >= offset)
        .count() as i64
}

/// WAIT numreplicas timeout
// redis: replication.c waitCommand
pub fn wait_command(srv: &mut Server, c: &mut Client) {
    if srv.repl.masterhost.is_some() {
        c.add_reply_error("ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.");
        return;
    }
    let Some(numreplicas) = storage::util::string2ll(c.arg(1)) else {
        c.add_reply_error(shared::NOT_INTEGER_ERR);
        return;
    };
    let Some(tout) = storage::util::string2ll(c.arg(2)) else {
        c.add_reply_error(shared::TIMEOUT_NOT_INTEGER_ERR);
        return;
    };
    if tout < 0 {
        c.add_reply_error(shared::TIMEOUT_NEGATIVE_ERR);
        return;
    }
    let timeout = if tout > 0 {
        srv.cmd_time_snapshot.saturating_add(tout)
    } else {
        0
    };
    let offset = c.repl.woff;
    let ackreplicas = replication_count_acks_by_offset(srv, offset);
    if ackreplicas >= numreplicas || c.has_flag(CLIENT_DENY_BLOCKING) {
        c.add_reply_integer(ackreplicas);
        return;
    }
    // Park the client (blocked.rs); before_sleep asks the replicas for an
    // ACK and answers it when enough have one.
    c.repl.wait_reploffset = offset;
    c.repl.wait_numreplicas = numreplicas;
    crate::blocked::block_for_keys(srv, c, BlockType::Wait, &[], timeout);
    srv.repl.msrv.clients_waiting_acks.push(c.token);
    srv.repl.msrv.get_ack_from_slaves = true;
}

/// The reply of a WAIT that timed out (or was CLIENT UNBLOCKed): how many
/// replicas got there anyway.
pub fn reply_to_wait_timed_out(srv: &Server, c: &mut Client) {
    let n = replication_count_acks_by_offset(srv, c.repl.wait_reploffset);
    c.add_reply_integer(n);
}

/// processClientsWaitingReplicas: answer the WAITs that have enough ACKs.
fn process_clients_waiting_replicas(srv: &mut Server) {
    let waiting = std::mem::take(&mut srv.repl.msrv.clients_waiting_acks);
    let mut still = Vec::with_capacity(waiting.len());
    for token in waiting {
        let Some(c) = srv.clients.get(&token) else {
            continue; // gone
        };
        let is_wait = c.has_flag(CLIENT_BLOCKED)
            && c.bstate
                .as_ref()
                .is_some_and(|b| b.btype == BlockType::Wait);
        if !is_wait {
            continue; // timed out or unblocked meanwhile
        }
        let n = replication_count_acks_by_offset(srv, c.repl.wait_reploffset);
        if n < c.repl.wait_numreplicas {
            still.push(token);
            continue;
        }
        let Some(mut c) = srv.clients.remove(&token) else {
            continue;
        };
        crate::blocked::unblock_client(srv, &mut c);
        c.add_reply_integer(n);
        crate::server::update_stats_on_unblock(srv, &mut c);
        srv.unblocked_clients.push(token);
        crate::networking::put_back_client(srv, c);
    }
    srv.repl.msrv.clients_waiting_acks.extend(still);
}

/// The master's part of beforeSleep: go on reading a diskless transfer's
/// pipe once its replicas caught up, REPLCONF GETACK to the replicas when
/// a WAIT blocked in this pass, then the WAITs that can be answered.
pub fn before_sleep_master(srv: &mut Server) {
    if std::mem::take(&mut srv.repl.msrv.rdb_pipe_resume) {
        rdb_pipe_read_handler(srv);
    }
    if srv.repl.msrv.get_ack_from_slaves
        && !crate::networking::check_client_pause_timeout_and_return_if_paused(srv)
    {
        let argv = [
            Bytes::from_static(b"REPLCONF"),
            Bytes::from_static(b"GETACK"),
            Bytes::from_static(b"*"),
        ];
        let db = srv.repl.slaveseldb;
        replication_feed_slaves(srv, db, &argv);
        srv.repl.msrv.get_ack_from_slaves = false;
    }
    if !srv.repl.msrv.clients_waiting_acks.is_empty() {
        process_clients_waiting_replicas(srv);
    }
    // The ACKs just read may be the ones a FAILOVER waits for (checked
    // here, not where the ACK is read: failing over frees clients).
    super::failover::update_failover_status(srv);
}

// ---------------------------------------------------------------- min-replicas

/// refreshGoodSlavesCount: online replicas whose last ACK is at most
/// min-replicas-max-lag seconds old.
pub fn refresh_good_slaves_count(srv: &mut Server, extra: Option<&Client>) {
    let to_write = srv.config.repl_min_slaves_to_write;
    let max_lag = srv.config.repl_min_slaves_max_lag;
    if to_write == 0 || max_lag == 0 {
        return;
    }
    let now = unixtime();
    let good = |s: &Client| {
        s.repl.replstate == SlaveState::Online && now - s.repl.repl_ack_time <= max_lag
    };
    let mut n = srv
        .repl
        .slaves
        .iter()
        .filter_map(|t| srv.clients.get(t))
        .filter(|s| good(s))
        .count();
    if let Some(c) = extra {
        if !srv.clients.contains_key(&c.token) && good(c) {
            n += 1;
        }
    }
    srv.repl.repl_good_slaves_count = n;
}

/// checkGoodReplicasStatus: may a write run? (NOREPLICAS otherwise.)
pub fn check_good_replicas_status(srv: &Server) -> bool {
    srv.repl.masterhost.is_some()
        || srv.config.repl_min_slaves_max_lag == 0
        || srv.config.repl_min_slaves_to_write == 0
        || srv.repl.repl_good_slaves_count as i64 >= srv.config.repl_min_slaves_to_write
}

/// shared.noreplicaserr.
pub const NOREPLICAS_ERR: &str = "NOREPLICAS Not enough good replicas to write.";

// ---------------------------------------------------------------- cron

/// The master part of replicationCron (once a second): PING the replicas
/// every repl-ping-replica-period, a newline to those waiting for their
/// RDB, drop replicas that stopped acking for repl-timeout, free the
/// backlog after repl-backlog-ttl without replicas.
pub fn replication_cron_master(srv: &mut Server) {
    let now = unixtime();
    let period = srv.config.num("repl-ping-replica-period").max(1) as u64;
    if srv.repl.msrv.cron_loops.is_multiple_of(period) && !srv.repl.slaves.is_empty() {
        // Not while a FAILOVER with a TIMEOUT holds the writes: the PING
        // would move the offset the replicas must catch up with.
        let failover_in_progress = srv.repl.failover.end_time != 0
            && crate::networking::check_client_pause_timeout_and_return_if_paused(srv);
        if !failover_in_progress {
            let db = srv.repl.slaveseldb;
            replication_feed_slaves(srv, db, &[Bytes::from_static(b"PING")]);
        }
    }
    let repl_timeout = srv.config.num("repl-timeout");
    for token in srv.repl.slaves.clone() {
        let Some(s) = srv.clients.get_mut(&token) else {
            continue;
        };
        match s.repl.replstate {
            // Pre-synchronization: a newline keeps the link alive without
            // touching the offsets.
            // (Not into a diskless transfer: that stream is the RDB.)
            SlaveState::WaitBgsaveStart => {
                conn_write(s, b"\n");
            }
            SlaveState::WaitBgsaveEnd if !srv.repl.msrv.rdb_child_socket => {
                conn_write(s, b"\n");
            }
            // An online replica that stopped acking (old-SYNC ones never
            // ack: they are never timed out).
            SlaveState::Online
                if !s.has_flag(CLIENT_PRE_PSYNC) && now - s.repl.repl_ack_time > repl_timeout =>
            {
                server_log(
                    LogLevel::Warning,
                    &format!(
                        "Disconnecting timedout replica (streaming sync): {}",
                        replication_get_slave_name(s)
                    ),
                );
                s.flags |= CLIENT_CLOSE_ASAP;
                srv.clients_to_close.push(token);
            }
            _ => {}
        }
    }
    // A diskless transfer stuck on a replica that stopped reading: the
    // child (and the other replicas) would wait for ever.
    if let Some(pipe) = srv.repl.msrv.rdb_pipe.as_ref() {
        for (token, _, since) in pipe.conns.clone() {
            if since != 0 && now - since > repl_timeout {
                if let Some(s) = srv.clients.get_mut(&token) {
                    server_log(
                        LogLevel::Warning,
                        &format!(
                            "Disconnecting timedout replica (full sync): {}",
                            replication_get_slave_name(s)
                        ),
                    );
                    s.flags |= CLIENT_CLOSE_ASAP;
                    srv.clients_to_close.push(token);
                }
            }
        }
    }
    let ttl = srv.config.num("repl-backlog-ttl");
    if srv.repl.slaves.is_empty()
        && ttl > 0
        && srv.repl.backlog.is_some()
        && srv.repl.masterhost.is_none()
    {
        let idle = now - srv.repl.repl_no_slaves_since;
        if idle > ttl {
            // A new id: without a backlog the offset stops advancing, and
            // the old id must not be continued by anyone.
            change_replication_id(srv);
            clear_replication_id2(srv);
            free_replication_backlog(srv);
            server_log(
                LogLevel::Notice,
                &format!(
                    "Replication backlog freed after {ttl} seconds without connected replicas."
                ),
            );
        }
    }
    resize_replication_backlog(srv);
    replication_start_pending_fork(srv);
    refresh_good_slaves_count(srv, None);
    srv.repl.msrv.cron_loops += 1;
}

/// rdbPopulateSaveInfo: the repl-stream-db / repl-id / repl-offset an
/// RDB carries, so whoever loads it can PSYNC from there. A master with a
/// backlog gives the db its stream last selected; a replica the db of its
/// master client, or of the cached master while the link is down (its
/// offset only moves with data from the master, so it is valid then too).
pub fn rdb_populate_save_info(srv: &Server) -> Option<(i64, String, i64)> {
    let with = |db: i64| Some((db, srv.repl.replid.clone(), srv.repl.master_repl_offset));
    if srv.repl.masterhost.is_none() && srv.repl.backlog.is_some() {
        let db = if srv.repl.slaveseldb == -1 {
            0
        } else {
            srv.repl.slaveseldb
        };
        return with(db);
    }
    if let Some(token) = srv.repl.master {
        // (Out of the client table while it runs a command: db 0 is as
        // good, the master's stream starts with a SELECT after a PSYNC.)
        let db = srv.clients.get(&token).map_or(0, |m| m.db);
        return with(db as i64);
    }
    if let Some(cm) = srv.repl.replica.cached_master.as_ref() {
        return with(cm.db as i64);
    }
    None
}

// ---------------------------------------------------------------- ROLE, INFO

/// replstateToString.
pub fn replstate_to_string(s: SlaveState) -> &'static str {
    match s {
        SlaveState::WaitBgsaveStart | SlaveState::WaitBgsaveEnd => "wait_bgsave",
        SlaveState::SendBulk => "send_bulk",
        SlaveState::Online => "online",
        SlaveState::RdbTransmitted => "rdb_transmitted",
        SlaveState::None => "",
    }
}

/// ROLE's master form: ["master", offset, [[ip, port, ack offset]...]]
/// (mod.rs role_command dispatches; the replica form is replica.rs's).
// redis: replication.c roleCommand
pub fn role_master(srv: &mut Server, c: &mut Client) {
    c.add_reply_array_len(3);
    c.add_reply_bulk(b"master");
    c.add_reply_integer(srv.repl.master_repl_offset);
    let rows: Vec<(String, u16, i64)> = srv
        .repl
        .slaves
        .iter()
        .filter_map(|t| srv.clients.get(t))
        .filter(|s| s.repl.replstate == SlaveState::Online)
        .map(|s| {
            let ip = s
                .repl
                .slave_addr
                .clone()
                .unwrap_or_else(|| slave_peer_ip(s));
            (ip, s.repl.slave_listening_port, s.repl.repl_ack_off)
        })
        .collect();
    c.add_reply_array_len(rows.len());
    for (ip, port, off) in rows {
        c.add_reply_array_len(3);
        c.add_reply_bulk(ip.as_bytes());
        c.add_reply_bulk(port.to_string().as_bytes());
        c.add_reply_bulk(off.to_string().as_bytes());
    }
}

/// INFO replication from connected_slaves on (the part every server
/// prints; the replica block before it is replica.rs's).
pub fn info_replication_master(srv: &Server, s: &mut String) {
    use std::fmt::Write as _;
    let _ = write!(s, "connected_slaves:{}\r\n", srv.repl.slaves.len());
    if srv.config.repl_min_slaves_to_write != 0 && srv.config.repl_min_slaves_max_lag != 0 {
        let _ = write!(
            s,
            "min_slaves_good_slaves:{}\r\n",
            srv.repl.repl_good_slaves_count
        );
    }
    let now = unixtime();
    let mut slaveid = 0;
    for t in &srv.repl.slaves {
        let Some(sl) = srv.clients.get(t) else {
            continue;
        };
        let ip = sl
            .repl
            .slave_addr
            .clone()
            .unwrap_or_else(|| slave_peer_ip(sl));
        let state = replstate_to_string(sl.repl.replstate);
        if state.is_empty() {
            continue;
        }
        let lag = if sl.repl.replstate == SlaveState::Online {
            now - sl.repl.repl_ack_time
        } else {
            0
        };
        let _ = write!(
            s,
            "slave{slaveid}:ip={ip},port={},state={state},offset={},lag={lag}\r\n",
            sl.repl.slave_listening_port, sl.repl.repl_ack_off
        );
        slaveid += 1;
    }
    let b = srv.repl.backlog.as_ref();
    let _ = write!(
        s,
        "master_failover_state:{}\r\n\
         master_replid:{}\r\n\
         master_replid2:{}\r\n\
         master_repl_offset:{}\r\n\
         second_repl_offset:{}\r\n\
         repl_backlog_active:{}\r\n\
         repl_backlog_size:{}\r\n\
         repl_backlog_first_byte_offset:{}\r\n\
         repl_backlog_histlen:{}\r\n",
        super::failover::get_failover_state_string(srv),
        srv.repl.replid,
        srv.repl.replid2,
        srv.repl.master_repl_offset,
        srv.repl.second_replid_offset,
        b.is_some() as i32,
        srv.config.repl_backlog_size,
        b.map_or(0, |b| b.offset),
        b.map_or(0, |b| b.histlen),
    );
}

// ---------------------------------------------------------------- diskless

/// rdbSaveToSlavesSockets: the replicas waiting for a BGSAVE get
/// +FULLRESYNC, then a child writes the EOF-marked RDB into a pipe the
/// loop reads (`rdb_pipe_read_handler`). False if no child started.
fn rdb_save_to_slaves_sockets(srv: &mut Server, mut running: Option<&mut Client>) -> bool {
    use std::os::fd::FromRawFd;
    if crate::aof::has_active_child_process(srv) || srv.repl.msrv.rdb_pipe.is_some() {
        return false;
    }
    // The RDB pipe (the parent's end non-blocking) and the safe-to-exit
    // pipe (the child blocks on it until the parent read everything).
    let mut p = [0 as libc::c_int; 2];
    let mut q = [0 as libc::c_int; 2];
    // SAFETY: pipe2 fills the array with two new descriptors on success.
    if unsafe { libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return false;
    }
    // SAFETY: as above; on failure the first pair is closed.
    if unsafe { libc::pipe2(q.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        // SAFETY: both are ours and unused.
        unsafe {
            libc::close(p[0]);
            libc::close(p[1]);
        }
        return false;
    }
    // SAFETY: fcntl on our own fresh descriptor.
    unsafe {
        let fl = libc::fcntl(p[0], libc::F_GETFL);
        libc::fcntl(p[0], libc::F_SETFL, fl | libc::O_NONBLOCK);
    }
    // The replicas of this transfer: those waiting for a BGSAVE to start.
    let offset = srv.repl.master_repl_offset;
    let replid = srv.repl.replid.clone();
    let mut conns = Vec::new();
    for token in srv.repl.slaves.clone() {
        let slave = match running.as_deref_mut() {
            Some(rc) if rc.token == token => Some(rc),
            _ => srv.clients.get_mut(&token).map(|b| &mut **b),
        };
        if let Some(s) = slave {
            if s.repl.replstate == SlaveState::WaitBgsaveStart {
                conns.push((token, 0usize, 0i64));
                replication_setup_slave_for_full_resync(
                    &replid,
                    &mut srv.repl.slaveseldb,
                    s,
                    offset,
                );
            }
        }
    }
    let pid = match crate::server::redis_fork(srv, crate::server::ChildType::Rdb) {
        Ok(0) => {
            // The child: write, then wait until the parent says it may go.
            // SAFETY: closing the child's copies of the parent's ends.
            unsafe {
                libc::close(p[0]);
                libc::close(q[1]);
            }
            // SAFETY: p[1] is ours alone in the child.
            let out = unsafe { std::fs::File::from_raw_fd(p[1]) };
            let mut info = crate::childinfo::ChildInfoSender::new("RDB");
            let ok = rdb_save_rio_with_eof_mark(srv, out, &mut info).is_ok();
            if ok {
                info.send(crate::childinfo::CHILD_INFO_TYPE_RDB_COW_SIZE, 0);
            }
            let mut dummy = [0u8; 1];
            // SAFETY: a blocking read on our own descriptor; it returns
            // when the parent closes the other end.
            unsafe { libc::read(q[0], dummy.as_mut_ptr().cast(), 1) };
            // SAFETY: terminating the child (exitFromChild).
            unsafe { libc::_exit(if ok { 0 } else { 1 }) }
        }
        Ok(pid) => pid,
        Err(e) => {
            server_log(
                LogLevel::Warning,
                &format!(
                    "Can't save in background: fork: {}",
                    crate::config::strerror(&e)
                ),
            );
            // Undo: back to waiting for a BGSAVE (the caller drops them).
            for (token, _, _) in &conns {
                let slave = match running.as_deref_mut() {
                    Some(rc) if rc.token == *token => Some(rc),
                    _ => srv.clients.get_mut(token).map(|b| &mut **b),
                };
                if let Some(s) = slave {
                    if s.repl.replstate == SlaveState::WaitBgsaveEnd {
                        s.repl.replstate = SlaveState::WaitBgsaveStart;
                    }
                }
            }
            // SAFETY: all four are ours and unused.
            unsafe {
                for fd in [p[0], p[1], q[0], q[1]] {
                    libc::close(fd);
                }
            }
            return false;
        }
    };
    // SAFETY: closing the parent's copies of the child's ends, and wrapping
    // the parent's ends, which nothing else owns.
    let (read, child_exit) = unsafe {
        libc::close(p[1]);
        libc::close(q[0]);
        (
            std::fs::File::from_raw_fd(p[0]),
            std::fs::File::from_raw_fd(q[1]),
        )
    };
    server_log(
        LogLevel::Notice,
        &format!("Background RDB transfer started by pid {pid}"),
    );
    srv.rdb.child_pid = Some(pid);
    srv.rdb.save_time_start = unixtime();
    srv.repl.msrv.rdb_child_socket = true;
    let fd = std::os::fd::AsRawFd::as_raw_fd(&read);
    if let Err(e) = srv.poll.registry().register(
        &mut mio::unix::SourceFd(&fd),
        crate::server::RDB_PIPE_TOKEN,
        Interest::READABLE,
    ) {
        server_log(
            LogLevel::Warning,
            &format!("Unrecoverable error creating server.rdb_pipe_read file event: {e}"),
        );
    }
    srv.repl.msrv.rdb_pipe = Some(RdbPipe {
        read,
        child_exit: Some(child_exit),
        conns,
        writing: 0,
        buf: Vec::new(),
        eof: false,
    });
    // (Registering reports data already in the pipe on the next poll.)
    true
}

/// rdbSaveRioWithEOFMark (in the child): `$EOF:<mark>\r\n`, the RDB, the
/// mark again. The replica knows the end when it sees the mark.
fn rdb_save_rio_with_eof_mark(
    srv: &Server,
    mut out: std::fs::File,
    info: &mut crate::childinfo::ChildInfoSender,
) -> io::Result<()> {
    let mark = crate::server::random_hex(RDB_EOF_MARK_SIZE);
    out.write_all(format!("$EOF:{mark}\r\n").as_bytes())?;
    let mut out = crate::rdb::rdb_save_rio(srv, out, false, |keys| info.progress(keys))?;
    out.write_all(mark.as_bytes())?;
    out.flush()
}

/// rdbPipeReadHandler: relay what the child wrote to every replica of the
/// transfer; stop reading while one of them has not taken it all.
pub fn rdb_pipe_read_handler(srv: &mut Server) {
    use std::io::Read;
    let mut chunk = vec![0u8; PROTO_IOBUF_LEN];
    loop {
        let Some(pipe) = srv.repl.msrv.rdb_pipe.as_mut() else {
            return;
        };
        if pipe.writing > 0 || pipe.eof {
            return;
        }
        let n = match pipe.read.read(&mut chunk) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                server_log(
                    LogLevel::Warning,
                    &format!(
                        "Diskless rdb transfer, read error sending DB to replicas: {}",
                        crate::config::strerror(&e)
                    ),
                );
                let conns = std::mem::take(&mut pipe.conns);
                for (token, _, _) in conns {
                    srv.clients_to_close.push(token);
                    if let Some(s) = srv.clients.get_mut(&token) {
                        s.flags |= CLIENT_CLOSE_ASAP;
                    }
                }
                crate::rdb::kill_rdb_child(srv);
                return;
            }
        };
        if n == 0 {
            // The child wrote everything: let it exit.
            pipe.eof = true;
            pipe.child_exit = None;
            let fd = std::os::fd::AsRawFd::as_raw_fd(&pipe.read);
            let still_up = pipe.conns.len();
            let _ = srv
                .poll
                .registry()
                .deregister(&mut mio::unix::SourceFd(&fd));
            server_log(
                LogLevel::Warning,
                &format!(
                    "Diskless rdb transfer, done reading from pipe, {still_up} replicas still up."
                ),
            );
            return;
        }
        pipe.buf.clear();
        pipe.buf.extend_from_slice(&chunk[..n]);
        let conns = pipe.conns.clone();
        let mut alive = Vec::with_capacity(conns.len());
        let mut writing = 0;
        let now = unixtime();
        for (token, _, _) in conns {
            let Some(mut s) = srv.clients.remove(&token) else {
                continue;
            };
            // Write until all of it went or the socket is full (so the
            // edge-triggered writable event will come).
            let mut written = 0;
            let mut failed = false;
            while written < n {
                match s.stream.as_mut().map(|st| st.write(&chunk[written..n])) {
                    Some(Ok(0)) | None => {
                        failed = true;
                        break;
                    }
                    Some(Ok(w)) => written += w,
                    Some(Err(e)) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Some(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                    Some(Err(_)) => {
                        failed = true;
                        break;
                    }
                }
            }
            if failed {
                server_log(
                    LogLevel::Warning,
                    "Diskless rdb transfer, write error sending DB to replica",
                );
                s.flags |= CLIENT_CLOSE_ASAP;
                srv.clients_to_close.push(token);
                srv.clients.insert(token, s);
                continue;
            }
            s.net_output_bytes += written as u64;
            srv.stats.net_repl_output_bytes += written as u64;
            let mut partial = 0;
            if written < n {
                writing += 1;
                partial = now;
                let _ = want_writable(srv, &mut s);
            }
            alive.push((token, written, partial));
            srv.clients.insert(token, s);
        }
        let Some(pipe) = srv.repl.msrv.rdb_pipe.as_mut() else {
            return;
        };
        pipe.writing = writing;
        pipe.conns = alive;
        if pipe.conns.is_empty() {
            server_log(
                LogLevel::Warning,
                "Diskless rdb transfer, last replica dropped, killing fork child.",
            );
            crate::rdb::kill_rdb_child(srv);
            return;
        }
    }
}

/// rdbPipeWriteHandler: a replica behind on the current chunk can take
/// more; when the last one caught up, reading the pipe goes on.
fn rdb_pipe_write_handler(srv: &mut Server, c: &mut Client) -> io::Result<()> {
    let before = c.net_output_bytes;
    let r = rdb_pipe_write(srv, c);
    srv.stats.net_repl_output_bytes += c.net_output_bytes - before;
    r
}

fn rdb_pipe_write(srv: &mut Server, c: &mut Client) -> io::Result<()> {
    let Some(pipe) = srv.repl.msrv.rdb_pipe.as_mut() else {
        return Ok(());
    };
    let Some(i) = pipe.conns.iter().position(|(t, _, _)| *t == c.token) else {
        return Ok(());
    };
    let start = pipe.conns[i].1;
    if start >= pipe.buf.len() {
        return Ok(()); // not behind
    }
    let Some(stream) = c.stream.as_mut() else {
        return Ok(());
    };
    let (sent, _full) = write_until_full(stream, &pipe.buf[start..]).inspect_err(|e| {
        server_log(
            LogLevel::Warning,
            &format!("Write error sending DB to replica: {e}"),
        );
    })?;
    let off = start + sent;
    c.net_output_bytes += sent as u64;
    pipe.conns[i].1 = off;
    if off < pipe.buf.len() {
        if off > start {
            pipe.conns[i].2 = unixtime();
        }
        return Ok(()); // more to write: the writable event brings us back
    }
    pipe.conns[i].2 = 0;
    pipe.writing = pipe.writing.saturating_sub(1);
    if pipe.writing == 0 {
        srv.repl.msrv.rdb_pipe_resume = true;
    }
    Ok(())
}

/// rdbPipeWriteHandlerConnRemoved: a replica of the transfer is gone.
fn rdb_pipe_conn_removed(srv: &mut Server, token: Token) {
    let Some(pipe) = srv.repl.msrv.rdb_pipe.as_mut() else {
        return;
    };
    let Some(i) = pipe.conns.iter().position(|(t, _, _)| *t == token) else {
        return;
    };
    let (_, off, _) = pipe.conns.remove(i);
    if off < pipe.buf.len() {
        pipe.writing = pipe.writing.saturating_sub(1);
    }
    if pipe.conns.is_empty() && !pipe.eof {
        server_log(
            LogLevel::Warning,
            "Diskless rdb transfer, last replica dropped, killing fork child.",
        );
        crate::rdb::kill_rdb_child(srv);
    } else if pipe.writing == 0 {
        srv.repl.msrv.rdb_pipe_resume = true;
    }
}

/// backgroundSaveDoneHandlerSocket: the diskless child ended (rdb.rs
/// background_save_done); nothing was saved to disk.
pub fn background_save_done_handler_socket(srv: &mut Server, exitcode: i32, bysignal: i32) {
    if bysignal == 0 && exitcode == 0 {
        server_log(
            LogLevel::Notice,
            "Background RDB transfer terminated with success",
        );
    } else if bysignal == 0 {
        server_log(LogLevel::Warning, "Background transfer error");
    } else {
        server_log(
            LogLevel::Warning,
            &format!("Background transfer terminated by signal {bysignal}"),
        );
    }
    if let Some(pipe) = srv.repl.msrv.rdb_pipe.take() {
        if !pipe.eof {
            let fd = std::os::fd::AsRawFd::as_raw_fd(&pipe.read);
            let _ = srv
                .poll
                .registry()
                .deregister(&mut mio::unix::SourceFd(&fd));
        }
    }
    srv.rdb.save_time_start = -1;
}
