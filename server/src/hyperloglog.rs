//! The HyperLogLog commands (Redis's hyperloglog.c): PFADD, PFCOUNT,
//! PFMERGE, PFSELFTEST and PFDEBUG.
//!
//! An HLL is a string (see `storage::hyperloglog` for its layout), so these
//! commands first check that the string *is* one ("WRONGTYPE Key is not a
//! valid HyperLogLog string value."), then work on its bytes in place. Like
//! every in-place string edit, that makes the value `raw` first
//! (dbUnshareStringValue) -- even PFCOUNT does it, because it may write the
//! cached cardinality back into the header.
//!
//! Worth a breakpoint: PFCOUNT of one key answers from the cache in the
//! header when PFADD has not invalidated it; otherwise it recounts (a pass
//! over 16384 registers), stores the count, and that write is a change:
//! the key is signalled as modified and `dirty` grows, though PFCOUNT is a
//! read-only command.

use storage::hyperloglog::{
    cached_cardinality, create_hll_object, dense_get_register, hll_add, hll_count, hll_count_raw,
    hll_dense_set, hll_encoding, hll_merge, hll_selftest, hll_sparse_set, hll_sparse_to_dense,
    invalidate_cache, is_hll_string, set_cached_cardinality, sparse_decode, HLL_DENSE,
    HLL_HDR_SIZE, HLL_REGISTERS, HLL_SPARSE,
};
use storage::object::{RObj, StrValue, Value};

use crate::db;
use crate::networking::Client;
use crate::notify::{notify_keyspace_event, NOTIFY_STRING};
use crate::server::Server;

const ERR_INVALID_HLL: &str = "-INVALIDOBJ Corrupted HLL object detected";
const ERR_NOT_HLL: &str = "-WRONGTYPE Key is not a valid HyperLogLog string value.";

/// isHLLObjectOrReply: the string's bytes if `o` holds a valid HLL; else
/// the WRONGTYPE reply (another type, an `int`-encoded string, or a string
/// without a valid HLL header).
fn hll_or_reply<'a>(c: &mut Client, o: &'a mut RObj) -> Option<&'a mut StrValue> {
    let s = crate::t_string::str_or_wrongtype(c, o)?;
    let valid = match s {
        StrValue::Int(_) => false,
        StrValue::Embstr(b) => is_hll_string(b),
        StrValue::Raw(v) => is_hll_string(v),
    };
    if !valid {
        c.add_reply_error(ERR_NOT_HLL);
        return None;
    }
    Some(s)
}

/// Run `f` on the bytes of the HLL at `key`, made `raw` first; a missing
/// key becomes a new empty (sparse) HLL, added to the keyspace after `f`
/// filled it in. `f` also learns whether the key was created. With
/// `check`, a value that is not a valid HLL gets the WRONGTYPE reply (Err).
/// One key lookup either way.
fn with_hll_for_write<R>(
    srv: &mut Server,
    c: &mut Client,
    key: &[u8],
    check: bool,
    f: impl FnOnce(&mut Client, &mut Vec<u8>, bool) -> R,
) -> Result<R, ()> {
    let dbid = c.db;
    if let Some(o) = db::lookup_key_write(srv, dbid, key) {
        let s = if check {
            hll_or_reply(c, o).ok_or(())?
        } else {
            o.as_str_mut().ok_or(())?
        };
        return Ok(f(c, s.make_raw(), false));
    }
    let mut v = StrValue::Raw(create_hll_object());
    let r = f(c, v.make_raw(), true);
    let obj = db::new_object(srv, Value::Str(v));
    db::db_add(srv, dbid, key, obj);
    Ok(r)
}

