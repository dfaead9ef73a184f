//! The cluster-only commands of a standalone server (Redis's cluster.c with
//! `cluster-enabled no`): CLUSTER (every subcommand), READONLY, READWRITE
//! and ASKING exist in the command table, with Redis's arity, flags and
//! COMMAND INFO, and each answers that cluster support is disabled. Client
//! libraries and tools send them to probe the server's mode, so the
//! answer must be Redis's, not "unknown command".
//!
//! The cluster bus itself (the `cluster/` crate) is not wired into the
//! server yet; `cluster-enabled yes` is accepted and stored but ignored.

use crate::networking::Client;
use crate::server::Server;

/// The reply of every cluster-only command without cluster mode.
const CLUSTER_DISABLED: &str = "ERR This instance has cluster support disabled";

/// CLUSTER <subcommand> [<arg> ...]
// redis: cluster.c clusterCommand
pub fn cluster_command(_srv: &mut Server, c: &mut Client) {
    c.add_reply_error(CLUSTER_DISABLED);
}

/// READONLY
// redis: cluster.c readonlyCommand
pub fn readonly_command(_srv: &mut Server, c: &mut Client) {
    c.add_reply_error(CLUSTER_DISABLED);
}

/// READWRITE
// redis: cluster.c readwriteCommand
pub fn readwrite_command(_srv: &mut Server, c: &mut Client) {
    c.add_reply_error(CLUSTER_DISABLED);
}

/// ASKING
// redis: cluster.c askingCommand
pub fn asking_command(_srv: &mut Server, c: &mut Client) {
    c.add_reply_error(CLUSTER_DISABLED);
}
