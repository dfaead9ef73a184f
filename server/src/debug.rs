//! DEBUG (Redis's debug.c). TEMPORARY stub.
use crate::networking::Client;
use crate::server::Server;
pub fn debug_command(_srv: &mut Server, c: &mut Client) {
    c.add_reply_error("ERR not implemented yet");
}
