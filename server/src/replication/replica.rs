//! The replica side of replication: see mod.rs.
