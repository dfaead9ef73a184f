//! Redis Cluster mode (Redis's cluster.c), on the pure `cluster` crate.
//!
//! With `cluster-enabled yes` the server is one node of a cluster. It keeps
//! a table of every node it knows (`ClusterState::nodes`, Redis's
//! `server.cluster->nodes`), who owns each of the 16384 hash slots
//! (`ClusterState::slots`), and talks to the other nodes over the *cluster
//! bus*: a second TCP port (client port + 10000 by default) carrying Redis
//! 7.0's binary `clusterMsg` packets (the `cluster` crate's `bus` codec).
//!
//! The pieces, and their Redis twins:
//!
//! | here            | job                                              | redis (cluster.c) |
//! |-----------------|--------------------------------------------------|-------------------|
//! | `mod.rs`        | the node table, nodes.conf, clusterCron, the cluster state, routing a command to its slot's node | clusterInit, clusterLoadConfig, clusterSaveConfig, clusterCron, clusterUpdateState, getNodeByQuery, clusterRedirectClient |
//! | `bus.rs`        | the bus listener and links, reading and writing packets, MEET/PING/PONG, the handshake, gossip, FAIL and UPDATE | clusterAcceptHandler, clusterReadHandler, clusterProcessPacket, clusterSendPing, clusterProcessGossipSection |
//! | `commands.rs`   | CLUSTER and its subcommands, READONLY, READWRITE, ASKING | clusterCommand, readonlyCommand, ... |
//!
//! Everything runs in the one event loop: the bus listener and every link
//! are mio sources like the client sockets (`ae_fire_file_event` hands
//! their events to `bus::cluster_handle_event`), and `cluster_cron` runs
//! every 100 ms from `server_cron`. No thread, no async.
//!
//! Changes that must reach nodes.conf (or re-evaluate the cluster state)
//! set `todo_before_sleep` flags (CLUSTER_TODO_*), and `cluster_before_sleep`
//! does the work once per loop pass, as Redis's clusterBeforeSleep: many
//! changes in one pass cost one write of the file.
//!
//! Replicas and failover live in `failover.rs` (the election, the votes,
//! CLUSTER FAILOVER); where cluster code needs the replication code or
//! the client pause, it queues a `ClusterAction` that
//! `cluster_apply_actions` carries out right after the event that caused
//! it. Not built: replica migration, shard channels dropped when their
//! slot moves (removeChannelsInSlot).

pub mod bus;
pub mod commands;
pub mod failover;

use std::collections::{BTreeMap, HashMap};

use cluster::bus::CLUSTERMSG_TYPE_COUNT;
use cluster::node::{
    NodeName, CLUSTER_NODE_FAIL, CLUSTER_NODE_HANDSHAKE, CLUSTER_NODE_MASTER, CLUSTER_NODE_MEET,
    CLUSTER_NODE_MIGRATE_TO, CLUSTER_NODE_MYSELF, CLUSTER_NODE_NOADDR, CLUSTER_NODE_NOFAILOVER,
    CLUSTER_NODE_PFAIL, CLUSTER_NODE_SLAVE,
};
use cluster::nodes_conf::{NodeLine, NodesConf, CLUSTER_PORT_INCR};
use cluster::slots::{SlotBitmap, CLUSTER_SLOTS};
use mio::Token;

use crate::log::{server_log, LogLevel};
use crate::networking::Client;
use crate::server::{mstime, Server};

pub use commands::{asking_command, cluster_command, readonly_command, readwrite_command};

/// CLUSTER_OK / CLUSTER_FAIL: the node's view of the cluster, CLUSTER INFO
/// `cluster_state`, and the `state` byte of every bus header.
pub const CLUSTER_OK: u8 = 0;
pub const CLUSTER_FAIL: u8 = 1;

/// The bus listener's token: among the listeners' (below the first client).
pub const CLUSTER_LISTENER_TOKEN: Token = Token(crate::server::FIRST_CLIENT_TOKEN - 3);

/// CLUSTER_TODO_*: work clusterBeforeSleep does once per loop pass.
pub const CLUSTER_TODO_HANDLE_FAILOVER: u32 = 1 << 0;
pub const CLUSTER_TODO_UPDATE_STATE: u32 = 1 << 1;
pub const CLUSTER_TODO_SAVE_CONFIG: u32 = 1 << 2;
pub const CLUSTER_TODO_FSYNC_CONFIG: u32 = 1 << 3;
pub const CLUSTER_TODO_HANDLE_MANUALFAILOVER: u32 = 1 << 4;

/// CLUSTER_FAIL_REPORT_VALIDITY_MULT: a failure report counts for twice
/// the node timeout.
pub const CLUSTER_FAIL_REPORT_VALIDITY_MULT: i64 = 2;
/// CLUSTER_FAIL_UNDO_TIME_MULT: a FAIL master that still has no slots
/// served by anyone else is cleared after node timeout * 2.
pub const CLUSTER_FAIL_UNDO_TIME_MULT: i64 = 2;
/// CLUSTER_BLACKLIST_TTL: a FORGET'ten node is not re-added from gossip
/// for a minute, long enough for FORGET to reach every node.
pub const CLUSTER_BLACKLIST_TTL: i64 = 60;
/// CLUSTER_WRITABLE_DELAY: after start-up a master waits 2 s before it
/// declares the cluster OK, so it can first learn of a newer configuration.
pub const CLUSTER_WRITABLE_DELAY: i64 = 2000;
/// CLUSTER_MAX_REJOIN_DELAY / CLUSTER_MIN_REJOIN_DELAY: how long a master
/// that was in the minority partition stays FAIL after rejoining.
pub const CLUSTER_MAX_REJOIN_DELAY: i64 = 5000;
pub const CLUSTER_MIN_REJOIN_DELAY: i64 = 500;

