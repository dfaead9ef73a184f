//! FAILOVER: a master hands its role to one of its replicas without losing
//! a write (the coordinated failover of Redis 6.2+, replication.c
//! failoverCommand / updateFailoverStatus).
//!
//! The happy path, in `master_failover_state` terms:
//!
//! 1. `waiting-for-sync`: FAILOVER pauses every client's writes (CLIENT
//!    PAUSE WRITE under its own purpose, so CLIENT UNPAUSE does not end
//!    it); the stream stops growing. `update_failover_status` (from the
//!    cron, ten times a second during a failover, and before each sleep,
//!    right after the ACKs were read) waits for the target replica, or any
//!    replica, to acknowledge `master_repl_offset` exactly.
//! 2. `failover-in-progress`: this master turns itself into a replica of
//!    the target (`replication_set_master`, its own replid and offset as
//!    the cached master) and its handshake sends
//!    `PSYNC <replid> <offset> FAILOVER` (replica.rs). The target sees the
//!    FAILOVER argument with *its* replid (master.rs `sync_command`),
//!    becomes a master itself (REPLICAOF NO ONE: the old id is now its
//!    replid2) and answers `+CONTINUE <new id>`: no data is copied.
//! 3. `no-failover`: the PSYNC was answered; the pause ends. The writes that
//!    waited run now, on a replica, and get READONLY.
//!
//! The exits: a TIMEOUT without FORCE aborts (`abort_failover`: the pause
//! ends, nothing else changed); with FORCE the master goes to step 2 even
//! though the target is behind. A PSYNC the target refused (an error, a
//! NOPERM) or a write error on that link aborts too: this server becomes a
//! master again (REPLICAOF NO ONE), with a new replid, and its replicas
//! PSYNC back. FAILOVER ABORT is the manual exit; REPLICAOF is refused
//! while any of this runs.

use crate::log::{server_log, LogLevel};
use crate::networking::{self, Client, PausePurpose, PauseType};
use crate::server::{mstime, Server};
use crate::shared;

use super::SlaveState;

/// failover_state (FAILOVER_* in server.h).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FailoverState {
    /// NO_FAILOVER
    #[default]
    None,
    /// FAILOVER_WAIT_FOR_SYNC: writes paused, waiting for a replica to
    /// catch up.
    WaitForSync,
    /// FAILOVER_IN_PROGRESS: this server is a replica of the target and
    /// waits for the answer to its PSYNC FAILOVER.
    InProgress,
}

/// The failover fields of Redis's server struct.
#[derive(Debug, Default)]
pub struct Failover {
    pub state: FailoverState,
    /// When a TIMEOUT runs out (unix ms; 0: no timeout).
    pub end_time: i64,
    /// FORCE: fail over at the timeout even if the target is behind.
    pub force: bool,
    /// The target (given with TO, or the first replica found caught up).
    pub target_host: Option<String>,
    pub target_port: u16,
}

/// FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT milliseconds]
// redis: replication.c failoverCommand
pub fn failover_command(srv: &mut Server, c: &mut Client) {
    // A cluster fails over with CLUSTER FAILOVER.
    if srv.cluster.is_some() {
        return c.add_reply_error(
            "ERR FAILOVER not allowed in cluster mode. Use CLUSTER FAILOVER command instead.",
        );
    }
    if c.argc() == 2 && c.arg(1).eq_ignore_ascii_case(b"abort") {
        if srv.repl.failover.state == FailoverState::None {
            return c.add_reply_error("ERR No failover in progress.");
        }
        abort_failover(srv, "Failover manually aborted");
        return c.add_reply_ok();
    }

    let mut timeout_in_ms = 0i64;
    let mut force = false;
    let mut target: Option<(String, i64)> = None;
    let mut j = 1;
    while j < c.argc() {
        let a = c.arg(j);
        if a.eq_ignore_ascii_case(b"timeout") && j + 1 < c.argc() && timeout_in_ms == 0 {
            let Some(t) = storage::util::string2ll(c.arg(j + 1)) else {
                return c.add_reply_error(shared::NOT_INTEGER_ERR);
            };
            if t <= 0 {
                return c.add_reply_error("ERR FAILOVER timeout must be greater than 0");
            }
            timeout_in_ms = t;
            j += 2;
        } else if a.eq_ignore_ascii_case(b"to") && j + 2 < c.argc() && target.is_none() {
            let Some(port) = storage::util::string2ll(c.arg(j + 2)) else {
                return c.add_reply_error(shared::NOT_INTEGER_ERR);
            };
            target = Some((String::from_utf8_lossy(c.arg(j + 1)).into_owned(), port));
            j += 3;
        } else if a.eq_ignore_ascii_case(b"force") && !force {
            force = true;
            j += 1;
        } else {
            return c.add_reply_syntax_error();
        }
    }

    if srv.repl.failover.state != FailoverState::None {
        return c.add_reply_error("ERR FAILOVER already in progress.");
    }
    if srv.repl.masterhost.is_some() {
        return c.add_reply_error("ERR FAILOVER is not valid when server is a replica.");
    }
    if srv.repl.slaves.is_empty() {
        return c.add_reply_error("ERR FAILOVER requires connected replicas.");
    }
    if force && (timeout_in_ms == 0 || target.is_none()) {
        return c.add_reply_error(
            "ERR FAILOVER with force option requires both a timeout and target HOST and IP.",
        );
    }

    // A named target must be one of our replicas, online.
    if let Some((host, port)) = &target {
        let Some(replstate) = find_replica(srv, host, *port).map(|r| r.repl.replstate) else {
            return c.add_reply_error("ERR FAILOVER target HOST and PORT is not a replica.");
        };
        if replstate != SlaveState::Online {
            return c.add_reply_error("ERR FAILOVER target replica is not online.");
        }
        srv.repl.failover.target_host = Some(host.clone());
        // A replica's listening port fits a u16 (find_replica matched it).
        srv.repl.failover.target_port = *port as u16;
        server_log(
            LogLevel::Notice,
            &format!("FAILOVER requested to {host}:{port}."),
        );
    } else {
        server_log(LogLevel::Notice, "FAILOVER requested to any replica.");
    }

    if timeout_in_ms != 0 {
        srv.repl.failover.end_time = mstime().saturating_add(timeout_in_ms);
    }
    srv.repl.failover.force = force;
    srv.repl.failover.state = FailoverState::WaitForSync;
    // Writes wait until the failover ends (no end time of its own).
    networking::pause_clients(
        srv,
        PausePurpose::DuringFailover,
        i64::MAX,
        PauseType::Write,
    );
    c.add_reply_ok();
}

