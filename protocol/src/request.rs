//! The request parser: bytes from a client socket in, one `argv` at a time out.
//!
//! redis: networking.c processInputBuffer, processMultibulkBuffer,
//! processInlineBuffer; sds.c sdssplitargs.
//!
//! # Two request types
//!
//! The first byte of a request decides how it is read, exactly as in Redis:
//!
//! * `*` - a **multibulk** request, what every client library and
//!   redis-benchmark send: `*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n`.
//!   Each argument is length-prefixed, so the parser never looks inside a
//!   payload: binary data, `\r\n` inside values, anything goes.
//! * anything else - an **inline** request, a line of text as typed in
//!   `telnet` or `nc`: `SET k "hello world"\r\n`, split into words with the
//!   quoting rules of `sdssplitargs`.
//!
//! # A resumable state machine
//!
//! A read() returns whatever the kernel has: half a command, or forty
//! commands and a half. The parser therefore keeps Redis's per-client state
//! between calls, under Redis's names:
//!
//! * `multibulklen` - arguments still to read (0: the `*<n>` line is next),
//! * `bulklen` - length of the argument being received (`None` is Redis's
//!   `-1`: its `$<len>` line is next),
//! * `argv` - the arguments completed so far.
//!
//! Every line or payload it finishes is consumed from the front of the
//! caller's `BytesMut` at once (Redis advances `qb_pos`), so a call never
//! re-reads an argument it has already taken: a 512 MB value arriving in
//! 16 KB reads costs one length comparison per read, not a rescan.
//!
//! # Zero copy
//!
//! A finished argument is `buf.split_to(len).freeze()`: a `Bytes` that points
//! into the read buffer itself. No payload byte is copied between the socket
//! and the command handler. (Redis copies every argument except those of at
//! least PROTO_MBULK_BIG_ARG bytes, which it steals whole from the query
//! buffer.)
//!
//! Whoever keeps an argument for a long time - a value stored in the keyspace -
//! keeps the whole read buffer it came from alive, so long-lived small values
//! are better copied out (`Bytes::copy_from_slice`).
//!
//! # Never trust a length before the bytes arrive
//!
//! `*2147483647\r\n` or `$2000000000\r\n` are a few bytes that claim gigabytes.
//! The parser allocates nothing according to them: `argv` starts with at most
//! ARGV_PREALLOC_MAX slots and grows as arguments really arrive, and payload
//! bytes live in the caller's buffer, which grows only as data is read.
//!
//! # Two quirks kept on purpose
//!
//! Redis finds line ends with C's `strchr`, which stops at a NUL byte, and it
//! skips the two bytes after a `\r` or after a payload without checking they
//! are `\n` / `\r\n`. redis-lite reproduces both (see `find_line_end` and the
//! tests `nul_byte_stops_the_line_search_like_strchr` and
//! `bytes_after_cr_are_skipped_unchecked`), so a differential test against
//! redis-server 7.0.15 sees the same replies byte for byte.

use std::fmt;

use bytes::{Buf, Bytes, BytesMut};

use crate::util::string2ll;

/// PROTO_INLINE_MAX_SIZE (server.h): the longest line Redis waits for without
/// finding its end. It bounds an inline request and a `*<n>` / `$<len>` line,
/// so a client that never sends `\n` cannot grow the query buffer for free.
pub const PROTO_INLINE_MAX_SIZE: usize = 1024 * 64;

/// PROTO_MBULK_BIG_ARG (server.h): from this size on Redis treats an argument
/// as "big" - it reads exactly the rest of it from the socket and steals the
/// query buffer instead of copying. Exposed so the server's read loop can make
/// the same decision with `RequestParser::pending_bulk_len`.
pub const PROTO_MBULK_BIG_ARG: usize = 1024 * 32;

/// Largest `*<n>` count accepted (networking.c: `ll > INT_MAX`). Redis up to
/// 6.2 capped it at 1024*1024; 7.0 allows INT_MAX because argv now grows as
/// arguments arrive instead of being allocated from the count.
const MULTIBULK_COUNT_MAX: i64 = i32::MAX as i64;

/// Before AUTH (when a password is required) a client may send at most 10
/// arguments (a literal in processMultibulkBuffer, added for CVE-2021-32675):
/// enough for `AUTH user pass` or `HELLO 3 AUTH user pass SETNAME name`.
const UNAUTHENTICATED_MULTIBULK_MAX: i64 = 10;

/// ...and each argument may claim at most 16384 bytes (same fix), so an
/// anonymous client cannot make the server buffer a huge value.
const UNAUTHENTICATED_BULK_MAX: i64 = 16384;

/// Slots reserved in `argv` when a `*<n>` line arrives: Redis's
/// `argv_len = min(multibulklen, 1024)`. Beyond that argv grows as arguments
/// actually arrive, so a lying count costs at most 1024 pointers.
const ARGV_PREALLOC_MAX: usize = 1024;

/// What the parser must know about the client and the server configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParseLimits {
    /// `proto-max-bulk-len` (config.c, default 512 MB): the largest `$<len>`.
    pub proto_max_bulk_len: i64,
    /// false only while a password is required and the client has not
    /// authenticated yet (redis: authRequired(c) is true).
    pub authenticated: bool,
}

impl Default for ParseLimits {
    /// Redis's defaults: 512 MB bulks, no password configured.
    fn default() -> Self {
        ParseLimits {
            proto_max_bulk_len: 512 * 1024 * 1024,
            authenticated: true,
        }
    }
}

/// One variant per protocol error Redis can send. After any of them the server
/// replies with the text and closes the connection (setProtocolError sets
/// CLIENT_CLOSE_AFTER_REPLY); the rest of the buffer is never executed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProtocolError {
    /// Inline request: no `\n` within PROTO_INLINE_MAX_SIZE bytes.
    TooBigInlineRequest,
    /// Inline request: a quote never closed, or closed and followed by text.
    UnbalancedQuotes,
    /// `*` line: no `\r` within PROTO_INLINE_MAX_SIZE bytes.
    TooBigMbulkCountString,
    /// `*<n>`: n is not a string2ll number, or n > INT_MAX.
    InvalidMultibulkLength,
    /// `*<n>`: n > 10 before authentication.
    UnauthenticatedMultibulkLength,
    /// `$` line: no `\r` within PROTO_INLINE_MAX_SIZE bytes.
    TooBigBulkCountString,
    /// An argument did not start with `$`; carries the byte found instead.
    ExpectedDollar(u8),
    /// `$<len>`: not a number, negative, or over proto-max-bulk-len.
    InvalidBulkLength,
    /// `$<len>`: len > 16384 before authentication.
    UnauthenticatedBulkLength,
}