/// The redirections getNodeByQuery can ask for (CLUSTER_REDIR_*).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Redir {
    None,
    CrossSlot,
    Unstable,
    Ask,
    Moved,
    DownState,
    DownUnbound,
    DownRoState,
}

/// One known node (Redis's clusterNode).
#[derive(Debug)]
pub struct ClusterNode {
    pub name: NodeName,
    /// When the node was created here (a handshake expires from this).
    pub ctime: i64,
    /// The version of its slot claim.
    pub config_epoch: u64,
    pub slots: SlotBitmap,
    pub numslots: usize,
    /// CLUSTER_NODE_* bits.
    pub flags: u16,
    /// Its master, for a replica.
    pub slaveof: Option<NodeName>,
    /// Unix ms of the PING awaiting a PONG, 0 if none.
    pub ping_sent: i64,
    /// Unix ms of the last PONG.
    pub pong_received: i64,
    /// Unix ms of the last packet of any kind from it.
    pub data_received: i64,
    /// When it was flagged FAIL.
    pub fail_time: i64,
    pub repl_offset: i64,
    pub ip: String,
    pub hostname: String,
    pub port: u16,
    pub pport: u16,
    pub cport: u16,
    /// The link we opened to it.
    pub link: Option<Token>,
    /// The link it opened to us.
    pub inbound_link: Option<Token>,
    /// Masters that told us (in gossip) this node is PFAIL or FAIL, and
    /// when (clusterNodeFailReport).
    pub fail_reports: Vec<(NodeName, i64)>,
    /// A master's replicas, in the order they were learned
    /// (node->slaves).
    pub slaves: Vec<NodeName>,
    /// When I last voted for a replica of this master (a master votes
    /// once per node timeout * 2 about one master).
    pub voted_time: i64,
}

impl ClusterNode {
    /// createClusterNode: a node with `flags`, no address, no slots.
    pub fn new(name: NodeName, flags: u16) -> ClusterNode {
        let now = mstime();
        ClusterNode {
            name,
            ctime: now,
            config_epoch: 0,
            slots: SlotBitmap::new(),
            numslots: 0,
            flags,
            slaveof: None,
            ping_sent: 0,
            pong_received: 0,
            data_received: 0,
            fail_time: 0,
            repl_offset: 0,
            ip: String::new(),
            hostname: String::new(),
            port: 0,
            pport: 0,
            cport: 0,
            link: None,
            inbound_link: None,
            fail_reports: Vec::new(),
            slaves: Vec::new(),
            voted_time: 0,
        }
    }

    pub fn is_master(&self) -> bool {
        self.flags & CLUSTER_NODE_MASTER != 0
    }
    pub fn is_slave(&self) -> bool {
        self.flags & CLUSTER_NODE_SLAVE != 0
    }
    pub fn in_handshake(&self) -> bool {
        self.flags & CLUSTER_NODE_HANDSHAKE != 0
    }
    pub fn failed(&self) -> bool {
        self.flags & CLUSTER_NODE_FAIL != 0
    }
    pub fn timed_out(&self) -> bool {
        self.flags & CLUSTER_NODE_PFAIL != 0
    }
    /// nodeHasAddr.
    pub fn has_addr(&self) -> bool {
        self.flags & CLUSTER_NODE_NOADDR == 0
    }
    /// nodeCantFailover.
    pub fn cant_failover(&self) -> bool {
        self.flags & CLUSTER_NODE_NOFAILOVER != 0
    }
}

/// What the cluster code asks of the rest of the server. The cluster
/// functions work on `ClusterState` alone; where Redis's cluster.c calls
/// into replication.c or pauses clients (clusterSetMaster ->
/// replicationSetMaster, clusterFailoverReplaceYourMaster ->
/// replicationUnsetMaster, MFSTART -> pauseClients), they queue one of
/// these and `cluster_apply_actions` carries it out as soon as the event
/// that caused it is handled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClusterAction {
    /// replicationSetMaster(ip, port).
    SetMaster(String, u16),
    /// replicationUnsetMaster().
    UnsetMaster,
    /// pauseClients(PAUSE_DURING_FAILOVER, until, CLIENT_PAUSE_WRITE).
    PauseWrites(i64),
    /// unpauseClients(PAUSE_DURING_FAILOVER).
    Unpause,
    /// CLUSTER RESET of a replica: emptyData, the old master's keys go.
    EmptyData,
    /// A PUBLISH (false) or PUBLISHSHARD (true) from the bus: deliver to
    /// my subscribers (pubsubPublishMessage).
    Publish(Vec<u8>, Vec<u8>, bool),
}

