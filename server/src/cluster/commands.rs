//! CLUSTER and the other cluster-only commands (READONLY, READWRITE,
//! ASKING): Redis's cluster.c clusterCommand and friends.
//!
//! Without cluster mode every one of them answers that cluster support is
//! disabled, with Redis's arity, flags and COMMAND INFO: client libraries
//! and tools send them to probe the server's mode, so the answer must be
//! Redis's, not "unknown command".
//!
//! With cluster mode, CLUSTER's subcommands read and change the node table
//! in `super::ClusterState`. Changes that must reach nodes.conf set
//! CLUSTER_TODO_* flags; `cluster_before_sleep` writes the file once per
//! loop pass.

use cluster::node::CLUSTER_NODE_MYSELF;
use cluster::nodes_conf::CLUSTER_PORT_INCR;
use cluster::slots::{key_hash_slot, CLUSTER_SLOTS};

use super::bus::{self, HeaderInputs};
use super::{
    cluster_save_config, preferred_endpoint, ClusterNode, ClusterState, CLUSTER_OK,
    CLUSTER_TODO_FSYNC_CONFIG, CLUSTER_TODO_SAVE_CONFIG, CLUSTER_TODO_UPDATE_STATE,
};
use crate::networking::{Client, CLIENT_ASKING, CLIENT_READONLY};
use crate::server::Server;
use crate::shared;

/// The reply of every cluster-only command without cluster mode.
const CLUSTER_DISABLED: &str = "ERR This instance has cluster support disabled";

/// CLUSTER HELP's lines (clusterCommand's help[]).
const CLUSTER_HELP: &[&str] = &[
    "ADDSLOTS <slot> [<slot> ...]",
    "    Assign slots to current node.",
    "ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
    "    Assign slots which are between <start-slot> and <end-slot> to current node.",
    "BUMPEPOCH",
    "    Advance the cluster config epoch.",
    "COUNT-FAILURE-REPORTS <node-id>",
    "    Return number of failure reports for <node-id>.",
    "COUNTKEYSINSLOT <slot>",
    "    Return the number of keys in <slot>.",
    "DELSLOTS <slot> [<slot> ...]",
    "    Delete slots information from current node.",
    "DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
    "    Delete slots information which are between <start-slot> and <end-slot> from current node.",
    "FAILOVER [FORCE|TAKEOVER]",
    "    Promote current replica node to being a master.",
    "FORGET <node-id>",
    "    Remove a node from the cluster.",
    "GETKEYSINSLOT <slot> <count>",
    "    Return key names stored by current node in a slot.",
    "FLUSHSLOTS",
    "    Delete current node own slots information.",
    "INFO",
    "    Return information about the cluster.",
    "KEYSLOT <key>",
    "    Return the hash slot for <key>.",
    "MEET <ip> <port> [<bus-port>]",
    "    Connect nodes into a working cluster.",
    "MYID",
    "    Return the node id.",
    "NODES",
    "    Return cluster configuration seen by node. Output format:",
    "    <id> <ip:port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
    "REPLICATE <node-id>",
    "    Configure current node as replica to <node-id>.",
    "RESET [HARD|SOFT]",
    "    Reset current node (default: soft).",
    "SET-CONFIG-EPOCH <epoch>",
    "    Set config epoch of current node.",
    "SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
    "    Set slot state.",
    "REPLICAS <node-id>",
    "    Return <node-id> replicas.",
    "SAVECONFIG",
    "    Force saving cluster configuration on disk.",
    "SLOTS",
    "    Return information about slots range mappings. Each range is made of:",
    "    start, end, master and replicas IP addresses, ports and ids",
    "SHARDS",
    "    Return information about slot range mappings and the nodes associated with them.",
    "LINKS",
    "    Return information about all network links between this node and its peers.",
    "    Output format is an array where each array element is a map containing attributes of a link",
];