impl ProtocolError {
    /// The reply text exactly as Redis sends it, without the leading `-` and
    /// the trailing CRLF: `reply::error(buf, &e.to_bytes())` writes the wire
    /// reply. Unlike `Display`, this keeps a non-ASCII byte in
    /// `expected '$', got '<byte>'` raw, as Redis's `%c` does.
    pub fn to_bytes(&self) -> Vec<u8> {
        match *self {
            ProtocolError::ExpectedDollar(byte) => {
                // addReplyErrorFormat turns CR and LF into spaces so the error
                // cannot break the reply framing: "got '\r'" is sent as "got ' '".
                let shown = if byte == b'\r' || byte == b'\n' {
                    b' '
                } else {
                    byte
                };
                let mut text = b"ERR Protocol error: expected '$', got '".to_vec();
                text.push(shown);
                text.push(b'\'');
                text
            }
            _ => self.static_text().as_bytes().to_vec(),
        }
    }

    /// The text of every variant but `ExpectedDollar`.
    fn static_text(&self) -> &'static str {
        match self {
            ProtocolError::TooBigInlineRequest => "ERR Protocol error: too big inline request",
            ProtocolError::UnbalancedQuotes => "ERR Protocol error: unbalanced quotes in request",
            ProtocolError::TooBigMbulkCountString => {
                "ERR Protocol error: too big mbulk count string"
            }
            ProtocolError::InvalidMultibulkLength => "ERR Protocol error: invalid multibulk length",
            ProtocolError::UnauthenticatedMultibulkLength => {
                "ERR Protocol error: unauthenticated multibulk length"
            }
            ProtocolError::TooBigBulkCountString => "ERR Protocol error: too big bulk count string",
            ProtocolError::ExpectedDollar(_) => "ERR Protocol error: expected '$', got '?'",
            ProtocolError::InvalidBulkLength => "ERR Protocol error: invalid bulk length",
            ProtocolError::UnauthenticatedBulkLength => {
                "ERR Protocol error: unauthenticated bulk length"
            }
        }
    }

    /// The short reason Redis writes to its log at verbosity `verbose`
    /// ("Protocol error (%s) from client: ..."), the `errstr` argument of
    /// setProtocolError.
    pub fn log_reason(&self) -> &'static str {
        match self {
            ProtocolError::TooBigInlineRequest => "too big inline request",
            ProtocolError::UnbalancedQuotes => "unbalanced quotes in inline request",
            ProtocolError::TooBigMbulkCountString => "too big mbulk count string",
            ProtocolError::InvalidMultibulkLength => "invalid mbulk count",
            ProtocolError::UnauthenticatedMultibulkLength => "unauth mbulk count",
            ProtocolError::TooBigBulkCountString => "too big bulk count string",
            ProtocolError::ExpectedDollar(_) => "expected $ but got something else",
            ProtocolError::InvalidBulkLength => "invalid bulk length",
            ProtocolError::UnauthenticatedBulkLength => "unauth bulk length",
        }
    }
}

impl fmt::Display for ProtocolError {
    /// The exact Redis text for every error whose bytes are ASCII. A byte of
    /// 0x80 or more in `expected '$', got 'X'` cannot be one byte of a `str`;
    /// it is shown as the Latin-1 character - use `to_bytes` for the wire.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ProtocolError::ExpectedDollar(byte) => {
                let shown = if byte == b'\r' || byte == b'\n' {
                    b' '
                } else {
                    byte
                };
                write!(
                    f,
                    "ERR Protocol error: expected '$', got '{}'",
                    char::from(shown)
                )
            }
            _ => f.write_str(self.static_text()),
        }
    }
}

impl std::error::Error for ProtocolError {}

/// Redis's `c->reqtype`: how the request being parsed is framed. Decided by
/// its first byte and kept until the request is complete.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum ReqType {
    /// No request started (redis: reqtype == 0).
    #[default]
    Unknown,
    /// PROTO_REQ_INLINE
    Inline,
    /// PROTO_REQ_MULTIBULK
    Multibulk,
}

/// Per-connection request parser; one per client, like the parsing fields of
/// Redis's `client` struct.
///
/// Contract with the caller: append bytes at the end of the buffer, never
/// touch its front. Whatever the parser has consumed it has already taken.
#[derive(Debug, Default)]
pub struct RequestParser {
    /// Framing of the request in progress.
    reqtype: ReqType,
    /// Whether the current or most recent request was inline; survives the
    /// end of the request so the server can ask after executing it.
    last_was_inline: bool,
    /// Arguments still to read; 0 means the `*<n>` line is next.
    multibulklen: usize,
    /// Length of the argument being received; `None` (Redis: -1) means its
    /// `$<len>` line is next.
    bulklen: Option<usize>,
    /// Arguments completed so far.
    argv: Vec<Bytes>,
    /// How many bytes at the front of the buffer are already known to hold no
    /// line end. A long header arriving in pieces is then scanned once, not
    /// once per read. Reset whenever the front of the buffer is consumed.
    searched: usize,
}

