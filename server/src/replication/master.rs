//! The master side of replication: see mod.rs.
