//! Replication (Redis's replication.c), in three files:
//!
//! - `mod.rs` (this file): the state both halves share: the replication
//!   ids and offsets (`replid`, `replid2`, `master_repl_offset`,
//!   `second_replid_offset`) and the replication backlog, the circular
//!   buffer of the last `repl-backlog-size` bytes of the stream that lets a
//!   replica that lost its link resume with `+CONTINUE` instead of a full
//!   sync.
//! - `master.rs`: what a master does for its replicas: SYNC/PSYNC, the
//!   RDB for a full sync, feeding the stream to replicas and the backlog
//!   (`replication_feed_slaves`, called from propagate.rs's one exit),
//!   REPLCONF, WAIT, ROLE's master half, INFO replication.
//! - `replica.rs`: what a replica does: REPLICAOF, the handshake with its
//!   master (PING, AUTH, REPLCONF, PSYNC), receiving and loading the RDB,
//!   applying the stream through the master client, REPLCONF ACK.
//! - `failover.rs`: FAILOVER, a master handing its role to a replica
//!   (both halves meet there: the master becomes a replica, its PSYNC
//!   FAILOVER makes the target a master).
//!
//! Redis keeps both halves in one 4000-line file; here each half is one
//! file so a breakpoint list reads "master side" and "replica side". The
//! function names are Redis's (`replicationFeedSlaves` ->
//! `replication_feed_slaves`, `syncWithMaster` -> `sync_with_master`).
//!
//! The stream offset: every byte a master appends to the stream (in RESP,
//! exactly as replicas receive it) advances `master_repl_offset`. A
//! replica counts the bytes it applied the same way, so "replica at offset
//! N" means "has applied the first N bytes of the master's stream", and
//! PSYNC asks to continue from N + 1.

pub mod failover;
pub mod master;
pub mod replica;

use mio::Token;

use crate::server::CONFIG_RUN_ID_SIZE;

/// The replication backlog (Redis 7.0 shares the replica output buffers
/// with the backlog as one list of blocks; here it is one circular buffer
/// of `repl-backlog-size` bytes, the 6.x layout, which holds the same bytes
/// and answers PSYNC the same way).
#[derive(Debug, Default)]
pub struct ReplBacklog {
    /// The circular buffer (its length is `repl-backlog-size`).
    pub buf: Vec<u8>,
    /// Where the next byte is written.
    pub idx: usize,
    /// How many bytes of history the buffer holds (<= buf.len()).
    pub histlen: usize,
    /// The stream offset of the oldest byte held
    /// (repl_backlog_first_byte_offset).
    pub offset: i64,
}

impl ReplBacklog {
    /// createReplicationBacklog: an empty backlog whose first byte will be
    /// the stream byte after `master_repl_offset`.
    pub fn new(size: usize, master_repl_offset: i64) -> ReplBacklog {
        ReplBacklog {
            buf: vec![0; size.max(1)],
            idx: 0,
            histlen: 0,
            offset: master_repl_offset + 1,
        }
    }

    /// feedReplicationBacklog: append stream bytes, dropping the oldest
    /// once the buffer is full. The caller advances master_repl_offset.
    pub fn feed(&mut self, mut p: &[u8], master_repl_offset_after: i64) {
        let size = self.buf.len();
        while !p.is_empty() {
            let thislen = (size - self.idx).min(p.len());
            self.buf[self.idx..self.idx + thislen].copy_from_slice(&p[..thislen]);
            self.idx = (self.idx + thislen) % size;
            self.histlen = (self.histlen + thislen).min(size);
            p = &p[thislen..];
        }
        self.offset = master_repl_offset_after - self.histlen as i64 + 1;
    }

    /// The bytes from stream offset `from` (inclusive) to the end, if the
    /// backlog still holds them (addReplyReplicationBacklog's copy).
    pub fn copy_from(&self, from: i64) -> Option<Vec<u8>> {
        let end = self.offset + self.histlen as i64; // one past the newest
        if from < self.offset || from > end {
            return None;
        }
        let skip = (from - self.offset) as usize;
        let len = self.histlen - skip;
        let size = self.buf.len();
        // The oldest byte sits at idx - histlen (mod size).
        let start = (self.idx + size - self.histlen + skip) % size;
        let mut out = Vec::with_capacity(len);
        let first = (size - start).min(len);
        out.extend_from_slice(&self.buf[start..start + first]);
        out.extend_from_slice(&self.buf[..len - first]);
        Some(out)
    }

