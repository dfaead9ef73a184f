//! MIGRATE: move keys to another Redis (cluster.c migrateCommand and its
//! socket cache). The keys travel as DUMP payloads (`rdb::dump`, the same
//! bytes DUMP returns) inside RESTORE commands, written on a plain TCP
//! connection to the target; the target's replies decide which local keys
//! are deleted.
//!
//! One exchange, as Redis sends it (one buffer, then one reply per line):
//!
//! ```text
//!   [AUTH [user] pass]        only with AUTH / AUTH2
//!   [SELECT db]               only when this cached socket last used another db
//!   RESTORE key ttl payload [REPLACE]     one per key (RESTORE-ASKING in cluster mode)
//! ```
//!
//! **This blocks the event loop**, on purpose, because Redis does: the
//! connect, the write and every reply read are synchronous, each bounded by
//! the command's `timeout` (ms). It is one of Redis's known stalls (a slow
//! target stalls every client of the source), kept so MIGRATE's timing and
//! atomicity match: no other command runs between the DUMP and the DEL.
//!
//! Connections are cached per `host:port` (migrateGetSocket) so a client
//! moving many keys one MIGRATE at a time connects once; the cron closes the
//! ones idle for more than MIGRATE_SOCKET_CACHE_TTL seconds. INFO's
//! `migrate_cached_sockets` counts them.
//!
//! The moved keys reach the AOF and replicas as one `DEL key...`: the
//! command vector is rewritten (replaceClientCommandVector), so `call()`
//! propagates the DEL through `propagate::also_propagate` as for any write.

use std::collections::HashMap;
use std::io::{self, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;
use util::atoi;

use bytes::Bytes;

use crate::db::{db_delete, lookup_key_read, signal_modified_key};
use crate::networking::Client;
use crate::notify::notify_keyspace_event;
use crate::server::{mstime, Server};
use crate::shared;

/// MIGRATE_SOCKET_CACHE_ITEMS: at most this many cached target
/// connections; a new one past it closes one chosen at random.
pub const MIGRATE_SOCKET_CACHE_ITEMS: usize = 64;

/// MIGRATE_SOCKET_CACHE_TTL: a cached connection unused for more than this
/// many seconds is closed by the cron (migrateCloseTimedoutSockets).
pub const MIGRATE_SOCKET_CACHE_TTL: i64 = 10;

/// The size of Redis's reply buffers (`char buf0[1024]`): syncReadLine
/// reads at most 1023 bytes of a reply line.
const MIGRATE_REPLY_LINE_MAX: usize = 1023;

/// The query is written in chunks of this size (Redis: 64K per
/// connSyncWrite call, each with the full timeout).
const MIGRATE_WRITE_CHUNK: usize = 64 * 1024;

/// migrateCachedSocket: one connection to a target.
pub struct MigrateCachedSocket {
    conn: BufReader<TcpStream>,
    /// The db the last successful MIGRATE selected (-1: unknown, SELECT
    /// again).
    last_dbid: i64,
    /// Unix time (s) of the last use, for the cron.
    last_use_time: i64,
}

/// server.migrate_cached_sockets: "host:port" -> connection.
#[derive(Default)]
pub struct MigrateSockets {
    sockets: HashMap<Vec<u8>, MigrateCachedSocket>,
}

impl MigrateSockets {
    /// INFO migrate_cached_sockets.
    pub fn len(&self) -> usize {
        self.sockets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sockets.is_empty()
    }
}

fn socket_name(host: &[u8], port: &[u8]) -> Vec<u8> {
    [host, b":", port].concat()
}

/// connSocketBlockingConnect: a non-blocking connect to the first
/// resolved address that accepts one (anetTcpNonBlockConnect), then a wait
/// of up to `timeout_ms` for the socket to become writable. As in Redis,
/// only a failure to *start* connecting (a host that does not resolve, an
/// address refused at once) is an error here: a refused or timed-out
/// handshake leaves a socket whose first write fails, so MIGRATE reports
/// "IOERR error or timeout writing to target instance" for a closed port.
fn blocking_connect(host: &[u8], port: &[u8], timeout_ms: i64) -> io::Result<TcpStream> {
    use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd};
    let host = std::str::from_utf8(host).map_err(|_| io::ErrorKind::InvalidInput)?;
    let port = u16::try_from(atoi(port)).map_err(|_| io::ErrorKind::InvalidInput)?;
    let mut last = io::Error::from(io::ErrorKind::AddrNotAvailable);
    let mut conn = None;
    for addr in (host, port).to_socket_addrs()? {
        match mio::net::TcpStream::connect(addr) {
            Ok(s) => {
                conn = Some(s);
                break;
            }
            Err(e) => last = e,
        }
    }
    let conn = conn.ok_or(last)?;
    // aeWait(fd, AE_WRITABLE, timeout): its outcome is not checked, as in
    // Redis (a failed handshake shows at the first write).
    let mut pfd = libc::pollfd {
        fd: conn.as_raw_fd(),
        events: libc::POLLOUT,
        revents: 0,
    };
    let wait = timeout_ms.clamp(0, i64::from(i32::MAX)) as libc::c_int;
    // SAFETY: one pollfd we own, for a descriptor that stays open.
    unsafe { libc::poll(&mut pfd, 1, wait) };
    // SAFETY: into_raw_fd hands over the only owner of the descriptor.
    let stream = unsafe { TcpStream::from_raw_fd(conn.into_raw_fd()) };
    stream.set_nonblocking(false)?;
    Ok(stream)
}

