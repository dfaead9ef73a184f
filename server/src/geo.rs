//! The GEO commands (Redis's geo.c): GEOADD, GEOPOS, GEODIST, GEOHASH,
//! GEOSEARCH, GEOSEARCHSTORE and the older GEORADIUS family.
//!
//! There is no GEO type: a GEO set is a sorted set whose scores are 52-bit
//! geohashes (`storage::geohash`). GEOADD is ZADD with coordinates turned
//! into scores (Redis literally rewrites the command into a ZADD and runs
//! it); the searches turn the query shape into at most nine score ranges
//! (the geohash box of the centre and its neighbours), decode every member
//! in those ranges and keep the ones inside the shape, then sort by
//! distance if asked, and reply or store.
//!
//! Replies are byte for byte Redis's: coordinates go through the same
//! double math and `addReplyHumanLongDouble` (long double "%.17Lf" with the
//! trailing zeros cut), distances through `fixedpoint_d2string` with four
//! decimals, and results with equal distances come out in the order
//! Redis's sorts leave them (a stable sort for a full sort, as glibc's
//! qsort is; Redis's own pqsort for COUNT).

use std::cmp::Ordering;

use bytes::Bytes;
use protocol::Resp;
use storage::geohash::{
    decode_geohash_score, geohash_align_52bits, geohash_calculate_areas_by_shape_wgs84,
    geohash_get_distance, geohash_get_distance_if_in_radius, geohash_get_distance_if_in_rectangle,
    geohash_score, geohash_string, GeoHashBits, GeoShape, ShapeKind, GEO_LAT_MAX, GEO_LAT_MIN,
    GEO_LONG_MAX, GEO_LONG_MIN,
};
use storage::object::Value;
use storage::pqsort::pqsort;
use storage::skiplist::ZRangeSpec;
use storage::t_zset::{zset_from_pairs, ZSetLimits, ZSetValue};
use storage::util::{string2d, string2ll};

use crate::db;
use crate::networking::Client;
use crate::notify::{notify_keyspace_event, NOTIFY_GENERIC, NOTIFY_ZSET};
use crate::server::Server;
use crate::shared;

// ---- reply formats ----

/// addReplyDoubleDistance: a distance with exactly four decimals
/// (fixedpoint_d2string(d, 4): llrint of d * 10^4, then the digits).
pub fn format_distance(d: f64) -> Vec<u8> {
    if d == 0.0 {
        return b"0.0000".to_vec();
    }
    // llrint: round half to even, as the default FPU rounding mode does.
    let scaled = (d * 10000.0).round_ties_even();
    let svalue = if scaled.is_finite() && scaled.abs() < 9.2e18 {
        scaled as i64
    } else {
        i64::MIN // what llrint answers when the result does not fit
    };
    let v = svalue.unsigned_abs();
    let sign = if svalue < 0 { "-" } else { "" };
    format!("{sign}{}.{:04}", v / 10000, v % 10000).into_bytes()
}

fn add_reply_double_distance(c: &mut Client, d: f64) {
    c.add_reply_bulk(&format_distance(d));
}

/// ld2string(LD_STR_HUMAN) of a double: "%.17Lf", then the trailing zeros
/// (and a bare '.') removed, "-0" written "0". A double widened to long
/// double is the same exact value, and Rust's `{:.17}` rounds that exact
/// value the way glibc's printf does (to nearest, ties to even; a unit test
/// checks it against the C formatter), without a 5 KB long-double buffer
/// per coordinate.
pub fn human_double(d: f64) -> Vec<u8> {
    let mut text = format!("{d:.17}").into_bytes();
    if text.contains(&b'.') {
        while text.last() == Some(&b'0') {
            text.pop();
        }
        if text.last() == Some(&b'.') {
            text.pop();
        }
    }
    if text == b"-0" {
        text = b"0".to_vec();
    }
    text
}

