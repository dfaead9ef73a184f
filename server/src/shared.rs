//! The error texts many commands share, written out once (redis: server.c
//! createSharedObjects, the `shared.*` replies).
//!
//! Redis builds these replies once at startup so that every command that
//! answers "syntax error" or WRONGTYPE sends the very same bytes, and a
//! client library can match on them. Here they are plain `&str` constants
//! handed to `Client::add_reply_error` (which adds the `-` and the CRLF and
//! counts the error in INFO errorstats), so a grep for the name finds every
//! command that can answer with it.
//!
//! A text used by one command only stays next to that command; a text
//! shared by two or more lives here. Redis keeps some of them as string
//! literals in helpers (getLongLongFromObjectOrReply's integer error, the
//! timeout parsers): they are listed here too, since redis-lite's helpers are
//! spread over the command files that use them.

/// shared.syntaxerr: an argument list no form of the command accepts.
pub const SYNTAX_ERR: &str = "ERR syntax error";

/// shared.wrongtypeerr: the key exists but holds another type (checkType).
pub const WRONGTYPE_ERR: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

/// shared.nokeyerr: the command needs the key to exist (LSET, RENAME,
/// OBJECT, DEBUG OBJECT, XGROUP ...).
pub const NO_SUCH_KEY_ERR: &str = "ERR no such key";

/// shared.outofrangeerr: LSET past either end of the list.
pub const OUT_OF_RANGE_ERR: &str = "ERR index out of range";

/// getLongLongFromObjectOrReply's default: not a decimal i64 (or one that
/// overflows). The most written error in the server.
pub const NOT_INTEGER_ERR: &str = "ERR value is not an integer or out of range";

/// getDoubleFromObjectOrReply / getLongDoubleFromObjectOrReply's default.
pub const NOT_FLOAT_ERR: &str = "ERR value is not a valid float";

/// getPositiveLongFromObjectOrReply / getRangeLongFromObjectOrReply(0, ..):
/// a count that must not be negative.
pub const MUST_BE_POSITIVE_ERR: &str = "ERR value is out of range, must be positive";

/// parseScanCursorOrReply: SCAN / SSCAN / HSCAN / ZSCAN's cursor.
pub const INVALID_CURSOR_ERR: &str = "ERR invalid cursor";

/// getTimeoutFromObjectOrReply for millisecond timeouts given as integers
/// (WAIT, CLIENT PAUSE, XREAD BLOCK ...).
pub const TIMEOUT_NOT_INTEGER_ERR: &str = "ERR timeout is not an integer or out of range";

/// getTimeoutFromObjectOrReply for second timeouts given as floats (BLPOP,
/// BZPOPMIN ...).
pub const TIMEOUT_NOT_FLOAT_ERR: &str = "ERR timeout is not a float or out of range";

/// getTimeoutFromObjectOrReply: any timeout below zero.
pub const TIMEOUT_NEGATIVE_ERR: &str = "ERR timeout is negative";