/// The node's whole view of the cluster (Redis's clusterState), plus the
/// bus sockets.
pub struct ClusterState {
    pub myself: NodeName,
    /// The cluster's logical clock: the highest epoch seen.
    pub current_epoch: u64,
    pub last_vote_epoch: u64,
    /// CLUSTER_OK or CLUSTER_FAIL.
    pub state: u8,
    /// Masters serving at least one slot.
    pub size: usize,
    /// Every known node by name, myself included.
    pub nodes: BTreeMap<NodeName, ClusterNode>,
    /// FORGET'ten nodes and until when (unix seconds) they stay forgotten.
    pub nodes_black_list: HashMap<NodeName, i64>,
    /// The owner of each slot.
    pub slots: Vec<Option<NodeName>>,
    pub migrating_slots_to: BTreeMap<u16, NodeName>,
    pub importing_slots_from: BTreeMap<u16, NodeName>,
    pub stats_bus_messages_sent: [u64; CLUSTERMSG_TYPE_COUNT as usize],
    pub stats_bus_messages_received: [u64; CLUSTERMSG_TYPE_COUNT as usize],
    pub stat_cluster_links_buffer_limit_exceeded: u64,
    /// CLUSTER_TODO_* for cluster_before_sleep.
    pub todo_before_sleep: u32,
    /// The bus links, inbound and outbound, by their mio token.
    pub links: HashMap<Token, bus::ClusterLink>,
    pub listener: Option<mio::net::TcpListener>,
    /// The bus port this node listens on.
    pub cport: u16,
    /// cluster-config-file.
    pub config_file: String,
    /// clusterCron's call counter.
    pub cron_iteration: u64,
    /// clusterUpdateState's memory: first call, and when this master was
    /// last in a minority partition.
    pub first_call_time: i64,
    pub among_minority_time: i64,
    /// Slots taken from myself by a newer claim: their keys are deleted at
    /// the next before-sleep (clusterUpdateSlotsConfigWith's dirty slots,
    /// delKeysInSlot).
    pub dirty_slots: Vec<u16>,
    /// A replica's election (failover.rs): when it may start, the votes
    /// counted, whether the request went out, its rank and epoch.
    pub failover_auth_time: i64,
    pub failover_auth_count: usize,
    pub failover_auth_sent: bool,
    pub failover_auth_rank: usize,
    pub failover_auth_epoch: u64,
    /// Why the replica cannot fail over, and when that was last logged.
    pub cant_failover_reason: failover::CantFailover,
    pub cant_failover_lastlog: i64,
    /// A manual failover (CLUSTER FAILOVER): its deadline (0: none), the
    /// replica that asked (on the master), the master's offset once it
    /// paused (-1 until known), and whether the election may start.
    pub mf_end: i64,
    pub mf_slave: Option<NodeName>,
    pub mf_master_offset: i64,
    pub mf_can_start: bool,
    /// Work for the rest of the server (ClusterAction).
    pub actions: Vec<ClusterAction>,
}

impl ClusterState {
    pub fn myself(&self) -> &ClusterNode {
        &self.nodes[&self.myself]
    }
    pub fn myself_mut(&mut self) -> &mut ClusterNode {
        self.nodes
            .get_mut(&self.myself)
            .expect("myself is always known")
    }

    /// clusterLookupNode: by the name's text; None for an invalid one.
    pub fn lookup_node(&self, name: &[u8]) -> Option<NodeName> {
        let name = NodeName::parse(name)?;
        self.nodes.contains_key(&name).then_some(name)
    }

    /// clusterDoBeforeSleep.
    pub fn do_before_sleep(&mut self, flags: u32) {
        self.todo_before_sleep |= flags;
    }

    /// clusterNodeAddSlave: false if it was already listed.
    pub fn node_add_slave(&mut self, master: NodeName, slave: NodeName) -> bool {
        let Some(m) = self.nodes.get_mut(&master) else {
            return false;
        };
        if m.slaves.contains(&slave) {
            return false;
        }
        m.slaves.push(slave);
        m.flags |= CLUSTER_NODE_MIGRATE_TO;
        true
    }

    /// clusterNodeRemoveSlave.
    pub fn node_remove_slave(&mut self, master: NodeName, slave: NodeName) {
        if let Some(m) = self.nodes.get_mut(&master) {
            m.slaves.retain(|s| *s != slave);
            if m.slaves.is_empty() {
                m.flags &= !CLUSTER_NODE_MIGRATE_TO;
            }
        }
    }

    /// clusterCountNonFailingSlaves.
    pub fn count_non_failing_slaves(&self, master: &ClusterNode) -> usize {
        master
            .slaves
            .iter()
            .filter(|s| self.nodes.get(s).is_some_and(|n| !n.failed()))
            .count()
    }

    /// clusterSetNodeAsMaster: `name` is (now) a master.
    pub fn set_node_as_master(&mut self, name: NodeName) {
        let Some(n) = self.nodes.get(&name) else {
            return;
        };
        if n.is_master() {
            return;
        }
        if let Some(m) = n.slaveof {
            self.node_remove_slave(m, name);
            if name != self.myself {
                if let Some(n) = self.nodes.get_mut(&name) {
                    n.flags |= CLUSTER_NODE_MIGRATE_TO;
                }
            }
        }
        let n = self.nodes.get_mut(&name).expect("checked above");
        n.flags &= !CLUSTER_NODE_SLAVE;
        n.flags |= CLUSTER_NODE_MASTER;
        n.slaveof = None;
        self.do_before_sleep(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_UPDATE_STATE);
    }

    /// clusterSetMaster: myself becomes a replica of `master` (a master
    /// without slots first closes its migrations).
    pub fn set_master(&mut self, master: NodeName) {
        let me = self.myself;
        if master == me || !self.nodes.contains_key(&master) {
            return;
        }
        if self.myself().is_master() {
            let m = self.myself_mut();
            m.flags &= !(CLUSTER_NODE_MASTER | CLUSTER_NODE_MIGRATE_TO);
            m.flags |= CLUSTER_NODE_SLAVE;
            // clusterCloseAllSlots.
            self.migrating_slots_to.clear();
            self.importing_slots_from.clear();
        } else if let Some(old) = self.myself().slaveof {
            self.node_remove_slave(old, me);
        }
        self.myself_mut().slaveof = Some(master);
        self.node_add_slave(master, me);
        let (ip, port) = {
            let m = &self.nodes[&master];
            (m.ip.clone(), m.port)
        };
        self.actions.push(ClusterAction::SetMaster(ip, port));
        self.reset_manual_failover();
    }

    /// resetManualFailover: no manual failover in progress; a master that
    /// paused its clients for one lets them go.
    pub fn reset_manual_failover(&mut self) {
        if self.mf_slave.is_some() {
            self.actions.push(ClusterAction::Unpause);
        }
        self.mf_end = 0;
        self.mf_can_start = false;
        self.mf_slave = None;
        self.mf_master_offset = -1;
    }

