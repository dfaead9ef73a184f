//! The command table (Redis's commands.c / commands.def and
//! populateCommandTable in server.c).
//!
//! One static table: name, handler, arity, flags, key positions, and for
//! container commands (CONFIG, CLIENT, OBJECT, ...) their subcommands. At
//! start-up `CommandTable::new` indexes it by lower-case name; that is the
//! only dispatch there is, so a debugger's stack always reads
//! `process_command -> call -> <name>_command`.
//!
//! Arity follows Redis: `n > 0` means exactly n arguments (the name counts),
//! `-n` means at least n.

use std::collections::HashMap;

use bytes::Bytes;
use storage::util::string_match;

use crate::commands_meta::{
    lookup_meta, BeginSearch, CommandArg, CommandDocs, CommandMeta, FindKeys, KeySpec,
};
use crate::latency::{self, CommandHistogram};
use crate::networking::Client;
use crate::server::Server;
use crate::{
    acl, config, db, debug, expire, info, monitor, multi, networking, object, pubsub, server,
    slowlog, t_string,
};

/// A command implementation: runs against the server on behalf of a client
/// and appends its reply to the client's output buffer.
pub type CommandProc = fn(&mut Server, &mut Client);

// Command flags (server.h CMD_*). Names match COMMAND INFO's flag names.
pub const CMD_WRITE: u64 = 1 << 0;
pub const CMD_READONLY: u64 = 1 << 1;
pub const CMD_DENYOOM: u64 = 1 << 2;
pub const CMD_MODULE: u64 = 1 << 3;
pub const CMD_ADMIN: u64 = 1 << 4;
pub const CMD_PUBSUB: u64 = 1 << 5;
pub const CMD_NOSCRIPT: u64 = 1 << 6;
pub const CMD_BLOCKING: u64 = 1 << 8;
pub const CMD_LOADING: u64 = 1 << 9;
pub const CMD_STALE: u64 = 1 << 10;
pub const CMD_SKIP_MONITOR: u64 = 1 << 11;
pub const CMD_SKIP_SLOWLOG: u64 = 1 << 12;
pub const CMD_ASKING: u64 = 1 << 13;
/// O(1) or O(log N): LATENCY records it as `fast-command`, not `command`.
pub const CMD_FAST: u64 = 1 << 14;
pub const CMD_NO_AUTH: u64 = 1 << 15;
pub const CMD_MAY_REPLICATE: u64 = 1 << 16;
pub const CMD_SENTINEL: u64 = 1 << 17;
pub const CMD_ONLY_SENTINEL: u64 = 1 << 18;
pub const CMD_NO_MANDATORY_KEYS: u64 = 1 << 19;
/// Guarded by an enable-*-command option (DEBUG).
pub const CMD_PROTECTED: u64 = 1 << 20;
pub const CMD_MODULE_GETKEYS: u64 = 1 << 21;
pub const CMD_MODULE_NO_CLUSTER: u64 = 1 << 22;
pub const CMD_NO_ASYNC_LOADING: u64 = 1 << 23;
pub const CMD_NO_MULTI: u64 = 1 << 24;
pub const CMD_MOVABLE_KEYS: u64 = 1 << 25;
pub const CMD_ALLOW_BUSY: u64 = 1 << 26;
pub const CMD_MODULE_GETCHANNELS: u64 = 1 << 27;

/// The flag names in COMMAND INFO order.
pub const CMD_FLAG_NAMES: &[(u64, &str)] = &[
    (CMD_WRITE, "write"),
    (CMD_READONLY, "readonly"),
    (CMD_DENYOOM, "denyoom"),
    (CMD_MODULE, "module"),
    (CMD_ADMIN, "admin"),
    (CMD_PUBSUB, "pubsub"),
    (CMD_NOSCRIPT, "noscript"),
    (CMD_BLOCKING, "blocking"),
    (CMD_LOADING, "loading"),
    (CMD_STALE, "stale"),
    (CMD_SKIP_MONITOR, "skip_monitor"),
    (CMD_SKIP_SLOWLOG, "skip_slowlog"),
    (CMD_ASKING, "asking"),
    (CMD_FAST, "fast"),
    (CMD_NO_AUTH, "no_auth"),
    (CMD_NO_MANDATORY_KEYS, "no_mandatory_keys"),
    (CMD_NO_ASYNC_LOADING, "no_async_loading"),
    (CMD_NO_MULTI, "no_multi"),
    (CMD_MOVABLE_KEYS, "movablekeys"),
    (CMD_ALLOW_BUSY, "allow_busy"),
];

/// One row of the static table.
pub struct CommandSpec {
    /// Lower-case name as Redis registers it.
    pub name: &'static str,
    pub proc: CommandProc,
    pub arity: i32,
    pub flags: u64,
    /// Legacy key positions (COMMAND INFO first/last/step): first key index,
    /// last key index (-1 = last argument, -2 = second to last...), step.
    pub first_key: i32,
    pub last_key: i32,
    pub key_step: i32,
    /// Subcommands of a container command (CONFIG GET, CLIENT LIST...).
    pub subcommands: &'static [CommandSpec],
}

/// Shorthand constructor so each table row stays on one or two lines.
const fn cmd(
    name: &'static str,
    proc: CommandProc,
    arity: i32,
    flags: u64,
    keys: (i32, i32, i32),
) -> CommandSpec {
    CommandSpec {
        name,
        proc,
        arity,
        flags,
        first_key: keys.0,
        last_key: keys.1,
        key_step: keys.2,
        subcommands: &[],
    }
}

/// A container command (CONFIG, CLIENT...). Its own proc runs only when it
/// is called without a subcommand and its arity allows that (COMMAND alone).
const fn container(
    name: &'static str,
    proc: CommandProc,
    arity: i32,
    subs: &'static [CommandSpec],
) -> CommandSpec {
    CommandSpec {
        name,
        proc,
        arity,
        flags: 0,
        first_key: 0,
        last_key: 0,
        key_step: 0,
        subcommands: subs,
    }
}

const NOKEYS: (i32, i32, i32) = (0, 0, 0);
const KEY1: (i32, i32, i32) = (1, 1, 1);

const W: u64 = CMD_WRITE;
const R: u64 = CMD_READONLY;
const F: u64 = CMD_FAST;
const M: u64 = CMD_DENYOOM;
const A: u64 = CMD_ADMIN;
const NS: u64 = CMD_NOSCRIPT;
const LD: u64 = CMD_LOADING;
const ST: u64 = CMD_STALE;

