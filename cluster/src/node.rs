//! What the bus and nodes.conf both say about a node: its 40-byte name and
//! its flag bits.
//!
//! A node's name (its "node ID") is 40 lowercase hex characters, chosen at
//! random when the node first starts and kept in nodes.conf for life. On the
//! wire it is 40 raw bytes with no terminator; a node that is a master sends
//! 40 zero bytes as its `slaveof`.
//!
//! The flags are `node->flags` in Redis. The same `u16` travels in every bus
//! header (the sender's own flags) and in every gossip entry (what the sender
//! believes about a third node), and nodes.conf spells them out as words.
//!
//! redis: cluster.h CLUSTER_NODE_*, cluster.c verifyClusterNodeId,
//! redisNodeFlagsTable, representClusterNodeFlags.

use std::fmt;

/// CLUSTER_NAMELEN: a node ID is a SHA1-sized hex string.
pub const CLUSTER_NAMELEN: usize = 40;

/// CLUSTER_NODE_MASTER: the node is a master.
pub const CLUSTER_NODE_MASTER: u16 = 1;
/// CLUSTER_NODE_SLAVE: the node is a replica.
pub const CLUSTER_NODE_SLAVE: u16 = 2;
/// CLUSTER_NODE_PFAIL: this node's view: no PONG within node timeout
/// ("fail?" in CLUSTER NODES). Needs other masters' reports to become FAIL.
pub const CLUSTER_NODE_PFAIL: u16 = 4;
/// CLUSTER_NODE_FAIL: a majority of masters agreed the node is down.
pub const CLUSTER_NODE_FAIL: u16 = 8;
/// CLUSTER_NODE_MYSELF: this entry is the node itself.
pub const CLUSTER_NODE_MYSELF: u16 = 16;
/// CLUSTER_NODE_HANDSHAKE: met, but no first PONG yet (the name is random).
pub const CLUSTER_NODE_HANDSHAKE: u16 = 32;
/// CLUSTER_NODE_NOADDR: the node's address is unknown.
pub const CLUSTER_NODE_NOADDR: u16 = 64;
/// CLUSTER_NODE_MEET: send a MEET, not a PING, when connecting to it.
pub const CLUSTER_NODE_MEET: u16 = 128;
/// CLUSTER_NODE_MIGRATE_TO: master eligible for replica migration.
pub const CLUSTER_NODE_MIGRATE_TO: u16 = 256;
/// CLUSTER_NODE_NOFAILOVER: a replica that will not try to fail over.
pub const CLUSTER_NODE_NOFAILOVER: u16 = 512;

/// The words of nodes.conf / CLUSTER NODES, in the order Redis writes them
/// (redis: redisNodeFlagsTable). MEET and MIGRATE_TO are never written.
pub const NODE_FLAG_NAMES: [(u16, &str); 8] = [
    (CLUSTER_NODE_MYSELF, "myself"),
    (CLUSTER_NODE_MASTER, "master"),
    (CLUSTER_NODE_SLAVE, "slave"),
    (CLUSTER_NODE_PFAIL, "fail?"),
    (CLUSTER_NODE_FAIL, "fail"),
    (CLUSTER_NODE_HANDSHAKE, "handshake"),
    (CLUSTER_NODE_NOADDR, "noaddr"),
    (CLUSTER_NODE_NOFAILOVER, "nofailover"),
];

/// `flags` as nodes.conf writes them: `myself,master`, or `noflags` when no
/// written flag is set (redis: representClusterNodeFlags).
pub fn represent_cluster_node_flags(flags: u16) -> String {
    let words: Vec<&str> = NODE_FLAG_NAMES
        .iter()
        .filter(|(bit, _)| flags & bit != 0)
        .map(|&(_, name)| name)
        .collect();
    if words.is_empty() {
        "noflags".to_string()
    } else {
        words.join(",")
    }
}

/// A node name as it travels: 40 bytes, normally lowercase hex. Bytes from
/// a peer are kept as they came (a hostile peer may send anything); use
/// [`NodeName::is_valid`] before trusting one as an ID.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeName(pub [u8; CLUSTER_NAMELEN]);