    /// clusterAddSlot: false if the slot already has an owner.
    pub fn add_slot(&mut self, node: NodeName, slot: u16) -> bool {
        if self.slots[slot as usize].is_some() {
            return false;
        }
        if let Some(n) = self.nodes.get_mut(&node) {
            if !n.slots.get(slot) {
                n.slots.set(slot);
                n.numslots += 1;
            }
        }
        self.slots[slot as usize] = Some(node);
        true
    }

    /// clusterDelSlot: false if the slot had no owner.
    pub fn del_slot(&mut self, slot: u16) -> bool {
        let Some(owner) = self.slots[slot as usize].take() else {
            return false;
        };
        if let Some(n) = self.nodes.get_mut(&owner) {
            if n.slots.get(slot) {
                n.slots.clear(slot);
                n.numslots -= 1;
            }
        }
        true
    }

    /// clusterDelNodeSlots: every slot of `node`; returns how many.
    pub fn del_node_slots(&mut self, node: NodeName) -> usize {
        let mut deleted = 0;
        for slot in 0..CLUSTER_SLOTS as u16 {
            if self.slots[slot as usize] == Some(node) {
                self.del_slot(slot);
                deleted += 1;
            }
        }
        deleted
    }

    /// The config epoch a header carries: mine, or my master's.
    pub fn my_epoch(&self) -> u64 {
        let me = self.myself();
        match me.slaveof.and_then(|m| self.nodes.get(&m)) {
            Some(master) if me.is_slave() => master.config_epoch,
            _ => me.config_epoch,
        }
    }

    /// clusterGetMaxEpoch: the highest config epoch known, or currentEpoch.
    pub fn max_epoch(&self) -> u64 {
        self.nodes
            .values()
            .map(|n| n.config_epoch)
            .max()
            .unwrap_or(0)
            .max(self.current_epoch)
    }

    /// clusterBumpConfigEpochWithoutConsensus: take a new epoch unless mine
    /// is already the unique highest. True when it bumped.
    pub fn bump_config_epoch_without_consensus(&mut self) -> bool {
        let max = self.max_epoch();
        let mine = self.myself().config_epoch;
        if mine == 0 || mine != max {
            self.current_epoch += 1;
            let epoch = self.current_epoch;
            self.myself_mut().config_epoch = epoch;
            self.do_before_sleep(CLUSTER_TODO_SAVE_CONFIG | CLUSTER_TODO_FSYNC_CONFIG);
            server_log(
                LogLevel::Warning,
                &format!("New configEpoch set to {epoch}"),
            );
            true
        } else {
            false
        }
    }

    /// The node line of CLUSTER NODES / nodes.conf for `node`
    /// (clusterGenNodeDescription).
    pub fn node_line(&self, node: &ClusterNode) -> NodeLine {
        let mut line = NodeLine::new(node.name, &node.ip, node.port, node.cport);
        line.hostname = node.hostname.clone();
        line.flags = node.flags;
        line.master = if node.is_slave() { node.slaveof } else { None };
        line.ping_sent = node.ping_sent;
        line.pong_received = node.pong_received;
        line.config_epoch = match node.slaveof.and_then(|m| self.nodes.get(&m)) {
            Some(master) if node.is_slave() => master.config_epoch,
            _ => node.config_epoch,
        };
        line.connected = node.link.is_some() || node.flags & CLUSTER_NODE_MYSELF != 0;
        if node.is_master() {
            line.slots = node.slots.clone();
        }
        if node.name == self.myself {
            line.migrating = self.migrating_slots_to.clone();
            line.importing = self.importing_slots_from.clone();
        }
        line
    }

    /// clusterGenNodesDescription: one line per node, those with any of
    /// `filter` flags left out.
    pub fn gen_nodes_description(&self, filter: u16) -> String {
        let mut s = String::new();
        for node in self.nodes.values() {
            if node.flags & filter != 0 {
                continue;
            }
            s.push_str(&self.node_line(node).format());
            s.push('\n');
        }
        s
    }
}

/// Is this server a cluster node? (server.cluster_enabled)
#[inline]
pub fn cluster_enabled(srv: &Server) -> bool {
    srv.cluster.is_some()
}

/// The key -> slot function the keyspace's slot index uses.
fn key_hash_slot(key: &[u8]) -> u16 {
    cluster::slots::key_hash_slot(key)
}

