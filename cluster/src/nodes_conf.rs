//! nodes.conf and CLUSTER NODES: one text line per known node.
//!
//! A cluster node keeps its view of the cluster in `cluster-config-file`
//! (nodes.conf), rewritten on every change. Its node lines are exactly the
//! lines of CLUSTER NODES (both come from clusterGenNodeDescription), and a
//! `vars` line records the two epochs:
//!
//! ```text
//! 292f8b36... 127.0.0.1:30001@40001,node-a myself,master - 0 1700000000000 1 connected 0-5460 [42->-e7d1eecc...]
//! e7d1eecc... 127.0.0.1:30002@40002 slave 292f8b36... 0 1700000001000 1 connected
//! vars currentEpoch 3 lastVoteEpoch 0
//! ```
//!
//! The fields of a node line, in order:
//!
//! 1. node ID (40 characters of `[a-z0-9]`)
//! 2. `ip:port@cport` and, when the node announces one, `,hostname`. The IP
//!    is written bare, so an IPv6 address is split at its last `:`. Files
//!    from before Redis 4 have no `@cport`: it is then port + 10000.
//! 3. flags: `myself`, `master`, `slave`, `fail?`, `fail`, `handshake`,
//!    `noaddr`, `nofailover`, comma-separated, or `noflags`
//! 4. the master's ID for a replica, `-` for a master
//! 5. ping sent, 6. pong received: milliseconds (Unix time), 0 for none.
//!    Redis reads both back only as "zero or not" (non-zero becomes now).
//! 7. config epoch (a replica's line shows its master's; on load Redis sets
//!    a replica's to 0)
//! 8. link state, `connected` or `disconnected` (ignored on load)
//! 9. the slots served: single slots and `start-end` ranges, then, on the
//!    `myself` line only, `[slot->-id]` for a slot being migrated to node
//!    `id` and `[slot-<-id]` for one being imported from it.
//!
//! Lines are split the way Redis splits them (sds.c sdssplitargs, so quotes
//! work), flag words and `vars` names are matched case-insensitively, blank
//! lines are skipped and unknown `vars` are skipped (Redis logs them).
//!
//! Where Redis is lenient by accident this parser is strict, and says so:
//! Redis reads numbers with `atoi`, so `"12abc"` is 12 and `""` is 0, and
//! copies the IP into a 46-byte buffer without checking its length; here a
//! malformed number, an out-of-range port and an overlong IP are errors. A
//! file Redis wrote never has any of them. Where Redis would crash or exit
//! (an unknown flag, two `myself` lines, none at all, a `[` entry without
//! `-`) this returns an error; what the server does then (Redis: log
//! "Unrecoverable error: corrupted cluster config file." and exit) is its
//! business.
//!
//! redis: cluster.c clusterLoadConfig, clusterSaveConfig,
//! clusterGenNodeDescription, clusterGenNodesDescription,
//! representSlotInfo.

use std::collections::BTreeMap;
use std::fmt;

use bytes::Bytes;

use crate::bus::NET_IP_STR_LEN;
use crate::node::{
    represent_cluster_node_flags, verify_cluster_node_id, NodeName, CLUSTER_NODE_MYSELF,
    NODE_FLAG_NAMES,
};
use crate::slots::{SlotBitmap, CLUSTER_SLOTS};

/// CLUSTER_PORT_INCR: the bus port is the client port + 10000 unless
/// `cluster-port` says otherwise; also the default for old lines without
/// `@cport`.
pub const CLUSTER_PORT_INCR: u32 = 10000;

/// One node line of nodes.conf or CLUSTER NODES.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeLine {
    pub name: NodeName,
    /// The node's IP as text, empty when unknown (`noaddr`).
    pub ip: String,
    pub port: u16,
    pub cport: u16,
    /// `cluster-announce-hostname`, empty when none.
    pub hostname: String,
    /// CLUSTER_NODE_* bits; only those with a word in
    /// [`NODE_FLAG_NAMES`] are written.
    pub flags: u16,
    /// The master's name, for a replica.
    pub master: Option<NodeName>,
    pub ping_sent: i64,
    pub pong_received: i64,
    pub config_epoch: u64,
    /// Link state: `connected` (true) or `disconnected`.
    pub connected: bool,
    pub slots: SlotBitmap,
    /// `[slot->-id]`: slots this node is migrating to `id`.
    pub migrating: BTreeMap<u16, NodeName>,
    /// `[slot-<-id]`: slots this node is importing from `id`.
    pub importing: BTreeMap<u16, NodeName>,
}

