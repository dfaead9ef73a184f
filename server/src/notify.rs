//! Keyspace notifications (redis: notify.c). SKELETON: being written now.

pub use crate::config::{
    NOTIFY_ALL, NOTIFY_EVICTED, NOTIFY_EXPIRED, NOTIFY_GENERIC, NOTIFY_HASH, NOTIFY_KEYEVENT,
    NOTIFY_KEYSPACE, NOTIFY_KEY_MISS, NOTIFY_LIST, NOTIFY_NEW, NOTIFY_SET, NOTIFY_STREAM,
    NOTIFY_STRING, NOTIFY_ZSET,
};
use crate::server::Server;

/// notifyKeyspaceEvent: publish `event` about `key` in `dbid` on the
/// keyspace and keyevent channels, if `notify-keyspace-events` asks for it.
pub fn notify_keyspace_event(_srv: &mut Server, _type: i32, _event: &str, _key: &[u8], _dbid: usize) {}