/// migrateGetSocket: the cached connection to host:port, or a new one.
/// The connection is taken out of the cache while MIGRATE uses it and put
/// back by `migrate_keep_socket`; dropping it instead is migrateCloseSocket.
/// On a connect failure the client gets Redis's IOERR and None is returned.
fn migrate_get_socket(
    srv: &mut Server,
    c: &mut Client,
    host: &[u8],
    port: &[u8],
    timeout_ms: i64,
) -> Option<MigrateCachedSocket> {
    let now = mstime() / 1000;
    let name = socket_name(host, port);
    if let Some(mut cs) = srv.migrate_sockets.sockets.remove(&name) {
        cs.last_use_time = now;
        return Some(cs);
    }
    // Too many items: drop one at random (dictGetRandomKey).
    if srv.migrate_sockets.sockets.len() >= MIGRATE_SOCKET_CACHE_ITEMS {
        let victim = rand::random::<u64>() as usize % srv.migrate_sockets.sockets.len();
        if let Some(k) = srv.migrate_sockets.sockets.keys().nth(victim).cloned() {
            srv.migrate_sockets.sockets.remove(&k);
        }
    }
    let conn = match blocking_connect(host, port, timeout_ms) {
        Ok(s) => s,
        Err(_) => {
            c.add_reply_error("IOERR error or timeout connecting to the client");
            return None;
        }
    };
    let _ = conn.set_nodelay(true);
    Some(MigrateCachedSocket {
        conn: BufReader::new(conn),
        last_dbid: -1,
        last_use_time: now,
    })
}

/// Put a connection (back) into the cache after a use that left it in a
/// known state.
fn migrate_keep_socket(srv: &mut Server, host: &[u8], port: &[u8], cs: MigrateCachedSocket) {
    srv.migrate_sockets
        .sockets
        .insert(socket_name(host, port), cs);
}

/// migrateCloseTimedoutSockets: the cron's once-a-second sweep.
// redis: cluster.c migrateCloseTimedoutSockets
pub fn migrate_close_timedout_sockets(srv: &mut Server) {
    let now = mstime() / 1000;
    srv.migrate_sockets
        .sockets
        .retain(|_, cs| now - cs.last_use_time <= MIGRATE_SOCKET_CACHE_TTL);
}