/// CLUSTER <subcommand> [<arg> ...]
// redis: cluster.c clusterCommand
pub fn cluster_command(srv: &mut Server, c: &mut Client) {
    if srv.cluster.is_none() {
        c.add_reply_error(CLUSTER_DISABLED);
        return;
    }
    let sub = String::from_utf8_lossy(c.arg(1)).to_ascii_lowercase();
    let argc = c.argc();
    match (sub.as_str(), argc) {
        ("help", 2) => c.add_reply_help("cluster", CLUSTER_HELP),
        ("meet", 4 | 5) => cluster_meet(srv, c),
        ("nodes", 2) => {
            let text = state(srv).gen_nodes_description(0);
            c.add_reply_verbatim(text.as_bytes());
        }
        ("myid", 2) => {
            let name = state(srv).myself;
            c.add_reply_bulk(name.as_bytes());
        }
        ("slots", 2) => cluster_reply_multi_bulk_slots(srv, c),
        ("shards", 2) => cluster_reply_shards(srv, c),
        ("flushslots", 2) => {
            if srv.dbs[0].size() != 0 {
                c.add_reply_error("ERR DB must be empty to perform CLUSTER FLUSHSLOTS.");
                return;
            }
            let st = state_mut(srv);
            let me = st.myself;
            st.del_node_slots(me);
            st.do_before_sleep(CLUSTER_TODO_UPDATE_STATE | CLUSTER_TODO_SAVE_CONFIG);
            c.add_reply_ok();
        }
        ("addslots" | "delslots", 3..) => cluster_add_del_slots(srv, c, sub == "delslots", false),
        ("addslotsrange" | "delslotsrange", 4..) => {
            if argc % 2 == 1 {
                let msg = format!("ERR wrong number of arguments for '{}' command", c.last_cmd);
                c.add_reply_error(&msg);
                return;
            }
            cluster_add_del_slots(srv, c, sub == "delslotsrange", true)
        }
        ("setslot", 4..) => cluster_setslot(srv, c),
        ("bumpepoch", 2) => {
            let st = state_mut(srv);
            let bumped = st.bump_config_epoch_without_consensus();
            let epoch = st.myself().config_epoch;
            let reply = format!("{} {}", if bumped { "BUMPED" } else { "STILL" }, epoch);
            c.add_reply_status(reply.as_bytes());
        }
        ("info", 2) => cluster_info(srv, c),
        ("saveconfig", 2) => match cluster_save_config(state_mut(srv), true) {
            Ok(()) => c.add_reply_ok(),
            Err(e) => c.add_reply_error(&format!(
                "ERR error saving the cluster node config: {}",
                crate::config::strerror(&e)
            )),
        },
        ("keyslot", 3) => {
            let slot = key_hash_slot(c.arg(2));
            c.add_reply_integer(slot as i64);
        }
        ("countkeysinslot", 3) => {
            let Some(slot) = long_long_or_reply(c, 2) else {
                return;
            };
            if slot < 0 || slot >= CLUSTER_SLOTS as i64 {
                c.add_reply_error("ERR Invalid slot");
                return;
            }
            c.add_reply_integer(count_keys_in_slot(srv, slot as usize) as i64);
        }
        ("getkeysinslot", 4) => {
            let Some(slot) = long_long_or_reply(c, 2) else {
                return;
            };
            let Some(maxkeys) = long_long_or_reply(c, 3) else {
                return;
            };
            if slot < 0 || slot >= CLUSTER_SLOTS as i64 || maxkeys < 0 {
                c.add_reply_error("ERR Invalid slot or number of keys");
                return;
            }
            let keys: Vec<Vec<u8>> = match &srv.dbs[0].slots_to_keys {
                Some(index) => index
                    .keys(slot as usize, maxkeys as usize)
                    .into_iter()
                    .map(|k| k.to_vec())
                    .collect(),
                None => Vec::new(),
            };
            c.add_reply_array_len(keys.len());
            for k in keys {
                c.add_reply_bulk(&k);
            }
        }
        ("forget", 3) => cluster_forget(srv, c),
        ("replicate", 3) => cluster_replicate(srv, c),
        ("slaves" | "replicas", 3) => {
            let st = state(srv);
            let Some(name) = st.lookup_node(c.arg(2)) else {
                let msg = format!("ERR Unknown node {}", String::from_utf8_lossy(c.arg(2)));
                c.add_reply_error(&msg);
                return;
            };
            if st.nodes[&name].is_slave() {
                c.add_reply_error("ERR The specified node is not a master");
                return;
            }
            let lines: Vec<String> = st.nodes[&name]
                .slaves
                .iter()
                .filter_map(|r| st.nodes.get(r))
                .map(|n| st.node_line(n).format())
                .collect();
            c.add_reply_array_len(lines.len());
            for l in lines {
                c.add_reply_bulk(l.as_bytes());
            }
        }
        ("count-failure-reports", 3) => {
            let st = state(srv);
            match st.lookup_node(c.arg(2)) {
                Some(name) => {
                    let n = st.nodes[&name].fail_reports.len();
                    c.add_reply_integer(n as i64);
                }
                None => {
                    let msg = format!("ERR Unknown node {}", String::from_utf8_lossy(c.arg(2)));
                    c.add_reply_error(&msg);
                }
            }
        }
        ("failover", 2 | 3) => cluster_failover(srv, c),
        ("set-config-epoch", 3) => cluster_set_config_epoch(srv, c),
        ("reset", 2 | 3) => cluster_reset_command(srv, c),
        ("links", 2) => cluster_links(srv, c),
        _ => c.add_reply_subcommand_syntax_error(),
    }
    // CLUSTER REPLICATE / FAILOVER / RESET change the replication role
    // before the reply goes out, as Redis's do.
    super::cluster_apply_actions(srv);
}