impl NodeName {
    /// The 40 zero bytes a master sends as its `slaveof`
    /// (CLUSTER_NODE_NULL_NAME).
    pub const NULL: NodeName = NodeName([0; CLUSTER_NAMELEN]);

    /// A name from its text form; `None` unless it is exactly 40 bytes of
    /// `[a-z0-9]` (redis: verifyClusterNodeId).
    pub fn parse(text: &[u8]) -> Option<NodeName> {
        if !verify_cluster_node_id(text) {
            return None;
        }
        let mut name = [0; CLUSTER_NAMELEN];
        name.copy_from_slice(text);
        Some(NodeName(name))
    }

    /// A fresh random name, 40 hex characters (redis: getRandomHexChars),
    /// from the caller's random bytes so that this crate stays free of a
    /// random number generator.
    pub fn from_random(random: [u8; 20]) -> NodeName {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut name = [0; CLUSTER_NAMELEN];
        for (i, byte) in random.iter().enumerate() {
            name[2 * i] = HEX[(byte >> 4) as usize];
            name[2 * i + 1] = HEX[(byte & 0xF) as usize];
        }
        NodeName(name)
    }

    /// The raw 40 bytes.
    pub fn as_bytes(&self) -> &[u8; CLUSTER_NAMELEN] {
        &self.0
    }

    /// True for the all-zero name (a master's `slaveof`).
    pub fn is_null(&self) -> bool {
        self.0 == [0; CLUSTER_NAMELEN]
    }

    /// True when the bytes are a valid node ID (40 of `[a-z0-9]`).
    pub fn is_valid(&self) -> bool {
        verify_cluster_node_id(&self.0)
    }
}

/// Exactly 40 bytes of `[a-z0-9]` (redis: verifyClusterNodeId). Note that
/// Redis accepts any lowercase letter, not only `a-f`.
pub fn verify_cluster_node_id(name: &[u8]) -> bool {
    name.len() == CLUSTER_NAMELEN
        && name
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

/// The name as text; any byte that is not printable ASCII shows as `\xHH`.
impl fmt::Display for NodeName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for &b in &self.0 {
            if b.is_ascii_graphic() {
                write!(f, "{}", b as char)?;
            } else {
                write!(f, "\\x{b:02x}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Debug for NodeName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_null() {
            write!(f, "NodeName(NULL)")
        } else {
            write!(f, "NodeName({self})")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_id_must_be_40_lowercase_alphanumerics() {
        let good = b"e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca";
        assert!(NodeName::parse(good).is_some());
        assert!(NodeName::parse(&good[..39]).is_none());
        assert!(NodeName::parse(b"E7D1EECCE10FD6BB5EB35B9F99A514335D9BA9CA").is_none());
        // verifyClusterNodeId takes any lowercase letter.
        assert!(NodeName::parse(b"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz").is_some());
        assert!(NodeName::parse(b"e7d1eecce10fd6bb5eb35b9f99a514335d9ba9c-").is_none());
    }

    #[test]
    fn flags_are_written_in_redis_table_order() {
        assert_eq!(
            represent_cluster_node_flags(CLUSTER_NODE_MASTER | CLUSTER_NODE_MYSELF),
            "myself,master"
        );
        assert_eq!(
            represent_cluster_node_flags(
                CLUSTER_NODE_FAIL | CLUSTER_NODE_SLAVE | CLUSTER_NODE_NOADDR
            ),
            "slave,fail,noaddr"
        );
        assert_eq!(represent_cluster_node_flags(0), "noflags");
        // Flags nodes.conf never shows do not count as flags there.
        assert_eq!(represent_cluster_node_flags(CLUSTER_NODE_MEET), "noflags");
    }

    #[test]
    fn random_names_are_valid_ids() {
        let name = NodeName::from_random([0xAB; 20]);
        assert!(name.is_valid());
        assert_eq!(&name.0[..4], b"abab");
        assert_eq!(format!("{:?}", NodeName::NULL), "NodeName(NULL)");
    }
}