/// addReplyHumanLongDouble: the coordinate as (long double) "%.17Lf" with
/// the trailing zeros removed; a bulk string in RESP2, a double in RESP3.
fn add_reply_human_long_double(c: &mut Client, d: f64) {
    let text = human_double(d);
    if c.resp == Resp::V2 {
        c.add_reply_bulk(&text);
    } else {
        c.reply.extend_from_slice(b",");
        c.reply.extend_from_slice(&text);
        c.reply.extend_from_slice(b"\r\n");
    }
}

// ---- argument helpers ----

/// The C-string view of an option (strcasecmp stops at NUL).
fn is(arg: &[u8], name: &str) -> bool {
    let end = arg.iter().position(|&b| b == 0).unwrap_or(arg.len());
    arg[..end].eq_ignore_ascii_case(name.as_bytes())
}

/// getDoubleFromObjectOrReply with `msg` ("ERR value is not a valid float"
/// when None).
fn parse_double_or_reply(c: &mut Client, arg: &[u8], msg: Option<&str>) -> Option<f64> {
    let v = string2d(arg);
    if v.is_none() {
        c.add_reply_error(msg.unwrap_or(shared::NOT_FLOAT_ERR));
    }
    v
}

/// extractLongLatOrReply: longitude then latitude, inside the GEO limits.
fn extract_long_lat_or_reply(c: &mut Client, at: usize) -> Option<[f64; 2]> {
    let (lon_arg, lat_arg) = (c.argv[at].clone(), c.argv[at + 1].clone());
    let lon = parse_double_or_reply(c, &lon_arg, None)?;
    let lat = parse_double_or_reply(c, &lat_arg, None)?;
    if !(GEO_LONG_MIN..=GEO_LONG_MAX).contains(&lon) || !(GEO_LAT_MIN..=GEO_LAT_MAX).contains(&lat)
    {
        c.add_reply_error(&format!(
            "ERR invalid longitude,latitude pair {lon:.6},{lat:.6}"
        ));
        return None;
    }
    Some([lon, lat])
}

/// extractUnitOrReply: meters per unit.
fn extract_unit_or_reply(c: &mut Client, unit: &[u8]) -> Option<f64> {
    let to_meters = if is(unit, "m") {
        1.0
    } else if is(unit, "km") {
        1000.0
    } else if is(unit, "ft") {
        0.3048
    } else if is(unit, "mi") {
        1609.34
    } else {
        c.add_reply_error("ERR unsupported unit provided. please use M, KM, FT, MI");
        return None;
    };
    Some(to_meters)
}

/// extractDistanceOrReply: `<radius> <unit>` -> (radius, meters per unit).
fn extract_distance_or_reply(c: &mut Client, at: usize) -> Option<(f64, f64)> {
    let arg = c.argv[at].clone();
    let radius = parse_double_or_reply(c, &arg, Some("ERR need numeric radius"))?;
    if radius < 0.0 {
        c.add_reply_error("ERR radius cannot be negative");
        return None;
    }
    let unit = c.argv[at + 1].clone();
    Some((radius, extract_unit_or_reply(c, &unit)?))
}

/// extractBoxOrReply: `<width> <height> <unit>`.
fn extract_box_or_reply(c: &mut Client, at: usize) -> Option<(f64, f64, f64)> {
    let (w_arg, h_arg) = (c.argv[at].clone(), c.argv[at + 1].clone());
    let width = parse_double_or_reply(c, &w_arg, Some("ERR need numeric width"))?;
    let height = parse_double_or_reply(c, &h_arg, Some("ERR need numeric height"))?;
    if height < 0.0 || width < 0.0 {
        c.add_reply_error("ERR height or width cannot be negative");
        return None;
    }
    let unit = c.argv[at + 2].clone();
    Some((width, height, extract_unit_or_reply(c, &unit)?))
}

/// longLatFromMember: the position of a member, if it is in the set.
fn long_lat_from_member(z: &mut ZSetValue, member: &[u8]) -> Option<[f64; 2]> {
    decode_geohash_score(z.score(member)?)
}

/// lookupKeyRead + checkType(OBJ_ZSET): the set (None if missing), or Err
/// after a WRONGTYPE reply.
fn lookup_geo_read<'a>(
    srv: &'a mut Server,
    c: &mut Client,
    key: &[u8],
) -> Result<Option<&'a mut ZSetValue>, ()> {
    let o = db::lookup_key_read(srv, c.db, key);
    db::check_type(c, o, |o| match &mut o.value {
        Value::ZSet(z) => Some(z),
        _ => None,
    })
}