/// clusterInit: with cluster-enabled yes, load nodes.conf (or make myself a
/// fresh node and write it), bind the bus port, and index keys by slot.
/// Called before the data is loaded, so the loaded keys are indexed.
pub fn cluster_init(srv: &mut Server) -> Result<(), String> {
    if !srv.config.cluster_enabled {
        return Ok(());
    }
    let config_file = srv.config.cluster_config_file.clone();
    let mut state = ClusterState {
        myself: NodeName::NULL,
        current_epoch: 0,
        last_vote_epoch: 0,
        state: CLUSTER_FAIL,
        size: 1,
        nodes: BTreeMap::new(),
        nodes_black_list: HashMap::new(),
        slots: vec![None; CLUSTER_SLOTS],
        migrating_slots_to: BTreeMap::new(),
        importing_slots_from: BTreeMap::new(),
        stats_bus_messages_sent: [0; CLUSTERMSG_TYPE_COUNT as usize],
        stats_bus_messages_received: [0; CLUSTERMSG_TYPE_COUNT as usize],
        stat_cluster_links_buffer_limit_exceeded: 0,
        todo_before_sleep: 0,
        links: HashMap::new(),
        listener: None,
        cport: 0,
        config_file: config_file.clone(),
        cron_iteration: 0,
        first_call_time: 0,
        among_minority_time: 0,
        dirty_slots: Vec::new(),
        failover_auth_time: 0,
        failover_auth_count: 0,
        failover_auth_sent: false,
        failover_auth_rank: 0,
        failover_auth_epoch: 0,
        cant_failover_reason: failover::CantFailover::None,
        cant_failover_lastlog: 0,
        mf_end: 0,
        mf_slave: None,
        mf_master_offset: -1,
        mf_can_start: false,
        actions: Vec::new(),
    };
    if !cluster_load_config(&mut state, &config_file)? {
        // No config yet: a new node with a random name (clusterInit).
        let name = NodeName::from_random(rand::random());
        let mut me = ClusterNode::new(name, CLUSTER_NODE_MYSELF | CLUSTER_NODE_MASTER);
        me.ip = String::new();
        state.myself = name;
        state.nodes.insert(name, me);
        server_log(
            LogLevel::Notice,
            &format!("No cluster configuration found, I'm {name}"),
        );
        cluster_save_config(&mut state, true)
            .map_err(|e| format!("Configuration file {config_file}: {e}"))?;
    }
    // The bus port: cluster-port, or port + 10000 (it must fit 16 bits).
    let port = srv.config.port as u32;
    let cport = if srv.config.cluster_port != 0 {
        srv.config.cluster_port as u32
    } else {
        port + CLUSTER_PORT_INCR
    };
    if port == 0 || cport > 65535 {
        return Err(
            "Redis port number too high. Cluster communication port is 10,000 port numbers higher than your Redis port. Your Redis port number must be 55535 or less."
                .to_string(),
        );
    }
    state.cport = cport as u16;
    bus::cluster_listen(srv, &mut state)?;
    // myself's address fields as they go into headers and CLUSTER NODES.
    {
        let announce_port = srv.config.cluster_announce_port;
        let announce_bus = srv.config.cluster_announce_bus_port;
        let hostname = srv.config.cluster_announce_hostname.clone();
        let ip = srv.config.cluster_announce_ip.clone();
        let me = state.myself_mut();
        me.port = if announce_port != 0 {
            announce_port
        } else {
            port as u16
        };
        me.cport = if announce_bus != 0 {
            announce_bus
        } else {
            cport as u16
        };
        me.hostname = hostname;
        if !ip.is_empty() {
            me.ip = ip;
        }
    }
    // Only db 0 exists for a cluster node (SELECT of another is refused).
    srv.dbs[0].slots_to_keys = Some(Box::new(storage::db::SlotToKeys::new(key_hash_slot)));
    state.do_before_sleep(CLUSTER_TODO_UPDATE_STATE);
    srv.cluster = Some(Box::new(state));
    Ok(())
}

/// clusterUpdateMyselfAnnouncedPorts (deriveAnnouncedPorts): myself's
/// client and bus ports, the announced ones when set.
pub fn cluster_update_myself_announced_ports(srv: &mut Server) {
    let port = srv.config.port;
    let cport = if srv.config.cluster_port != 0 {
        srv.config.cluster_port
    } else {
        (port as u32 + CLUSTER_PORT_INCR).min(65535) as u16
    };
    let (announce_port, announce_bus) = (
        srv.config.cluster_announce_port,
        srv.config.cluster_announce_bus_port,
    );
    if let Some(state) = srv.cluster.as_deref_mut() {
        let me = state.myself_mut();
        me.port = if announce_port != 0 {
            announce_port
        } else {
            port
        };
        me.cport = if announce_bus != 0 {
            announce_bus
        } else {
            cport
        };
    }
}

/// clusterLoadConfig: read nodes.conf into `state`. Ok(false) when there is
/// no file (or an empty one): start as a new node. A corrupt file is an
/// error, as Redis's "Unrecoverable error: corrupted cluster config file".
fn cluster_load_config(state: &mut ClusterState, path: &str) -> Result<bool, String> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => {
            return Err(format!(
                "Loading the cluster node config from {path}: {}",
                crate::config::strerror(&e)
            ))
        }
    };
    if bytes.is_empty() {
        return Ok(false);
    }
    let conf = NodesConf::parse(&bytes).map_err(|e| {
        server_log(
            LogLevel::Warning,
            &format!("Unrecoverable error: corrupted cluster config file \"{path}\": {e}"),
        );
        "Unrecoverable error: corrupted cluster config file.".to_string()
    })?;
    let now = mstime();
    for line in &conf.nodes {
        let mut n = ClusterNode::new(line.name, line.flags);
        n.ip = line.ip.clone();
        n.port = line.port;
        n.cport = line.cport;
        n.hostname = line.hostname.clone();
        n.slaveof = line.master;
        // Redis reads the times back as "zero or not".
        n.ping_sent = if line.ping_sent != 0 { now } else { 0 };
        n.pong_received = if line.pong_received != 0 { now } else { 0 };
        // A replica's epoch is its master's; it has none of its own.
        n.config_epoch = if n.is_slave() && line.master.is_some() {
            0
        } else {
            line.config_epoch
        };
        if n.flags & CLUSTER_NODE_MYSELF != 0 {
            state.myself = line.name;
        }
        // A node learns its address afresh on every start: Redis clears
        // myself's ip unless it is announced (it is relearned from a MEET).
        n.flags &= !(CLUSTER_NODE_HANDSHAKE | CLUSTER_NODE_MEET);
        state.nodes.insert(line.name, n);
    }
    // Each replica in its master's list; a master not (yet) described
    // gets a node of its own (clusterLoadConfig's createClusterNode).
    for line in &conf.nodes {
        if let Some(master) = line.master {
            state
                .nodes
                .entry(master)
                .or_insert_with(|| ClusterNode::new(master, 0));
            state.node_add_slave(master, line.name);
        }
    }
    for line in &conf.nodes {
        for (start, end) in line.slots.ranges() {
            for slot in start..=end {
                state.add_slot(line.name, slot);
            }
        }
        if line.is_myself() {
            state.migrating_slots_to = line.migrating.clone();
            state.importing_slots_from = line.importing.clone();
        }
    }
    state.current_epoch = conf.current_epoch.max(state.max_epoch());
    state.last_vote_epoch = conf.last_vote_epoch;
    server_log(
        LogLevel::Notice,
        &format!(
            "Node configuration loaded, I'm {:.40}",
            state.myself.to_string()
        ),
    );
    Ok(true)
}

