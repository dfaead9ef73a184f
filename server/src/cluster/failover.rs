//! Replicas taking over: the automatic failover of a FAIL master and the
//! manual CLUSTER FAILOVER (Redis's cluster.c "SLAVE node specific
//! functions" and "Manual failover").
//!
//! An automatic failover, from the replica's side:
//! 1. Its master is flagged FAIL (a majority of masters reported it,
//!    bus.rs `mark_node_as_failing_if_needed`, or a FAIL message came).
//! 2. `cluster_handle_slave_failover` schedules an election: 500 ms for the
//!    FAIL to spread, plus up to 500 ms at random, plus 1 s per *rank*
//!    (how many sibling replicas have a larger replication offset), so the
//!    most up-to-date replica usually asks first.
//! 3. At that time it bumps currentEpoch and broadcasts
//!    FAILOVER_AUTH_REQUEST. Every master serving slots votes at most once
//!    per epoch (lastVoteEpoch) and once per 2 * node timeout about one
//!    master (`cluster_send_failover_auth_if_needed`), with a
//!    FAILOVER_AUTH_ACK.
//! 4. With acks from a majority of the masters (cluster size / 2 + 1) it
//!    takes the election's epoch as its configEpoch, takes its master's
//!    slots, becomes a master (`cluster_failover_replace_your_master`) and
//!    PONGs everyone; the newer configEpoch makes every node (the old
//!    master too, once back) accept the new owner, and the old master and
//!    the other replicas turn into its replicas (bus.rs
//!    `cluster_update_slots_config_with`).
//!
//! A manual failover (CLUSTER FAILOVER on a replica) sends MFSTART; the
//! master pauses writes and PINGs its offset with the PAUSED flag; once the
//! replica has processed exactly that offset (`cluster_handle_manual_failover`)
//! it runs the same election with no delay, and the votes are granted even
//! though the master is up (the FORCEACK flag). FORCE skips the offset
//! handshake; TAKEOVER skips the election (a configEpoch bump without
//! consensus).

use cluster::bus::{ClusterMsg, MsgBody, MsgHeader, CLUSTERMSG_FLAG0_FORCEACK};
use cluster::node::NodeName;
use cluster::slots::CLUSTER_SLOTS;
use rand::RngExt;

use super::bus::{self, HeaderInputs};
use super::{
    cluster_save_config_or_die, cluster_update_state, ClusterAction, ClusterState,
    CLUSTER_TODO_FSYNC_CONFIG, CLUSTER_TODO_HANDLE_FAILOVER, CLUSTER_TODO_HANDLE_MANUALFAILOVER,
    CLUSTER_TODO_SAVE_CONFIG, CLUSTER_TODO_UPDATE_STATE,
};
use crate::log::{server_log, LogLevel};
use crate::server::mstime;

/// CLUSTER_MF_TIMEOUT: a manual failover must finish within 5 s.
pub const CLUSTER_MF_TIMEOUT: i64 = 5000;
/// CLUSTER_MF_PAUSE_MULT: the master pauses writes for twice that.
pub const CLUSTER_MF_PAUSE_MULT: i64 = 2;
/// CLUSTER_CANT_FAILOVER_RELOG_PERIOD: the same reason is logged again
/// after five minutes (seconds).
const CLUSTER_CANT_FAILOVER_RELOG_PERIOD: i64 = 60 * 5;

/// CLUSTER_CANT_FAILOVER_*: why a replica of a FAIL master is not (yet)
/// failing over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CantFailover {
    None,
    DataAge,
    WaitingDelay,
    Expired,
    WaitingVotes,
}

/// clusterRequestFailoverAuth: ask every node for its vote (a manual
/// failover sets FORCEACK: vote although my master is up).
fn cluster_request_failover_auth(state: &mut ClusterState, hdr: &HeaderInputs) {
    let mut h: MsgHeader = bus::cluster_build_message_hdr(state, hdr);
    if state.mf_end != 0 {
        h.mflags[0] |= CLUSTERMSG_FLAG0_FORCEACK;
    }
    let msg = ClusterMsg::new(h, MsgBody::FailoverAuthRequest);
    bus::cluster_broadcast_message(state, &msg);
}

/// clusterSendFailoverAuth: my vote, to `node`.
fn cluster_send_failover_auth(state: &mut ClusterState, node: NodeName, hdr: &HeaderInputs) {
    let Some(token) = state.nodes.get(&node).and_then(|n| n.link) else {
        return;
    };
    let msg = ClusterMsg::new(
        bus::cluster_build_message_hdr(state, hdr),
        MsgBody::FailoverAuthAck,
    );
    bus::cluster_send_message(state, token, &msg);
}