/// A whole nodes.conf: its node lines in file order and its `vars`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct NodesConf {
    pub nodes: Vec<NodeLine>,
    /// `vars currentEpoch N` (0 if the file has no vars line). On load Redis
    /// also raises it to the largest config epoch of any node.
    pub current_epoch: u64,
    /// `vars lastVoteEpoch N`: the epoch of this master's last vote.
    pub last_vote_epoch: u64,
    /// Names of `vars` Redis does not know, skipped (Redis logs
    /// "Skipping unknown cluster config variable").
    pub skipped_vars: Vec<String>,
}

/// A line nodes.conf cannot hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfError {
    /// 1-based line number in the file (0 for a single parsed line, or for
    /// the whole-file check that one node is `myself`).
    pub line: usize,
    pub reason: &'static str,
}

impl fmt::Display for ConfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Unrecoverable error: corrupted cluster config file. (line {}: {})",
            self.line, self.reason
        )
    }
}

impl std::error::Error for ConfError {}

fn err(reason: &'static str) -> ConfError {
    ConfError { line: 0, reason }
}

impl NodeLine {
    /// A node at `ip:port@cport` with no flags, master, times, epoch or
    /// slots: fill in the rest.
    pub fn new(name: NodeName, ip: &str, port: u16, cport: u16) -> NodeLine {
        NodeLine {
            name,
            ip: ip.to_string(),
            port,
            cport,
            hostname: String::new(),
            flags: 0,
            master: None,
            ping_sent: 0,
            pong_received: 0,
            config_epoch: 0,
            connected: false,
            slots: SlotBitmap::new(),
            migrating: BTreeMap::new(),
            importing: BTreeMap::new(),
        }
    }

    /// Parse one node line (as CLUSTER NODES prints it, or from nodes.conf).
    pub fn parse(line: &str) -> Result<NodeLine, ConfError> {
        let argv = split_line(line.as_bytes()).ok_or(err("unbalanced quotes"))?;
        let argv = args_to_strings(&argv)?;
        NodeLine::parse_args(&argv)
    }

    /// Parse the arguments of one node line, as split by sdssplitargs
    /// (redis: the per-node part of clusterLoadConfig).
    pub fn parse_args(argv: &[String]) -> Result<NodeLine, ConfError> {
        if argv.len() < 8 {
            return Err(err("a node line has at least eight fields"));
        }
        let name = NodeName::parse(argv[0].as_bytes()).ok_or(err("bad node ID"))?;

        // ip:port[@cport][,hostname]: the hostname after the first comma,
        // the port after the last colon (IPv6 addresses are written bare).
        let (address, hostname) = match argv[1].split_once(',') {
            Some((address, hostname)) => (address, hostname),
            None => (argv[1].as_str(), ""),
        };
        let (ip, ports) = address
            .rsplit_once(':')
            .ok_or(err("address has no ':port'"))?;
        if ip.len() >= NET_IP_STR_LEN {
            return Err(err("IP address too long"));
        }
        let (port, cport) = match ports.split_once('@') {
            Some((port, cport)) => (parse_port(port)?, parse_port(cport)?),
            None => {
                // Lines from before the cluster port was configurable.
                let port = parse_port(ports)?;
                let cport = u16::try_from(port as u32 + CLUSTER_PORT_INCR)
                    .map_err(|_| err("port + 10000 is not a port"))?;
                (port, cport)
            }
        };

        let mut flags = 0;
        for word in argv[2].split(',') {
            if word.eq_ignore_ascii_case("noflags") {
                continue;
            }
            let bit = NODE_FLAG_NAMES
                .iter()
                .find(|(_, w)| word.eq_ignore_ascii_case(w))
                .map(|&(bit, _)| bit)
                .ok_or(err("Unknown flag in redis cluster config file"))?;
            flags |= bit;
        }

        // Anything starting with '-' means "no master".
        let master = if argv[3].starts_with('-') {
            None
        } else {
            Some(NodeName::parse(argv[3].as_bytes()).ok_or(err("bad master node ID"))?)
        };

        let mut node = NodeLine {
            name,
            ip: ip.to_string(),
            port,
            cport,
            hostname: hostname.to_string(),
            flags,
            master,
            ping_sent: argv[4].parse().map_err(|_| err("bad ping-sent time"))?,
            pong_received: argv[5].parse().map_err(|_| err("bad pong-received time"))?,
            config_epoch: argv[6].parse().map_err(|_| err("bad config epoch"))?,
            connected: argv[7] == "connected",
            slots: SlotBitmap::new(),
            migrating: BTreeMap::new(),
            importing: BTreeMap::new(),
        };
        for arg in &argv[8..] {
            node.parse_slot_arg(arg)?;
        }
        Ok(node)
    }