/// CLUSTER REPLICATE node-id
fn cluster_replicate(srv: &mut Server, c: &mut Client) {
    let db_empty = srv.dbs[0].size() == 0;
    let st = state_mut(srv);
    let Some(n) = st.lookup_node(c.arg(2)) else {
        let msg = format!("ERR Unknown node {}", String::from_utf8_lossy(c.arg(2)));
        c.add_reply_error(&msg);
        return;
    };
    if n == st.myself {
        c.add_reply_error("ERR Can't replicate myself");
        return;
    }
    if st.nodes[&n].is_slave() {
        c.add_reply_error("ERR I can only replicate a master, not a replica.");
        return;
    }
    // A master must be empty and serve nothing; a replica may switch.
    if st.myself().is_master() && (st.myself().numslots != 0 || !db_empty) {
        c.add_reply_error("ERR To set a master the node must be empty and without assigned slots.");
        return;
    }
    st.set_master(n);
    st.do_before_sleep(CLUSTER_TODO_UPDATE_STATE | CLUSTER_TODO_SAVE_CONFIG);
    c.add_reply_ok();
}

/// CLUSTER FAILOVER [FORCE|TAKEOVER]
fn cluster_failover(srv: &mut Server, c: &mut Client) {
    let (mut force, mut takeover) = (false, false);
    if c.argc() == 3 {
        if c.arg(2).eq_ignore_ascii_case(b"force") {
            force = true;
        } else if c.arg(2).eq_ignore_ascii_case(b"takeover") {
            takeover = true;
            force = true;
        } else {
            c.add_reply_syntax_error();
            return;
        }
    }
    let hdr = header_inputs(srv);
    let full_coverage = srv.config.cluster_require_full_coverage;
    let st = state_mut(srv);
    let master = st.myself().slaveof.and_then(|m| st.nodes.get(&m));
    if st.myself().is_master() {
        c.add_reply_error("ERR You should send CLUSTER FAILOVER to a replica");
        return;
    }
    let Some(master) = master else {
        c.add_reply_error("ERR I'm a replica but my master is unknown to me");
        return;
    };
    if !force && (master.failed() || master.link.is_none()) {
        c.add_reply_error("ERR Master is down or failed, please use CLUSTER FAILOVER FORCE");
        return;
    }
    super::failover::cluster_start_manual_failover(st, &hdr, force, takeover, full_coverage);
    c.add_reply_ok();
}

fn state(srv: &Server) -> &ClusterState {
    srv.cluster.as_deref().expect("cluster mode")
}

fn state_mut(srv: &mut Server) -> &mut ClusterState {
    srv.cluster.as_deref_mut().expect("cluster mode")
}

/// getLongLongFromObjectOrReply with Redis's default error.
fn long_long_or_reply(c: &mut Client, idx: usize) -> Option<i64> {
    match util::string2ll(c.arg(idx)) {
        Some(v) => Some(v),
        None => {
            c.add_reply_error(shared::NOT_INTEGER_ERR);
            None
        }
    }
}

/// getSlotOrReply.
fn slot_or_reply(c: &mut Client, idx: usize) -> Option<u16> {
    match util::string2ll(c.arg(idx)) {
        Some(v) if (0..CLUSTER_SLOTS as i64).contains(&v) => Some(v as u16),
        _ => {
            c.add_reply_error("ERR Invalid or out of range slot");
            None
        }
    }
}

/// countKeysInSlot (db 0's slot index).
pub fn count_keys_in_slot(srv: &Server, slot: usize) -> usize {
    srv.dbs[0]
        .slots_to_keys
        .as_ref()
        .map_or(0, |index| index.count(slot))
}

/// The header inputs a command that sends packets needs.
fn header_inputs(srv: &Server) -> HeaderInputs {
    bus::header_inputs(srv)
}

