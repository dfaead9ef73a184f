//! Helpers shared by the cluster tests (cluster.rs, cluster_failover.rs):
//! starting a node with its own bus port and nodes.conf, and reading
//! replies as text.

use super::{free_port, temp_path, Process, RealRedis, Server};

/// The node timeout of the test clusters: short, so that a failover takes
/// seconds (Redis's delays are multiples of it or fixed), yet long enough
/// that a loaded machine does not fail masters over spuriously (at 2000 ms
/// on a machine running two test suites at once, it did).
pub const NODE_TIMEOUT: &str = "5000";

/// One node: its process, its bus port (given with --cluster-port, as a
/// free client port + 10000 may not fit in 16 bits) and its nodes.conf.
pub struct Node {
    pub p: Process,
    pub bus: u16,
    pub conf: String,
}

/// Start a cluster node, a real redis-server when `real` (None when it is
/// not installed). `conf` and `bus` restart a node from its nodes.conf on
/// its bus port; by default it gets a fresh nodes.conf and a free port.
pub fn start_node(real: bool, conf: Option<&str>, bus: Option<u16>) -> Option<Node> {
    let bus = bus.unwrap_or_else(free_port);
    let conf = conf.map(str::to_string).unwrap_or_else(|| {
        temp_path("nodes")
            .with_extension("conf")
            .to_string_lossy()
            .into_owned()
    });
    let bus_s = bus.to_string();
    let args = [
        "--cluster-enabled",
        "yes",
        "--cluster-port",
        &bus_s,
        "--cluster-node-timeout",
        NODE_TIMEOUT,
        "--cluster-config-file",
        &conf,
    ];
    let p = if real {
        RealRedis::start_with(&args)?
    } else {
        Server::start_with(&args)
    };
    Some(Node { p, bus, conf })
}

pub fn text(reply: &[u8]) -> String {
    String::from_utf8_lossy(reply).into_owned()
}

/// The payload of a bulk or verbatim reply (`$N\r\n...\r\n`), as text.
pub fn bulk_text(reply: &[u8]) -> String {
    let s = text(reply);
    let body = s.split_once("\r\n").map_or("", |(_, b)| b);
    body.strip_suffix("\r\n").unwrap_or(body).to_string()
}