/// PFADD key [element [element ...]]
// redis: hyperloglog.c pfaddCommand
pub fn pfadd_command(srv: &mut Server, c: &mut Client) {
    let (key, dbid) = (c.argv[1].clone(), c.db);
    let max_bytes = srv.config.hll_sparse_max_bytes;
    let add = |c: &mut Client, s: &mut Vec<u8>, created: bool| {
        // Creating the key counts as an update, even with no elements.
        let mut updated = u64::from(created);
        for ele in &c.argv[2..] {
            match hll_add(s, ele, max_bytes) {
                Ok(true) => updated += 1,
                Ok(false) => {}
                Err(_) => return None,
            }
        }
        if updated > 0 {
            invalidate_cache(s);
        }
        Some(updated)
    };
    let updated = match with_hll_for_write(srv, c, &key, true, add) {
        Err(()) => return,
        Ok(None) => return c.add_reply_error(ERR_INVALID_HLL),
        Ok(Some(n)) => n,
    };
    if updated > 0 {
        db::signal_modified_key(srv, dbid, &key);
        notify_keyspace_event(srv, NOTIFY_STRING, "pfadd", &key, dbid);
        srv.dirty += updated;
    }
    c.add_reply_integer(i64::from(updated > 0));
}

/// PFCOUNT key [key ...]
// redis: hyperloglog.c pfcountCommand
pub fn pfcount_command(srv: &mut Server, c: &mut Client) {
    let dbid = c.db;
    if c.argc() > 2 {
        return pfcount_union(srv, c);
    }
    let key = c.argv[1].clone();
    let Some(o) = db::lookup_key_read(srv, dbid, &key) else {
        return c.add_reply_integer(0);
    };
    let Some(s) = hll_or_reply(c, o) else {
        return;
    };
    let s = s.make_raw();
    if let Some(card) = cached_cardinality(s) {
        return c.add_reply_integer(card as i64);
    }
    let Ok(card) = hll_count(s) else {
        return c.add_reply_error(ERR_INVALID_HLL);
    };
    // Writing the cache back is a change of the string.
    set_cached_cardinality(s, card);
    db::signal_modified_key(srv, dbid, &key);
    srv.dirty += 1;
    c.add_reply_integer(card as i64);
}

/// PFCOUNT of several keys: the count of their union, computed on a
/// one-byte-per-register scratch HLL (HLL_RAW); nothing is cached.
fn pfcount_union(srv: &mut Server, c: &mut Client) {
    let dbid = c.db;
    let mut max = Box::new([0u8; HLL_REGISTERS]);
    for j in 1..c.argc() {
        let key = c.argv[j].clone();
        // A missing key is an empty HLL.
        let Some(o) = db::lookup_key_read(srv, dbid, &key) else {
            continue;
        };
        let Some(s) = hll_or_reply(c, o) else {
            return;
        };
        if hll_merge(&mut max, &s.as_bytes()).is_err() {
            return c.add_reply_error(ERR_INVALID_HLL);
        }
    }
    c.add_reply_integer(hll_count_raw(&max) as i64);
}