/// CLUSTER MEET ip port [cport]
fn cluster_meet(srv: &mut Server, c: &mut Client) {
    let Some(port) = util::string2ll(c.arg(3)) else {
        let msg = format!(
            "ERR Invalid TCP base port specified: {}",
            String::from_utf8_lossy(c.arg(3))
        );
        c.add_reply_error(&msg);
        return;
    };
    let cport = if c.argc() == 5 {
        match util::string2ll(c.arg(4)) {
            Some(p) => p,
            None => {
                let msg = format!(
                    "ERR Invalid TCP bus port specified: {}",
                    String::from_utf8_lossy(c.arg(4))
                );
                c.add_reply_error(&msg);
                return;
            }
        }
    } else {
        port + CLUSTER_PORT_INCR as i64
    };
    let ip = String::from_utf8_lossy(c.arg(2)).into_owned();
    match bus::cluster_start_handshake(state_mut(srv), &ip, port, cport) {
        Err(bus::InvalidAddress) => {
            let msg = format!(
                "ERR Invalid node address specified: {}:{}",
                ip,
                String::from_utf8_lossy(c.arg(3))
            );
            c.add_reply_error(&msg);
        }
        Ok(_) => c.add_reply_ok(),
    }
}

/// CLUSTER ADDSLOTS/DELSLOTS slot [slot ...] and the RANGE forms.
fn cluster_add_del_slots(srv: &mut Server, c: &mut Client, del: bool, ranges: bool) {
    let mut pairs: Vec<(u16, u16)> = Vec::new();
    let argc = c.argc();
    if ranges {
        let mut j = 2;
        while j + 1 < argc {
            let Some(start) = slot_or_reply(c, j) else {
                return;
            };
            let Some(end) = slot_or_reply(c, j + 1) else {
                return;
            };
            if start > end {
                let msg =
                    format!("ERR start slot number {start} is greater than end slot number {end}");
                c.add_reply_error(&msg);
                return;
            }
            pairs.push((start, end));
            j += 2;
        }
    } else {
        // Every argument must parse before any is checked.
        for j in 2..argc {
            let Some(slot) = slot_or_reply(c, j) else {
                return;
            };
            pairs.push((slot, slot));
        }
    }
    // checkSlotAssignmentsOrReply.
    let st = state(srv);
    let mut seen = vec![false; CLUSTER_SLOTS];
    for &(start, end) in &pairs {
        for slot in start..=end {
            let owned = st.slots[slot as usize].is_some();
            if del && !owned {
                c.add_reply_error(&format!("ERR Slot {slot} is already unassigned"));
                return;
            } else if !del && owned {
                c.add_reply_error(&format!("ERR Slot {slot} is already busy"));
                return;
            }
            if seen[slot as usize] {
                c.add_reply_error(&format!("ERR Slot {slot} specified multiple times"));
                return;
            }
            seen[slot as usize] = true;
        }
    }
    // clusterUpdateSlots.
    let st = state_mut(srv);
    let me = st.myself;
    for slot in 0..CLUSTER_SLOTS as u16 {
        if !seen[slot as usize] {
            continue;
        }
        st.importing_slots_from.remove(&slot);
        if del {
            st.del_slot(slot);
        } else {
            st.add_slot(me, slot);
        }
    }
    st.do_before_sleep(CLUSTER_TODO_UPDATE_STATE | CLUSTER_TODO_SAVE_CONFIG);
    c.add_reply_ok();
}