    /// One slot field: `N`, `start-end`, `[N->-id]` or `[N-<-id]`.
    fn parse_slot_arg(&mut self, arg: &str) -> Result<(), ConfError> {
        if let Some(inner) = arg.strip_prefix('[') {
            // Redis reads the direction as the character after the first
            // '-': '>' is migrating, anything else importing. Then it skips
            // "->-" / "-<-" and takes the ID up to ']'.
            let dash = inner
                .find('-')
                .ok_or(err("slot migration entry without '-'"))?;
            let slot = parse_slot(&inner[..dash])?;
            let direction = inner.as_bytes().get(dash + 1).copied();
            let rest = inner
                .get(dash + 3..)
                .ok_or(err("truncated slot migration entry"))?;
            let close = rest
                .find(']')
                .ok_or(err("slot migration entry without ']'"))?;
            let id = &rest.as_bytes()[..close];
            if !verify_cluster_node_id(id) {
                return Err(err("bad node ID in slot migration entry"));
            }
            let id = NodeName::parse(id).expect("verified above");
            if direction == Some(b'>') {
                self.migrating.insert(slot, id);
            } else {
                self.importing.insert(slot, id);
            }
        } else if let Some((start, end)) = arg.split_once('-') {
            let (start, end) = (parse_slot(start)?, parse_slot(end)?);
            // Redis loops `while (start <= stop)`: a reversed range is empty.
            if start <= end {
                self.slots.set_range(start, end);
            }
        } else {
            self.slots.set(parse_slot(arg)?);
        }
        Ok(())
    }

    /// The line, without its newline (redis: clusterGenNodeDescription with
    /// the client port Redis uses for nodes.conf).
    pub fn format(&self) -> String {
        let mut s = String::with_capacity(128);
        s.push_str(&self.name.to_string());
        s.push(' ');
        s.push_str(&format!("{}:{}@{}", self.ip, self.port, self.cport));
        if !self.hostname.is_empty() {
            s.push(',');
            s.push_str(&self.hostname);
        }
        s.push(' ');
        s.push_str(&represent_cluster_node_flags(self.flags));
        s.push(' ');
        match &self.master {
            Some(master) => s.push_str(&master.to_string()),
            None => s.push('-'),
        }
        let link = if self.connected {
            "connected"
        } else {
            "disconnected"
        };
        s.push_str(&format!(
            " {} {} {} {}",
            self.ping_sent, self.pong_received, self.config_epoch, link
        ));
        s.push_str(&represent_slot_info(&self.slots));
        // One entry per slot in slot order; a slot both migrating and
        // importing shows as migrating, as Redis writes it.
        let mut entries: BTreeMap<u16, String> = BTreeMap::new();
        for (slot, id) in &self.importing {
            entries.insert(*slot, format!(" [{slot}-<-{id}]"));
        }
        for (slot, id) in &self.migrating {
            entries.insert(*slot, format!(" [{slot}->-{id}]"));
        }
        for entry in entries.values() {
            s.push_str(entry);
        }
        s
    }

    /// True for the line describing the node itself.
    pub fn is_myself(&self) -> bool {
        self.flags & CLUSTER_NODE_MYSELF != 0
    }
}

/// The slot ranges of a line: ` 0-5460 5462` (redis: representSlotInfo).
pub fn represent_slot_info(slots: &SlotBitmap) -> String {
    let mut s = String::new();
    for (start, end) in slots.ranges() {
        if start == end {
            s.push_str(&format!(" {start}"));
        } else {
            s.push_str(&format!(" {start}-{end}"));
        }
    }
    s
}

/// CLUSTER NODES text: every line followed by `\n`
/// (redis: clusterGenNodesDescription).
pub fn format_cluster_nodes(nodes: &[NodeLine]) -> String {
    let mut s = String::new();
    for node in nodes {
        s.push_str(&node.format());
        s.push('\n');
    }
    s
}