/// The whole table, grouped as Redis's documentation groups commands.
pub static COMMAND_TABLE: &[CommandSpec] = &[
    // ---- strings (t_string.c) ----
    cmd("get", t_string::get_command, 2, R | F, KEY1),
    cmd("set", t_string::set_command, -3, W | M, KEY1),
    cmd("setnx", t_string::setnx_command, 3, W | M | F, KEY1),
    cmd("setex", t_string::setex_command, 4, W | M, KEY1),
    cmd("psetex", t_string::psetex_command, 4, W | M, KEY1),
    cmd("getset", t_string::getset_command, 3, W | M | F, KEY1),
    cmd("getdel", t_string::getdel_command, 2, W | F, KEY1),
    cmd("getex", t_string::getex_command, -2, W | F, KEY1),
    cmd("mget", t_string::mget_command, -2, R | F, (1, -1, 1)),
    cmd("mset", t_string::mset_command, -3, W | M, (1, -1, 2)),
    cmd("msetnx", t_string::msetnx_command, -3, W | M, (1, -1, 2)),
    cmd("append", t_string::append_command, 3, W | M | F, KEY1),
    cmd("strlen", t_string::strlen_command, 2, R | F, KEY1),
    cmd("incr", t_string::incr_command, 2, W | M | F, KEY1),
    cmd("decr", t_string::decr_command, 2, W | M | F, KEY1),
    cmd("incrby", t_string::incrby_command, 3, W | M | F, KEY1),
    cmd("decrby", t_string::decrby_command, 3, W | M | F, KEY1),
    cmd(
        "incrbyfloat",
        t_string::incrbyfloat_command,
        3,
        W | M | F,
        KEY1,
    ),
    cmd("getrange", t_string::getrange_command, 4, R, KEY1),
    cmd("substr", t_string::getrange_command, 4, R, KEY1),
    cmd("setrange", t_string::setrange_command, 4, W | M, KEY1),
    cmd("lcs", t_string::lcs_command, -3, R, (1, 2, 1)),
    // ---- bitmaps (bitops.c) ----
    cmd("setbit", crate::bitops::setbit_command, 4, W | M, KEY1),
    cmd("getbit", crate::bitops::getbit_command, 3, R | F, KEY1),
    cmd("bitcount", crate::bitops::bitcount_command, -2, R, KEY1),
    cmd("bitpos", crate::bitops::bitpos_command, -3, R, KEY1),
    cmd("bitop", crate::bitops::bitop_command, -4, W | M, (2, -1, 1)),
    cmd("bitfield", crate::bitops::bitfield_command, -2, W | M, KEY1),
    cmd(
        "bitfield_ro",
        crate::bitops::bitfield_ro_command,
        -2,
        R | F,
        KEY1,
    ),
    // ---- lists (t_list.c), with the blocking B* variants ----
    cmd("lpush", crate::t_list::lpush_command, -3, W | M | F, KEY1),
    cmd("rpush", crate::t_list::rpush_command, -3, W | M | F, KEY1),
    cmd("lpushx", crate::t_list::lpushx_command, -3, W | M | F, KEY1),
    cmd("rpushx", crate::t_list::rpushx_command, -3, W | M | F, KEY1),
    cmd("lpop", crate::t_list::lpop_command, -2, W | F, KEY1),
    cmd("rpop", crate::t_list::rpop_command, -2, W | F, KEY1),
    cmd("lrange", crate::t_list::lrange_command, 4, R, KEY1),
    cmd("llen", crate::t_list::llen_command, 2, R | F, KEY1),
    cmd("lindex", crate::t_list::lindex_command, 3, R, KEY1),
    cmd("lset", crate::t_list::lset_command, 4, W | M, KEY1),
    cmd("lrem", crate::t_list::lrem_command, 4, W, KEY1),
    cmd("ltrim", crate::t_list::ltrim_command, 4, W, KEY1),
    cmd("linsert", crate::t_list::linsert_command, 5, W | M, KEY1),
    cmd("lpos", crate::t_list::lpos_command, -3, R, KEY1),
    cmd("lmove", crate::t_list::lmove_command, 5, W | M, (1, 2, 1)),
    cmd(
        "rpoplpush",
        crate::t_list::rpoplpush_command,
        3,
        W | M,
        (1, 2, 1),
    ),
    cmd(
        "lmpop",
        crate::t_list::lmpop_command,
        -4,
        W | CMD_MOVABLE_KEYS,
        NOKEYS,
    ),
    cmd(
        "bzpopmin",
        crate::t_zset::bzpopmin_command,
        -3,
        W | NS | F | CMD_BLOCKING,
        (1, -2, 1),
    ),
    cmd(
        "bzpopmax",
        crate::t_zset::bzpopmax_command,
        -3,
        W | NS | F | CMD_BLOCKING,
        (1, -2, 1),
    ),
    cmd(
        "bzmpop",
        crate::t_zset::bzmpop_command,
        -5,
        W | CMD_BLOCKING | CMD_MOVABLE_KEYS,
        NOKEYS,
    ),
    cmd(
        "blmpop",
        crate::t_list::blmpop_command,
        -5,
        W | CMD_BLOCKING | CMD_MOVABLE_KEYS,
        NOKEYS,
    ),
    cmd(
        "blpop",
        crate::t_list::blpop_command,
        -3,
        W | NS | CMD_BLOCKING,
        (1, -2, 1),
    ),
    cmd(
        "brpop",
        crate::t_list::brpop_command,
        -3,
        W | NS | CMD_BLOCKING,
        (1, -2, 1),
    ),
    cmd(
        "blmove",
        crate::t_list::blmove_command,
        6,
        W | M | NS | CMD_BLOCKING,
        (1, 2, 1),
    ),
    cmd(
        "brpoplpush",
        crate::t_list::brpoplpush_command,
        4,
        W | M | NS | CMD_BLOCKING,
        (1, 2, 1),
    ),
    // ---- sets (t_set.c) ----
    cmd("sadd", crate::t_set::sadd_command, -3, W | M | F, KEY1),
    cmd("srem", crate::t_set::srem_command, -3, W | F, KEY1),
    cmd("smembers", crate::t_set::smembers_command, 2, R, KEY1),
    cmd("sismember", crate::t_set::sismember_command, 3, R | F, KEY1),
    cmd(
        "smismember",
        crate::t_set::smismember_command,
        -3,
        R | F,
        KEY1,
    ),
    cmd("scard", crate::t_set::scard_command, 2, R | F, KEY1),
    cmd("spop", crate::t_set::spop_command, -2, W | F, KEY1),
    cmd(
        "srandmember",
        crate::t_set::srandmember_command,
        -2,
        R,
        KEY1,
    ),
    cmd("smove", crate::t_set::smove_command, 4, W | F, (1, 2, 1)),
    cmd("sinter", crate::t_set::sinter_command, -2, R, (1, -1, 1)),
    cmd(
        "sintercard",
        crate::t_set::sintercard_command,
        -3,
        R | CMD_MOVABLE_KEYS,
        NOKEYS,
    ),
    cmd("sunion", crate::t_set::sunion_command, -2, R, (1, -1, 1)),
    cmd("sdiff", crate::t_set::sdiff_command, -2, R, (1, -1, 1)),
    cmd(
        "sinterstore",
        crate::t_set::sinterstore_command,
        -3,
        W | M,
        (1, -1, 1),
    ),
    cmd(
        "sunionstore",
        crate::t_set::sunionstore_command,
        -3,
        W | M,
        (1, -1, 1),
    ),
    cmd(
        "sdiffstore",
        crate::t_set::sdiffstore_command,
        -3,
        W | M,
        (1, -1, 1),
    ),
    cmd("sscan", crate::t_set::sscan_command, -3, R, KEY1),
    // ---- hashes (t_hash.c) ----
    cmd("hset", crate::t_hash::hset_command, -4, W | M | F, KEY1),
    cmd("hsetnx", crate::t_hash::hsetnx_command, 4, W | M | F, KEY1),
    cmd("hget", crate::t_hash::hget_command, 3, R | F, KEY1),
    cmd("hmget", crate::t_hash::hmget_command, -3, R | F, KEY1),
    cmd("hmset", crate::t_hash::hmset_command, -4, W | M | F, KEY1),
    cmd("hdel", crate::t_hash::hdel_command, -3, W | F, KEY1),
    cmd("hlen", crate::t_hash::hlen_command, 2, R | F, KEY1),
    cmd("hstrlen", crate::t_hash::hstrlen_command, 3, R | F, KEY1),
    cmd("hexists", crate::t_hash::hexists_command, 3, R | F, KEY1),
    cmd("hgetall", crate::t_hash::hgetall_command, 2, R, KEY1),
    cmd("hkeys", crate::t_hash::hkeys_command, 2, R, KEY1),
    cmd("hvals", crate::t_hash::hvals_command, 2, R, KEY1),
    cmd(
        "hincrby",
        crate::t_hash::hincrby_command,
        4,
        W | M | F,
        KEY1,
    ),
    cmd(
        "hincrbyfloat",
        crate::t_hash::hincrbyfloat_command,
        4,
        W | M | F,
        KEY1,
    ),
    cmd("hrandfield", crate::t_hash::hrandfield_command, -2, R, KEY1),
    cmd("hscan", crate::t_hash::hscan_command, -3, R, KEY1),
    // ---- sorted sets (t_zset.c) ----
    cmd("zadd", crate::t_zset::zadd_command, -4, W | M | F, KEY1),
    cmd(
        "zincrby",
        crate::t_zset::zincrby_command,
        4,
        W | M | F,
        KEY1,
    ),
    cmd("zrem", crate::t_zset::zrem_command, -3, W | F, KEY1),
    cmd(
        "zremrangebyscore",
        crate::t_zset::zremrangebyscore_command,
        4,
        W,
        KEY1,
    ),
    cmd(
        "zremrangebyrank",
        crate::t_zset::zremrangebyrank_command,
        4,
        W,
        KEY1,
    ),
    cmd(
        "zremrangebylex",
        crate::t_zset::zremrangebylex_command,
        4,
        W,
        KEY1,
    ),
    cmd(
        "zunionstore",
        crate::t_zset::zunionstore_command,
        -4,
        W | M | CMD_MOVABLE_KEYS,
        KEY1,
    ),
    cmd(
        "zinterstore",
        crate::t_zset::zinterstore_command,
        -4,
        W | M | CMD_MOVABLE_KEYS,
        KEY1,
    ),
    cmd(
        "zdiffstore",
        crate::t_zset::zdiffstore_command,
        -4,
        W | M | CMD_MOVABLE_KEYS,
        KEY1,
    ),
    cmd(
        "zunion",
        crate::t_zset::zunion_command,
        -3,
        R | CMD_MOVABLE_KEYS,
        NOKEYS,
    ),
    cmd(
        "zinter",
        crate::t_zset::zinter_command,
        -3,
        R | CMD_MOVABLE_KEYS,
        NOKEYS,
    ),
    cmd(
        "zintercard",
        crate::t_zset::zintercard_command,
        -3,
        R | CMD_MOVABLE_KEYS,
        NOKEYS,
    ),
    cmd(
        "zdiff",
        crate::t_zset::zdiff_command,
        -3,
        R | CMD_MOVABLE_KEYS,
        NOKEYS,
    ),
    cmd("zrange", crate::t_zset::zrange_command, -4, R, KEY1),
    cmd(
        "zrangestore",
        crate::t_zset::zrangestore_command,
        -5,
        W | M,
        (1, 2, 1),
    ),
    cmd(
        "zrangebyscore",
        crate::t_zset::zrangebyscore_command,
        -4,
        R,
        KEY1,
    ),
    cmd(
        "zrevrangebyscore",
        crate::t_zset::zrevrangebyscore_command,
        -4,
        R,
        KEY1,
    ),
    cmd(
        "zrangebylex",
        crate::t_zset::zrangebylex_command,
        -4,
        R,
        KEY1,
    ),
    cmd(
        "zrevrangebylex",
        crate::t_zset::zrevrangebylex_command,
        -4,
        R,
        KEY1,
    ),
    cmd("zcount", crate::t_zset::zcount_command, 4, R | F, KEY1),
    cmd(
        "zlexcount",
        crate::t_zset::zlexcount_command,
        4,
        R | F,
        KEY1,
    ),
    cmd("zrevrange", crate::t_zset::zrevrange_command, -4, R, KEY1),
    cmd("zcard", crate::t_zset::zcard_command, 2, R | F, KEY1),
    cmd("zscore", crate::t_zset::zscore_command, 3, R | F, KEY1),
    cmd("zmscore", crate::t_zset::zmscore_command, -3, R | F, KEY1),
    cmd("zrank", crate::t_zset::zrank_command, 3, R | F, KEY1),
    cmd("zrevrank", crate::t_zset::zrevrank_command, 3, R | F, KEY1),
    cmd("zscan", crate::t_zset::zscan_command, -3, R, KEY1),
    cmd("zpopmin", crate::t_zset::zpopmin_command, -2, W | F, KEY1),
    cmd("zpopmax", crate::t_zset::zpopmax_command, -2, W | F, KEY1),
    cmd(
        "zmpop",
        crate::t_zset::zmpop_command,
        -4,
        W | CMD_MOVABLE_KEYS,
        NOKEYS,
    ),
    cmd(
        "zrandmember",
        crate::t_zset::zrandmember_command,
        -2,
        R,
        KEY1,
    ),
    // ---- streams (t_stream.c); XREAD/XREADGROUP find keys after STREAMS ----
    cmd("xadd", crate::t_stream::xadd_command, -5, W | M | F, KEY1),
    cmd("xrange", crate::t_stream::xrange_command, -4, R, KEY1),
    cmd("xrevrange", crate::t_stream::xrevrange_command, -4, R, KEY1),
    cmd("xlen", crate::t_stream::xlen_command, 2, R | F, KEY1),
    cmd("xdel", crate::t_stream::xdel_command, -3, W | F, KEY1),
    cmd("xtrim", crate::t_stream::xtrim_command, -4, W, KEY1),
    cmd(
        "xread",
        crate::t_stream::xread_command,
        -4,
        R | CMD_BLOCKING | CMD_MOVABLE_KEYS,
        NOKEYS,
    ),
    cmd(
        "xreadgroup",
        crate::t_stream::xreadgroup_command,
        -7,
        W | CMD_BLOCKING | CMD_MOVABLE_KEYS,
        NOKEYS,
    ),
    container("xgroup", server::container_command, -2, XGROUP_SUBCOMMANDS),
    cmd("xack", crate::t_stream::xack_command, -4, W | F, KEY1),
    cmd("xpending", crate::t_stream::xpending_command, -3, R, KEY1),
    cmd("xclaim", crate::t_stream::xclaim_command, -6, W | F, KEY1),
    cmd(
        "xautoclaim",
        crate::t_stream::xautoclaim_command,
        -6,
        W | F,
        KEY1,
    ),
    container("xinfo", server::container_command, -2, XINFO_SUBCOMMANDS),
    cmd(
        "xsetid",
        crate::t_stream::xsetid_command,
        -3,
        W | M | F,
        KEY1,
    ),
    // ---- hyperloglog (hyperloglog.c): HLLs are strings ----
    cmd(
        "pfadd",
        crate::hyperloglog::pfadd_command,
        -2,
        W | M | F,
        KEY1,
    ),
    cmd(
        "pfcount",
        crate::hyperloglog::pfcount_command,
        -2,
        R | CMD_MAY_REPLICATE,
        (1, -1, 1),
    ),
    cmd(
        "pfmerge",
        crate::hyperloglog::pfmerge_command,
        -2,
        W | M,
        (1, -1, 1),
    ),
    cmd(
        "pfselftest",
        crate::hyperloglog::pfselftest_command,
        1,
        A,
        NOKEYS,
    ),
    cmd(
        "pfdebug",
        crate::hyperloglog::pfdebug_command,
        3,
        W | M | A,
        (2, 2, 1),
    ),
    // ---- geo (geo.c): sorted sets of geohash scores ----
    cmd("geoadd", crate::geo::geoadd_command, -5, W | M, KEY1),
    cmd("geopos", crate::geo::geopos_command, -2, R, KEY1),
    cmd("geodist", crate::geo::geodist_command, -4, R, KEY1),
    cmd("geohash", crate::geo::geohash_command, -2, R, KEY1),
    cmd("geosearch", crate::geo::geosearch_command, -7, R, KEY1),
    cmd(
        "geosearchstore",
        crate::geo::geosearchstore_command,
        -8,
        W | M,
        (1, 2, 1),
    ),
    cmd(
        "georadius",
        crate::geo::georadius_command,
        -6,
        W | M | CMD_MOVABLE_KEYS,
        KEY1,
    ),
    cmd(
        "georadius_ro",
        crate::geo::georadius_ro_command,
        -6,
        R,
        KEY1,
    ),
    cmd(
        "georadiusbymember",
        crate::geo::georadiusbymember_command,
        -5,
        W | M | CMD_MOVABLE_KEYS,
        KEY1,
    ),
    cmd(
        "georadiusbymember_ro",
        crate::geo::georadiusbymember_ro_command,
        -5,
        R,
        KEY1,
    ),
    // ---- transactions (multi.c) ----
    cmd(
        "multi",
        multi::multi_command,
        1,
        NS | LD | ST | F | CMD_ALLOW_BUSY,
        NOKEYS,
    ),
    cmd(
        "exec",
        multi::exec_command,
        1,
        NS | LD | ST | CMD_SKIP_SLOWLOG,
        NOKEYS,
    ),
    cmd(
        "discard",
        multi::discard_command,
        1,
        NS | LD | ST | F | CMD_ALLOW_BUSY,
        NOKEYS,
    ),
    cmd(
        "watch",
        multi::watch_command,
        -2,
        NS | LD | ST | F | CMD_ALLOW_BUSY,
        (1, -1, 1),
    ),
    cmd(
        "unwatch",
        multi::unwatch_command,
        1,
        NS | LD | ST | F | CMD_ALLOW_BUSY,
        NOKEYS,
    ),
    // ---- SORT (sort.c) ----
    cmd(
        "sort",
        crate::sort::sort_command,
        -2,
        W | M | CMD_MOVABLE_KEYS,
        KEY1,
    ),
    cmd(
        "sort_ro",
        crate::sort::sort_ro_command,
        -2,
        R | CMD_MOVABLE_KEYS,
        KEY1,
    ),
    // ---- keyspace (db.c, expire.c) ----
    cmd("del", db::del_command, -2, W, (1, -1, 1)),
    cmd("unlink", db::unlink_command, -2, W | F, (1, -1, 1)),
    cmd("exists", db::exists_command, -2, R | F, (1, -1, 1)),
    cmd("type", db::type_command, 2, R | F, KEY1),
    cmd("rename", db::rename_command, 3, W, (1, 2, 1)),
    cmd("renamenx", db::renamenx_command, 3, W | F, (1, 2, 1)),
    cmd("copy", db::copy_command, -3, W | M, (1, 2, 1)),
    cmd("dump", crate::dump::dump_command, 2, R, KEY1),
    cmd("restore", crate::dump::restore_command, -4, W | M, KEY1),
    // RESTORE with the asking flag (cluster.c restoreCommand): what MIGRATE
    // sends in cluster mode; without a cluster it is RESTORE.
    cmd(
        "restore-asking",
        crate::dump::restore_command,
        -4,
        W | M | CMD_ASKING,
        KEY1,
    ),
    cmd(
        "migrate",
        crate::migrate::migrate_command,
        -6,
        W | CMD_MOVABLE_KEYS,
        (3, 3, 1),
    ),
    cmd("touch", db::touch_command, -2, R | F, (1, -1, 1)),
    cmd("keys", db::keys_command, 2, R, NOKEYS),
    cmd("scan", db::scan_command, -2, R, NOKEYS),
    cmd("randomkey", db::randomkey_command, 1, R, NOKEYS),
    cmd("dbsize", db::dbsize_command, 1, R | F, NOKEYS),
    cmd("select", db::select_command, 2, LD | ST | F, NOKEYS),
    cmd("swapdb", db::swapdb_command, 3, W | F, NOKEYS),
    cmd("move", db::move_command, 3, W | F, KEY1),
    cmd("flushdb", db::flushdb_command, -1, W, NOKEYS),
    cmd("flushall", db::flushall_command, -1, W, NOKEYS),
    cmd("expire", expire::expire_command, -3, W | F, KEY1),
    cmd("pexpire", expire::pexpire_command, -3, W | F, KEY1),
    cmd("expireat", expire::expireat_command, -3, W | F, KEY1),
    cmd("pexpireat", expire::pexpireat_command, -3, W | F, KEY1),
    cmd("ttl", expire::ttl_command, 2, R | F, KEY1),
    cmd("pttl", expire::pttl_command, 2, R | F, KEY1),
    cmd("expiretime", expire::expiretime_command, 2, R | F, KEY1),
    cmd("pexpiretime", expire::pexpiretime_command, 2, R | F, KEY1),
    cmd("persist", expire::persist_command, 2, W | F, KEY1),
    // ---- connection (networking.c, server.c) ----
    cmd("ping", server::ping_command, -1, F | CMD_SENTINEL, NOKEYS),
    cmd("echo", server::echo_command, 2, LD | ST | F, NOKEYS),
    cmd(
        "quit",
        networking::quit_command,
        -1,
        NS | LD | ST | F | CMD_NO_AUTH | CMD_ALLOW_BUSY,
        NOKEYS,
    ),
    cmd(
        "reset",
        networking::reset_command,
        1,
        NS | LD | ST | F | CMD_NO_AUTH | CMD_ALLOW_BUSY,
        NOKEYS,
    ),
    cmd(
        "hello",
        networking::hello_command,
        -1,
        NS | LD | ST | F | CMD_NO_AUTH | CMD_ALLOW_BUSY,
        NOKEYS,
    ),
    cmd(
        "auth",
        networking::auth_command,
        -2,
        NS | LD | ST | F | CMD_NO_AUTH | CMD_ALLOW_BUSY,
        NOKEYS,
    ),
    container("client", server::container_command, -2, CLIENT_SUBCOMMANDS),
    container("acl", server::container_command, -2, ACL_SUBCOMMANDS),
    // ---- pub/sub (pubsub.c); shard channels are "keys" for cluster routing ----
    cmd(
        "subscribe",
        pubsub::subscribe_command,
        -2,
        CMD_PUBSUB | NS | LD | ST,
        NOKEYS,
    ),
    cmd(
        "unsubscribe",
        pubsub::unsubscribe_command,
        -1,
        CMD_PUBSUB | NS | LD | ST,
        NOKEYS,
    ),
    cmd(
        "psubscribe",
        pubsub::psubscribe_command,
        -2,
        CMD_PUBSUB | NS | LD | ST,
        NOKEYS,
    ),
    cmd(
        "punsubscribe",
        pubsub::punsubscribe_command,
        -1,
        CMD_PUBSUB | NS | LD | ST,
        NOKEYS,
    ),
    cmd(
        "publish",
        pubsub::publish_command,
        3,
        CMD_PUBSUB | LD | ST | F | CMD_MAY_REPLICATE,
        NOKEYS,
    ),
    cmd(
        "ssubscribe",
        pubsub::ssubscribe_command,
        -2,
        CMD_PUBSUB | NS | LD | ST,
        (1, -1, 1),
    ),
    cmd(
        "sunsubscribe",
        pubsub::sunsubscribe_command,
        -1,
        CMD_PUBSUB | NS | LD | ST,
        (1, -1, 1),
    ),
    cmd(
        "spublish",
        pubsub::spublish_command,
        3,
        CMD_PUBSUB | LD | ST | F | CMD_MAY_REPLICATE,
        KEY1,
    ),
    container("pubsub", server::container_command, -2, PUBSUB_SUBCOMMANDS),
    // ---- functions (functions.c); FCALL's keys follow numkeys ----
    container(
        "function",
        server::container_command,
        -2,
        FUNCTION_SUBCOMMANDS,
    ),
    cmd(
        "fcall",
        crate::function::fcall_command,
        -3,
        NS | ST | CMD_SKIP_MONITOR | CMD_MAY_REPLICATE | CMD_NO_MANDATORY_KEYS | CMD_MOVABLE_KEYS,
        NOKEYS,
    ),
    cmd(
        "fcall_ro",
        crate::function::fcallro_command,
        -3,
        R | NS | ST | CMD_SKIP_MONITOR | CMD_NO_MANDATORY_KEYS | CMD_MOVABLE_KEYS,
        NOKEYS,
    ),
    // ---- server (server.c, config.c, object.c, debug.c) ----
    CommandSpec {
        flags: LD | ST,
        ..container("command", command_command, -1, COMMAND_SUBCOMMANDS)
    },
    container("config", server::container_command, -2, CONFIG_SUBCOMMANDS),
    cmd("info", info::info_command, -1, LD | ST, NOKEYS),
    cmd("time", server::time_command, 1, LD | ST | F, NOKEYS),
    cmd("lastsave", server::lastsave_command, 1, LD | ST | F, NOKEYS),
    // ---- replication (replication/) ----
    cmd(
        "replicaof",
        crate::replication::replica::replicaof_command,
        3,
        A | NS | ST | CMD_NO_ASYNC_LOADING,
        NOKEYS,
    ),
    cmd(
        "slaveof",
        crate::replication::replica::replicaof_command,
        3,
        A | NS | ST | CMD_NO_ASYNC_LOADING,
        NOKEYS,
    ),
    cmd(
        "role",
        crate::replication::role_command,
        1,
        NS | LD | ST | F,
        NOKEYS,
    ),
    cmd(
        "save",
        crate::rdb::save_command,
        1,
        CMD_NO_ASYNC_LOADING | A | NS | CMD_NO_MULTI,
        NOKEYS,
    ),
    cmd(
        "bgsave",
        crate::rdb::bgsave_command,
        -1,
        CMD_NO_ASYNC_LOADING | A | NS,
        NOKEYS,
    ),
    // ---- replication, the master side (replication/master.rs) ----
    cmd(
        "sync",
        crate::replication::master::sync_command,
        1,
        A | NS | CMD_NO_ASYNC_LOADING | CMD_NO_MULTI,
        NOKEYS,
    ),
    cmd(
        "psync",
        crate::replication::master::sync_command,
        -3,
        A | NS | CMD_NO_ASYNC_LOADING | CMD_NO_MULTI,
        NOKEYS,
    ),
    cmd(
        "replconf",
        crate::replication::master::replconf_command,
        -1,
        A | NS | LD | ST | CMD_ALLOW_BUSY,
        NOKEYS,
    ),
    cmd(
        "failover",
        crate::replication::failover::failover_command,
        -1,
        A | NS | ST,
        NOKEYS,
    ),
    cmd(
        "wait",
        crate::replication::master::wait_command,
        3,
        NS,
        NOKEYS,
    ),
    cmd(
        "bgrewriteaof",
        crate::aof::bgrewriteaof_command,
        1,
        CMD_NO_ASYNC_LOADING | A | NS,
        NOKEYS,
    ),
    cmd(
        "shutdown",
        crate::shutdown::shutdown_command,
        -1,
        A | NS | LD | ST | CMD_NO_MULTI | CMD_SENTINEL | CMD_ALLOW_BUSY,
        NOKEYS,
    ),
    cmd(
        "debug",
        debug::debug_command,
        -2,
        A | NS | LD | ST | CMD_PROTECTED,
        NOKEYS,
    ),
    container("object", server::container_command, -2, OBJECT_SUBCOMMANDS),
    // Cluster-only commands, answered as a standalone Redis (cluster.rs).
    container(
        "cluster",
        server::container_command,
        -2,
        CLUSTER_SUBCOMMANDS,
    ),
    cmd(
        "readonly",
        crate::cluster::readonly_command,
        1,
        F | LD | ST,
        NOKEYS,
    ),
    cmd(
        "readwrite",
        crate::cluster::readwrite_command,
        1,
        F | LD | ST,
        NOKEYS,
    ),
    cmd("asking", crate::cluster::asking_command, 1, F, NOKEYS),
    container("memory", server::container_command, -2, MEMORY_SUBCOMMANDS),
    container("module", server::container_command, -2, MODULE_SUBCOMMANDS),
    cmd("lolwut", crate::lolwut::lolwut_command, -1, R | F, NOKEYS),
    container(
        "slowlog",
        server::container_command,
        -2,
        SLOWLOG_SUBCOMMANDS,
    ),
    container(
        "latency",
        server::container_command,
        -2,
        LATENCY_SUBCOMMANDS,
    ),
    cmd(
        "monitor",
        monitor::monitor_command,
        1,
        A | NS | LD | ST,
        NOKEYS,
    ),
    // ---- scripting (eval.c): keys come from numkeys, and MONITOR shows
    // the commands the script runs (skip_monitor) ----
    cmd(
        "eval",
        crate::eval::eval_command,
        -3,
        NS | ST | CMD_SKIP_MONITOR | CMD_MAY_REPLICATE | CMD_NO_MANDATORY_KEYS | CMD_MOVABLE_KEYS,
        NOKEYS,
    ),
    cmd(
        "evalsha",
        crate::eval::evalsha_command,
        -3,
        NS | ST | CMD_SKIP_MONITOR | CMD_MAY_REPLICATE | CMD_NO_MANDATORY_KEYS | CMD_MOVABLE_KEYS,
        NOKEYS,
    ),
    cmd(
        "eval_ro",
        crate::eval::eval_ro_command,
        -3,
        R | NS | ST | CMD_SKIP_MONITOR | CMD_NO_MANDATORY_KEYS | CMD_MOVABLE_KEYS,
        NOKEYS,
    ),
    cmd(
        "evalsha_ro",
        crate::eval::evalsha_ro_command,
        -3,
        R | NS | ST | CMD_SKIP_MONITOR | CMD_NO_MANDATORY_KEYS | CMD_MOVABLE_KEYS,
        NOKEYS,
    ),
    container("script", server::container_command, -2, SCRIPT_SUBCOMMANDS),
];