// ---- GEOADD ----

/// GEOADD key [NX | XX] [CH] longitude latitude member [longitude latitude member ...]
// redis: geo.c geoaddCommand
pub fn geoadd_command(srv: &mut Server, c: &mut Client) {
    let (mut xx, mut nx, mut longidx) = (false, false, 2);
    while longidx < c.argc() {
        let opt = c.arg(longidx);
        if is(opt, "nx") {
            nx = true;
        } else if is(opt, "xx") {
            xx = true;
        } else if !is(opt, "ch") {
            break; // CH is handled by ZADD itself.
        }
        longidx += 1;
    }
    if !(c.argc() - longidx).is_multiple_of(3) || (xx && nx) {
        return c.add_reply_syntax_error();
    }
    // ZADD key [CH] [NX|XX] score member ...: every score computed first.
    let mut argv: Vec<Bytes> = Vec::with_capacity(longidx + (c.argc() - longidx) / 3 * 2);
    argv.push(Bytes::from_static(b"zadd"));
    argv.extend(c.argv[1..longidx].iter().cloned());
    for at in (longidx..c.argc()).step_by(3) {
        let Some(xy) = extract_long_lat_or_reply(c, at) else {
            return;
        };
        let score = geohash_score(xy[0], xy[1]).unwrap_or(0);
        argv.push(Bytes::from(score.to_string()));
        argv.push(c.argv[at + 2].clone());
    }
    // replaceClientCommandVector: the instruments still show the GEOADD
    // the client sent (call() puts original_argv back).
    let original = std::mem::replace(&mut c.argv, argv);
    if c.original_argv.is_none() {
        c.original_argv = Some(original);
    }
    crate::t_zset::zadd_command(srv, c);
}

// ---- GEOPOS / GEODIST / GEOHASH ----

/// GEOPOS key [member [member ...]]
// redis: geo.c geoposCommand
pub fn geopos_command(srv: &mut Server, c: &mut Client) {
    let key = c.argv[1].clone();
    let Ok(mut z) = lookup_geo_read(srv, c, &key) else {
        return;
    };
    c.add_reply_array_len(c.argc() - 2);
    for j in 2..c.argc() {
        let xy = z
            .as_deref_mut()
            .and_then(|z| long_lat_from_member(z, &c.argv[j]));
        match xy {
            None => c.add_reply_null_array(),
            Some([lon, lat]) => {
                c.add_reply_array_len(2);
                add_reply_human_long_double(c, lon);
                add_reply_human_long_double(c, lat);
            }
        }
    }
}

/// GEODIST key member1 member2 [M | KM | FT | MI]
// redis: geo.c geodistCommand
pub fn geodist_command(srv: &mut Server, c: &mut Client) {
    let key = c.argv[1].clone();
    let mut to_meter = 1.0;
    if c.argc() == 5 {
        let unit = c.argv[4].clone();
        let Some(u) = extract_unit_or_reply(c, &unit) else {
            return;
        };
        to_meter = u;
    } else if c.argc() > 5 {
        return c.add_reply_syntax_error();
    }
    let z = match lookup_geo_read(srv, c, &key) {
        Err(()) => return,
        Ok(None) => return c.add_reply_null(),
        Ok(Some(z)) => z,
    };
    let (Some(s1), Some(s2)) = (z.score(&c.argv[2]), z.score(&c.argv[3])) else {
        return c.add_reply_null();
    };
    match (decode_geohash_score(s1), decode_geohash_score(s2)) {
        (Some(a), Some(b)) => {
            add_reply_double_distance(c, geohash_get_distance(a[0], a[1], b[0], b[1]) / to_meter)
        }
        _ => c.add_reply_null(),
    }
}