/// findReplica: our replica at host:port (its announced ip-address, or
/// its peer address, and its listening port).
fn find_replica<'a>(srv: &'a Server, host: &str, port: i64) -> Option<&'a Client> {
    srv.repl.slaves.iter().find_map(|t| {
        let r: &Client = srv.clients.get(t)?;
        let ip = match &r.repl.slave_addr {
            Some(a) => a.clone(),
            None => super::master::slave_peer_ip(r),
        };
        (!ip.is_empty()
            && ip.eq_ignore_ascii_case(host)
            && i64::from(r.repl.slave_listening_port) == port)
            .then_some(r)
    })
}

/// getFailoverStateString: INFO replication's master_failover_state.
pub fn get_failover_state_string(srv: &Server) -> &'static str {
    match srv.repl.failover.state {
        FailoverState::None => "no-failover",
        FailoverState::WaitForSync => "waiting-for-sync",
        FailoverState::InProgress => "failover-in-progress",
    }
}

/// clearFailoverState: the failover ended (either way); writes resume.
pub fn clear_failover_state(srv: &mut Server) {
    srv.repl.failover = Failover::default();
    networking::unpause_clients(srv, PausePurpose::DuringFailover);
}

/// abortFailover: give up. Once this server already follows the target
/// (in progress), it becomes a master again.
pub fn abort_failover(srv: &mut Server, err: &str) {
    let f = &srv.repl.failover;
    if f.state == FailoverState::None {
        return;
    }
    match &f.target_host {
        Some(host) => server_log(
            LogLevel::Notice,
            &format!("FAILOVER to {host}:{} aborted: {err}", f.target_port),
        ),
        None => server_log(
            LogLevel::Notice,
            &format!("FAILOVER to any replica aborted: {err}"),
        ),
    }
    if f.state == FailoverState::InProgress {
        super::replica::replication_unset_master(srv);
    }
    clear_failover_state(srv);
}

/// updateFailoverStatus: while waiting for sync, time out (abort, or with
/// FORCE fail over anyway), or start the failover as soon as the target
/// (or, without one, the first replica found) acknowledged our whole
/// stream.
pub fn update_failover_status(srv: &mut Server) {
    if srv.repl.failover.state != FailoverState::WaitForSync {
        return;
    }
    let now = mstime();
    let f = &srv.repl.failover;
    if f.end_time != 0 && f.end_time <= now {
        if f.force {
            let host = f.target_host.clone().unwrap_or_default();
            let port = f.target_port;
            server_log(
                LogLevel::Notice,
                &format!("FAILOVER to {host}:{port} time out exceeded, failing over."),
            );
            srv.repl.failover.state = FailoverState::InProgress;
            super::replica::replication_set_master(srv, &host, port);
        } else {
            abort_failover(srv, "Replica never caught up before timeout");
        }
        return;
    }

    let offset = srv.repl.master_repl_offset;
    let caught_up = match &f.target_host {
        Some(host) => find_replica(srv, host, i64::from(f.target_port))
            .is_some_and(|r| r.repl.repl_ack_off == offset),
        None => {
            // The first replica that acknowledged everything becomes the
            // target.
            let found = srv.repl.slaves.iter().find_map(|t| {
                let r = srv.clients.get(t)?;
                if r.repl.repl_ack_off != offset {
                    return None;
                }
                let ip = match &r.repl.slave_addr {
                    Some(a) => a.clone(),
                    None => super::master::slave_peer_ip(r),
                };
                (!ip.is_empty()).then_some((ip, r.repl.slave_listening_port))
            });
            match found {
                Some((ip, port)) => {
                    srv.repl.failover.target_host = Some(ip);
                    srv.repl.failover.target_port = port;
                    true
                }
                None => false,
            }
        }
    };
    if caught_up {
        let host = srv.repl.failover.target_host.clone().unwrap_or_default();
        let port = srv.repl.failover.target_port;
        srv.repl.failover.state = FailoverState::InProgress;
        server_log(
            LogLevel::Notice,
            &format!("Failover target {host}:{port} is synced, failing over."),
        );
        super::replica::replication_set_master(srv, &host, port);
    }
}