static SCRIPT_SUBCOMMANDS: &[CommandSpec] = &[
    cmd("exists", crate::eval::script_exists_command, -3, NS, NOKEYS),
    cmd("debug", crate::eval::script_debug_command, 3, NS, NOKEYS),
    cmd(
        "kill",
        crate::eval::script_kill_command,
        2,
        NS | CMD_ALLOW_BUSY,
        NOKEYS,
    ),
    cmd("load", crate::eval::script_load_command, 3, NS | ST, NOKEYS),
    cmd("flush", crate::eval::script_flush_command, -2, NS, NOKEYS),
    cmd("help", crate::eval::script_help_command, 2, LD | ST, NOKEYS),
];

static PUBSUB_SUBCOMMANDS: &[CommandSpec] = &[
    cmd(
        "channels",
        pubsub::pubsub_channels_command,
        -2,
        CMD_PUBSUB | LD | ST,
        NOKEYS,
    ),
    cmd(
        "numsub",
        pubsub::pubsub_numsub_command,
        -2,
        CMD_PUBSUB | LD | ST,
        NOKEYS,
    ),
    cmd(
        "numpat",
        pubsub::pubsub_numpat_command,
        2,
        CMD_PUBSUB | LD | ST,
        NOKEYS,
    ),
    cmd(
        "shardchannels",
        pubsub::pubsub_shardchannels_command,
        -2,
        CMD_PUBSUB | LD | ST,
        NOKEYS,
    ),
    cmd(
        "shardnumsub",
        pubsub::pubsub_shardnumsub_command,
        -2,
        CMD_PUBSUB | LD | ST,
        NOKEYS,
    ),
    cmd("help", pubsub::pubsub_help_command, 2, LD | ST, NOKEYS),
];