/// clusterSaveConfig: write nodes.conf in place (nodes in handshake left
/// out), fsync it when asked.
pub fn cluster_save_config(state: &mut ClusterState, do_fsync: bool) -> std::io::Result<()> {
    use std::io::Write;
    let mut conf = state.gen_nodes_description(CLUSTER_NODE_HANDSHAKE);
    conf.push_str(&format!(
        "vars currentEpoch {} lastVoteEpoch {}\n",
        state.current_epoch, state.last_vote_epoch
    ));
    state.todo_before_sleep &= !CLUSTER_TODO_SAVE_CONFIG;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(&state.config_file)?;
    f.write_all(conf.as_bytes())?;
    f.set_len(conf.len() as u64)?;
    if do_fsync {
        state.todo_before_sleep &= !CLUSTER_TODO_FSYNC_CONFIG;
        f.sync_all()?;
    }
    Ok(())
}

/// clusterSaveConfigOrDie: Redis exits when nodes.conf cannot be written.
pub(super) fn cluster_save_config_or_die(state: &mut ClusterState, do_fsync: bool) {
    if let Err(e) = cluster_save_config(state, do_fsync) {
        server_log(
            LogLevel::Warning,
            &format!("Fatal: can't update cluster config file: {e}"),
        );
        std::process::exit(1);
    }
}

/// clusterBeforeSleep: the deferred work of this pass.
pub fn cluster_before_sleep(srv: &mut Server) {
    let Some(state) = srv.cluster.as_deref_mut() else {
        return;
    };
    let todo = std::mem::take(&mut state.todo_before_sleep);
    let dirty = std::mem::take(&mut state.dirty_slots);
    // A manual failover's next step, or an election that may have its
    // quorum now: at once, not at the next cron.
    if todo & (CLUSTER_TODO_HANDLE_MANUALFAILOVER | CLUSTER_TODO_HANDLE_FAILOVER) != 0 {
        let hdr = bus::header_inputs(srv);
        let node_timeout = srv.config.cluster_node_timeout.max(1);
        let full_coverage = srv.config.cluster_require_full_coverage;
        let state = srv.cluster.as_deref_mut().expect("cluster mode");
        if state.myself().is_slave() {
            if todo & CLUSTER_TODO_HANDLE_MANUALFAILOVER != 0 {
                failover::cluster_handle_manual_failover(state, &hdr);
            }
            failover::cluster_handle_slave_failover(state, &hdr, node_timeout, full_coverage);
        }
    }
    let state = srv.cluster.as_deref_mut().expect("cluster mode");
    if todo & CLUSTER_TODO_UPDATE_STATE != 0 {
        cluster_update_state(
            state,
            srv.config.cluster_require_full_coverage,
            srv.config.cluster_node_timeout,
        );
    }
    if todo & CLUSTER_TODO_SAVE_CONFIG != 0 {
        cluster_save_config_or_die(state, todo & CLUSTER_TODO_FSYNC_CONFIG != 0);
    }
    bus::cluster_flush_links(state);
    for slot in dirty {
        del_keys_in_slot(srv, slot);
    }
    cluster_apply_actions(srv);
}

/// delKeysInSlot: drop every key of a slot this node no longer serves;
/// replicas and the AOF get a DEL for each.
pub fn del_keys_in_slot(srv: &mut Server, slot: u16) -> usize {
    let keys: Vec<Vec<u8>> = match &srv.dbs[0].slots_to_keys {
        Some(index) => index
            .keys(slot as usize, usize::MAX)
            .into_iter()
            .map(|k| k.to_vec())
            .collect(),
        None => return 0,
    };
    for key in &keys {
        crate::db::db_delete(srv, 0, key);
        crate::propagate::propagate_deletion(srv, 0, key, false);
    }
    if !keys.is_empty() {
        crate::propagate::propagate_pending_outside_call(srv);
    }
    keys.len()
}

/// clusterUpdateState: OK when every slot is served by a working node (with
/// cluster-require-full-coverage) and a majority of the masters is
/// reachable from here.
pub fn cluster_update_state(
    state: &mut ClusterState,
    require_full_coverage: bool,
    node_timeout: i64,
) {
    let now = mstime();
    if state.first_call_time == 0 {
        state.first_call_time = now;
    }
    let me_master = state.myself().is_master();
    // A master waits CLUSTER_WRITABLE_DELAY after start-up before it goes
    // OK: it may learn that its slots moved meanwhile.
    if me_master
        && state.state == CLUSTER_FAIL
        && now - state.first_call_time < CLUSTER_WRITABLE_DELAY
    {
        return;
    }
    let mut new_state = CLUSTER_OK;
    if require_full_coverage {
        for owner in &state.slots {
            match owner.and_then(|o| state.nodes.get(&o)) {
                Some(n) if !n.failed() => {}
                _ => {
                    new_state = CLUSTER_FAIL;
                    break;
                }
            }
        }
    }
    // The size is the number of masters with slots; a majority of them
    // must be reachable (not PFAIL or FAIL) from here.
    let mut size = 0;
    let mut reachable = 0;
    for n in state.nodes.values() {
        if n.is_master() && n.numslots > 0 {
            size += 1;
            if n.flags & (CLUSTER_NODE_FAIL | CLUSTER_NODE_PFAIL) == 0 {
                reachable += 1;
            }
        }
    }
    state.size = size;
    let needed_quorum = size / 2 + 1;
    if reachable < needed_quorum {
        new_state = CLUSTER_FAIL;
        state.among_minority_time = now;
    }
    if new_state != state.state {
        // A master back from the minority side waits before taking writes.
        let rejoin_delay = node_timeout.clamp(CLUSTER_MIN_REJOIN_DELAY, CLUSTER_MAX_REJOIN_DELAY);
        if new_state == CLUSTER_OK && me_master && now - state.among_minority_time < rejoin_delay {
            return;
        }
        server_log(
            LogLevel::Warning,
            &format!(
                "Cluster state changed: {}",
                if new_state == CLUSTER_OK {
                    "ok"
                } else {
                    "fail"
                }
            ),
        );
        state.state = new_state;
    }
}