/// clusterSendMFStart: ask my master to pause for a manual failover.
fn cluster_send_mf_start(state: &mut ClusterState, master: NodeName, hdr: &HeaderInputs) {
    let Some(token) = state.nodes.get(&master).and_then(|n| n.link) else {
        return;
    };
    let msg = ClusterMsg::new(bus::cluster_build_message_hdr(state, hdr), MsgBody::MfStart);
    bus::cluster_send_message(state, token, &msg);
}

/// clusterSendFailoverAuthIfNeeded: vote for `node`, a replica asking to
/// replace its master, if it may.
pub fn cluster_send_failover_auth_if_needed(
    state: &mut ClusterState,
    node: NodeName,
    request: &MsgHeader,
    hdr: &HeaderInputs,
) {
    let node_timeout = hdr.node_timeout;
    let me = state.myself();
    // Only a master serving slots has a vote.
    if me.is_slave() || me.numslots == 0 {
        return;
    }
    let req_epoch = request.current_epoch;
    if req_epoch < state.current_epoch {
        server_log(
            LogLevel::Warning,
            &format!(
                "Failover auth denied to {node}: reqEpoch ({req_epoch}) < curEpoch({})",
                state.current_epoch
            ),
        );
        return;
    }
    if state.last_vote_epoch == state.current_epoch {
        server_log(
            LogLevel::Warning,
            &format!(
                "Failover auth denied to {node}: already voted for epoch {}",
                state.current_epoch
            ),
        );
        return;
    }
    let force_ack = request.mflags[0] & CLUSTERMSG_FLAG0_FORCEACK != 0;
    let n = &state.nodes[&node];
    let master = n.slaveof.and_then(|m| state.nodes.get(&m));
    let reason = if n.is_master() {
        Some("it is a master node")
    } else {
        match master {
            None => Some("I don't know its master"),
            Some(m) if !m.failed() && !force_ack => Some("its master is up"),
            _ => None,
        }
    };
    if let Some(reason) = reason {
        server_log(
            LogLevel::Warning,
            &format!("Failover auth denied to {node}: {reason}"),
        );
        return;
    }
    let master = master.expect("checked above");
    let since_vote = mstime() - master.voted_time;
    if since_vote < node_timeout * 2 {
        server_log(
            LogLevel::Warning,
            &format!(
                "Failover auth denied to {node}: can't vote about this master before {} milliseconds",
                node_timeout * 2 - since_vote
            ),
        );
        return;
    }
    // Every slot it claims must not be served by a newer configuration.
    for slot in 0..CLUSTER_SLOTS as u16 {
        if !request.myslots.get(slot) {
            continue;
        }
        let Some(owner) = state.slots[slot as usize].and_then(|o| state.nodes.get(&o)) else {
            continue;
        };
        if owner.config_epoch <= request.config_epoch {
            continue;
        }
        server_log(
            LogLevel::Warning,
            &format!(
                "Failover auth denied to {node}: slot {slot} epoch ({}) > reqEpoch ({})",
                owner.config_epoch, request.config_epoch
            ),
        );
        return;
    }
    // The vote.
    state.last_vote_epoch = state.current_epoch;
    let master_name = master.name;
    if let Some(m) = state.nodes.get_mut(&master_name) {
        m.voted_time = mstime();
    }
    state.do_before_sleep(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_FSYNC_CONFIG);
    cluster_send_failover_auth(state, node, hdr);
    server_log(
        LogLevel::Warning,
        &format!(
            "Failover auth granted to {node} for epoch {}",
            state.current_epoch
        ),
    );
}

/// clusterGetSlaveRank: how many sibling replicas (that may fail over)
/// have a larger offset than mine.
fn cluster_get_slave_rank(state: &ClusterState, myoffset: i64) -> usize {
    let me = state.myself;
    let Some(master) = state.myself().slaveof.and_then(|m| state.nodes.get(&m)) else {
        return 0;
    };
    master
        .slaves
        .iter()
        .filter_map(|s| state.nodes.get(s))
        .filter(|s| s.name != me && !s.cant_failover() && s.repl_offset > myoffset)
        .count()
}