impl RequestParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Parse the next complete command from the front of `buf`, consuming its
    /// bytes (redis: one turn of the processInputBuffer loop).
    ///
    /// * `Ok(None)`: not complete yet. What was parsed is kept here; call again
    ///   once more bytes have been appended.
    /// * `Ok(Some(argv))`: one command. `argv` is empty for an empty request
    ///   (`*0`, `*-1`, a blank inline line), which the server skips silently.
    /// * `Err(e)`: protocol error. Reply `e` and close the connection; the
    ///   parser has reset itself but the buffer's content is unspecified.
    pub fn next_command(
        &mut self,
        buf: &mut BytesMut,
        limits: &ParseLimits,
    ) -> Result<Option<Vec<Bytes>>, ProtocolError> {
        // Determine the request type when unknown: '*' is multibulk, anything
        // else is inline.
        if self.reqtype == ReqType::Unknown {
            self.reqtype = match buf.first() {
                None => return Ok(None),
                Some(b'*') => ReqType::Multibulk,
                Some(_) => ReqType::Inline,
            };
            self.last_was_inline = self.reqtype == ReqType::Inline;
        }

        let parsed = match self.reqtype {
            ReqType::Inline => self.process_inline_buffer(buf),
            _ => self.process_multibulk_buffer(buf, limits),
        };

        // A finished command or an error ends the request: back to a clean
        // state, like Redis's resetClient. Ok(None) keeps everything.
        if !matches!(parsed, Ok(None)) {
            self.reset();
        }
        parsed
    }

    /// True while a multibulk command is partly parsed: its `*<n>` line has
    /// been consumed and some of its arguments are still to come.
    pub fn in_progress(&self) -> bool {
        self.multibulklen > 0
    }

    /// Whether the current (or, between commands, the last) request came
    /// inline - typed in telnet rather than sent by a client library (redis:
    /// `c->reqtype == PROTO_REQ_INLINE`).
    pub fn is_inline(&self) -> bool {
        self.last_was_inline
    }

    /// Declared length of the argument whose payload is being received, once
    /// its `$<len>` line has been consumed. The server's read loop can use it
    /// as readQueryFromClient does: for a bulk >= PROTO_MBULK_BIG_ARG, read
    /// just the missing `len + 2 - buf.len()` bytes.
    pub fn pending_bulk_len(&self) -> Option<usize> {
        if self.multibulklen > 0 {
            self.bulklen
        } else {
            None
        }
    }

    /// The arguments of the multibulk request in progress that are already
    /// complete (Redis has them in c->argv while the rest arrives): what
    /// they cost is the client's (CLIENT LIST argv-mem, client eviction).
    pub fn partial_argv(&self) -> &[Bytes] {
        &self.argv
    }

    /// Forget the request in progress (redis: resetClient's parser fields).
    fn reset(&mut self) {
        self.reqtype = ReqType::Unknown;
        self.multibulklen = 0;
        self.bulklen = None;
        self.argv = Vec::new();
        self.searched = 0;
    }

    /// Consume `n` bytes from the front of `buf`: a line we are done with.
    fn consume(&mut self, buf: &mut BytesMut, n: usize) {
        buf.advance(n);
        self.searched = 0;
    }

    /// Find the first `needle` (`\r` or `\n`) in `buf`, searching only bytes
    /// not searched before. Returns its index.
    ///
    /// Redis searches with `strchr`, which also stops at a NUL byte. So a NUL
    /// before the line end hides the line end for good: Redis keeps waiting
    /// until the buffer passes PROTO_INLINE_MAX_SIZE and then answers "too big
    /// ... string/request". We stop at NUL the same way and remember its
    /// position, so each later call re-checks one byte.
    fn find_line_end(&mut self, buf: &[u8], needle: u8) -> Option<usize> {
        let from = self.searched.min(buf.len());
        match buf[from..].iter().position(|&b| b == needle || b == 0) {
            Some(i) => {
                self.searched = from + i;
                if buf[from + i] == needle {
                    Some(from + i)
                } else {
                    None // a NUL: strchr gives up here
                }
            }
            None => {
                self.searched = buf.len();
                None
            }
        }
    }

    /// Read a multibulk request (redis: networking.c processMultibulkBuffer).
    fn process_multibulk_buffer(
        &mut self,
        buf: &mut BytesMut,
        limits: &ParseLimits,
    ) -> Result<Option<Vec<Bytes>>, ProtocolError> {
        if self.multibulklen == 0 {
            // The "*<n>\r\n" line. Find its '\r'...
            let Some(newline) = self.find_line_end(buf, b'\r') else {
                if buf.len() > PROTO_INLINE_MAX_SIZE {
                    return Err(ProtocolError::TooBigMbulkCountString);
                }
                return Ok(None);
            };
            // ...and wait for one more byte, the '\n' (Redis skips it unchecked).
            if newline + 2 > buf.len() {
                return Ok(None);
            }
            let count = string2ll(&buf[1..newline])
                .filter(|&n| n <= MULTIBULK_COUNT_MAX)
                .ok_or(ProtocolError::InvalidMultibulkLength)?;
            if count > UNAUTHENTICATED_MULTIBULK_MAX && !limits.authenticated {
                return Err(ProtocolError::UnauthenticatedMultibulkLength);
            }
            self.consume(buf, newline + 2);

            // "*0" and "*-1" are empty requests: nothing to run, no reply.
            if count <= 0 {
                return Ok(Some(Vec::new()));
            }
            self.multibulklen = count as usize;
            self.argv = Vec::with_capacity(self.multibulklen.min(ARGV_PREALLOC_MAX));
        }

        while self.multibulklen > 0 {
            // Read the "$<len>\r\n" line if this argument's length is unknown.
            let bulklen = match self.bulklen {
                Some(len) => len,
                None => {
                    let Some(newline) = self.find_line_end(buf, b'\r') else {
                        if buf.len() > PROTO_INLINE_MAX_SIZE {
                            return Err(ProtocolError::TooBigBulkCountString);
                        }
                        return Ok(None);
                    };
                    if newline + 2 > buf.len() {
                        return Ok(None);
                    }
                    if buf[0] != b'$' {
                        return Err(ProtocolError::ExpectedDollar(buf[0]));
                    }
                    let len = string2ll(&buf[1..newline])
                        .filter(|&n| n >= 0 && n <= limits.proto_max_bulk_len)
                        .ok_or(ProtocolError::InvalidBulkLength)?;
                    if len > UNAUTHENTICATED_BULK_MAX && !limits.authenticated {
                        return Err(ProtocolError::UnauthenticatedBulkLength);
                    }
                    self.consume(buf, newline + 2);
                    // Only the number is remembered: nothing is reserved for
                    // a payload that may never come.
                    self.bulklen = Some(len as usize);
                    len as usize
                }
            };

            // The payload and its trailing "\r\n" must be all there. Until
            // then the bytes wait in `buf`; this check is all a call costs.
            if buf.len() < bulklen.saturating_add(2) {
                return Ok(None);
            }
            // Zero copy: the argument is the buffer's own memory.
            self.argv.push(buf.split_to(bulklen).freeze());
            // Skip the two bytes after the payload without looking at them,
            // as Redis does (qb_pos += bulklen+2).
            self.consume(buf, 2);
            self.bulklen = None;
            self.multibulklen -= 1;
        }

        // All arguments read: hand argv over and start afresh.
        Ok(Some(std::mem::take(&mut self.argv)))
    }

    /// Read an inline request (redis: networking.c processInlineBuffer).
    fn process_inline_buffer(
        &mut self,
        buf: &mut BytesMut,
    ) -> Result<Option<Vec<Bytes>>, ProtocolError> {
        // Search for the end of the line.
        let Some(newline) = self.find_line_end(buf, b'\n') else {
            if buf.len() > PROTO_INLINE_MAX_SIZE {
                return Err(ProtocolError::TooBigInlineRequest);
            }
            return Ok(None);
        };
        // "\r\n" or a bare "\n" both end the line; the '\r' is not part of it.
        let querylen = if newline > 0 && buf[newline - 1] == b'\r' {
            newline - 1
        } else {
            newline
        };
        let line = buf.split_to(querylen).freeze();
        self.consume(buf, newline + 1 - querylen);

        // A blank line splits into no words: an empty request.
        sdssplitargs(&line)
            .map(Some)
            .ok_or(ProtocolError::UnbalancedQuotes)
    }
}

