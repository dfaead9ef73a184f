//! Pub/Sub (redis: pubsub.c). SKELETON: being written now.

use crate::server::Server;

/// pubsubPublishMessage: deliver `message` to every client subscribed to
/// `channel` or to a pattern matching it; returns the number of receivers.
pub fn pubsub_publish_message(_srv: &mut Server, _channel: &[u8], _message: &[u8]) -> usize {
    0
}