/// GEOHASH key [member [member ...]]
// redis: geo.c geohashCommand
pub fn geohash_command(srv: &mut Server, c: &mut Client) {
    let key = c.argv[1].clone();
    let Ok(mut z) = lookup_geo_read(srv, c, &key) else {
        return;
    };
    c.add_reply_array_len(c.argc() - 2);
    for j in 2..c.argc() {
        let score = z.as_deref_mut().and_then(|z| z.score(&c.argv[j]));
        match score.and_then(geohash_string) {
            Some(text) => c.add_reply_bulk(&text),
            None => c.add_reply_null(),
        }
    }
}

// ---- the searches (georadiusGeneric) ----

/// Search around coordinates (GEORADIUS).
const RADIUS_COORDS: u32 = 1 << 0;
/// Search around a member (GEORADIUSBYMEMBER).
const RADIUS_MEMBER: u32 = 1 << 1;
/// No STORE/STOREDIST (the _RO variants).
const RADIUS_NOSTORE: u32 = 1 << 2;
/// GEOSEARCH's argument syntax.
const GEOSEARCH: u32 = 1 << 3;
/// GEOSEARCHSTORE: the destination is argv[1], STOREDIST is a flag.
const GEOSEARCHSTORE: u32 = 1 << 4;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Sort {
    None,
    Asc,
    Desc,
}

/// geoPoint: one search result (distance in meters until the reply
/// converts it).
pub struct GeoPoint {
    pub longitude: f64,
    pub latitude: f64,
    pub dist: f64,
    pub score: f64,
    pub member: Vec<u8>,
}

/// What the option loop of georadiusGeneric collected.
struct SearchOptions {
    withdist: bool,
    withhash: bool,
    withcoords: bool,
    sort: Sort,
    any: bool,
    /// 0 = unlimited.
    count: i64,
    storekey: Option<Bytes>,
    storedist: bool,
}

/// geoWithinShape: decode `score`; Some((xy, distance)) when the point is
/// inside the shape.
fn geo_within_shape(shape: &GeoShape, score: f64) -> Option<([f64; 2], f64)> {
    let xy = decode_geohash_score(score)?;
    let [cx, cy] = shape.xy;
    let distance = match shape.kind {
        ShapeKind::Radius(r) => {
            geohash_get_distance_if_in_radius(cx, cy, xy[0], xy[1], r * shape.conversion)?
        }
        ShapeKind::Box { width, height } => geohash_get_distance_if_in_rectangle(
            width * shape.conversion,
            height * shape.conversion,
            cx,
            cy,
            xy[0],
            xy[1],
        )?,
    };
    Some((xy, distance))
}

/// membersOfGeoHashBox + geoGetPointsInRange: the members whose score lies
/// in the box's 52-bit range [min, max), kept if inside the shape; stops
/// once `limit` points are collected (0 = no limit).
fn members_of_geohash_box(
    z: &ZSetValue,
    mut hash: GeoHashBits,
    shape: &GeoShape,
    ga: &mut Vec<GeoPoint>,
    limit: usize,
) {
    let min = geohash_align_52bits(hash) as f64;
    hash.bits += 1;
    let max = geohash_align_52bits(hash) as f64;
    let range = ZRangeSpec {
        min,
        max,
        minex: false,
        maxex: true,
    };
    z.walk_score_range(&range, |member, score| {
        if let Some((xy, dist)) = geo_within_shape(shape, score) {
            ga.push(GeoPoint {
                longitude: xy[0],
                latitude: xy[1],
                dist,
                score,
                member: member.to_vec(),
            });
        }
        !(limit > 0 && ga.len() >= limit)
    });
}

/// membersOfAllNeighbors: the centre box, then the eight neighbours in
/// geo.c's order; zeroed neighbours are skipped, and so is a box equal to
/// the one processed just before (huge radii make neighbours coincide).
/// Public for the criterion bench (benches/geo.rs): the search itself,
/// without argument parsing or replies.
pub fn members_of_all_neighbors(z: &ZSetValue, shape: &GeoShape, limit: usize) -> Vec<GeoPoint> {
    let n = geohash_calculate_areas_by_shape_wgs84(shape);
    let nb = &n.neighbors;
    let boxes = [
        n.hash,
        nb.north,
        nb.south,
        nb.east,
        nb.west,
        nb.north_east,
        nb.north_west,
        nb.south_east,
        nb.south_west,
    ];
    let mut ga = Vec::new();
    let mut last_processed = 0;
    for (i, b) in boxes.iter().enumerate() {
        if b.is_zero() {
            continue;
        }
        // As in Redis, "last processed" 0 never compares (index 0 is the
        // centre, always processed first).
        if last_processed != 0 && *b == boxes[last_processed] {
            continue;
        }
        if limit > 0 && ga.len() >= limit {
            break;
        }
        members_of_geohash_box(z, *b, shape, &mut ga, limit);
        last_processed = i;
    }
    ga
}