/// The node lines of a CLUSTER NODES reply, in order.
pub fn parse_cluster_nodes(text: &str) -> Result<Vec<NodeLine>, ConfError> {
    let mut nodes = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.is_empty() {
            continue;
        }
        let node = NodeLine::parse(line).map_err(|e| ConfError { line: i + 1, ..e })?;
        nodes.push(node);
    }
    Ok(nodes)
}

impl NodesConf {
    /// Parse a whole nodes.conf (redis: clusterLoadConfig, minus building
    /// the node table). A zero-length file has no nodes: Redis treats it as
    /// "no config yet" (it creates one empty to lock it) and starts afresh.
    /// Any other file must describe `myself`, blank lines alone included.
    pub fn parse(file: &[u8]) -> Result<NodesConf, ConfError> {
        let mut conf = NodesConf::default();
        if file.is_empty() {
            return Ok(conf);
        }
        let mut myself_seen = false;
        for (i, line) in file.split(|&b| b == b'\n').enumerate() {
            let line_err = |reason| ConfError {
                line: i + 1,
                reason,
            };
            // fgets hands Redis the line as a C string: a NUL ends it.
            let line = match line.iter().position(|&b| b == 0) {
                Some(nul) => &line[..nul],
                None => line,
            };
            // Blank lines are skipped (Redis pads a shrunk file with '\n').
            if line.is_empty() {
                continue;
            }
            let argv = split_line(line).ok_or(line_err("unbalanced quotes"))?;
            let argv = args_to_strings(&argv).map_err(|e| line_err(e.reason))?;
            let Some(first) = argv.first() else {
                // A line of blanks: Redis would index an empty argv.
                return Err(line_err("a line of blanks"));
            };
            if first.eq_ignore_ascii_case("vars") {
                if argv.len() % 2 == 0 {
                    return Err(line_err("vars line needs name/value pairs"));
                }
                for pair in argv[1..].chunks_exact(2) {
                    let (var, value) = (&pair[0], &pair[1]);
                    if var.eq_ignore_ascii_case("currentEpoch") {
                        conf.current_epoch =
                            value.parse().map_err(|_| line_err("bad currentEpoch"))?;
                    } else if var.eq_ignore_ascii_case("lastVoteEpoch") {
                        conf.last_vote_epoch =
                            value.parse().map_err(|_| line_err("bad lastVoteEpoch"))?;
                    } else {
                        conf.skipped_vars.push(var.clone());
                    }
                }
                continue;
            }
            let node = NodeLine::parse_args(&argv).map_err(|e| line_err(e.reason))?;
            if node.is_myself() {
                if myself_seen {
                    return Err(line_err("two nodes flagged myself"));
                }
                myself_seen = true;
            }
            conf.nodes.push(node);
        }
        if !myself_seen {
            return Err(err("no node is flagged myself"));
        }
        Ok(conf)
    }

    /// The file's content: every node line, then the vars line
    /// (redis: clusterSaveConfig). Redis leaves nodes in handshake out of
    /// the file; that choice is the caller's, by what it puts in `nodes`.
    pub fn format(&self) -> String {
        let mut s = format_cluster_nodes(&self.nodes);
        s.push_str(&format!(
            "vars currentEpoch {} lastVoteEpoch {}\n",
            self.current_epoch, self.last_vote_epoch
        ));
        s
    }
}

/// Split a line as Redis does (sds.c sdssplitargs); `None` on unbalanced
/// quotes.
fn split_line(line: &[u8]) -> Option<Vec<Bytes>> {
    protocol::request::sdssplitargs(&Bytes::copy_from_slice(line))
}

/// The arguments as text: every field Redis writes is ASCII.
fn args_to_strings(argv: &[Bytes]) -> Result<Vec<String>, ConfError> {
    argv.iter()
        .map(|a| String::from_utf8(a.to_vec()).map_err(|_| err("field is not UTF-8")))
        .collect()
}

/// A port: 0 to 65535, digits only.
fn parse_port(s: &str) -> Result<u16, ConfError> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(err("bad port"));
    }
    s.parse().map_err(|_| err("bad port"))
}