/// FUNCTION DUMP and RESTORE are missing on purpose (no RDB format in
/// redis-lite): they answer as unknown subcommands.
static FUNCTION_SUBCOMMANDS: &[CommandSpec] = &[
    cmd(
        "dump",
        crate::function::function_dump_command,
        2,
        NS,
        NOKEYS,
    ),
    cmd(
        "restore",
        crate::function::function_restore_command,
        -3,
        W | M | NS,
        NOKEYS,
    ),
    cmd(
        "load",
        crate::function::function_load_command,
        -3,
        W | M | NS,
        NOKEYS,
    ),
    cmd(
        "list",
        crate::function::function_list_command,
        -2,
        NS,
        NOKEYS,
    ),
    cmd(
        "delete",
        crate::function::function_delete_command,
        3,
        W | NS,
        NOKEYS,
    ),
    cmd(
        "flush",
        crate::function::function_flush_command,
        -2,
        W | NS,
        NOKEYS,
    ),
    cmd(
        "stats",
        crate::function::function_stats_command,
        2,
        NS | CMD_ALLOW_BUSY,
        NOKEYS,
    ),
    cmd(
        "kill",
        crate::function::function_kill_command,
        2,
        NS | CMD_ALLOW_BUSY,
        NOKEYS,
    ),
    cmd(
        "help",
        crate::function::function_help_command,
        2,
        LD | ST,
        NOKEYS,
    ),
];

static SLOWLOG_SUBCOMMANDS: &[CommandSpec] = &[
    cmd("get", slowlog::slowlog_get_command, -2, A | LD | ST, NOKEYS),
    cmd("len", slowlog::slowlog_len_command, 2, A | LD | ST, NOKEYS),
    cmd(
        "reset",
        slowlog::slowlog_reset_command,
        2,
        A | LD | ST,
        NOKEYS,
    ),
    cmd("help", slowlog::slowlog_help_command, 2, LD | ST, NOKEYS),
];

static LATENCY_SUBCOMMANDS: &[CommandSpec] = &[
    cmd(
        "latest",
        latency::latency_latest_command,
        2,
        A | NS | LD | ST,
        NOKEYS,
    ),
    cmd(
        "history",
        latency::latency_history_command,
        3,
        A | NS | LD | ST,
        NOKEYS,
    ),
    cmd(
        "reset",
        latency::latency_reset_command,
        -2,
        A | NS | LD | ST,
        NOKEYS,
    ),
    cmd(
        "graph",
        latency::latency_graph_command,
        3,
        A | NS | LD | ST,
        NOKEYS,
    ),
    cmd(
        "doctor",
        latency::latency_doctor_command,
        2,
        A | NS | LD | ST,
        NOKEYS,
    ),
    cmd(
        "histogram",
        latency::latency_histogram_command,
        -2,
        A | NS | LD | ST,
        NOKEYS,
    ),
    cmd("help", latency::latency_help_command, 2, LD | ST, NOKEYS),
];

static CLIENT_SUBCOMMANDS: &[CommandSpec] = &[
    cmd("id", networking::client_id_command, 2, NS | LD | ST, NOKEYS),
    cmd(
        "reply",
        networking::client_reply_command,
        3,
        NS | LD | ST,
        NOKEYS,
    ),
    cmd(
        "info",
        networking::client_info_command,
        2,
        NS | LD | ST,
        NOKEYS,
    ),
    cmd(
        "list",
        networking::client_list_command,
        -2,
        A | NS | LD | ST,
        NOKEYS,
    ),
    cmd(
        "kill",
        networking::client_kill_command,
        -3,
        A | NS | LD | ST,
        NOKEYS,
    ),
    cmd(
        "setname",
        networking::client_setname_command,
        3,
        NS | LD | ST,
        NOKEYS,
    ),
    cmd(
        "getname",
        networking::client_getname_command,
        2,
        NS | LD | ST,
        NOKEYS,
    ),
    cmd("help", networking::client_help_command, 2, LD | ST, NOKEYS),
    cmd(
        "no-evict",
        networking::client_no_evict_command,
        3,
        A | NS | LD | ST,
        NOKEYS,
    ),
    cmd(
        "getredir",
        crate::tracking::client_getredir_command,
        2,
        NS | LD | ST,
        NOKEYS,
    ),
    cmd(
        "unblock",
        networking::client_unblock_command,
        -3,
        A | NS | LD | ST,
        NOKEYS,
    ),
    cmd(
        "pause",
        networking::client_pause_command,
        -3,
        A | NS | LD | ST,
        NOKEYS,
    ),
    cmd(
        "unpause",
        networking::client_unpause_command,
        2,
        A | NS | LD | ST,
        NOKEYS,
    ),
    cmd(
        "caching",
        crate::tracking::client_caching_command,
        3,
        NS | LD | ST,
        NOKEYS,
    ),
    cmd(
        "tracking",
        crate::tracking::client_tracking_command,
        -3,
        NS | LD | ST,
        NOKEYS,
    ),
    cmd(
        "trackinginfo",
        crate::tracking::client_trackinginfo_command,
        2,
        NS | LD | ST,
        NOKEYS,
    ),
];