/// C's `isspace` in the "C" locale Redis runs with: space, \t, \n, \v, \f, \r.
fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// Value of one hex digit (redis: sds.c hex_digit_to_int).
fn hex_digit_to_int(b: u8) -> u8 {
    match b {
        b'0'..=b'9' => b - b'0',
        b'a'..=b'f' => b - b'a' + 10,
        b'A'..=b'F' => b - b'A' + 10,
        _ => 0,
    }
}

/// Split an inline request line into arguments (redis: sds.c sdssplitargs).
/// `None` means unbalanced quotes.
///
/// * Words are separated by whitespace.
/// * `"..."` understands `\n \r \t \b \a \\ \"` and `\xHH`; any other `\c`
///   gives `c`.
/// * `'...'` understands only `\'`.
/// * A closing quote must be followed by whitespace or the end of the line:
///   `"foo"bar` is an error. A quote may however *open* mid-word:
///   `foo"bar"` is the single word `foobar`.
/// * Inside a word only space, \t, \r and \n end it - not \v or \f, although
///   those count as blanks *between* words (C's `isspace`).
///
/// Unquoted words are slices of `line` (no copy); quoted ones are built.
/// The C code reads `*p`, the NUL after the string meaning "end"; `at(p)`
/// returns 0 past the end to read the same way. `line` holds no NUL of its
/// own: `find_line_end` never lets one through.
pub fn sdssplitargs(line: &Bytes) -> Option<Vec<Bytes>> {
    let at = |i: usize| line.get(i).copied().unwrap_or(0);
    let mut argv = Vec::new();
    let mut p = 0;
    loop {
        // Skip blanks.
        while p < line.len() && is_c_space(line[p]) {
            p += 1;
        }
        if p >= line.len() {
            return Some(argv);
        }

        // Get a token. `current` stays None while the word is plain text.
        let start = p;
        let mut current: Option<Vec<u8>> = None;
        let mut inq = false; // inside "double quotes"
        let mut insq = false; // inside 'single quotes'
        let mut done = false;
        while !done {
            let c = at(p);
            if inq {
                if c == b'\\'
                    && at(p + 1) == b'x'
                    && at(p + 2).is_ascii_hexdigit()
                    && at(p + 3).is_ascii_hexdigit()
                {
                    // "\xHH": one byte from two hex digits.
                    let byte = hex_digit_to_int(at(p + 2)) * 16 + hex_digit_to_int(at(p + 3));
                    current.get_or_insert_with(Vec::new).push(byte);
                    p += 3;
                } else if c == b'\\' && at(p + 1) != 0 {
                    p += 1;
                    let escaped = match at(p) {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'b' => 0x08,
                        b'a' => 0x07,
                        other => other, // \\ and \" land here too
                    };
                    current.get_or_insert_with(Vec::new).push(escaped);
                } else if c == b'"' {
                    // Closing quote must be followed by a space or nothing at all.
                    if at(p + 1) != 0 && !is_c_space(at(p + 1)) {
                        return None;
                    }
                    done = true;
                } else if c == 0 {
                    return None; // unterminated quotes
                } else {
                    current.get_or_insert_with(Vec::new).push(c);
                }
            } else if insq {
                if c == b'\\' && at(p + 1) == b'\'' {
                    p += 1;
                    current.get_or_insert_with(Vec::new).push(b'\'');
                } else if c == b'\'' {
                    if at(p + 1) != 0 && !is_c_space(at(p + 1)) {
                        return None;
                    }
                    done = true;
                } else if c == 0 {
                    return None;
                } else {
                    current.get_or_insert_with(Vec::new).push(c);
                }
            } else {
                match c {
                    b' ' | b'\n' | b'\r' | b'\t' | 0 => done = true,
                    b'"' | b'\'' => {
                        // A quote opens mid-word: from here on the word is
                        // built, starting with the plain text before the quote.
                        current = Some(line[start..p].to_vec());
                        inq = c == b'"';
                        insq = c == b'\'';
                    }
                    _ => {} // plain byte: still part of line[start..p]
                }
            }
            // Word ends at p when unquoted; step over the char just handled.
            if done && current.is_none() {
                argv.push(line.slice(start..p));
            }
            if p < line.len() {
                p += 1;
            }
        }
        if let Some(word) = current {
            argv.push(Bytes::from(word));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> ParseLimits {
        ParseLimits::default()
    }

    fn unauth() -> ParseLimits {
        ParseLimits {
            authenticated: false,
            ..ParseLimits::default()
        }
    }

    /// Feed `input` in one piece and collect every result until Ok(None).
    fn parse_all(input: &[u8]) -> Vec<Result<Vec<Vec<u8>>, ProtocolError>> {
        let mut p = RequestParser::new();
        let mut buf = BytesMut::from(input);
        let mut out = Vec::new();
        loop {
            match p.next_command(&mut buf, &limits()) {
                Ok(Some(argv)) => out.push(Ok(argv.iter().map(|a| a.to_vec()).collect())),
                Ok(None) => return out,
                Err(e) => {
                    out.push(Err(e));
                    return out;
                }
            }
        }
    }

    /// The single result of parsing `input` with `l`; panics if incomplete.
    fn one(input: &[u8], l: &ParseLimits) -> Result<Vec<Vec<u8>>, ProtocolError> {
        let mut p = RequestParser::new();
        let mut buf = BytesMut::from(input);
        match p.next_command(&mut buf, l) {
            Ok(Some(argv)) => Ok(argv.iter().map(|a| a.to_vec()).collect()),
            Ok(None) => panic!("incomplete: {:?}", String::from_utf8_lossy(input)),
            Err(e) => Err(e),
        }
    }

    fn words(ws: &[&str]) -> Vec<Vec<u8>> {
        ws.iter().map(|w| w.as_bytes().to_vec()).collect()
    }

    fn inline(line: &[u8]) -> Result<Vec<Vec<u8>>, ProtocolError> {
        one(line, &limits())
    }

    /// Still waiting for more bytes, no error.
    fn incomplete(input: &[u8], l: &ParseLimits) -> bool {
        let mut p = RequestParser::new();
        let mut buf = BytesMut::from(input);
        matches!(p.next_command(&mut buf, l), Ok(None))
    }

    const SET_FOO: &[u8] = b"*3\r\n$3\r\nSET\r\n$3\r\nfoo\r\n$3\r\nbar\r\n";

    #[test]
    fn multibulk_set_parses() {
        assert_eq!(one(SET_FOO, &limits()), Ok(words(&["SET", "foo", "bar"])));
    }

    #[test]
    fn binary_payload_with_crlf_inside_is_kept_whole() {
        let input = b"*2\r\n$4\r\nECHO\r\n$6\r\na\r\n\0\xffb\r\n";
        assert_eq!(
            one(input, &limits()),
            Ok(vec![b"ECHO".to_vec(), b"a\r\n\0\xffb".to_vec()])
        );
    }

    #[test]
    fn empty_bulk_is_an_empty_argument() {
        assert_eq!(
            one(b"*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", &limits()),
            Ok(words(&["ECHO", ""]))
        );
    }

    #[test]
    fn pipeline_yields_every_command() {
        let mut input = Vec::new();
        for i in 0..50 {
            let key = format!("key:{i:03}");
            input.extend_from_slice(
                format!(
                    "*3\r\n$3\r\nSET\r\n${}\r\n{}\r\n$5\r\nvalue\r\n",
                    key.len(),
                    key
                )
                .as_bytes(),
            );
        }
        input.extend_from_slice(b"PING\r\n*0\r\n*1\r\n$4\r\nPING\r\n");
        let out = parse_all(&input);
        assert_eq!(out.len(), 53);
        for (i, r) in out.iter().take(50).enumerate() {
            assert_eq!(r, &Ok(words(&["SET", &format!("key:{i:03}"), "value"])));
        }
        assert_eq!(out[50], Ok(words(&["PING"])));
        assert_eq!(out[51], Ok(vec![]));
        assert_eq!(out[52], Ok(words(&["PING"])));
    }

    /// A stream of mixed requests, to be cut at every byte boundary.
    const MIXED: &[u8] = b"*3\r\n$3\r\nSET\r\n$3\r\nfoo\r\n$3\r\nbar\r\n\
        *0\r\nPING\r\nECHO \"a b\"\r\n*2\r\n$4\r\nECHO\r\n$0\r\n\r\n\n*-1\r\n";

    fn mixed_expected() -> Vec<Vec<Vec<u8>>> {
        vec![
            words(&["SET", "foo", "bar"]),
            vec![],
            words(&["PING"]),
            words(&["ECHO", "a b"]),
            words(&["ECHO", ""]),
            vec![],
            vec![],
        ]
    }

    /// Drain every command now parseable from `buf`.
    fn drain(p: &mut RequestParser, buf: &mut BytesMut, out: &mut Vec<Vec<Vec<u8>>>) {
        while let Some(argv) = p.next_command(buf, &limits()).unwrap() {
            out.push(argv.iter().map(|a| a.to_vec()).collect());
        }
    }

    #[test]
    fn split_frame_resumes_at_every_byte() {
        for cut in 0..=MIXED.len() {
            let mut p = RequestParser::new();
            let mut buf = BytesMut::new();
            let mut out = Vec::new();
            buf.extend_from_slice(&MIXED[..cut]);
            drain(&mut p, &mut buf, &mut out);
            buf.extend_from_slice(&MIXED[cut..]);
            drain(&mut p, &mut buf, &mut out);
            assert_eq!(out, mixed_expected(), "cut at {cut}");
            assert!(buf.is_empty());
        }
    }

    #[test]
    fn command_arriving_one_byte_at_a_time_works() {
        let mut p = RequestParser::new();
        let mut buf = BytesMut::new();
        let mut out = Vec::new();
        for &b in MIXED {
            buf.extend_from_slice(&[b]);
            drain(&mut p, &mut buf, &mut out);
        }
        assert_eq!(out, mixed_expected());
    }

    #[test]
    fn arguments_are_zero_copy_slices_of_the_read_buffer() {
        let mut buf = BytesMut::with_capacity(256);
        buf.extend_from_slice(SET_FOO);
        let base = buf.as_ptr() as usize;
        let argv = RequestParser::new()
            .next_command(&mut buf, &limits())
            .unwrap()
            .unwrap();
        // "bar" sits at offset 26 of the wire bytes, and still does.
        assert_eq!(argv[2].as_ptr() as usize, base + 26);
        assert_eq!(argv[0].as_ptr() as usize, base + 8);
    }

    #[test]
    fn empty_multibulk_is_an_empty_request() {
        for input in [&b"*0\r\n"[..], b"*-1\r\n", b"*-5\r\n"] {
            assert_eq!(one(input, &limits()), Ok(vec![]));
        }
        // Even unauthenticated: the count limit is an upper bound only.
        assert_eq!(one(b"*-100\r\n", &unauth()), Ok(vec![]));
    }

    #[test]
    fn count_line_needs_the_byte_after_cr() {
        assert!(incomplete(b"*1\r", &limits()));
        assert!(incomplete(b"*1", &limits()));
        assert!(incomplete(b"*1\r\n$3\r", &limits()));
        assert!(incomplete(b"*1\r\n$3\r\nfoo\r", &limits()));
    }

    #[test]
    fn bytes_after_cr_are_skipped_unchecked() {
        // redis-server 7.0.15 answers +PONG to both.
        assert_eq!(one(b"*1\rX$4\r\nPING\r\n", &limits()), Ok(words(&["PING"])));
        assert_eq!(one(b"*1\r\n$4\r\nPINGxx", &limits()), Ok(words(&["PING"])));
    }

    #[test]
    fn nul_byte_stops_the_line_search_like_strchr() {
        // Redis never answers these (strchr stops at the NUL)...
        assert!(incomplete(b"PING\0\r\n", &limits()));
        assert!(incomplete(b"*1\0\r\n$4\r\nPING\r\n", &limits()));
        assert!(incomplete(b"*1\r\n$4\0\r\nPING\r\n", &limits()));
        // ...until the unterminated "line" passes 64 KB.
        let mut big = b"*1\0\r\n".to_vec();
        big.resize(PROTO_INLINE_MAX_SIZE + 1, b'x');
        assert_eq!(
            one(&big, &limits()),
            Err(ProtocolError::TooBigMbulkCountString)
        );
        let mut big = b"GET\0\n".to_vec();
        big.resize(PROTO_INLINE_MAX_SIZE + 1, b'x');
        assert_eq!(
            one(&big, &limits()),
            Err(ProtocolError::TooBigInlineRequest)
        );
    }

    #[test]
    fn huge_bulk_header_does_not_allocate() {
        let l = ParseLimits {
            proto_max_bulk_len: i64::MAX,
            authenticated: true,
        };
        let mut p = RequestParser::new();
        let mut buf = BytesMut::from(&b"*1\r\n$2000000000\r\nab"[..]);
        let cap_before = buf.capacity();
        assert_eq!(p.next_command(&mut buf, &l), Ok(None));
        assert!(
            buf.capacity() <= cap_before,
            "buffer grew for a claimed length"
        );
        assert!(p.argv.capacity() <= 1);
        assert_eq!(p.pending_bulk_len(), Some(2_000_000_000));
        assert!(p.in_progress());
    }

    #[test]
    fn huge_multibulk_count_does_not_allocate() {
        let mut p = RequestParser::new();
        let mut buf = BytesMut::from(&b"*2147483647\r\n"[..]);
        assert_eq!(p.next_command(&mut buf, &limits()), Ok(None));
        assert!(p.argv.capacity() <= ARGV_PREALLOC_MAX);
        assert_eq!(p.multibulklen, 2_147_483_647);
    }

    /// Parse all of `wire` fed as two reads split at `at`.
    fn parse_split(
        wire: &[u8],
        at: usize,
        lim: &ParseLimits,
    ) -> Result<Vec<Vec<Bytes>>, ProtocolError> {
        let mut p = RequestParser::new();
        let mut buf = BytesMut::new();
        let mut out = Vec::new();
        for part in [&wire[..at], &wire[at..]] {
            buf.extend_from_slice(part);
            while let Some(argv) = p.next_command(&mut buf, lim)? {
                out.push(argv);
            }
        }
        Ok(out)
    }

    #[test]
    fn split_at_every_byte_boundary_parses_the_same() {
        // Multibulk, inline with quotes, an empty request, a bulk holding
        // CRLF, and an error at the end: cut the stream at every byte, and
        // the commands (and the error) are the same as in one read.
        let wire: &[u8] = b"*3\r\n$3\r\nSET\r\n$4\r\nk\r\nx\r\n$0\r\n\r\nPING \"a b\" 'c'\r\n\r\n*1\r\n$4\r\nPING\r\n*2\r\n$3\r\nGET\r\n$x\r\n";
        let whole = parse_split(wire, wire.len(), &limits());
        let whole_cmds = {
            // The commands before the error, parsed without it.
            let ok_part = &wire[..wire.len() - b"*2\r\n$3\r\nGET\r\n$x\r\n".len()];
            parse_split(ok_part, ok_part.len(), &limits()).unwrap()
        };
        assert_eq!(
            whole_cmds.len(),
            4,
            "SET, inline PING, the empty request, PING"
        );
        assert!(whole.is_err());
        for at in 0..=wire.len() {
            let split = parse_split(wire, at, &limits());
            assert_eq!(
                split.as_ref().err(),
                whole.as_ref().err(),
                "error differs at {at}"
            );
            let ok_part = &wire[..wire.len() - b"*2\r\n$3\r\nGET\r\n$x\r\n".len()];
            if at <= ok_part.len() {
                assert_eq!(
                    parse_split(ok_part, at, &limits()).unwrap(),
                    whole_cmds,
                    "split at {at}"
                );
            }
        }
    }

    #[test]
    fn lying_multibulk_count_preallocates_at_most_1024_args() {
        // `*2147483647` then nothing: argv's capacity is min(n, 1024).
        let mut p = RequestParser::new();
        let mut buf = BytesMut::from(&b"*2147483647\r\n$1\r\na\r\n"[..]);
        assert!(p.next_command(&mut buf, &limits()).unwrap().is_none());
        assert!(p.argv.capacity() <= ARGV_PREALLOC_MAX);
        assert_eq!(p.argv.len(), 1);
    }

    #[test]
    fn big_bulk_in_chunks_is_not_rescanned() {
        // A 1 MB argument in 16 KB reads: every call but the last is Ok(None),
        // and the header is consumed once, so `buf` holds payload only.
        let mut p = RequestParser::new();
        let payload = vec![b'v'; 1 << 20];
        let mut wire = b"*2\r\n$3\r\nSET\r\n$1048576\r\n".to_vec();
        wire.extend_from_slice(&payload);
        wire.extend_from_slice(b"\r\n");
        let mut buf = BytesMut::new();
        let mut got = None;
        for chunk in wire.chunks(16 * 1024) {
            buf.extend_from_slice(chunk);
            if let Some(argv) = p.next_command(&mut buf, &limits()).unwrap() {
                got = Some(argv);
            } else {
                assert_eq!(p.pending_bulk_len(), Some(1 << 20));
                assert_eq!(p.argv.len(), 1, "SET parsed once, kept");
            }
        }
        let argv = got.expect("complete");
        assert_eq!(argv[1].len(), 1 << 20);
        assert!(argv[1].iter().all(|&b| b == b'v'));
    }

    #[test]
    fn partial_line_is_not_rescanned() {
        // A count line growing one byte per read: the parser remembers how
        // far it searched, so each call inspects only the new byte.
        let mut p = RequestParser::new();
        let mut buf = BytesMut::from(&b"*"[..]);
        for i in 0..1000 {
            assert_eq!(p.next_command(&mut buf, &limits()), Ok(None));
            assert_eq!(p.searched, buf.len(), "after {i} bytes");
            buf.extend_from_slice(b"1");
        }
    }

    #[test]
    fn in_progress_and_is_inline_track_the_request() {
        let mut p = RequestParser::new();
        let mut buf = BytesMut::from(&b"*2\r\n$4\r\nECHO\r\n"[..]);
        assert!(!p.in_progress());
        assert_eq!(p.next_command(&mut buf, &limits()), Ok(None));
        assert!(p.in_progress());
        assert!(!p.is_inline());
        buf.extend_from_slice(b"$1\r\nx\r\nPING\r\n");
        assert!(p.next_command(&mut buf, &limits()).unwrap().is_some());
        assert!(!p.in_progress());
        assert!(!p.is_inline());
        assert_eq!(
            p.next_command(&mut buf, &limits()),
            Ok(Some(vec![Bytes::from_static(b"PING")]))
        );
        assert!(p.is_inline(), "still answers for the command just returned");
        assert!(!p.in_progress());
    }

    // ---- protocol errors: one test per Redis error text ----

    #[test]
    fn error_texts_are_redis_texts() {
        use ProtocolError::*;
        let cases: [(ProtocolError, &str); 10] = [
            (
                TooBigInlineRequest,
                "ERR Protocol error: too big inline request",
            ),
            (
                UnbalancedQuotes,
                "ERR Protocol error: unbalanced quotes in request",
            ),
            (
                TooBigMbulkCountString,
                "ERR Protocol error: too big mbulk count string",
            ),
            (
                InvalidMultibulkLength,
                "ERR Protocol error: invalid multibulk length",
            ),
            (
                UnauthenticatedMultibulkLength,
                "ERR Protocol error: unauthenticated multibulk length",
            ),
            (
                TooBigBulkCountString,
                "ERR Protocol error: too big bulk count string",
            ),
            (
                ExpectedDollar(b'x'),
                "ERR Protocol error: expected '$', got 'x'",
            ),
            (
                ExpectedDollar(b'\r'),
                "ERR Protocol error: expected '$', got ' '",
            ),
            (InvalidBulkLength, "ERR Protocol error: invalid bulk length"),
            (
                UnauthenticatedBulkLength,
                "ERR Protocol error: unauthenticated bulk length",
            ),
        ];
        for (e, text) in cases {
            assert_eq!(e.to_string(), text);
            assert_eq!(e.to_bytes(), text.as_bytes());
        }
    }

    #[test]
    fn expected_dollar_keeps_a_raw_non_ascii_byte() {
        assert_eq!(
            one(b"*1\r\n\xc3\r\n", &limits()),
            Err(ProtocolError::ExpectedDollar(0xc3))
        );
        assert_eq!(
            ProtocolError::ExpectedDollar(0xc3).to_bytes(),
            b"ERR Protocol error: expected '$', got '\xc3'"
        );
    }

    #[test]
    fn expected_dollar_shows_cr_and_lf_as_space() {
        assert_eq!(
            one(b"*1\r\n\r\n", &limits()),
            Err(ProtocolError::ExpectedDollar(b'\r'))
        );
        assert_eq!(
            one(b"*1\r\n\n$4\r\nPING\r\n", &limits()),
            Err(ProtocolError::ExpectedDollar(b'\n'))
        );
        assert_eq!(
            ProtocolError::ExpectedDollar(b'\n').to_string(),
            "ERR Protocol error: expected '$', got ' '"
        );
        assert_eq!(
            one(b"*1\r\nx\r\n", &limits()),
            Err(ProtocolError::ExpectedDollar(b'x'))
        );
    }

    #[test]
    fn invalid_multibulk_length_follows_string2ll() {
        for input in [
            &b"*+1\r\n$4\r\nPING\r\n"[..],
            b"*01\r\n",
            b"*-0\r\n",
            b"*\r\n",
            b"*1 \r\n",
            b"* 1\r\n",
            b"*abc\r\n",
            b"*2147483648\r\n",
            b"*99999999999999999999\r\n",
        ] {
            assert_eq!(
                one(input, &limits()),
                Err(ProtocolError::InvalidMultibulkLength),
                "{:?}",
                String::from_utf8_lossy(input)
            );
        }
        // INT_MAX itself is fine: the server just waits for the arguments.
        assert!(incomplete(b"*2147483647\r\n", &limits()));
    }

    #[test]
    fn unauthenticated_multibulk_length_over_ten() {
        assert!(incomplete(b"*10\r\n", &unauth()));
        assert_eq!(
            one(b"*11\r\n", &unauth()),
            Err(ProtocolError::UnauthenticatedMultibulkLength)
        );
        assert!(incomplete(b"*11\r\n", &limits()));
        // The INT_MAX check comes first.
        assert_eq!(
            one(b"*2147483648\r\n", &unauth()),
            Err(ProtocolError::InvalidMultibulkLength)
        );
    }

    #[test]
    fn invalid_bulk_length_cases() {
        for input in [
            &b"*1\r\n$-1\r\n"[..],
            b"*1\r\n$04\r\nPING\r\n",
            b"*1\r\n$\r\n",
            b"*1\r\n$+4\r\nPING\r\n",
            b"*1\r\n$4 \r\nPING\r\n",
            b"*1\r\n$\xc3\xa9\r\n",
        ] {
            assert_eq!(
                one(input, &limits()),
                Err(ProtocolError::InvalidBulkLength),
                "{:?}",
                String::from_utf8_lossy(input)
            );
        }
    }

    #[test]
    fn proto_max_bulk_len_is_inclusive() {
        let l = ParseLimits {
            proto_max_bulk_len: 5,
            authenticated: true,
        };
        assert_eq!(one(b"*1\r\n$5\r\nhello\r\n", &l), Ok(words(&["hello"])));
        assert_eq!(
            one(b"*1\r\n$6\r\n", &l),
            Err(ProtocolError::InvalidBulkLength)
        );
    }

    #[test]
    fn unauthenticated_bulk_length_over_16384() {
        assert!(incomplete(b"*1\r\n$16384\r\n", &unauth()));
        assert_eq!(
            one(b"*1\r\n$16385\r\n", &unauth()),
            Err(ProtocolError::UnauthenticatedBulkLength)
        );
        // Invalid beats unauthenticated.
        assert_eq!(
            one(b"*1\r\n$-1\r\n", &unauth()),
            Err(ProtocolError::InvalidBulkLength)
        );
    }

    #[test]
    fn too_big_mbulk_count_string_after_64k_without_cr() {
        let mut input = b"*".to_vec();
        input.resize(PROTO_INLINE_MAX_SIZE, b'1');
        assert!(incomplete(&input, &limits()), "exactly 64 KB still waits");
        input.push(b'1');
        assert_eq!(
            one(&input, &limits()),
            Err(ProtocolError::TooBigMbulkCountString)
        );
    }

    #[test]
    fn too_big_bulk_count_string_after_64k_without_cr() {
        let mut input = b"*2\r\n$4\r\nECHO\r\n$".to_vec();
        let header = 14; // bytes consumed before the '$' line
        input.resize(header + PROTO_INLINE_MAX_SIZE, b'1');
        assert!(incomplete(&input, &limits()));
        input.push(b'1');
        assert_eq!(
            one(&input, &limits()),
            Err(ProtocolError::TooBigBulkCountString)
        );
        // The size check comes before the '$' check.
        let mut input = b"*1\r\n".to_vec();
        input.resize(4 + 70_000, b'X');
        assert_eq!(
            one(&input, &limits()),
            Err(ProtocolError::TooBigBulkCountString)
        );
    }

    #[test]
    fn too_big_inline_request_after_64k_without_newline() {
        let mut input = b"SET k ".to_vec();
        input.resize(PROTO_INLINE_MAX_SIZE, b'v');
        assert!(incomplete(&input, &limits()));
        input.push(b'v');
        assert_eq!(
            one(&input, &limits()),
            Err(ProtocolError::TooBigInlineRequest)
        );
        // A long line that does end is fine.
        input.extend_from_slice(b"\r\n");
        assert_eq!(one(&input, &limits()).unwrap().len(), 3);
    }

    #[test]
    fn error_resets_the_parser() {
        let mut p = RequestParser::new();
        let mut buf = BytesMut::from(&b"*1\r\nx\r\n"[..]);
        assert!(p.next_command(&mut buf, &limits()).is_err());
        assert!(!p.in_progress());
        let mut fresh = BytesMut::from(SET_FOO);
        assert!(p.next_command(&mut fresh, &limits()).unwrap().is_some());
    }

    // ---- inline requests (sdssplitargs) ----

    #[test]
    fn inline_splits_on_whitespace() {
        assert_eq!(inline(b"SET  k\tv\r\n"), Ok(words(&["SET", "k", "v"])));
        assert_eq!(inline(b"PING\n"), Ok(words(&["PING"])));
        assert_eq!(inline(b"  PING  \r\n"), Ok(words(&["PING"])));
    }

    #[test]
    fn inline_blank_line_is_an_empty_request() {
        for line in [&b"\r\n"[..], b"\n", b"   \r\n", b"\r\r\n", b"\t\x0b\x0c\n"] {
            assert_eq!(inline(line), Ok(vec![]));
        }
    }

    #[test]
    fn inline_cr_inside_the_line_separates_words() {
        // "ECHO a\rb" is three words, as redis-server answers a wrong-arity error.
        assert_eq!(inline(b"ECHO a\rb\r\n"), Ok(words(&["ECHO", "a", "b"])));
    }

    #[test]
    fn inline_plain_words_are_slices_of_the_buffer() {
        let mut buf = BytesMut::from(&b"GET somekey\r\n"[..]);
        let base = buf.as_ptr() as usize;
        let argv = RequestParser::new()
            .next_command(&mut buf, &limits())
            .unwrap()
            .unwrap();
        assert_eq!(argv[1].as_ptr() as usize, base + 4);
    }

    #[test]
    fn inline_double_quote_escapes() {
        assert_eq!(
            inline(b"ECHO \"\\n\\r\\t\\b\\a\\\\\\\"\\q\"\r\n"),
            Ok(vec![b"ECHO".to_vec(), b"\n\r\t\x08\x07\\\"q".to_vec()])
        );
        assert_eq!(inline(b"ECHO \"a b\"\r\n"), Ok(words(&["ECHO", "a b"])));
        assert_eq!(inline(b"ECHO \"\"\r\n"), Ok(words(&["ECHO", ""])));
    }

    #[test]
    fn inline_hex_escape_needs_two_hex_digits() {
        // "\x41" is 'A'; "\x4g" and a trailing "\x4" fall back to plain 'x'.
        assert_eq!(
            inline(b"ECHO \"\\x41\\x4g\\x4\"\r\n"),
            Ok(words(&["ECHO", "Ax4gx4"]))
        );
        assert_eq!(
            inline(b"ECHO \"\\xff\\x00\\xAb\"\r\n"),
            Ok(vec![b"ECHO".to_vec(), b"\xff\x00\xab".to_vec()])
        );
    }

    #[test]
    fn inline_single_quotes_only_escape_the_quote() {
        assert_eq!(
            inline(b"ECHO 'it\\'s \\n'\r\n"),
            Ok(words(&["ECHO", "it's \\n"]))
        );
        assert_eq!(inline(b"ECHO 'a\"b'\r\n"), Ok(words(&["ECHO", "a\"b"])));
    }

    #[test]
    fn closing_quote_followed_by_text_is_unbalanced() {
        for line in [
            &b"ECHO \"foo\"bar\r\n"[..],
            b"ECHO 'a'b\r\n",
            b"ECHO \"a\"\"b\"\r\n",
        ] {
            assert_eq!(inline(line), Err(ProtocolError::UnbalancedQuotes));
        }
    }

    #[test]
    fn unterminated_quotes_are_unbalanced() {
        for line in [
            &b"ECHO \"abc\r\n"[..],
            b"ECHO 'abc\n",
            b"ECHO \"a\\\"\r\n",
            b"ECHO \"a\\\r\n",
            b"ECHO 'a\\'\r\n",
        ] {
            assert_eq!(inline(line), Err(ProtocolError::UnbalancedQuotes));
        }
    }

    #[test]
    fn quote_opening_mid_word_joins_the_word() {
        assert_eq!(
            inline(b"ECHO foo\"bar\"\r\n"),
            Ok(words(&["ECHO", "foobar"]))
        );
        assert_eq!(inline(b"ECHO a'b c'\r\n"), Ok(words(&["ECHO", "ab c"])));
    }

    #[test]
    fn vertical_tab_separates_words_but_does_not_end_one() {
        // C isspace() skips \v and \f between words, and a closing quote may be
        // followed by them, but inside a plain word only space, \t, \r, \n end it.
        assert_eq!(
            inline(b"ECHO a\x0bb\r\n"),
            Ok(vec![b"ECHO".to_vec(), b"a\x0bb".to_vec()])
        );
        assert_eq!(
            inline(b"ECHO \"a\"\x0bb\r\n"),
            Ok(words(&["ECHO", "a", "b"]))
        );
        assert_eq!(inline(b"\x0b\x0cECHO x\r\n"), Ok(words(&["ECHO", "x"])));
    }

    #[test]
    fn inline_high_bytes_are_not_whitespace() {
        assert_eq!(
            inline(b"ECHO \xa0\x85\r\n"),
            Ok(vec![b"ECHO".to_vec(), b"\xa0\x85".to_vec()])
        );
    }
}