/// Parse the shared options (the option loop of georadiusGeneric). The
/// centre of a GEOSEARCH (FROMMEMBER/FROMLONLAT) and its shape
/// (BYRADIUS/BYBOX) are parsed here too, into `shape`. Err after replying.
fn parse_search_options(
    c: &mut Client,
    mut z: Option<&mut ZSetValue>,
    base_args: usize,
    flags: u32,
    shape: &mut GeoShape,
) -> Result<SearchOptions, ()> {
    let mut o = SearchOptions {
        withdist: false,
        withhash: false,
        withcoords: false,
        sort: Sort::None,
        any: false,
        count: 0,
        storekey: (flags & GEOSEARCHSTORE != 0).then(|| c.argv[1].clone()),
        storedist: false,
    };
    let (mut frommember, mut fromloc, mut byradius, mut bybox) = (false, false, false, false);
    let remaining = c.argc().saturating_sub(base_args);
    let search = flags & GEOSEARCH != 0;
    let may_store = flags & (RADIUS_NOSTORE | GEOSEARCH) == 0;
    let mut i = 0;
    while i < remaining {
        let at = base_args + i;
        let arg = c.argv[at].clone();
        if is(&arg, "withdist") {
            o.withdist = true;
        } else if is(&arg, "withhash") {
            o.withhash = true;
        } else if is(&arg, "withcoord") {
            o.withcoords = true;
        } else if is(&arg, "any") {
            o.any = true;
        } else if is(&arg, "asc") {
            o.sort = Sort::Asc;
        } else if is(&arg, "desc") {
            o.sort = Sort::Desc;
        } else if is(&arg, "count") && i + 1 < remaining {
            let n = match string2ll(&c.argv[at + 1]) {
                Some(n) => n,
                None => {
                    c.add_reply_error(shared::NOT_INTEGER_ERR);
                    return Err(());
                }
            };
            if n <= 0 {
                c.add_reply_error("ERR COUNT must be > 0");
                return Err(());
            }
            o.count = n;
            i += 1;
        } else if (is(&arg, "store") || is(&arg, "storedist")) && i + 1 < remaining && may_store {
            o.storekey = Some(c.argv[at + 1].clone());
            o.storedist = is(&arg, "storedist");
            i += 1;
        } else if is(&arg, "storedist") && search && flags & GEOSEARCHSTORE != 0 {
            o.storedist = true;
        } else if is(&arg, "frommember") && i + 1 < remaining && search && !fromloc {
            // No source key: keep parsing, the reply is decided later.
            if let Some(z) = z.as_deref_mut() {
                match long_lat_from_member(z, &c.argv[at + 1]) {
                    Some(xy) => shape.xy = xy,
                    None => {
                        c.add_reply_error("ERR could not decode requested zset member");
                        return Err(());
                    }
                }
            }
            frommember = true;
            i += 1;
        } else if is(&arg, "fromlonlat") && i + 2 < remaining && search && !frommember {
            shape.xy = extract_long_lat_or_reply(c, at + 1).ok_or(())?;
            fromloc = true;
            i += 2;
        } else if is(&arg, "byradius") && i + 2 < remaining && search && !bybox {
            let (radius, conversion) = extract_distance_or_reply(c, at + 1).ok_or(())?;
            shape.kind = ShapeKind::Radius(radius);
            shape.conversion = conversion;
            byradius = true;
            i += 2;
        } else if is(&arg, "bybox") && i + 3 < remaining && search && !byradius {
            let (width, height, conversion) = extract_box_or_reply(c, at + 1).ok_or(())?;
            shape.kind = ShapeKind::Box { width, height };
            shape.conversion = conversion;
            bybox = true;
            i += 3;
        } else {
            c.add_reply_syntax_error();
            return Err(());
        }
        i += 1;
    }
    // Options that do not go together.
    if o.storekey.is_some() && (o.withdist || o.withhash || o.withcoords) {
        let what = if flags & GEOSEARCHSTORE != 0 {
            "GEOSEARCHSTORE"
        } else {
            "STORE option in GEORADIUS"
        };
        c.add_reply_error(&format!(
            "ERR {what} is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
        ));
        return Err(());
    }
    let name = String::from_utf8_lossy(c.arg(0)).into_owned();
    if search && !(frommember || fromloc) {
        c.add_reply_error(&format!(
            "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for {name}"
        ));
        return Err(());
    }
    if search && !(byradius || bybox) {
        c.add_reply_error(&format!(
            "ERR exactly one of BYRADIUS and BYBOX can be specified for {name}"
        ));
        return Err(());
    }
    if o.any && o.count == 0 {
        c.add_reply_error("ERR the ANY argument requires COUNT argument");
        return Err(());
    }
    Ok(o)
}