/// PFMERGE destkey [sourcekey [sourcekey ...]]
// redis: hyperloglog.c pfmergeCommand
pub fn pfmerge_command(srv: &mut Server, c: &mut Client) {
    let (dest, dbid) = (c.argv[1].clone(), c.db);
    let max_bytes = srv.config.hll_sparse_max_bytes;
    // The registers' maxima over every input, the destination included.
    let mut max = Box::new([0u8; HLL_REGISTERS]);
    let mut use_dense = false;
    for j in 1..c.argc() {
        let key = c.argv[j].clone();
        let Some(o) = db::lookup_key_read(srv, dbid, &key) else {
            continue;
        };
        let Some(s) = hll_or_reply(c, o) else {
            return;
        };
        let bytes = s.as_bytes();
        // A dense input makes the result dense right away.
        use_dense |= hll_encoding(&bytes) == HLL_DENSE;
        if hll_merge(&mut max, &bytes).is_err() {
            return c.add_reply_error(ERR_INVALID_HLL);
        }
    }
    // Write the maxima into the destination (checked as an input already).
    let write = |_: &mut Client, s: &mut Vec<u8>, _: bool| {
        if use_dense && hll_sparse_to_dense(s).is_err() {
            return false;
        }
        for (j, &m) in max.iter().enumerate() {
            if m == 0 {
                continue;
            }
            // A sparse destination may turn dense along the way.
            if hll_encoding(s) == HLL_DENSE {
                hll_dense_set(&mut s[HLL_HDR_SIZE..], j, m);
            } else {
                let _ = hll_sparse_set(s, j, m, max_bytes);
            }
        }
        invalidate_cache(s);
        true
    };
    match with_hll_for_write(srv, c, &dest, false, write) {
        Err(()) => return,
        Ok(false) => return c.add_reply_error(ERR_INVALID_HLL),
        Ok(true) => {}
    }
    db::signal_modified_key(srv, dbid, &dest);
    // A merge is a mass-add: it notifies "pfadd".
    notify_keyspace_event(srv, NOTIFY_STRING, "pfadd", &dest, dbid);
    srv.dirty += 1;
    c.add_reply_ok();
}

/// PFSELFTEST
// redis: hyperloglog.c pfselftestCommand
pub fn pfselftest_command(srv: &mut Server, c: &mut Client) {
    match hll_selftest(rand::random::<u32>, srv.config.hll_sparse_max_bytes) {
        Ok(()) => c.add_reply_ok(),
        Err(e) => c.add_reply_error(&format!("ERR {e}")),
    }
}

/// PFDEBUG <GETREG | DECODE | ENCODING | TODENSE> key
// redis: hyperloglog.c pfdebugCommand
pub fn pfdebug_command(srv: &mut Server, c: &mut Client) {
    let (sub, key) = (c.argv[1].clone(), c.argv[2].clone());
    let dbid = c.db;
    let Some(o) = db::lookup_key_write(srv, dbid, &key) else {
        return c.add_reply_error("ERR The specified key does not exist");
    };
    let Some(s) = hll_or_reply(c, o) else {
        return;
    };
    let s = s.make_raw();
    let mut dirty = 0;
    // strcasecmp and "%s" both stop at a NUL byte.
    let end = sub.iter().position(|&x| x == 0).unwrap_or(sub.len());
    let sub = &sub[..end];
    match sub.to_ascii_lowercase().as_slice() {
        b"getreg" => {
            if hll_encoding(s) == HLL_SPARSE {
                if hll_sparse_to_dense(s).is_err() {
                    return c.add_reply_error(ERR_INVALID_HLL);
                }
                // The encoding changed: that is a write to propagate.
                dirty += 1;
            }
            let regs = &s[HLL_HDR_SIZE..];
            c.add_reply_array_len(HLL_REGISTERS);
            for j in 0..HLL_REGISTERS {
                c.add_reply_integer(dense_get_register(regs, j) as i64);
            }
        }
        b"decode" => {
            if hll_encoding(s) != HLL_SPARSE {
                return c.add_reply_error("ERR HLL encoding is not sparse");
            }
            c.add_reply_bulk(&sparse_decode(s));
        }
        b"encoding" => {
            let enc = if hll_encoding(s) == HLL_DENSE {
                "dense"
            } else {
                "sparse"
            };
            c.add_reply_status(enc.as_bytes());
        }
        b"todense" => {
            let mut converted = false;
            if hll_encoding(s) == HLL_SPARSE {
                if hll_sparse_to_dense(s).is_err() {
                    return c.add_reply_error(ERR_INVALID_HLL);
                }
                converted = true;
                dirty += 1;
            }
            c.add_reply_integer(i64::from(converted));
        }
        _ => {
            let sub = String::from_utf8_lossy(sub);
            c.add_reply_error(&format!("ERR Unknown PFDEBUG subcommand '{sub}'"));
        }
    }
    srv.dirty += dirty;
}
