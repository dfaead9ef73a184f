//! Keyspace notifications (redis: notify.c). SKELETON: being written now.

use crate::server::Server;

pub const NOTIFY_KEYSPACE: u32 = 1 << 0; /* K */
pub const NOTIFY_KEYEVENT: u32 = 1 << 1; /* E */
pub const NOTIFY_GENERIC: u32 = 1 << 2; /* g */
pub const NOTIFY_STRING: u32 = 1 << 3; /* $ */
pub const NOTIFY_LIST: u32 = 1 << 4; /* l */
pub const NOTIFY_SET: u32 = 1 << 5; /* s */
pub const NOTIFY_HASH: u32 = 1 << 6; /* h */
pub const NOTIFY_ZSET: u32 = 1 << 7; /* z */
pub const NOTIFY_EXPIRED: u32 = 1 << 8; /* x */
pub const NOTIFY_EVICTED: u32 = 1 << 9; /* e */
pub const NOTIFY_STREAM: u32 = 1 << 10; /* t */
pub const NOTIFY_KEY_MISS: u32 = 1 << 11; /* m */
pub const NOTIFY_LOADED: u32 = 1 << 12; /* module only key space notification */
pub const NOTIFY_MODULE: u32 = 1 << 13; /* d */
pub const NOTIFY_NEW: u32 = 1 << 14; /* n */

/// notifyKeyspaceEvent: publish `event` about `key` in `dbid` on the
/// keyspace and keyevent channels, if `notify-keyspace-events` asks for it.
pub fn notify_keyspace_event(_srv: &mut Server, _type: u32, _event: &str, _key: &[u8], _dbid: usize) {}