/// georadiusGeneric: every search command. `src_key_index` is where the
/// source key is (2 for GEOSEARCHSTORE).
// redis: geo.c georadiusGeneric
fn georadius_generic(srv: &mut Server, c: &mut Client, src_key_index: usize, flags: u32) {
    let (src, dbid) = (c.argv[src_key_index].clone(), c.db);
    let Ok(mut z) = lookup_geo_read(srv, c, &src) else {
        return;
    };
    let mut shape = GeoShape {
        xy: [0.0, 0.0],
        conversion: 0.0,
        kind: ShapeKind::Radius(0.0),
    };
    // The centre and radius of the GEORADIUS forms come first.
    let base_args = if flags & RADIUS_COORDS != 0 {
        let Some(xy) = extract_long_lat_or_reply(c, 2) else {
            return;
        };
        let Some((radius, conversion)) = extract_distance_or_reply(c, 4) else {
            return;
        };
        (shape.xy, shape.kind, shape.conversion) = (xy, ShapeKind::Radius(radius), conversion);
        6
    } else if flags & RADIUS_MEMBER != 0 {
        // Without a source key the radius is not even parsed: only the
        // options decide between an empty array and 0.
        if let Some(z) = z.as_deref_mut() {
            let Some(xy) = long_lat_from_member(z, &c.argv[2]) else {
                return c.add_reply_error("ERR could not decode requested zset member");
            };
            let Some((radius, conversion)) = extract_distance_or_reply(c, 3) else {
                return;
            };
            (shape.xy, shape.kind, shape.conversion) = (xy, ShapeKind::Radius(radius), conversion);
        }
        5
    } else if flags & GEOSEARCHSTORE != 0 {
        3
    } else {
        2
    };
    let Ok(opts) = parse_search_options(c, z.as_deref_mut(), base_args, flags, &mut shape) else {
        return;
    };

    // No source key: delete the destination, or reply an empty array.
    let Some(z) = z else {
        if let Some(storekey) = &opts.storekey {
            if db::db_delete(srv, dbid, storekey) {
                db::signal_modified_key(srv, dbid, storekey);
                notify_keyspace_event(srv, NOTIFY_GENERIC, "del", storekey, dbid);
                srv.dirty += 1;
            }
            c.add_reply_integer(0);
        } else {
            c.add_reply_array_len(0);
        }
        return;
    };

    // COUNT without an order means the N nearest (not with ANY).
    let mut sort = opts.sort;
    if opts.count != 0 && sort == Sort::None && !opts.any {
        sort = Sort::Asc;
    }
    let limit = if opts.any { opts.count as usize } else { 0 };
    let mut ga = members_of_all_neighbors(z, &shape, limit);
    if ga.is_empty() && opts.storekey.is_none() {
        return c.add_reply_array_len(0);
    }
    let result_length = ga.len();
    let returned = if opts.count == 0 || (result_length as i64) < opts.count {
        result_length
    } else {
        opts.count as usize
    };
    // qsort (glibc's is a stable merge sort) for everything, pqsort for a
    // COUNT prefix.
    if sort != Sort::None {
        let asc =
            |a: &GeoPoint, b: &GeoPoint| a.dist.partial_cmp(&b.dist).unwrap_or(Ordering::Equal);
        let cmp = |a: &GeoPoint, b: &GeoPoint| match sort {
            Sort::Desc => asc(b, a),
            _ => asc(a, b),
        };
        if returned == result_length {
            ga.sort_by(cmp);
        } else {
            pqsort(&mut ga, &cmp, 0, returned - 1);
        }
    }
    ga.truncate(returned);
    for gp in ga.iter_mut() {
        gp.dist /= shape.conversion;
    }
    match opts.storekey {
        None => reply_geo_points(c, &ga, &opts),
        Some(storekey) => {
            let event = if flags & GEOSEARCH != 0 {
                "geosearchstore"
            } else {
                "georadiusstore"
            };
            store_geo_points(srv, c, &storekey, ga, opts.storedist, event);
        }
    }
}

