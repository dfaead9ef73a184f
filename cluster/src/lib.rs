//! Redis Cluster's pure formats: the cluster bus codec, hash slots and
//! nodes.conf, exactly as Redis 7.0.15 has them.
//!
//! This crate is the foundation the cluster is built on (issue 15). Like
//! `protocol`, it is pure: bytes and text in, data out, and back. It opens no
//! socket, reads no clock, touches no file, and knows nothing of the
//! server's types, so every rule is testable on bytes, and the bytes are
//! checked against a real Redis 7.0.15 (see `tests/`).
//!
//! | module      | job                                                  | redis |
//! |-------------|------------------------------------------------------|-------|
//! | `slots`     | CRC16, key -> slot with `{hash tags}`, the slot bitmap | cluster.c keyHashSlot, bitmap*; crc16.c |
//! | `node`      | node names (IDs) and CLUSTER_NODE_* flags             | cluster.h, cluster.c verifyClusterNodeId, representClusterNodeFlags |
//! | `bus`       | the `clusterMsg` codec: framing, validation, encode   | cluster.h clusterMsg; cluster.c clusterReadHandler, clusterProcessPacket's checks, clusterSend* |
//! | `nodes_conf`| nodes.conf and CLUSTER NODES lines, the `vars` line   | cluster.c clusterLoadConfig, clusterGenNodeDescription, clusterSaveConfig |
//!
//! # What the server adds on top (not here)
//!
//! The next engineer builds `server/src/cluster.rs` (~ cluster.c) on this:
//!
//! * **The bus port.** A mio listener on `cluster-port` (default port +
//!   10000) and one outbound link per known node. Per link: append what
//!   arrives to a receive buffer, ask [`bus::frame_len`] for the packet's
//!   length once 8 bytes are in (an error closes the link), and when
//!   `totlen` bytes are there hand exactly them to [`bus::decode`]; an
//!   error that does not [`bus::BusError::closes_link`] just drops that
//!   packet. Grow the buffer by what arrives, never by what `totlen` claims.
//!   Outgoing: [`bus::ClusterMsg::new`] + `encode_into` the link's send
//!   buffer.
//! * **The node table** (`clusterState`): nodes by name, `slots[16384]` ->
//!   owner, `migrating_slots_to` / `importing_slots_from`, currentEpoch,
//!   lastVoteEpoch; loaded from and saved to nodes.conf with
//!   [`nodes_conf`] (Redis saves it on every change, in place, with fsync
//!   where it matters; see clusterSaveConfig). The `myself` line's flags
//!   and `[slot->-id]` entries come from here.
//! * **The handshake and gossip** (clusterProcessPacket's actions,
//!   clusterProcessGossipSection, clusterCron): MEET on CLUSTER MEET,
//!   renaming a handshake node on its first PONG, a PING every second to a
//!   random node, gossip of ~1/10 of the nodes plus all PFAIL ones.
//! * **Failure detection**: PFAIL after `cluster-node-timeout` without a
//!   PONG, failure reports from gossip, FAIL when a majority of masters
//!   report it (markNodeAsFailingIfNeeded), FAIL broadcast.
//! * **Epochs and slot ownership**: clusterUpdateSlotsConfigWith, UPDATE
//!   messages to stale claimers, configEpoch collision handling.
//! * **Failover** (after replication exists): the replica's election delay,
//!   FAILOVER_AUTH_REQUEST/ACK voting, manual failover with MFSTART and
//!   PAUSED, replica migration.
//! * **Routing and commands**: [`slots::key_hash_slot`] for every key of a
//!   command, -MOVED/-ASK/-CROSSSLOT/-TRYAGAIN/-CLUSTERDOWN, the CLUSTER
//!   subcommands (CLUSTER NODES is [`nodes_conf::NodeLine::format`] per
//!   node), keys indexed by slot.
//!
//! Every Redis-facing fact here was read from Redis 7.0.15's cluster.h and
//! cluster.c and checked against a real `redis-server`: fixtures captured
//! from a live 3-node cluster (`scripts/capture-cluster-bus.py`) decode and
//! re-encode byte for byte, and `tests/real_redis.rs` MEETs a real node with
//! packets from this codec and reads its PONGs.

pub mod bus;
pub mod node;
pub mod nodes_conf;
pub mod slots;

pub use bus::{decode, frame_len, BusError, ClusterMsg, MsgBody, MsgHeader};
pub use node::NodeName;
pub use slots::{key_hash_slot, SlotBitmap, CLUSTER_SLOTS};