/// clusterCron, every 100 ms from serverCron.
pub fn cluster_cron(srv: &mut Server) {
    let node_timeout = srv.config.cluster_node_timeout.max(1);
    let full_coverage = srv.config.cluster_require_full_coverage;
    let hdr = bus::header_inputs(srv);
    let Some(state) = srv.cluster.as_deref_mut() else {
        return;
    };
    bus::cluster_cron_links(
        srv.poll.registry(),
        state,
        &hdr,
        node_timeout,
        &mut srv.next_token,
    );
    // A replica whose replication is off (just started, or its master's
    // address was unknown) turns it on once the master has an address.
    if state.myself().is_slave() && !hdr.has_masterhost {
        if let Some(m) = state.myself().slaveof.and_then(|m| state.nodes.get(&m)) {
            if m.has_addr() && !m.ip.is_empty() {
                let action = ClusterAction::SetMaster(m.ip.clone(), m.port);
                state.actions.push(action);
            }
        }
    }
    failover::manual_failover_check_timeout(state);
    if state.myself().is_slave() {
        failover::cluster_handle_manual_failover(state, &hdr);
        failover::cluster_handle_slave_failover(state, &hdr, node_timeout, full_coverage);
    }
    cluster_update_state(state, full_coverage, node_timeout);
    if state.todo_before_sleep & CLUSTER_TODO_SAVE_CONFIG != 0 {
        let fsync = state.todo_before_sleep & CLUSTER_TODO_FSYNC_CONFIG != 0;
        cluster_save_config_or_die(state, fsync);
    }
    cluster_apply_actions(srv);
}

/// Carry out what the cluster code asked of the rest of the server
/// (ClusterAction), in order.
pub fn cluster_apply_actions(srv: &mut Server) {
    let Some(state) = srv.cluster.as_deref_mut() else {
        return;
    };
    if state.actions.is_empty() {
        return;
    }
    let actions = std::mem::take(&mut state.actions);
    for action in actions {
        match action {
            ClusterAction::SetMaster(ip, port) => {
                crate::replication::replica::replication_set_master(srv, &ip, port)
            }
            ClusterAction::UnsetMaster => {
                crate::replication::replica::replication_unset_master(srv)
            }
            ClusterAction::PauseWrites(until) => crate::networking::pause_clients(
                srv,
                crate::networking::PausePurpose::DuringFailover,
                until,
                crate::networking::PauseType::Write,
            ),
            ClusterAction::Unpause => crate::networking::unpause_clients(
                srv,
                crate::networking::PausePurpose::DuringFailover,
            ),
            ClusterAction::EmptyData => crate::replication::replica::empty_data(srv),
            ClusterAction::Publish(channel, message, sharded) => {
                crate::pubsub::pubsub_publish_message_from_cluster(
                    srv, &channel, &message, sharded,
                );
            }
        }
    }
}