    /// resizeReplicationBacklog: keep what fits of the newest history.
    pub fn resize(&mut self, newsize: usize, master_repl_offset: i64) {
        let newsize = newsize.max(1);
        if newsize == self.buf.len() {
            return;
        }
        let keep = self.histlen.min(newsize);
        let from = master_repl_offset + 1 - keep as i64;
        let data = self.copy_from(from).unwrap_or_default();
        *self = ReplBacklog::new(newsize, master_repl_offset - keep as i64);
        self.feed(&data, master_repl_offset);
    }
}

/// repl_state: where a replica is in its link with its master
/// (REPL_STATE_* in server.h, in their order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReplState {
    /// No active replication (this server is a master).
    #[default]
    None,
    /// Must connect to the master (REPLICAOF given, or the link dropped).
    Connect,
    /// Connecting: the non-blocking connect() is in flight.
    Connecting,
    // The handshake, one state per reply awaited.
    ReceivePingReply,
    SendHandshake,
    ReceiveAuthReply,
    ReceivePortReply,
    ReceiveIpReply,
    ReceiveCapaReply,
    SendPsync,
    ReceivePsyncReply,
    /// Receiving the RDB of a full sync.
    Transfer,
    /// Linked: applying the master's stream.
    Connected,
}

/// SLAVE_STATE_*: where a replica client is, as its master sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SlaveState {
    /// Not a replica.
    #[default]
    None,
    /// Waits for a BGSAVE to start (one is running for another purpose).
    WaitBgsaveStart,
    /// Waits for the RDB of its full sync to be written.
    WaitBgsaveEnd,
    /// The RDB file is being sent.
    SendBulk,
    /// Receives the stream.
    Online,
    /// An rdb-only client (redis-cli --rdb) got its RDB and is closed.
    RdbTransmitted,
}

/// What a master knows about one replica client (the slave* fields of
/// Redis's client struct).
#[derive(Debug, Default)]
pub struct ClientRepl {
    pub replstate: SlaveState,
    /// The stream offset this replica acknowledged (REPLCONF ACK).
    pub repl_ack_off: i64,
    /// When it last acknowledged (unix seconds).
    pub repl_ack_time: i64,
    /// REPLCONF listening-port / ip-address.
    pub slave_listening_port: u16,
    pub slave_addr: Option<String>,
    /// REPLCONF capa: SLAVE_CAPA_EOF / SLAVE_CAPA_PSYNC2 bits.
    pub slave_capa: u8,
    /// REPLCONF rdb-only: the client wants the RDB and nothing after it
    /// (redis-cli --rdb).
    pub rdb_only: bool,
    /// The master_repl_offset at which its full sync's RDB was taken
    /// (psync_initial_offset).
    pub psync_initial_offset: i64,
    /// The stream offset applied so far, when this client is *our* master
    /// (reploff) and read_reploff (bytes read, maybe not yet applied).
    pub reploff: i64,
    pub read_reploff: i64,
    /// The master_repl_offset right after this client's last command that
    /// propagated something (c->woff): what WAIT waits for.
    pub woff: i64,
    /// A blocked WAIT: the offset and the number of replicas it waits for
    /// (c->bpop.reploffset / c->bpop.numreplicas).
    pub wait_reploffset: i64,
    pub wait_numreplicas: i64,
    /// SEND_BULK: the RDB file being sent (repldbfd/repldboff/repldbsize,
    /// replpreamble), master.rs.
    pub repldb: Option<Box<master::BulkTransfer>>,
    /// After a diskless transfer: online, but the stream waits for the
    /// replica's first REPLCONF ACK (repl_start_cmd_stream_on_ack).
    pub repl_start_cmd_stream_on_ack: bool,
}

pub const SLAVE_CAPA_EOF: u8 = 1 << 0;
pub const SLAVE_CAPA_PSYNC2: u8 = 1 << 1;