static COMMAND_SUBCOMMANDS: &[CommandSpec] = &[
    cmd("count", command_count_command, 2, LD | ST, NOKEYS),
    cmd("info", command_info_command, -2, LD | ST, NOKEYS),
    cmd("docs", command_docs_command, -2, LD | ST, NOKEYS),
    cmd("list", command_list_command, -2, LD | ST, NOKEYS),
    cmd("getkeys", command_getkeys_command, -4, LD | ST, NOKEYS),
    cmd(
        "getkeysandflags",
        command_getkeysandflags_command,
        -4,
        LD | ST,
        NOKEYS,
    ),
    cmd("help", command_help_command, 2, LD | ST, NOKEYS),
];

/// ACL's subcommands (acl.c aclCommand; one handler each here).
static ACL_SUBCOMMANDS: &[CommandSpec] = &[
    cmd("cat", acl::acl_cat_command, -2, NS | LD | ST, NOKEYS),
    cmd(
        "deluser",
        acl::acl_deluser_command,
        -3,
        A | NS | LD | ST,
        NOKEYS,
    ),
    cmd(
        "dryrun",
        acl::acl_dryrun_command,
        -4,
        A | NS | LD | ST,
        NOKEYS,
    ),
    cmd(
        "genpass",
        acl::acl_genpass_command,
        -2,
        NS | LD | ST,
        NOKEYS,
    ),
    cmd(
        "getuser",
        acl::acl_getuser_command,
        3,
        A | NS | LD | ST,
        NOKEYS,
    ),
    cmd("help", acl::acl_help_command, 2, LD | ST, NOKEYS),
    cmd("list", acl::acl_list_command, 2, A | NS | LD | ST, NOKEYS),
    cmd("load", acl::acl_load_command, 2, A | NS | LD | ST, NOKEYS),
    cmd("log", acl::acl_log_command, -2, A | NS | LD | ST, NOKEYS),
    cmd("save", acl::acl_save_command, 2, A | NS | LD | ST, NOKEYS),
    cmd(
        "setuser",
        acl::acl_setuser_command,
        -3,
        A | NS | LD | ST,
        NOKEYS,
    ),
    cmd("users", acl::acl_users_command, 2, A | NS | LD | ST, NOKEYS),
    cmd("whoami", acl::acl_whoami_command, 2, NS | LD | ST, NOKEYS),
];

static CONFIG_SUBCOMMANDS: &[CommandSpec] = &[
    cmd(
        "get",
        config::config_get_command,
        -3,
        A | NS | LD | ST,
        NOKEYS,
    ),
    cmd(
        "set",
        config::config_set_command,
        -4,
        A | NS | LD | ST,
        NOKEYS,
    ),
    cmd(
        "resetstat",
        config::config_resetstat_command,
        2,
        A | NS | LD | ST,
        NOKEYS,
    ),
    cmd(
        "rewrite",
        config::config_rewrite_command,
        2,
        A | NS | LD | ST,
        NOKEYS,
    ),
    cmd("help", config::config_help_command, 2, LD | ST, NOKEYS),
];

static OBJECT_SUBCOMMANDS: &[CommandSpec] = &[
    cmd("encoding", object::object_encoding_command, 3, R, (2, 2, 1)),
    cmd("refcount", object::object_refcount_command, 3, R, (2, 2, 1)),
    cmd("idletime", object::object_idletime_command, 3, R, (2, 2, 1)),
    cmd("freq", object::object_freq_command, 3, R, (2, 2, 1)),
    cmd("help", object::object_help_command, 2, LD | ST, NOKEYS),
];

/// CLUSTER's subcommands all run clusterCommand, as in Redis: in a
/// standalone server every one of them (HELP too) answers that cluster
/// support is disabled. Arity and flags are 7.0.15's, so COMMAND INFO and
/// the arity errors match.
static CLUSTER_SUBCOMMANDS: &[CommandSpec] = &[
    cmd(
        "addslots",
        crate::cluster::cluster_command,
        -3,
        A | ST | CMD_NO_ASYNC_LOADING,
        NOKEYS,
    ),
    cmd(
        "addslotsrange",
        crate::cluster::cluster_command,
        -4,
        A | ST | CMD_NO_ASYNC_LOADING,
        NOKEYS,
    ),
    cmd(
        "bumpepoch",
        crate::cluster::cluster_command,
        2,
        A | ST | CMD_NO_ASYNC_LOADING,
        NOKEYS,
    ),
    cmd(
        "count-failure-reports",
        crate::cluster::cluster_command,
        3,
        A | ST,
        NOKEYS,
    ),
    cmd(
        "countkeysinslot",
        crate::cluster::cluster_command,
        3,
        ST,
        NOKEYS,
    ),
    cmd(
        "delslots",
        crate::cluster::cluster_command,
        -3,
        A | ST | CMD_NO_ASYNC_LOADING,
        NOKEYS,
    ),
    cmd(
        "delslotsrange",
        crate::cluster::cluster_command,
        -4,
        A | ST | CMD_NO_ASYNC_LOADING,
        NOKEYS,
    ),
    cmd(
        "failover",
        crate::cluster::cluster_command,
        -2,
        A | ST | CMD_NO_ASYNC_LOADING,
        NOKEYS,
    ),
    cmd(
        "flushslots",
        crate::cluster::cluster_command,
        2,
        A | ST | CMD_NO_ASYNC_LOADING,
        NOKEYS,
    ),
    cmd(
        "forget",
        crate::cluster::cluster_command,
        3,
        A | ST | CMD_NO_ASYNC_LOADING,
        NOKEYS,
    ),
    cmd(
        "getkeysinslot",
        crate::cluster::cluster_command,
        4,
        ST,
        NOKEYS,
    ),
    cmd("help", crate::cluster::cluster_command, 2, LD | ST, NOKEYS),
    cmd("info", crate::cluster::cluster_command, 2, ST, NOKEYS),
    cmd("keyslot", crate::cluster::cluster_command, 3, ST, NOKEYS),
    cmd("links", crate::cluster::cluster_command, 2, ST, NOKEYS),
    cmd(
        "meet",
        crate::cluster::cluster_command,
        -4,
        A | ST | CMD_NO_ASYNC_LOADING,
        NOKEYS,
    ),
    cmd("myid", crate::cluster::cluster_command, 2, ST, NOKEYS),
    cmd("nodes", crate::cluster::cluster_command, 2, ST, NOKEYS),
    cmd(
        "replicas",
        crate::cluster::cluster_command,
        3,
        A | ST,
        NOKEYS,
    ),
    cmd(
        "replicate",
        crate::cluster::cluster_command,
        3,
        A | ST | CMD_NO_ASYNC_LOADING,
        NOKEYS,
    ),
    cmd(
        "reset",
        crate::cluster::cluster_command,
        -2,
        A | NS | ST,
        NOKEYS,
    ),
    cmd(
        "saveconfig",
        crate::cluster::cluster_command,
        2,
        A | ST | CMD_NO_ASYNC_LOADING,
        NOKEYS,
    ),
    cmd(
        "set-config-epoch",
        crate::cluster::cluster_command,
        3,
        A | ST | CMD_NO_ASYNC_LOADING,
        NOKEYS,
    ),
    cmd(
        "setslot",
        crate::cluster::cluster_command,
        -4,
        A | ST | CMD_NO_ASYNC_LOADING,
        NOKEYS,
    ),
    cmd("shards", crate::cluster::cluster_command, 2, ST, NOKEYS),
    cmd("slaves", crate::cluster::cluster_command, 3, A | ST, NOKEYS),
    cmd("slots", crate::cluster::cluster_command, 2, ST, NOKEYS),
];

/// XGROUP's subcommands all run xgroupCommand, as in Redis.
static XGROUP_SUBCOMMANDS: &[CommandSpec] = &[
    cmd(
        "create",
        crate::t_stream::xgroup_command,
        -5,
        W | M,
        (2, 2, 1),
    ),
    cmd("setid", crate::t_stream::xgroup_command, -5, W, (2, 2, 1)),
    cmd("destroy", crate::t_stream::xgroup_command, 4, W, (2, 2, 1)),
    cmd(
        "createconsumer",
        crate::t_stream::xgroup_command,
        5,
        W | M,
        (2, 2, 1),
    ),
    cmd(
        "delconsumer",
        crate::t_stream::xgroup_command,
        5,
        W,
        (2, 2, 1),
    ),
    cmd("help", crate::t_stream::xgroup_command, 2, LD | ST, NOKEYS),
];

/// XINFO's subcommands all run xinfoCommand.
static XINFO_SUBCOMMANDS: &[CommandSpec] = &[
    cmd("consumers", crate::t_stream::xinfo_command, 4, R, (2, 2, 1)),
    cmd("groups", crate::t_stream::xinfo_command, 3, R, (2, 2, 1)),
    cmd("stream", crate::t_stream::xinfo_command, -3, R, (2, 2, 1)),
    cmd("help", crate::t_stream::xinfo_command, 2, LD | ST, NOKEYS),
];

/// MODULE's subcommands (module.rs): no module API, Redis's replies.
/// LOAD, LOADEX and UNLOAD are protected by enable-module-command.
static MODULE_SUBCOMMANDS: &[CommandSpec] = &[
    cmd(
        "help",
        crate::module::module_help_command,
        2,
        LD | ST,
        NOKEYS,
    ),
    cmd(
        "list",
        crate::module::module_list_command,
        2,
        A | NS,
        NOKEYS,
    ),
    cmd(
        "load",
        crate::module::module_load_command,
        -3,
        CMD_NO_ASYNC_LOADING | A | NS | CMD_PROTECTED,
        NOKEYS,
    ),
    cmd(
        "loadex",
        crate::module::module_loadex_command,
        -3,
        CMD_NO_ASYNC_LOADING | A | NS | CMD_PROTECTED,
        NOKEYS,
    ),
    cmd(
        "unload",
        crate::module::module_unload_command,
        3,
        CMD_NO_ASYNC_LOADING | A | NS | CMD_PROTECTED,
        NOKEYS,
    ),
];

static MEMORY_SUBCOMMANDS: &[CommandSpec] = &[
    cmd("usage", object::memory_usage_command, -3, R, (2, 2, 1)),
    cmd(
        "stats",
        crate::object_memory::memory_stats_command,
        2,
        0,
        NOKEYS,
    ),
    cmd(
        "doctor",
        crate::object_memory::memory_doctor_command,
        2,
        0,
        NOKEYS,
    ),
    cmd(
        "malloc-stats",
        crate::object_memory::memory_malloc_stats_command,
        2,
        0,
        NOKEYS,
    ),
    cmd(
        "purge",
        crate::object_memory::memory_purge_command,
        2,
        0,
        NOKEYS,
    ),
    cmd("help", object::memory_help_command, 2, LD | ST, NOKEYS),
];