/// CLUSTER SETSLOT slot IMPORTING node | MIGRATING node | STABLE | NODE node
fn cluster_setslot(srv: &mut Server, c: &mut Client) {
    if state(srv).myself().is_slave() {
        c.add_reply_error("ERR Please use SETSLOT only with masters.");
        return;
    }
    let Some(slot) = slot_or_reply(c, 2) else {
        return;
    };
    let action = String::from_utf8_lossy(c.arg(3)).to_ascii_lowercase();
    let argc = c.argc();
    let node_arg = if argc == 5 {
        String::from_utf8_lossy(c.arg(4)).into_owned()
    } else {
        String::new()
    };
    let keys_in_slot = count_keys_in_slot(srv, slot as usize);
    let hdr = header_inputs(srv);
    let st = state_mut(srv);
    let me = st.myself;
    match (action.as_str(), argc) {
        ("migrating", 5) => {
            if st.slots[slot as usize] != Some(me) {
                c.add_reply_error(&format!("ERR I'm not the owner of hash slot {slot}"));
                return;
            }
            let Some(n) = st.lookup_node(node_arg.as_bytes()) else {
                c.add_reply_error(&format!("ERR I don't know about node {node_arg}"));
                return;
            };
            if st.nodes[&n].is_slave() {
                c.add_reply_error("ERR Target node is not a master");
                return;
            }
            st.migrating_slots_to.insert(slot, n);
        }
        ("importing", 5) => {
            if st.slots[slot as usize] == Some(me) {
                c.add_reply_error(&format!("ERR I'm already the owner of hash slot {slot}"));
                return;
            }
            let Some(n) = st.lookup_node(node_arg.as_bytes()) else {
                c.add_reply_error(&format!("ERR I don't know about node {node_arg}"));
                return;
            };
            if st.nodes[&n].is_slave() {
                c.add_reply_error("ERR Target node is not a master");
                return;
            }
            st.importing_slots_from.insert(slot, n);
        }
        ("stable", 4) => {
            st.importing_slots_from.remove(&slot);
            st.migrating_slots_to.remove(&slot);
        }
        ("node", 5) => {
            let Some(n) = st.lookup_node(node_arg.as_bytes()) else {
                c.add_reply_error(&format!("ERR Unknown node {node_arg}"));
                return;
            };
            if st.nodes[&n].is_slave() {
                c.add_reply_error("ERR Target node is not a master");
                return;
            }
            if st.slots[slot as usize] == Some(me) && n != me && keys_in_slot != 0 {
                c.add_reply_error(&format!(
                    "ERR Can't assign hashslot {slot} to a different node while I still hold keys for this hash slot."
                ));
                return;
            }
            if keys_in_slot == 0 {
                st.migrating_slots_to.remove(&slot);
            }
            st.del_slot(slot);
            st.add_slot(n, slot);
            // Closing an import: a new epoch, so the cluster takes the
            // new owner without a conflict, and tell everyone now.
            if n == me && st.importing_slots_from.contains_key(&slot) {
                if st.bump_config_epoch_without_consensus() {
                    crate::log::server_log(
                        crate::log::LogLevel::Warning,
                        &format!("configEpoch updated after importing slot {slot}"),
                    );
                }
                st.importing_slots_from.remove(&slot);
                bus::cluster_broadcast_pong(st, &hdr);
            }
        }
        _ => {
            c.add_reply_error(
                "ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP",
            );
            return;
        }
    }
    st.do_before_sleep(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_UPDATE_STATE);
    c.add_reply_ok();
}

/// CLUSTER INFO
fn cluster_info(srv: &Server, c: &mut Client) {
    let st = state(srv);
    let (mut assigned, mut ok, mut pfail, mut fail) = (0, 0, 0, 0);
    for owner in st.slots.iter().flatten() {
        assigned += 1;
        let n = &st.nodes[owner];
        if n.failed() {
            fail += 1;
        } else if n.timed_out() {
            pfail += 1;
        } else {
            ok += 1;
        }
    }
    let mut info = format!(
        "cluster_state:{}\r\ncluster_slots_assigned:{assigned}\r\ncluster_slots_ok:{ok}\r\ncluster_slots_pfail:{pfail}\r\ncluster_slots_fail:{fail}\r\ncluster_known_nodes:{}\r\ncluster_size:{}\r\ncluster_current_epoch:{}\r\ncluster_my_epoch:{}\r\n",
        if st.state == CLUSTER_OK { "ok" } else { "fail" },
        st.nodes.len(),
        st.size,
        st.current_epoch,
        st.my_epoch(),
    );
    let mut total = 0;
    for (i, &n) in st.stats_bus_messages_sent.iter().enumerate() {
        if n == 0 {
            continue;
        }
        total += n;
        info.push_str(&format!(
            "cluster_stats_messages_{}_sent:{n}\r\n",
            cluster::bus::message_type_name(i as u16)
        ));
    }
    info.push_str(&format!("cluster_stats_messages_sent:{total}\r\n"));
    let mut total = 0;
    for (i, &n) in st.stats_bus_messages_received.iter().enumerate() {
        if n == 0 {
            continue;
        }
        total += n;
        info.push_str(&format!(
            "cluster_stats_messages_{}_received:{n}\r\n",
            cluster::bus::message_type_name(i as u16)
        ));
    }
    info.push_str(&format!("cluster_stats_messages_received:{total}\r\n"));
    info.push_str(&format!(
        "total_cluster_links_buffer_limit_exceeded:{}\r\n",
        st.stat_cluster_links_buffer_limit_exceeded
    ));
    c.add_reply_verbatim(info.as_bytes());
}