/// How a socket operation failed: Redis tests `errno == ETIMEDOUT` to
/// decide whether a retry on a fresh connection is worth it.
fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// syncReadLine: one reply line without its CRLF, at most
/// MIGRATE_REPLY_LINE_MAX bytes (the rest of a longer line stays unread, as
/// in Redis). End of stream is an error; so is an empty line, which Redis's
/// `<= 0` test rejects.
fn sync_read_line(cs: &mut MigrateCachedSocket) -> io::Result<Vec<u8>> {
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while line.len() < MIGRATE_REPLY_LINE_MAX {
        if cs.conn.read(&mut byte)? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        if byte[0] == b'\n' {
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            break;
        }
        line.push(byte[0]);
    }
    if line.is_empty() {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    Ok(line)
}

/// rioWriteBulkCount + rioWriteBulkString: one command in RESP.
fn write_command(buf: &mut Vec<u8>, args: &[&[u8]]) {
    buf.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
    for a in args {
        buf.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        buf.extend_from_slice(a);
        buf.extend_from_slice(b"\r\n");
    }
}

/// What MIGRATE parsed from its arguments.
struct MigrateArgs {
    copy: bool,
    replace: bool,
    username: Option<Bytes>,
    password: Option<Bytes>,
    dbid: i64,
    timeout: i64,
}

/// A socket error: `socket_err` in migrateCommand.
struct SocketErr {
    write_error: bool,
    /// errno == ETIMEDOUT: never retried.
    timed_out: bool,
    /// The code path allows the one retry (`may_retry` not cleared).
    retry_allowed: bool,
}

/// MIGRATE's options, parsed as migrateCommand does (the first bad one is
/// the reply), then the timeout and the db. Also returns where the keys
/// are: argv[3] alone, or everything after KEYS.
fn migrate_parse_args(c: &mut Client) -> Option<(MigrateArgs, usize, usize)> {
    let (mut copy, mut replace) = (false, false);
    let (mut username, mut password) = (None, None);
    let (mut first_key, mut num_keys) = (3, 1);
    let mut j = 6;
    while j < c.argc() {
        let moreargs = c.argc() - 1 - j;
        let a = c.arg(j);
        if a.eq_ignore_ascii_case(b"copy") {
            copy = true;
        } else if a.eq_ignore_ascii_case(b"replace") {
            replace = true;
        } else if a.eq_ignore_ascii_case(b"auth") && moreargs >= 1 {
            password = Some(c.argv[j + 1].clone());
            // Passwords never show in SLOWLOG or MONITOR.
            c.redact_client_command_argument(j + 1);
            j += 1;
        } else if a.eq_ignore_ascii_case(b"auth2") && moreargs >= 2 {
            username = Some(c.argv[j + 1].clone());
            password = Some(c.argv[j + 2].clone());
            c.redact_client_command_argument(j + 1);
            c.redact_client_command_argument(j + 2);
            j += 2;
        } else if a.eq_ignore_ascii_case(b"keys") {
            if !c.arg(3).is_empty() {
                c.add_reply_error(
                    "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string",
                );
                return None;
            }
            first_key = j + 1;
            num_keys = c.argc() - j - 1;
            break; // All the remaining args are keys.
        } else {
            // An unknown option, or AUTH / AUTH2 without their arguments.
            c.add_reply_syntax_error();
            return None;
        }
        j += 1;
    }
    // Sanity check: the timeout first, then the db, as Redis.
    let timeout = parse_long(c, 5)?;
    let dbid = parse_long(c, 4)?;
    let timeout = if timeout <= 0 { 1000 } else { timeout };
    let args = MigrateArgs {
        copy,
        replace,
        username,
        password,
        dbid,
        timeout,
    };
    Some((args, first_key, num_keys))
}

/// MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE]
///   [AUTH password] [AUTH2 username password] [KEYS key [key ...]]
// redis: cluster.c migrateCommand
pub fn migrate_command(srv: &mut Server, c: &mut Client) {
    let Some((args, first_key, num_keys)) = migrate_parse_args(c) else {
        return;
    };
    // Which keys are here: all missing is +NOKEY, not an error (they often
    // just expired meanwhile).
    let mut keys: Vec<Bytes> = Vec::new();
    for j in first_key..first_key + num_keys {
        let key = c.argv[j].clone();
        if lookup_key_read(srv, c.db, &key).is_some() {
            keys.push(key);
        }
    }
    if keys.is_empty() {
        return c.add_reply_status(b"NOKEY");
    }

    let (host, port) = (c.argv[1].clone(), c.argv[2].clone());
    // A cached socket is often found closed by the target: then one retry
    // on a fresh connection, unless the failure was a timeout.
    let mut may_retry = true;
    loop {
        let Err(err) = migrate_try(srv, c, &host, &port, &keys, &args) else {
            return;
        };
        if err.retry_allowed && !err.timed_out && may_retry {
            may_retry = false;
            continue;
        }
        let what = if err.write_error {
            "writing"
        } else {
            "reading"
        };
        return c.add_reply_error(&format!("IOERR error or timeout {what} to target instance"));
    }
}

/// getLongFromObjectOrReply.
fn parse_long(c: &mut Client, i: usize) -> Option<i64> {
    let v = storage::util::string2ll(c.arg(i));
    if v.is_none() {
        c.add_reply_error(shared::NOT_INTEGER_ERR);
    }
    v
}

/// The whole query of one attempt: AUTH, SELECT when `select`, then one
/// RESTORE per key with its remaining TTL and DUMP payload. Returns it with
/// the keys it carries: serialising big keys takes time, so a key found
/// above may have expired since (it is skipped).
fn migrate_build_query<'k>(
    srv: &Server,
    dbid: usize,
    keys: &'k [Bytes],
    args: &MigrateArgs,
    select: bool,
) -> (Vec<u8>, Vec<&'k Bytes>) {
    let mut cmd = Vec::new();
    if let Some(pass) = &args.password {
        match &args.username {
            Some(user) => write_command(&mut cmd, &[b"AUTH", user, pass]),
            None => write_command(&mut cmd, &[b"AUTH", pass]),
        }
    }
    if select {
        write_command(&mut cmd, &[b"SELECT", args.dbid.to_string().as_bytes()]);
    }
    // In cluster mode the target is importing the slot: RESTORE-ASKING
    // carries the ASKING flag, so the target takes it before it owns the
    // slot.
    let restore: &[u8] = if srv.cluster.is_some() {
        b"RESTORE-ASKING"
    } else {
        b"RESTORE"
    };
    let compress = crate::rdb::rdb_compression(srv);
    let mut sent = Vec::with_capacity(keys.len());
    for key in keys {
        let mut ttl = 0;
        if let Some(expireat) = srv.dbs[dbid].get_expire(key) {
            ttl = expireat - mstime();
            if ttl < 0 {
                continue;
            }
            ttl = ttl.max(1);
        }
        let Some(o) = srv.dbs[dbid].dict.get(key) else {
            continue;
        };
        let payload = rdb::dump::create_dump_payload(o, compress);
        let ttl = ttl.to_string();
        let mut argv: Vec<&[u8]> = vec![restore, key, ttl.as_bytes(), &payload];
        if args.replace {
            argv.push(b"REPLACE");
        }
        write_command(&mut cmd, &argv);
        sent.push(key);
    }
    (cmd, sent)
}