/// Per-command statistics (INFO commandstats), kept beside the table like
/// the counters inside Redis's struct redisCommand.
#[derive(Default, Clone, Debug)]
pub struct CommandStats {
    pub calls: u64,
    pub microseconds: u64,
    pub rejected_calls: u64,
    pub failed_calls: u64,
}

/// A command as the server knows it at run time.
pub struct RedisCommand {
    pub spec: &'static CommandSpec,
    /// "get", or "config|get" for a subcommand (Redis's fullname). Built
    /// once when the table is, and kept for the life of the process, so
    /// CLIENT LIST's cmd= can point at it without copying.
    pub fullname: &'static str,
    /// Index of the container for a subcommand.
    pub parent: Option<CmdId>,
    /// Lower-case subcommand name -> id, for container commands.
    pub subcommands: HashMap<Vec<u8>, CmdId>,
    pub stats: CommandStats,
    /// Latency distribution (LATENCY HISTOGRAM, INFO latencystats).
    pub histogram: CommandHistogram,
}

/// Index of a command in `CommandTable::commands`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CmdId(pub usize);

/// populateCommandTable: the run-time index over COMMAND_TABLE.
pub struct CommandTable {
    pub commands: Vec<RedisCommand>,
    by_name: HashMap<Vec<u8>, CmdId>,
}

/// Longest command name we bother to look up (longer cannot match).
const MAX_COMMAND_NAME: usize = 64;

impl CommandTable {
    pub fn new() -> CommandTable {
        let mut t = CommandTable {
            commands: Vec::new(),
            by_name: HashMap::new(),
        };
        for spec in COMMAND_TABLE {
            let id = t.push(spec, spec.name.to_string(), None);
            t.by_name.insert(spec.name.as_bytes().to_vec(), id);
            for sub in spec.subcommands {
                let sid = t.push(sub, format!("{}|{}", spec.name, sub.name), Some(id));
                t.commands[id.0]
                    .subcommands
                    .insert(sub.name.as_bytes().to_vec(), sid);
            }
        }
        t
    }

    fn push(
        &mut self,
        spec: &'static CommandSpec,
        fullname: String,
        parent: Option<CmdId>,
    ) -> CmdId {
        let fullname: &'static str = match parent {
            None => spec.name,
            Some(_) => Box::leak(fullname.into_boxed_str()),
        };
        self.commands.push(RedisCommand {
            spec,
            fullname,
            parent,
            subcommands: HashMap::new(),
            stats: CommandStats::default(),
            histogram: CommandHistogram::new(),
        });
        CmdId(self.commands.len() - 1)
    }

    pub fn get(&self, id: CmdId) -> &RedisCommand {
        &self.commands[id.0]
    }

    pub fn get_mut(&mut self, id: CmdId) -> &mut RedisCommand {
        &mut self.commands[id.0]
    }

    /// lookupCommandBySds: case-insensitive lookup of a top-level name.
    pub fn lookup(&self, name: &[u8]) -> Option<CmdId> {
        lookup_lowercase(&self.by_name, name)
    }

    /// rename-command: the command answers to `new` from now on, or to
    /// nothing when `new` is empty (it stays in the table: COMMAND INFO of
    /// its own name and the ACL categories still know it, as in Redis,
    /// whose rename only touches the lookup dict).
    pub fn rename(&mut self, old: &[u8], new: &[u8]) -> Result<(), &'static str> {
        let old = old.to_ascii_lowercase();
        let Some(id) = self.by_name.remove(&old) else {
            return Err("No such command in rename-command");
        };
        if new.is_empty() {
            return Ok(());
        }
        let new = new.to_ascii_lowercase();
        if self.by_name.contains_key(&new) {
            return Err("Target command name already exists");
        }
        self.by_name.insert(new, id);
        Ok(())
    }

    /// How many names the top-level commands answer to.
    pub fn names(&self) -> usize {
        self.by_name.len()
    }

    /// lookupSubcommand on a container.
    pub fn lookup_sub(&self, parent: CmdId, name: &[u8]) -> Option<CmdId> {
        lookup_lowercase(&self.commands[parent.0].subcommands, name)
    }

    /// lookupCommand as processCommand uses it: the subcommand when the base
    /// is a container and there is a second argument; the base otherwise.
    /// Err(base) when the base is a container and the subcommand is unknown.
    pub fn lookup_argv(&self, argv: &[bytes::Bytes]) -> Result<Option<CmdId>, CmdId> {
        let Some(base) = self.lookup(&argv[0]) else {
            return Ok(None);
        };
        if argv.len() == 1 || self.commands[base.0].subcommands.is_empty() {
            return Ok(Some(base));
        }
        match self.lookup_sub(base, &argv[1]) {
            Some(sub) => Ok(Some(sub)),
            None => Err(base),
        }
    }

    /// Top-level commands in table order (COMMAND, COMMAND LIST).
    pub fn top_level(&self) -> impl Iterator<Item = (CmdId, &RedisCommand)> {
        self.commands
            .iter()
            .enumerate()
            .filter(|(_, c)| c.parent.is_none())
            .map(|(i, c)| (CmdId(i), c))
    }
}

impl Default for CommandTable {
    fn default() -> Self {
        Self::new()
    }
}

fn lookup_lowercase(map: &HashMap<Vec<u8>, CmdId>, name: &[u8]) -> Option<CmdId> {
    if name.len() > MAX_COMMAND_NAME {
        return None;
    }
    // Lower-case into a stack buffer: no allocation per command.
    let mut buf = [0u8; MAX_COMMAND_NAME];
    let lower = &mut buf[..name.len()];
    for (d, s) in lower.iter_mut().zip(name) {
        *d = s.to_ascii_lowercase();
    }
    map.get(&lower[..]).copied()
}

// ---- COMMAND (server.c commandCommand and friends) ----
//
// COMMAND, COMMAND INFO/DOCS/LIST/COUNT/GETKEYS/GETKEYSANDFLAGS/HELP. What
// they print comes from two places joined by full name: our table above
// (arity, flags, legacy key positions: what dispatch uses) and
// commands_meta.rs (ACL categories, tips, key specs, docs: generated from a
// real Redis 7.0.15 by scripts/gen-command-meta.py).
//
// Redis walks its command dict, whose order depends on a random hash seed;
// we walk the table, which is as valid an order and a stable one.

/// The metadata of a command; an empty record when commands_meta.rs has not
/// been regenerated since the command was added (a unit test catches that).
pub fn meta_of(cmd: &RedisCommand) -> &'static CommandMeta {
    static EMPTY: CommandMeta = CommandMeta {
        fullname: "",
        acl_categories: &[],
        tips: &[],
        key_specs: &[],
        docs: CommandDocs {
            summary: "",
            since: "",
            group: "",
            complexity: None,
            doc_flags: &[],
            deprecated_since: None,
            replaced_by: None,
            history: &[],
            arguments: &[],
        },
    };
    lookup_meta(cmd.fullname).unwrap_or(&EMPTY)
}

/// lookupCommandBySds: "get" or "config|get" (case-insensitive). A name
/// with more than one `|`, or a `|` after a command without subcommands,
/// finds nothing.
fn lookup_by_fullname(table: &CommandTable, name: &[u8]) -> Option<CmdId> {
    let mut parts = name.split(|&b| b == b'|');
    let base = table.lookup(parts.next()?)?;
    match (parts.next(), parts.next()) {
        (None, _) => Some(base),
        (Some(sub), None) => table.lookup_sub(base, sub),
        _ => None,
    }
}

/// A set of status strings (flag names, ACL categories).
fn add_reply_status_set(c: &mut Client, items: &[&str]) {
    c.add_reply_set_len(items.len());
    for i in items {
        c.add_reply_status(i.as_bytes());
    }
}

/// addReplyCommandInfo: the 10-element description of one command.
fn add_reply_command_info(srv: &Server, c: &mut Client, id: CmdId) {
    let cmd = srv.commands.get(id);
    let meta = meta_of(cmd);
    c.add_reply_array_len(10);
    c.add_reply_bulk(cmd.fullname.as_bytes());
    c.add_reply_integer(cmd.spec.arity as i64);
    let flags: Vec<&str> = CMD_FLAG_NAMES
        .iter()
        .filter(|(f, _)| cmd.spec.flags & f != 0)
        .map(|(_, n)| *n)
        .collect();
    add_reply_status_set(c, &flags);
    c.add_reply_integer(cmd.spec.first_key as i64);
    c.add_reply_integer(cmd.spec.last_key as i64);
    c.add_reply_integer(cmd.spec.key_step as i64);
    add_reply_status_set(c, meta.acl_categories);
    c.add_reply_set_len(meta.tips.len());
    for t in meta.tips {
        c.add_reply_bulk(t.as_bytes());
    }
    add_reply_key_specs(c, meta.key_specs);
    if cmd.subcommands.is_empty() {
        c.add_reply_set_len(0);
    } else {
        let subs = subcommand_ids(srv, id);
        c.add_reply_array_len(subs.len());
        for sub in subs {
            add_reply_command_info(srv, c, sub);
        }
    }
}

/// The subcommands of a container, in table order.
fn subcommand_ids(srv: &Server, parent: CmdId) -> Vec<CmdId> {
    (0..srv.commands.commands.len())
        .map(CmdId)
        .filter(|&i| srv.commands.get(i).parent == Some(parent))
        .collect()
}

/// addReplyCommandKeySpecs.
fn add_reply_key_specs(c: &mut Client, specs: &[KeySpec]) {
    c.add_reply_set_len(specs.len());
    for spec in specs {
        c.add_reply_map_len(3 + usize::from(spec.notes.is_some()));
        if let Some(notes) = spec.notes {
            c.add_reply_bulk(b"notes");
            c.add_reply_bulk(notes.as_bytes());
        }
        c.add_reply_bulk(b"flags");
        add_reply_status_set(c, spec.flags);
        c.add_reply_bulk(b"begin_search");
        c.add_reply_map_len(2);
        c.add_reply_bulk(b"type");
        match spec.begin_search {
            BeginSearch::Unknown => add_reply_spec(c, "unknown", &[]),
            BeginSearch::Index(pos) => add_reply_spec(c, "index", &[("index", pos)]),
            BeginSearch::Keyword { keyword, startfrom } => {
                c.add_reply_bulk(b"keyword");
                c.add_reply_bulk(b"spec");
                c.add_reply_map_len(2);
                c.add_reply_bulk(b"keyword");
                c.add_reply_bulk(keyword.as_bytes());
                c.add_reply_bulk(b"startfrom");
                c.add_reply_integer(startfrom as i64);
            }
        }
        c.add_reply_bulk(b"find_keys");
        c.add_reply_map_len(2);
        c.add_reply_bulk(b"type");
        match spec.find_keys {
            FindKeys::Unknown => add_reply_spec(c, "unknown", &[]),
            FindKeys::Range {
                lastkey,
                keystep,
                limit,
            } => add_reply_spec(
                c,
                "range",
                &[("lastkey", lastkey), ("keystep", keystep), ("limit", limit)],
            ),
            FindKeys::Keynum {
                keynumidx,
                firstkey,
                keystep,
            } => add_reply_spec(
                c,
                "keynum",
                &[
                    ("keynumidx", keynumidx),
                    ("firstkey", firstkey),
                    ("keystep", keystep),
                ],
            ),
        }
    }
}