/// addNodeToNodeReply: [endpoint, port, id, {other endpoints}].
fn add_node_to_node_reply(srv: &Server, c: &mut Client, n: &ClusterNode) {
    c.add_reply_array_len(4);
    let etype = srv.config.cluster_preferred_endpoint_type;
    match etype {
        0 => c.add_reply_bulk(n.ip.as_bytes()),
        1 => c.add_reply_bulk(preferred_endpoint(srv, n).as_bytes()),
        _ => c.add_reply_null(),
    }
    c.add_reply_integer(n.port as i64);
    c.add_reply_bulk(n.name.as_bytes());
    let show_ip = etype != 0;
    let show_hostname = etype != 1 && !n.hostname.is_empty();
    c.add_reply_map_len(show_ip as usize + show_hostname as usize);
    if show_ip {
        c.add_reply_bulk(b"ip");
        c.add_reply_bulk(n.ip.as_bytes());
    }
    if show_hostname {
        c.add_reply_bulk(b"hostname");
        c.add_reply_bulk(n.hostname.as_bytes());
    }
}

/// CLUSTER SLOTS (clusterReplyMultiBulkSlots): one entry per run of
/// consecutive slots with the same owner, its master then its available
/// replicas.
fn cluster_reply_multi_bulk_slots(srv: &Server, c: &mut Client) {
    let st = state(srv);
    let mut runs: Vec<(usize, usize, cluster::node::NodeName)> = Vec::new();
    for (slot, owner) in st.slots.iter().enumerate() {
        let Some(owner) = owner else { continue };
        match runs.last_mut() {
            Some((_, end, o)) if *o == *owner && *end + 1 == slot => *end = slot,
            _ => runs.push((slot, slot, *owner)),
        }
    }
    c.add_reply_array_len(runs.len());
    for (start, end, owner) in runs {
        let node = &st.nodes[&owner];
        // isReplicaAvailable: not FAIL, and with data (a non-zero offset;
        // myself's is my own replication offset).
        let replicas: Vec<&ClusterNode> = node
            .slaves
            .iter()
            .filter_map(|r| st.nodes.get(r))
            .filter(|n| {
                let offset = if n.flags & CLUSTER_NODE_MYSELF != 0 {
                    crate::replication::replica::replication_get_slave_offset(srv)
                } else {
                    n.repl_offset
                };
                !n.failed() && offset != 0
            })
            .collect();
        c.add_reply_array_len(3 + replicas.len());
        c.add_reply_integer(start as i64);
        c.add_reply_integer(end as i64);
        add_node_to_node_reply(srv, c, node);
        for r in replicas {
            add_node_to_node_reply(srv, c, r);
        }
    }
}

/// addNodeDetailsToShardReply.
fn add_node_details_to_shard_reply(srv: &Server, c: &mut Client, n: &ClusterNode) {
    let st = state(srv);
    let has_hostname = !n.hostname.is_empty();
    let pairs = 7 + has_hostname as usize - (n.port == 0) as usize;
    c.add_reply_map_len(pairs);
    c.add_reply_bulk(b"id");
    c.add_reply_bulk(n.name.as_bytes());
    if n.port != 0 {
        c.add_reply_bulk(b"port");
        c.add_reply_integer(n.port as i64);
    }
    c.add_reply_bulk(b"ip");
    c.add_reply_bulk(n.ip.as_bytes());
    c.add_reply_bulk(b"endpoint");
    c.add_reply_bulk(preferred_endpoint(srv, n).as_bytes());
    if has_hostname {
        c.add_reply_bulk(b"hostname");
        c.add_reply_bulk(n.hostname.as_bytes());
    }
    let offset = if n.flags & CLUSTER_NODE_MYSELF != 0 {
        if n.is_slave() {
            crate::replication::replica::replication_get_slave_offset(srv)
        } else {
            srv.repl.master_repl_offset
        }
    } else {
        n.repl_offset
    };
    c.add_reply_bulk(b"role");
    c.add_reply_bulk(if n.is_slave() {
        b"replica" as &[u8]
    } else {
        b"master"
    });
    c.add_reply_bulk(b"replication-offset");
    c.add_reply_integer(offset);
    c.add_reply_bulk(b"health");
    let health: &[u8] = if n.failed() {
        b"fail"
    } else if n.is_slave() && offset == 0 {
        b"loading"
    } else {
        b"online"
    };
    c.add_reply_bulk(health);
    let _ = st;
}