/// The reply of a search: members alone, or [member, dist?, hash?,
/// [lon, lat]?] for each when WITHDIST/WITHHASH/WITHCOORD ask for more.
fn reply_geo_points(c: &mut Client, ga: &[GeoPoint], o: &SearchOptions) {
    let option_length = [o.withdist, o.withcoords, o.withhash]
        .iter()
        .filter(|&&b| b)
        .count();
    c.add_reply_array_len(ga.len());
    for gp in ga {
        if option_length > 0 {
            c.add_reply_array_len(option_length + 1);
        }
        c.add_reply_bulk(&gp.member);
        if o.withdist {
            add_reply_double_distance(c, gp.dist);
        }
        if o.withhash {
            c.add_reply_integer(gp.score as i64);
        }
        if o.withcoords {
            c.add_reply_array_len(2);
            add_reply_human_long_double(c, gp.longitude);
            add_reply_human_long_double(c, gp.latitude);
        }
    }
}

/// STORE / STOREDIST / GEOSEARCHSTORE: the results as a new sorted set
/// (scores: the geohashes, or the distances in the query's unit), or the
/// destination deleted when there are none. Replies the count.
fn store_geo_points(
    srv: &mut Server,
    c: &mut Client,
    storekey: &[u8],
    ga: Vec<GeoPoint>,
    storedist: bool,
    event: &str,
) {
    let dbid = c.db;
    let returned = ga.len();
    if returned > 0 {
        let pairs: Vec<(Vec<u8>, f64)> = ga
            .into_iter()
            .map(|gp| (gp.member, if storedist { gp.dist } else { gp.score }))
            .collect();
        let limits = ZSetLimits {
            max_listpack_entries: srv.config.zset_max_listpack_entries.max(0) as usize,
            max_listpack_value: srv.config.zset_max_listpack_value.max(0) as usize,
        };
        // GEORADIUS key ... STORE dst: the encoding log names dst.
        storage::encoding_log::set_context_key(storekey);
        let obj = db::new_object(srv, Value::ZSet(zset_from_pairs(&limits, &pairs)));
        db::set_key(srv, dbid, storekey, obj, false);
        notify_keyspace_event(srv, NOTIFY_ZSET, event, storekey, dbid);
        srv.dirty += returned as u64;
    } else if db::db_delete(srv, dbid, storekey) {
        db::signal_modified_key(srv, dbid, storekey);
        notify_keyspace_event(srv, NOTIFY_GENERIC, "del", storekey, dbid);
        srv.dirty += 1;
    }
    c.add_reply_integer(returned as i64);
}

/// GEORADIUS key longitude latitude radius <M | KM | FT | MI> [WITHCOORD]
/// [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC | DESC] [STORE key]
/// [STOREDIST key]
// redis: geo.c georadiusCommand
pub fn georadius_command(srv: &mut Server, c: &mut Client) {
    georadius_generic(srv, c, 1, RADIUS_COORDS);
}