/// What the RESTORE replies said (migrateCommand's reply loop).
struct RestoreReplies {
    /// The target refused something; the client already got its error.
    error_from_target: bool,
    /// The read that failed, if one did.
    socket_error: Option<io::Error>,
    /// How many RESTORE replies arrived.
    replies_read: usize,
    /// The keys the target took and that were deleted here (not COPY).
    acked: Vec<Bytes>,
}

/// Read one reply per sent key. The first error the target sent, in
/// Redis's order (AUTH, SELECT, the RESTOREs), becomes the client's reply;
/// an AUTH or SELECT error fails every key, a RESTORE error just its own.
/// Every other key moved: without COPY it is deleted here, as a DEL.
fn migrate_read_restore_replies(
    srv: &mut Server,
    c: &mut Client,
    cs: &mut MigrateCachedSocket,
    sent: &[&Bytes],
    earlier: [&Option<Vec<u8>>; 2],
    copy: bool,
) -> RestoreReplies {
    let mut r = RestoreReplies {
        error_from_target: false,
        socket_error: None,
        replies_read: 0,
        acked: Vec::new(),
    };
    let earlier_err = earlier.into_iter().flatten().find(|l| l[0] == b'-');
    for key in sent {
        let reply = match sync_read_line(cs) {
            Ok(l) => l,
            Err(e) => {
                r.socket_error = Some(e);
                break;
            }
        };
        r.replies_read += 1;
        if earlier_err.is_some() || reply[0] == b'-' {
            if !r.error_from_target {
                // On error the selected db is no longer known.
                cs.last_dbid = -1;
                r.error_from_target = true;
                reply_target_error(c, &earlier_err.unwrap_or(&reply)[1..]);
            }
        } else if !copy {
            // No COPY: the key is at the target now, delete it here.
            db_delete(srv, c.db, key);
            signal_modified_key(srv, c.db, key);
            notify_keyspace_event(srv, crate::config::NOTIFY_GENERIC, "del", key, c.db);
            srv.dirty += 1;
            r.acked.push((*key).clone());
        }
    }
    r
}