/// clusterLogCantFailover: log why not, once per reason (again after
/// five minutes), and only once the master has been FAIL for a while.
fn cluster_log_cant_failover(state: &mut ClusterState, reason: CantFailover, node_timeout: i64) {
    let now_secs = mstime() / 1000;
    if reason == state.cant_failover_reason
        && now_secs - state.cant_failover_lastlog < CLUSTER_CANT_FAILOVER_RELOG_PERIOD
    {
        return;
    }
    state.cant_failover_reason = reason;
    let nolog_fail_time = node_timeout + 5000;
    if let Some(m) = state.myself().slaveof.and_then(|m| state.nodes.get(&m)) {
        if m.failed() && mstime() - m.fail_time < nolog_fail_time {
            return;
        }
    }
    let msg = match reason {
        CantFailover::DataAge => "Disconnected from master for longer than allowed. Please check the 'cluster-replica-validity-factor' configuration option.",
        CantFailover::WaitingDelay => "Waiting the delay before I can start a new failover.",
        CantFailover::Expired => "Failover attempt expired.",
        CantFailover::WaitingVotes => "Waiting for votes, but majority still not reached.",
        CantFailover::None => "Unknown reason code.",
    };
    state.cant_failover_lastlog = now_secs;
    server_log(
        LogLevel::Warning,
        &format!("Currently unable to failover: {msg}"),
    );
}

/// clusterFailoverReplaceYourMaster: become a master, take my master's
/// slots, save, and tell everyone.
pub fn cluster_failover_replace_your_master(
    state: &mut ClusterState,
    hdr: &HeaderInputs,
    node_timeout: i64,
    full_coverage: bool,
) {
    let me = state.myself;
    let Some(oldmaster) = state.myself().slaveof else {
        return;
    };
    if state.myself().is_master() {
        return;
    }
    // 1) A master, and replication off.
    state.set_node_as_master(me);
    state.actions.push(ClusterAction::UnsetMaster);
    // 2) My master's slots are mine.
    for slot in 0..CLUSTER_SLOTS as u16 {
        if state
            .nodes
            .get(&oldmaster)
            .is_some_and(|m| m.slots.get(slot))
        {
            state.del_slot(slot);
            state.add_slot(me, slot);
        }
    }
    // 3) The new state, on disk before anyone hears of it.
    cluster_update_state(state, full_coverage, node_timeout);
    cluster_save_config_or_die(state, true);
    // 4) PONG everyone: they see a master with these slots and a newer
    //    configEpoch.
    bus::cluster_broadcast_pong(state, hdr);
    // 5) A manual failover is over.
    state.reset_manual_failover();
}

/// clusterHandleSlaveFailover: from clusterCron (and before sleep when a
/// vote came in) on a replica: schedule, run and win an election for a
/// FAIL master (or a manual failover).
pub fn cluster_handle_slave_failover(
    state: &mut ClusterState,
    hdr: &HeaderInputs,
    node_timeout: i64,
    full_coverage: bool,
) {
    let now = mstime();
    let auth_age = now - state.failover_auth_time;
    let needed_quorum = state.size / 2 + 1;
    let manual_failover = state.mf_end != 0 && state.mf_can_start;
    state.todo_before_sleep &= !CLUSTER_TODO_HANDLE_FAILOVER;
    // Time to collect votes, and to wait before another try.
    let auth_timeout = (node_timeout * 2).max(2000);
    let auth_retry_time = auth_timeout * 2;
    let me = state.myself();
    let master = me.slaveof.and_then(|m| state.nodes.get(&m));
    let can = match master {
        Some(m) if me.is_slave() => {
            // A manual failover goes ahead whatever; otherwise the master
            // must be FAIL and failover not disabled here.
            (manual_failover || (m.failed() && !hdr.no_failover)) && m.numslots > 0
        }
        _ => false,
    };
    if !can {
        state.cant_failover_reason = CantFailover::None;
        return;
    }
    // How stale my data is, beyond the node timeout it took to flag FAIL.
    let mut data_age = hdr.data_age;
    if data_age > node_timeout {
        data_age -= node_timeout;
    }
    if hdr.validity_factor != 0
        && data_age > hdr.repl_ping_period * 1000 + node_timeout * hdr.validity_factor
        && !manual_failover
    {
        cluster_log_cant_failover(state, CantFailover::DataAge, node_timeout);
        return;
    }
    // The last attempt is over: schedule a new election.
    if auth_age > auth_retry_time {
        let mut rng = rand::rng();
        state.failover_auth_time = now + 500 + rng.random_range(0..500);
        state.failover_auth_count = 0;
        state.failover_auth_sent = false;
        state.failover_auth_rank = cluster_get_slave_rank(state, hdr.offset);
        state.failover_auth_time += state.failover_auth_rank as i64 * 1000;
        if state.mf_end != 0 {
            state.failover_auth_time = now;
            state.failover_auth_rank = 0;
            state.do_before_sleep(CLUSTER_TODO_HANDLE_FAILOVER);
        }
        server_log(
            LogLevel::Warning,
            &format!(
                "Start of election delayed for {} milliseconds (rank #{}, offset {}).",
                state.failover_auth_time - now,
                state.failover_auth_rank,
                hdr.offset
            ),
        );
        // My offset to my siblings: they may rank themselves behind me.
        bus::cluster_broadcast_pong_local_slaves(state, hdr);
        return;
    }
    // A sibling told me of a better offset since: wait longer.
    if !state.failover_auth_sent && state.mf_end == 0 {
        let newrank = cluster_get_slave_rank(state, hdr.offset);
        if newrank > state.failover_auth_rank {
            let added_delay = (newrank - state.failover_auth_rank) as i64 * 1000;
            state.failover_auth_time += added_delay;
            state.failover_auth_rank = newrank;
            server_log(
                LogLevel::Warning,
                &format!(
                    "Replica rank updated to #{newrank}, added {added_delay} milliseconds of delay."
                ),
            );
        }
    }
    if now < state.failover_auth_time {
        cluster_log_cant_failover(state, CantFailover::WaitingDelay, node_timeout);
        return;
    }
    if auth_age > auth_timeout {
        cluster_log_cant_failover(state, CantFailover::Expired, node_timeout);
        return;
    }
    // Ask for votes, once per election, under a new epoch.
    if !state.failover_auth_sent {
        state.current_epoch += 1;
        state.failover_auth_epoch = state.current_epoch;
        server_log(
            LogLevel::Warning,
            &format!(
                "Starting a failover election for epoch {}.",
                state.current_epoch
            ),
        );
        cluster_request_failover_auth(state, hdr);
        state.failover_auth_sent = true;
        state.do_before_sleep(
            CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_UPDATE_STATE | CLUSTER_TODO_FSYNC_CONFIG,
        );
        return;
    }
    if state.failover_auth_count >= needed_quorum {
        server_log(
            LogLevel::Warning,
            "Failover election won: I'm the new master.",
        );
        if state.myself().config_epoch < state.failover_auth_epoch {
            let epoch = state.failover_auth_epoch;
            state.myself_mut().config_epoch = epoch;
            server_log(
                LogLevel::Warning,
                &format!("configEpoch set to {epoch} after successful failover"),
            );
        }
        cluster_failover_replace_your_master(state, hdr, node_timeout, full_coverage);
    } else {
        cluster_log_cant_failover(state, CantFailover::WaitingVotes, node_timeout);
    }
}