/// `<type>` then `spec` => a map of integer fields.
fn add_reply_spec(c: &mut Client, kind: &str, fields: &[(&str, i32)]) {
    c.add_reply_bulk(kind.as_bytes());
    c.add_reply_bulk(b"spec");
    c.add_reply_map_len(fields.len());
    for (name, v) in fields {
        c.add_reply_bulk(name.as_bytes());
        c.add_reply_integer(*v as i64);
    }
}

/// addReplyCommandDocs: a map whose optional fields appear only when set.
fn add_reply_command_docs(srv: &Server, c: &mut Client, id: CmdId) {
    let cmd = srv.commands.get(id);
    let d = &meta_of(cmd).docs;
    let has_subs = !cmd.subcommands.is_empty();
    let optional = [
        d.complexity.is_some(),
        !d.doc_flags.is_empty(),
        d.deprecated_since.is_some(),
        d.replaced_by.is_some(),
        !d.history.is_empty(),
        !d.arguments.is_empty(),
        has_subs,
    ];
    c.add_reply_map_len(3 + optional.iter().filter(|&&b| b).count());
    add_reply_bulk_pair(c, "summary", d.summary);
    add_reply_bulk_pair(c, "since", d.since);
    add_reply_bulk_pair(c, "group", d.group);
    if let Some(x) = d.complexity {
        add_reply_bulk_pair(c, "complexity", x);
    }
    if !d.doc_flags.is_empty() {
        c.add_reply_bulk(b"doc_flags");
        add_reply_status_set(c, d.doc_flags);
    }
    if let Some(x) = d.deprecated_since {
        add_reply_bulk_pair(c, "deprecated_since", x);
    }
    if let Some(x) = d.replaced_by {
        add_reply_bulk_pair(c, "replaced_by", x);
    }
    if !d.history.is_empty() {
        c.add_reply_bulk(b"history");
        c.add_reply_set_len(d.history.len());
        for (since, changes) in d.history {
            c.add_reply_array_len(2);
            c.add_reply_bulk(since.as_bytes());
            c.add_reply_bulk(changes.as_bytes());
        }
    }
    if !d.arguments.is_empty() {
        c.add_reply_bulk(b"arguments");
        add_reply_command_args(c, d.arguments);
    }
    if has_subs {
        c.add_reply_bulk(b"subcommands");
        let subs = subcommand_ids(srv, id);
        c.add_reply_map_len(subs.len());
        for sub in subs {
            c.add_reply_bulk(srv.commands.get(sub).fullname.as_bytes());
            add_reply_command_docs(srv, c, sub);
        }
    }
}

fn add_reply_bulk_pair(c: &mut Client, name: &str, value: &str) {
    c.add_reply_bulk(name.as_bytes());
    c.add_reply_bulk(value.as_bytes());
}

/// addReplyCommandArgList: one map per argument, nested for oneof/block.
fn add_reply_command_args(c: &mut Client, args: &[CommandArg]) {
    c.add_reply_array_len(args.len());
    for a in args {
        // Key arguments, and patterns that name keys (SORT BY/GET).
        let is_key = a.key_spec_index != -1;
        let nested = a.kind == "oneof" || a.kind == "block";
        let optional = [
            is_key,
            a.token.is_some(),
            a.summary.is_some(),
            a.since.is_some(),
            a.deprecated_since.is_some(),
            !a.flags.is_empty(),
            nested,
        ];
        c.add_reply_map_len(2 + optional.iter().filter(|&&b| b).count());
        add_reply_bulk_pair(c, "name", a.name);
        add_reply_bulk_pair(c, "type", a.kind);
        if is_key {
            c.add_reply_bulk(b"key_spec_index");
            c.add_reply_integer(a.key_spec_index as i64);
        }
        for (field, value) in [
            ("token", a.token),
            ("summary", a.summary),
            ("since", a.since),
            ("deprecated_since", a.deprecated_since),
        ] {
            if let Some(v) = value {
                add_reply_bulk_pair(c, field, v);
            }
        }
        if !a.flags.is_empty() {
            c.add_reply_bulk(b"flags");
            add_reply_status_set(c, a.flags);
        }
        if nested {
            c.add_reply_bulk(b"arguments");
            add_reply_command_args(c, a.arguments);
        }
    }
}

/// COMMAND
// redis: server.c commandCommand
pub fn command_command(srv: &mut Server, c: &mut Client) {
    let ids: Vec<CmdId> = srv.commands.top_level().map(|(id, _)| id).collect();
    c.add_reply_array_len(ids.len());
    for id in ids {
        add_reply_command_info(srv, c, id);
    }
}

/// COMMAND COUNT
// redis: server.c commandCountCommand
pub fn command_count_command(srv: &mut Server, c: &mut Client) {
    // dictSize(server.commands): a command renamed to "" no longer counts.
    c.add_reply_integer(srv.commands.names() as i64);
}

/// COMMAND INFO [command-name [command-name ...]]
// redis: server.c commandInfoCommand
pub fn command_info_command(srv: &mut Server, c: &mut Client) {
    if c.argc() == 2 {
        return command_command(srv, c);
    }
    c.add_reply_array_len(c.argc() - 2);
    for j in 2..c.argc() {
        match lookup_by_fullname(&srv.commands, c.arg(j)) {
            Some(id) => add_reply_command_info(srv, c, id),
            None => c.add_reply_null(),
        }
    }
}

/// COMMAND DOCS [command-name [command-name ...]]
// redis: server.c commandDocsCommand (unknown names are skipped)
pub fn command_docs_command(srv: &mut Server, c: &mut Client) {
    let ids: Vec<CmdId> = if c.argc() == 2 {
        srv.commands.top_level().map(|(id, _)| id).collect()
    } else {
        (2..c.argc())
            .filter_map(|j| lookup_by_fullname(&srv.commands, c.arg(j)))
            .collect()
    };
    c.add_reply_map_len(ids.len());
    for id in ids {
        c.add_reply_bulk(srv.commands.get(id).fullname.as_bytes());
        add_reply_command_docs(srv, c, id);
    }
}

/// COMMAND LIST FILTERBY's three filters (commandListFilterType).
enum ListFilter {
    /// No modules exist: a MODULE filter matches nothing.
    Module,
    /// "@read" form of a known category, or None for an unknown one.
    AclCat(Option<String>),
    Pattern(Bytes),
}

impl ListFilter {
    fn matches(&self, cmd: &RedisCommand) -> bool {
        match self {
            ListFilter::Module => false,
            ListFilter::AclCat(None) => false,
            ListFilter::AclCat(Some(cat)) => meta_of(cmd).acl_categories.contains(&cat.as_str()),
            ListFilter::Pattern(p) => string_match(p, cmd.fullname.as_bytes(), true),
        }
    }
}

/// COMMAND LIST [FILTERBY MODULE module-name|ACLCAT category|PATTERN pattern]
// redis: server.c commandListCommand (subcommands are listed too)
pub fn command_list_command(srv: &mut Server, c: &mut Client) {
    let mut filter = None;
    let mut i = 2;
    while i < c.argc() {
        let moreargs = c.argc() - 1 - i;
        if !(c.arg(i).eq_ignore_ascii_case(b"filterby") && moreargs == 2) {
            return c.add_reply_syntax_error();
        }
        let (kind, arg) = (c.arg(i + 1), c.argv[i + 2].clone());
        filter = Some(if kind.eq_ignore_ascii_case(b"module") {
            ListFilter::Module
        } else if kind.eq_ignore_ascii_case(b"aclcat") {
            // The categories Redis 7.0 knows (acl.rs, ACLCommandCategories):
            // an unknown name filters out everything.
            let known = crate::acl::ACL_CATEGORY_NAMES
                .iter()
                .find(|n| n.as_bytes().eq_ignore_ascii_case(&arg));
            ListFilter::AclCat(known.map(|n| format!("@{n}")))
        } else if kind.eq_ignore_ascii_case(b"pattern") {
            ListFilter::Pattern(arg)
        } else {
            return c.add_reply_syntax_error();
        });
        i += 3;
    }
    // Each top-level command, then its subcommands (commandListWithFilter).
    let mut names = Vec::new();
    for (id, cmd) in srv.commands.top_level() {
        for cid in std::iter::once(id).chain(subcommand_ids(srv, id)) {
            let cmd = if cid == id {
                cmd
            } else {
                srv.commands.get(cid)
            };
            if filter.as_ref().is_none_or(|f| f.matches(cmd)) {
                names.push(cmd.fullname);
            }
        }
    }
    c.add_reply_array_len(names.len());
    for n in names {
        c.add_reply_bulk(n.as_bytes());
    }
}

/// One key found in a command line: its argv index and its key-spec flags.
#[derive(Debug, PartialEq, Eq)]
pub struct KeyReference {
    pub pos: usize,
    pub flags: &'static [&'static str],
}

/// getKeysUsingKeySpecs: walk each key spec over `argv` (argv[0] is the
/// command name). None when a spec does not fit the arguments (Redis's
/// invalid_spec: the caller may fall back to a getkeys procedure).
pub fn get_keys_using_key_specs(specs: &[KeySpec], argv: &[Bytes]) -> Option<Vec<KeyReference>> {
    let argc = argv.len() as i64;
    let mut keys = Vec::new();
    for spec in specs {
        if spec.flags.contains(&"not_key") {
            continue;
        }
        let mut first = match spec.begin_search {
            BeginSearch::Index(pos) => pos as i64,
            BeginSearch::Keyword { keyword, startfrom } => {
                match find_keyword(argv, keyword, startfrom as i64) {
                    Some(i) => i + 1,
                    None => continue, // keyword absent: no keys from this spec
                }
            }
            BeginSearch::Unknown => return None,
        };
        let (last, step) = match spec.find_keys {
            FindKeys::Range {
                lastkey,
                keystep,
                limit,
            } => {
                let (lastkey, limit) = (lastkey as i64, limit as i64);
                let last = if lastkey >= 0 {
                    first + lastkey
                } else if limit == 0 {
                    argc + lastkey
                } else {
                    first + ((argc - first) / limit + lastkey)
                };
                (last, keystep as i64)
            }
            FindKeys::Keynum {
                keynumidx,
                firstkey,
                keystep,
            } => {
                let idx = first + keynumidx as i64;
                if idx >= argc {
                    return None;
                }
                let numkeys = storage::util::string2ll(&argv[idx as usize]).filter(|&n| n >= 0)?;
                first += firstkey as i64;
                (first.saturating_add(numkeys) - 1, keystep as i64)
            }
            FindKeys::Unknown => return None,
        };
        if last >= argc || last < first || first >= argc || step <= 0 {
            return None;
        }
        // first <= last < argc: every position stepped on is an argument.
        let mut i = first;
        while i <= last {
            keys.push(KeyReference {
                pos: i as usize,
                flags: spec.flags,
            });
            i += step;
        }
        if spec.flags.contains(&"incomplete") {
            return None;
        }
    }
    Some(keys)
}