/// GEORADIUSBYMEMBER key member radius <M | KM | FT | MI> [WITHCOORD]
/// [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC | DESC] [STORE key]
/// [STOREDIST key]
// redis: geo.c georadiusbymemberCommand
pub fn georadiusbymember_command(srv: &mut Server, c: &mut Client) {
    georadius_generic(srv, c, 1, RADIUS_MEMBER);
}

/// GEORADIUS_RO key longitude latitude radius <M | KM | FT | MI> [WITHCOORD]
/// [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC | DESC]
// redis: geo.c georadiusroCommand
pub fn georadius_ro_command(srv: &mut Server, c: &mut Client) {
    georadius_generic(srv, c, 1, RADIUS_COORDS | RADIUS_NOSTORE);
}

/// GEORADIUSBYMEMBER_RO key member radius <M | KM | FT | MI> [WITHCOORD]
/// [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC | DESC]
// redis: geo.c georadiusbymemberroCommand
pub fn georadiusbymember_ro_command(srv: &mut Server, c: &mut Client) {
    georadius_generic(srv, c, 1, RADIUS_MEMBER | RADIUS_NOSTORE);
}

/// GEOSEARCH key <FROMMEMBER member | FROMLONLAT longitude latitude>
/// <BYRADIUS radius <M | KM | FT | MI> | BYBOX width height <M | KM | FT |
/// MI>> [ASC | DESC] [COUNT count [ANY]] [WITHCOORD] [WITHDIST] [WITHHASH]
// redis: geo.c geosearchCommand
pub fn geosearch_command(srv: &mut Server, c: &mut Client) {
    georadius_generic(srv, c, 1, GEOSEARCH);
}

/// GEOSEARCHSTORE destination source <FROMMEMBER member | FROMLONLAT
/// longitude latitude> <BYRADIUS radius <M | KM | FT | MI> | BYBOX width
/// height <M | KM | FT | MI>> [ASC | DESC] [COUNT count [ANY]] [STOREDIST]
// redis: geo.c geosearchstoreCommand
pub fn geosearchstore_command(srv: &mut Server, c: &mut Client) {
    georadius_generic(srv, c, 2, GEOSEARCH | GEOSEARCHSTORE);
}

#[cfg(test)]
mod tests {
    use super::*;
    use storage::util::{ld2string, LdStrMode, LongDouble};

    #[test]
    fn human_double_is_ld2string_human() {
        let mut vals = vec![
            0.0,
            -0.0,
            1.0,
            -1.5,
            180.0,
            -180.0,
            85.05112878,
            1e300,
            -5e-324,
        ];
        // Exact ties at the 17th decimal (odd multiples of 2^-k), geohash
        // cell centres, and arbitrary values.
        for k in 18..60 {
            for m in (1..40).step_by(2) {
                let v = m as f64 / 2f64.powi(k);
                vals.extend([v, -v, 100.0 + v]);
            }
        }
        let mut x: u64 = 12345;
        for _ in 0..5000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let score = (x & ((1 << 52) - 1)) as f64;
            if let Some([lon, lat]) = decode_geohash_score(score) {
                vals.extend([lon, lat]);
            }
            vals.push(f64::from_bits(x >> 2) % 1e9);
        }
        for v in vals {
            let c = ld2string(LongDouble::from_f64(v), LdStrMode::Human);
            assert_eq!(human_double(v), c, "{v:e}");
        }
    }

    #[test]
    fn distances_have_four_decimals() {
        assert_eq!(format_distance(0.0), b"0.0000");
        assert_eq!(format_distance(-0.0), b"0.0000");
        assert_eq!(format_distance(0.0001), b"0.0001");
        assert_eq!(format_distance(6.06429515983917e-5), b"0.0001");
        assert_eq!(format_distance(166274.15156960033), b"166274.1516");
        assert_eq!(format_distance(1.23456), b"1.2346");
        assert_eq!(format_distance(-1.5), b"-1.5000");
        assert_eq!(format_distance(0.5), b"0.5000");
        assert_eq!(format_distance(12.0), b"12.0000");
    }
}
