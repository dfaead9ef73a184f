//! The wire protocol of redis-lite: RESP2/RESP3 framing and inline requests.
//!
//! This crate is pure: it turns bytes into commands and replies into bytes,
//! and never touches a socket. The server's event loop owns the sockets and
//! the buffers; it hands a client's query buffer to `RequestParser` and its
//! output buffer to the `reply` writers. Keeping I/O out makes every rule of
//! the protocol testable byte by byte, without a network.
//!
//! Where things live, with the Redis source they mirror:
//!
//! | module    | job                                              | redis             |
//! |-----------|--------------------------------------------------|-------------------|
//! | `request` | query buffer -> `argv`, multibulk and inline     | networking.c processMultibulkBuffer / processInlineBuffer, sds.c sdssplitargs |
//! | `reply`   | one writer per reply type, RESP2 or RESP3         | networking.c addReply* |
//! | `util`    | `string2ll`, `ll2string`: Redis's number rules   | util.c            |
//!
//! A request's path: bytes arrive in the client's `BytesMut`;
//! `RequestParser::next_command` returns one `Vec<Bytes>` per complete command
//! (arguments are zero-copy slices of that buffer) or `Ok(None)` to wait for
//! more; the command handler answers through `reply::bulk`, `reply::integer`
//! and friends, which append RESP bytes to the client's output buffer.

pub mod fuzz;
pub mod reply;
pub mod request;
pub mod util;

pub use reply::Resp;
pub use request::{ParseLimits, ProtocolError, RequestParser};
