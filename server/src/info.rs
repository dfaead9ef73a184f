//! INFO (Redis's server.c genRedisInfoString). TEMPORARY stub.
use crate::networking::Client;
use crate::server::Server;
pub fn info_command(_srv: &mut Server, c: &mut Client) {
    c.add_reply_bulk(b"# Server\r\nredis_version:7.0.15\r\n");
}