/// manualFailoverCheckTimeout.
pub fn manual_failover_check_timeout(state: &mut ClusterState) {
    if state.mf_end != 0 && state.mf_end < mstime() {
        server_log(LogLevel::Warning, "Manual failover timed out.");
        state.reset_manual_failover();
    }
}

/// clusterHandleManualFailover: the replica waits until it processed the
/// offset its paused master announced; then the election may start.
pub fn cluster_handle_manual_failover(state: &mut ClusterState, hdr: &HeaderInputs) {
    if state.mf_end == 0 || state.mf_can_start || state.mf_master_offset == -1 {
        return;
    }
    if state.mf_master_offset == hdr.offset {
        state.mf_can_start = true;
        server_log(
            LogLevel::Warning,
            "All master replication stream processed, manual failover can start.",
        );
        state.do_before_sleep(CLUSTER_TODO_HANDLE_FAILOVER);
        return;
    }
    state.do_before_sleep(CLUSTER_TODO_HANDLE_MANUALFAILOVER);
}

/// CLUSTER FAILOVER [FORCE|TAKEOVER] once its preconditions hold: start a
/// manual failover (the command's reply is OK at once; the failover
/// completes within CLUSTER_MF_TIMEOUT or not at all).
pub fn cluster_start_manual_failover(
    state: &mut ClusterState,
    hdr: &HeaderInputs,
    force: bool,
    takeover: bool,
    full_coverage: bool,
) {
    state.reset_manual_failover();
    state.mf_end = mstime() + CLUSTER_MF_TIMEOUT;
    if takeover {
        // No election: a new epoch without consensus, and the slots.
        server_log(LogLevel::Warning, "Taking over the master (user request).");
        state.bump_config_epoch_without_consensus();
        cluster_failover_replace_your_master(state, hdr, hdr.node_timeout, full_coverage);
    } else if force {
        // No offset handshake with the master.
        server_log(LogLevel::Warning, "Forced failover user request accepted.");
        state.mf_can_start = true;
    } else {
        server_log(LogLevel::Warning, "Manual failover user request accepted.");
        if let Some(m) = state.myself().slaveof {
            cluster_send_mf_start(state, m, hdr);
        }
    }
}