/// The replication state of the server (the repl fields of Redis's
/// `struct redisServer`), both halves.
#[derive(Debug)]
pub struct ReplicationState {
    // ---- Shared: the stream's identity and position. ----
    /// The current replication id (master_replid).
    pub replid: String,
    /// The id this server was following before it became a master
    /// (master_replid2), and up to which offset it is valid.
    pub replid2: String,
    pub second_replid_offset: i64,
    /// Bytes of stream produced (as a master) or applied (as a replica).
    pub master_repl_offset: i64,
    /// The backlog; None until the first replica attaches (and again after
    /// repl-backlog-ttl without replicas).
    pub backlog: Option<ReplBacklog>,

    // ---- Master side. ----
    /// Replica clients (server.slaves), in attach order.
    pub slaves: Vec<Token>,
    /// The db the stream last SELECTed (slaveseldb); -1 forces a SELECT.
    pub slaveseldb: i64,
    /// When the last replica left (unix seconds), for repl-backlog-ttl.
    pub repl_no_slaves_since: i64,
    /// Replicas with lag <= min-replicas-max-lag (repl_good_slaves_count).
    pub repl_good_slaves_count: usize,
    pub stat_sync_full: u64,
    pub stat_sync_partial_ok: u64,
    pub stat_sync_partial_err: u64,
    /// The rest of the master side (WAIT's queue, the cron's counter).
    pub msrv: master::MasterState,

    // ---- Replica side. ----
    /// REPLICAOF host port (masterhost / masterport); None: a master.
    pub masterhost: Option<String>,
    pub masterport: u16,
    pub repl_state: ReplState,
    /// The client our master's stream arrives on, once linked.
    pub master: Option<Token>,
    /// When the link went down (unix seconds; 0: never linked).
    pub repl_down_since: i64,
    /// The link, the cached master and the transfer (replica.rs).
    pub replica: replica::ReplicaSide,

    // ---- FAILOVER (failover.rs). ----
    pub failover: failover::Failover,
}

impl Default for ReplicationState {
    fn default() -> Self {
        ReplicationState {
            replid: crate::server::random_hex(CONFIG_RUN_ID_SIZE),
            replid2: "0".repeat(CONFIG_RUN_ID_SIZE),
            second_replid_offset: -1,
            master_repl_offset: 0,
            backlog: None,
            slaves: Vec::new(),
            slaveseldb: -1,
            repl_no_slaves_since: crate::server::mstime() / 1000,
            repl_good_slaves_count: 0,
            stat_sync_full: 0,
            stat_sync_partial_ok: 0,
            stat_sync_partial_err: 0,
            msrv: master::MasterState::default(),
            masterhost: None,
            masterport: 0,
            repl_state: ReplState::None,
            master: None,
            repl_down_since: 0,
            replica: Default::default(),
            failover: Default::default(),
        }
    }
}

/// ROLE
// redis: replication.c roleCommand
pub fn role_command(srv: &mut crate::server::Server, c: &mut crate::networking::Client) {
    if srv.repl.masterhost.is_some() {
        replica::role_replica(srv, c)
    } else {
        master::role_master(srv, c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backlog_wraps_and_answers_from_any_held_offset() {
        let mut b = ReplBacklog::new(8, 0);
        b.feed(b"abcde", 5);
        assert_eq!(b.offset, 1);
        assert_eq!(b.copy_from(1).unwrap(), b"abcde");
        assert_eq!(b.copy_from(6).unwrap(), b"");
        b.feed(b"fghij", 10);
        // Holds the last 8 bytes: offsets 3..=10.
        assert_eq!(b.offset, 3);
        assert_eq!(b.histlen, 8);
        assert_eq!(b.copy_from(3).unwrap(), b"cdefghij");
        assert_eq!(b.copy_from(9).unwrap(), b"ij");
        assert!(b.copy_from(2).is_none());
        assert!(b.copy_from(12).is_none());
    }

    #[test]
    fn backlog_resize_keeps_the_newest_history() {
        let mut b = ReplBacklog::new(8, 0);
        b.feed(b"abcdefgh", 8);
        b.resize(4, 8);
        assert_eq!(b.offset, 5);
        assert_eq!(b.copy_from(5).unwrap(), b"efgh");
        b.resize(16, 8);
        assert_eq!(b.copy_from(5).unwrap(), b"efgh");
        b.feed(b"ij", 10);
        assert_eq!(b.copy_from(5).unwrap(), b"efghij");
    }
}