/// CLUSTER SHARDS (clusterReplyShards): one shard per master.
fn cluster_reply_shards(srv: &Server, c: &mut Client) {
    let st = state(srv);
    let masters: Vec<&ClusterNode> = st.nodes.values().filter(|n| n.is_master()).collect();
    c.add_reply_array_len(masters.len());
    for m in masters {
        c.add_reply_map_len(2);
        c.add_reply_bulk(b"slots");
        let ranges = m.slots.ranges();
        c.add_reply_array_len(ranges.len() * 2);
        for (start, end) in ranges {
            c.add_reply_integer(start as i64);
            c.add_reply_integer(end as i64);
        }
        c.add_reply_bulk(b"nodes");
        // clusterGetNodesServingMySlots: the master, then its replicas.
        let nodes: Vec<&ClusterNode> = std::iter::once(m)
            .chain(m.slaves.iter().filter_map(|r| st.nodes.get(r)))
            .collect();
        c.add_reply_array_len(nodes.len());
        for n in nodes {
            add_node_details_to_shard_reply(srv, c, n);
        }
    }
}

/// CLUSTER FORGET node-id
fn cluster_forget(srv: &mut Server, c: &mut Client) {
    let registry = srv.poll.registry();
    let Some(st) = srv.cluster.as_deref_mut() else {
        return;
    };
    let Some(name) = st.lookup_node(c.arg(2)) else {
        let msg = format!("ERR Unknown node {}", String::from_utf8_lossy(c.arg(2)));
        c.add_reply_error(&msg);
        return;
    };
    if name == st.myself {
        c.add_reply_error("ERR I tried hard but I can't forget myself...");
        return;
    }
    if st.myself().is_slave() && st.myself().slaveof == Some(name) {
        c.add_reply_error("ERR Can't forget my master!");
        return;
    }
    bus::cluster_blacklist_add_node(st, name);
    bus::cluster_del_node(registry, st, name);
    st.do_before_sleep(CLUSTER_TODO_UPDATE_STATE | CLUSTER_TODO_SAVE_CONFIG);
    c.add_reply_ok();
}

/// CLUSTER SET-CONFIG-EPOCH epoch
fn cluster_set_config_epoch(srv: &mut Server, c: &mut Client) {
    let Some(epoch) = long_long_or_reply(c, 2) else {
        return;
    };
    let st = state_mut(srv);
    if epoch < 0 {
        c.add_reply_error(&format!("ERR Invalid config epoch specified: {epoch}"));
    } else if st.nodes.len() > 1 {
        c.add_reply_error(
            "ERR The user can assign a config epoch only when the node does not know any other node.",
        );
    } else if st.myself().config_epoch != 0 {
        c.add_reply_error("ERR Node config epoch is already non-zero");
    } else {
        st.myself_mut().config_epoch = epoch as u64;
        crate::log::server_log(
            crate::log::LogLevel::Warning,
            &format!("configEpoch set to {epoch} via CLUSTER SET-CONFIG-EPOCH"),
        );
        if st.current_epoch < epoch as u64 {
            st.current_epoch = epoch as u64;
        }
        st.do_before_sleep(CLUSTER_TODO_UPDATE_STATE | CLUSTER_TODO_SAVE_CONFIG);
        c.add_reply_ok();
    }
}

/// CLUSTER RESET [HARD|SOFT]
fn cluster_reset_command(srv: &mut Server, c: &mut Client) {
    let mut hard = false;
    if c.argc() == 3 {
        if c.arg(2).eq_ignore_ascii_case(b"hard") {
            hard = true;
        } else if !c.arg(2).eq_ignore_ascii_case(b"soft") {
            c.add_reply_syntax_error();
            return;
        }
    }
    if state(srv).myself().is_master() && srv.dbs[c.db].size() != 0 {
        c.add_reply_error("ERR CLUSTER RESET can't be called with master nodes containing keys");
        return;
    }
    cluster_reset(srv, hard);
    c.add_reply_ok();
}

/// clusterReset: forget every other node and every slot; HARD also takes a
/// new name and zeroes the epochs.
pub fn cluster_reset(srv: &mut Server, hard: bool) {
    let registry = srv.poll.registry();
    let Some(st) = srv.cluster.as_deref_mut() else {
        return;
    };
    let me = st.myself;
    // A replica turns into an empty master.
    if st.myself().is_slave() {
        st.set_node_as_master(me);
        st.actions.push(super::ClusterAction::UnsetMaster);
        st.actions.push(super::ClusterAction::EmptyData);
    }
    st.migrating_slots_to.clear();
    st.importing_slots_from.clear();
    for slot in 0..CLUSTER_SLOTS as u16 {
        st.del_slot(slot);
    }
    let others: Vec<_> = st.nodes.keys().copied().filter(|n| *n != me).collect();
    for name in others {
        bus::cluster_del_node(registry, st, name);
    }
    if hard {
        st.current_epoch = 0;
        st.last_vote_epoch = 0;
        let mut node = st.nodes.remove(&me).expect("myself");
        node.config_epoch = 0;
        let new = cluster::node::NodeName::from_random(rand::random());
        node.name = new;
        st.myself = new;
        st.nodes.insert(new, node);
        crate::log::server_log(
            crate::log::LogLevel::Notice,
            &format!("Node hard reset, now I'm {new}"),
        );
    }
    st.do_before_sleep(
        CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_UPDATE_STATE | CLUSTER_TODO_FSYNC_CONFIG,
    );
}