/// The index of `keyword` (case-insensitive) searching from `startfrom`:
/// forwards when positive, backwards from the end when negative.
fn find_keyword(argv: &[Bytes], keyword: &str, startfrom: i64) -> Option<i64> {
    let argc = argv.len() as i64;
    let (mut i, end, delta) = if startfrom > 0 {
        (startfrom, argc - 1, 1)
    } else {
        (argc + startfrom, 1, -1)
    };
    while i != end + delta {
        if i >= argc || i < 1 {
            return None;
        }
        if argv[i as usize].eq_ignore_ascii_case(keyword.as_bytes()) {
            return Some(i);
        }
        i += delta;
    }
    None
}

/// setGetKeys (db.c): SET's key is always argv[1]; its flags depend on GET.
fn set_get_keys(argv: &[Bytes]) -> Vec<KeyReference> {
    let get = argv.iter().skip(3).any(|a| a.eq_ignore_ascii_case(b"get"));
    let flags: &'static [&'static str] = if get {
        &["RW", "access", "update"]
    } else {
        &["OW", "update"]
    };
    vec![KeyReference { pos: 1, flags }]
}

/// A command's own key finder (Redis's redisGetKeysProc).
type GetKeysProc = fn(&[Bytes]) -> Vec<KeyReference>;

/// The getkeys procedures of commands whose key specs are not enough
/// (variable flags, incomplete specs). Redis keeps them in the table.
fn getkeys_proc(fullname: &str) -> Option<GetKeysProc> {
    match fullname {
        "set" => Some(set_get_keys),
        "bitfield" => Some(crate::bitops::bitfield_get_keys),
        "sort" => Some(crate::sort::sort_get_keys),
        "sort_ro" => Some(crate::sort::sort_ro_get_keys),
        "migrate" => Some(crate::migrate::migrate_get_keys),
        _ => None,
    }
}

/// doesCommandHaveKeys: a getkeys procedure, or a key spec that is not
/// `not_key`.
pub fn does_command_have_keys(cmd: &RedisCommand) -> bool {
    getkeys_proc(cmd.fullname).is_some()
        || meta_of(cmd)
            .key_specs
            .iter()
            .any(|s| !s.flags.contains(&"not_key"))
}

/// getKeysFromCommandWithSpecs: key specs first when their flags are
/// reliable, else the command's own procedure.
pub fn get_keys_from_command(cmd: &RedisCommand, argv: &[Bytes]) -> Vec<KeyReference> {
    let specs = meta_of(cmd).key_specs;
    let has_keyspec = specs.iter().any(|s| !s.flags.contains(&"not_key"));
    let has_varflags = specs.iter().any(|s| s.flags.contains(&"variable_flags"));
    if has_keyspec && !has_varflags {
        if let Some(keys) = get_keys_using_key_specs(specs, argv) {
            return keys;
        }
    }
    getkeys_proc(cmd.fullname)
        .map(|p| p(argv))
        .unwrap_or_default()
}

/// COMMAND GETKEYS command [arg ...] and COMMAND GETKEYSANDFLAGS.
// redis: server.c getKeysSubcommandImpl
fn getkeys_generic_command(srv: &mut Server, c: &mut Client, with_flags: bool) {
    let argv = &c.argv[2..];
    let Ok(Some(id)) = srv.commands.lookup_argv(argv) else {
        return c.add_reply_error("ERR Invalid command specified");
    };
    let cmd = srv.commands.get(id);
    let argc = argv.len() as i32;
    if getkeys_proc(cmd.fullname).is_none() && meta_of(cmd).key_specs.is_empty() {
        return c.add_reply_error("ERR The command has no key arguments");
    }
    if (cmd.spec.arity > 0 && cmd.spec.arity != argc) || argc < -cmd.spec.arity {
        return c.add_reply_error("ERR Invalid number of arguments specified for command");
    }
    let keys = get_keys_from_command(cmd, argv);
    if keys.is_empty() && cmd.spec.flags & CMD_NO_MANDATORY_KEYS == 0 {
        return c.add_reply_error("ERR Invalid arguments specified for command");
    }
    let names: Vec<Bytes> = keys.iter().map(|k| argv[k.pos].clone()).collect();
    c.add_reply_array_len(keys.len());
    for (k, name) in keys.iter().zip(names) {
        if with_flags {
            c.add_reply_array_len(2);
            c.add_reply_bulk(&name);
            add_reply_status_set(c, k.flags);
        } else {
            c.add_reply_bulk(&name);
        }
    }
}

/// COMMAND GETKEYS command [arg [arg ...]]
// redis: server.c commandGetKeysCommand
pub fn command_getkeys_command(srv: &mut Server, c: &mut Client) {
    getkeys_generic_command(srv, c, false);
}

/// COMMAND GETKEYSANDFLAGS command [arg [arg ...]]
// redis: server.c commandGetKeysAndFlagsCommand
pub fn command_getkeysandflags_command(srv: &mut Server, c: &mut Client) {
    getkeys_generic_command(srv, c, true);
}

/// COMMAND HELP
// redis: server.c commandHelpCommand
pub fn command_help_command(_srv: &mut Server, c: &mut Client) {
    c.add_reply_help(
        "COMMAND",
        &[
            "(no subcommand)",
            "    Return details about all Redis commands.",
            "COUNT",
            "    Return the total number of commands in this Redis server.",
            "LIST",
            "    Return a list of all commands in this Redis server.",
            "INFO [<command-name> ...]",
            "    Return details about multiple Redis commands.",
            "    If no command names are given, documentation details for all",
            "    commands are returned.",
            "DOCS [<command-name> ...]",
            "    Return documentation details about multiple Redis commands.",
            "    If no command names are given, documentation details for all",
            "    commands are returned.",
            "GETKEYS <full-command>",
            "    Return the keys from a full Redis command.",
            "GETKEYSANDFLAGS <full-command>",
            "    Return the keys and the access flags from a full Redis command.",
        ],
    );
}

#[cfg(test)]
mod command_tests {
    use super::*;
    use crate::commands_meta::COMMAND_META;

    fn argv(line: &str) -> Vec<Bytes> {
        line.split(' ')
            .map(|s| Bytes::copy_from_slice(s.as_bytes()))
            .collect()
    }

    fn positions(keys: &[KeyReference]) -> Vec<usize> {
        keys.iter().map(|k| k.pos).collect()
    }

    #[test]
    fn command_meta_covers_the_table() {
        // Run scripts/gen-command-meta.py when this fails.
        let t = CommandTable::new();
        for cmd in &t.commands {
            assert!(
                lookup_meta(cmd.fullname).is_some(),
                "no metadata for {}",
                cmd.fullname
            );
        }
        assert!(COMMAND_META
            .windows(2)
            .all(|w| w[0].fullname < w[1].fullname));
    }

    const RANGE_ALL: KeySpec = KeySpec {
        notes: None,
        flags: &["RW"],
        begin_search: BeginSearch::Index(1),
        find_keys: FindKeys::Range {
            lastkey: -1,
            keystep: 2,
            limit: 0,
        },
    };

    #[test]
    fn key_specs_range_with_step() {
        let keys = get_keys_using_key_specs(&[RANGE_ALL], &argv("mset a 1 b 2")).unwrap();
        assert_eq!(positions(&keys), vec![1, 3]);
    }

    #[test]
    fn key_specs_keynum_and_bad_numkeys() {
        let spec = KeySpec {
            notes: None,
            flags: &["RO"],
            begin_search: BeginSearch::Index(2),
            find_keys: FindKeys::Keynum {
                keynumidx: 0,
                firstkey: 1,
                keystep: 1,
            },
        };
        let keys = get_keys_using_key_specs(&[spec], &argv("zunion x 2 k1 k2 WEIGHTS 1 2"));
        assert_eq!(positions(&keys.unwrap()), vec![3, 4]);
        let spec = KeySpec {
            begin_search: BeginSearch::Index(1),
            ..spec
        };
        assert!(get_keys_using_key_specs(&[spec], &argv("eval x s")).is_none());
        // numkeys past the end of the arguments is invalid, not a panic.
        assert!(get_keys_using_key_specs(&[spec], &argv("eval 9 k")).is_none());
        assert!(get_keys_using_key_specs(&[spec], &argv("eval 9999999999999999999 k")).is_none());
    }

    #[test]
    fn key_specs_keyword_search_backwards() {
        let spec = KeySpec {
            notes: None,
            flags: &["RW"],
            begin_search: BeginSearch::Keyword {
                keyword: "KEYS",
                startfrom: -2,
            },
            find_keys: FindKeys::Range {
                lastkey: -1,
                keystep: 1,
                limit: 0,
            },
        };
        let keys = get_keys_using_key_specs(&[spec], &argv("migrate h p \"\" 0 5 keys a b"));
        assert_eq!(positions(&keys.unwrap()), vec![7, 8]);
        // No keyword: no keys from that spec, and no error.
        let keys = get_keys_using_key_specs(&[spec], &argv("migrate h p k 0 5"));
        assert_eq!(keys.unwrap(), vec![]);
    }

    #[test]
    fn set_flags_depend_on_get() {
        assert_eq!(set_get_keys(&argv("set k v"))[0].flags, &["OW", "update"]);
        assert_eq!(
            set_get_keys(&argv("set k v ex 1 GET"))[0].flags,
            &["RW", "access", "update"]
        );
    }

    #[test]
    fn fullname_lookup_splits_once() {
        let t = CommandTable::new();
        assert!(lookup_by_fullname(&t, b"GET").is_some());
        assert!(lookup_by_fullname(&t, b"client|LIST").is_some());
        assert!(lookup_by_fullname(&t, b"client|nope").is_none());
        assert!(lookup_by_fullname(&t, b"get|x").is_none());
        assert!(lookup_by_fullname(&t, b"client|list|x").is_none());
        assert!(lookup_by_fullname(&t, b"").is_none());
    }
}
