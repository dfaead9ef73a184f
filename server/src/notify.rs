//! Keyspace notifications (Redis's notify.c).
//!
//! Every command that changes a key calls `notify_keyspace_event` with a
//! class (NOTIFY_STRING, NOTIFY_LIST, ...), an event name ("lpush", "del",
//! "expired") and the key. If `notify-keyspace-events` enables that class,
//! the event goes out as ordinary Pub/Sub messages on up to two channels:
//!
//! - `__keyspace@<db>__:<key>`   with the event name as the message (K),
//! - `__keyevent@<db>__:<event>` with the key name as the message (E).
//!
//! The class letters and the string <-> flags parser live in config.rs
//! (`keyspace_events_string_to_flags`); the flags are re-exported here so
//! call sites read `notify::NOTIFY_LIST` as in Redis.
//!
//! The event names and the order in which a command emits them are part of
//! the interface (clients match on them), so each call site mirrors the
//! `notifyKeyspaceEvent` call of the Redis function named above it. Three
//! classes are not about one command's type:
//! - `x` "expired": lazy expiry (db.rs delete_expired_key) and the active
//!   cycle (expire.rs active_expire_cycle);
//! - `m` "keymiss": a read lookup that found nothing (lookupKeyRead);
//! - `n` "new": dbAdd put a key that did not exist into the keyspace.
//!
//! Neither `m` nor `n` is part of `A`: they are noisy and must be asked for.

pub use crate::config::{
    NOTIFY_ALL, NOTIFY_EVICTED, NOTIFY_EXPIRED, NOTIFY_GENERIC, NOTIFY_HASH, NOTIFY_KEYEVENT,
    NOTIFY_KEYSPACE, NOTIFY_KEY_MISS, NOTIFY_LIST, NOTIFY_NEW, NOTIFY_SET, NOTIFY_STREAM,
    NOTIFY_STRING, NOTIFY_ZSET,
};
use crate::server::Server;

/// notifyKeyspaceEvent: publish `event` about `key` in `dbid` on the
/// keyspace and keyevent channels, if `notify-keyspace-events` asks for it.
///
/// `type` is the event's class (one NOTIFY_* bit). Nothing is built unless
/// that class is enabled: this runs on every write, and with notifications
/// off (the default) it must cost one bit test.
pub fn notify_keyspace_event(srv: &mut Server, r#type: i32, event: &str, key: &[u8], dbid: usize) {
    let flags = srv.config.notify_keyspace_events;
    // If notifications for this class of events are off, return ASAP.
    if flags & r#type == 0 {
        return;
    }

    // __keyspace@<db>__:<key> <event>
    if flags & NOTIFY_KEYSPACE != 0 {
        let channel = keyspace_channel(b"__keyspace@", dbid, key);
        crate::pubsub::pubsub_publish_message(srv, &channel, event.as_bytes());
    }

    // __keyevent@<db>__:<event> <key>
    if flags & NOTIFY_KEYEVENT != 0 {
        let channel = keyspace_channel(b"__keyevent@", dbid, event.as_bytes());
        crate::pubsub::pubsub_publish_message(srv, &channel, key);
    }
}

/// `<prefix><dbid>__:<suffix>`, e.g. `__keyspace@0__:mykey`.
fn keyspace_channel(prefix: &[u8], dbid: usize, suffix: &[u8]) -> Vec<u8> {
    let db = dbid.to_string();
    let mut chan = Vec::with_capacity(prefix.len() + db.len() + 3 + suffix.len());
    chan.extend_from_slice(prefix);
    chan.extend_from_slice(db.as_bytes());
    chan.extend_from_slice(b"__:");
    chan.extend_from_slice(suffix);
    chan
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channel_names_follow_notify_c() {
        assert_eq!(
            keyspace_channel(b"__keyspace@", 0, b"k"),
            b"__keyspace@0__:k"
        );
        assert_eq!(
            keyspace_channel(b"__keyevent@", 15, b"del"),
            b"__keyevent@15__:del"
        );
    }
}