/// CLUSTER LINKS (addReplyClusterLinksDescription): every link, both ways.
fn cluster_links(srv: &Server, c: &mut Client) {
    let st = state(srv);
    let mut links: Vec<(&ClusterNode, &bus::ClusterLink, &str)> = Vec::new();
    for n in st.nodes.values() {
        if let Some(l) = n.link.and_then(|t| st.links.get(&t)) {
            links.push((n, l, "to"));
        }
        if let Some(l) = n.inbound_link.and_then(|t| st.links.get(&t)) {
            links.push((n, l, "from"));
        }
    }
    c.add_reply_array_len(links.len());
    for (n, l, dir) in links {
        c.add_reply_map_len(6);
        c.add_reply_bulk(b"direction");
        c.add_reply_bulk(dir.as_bytes());
        c.add_reply_bulk(b"node");
        c.add_reply_bulk(n.name.as_bytes());
        c.add_reply_bulk(b"create-time");
        c.add_reply_integer(l.ctime);
        c.add_reply_bulk(b"events");
        c.add_reply_bulk(if l.sndbuf.is_empty() {
            b"r" as &[u8]
        } else {
            b"rw"
        });
        // Redis counts the bytes of queued messages for both.
        c.add_reply_bulk(b"send-buffer-allocated");
        c.add_reply_integer(l.sndbuf.len() as i64);
        c.add_reply_bulk(b"send-buffer-used");
        c.add_reply_integer(l.sndbuf.len() as i64);
    }
}

/// DEBUG CLUSTERLINK KILL <to|from|all> <node-id>: close a bus link (the
/// cron reopens an outbound one; the peer reopens an inbound one).
// redis: debug.c debugCommand ("clusterlink")
pub fn debug_clusterlink_kill(srv: &mut Server, c: &mut Client) {
    let registry = srv.poll.registry();
    let Some(st) = srv.cluster.as_deref_mut() else {
        c.add_reply_error("ERR Debug option only available for cluster mode enabled setup!");
        return;
    };
    let Some(name) = st.lookup_node(c.arg(4)) else {
        let msg = format!("ERR Unknown node {}", String::from_utf8_lossy(c.arg(4)));
        c.add_reply_error(&msg);
        return;
    };
    let (to, from) = (st.nodes[&name].link, st.nodes[&name].inbound_link);
    let dir = c.arg(3);
    if dir.eq_ignore_ascii_case(b"from") {
        if let Some(t) = from {
            bus::free_cluster_link(registry, st, t);
        }
    } else if dir.eq_ignore_ascii_case(b"to") {
        if let Some(t) = to {
            bus::free_cluster_link(registry, st, t);
        }
    } else if dir.eq_ignore_ascii_case(b"all") {
        for t in [to, from].into_iter().flatten() {
            bus::free_cluster_link(registry, st, t);
        }
    } else {
        // Redis 7.0.15 replies this error and then still +OK (two
        // replies to one command); kept, as the reference does it.
        let msg = format!("ERR Unknown direction {}", String::from_utf8_lossy(dir));
        c.add_reply_error(&msg);
    }
    c.add_reply_ok();
}

/// READONLY
// redis: cluster.c readonlyCommand
pub fn readonly_command(srv: &mut Server, c: &mut Client) {
    if srv.cluster.is_none() {
        c.add_reply_error(CLUSTER_DISABLED);
        return;
    }
    c.flags |= CLIENT_READONLY;
    c.add_reply_ok();
}

/// READWRITE
// redis: cluster.c readwriteCommand
pub fn readwrite_command(srv: &mut Server, c: &mut Client) {
    if srv.cluster.is_none() {
        c.add_reply_error(CLUSTER_DISABLED);
        return;
    }
    c.flags &= !CLIENT_READONLY;
    c.add_reply_ok();
}

/// ASKING
// redis: cluster.c askingCommand
pub fn asking_command(srv: &mut Server, c: &mut Client) {
    if srv.cluster.is_none() {
        c.add_reply_error(CLUSTER_DISABLED);
        return;
    }
    c.flags |= CLIENT_ASKING;
    c.add_reply_ok();
}