/// One attempt (the `try_again` label): connect, send everything, read the
/// replies, delete what the target acknowledged. Ok when the client got
/// its reply (+OK, the target's error, or the connect IOERR); a socket
/// error otherwise (the connection is closed: it is simply not put back).
fn migrate_try(
    srv: &mut Server,
    c: &mut Client,
    host: &[u8],
    port: &[u8],
    keys: &[Bytes],
    args: &MigrateArgs,
) -> Result<(), SocketErr> {
    let Some(mut cs) = migrate_get_socket(srv, c, host, port, args.timeout) else {
        return Ok(());
    };
    let timeout = Some(Duration::from_millis(args.timeout as u64));
    let _ = cs.conn.get_ref().set_read_timeout(timeout);
    let _ = cs.conn.get_ref().set_write_timeout(timeout);

    // SELECT only when this connection is not known to be in the db.
    let select = cs.last_dbid != args.dbid;
    let (cmd, sent) = migrate_build_query(srv, c.db, keys, args, select);

    // Transfer the query, then read the replies, each within the timeout.
    for chunk in cmd.chunks(MIGRATE_WRITE_CHUNK) {
        if let Err(e) = cs.conn.get_mut().write_all(chunk) {
            return Err(SocketErr {
                write_error: true,
                timed_out: is_timeout(&e),
                retry_allowed: true,
            });
        }
    }
    let read_err = |e: io::Error| SocketErr {
        write_error: false,
        timed_out: is_timeout(&e),
        retry_allowed: true,
    };
    let auth_reply = match &args.password {
        Some(_) => Some(sync_read_line(&mut cs).map_err(read_err)?),
        None => None,
    };
    let select_reply = if select {
        Some(sync_read_line(&mut cs).map_err(read_err)?)
    } else {
        None
    };
    let r = migrate_read_restore_replies(
        srv,
        c,
        &mut cs,
        &sent,
        [&auth_reply, &select_reply],
        args.copy,
    );
    let (error_from_target, socket_error, acked) = (r.error_from_target, r.socket_error, r.acked);

    // Nothing was processed and the first reply never came: retry now,
    // before the command vector is rewritten.
    if let Some(e) = &socket_error {
        if !error_from_target && r.replies_read == 0 && !is_timeout(e) {
            return Err(read_err(io::Error::from(e.kind())));
        }
    }

    // MIGRATE propagates as DEL of the keys the target acknowledged.
    if !acked.is_empty() {
        let mut newargv = Vec::with_capacity(acked.len() + 1);
        newargv.push(Bytes::from_static(b"DEL"));
        newargv.extend(acked);
        crate::propagate::rewrite_client_command_vector(c, newargv);
    }

    if let Some(e) = socket_error {
        // The connection is dropped (closed); no retry after a partial
        // transfer. The error goes out unless the target's came first.
        if !error_from_target {
            return Err(SocketErr {
                write_error: false,
                timed_out: is_timeout(&e),
                retry_allowed: false,
            });
        }
        return Ok(());
    }
    if !error_from_target {
        // Success: the next MIGRATE to the same db skips SELECT.
        cs.last_dbid = args.dbid;
        c.add_reply_ok();
    }
    migrate_keep_socket(srv, host, port, cs);
    Ok(())
}

/// migrateGetKeys (db.c): argv[3], or with KEYS every argument after it
/// (skipping the arguments of AUTH and AUTH2 while looking for KEYS). KEYS
/// with a non-empty argv[3] reports no keys: the command's syntax error.
pub fn migrate_get_keys(argv: &[Bytes]) -> Vec<crate::commands::KeyReference> {
    const SKIP_KEYWORDS: [(&str, usize); 4] =
        [("copy", 0), ("replace", 0), ("auth", 1), ("auth2", 2)];
    let (mut first, mut num) = (3, 1);
    let mut i = 6;
    while i < argv.len() {
        if argv[i].eq_ignore_ascii_case(b"keys") {
            if argv[3].is_empty() {
                first = i + 1;
                num = argv.len() - first;
            } else {
                num = 0;
            }
            break;
        }
        if let Some((_, skip)) = SKIP_KEYWORDS
            .iter()
            .find(|(k, _)| argv[i].eq_ignore_ascii_case(k.as_bytes()))
        {
            i += skip;
        }
        i += 1;
    }
    (first..first + num)
        .map(|pos| crate::commands::KeyReference {
            pos,
            flags: &["RW", "access", "delete"],
        })
        .collect()
}

/// addReplyErrorFormat("Target instance replied with error: %s"): the
/// target's line without its '-', newlines made spaces as Redis does.
fn reply_target_error(c: &mut Client, err: &[u8]) {
    let mut msg = b"ERR Target instance replied with error: ".to_vec();
    msg.extend(
        err.iter()
            .map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b }),
    );
    c.add_reply_error_bytes(&msg);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atoi_reads_a_port_like_c() {
        assert_eq!(atoi(b"6379"), 6379);
        assert_eq!(atoi(b" 12ab"), 12);
        assert_eq!(atoi(b"-5"), -5);
        assert_eq!(atoi(b"abc"), 0);
        assert_eq!(atoi(b""), 0);
    }

    #[test]
    fn write_command_is_resp() {
        let mut buf = Vec::new();
        write_command(&mut buf, &[b"SELECT", b"9"]);
        assert_eq!(buf, b"*2\r\n$6\r\nSELECT\r\n$1\r\n9\r\n");
    }
}