/// A slot: 0 to 16383, digits only.
fn parse_slot(s: &str) -> Result<u16, ConfError> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(err("bad slot number"));
    }
    match s.parse::<u16>() {
        Ok(slot) if (slot as usize) < CLUSTER_SLOTS => Ok(slot),
        _ => Err(err("slot out of range")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::{CLUSTER_NODE_FAIL, CLUSTER_NODE_MASTER, CLUSTER_NODE_SLAVE};

    const A: &str = "292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f";
    const B: &str = "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca";

    fn line(s: &str) -> NodeLine {
        NodeLine::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn node_line_round_trips_every_field() {
        let text = format!(
            "{A} 127.0.0.1:30001@40001,node-a.example myself,master - 0 1700000000123 7 connected 0-5460 5462 [42->-{B}] [5463-<-{B}]"
        );
        let n = line(&text);
        assert_eq!(n.ip, "127.0.0.1");
        assert_eq!((n.port, n.cport), (30001, 40001));
        assert_eq!(n.hostname, "node-a.example");
        assert_eq!(n.flags, CLUSTER_NODE_MYSELF | CLUSTER_NODE_MASTER);
        assert_eq!(n.master, None);
        assert_eq!(
            (n.ping_sent, n.pong_received, n.config_epoch),
            (0, 1700000000123, 7)
        );
        assert!(n.connected);
        assert_eq!(n.slots.ranges(), vec![(0, 5460), (5462, 5462)]);
        assert_eq!(n.migrating.get(&42).unwrap().to_string(), B);
        assert_eq!(n.importing.get(&5463).unwrap().to_string(), B);
        assert_eq!(n.format(), text);
    }

    #[test]
    fn replica_line_and_noaddr_line() {
        let text = format!(
            "{B} 127.0.0.1:30002@40002 slave,fail {A} 1700000000000 1700000000001 3 disconnected"
        );
        let n = line(&text);
        assert_eq!(n.flags, CLUSTER_NODE_SLAVE | CLUSTER_NODE_FAIL);
        assert_eq!(n.master.unwrap().to_string(), A);
        assert!(!n.connected);
        assert_eq!(n.format(), text);

        let text = format!("{B} :0@0 master,noaddr - 0 0 0 disconnected");
        let n = line(&text);
        assert_eq!(n.ip, "");
        assert_eq!(n.format(), text);
    }

    #[test]
    fn ipv6_address_splits_at_last_colon() {
        let text = format!("{A} ::1:30001@40001 myself,master - 0 0 0 connected");
        let n = line(&text);
        assert_eq!((n.ip.as_str(), n.port, n.cport), ("::1", 30001, 40001));
        assert_eq!(n.format(), text);
    }

    #[test]
    fn old_line_without_cport_gets_port_plus_10000() {
        let n = line(&format!(
            "{A} 127.0.0.1:7000 myself,master - 0 0 0 connected"
        ));
        assert_eq!(n.cport, 17000);
        assert!(n.format().contains("127.0.0.1:7000@17000 "));
    }

    #[test]
    fn flags_are_case_insensitive_and_noflags_is_none() {
        let n = line(&format!("{A} 1.2.3.4:1@2 MYSELF,Master - 0 0 0 connected"));
        assert_eq!(n.flags, CLUSTER_NODE_MYSELF | CLUSTER_NODE_MASTER);
        let n = line(&format!("{A} 1.2.3.4:1@2 noflags - 0 0 0 connected"));
        assert_eq!(n.flags, 0);
        assert!(n.format().contains(" noflags - "));
    }

    #[test]
    fn migrating_wins_over_importing_for_one_slot() {
        let mut n = line(&format!("{A} 1.2.3.4:1@2 myself,master - 0 0 0 connected"));
        let b = NodeName::parse(B.as_bytes()).unwrap();
        n.importing.insert(9, b);
        n.migrating.insert(9, b);
        n.importing.insert(3, b);
        assert!(n.format().ends_with(&format!(" [3-<-{B}] [9->-{B}]")));
    }

    #[test]
    fn bad_lines_are_errors_not_panics() {
        let bad = [
            format!("{A} 1.2.3.4:1@2 myself,master - 0 0 0"), // 7 fields
            format!("{} 1.2.3.4:1@2 master - 0 0 0 connected", &A[..39]),
            format!("{A} 1.2.3.4 master - 0 0 0 connected"),
            format!("{A} 1.2.3.4:99999@2 master - 0 0 0 connected"),
            format!("{A} 1.2.3.4:1@x master - 0 0 0 connected"),
            format!("{A} 1.2.3.4:60000 master - 0 0 0 connected"), // cport > 65535
            format!("{A} {}:1@2 master - 0 0 0 connected", "1".repeat(46)),
            format!("{A} 1.2.3.4:1@2 master,bogus - 0 0 0 connected"),
            format!("{A} 1.2.3.4:1@2 master, - 0 0 0 connected"),
            format!("{A} 1.2.3.4:1@2 slave nothex - 0 0 connected"),
            format!("{A} 1.2.3.4:1@2 master - x 0 0 connected"),
            format!("{A} 1.2.3.4:1@2 master - 0 0 -1 connected"),
            format!("{A} 1.2.3.4:1@2 master - 0 0 0 connected 16384"),
            format!("{A} 1.2.3.4:1@2 master - 0 0 0 connected 0-16384"),
            format!("{A} 1.2.3.4:1@2 master - 0 0 0 connected [1"),
            format!("{A} 1.2.3.4:1@2 master - 0 0 0 connected [1-"),
            format!("{A} 1.2.3.4:1@2 master - 0 0 0 connected [1->-{B}"),
            format!("{A} 1.2.3.4:1@2 master - 0 0 0 connected [1->-abc]"),
            format!("{A} 1.2.3.4:1@2 master - 0 0 0 connected [16384->-{B}]"),
            format!("{A} \"1.2.3.4:1@2 master - 0 0 0 connected"),
        ];
        for text in &bad {
            assert!(NodeLine::parse(text).is_err(), "accepted: {text}");
        }
    }

    #[test]
    fn reversed_range_adds_nothing_as_in_redis() {
        let n = line(&format!("{A} 1.2.3.4:1@2 master - 0 0 0 connected 10-5 7"));
        assert_eq!(n.slots.ranges(), vec![(7, 7)]);
    }

    #[test]
    fn nodes_conf_file_round_trips_with_vars() {
        let file = format!(
            "{B} 127.0.0.1:30002@40002 master - 0 1700000000000 2 connected 5461-10922\n\
             {A} 127.0.0.1:30001@40001 myself,master - 0 0 1 connected 0-5460\n\
             vars currentEpoch 2 lastVoteEpoch 0\n"
        );
        let conf = NodesConf::parse(file.as_bytes()).unwrap();
        assert_eq!(conf.nodes.len(), 2);
        assert_eq!((conf.current_epoch, conf.last_vote_epoch), (2, 0));
        assert_eq!(conf.format(), file);
    }

    #[test]
    fn nodes_conf_padding_blank_lines_and_unknown_vars() {
        let file = format!(
            "VARS lastVoteEpoch 4 shiny 1 currentEpoch 9\n\
             {A} 127.0.0.1:30001@40001 myself,master - 0 0 1 connected\n\n\n\n"
        );
        let conf = NodesConf::parse(file.as_bytes()).unwrap();
        assert_eq!((conf.current_epoch, conf.last_vote_epoch), (9, 4));
        assert_eq!(conf.skipped_vars, vec!["shiny".to_string()]);
        assert_eq!(NodesConf::parse(b"").unwrap(), NodesConf::default());
    }

    #[test]
    fn nodes_conf_needs_exactly_one_myself() {
        let none = format!("{A} 127.0.0.1:30001@40001 master - 0 0 1 connected\n");
        assert!(NodesConf::parse(none.as_bytes()).is_err());
        let two = format!(
            "{A} 127.0.0.1:30001@40001 myself,master - 0 0 1 connected\n\
             {B} 127.0.0.1:30002@40002 myself,master - 0 0 1 connected\n"
        );
        let e = NodesConf::parse(two.as_bytes()).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(NodesConf::parse(b"vars currentEpoch\n").is_err());
        // Non-empty but without myself: Redis's "corrupted" exit too.
        assert!(NodesConf::parse(b"\n\n").is_err());
        assert!(NodesConf::parse(b"vars currentEpoch 1 lastVoteEpoch 0\n").is_err());
        assert!(NodesConf::parse(b"   \n").is_err());
    }

    #[test]
    fn cluster_nodes_text_round_trips() {
        let text = format!(
            "{A} 127.0.0.1:30001@40001 myself,master - 0 0 1 connected 0-16383\n\
             {B} 127.0.0.1:30002@40002 slave {A} 0 1700000000000 1 connected\n"
        );
        let nodes = parse_cluster_nodes(&text).unwrap();
        assert_eq!(format_cluster_nodes(&nodes), text);
    }
}