/// getNodeByQuery: which node serves this command, and if not myself,
/// which redirection to send. `argv_list` is the command, or for EXEC the
/// queued commands.
pub fn get_node_by_query(
    srv: &Server,
    c: &Client,
    cmd_id: crate::commands::CmdId,
) -> (Option<NodeName>, u16, Redir) {
    let Some(state) = srv.cluster.as_deref() else {
        return (None, 0, Redir::None);
    };
    let cmd = srv.commands.get(cmd_id);
    let is_exec = cmd.fullname == "exec";
    if is_exec && !c.has_flag(crate::networking::CLIENT_MULTI) {
        return (Some(state.myself), 0, Redir::None);
    }
    let is_pubsubshard = matches!(cmd.fullname, "ssubscribe" | "sunsubscribe" | "spublish");
    // The commands to look at: EXEC's queue, or this one.
    let mut queued: Vec<(crate::commands::CmdId, &[bytes::Bytes])> = Vec::new();
    if is_exec {
        for q in &c.mstate.commands {
            queued.push((q.id, &q.argv));
        }
    } else {
        queued.push((cmd_id, &c.argv));
    }
    let mut firstkey: Option<&[u8]> = None;
    let mut slot: u16 = 0;
    let mut n: Option<NodeName> = None;
    let (mut migrating_slot, mut importing_slot, mut multiple_keys) = (false, false, false);
    let (mut missing_keys, mut existing_keys) = (0, 0);
    for (mcmd, margv) in queued {
        let mcmd = srv.commands.get(mcmd);
        for key in crate::commands::get_keys_from_command_legacy(mcmd, margv) {
            let thiskey: &[u8] = &margv[key.pos];
            let thisslot = cluster::slots::key_hash_slot(thiskey);
            match firstkey {
                None => {
                    firstkey = Some(thiskey);
                    slot = thisslot;
                    n = state.slots[slot as usize];
                    // No node serves the slot: CLUSTERDOWN, whatever the rest.
                    if n.is_none() {
                        return (None, slot, Redir::DownUnbound);
                    }
                    if n == Some(state.myself) && state.migrating_slots_to.contains_key(&slot) {
                        migrating_slot = true;
                    } else if state.importing_slots_from.contains_key(&slot) {
                        importing_slot = true;
                    }
                }
                Some(first) => {
                    if first != thiskey {
                        if slot != thisslot {
                            return (None, slot, Redir::CrossSlot);
                        }
                        multiple_keys = true;
                    }
                }
            }
            // During a migration, which keys are still here decides
            // between serving, ASK and TRYAGAIN.
            // A key whose TTL passed counts as missing (lookupKeyRead with
            // LOOKUP_NOEXPIRE: not deleted here, but not served): the
            // client is sent on with ASK, as the target may have it.
            if (migrating_slot || importing_slot) && !is_pubsubshard {
                let expired = !srv.loading.loading && srv.dbs[0].key_is_expired(thiskey, mstime());
                if srv.dbs[0].dict.get(thiskey).is_some() && !expired {
                    existing_keys += 1;
                } else {
                    missing_keys += 1;
                }
            }
        }
    }
    // No key at all: any node can serve it.
    let Some(owner) = n else {
        return (Some(state.myself), 0, Redir::None);
    };
    let cmd_flags = crate::server::get_command_flags(srv, c, cmd_id);
    let is_write = cmd_flags & crate::commands::CMD_WRITE != 0
        || (is_exec && c.mstate.cmd_flags & crate::commands::CMD_WRITE != 0);
    if state.state != CLUSTER_OK {
        if is_pubsubshard {
            if !srv.config.cluster_allow_pubsubshard_when_down {
                return (None, slot, Redir::DownState);
            }
        } else if !srv.config.cluster_allow_reads_when_down {
            return (None, slot, Redir::DownState);
        } else if is_write {
            return (None, slot, Redir::DownRoState);
        }
    }
    if (migrating_slot || importing_slot) && cmd.fullname == "migrate" {
        return (Some(state.myself), slot, Redir::None);
    }
    if migrating_slot && missing_keys > 0 {
        if existing_keys > 0 {
            return (None, slot, Redir::Unstable);
        }
        return (
            state.migrating_slots_to.get(&slot).copied(),
            slot,
            Redir::Ask,
        );
    }
    if importing_slot
        && (c.has_flag(crate::networking::CLIENT_ASKING)
            || cmd_flags & crate::commands::CMD_ASKING != 0)
    {
        if multiple_keys && missing_keys > 0 {
            return (None, slot, Redir::Unstable);
        }
        return (Some(state.myself), slot, Redir::None);
    }
    // READONLY: a replica serves reads of its master's slots.
    let me = state.myself();
    if (c.has_flag(crate::networking::CLIENT_READONLY) || is_pubsubshard)
        && !is_write
        && me.is_slave()
        && me.slaveof == Some(owner)
    {
        return (Some(state.myself), slot, Redir::None);
    }
    if owner != state.myself {
        return (Some(owner), slot, Redir::Moved);
    }
    (Some(owner), slot, Redir::None)
}

/// clusterRedirectClient: the error text of a redirection.
pub fn cluster_redirect_error(
    srv: &Server,
    n: Option<NodeName>,
    slot: u16,
    redir: Redir,
) -> String {
    match redir {
        Redir::CrossSlot => "CROSSSLOT Keys in request don't hash to the same slot".into(),
        Redir::Unstable => "TRYAGAIN Multiple keys request during rehashing of slot".into(),
        Redir::DownState => "CLUSTERDOWN The cluster is down".into(),
        Redir::DownRoState => {
            "CLUSTERDOWN The cluster is down and only accepts read commands".into()
        }
        Redir::DownUnbound => "CLUSTERDOWN Hash slot not served".into(),
        Redir::Moved | Redir::Ask | Redir::None => {
            let state = srv.cluster.as_deref();
            let node = state.and_then(|s| n.and_then(|n| s.nodes.get(&n)));
            let (endpoint, port) = match node {
                Some(node) => (preferred_endpoint(srv, node), node.port),
                None => ("?".to_string(), 0),
            };
            format!(
                "{} {} {}:{}",
                if redir == Redir::Ask { "ASK" } else { "MOVED" },
                slot,
                endpoint,
                port
            )
        }
    }
}

/// getPreferredEndpoint: the ip, the hostname ("?" if none), or "?".
pub fn preferred_endpoint(srv: &Server, node: &ClusterNode) -> String {
    match srv.config.cluster_preferred_endpoint_type {
        1 => {
            if node.hostname.is_empty() {
                "?".into()
            } else {
                node.hostname.clone()
            }
        }
        2 => "?".into(),
        _ => node.ip.clone(),
    }
}

/// processCommand's cluster step: true when the command was redirected
/// (the reply is written, the command must not run). Not for our master's
/// stream nor for commands without keys (EXEC is judged by its queue).
pub fn cluster_redirect_if_needed(
    srv: &mut Server,
    c: &mut Client,
    cmd_id: crate::commands::CmdId,
) -> bool {
    if srv.cluster.is_none() || c.has_flag(crate::networking::CLIENT_MASTER) {
        return false;
    }
    let cmd = srv.commands.get(cmd_id);
    let fullname = cmd.fullname;
    // Redis skips commands with no key spec at all (NOT_KEY specs count:
    // SPUBLISH is routed) and without movable keys; EXEC is judged by
    // its queue.
    if fullname != "exec"
        && !crate::commands::does_command_have_keys(cmd)
        && crate::commands::meta_of(cmd).key_specs.is_empty()
    {
        return false;
    }
    let (n, slot, redir) = get_node_by_query(srv, c, cmd_id);
    let myself = srv.cluster.as_ref().map(|s| s.myself);
    if n.is_some() && n == myself {
        return false;
    }
    let msg = cluster_redirect_error(srv, n, slot, redir);
    if fullname == "exec" {
        // The transaction is dropped and the redirection is EXEC's reply.
        crate::multi::discard_transaction(srv, c);
        c.add_reply_error(&msg);
        srv.note_errors(c);
        srv.commands.get_mut(cmd_id).stats.rejected_calls += 1;
    } else {
        crate::server::reject_command(srv, c, Some(cmd_id), msg.as_bytes());
    }
    true
}
