//! Geohashes as Redis computes them (geohash.c and geohash_helper.c).
//!
//! A GEO set is a sorted set whose scores are 52-bit geohashes: longitude
//! and latitude are each scaled to a 26-bit integer over their range
//! (-180..180 and -85.05112878..85.05112878, the Web Mercator limits), and
//! the two are interleaved bit by bit (latitude on the even bits), so that
//! points close on the map tend to be close in score. A radius or box
//! search then becomes a handful of score ranges: the geohash box holding
//! the centre and its eight neighbours, at a precision (step) chosen so the
//! boxes cover the search area.
//!
//! Every floating-point step follows Redis's C code operation by operation
//! (the same libm functions, the same order), because GEOPOS/GEODIST and
//! the search results must come out byte-identical.

/// GEO_STEP_MAX: 26 bits per coordinate, 52 bits in all (a double holds
/// integers up to 2^53 exactly, so the score is the hash).
pub const GEO_STEP_MAX: u8 = 26;

/// The coordinate limits (EPSG:900913 / EPSG:3785): no geocoding at the
/// poles.
pub const GEO_LAT_MIN: f64 = -85.05112878;
pub const GEO_LAT_MAX: f64 = 85.05112878;
pub const GEO_LONG_MIN: f64 = -180.0;
pub const GEO_LONG_MAX: f64 = 180.0;

/// D_R: degrees to radians (M_PI / 180.0).
const D_R: f64 = std::f64::consts::PI / 180.0;

/// EARTH_RADIUS_IN_METERS: the quadratic mean radius of WGS-84 that every
/// distance uses.
pub const EARTH_RADIUS_IN_METERS: f64 = 6372797.560856;

/// MERCATOR_MAX: half the Mercator world width in meters, the start of the
/// step estimate.
const MERCATOR_MAX: f64 = 20037726.37;

/// GeoHashBits: the interleaved bits and how many bits per coordinate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GeoHashBits {
    pub bits: u64,
    pub step: u8,
}

impl GeoHashBits {
    /// HASHISZERO: a neighbour that was excluded from the search.
    pub fn is_zero(&self) -> bool {
        self.bits == 0 && self.step == 0
    }
}

/// GeoHashRange: one coordinate's interval.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GeoHashRange {
    pub min: f64,
    pub max: f64,
}

/// GeoHashArea: the box a hash stands for.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GeoHashArea {
    pub hash: GeoHashBits,
    pub longitude: GeoHashRange,
    pub latitude: GeoHashRange,
}

/// GeoHashNeighbors, in geohash.h's field order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GeoHashNeighbors {
    pub north: GeoHashBits,
    pub east: GeoHashBits,
    pub west: GeoHashBits,
    pub south: GeoHashBits,
    pub north_east: GeoHashBits,
    pub south_east: GeoHashBits,
    pub north_west: GeoHashBits,
    pub south_west: GeoHashBits,
}

/// GeoHashRadius: the centre box and its neighbours for one search.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GeoHashRadius {
    pub hash: GeoHashBits,
    pub area: GeoHashArea,
    pub neighbors: GeoHashNeighbors,
}

/// The search shape (GeoShape): a circle of `radius` or a `width` x
/// `height` box, in the unit `conversion` converts to meters, centred on
/// `xy` (longitude, latitude).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GeoShape {
    pub xy: [f64; 2],
    pub conversion: f64,
    pub kind: ShapeKind,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ShapeKind {
    Radius(f64),
    Box { width: f64, height: f64 },
}

/// geohashGetCoordRange: the ranges every GEO command encodes over.
pub fn coord_range() -> (GeoHashRange, GeoHashRange) {
    (
        GeoHashRange {
            min: GEO_LONG_MIN,
            max: GEO_LONG_MAX,
        },
        GeoHashRange {
            min: GEO_LAT_MIN,
            max: GEO_LAT_MAX,
        },
    )
}

/// interleave64: the low 32 bits of `xlo` on the even bits, of `ylo` on
/// the odd ones (bithacks' "interleave by binary magic numbers").
pub fn interleave64(xlo: u32, ylo: u32) -> u64 {
    const B: [u64; 5] = [
        0x5555555555555555,
        0x3333333333333333,
        0x0F0F0F0F0F0F0F0F,
        0x00FF00FF00FF00FF,
        0x0000FFFF0000FFFF,
    ];
    const S: [u32; 5] = [1, 2, 4, 8, 16];
    let (mut x, mut y) = (xlo as u64, ylo as u64);
    for i in (0..5).rev() {
        x = (x | (x << S[i])) & B[i];
        y = (y | (y << S[i])) & B[i];
    }
    x | (y << 1)
}

/// deinterleave64: the inverse; the even bits come back in the low 32 bits
/// of the result, the odd bits in the high 32.
pub fn deinterleave64(interleaved: u64) -> u64 {
    const B: [u64; 6] = [
        0x5555555555555555,
        0x3333333333333333,
        0x0F0F0F0F0F0F0F0F,
        0x00FF00FF00FF00FF,
        0x0000FFFF0000FFFF,
        0x00000000FFFFFFFF,
    ];
    const S: [u32; 6] = [0, 1, 2, 4, 8, 16];
    let (mut x, mut y) = (interleaved, interleaved >> 1);
    for i in 0..6 {
        x = (x | (x >> S[i])) & B[i];
        y = (y | (y >> S[i])) & B[i];
    }
    x | (y << 32)
}

/// geohashEncode: the `step`-bit cells of `longitude`/`latitude` within the
/// given ranges, interleaved. None outside the ranges or the GEO limits.
pub fn geohash_encode(
    long_range: &GeoHashRange,
    lat_range: &GeoHashRange,
    longitude: f64,
    latitude: f64,
    step: u8,
) -> Option<GeoHashBits> {
    let range_is_zero = |r: &GeoHashRange| r.max == 0.0 && r.min == 0.0;
    if step > 32 || step == 0 || range_is_zero(lat_range) || range_is_zero(long_range) {
        return None;
    }
    if !(GEO_LONG_MIN..=GEO_LONG_MAX).contains(&longitude)
        || !(GEO_LAT_MIN..=GEO_LAT_MAX).contains(&latitude)
    {
        return None;
    }
    if latitude < lat_range.min
        || latitude > lat_range.max
        || longitude < long_range.min
        || longitude > long_range.max
    {
        return None;
    }
    let mut lat_offset = (latitude - lat_range.min) / (lat_range.max - lat_range.min);
    let mut long_offset = (longitude - long_range.min) / (long_range.max - long_range.min);
    // To fixed point: the cell index at this step (C's double -> uint32).
    lat_offset *= (1u64 << step) as f64;
    long_offset *= (1u64 << step) as f64;
    Some(GeoHashBits {
        bits: interleave64(lat_offset as u32, long_offset as u32),
        step,
    })
}

/// geohashEncodeWGS84: over the GEO ranges.
pub fn geohash_encode_wgs84(longitude: f64, latitude: f64, step: u8) -> Option<GeoHashBits> {
    let (long_range, lat_range) = coord_range();
    geohash_encode(&long_range, &lat_range, longitude, latitude, step)
}

/// geohashDecode: the box a hash stands for. None for a zero hash.
pub fn geohash_decode(
    long_range: GeoHashRange,
    lat_range: GeoHashRange,
    hash: GeoHashBits,
) -> Option<GeoHashArea> {
    let range_is_zero = |r: &GeoHashRange| r.max == 0.0 && r.min == 0.0;
    if hash.is_zero() || range_is_zero(&lat_range) || range_is_zero(&long_range) {
        return None;
    }
    let step = hash.step;
    let hash_sep = deinterleave64(hash.bits); // [LAT][LONG]
    let lat_scale = lat_range.max - lat_range.min;
    let long_scale = long_range.max - long_range.min;
    let ilato = hash_sep as u32;
    let ilono = (hash_sep >> 32) as u32;
    let div = (1u64 << step) as f64;
    Some(GeoHashArea {
        hash,
        latitude: GeoHashRange {
            min: lat_range.min + (ilato as f64 * 1.0 / div) * lat_scale,
            max: lat_range.min + ((ilato as f64 + 1.0) * 1.0 / div) * lat_scale,
        },
        longitude: GeoHashRange {
            min: long_range.min + (ilono as f64 * 1.0 / div) * long_scale,
            max: long_range.min + ((ilono as f64 + 1.0) * 1.0 / div) * long_scale,
        },
    })
}

/// geohashDecodeAreaToLongLat: the centre of the box, clamped to the limits.
pub fn decode_area_to_long_lat(area: &GeoHashArea) -> [f64; 2] {
    let x = ((area.longitude.min + area.longitude.max) / 2.0).clamp(GEO_LONG_MIN, GEO_LONG_MAX);
    let y = ((area.latitude.min + area.latitude.max) / 2.0).clamp(GEO_LAT_MIN, GEO_LAT_MAX);
    [x, y]
}

/// geohashDecodeToLongLatWGS84.
pub fn geohash_decode_to_long_lat_wgs84(hash: GeoHashBits) -> Option<[f64; 2]> {
    let (long_range, lat_range) = coord_range();
    geohash_decode(long_range, lat_range, hash).map(|a| decode_area_to_long_lat(&a))
}

/// decodeGeohash (geo.c): a zset score back to (longitude, latitude).
/// Any score decodes, even one no GEOADD wrote (ZADD -1 ...).
pub fn decode_geohash_score(score: f64) -> Option<[f64; 2]> {
    geohash_decode_to_long_lat_wgs84(GeoHashBits {
        bits: c_double_to_u64(score),
        step: GEO_STEP_MAX,
    })
}

/// C's `(uint64_t)score` as x86-64 compilers implement it: below 2^63 a
/// truncating signed conversion (so -1.0 becomes 2^64-1, not 0 as Rust's
/// saturating `as` would give), above it the same after subtracting 2^63;
/// out-of-range results are the "integer indefinite" 0x8000000000000000.
pub fn c_double_to_u64(x: f64) -> u64 {
    const TWO63: f64 = 9223372036854775808.0;
    let cvttsd2si = |v: f64| -> i64 {
        if v.is_nan() || !(-TWO63..TWO63).contains(&v) {
            i64::MIN
        } else {
            v as i64
        }
    };
    if x < TWO63 {
        cvttsd2si(x) as u64
    } else {
        (cvttsd2si(x - TWO63) as u64) ^ (1 << 63)
    }
}

/// The score GEOADD stores for a point (geohashEncodeWGS84 at step 26,
/// then geohashAlign52Bits). The caller checked the coordinates.
pub fn geohash_score(longitude: f64, latitude: f64) -> Option<u64> {
    geohash_encode_wgs84(longitude, latitude, GEO_STEP_MAX).map(geohash_align_52bits)
}

/// geohash_move_x: the box `d` cells east (+1) or west (-1), wrapping.
fn geohash_move_x(hash: &mut GeoHashBits, d: i8) {
    if d == 0 {
        return;
    }
    let mut x = hash.bits & 0xaaaaaaaaaaaaaaaa;
    let y = hash.bits & 0x5555555555555555;
    let shift = 64 - hash.step as u32 * 2;
    let zz = 0x5555555555555555u64.checked_shr(shift).unwrap_or(0);
    if d > 0 {
        x = x.wrapping_add(zz.wrapping_add(1));
    } else {
        x |= zz;
        x = x.wrapping_sub(zz.wrapping_add(1));
    }
    x &= 0xaaaaaaaaaaaaaaaau64.checked_shr(shift).unwrap_or(0);
    hash.bits = x | y;
}

/// geohash_move_y: the box `d` cells north (+1) or south (-1), wrapping.
fn geohash_move_y(hash: &mut GeoHashBits, d: i8) {
    if d == 0 {
        return;
    }
    let x = hash.bits & 0xaaaaaaaaaaaaaaaa;
    let mut y = hash.bits & 0x5555555555555555;
    let shift = 64 - hash.step as u32 * 2;
    let zz = 0xaaaaaaaaaaaaaaaau64.checked_shr(shift).unwrap_or(0);
    if d > 0 {
        y = y.wrapping_add(zz.wrapping_add(1));
    } else {
        y |= zz;
        y = y.wrapping_sub(zz.wrapping_add(1));
    }
    y &= 0x5555555555555555u64.checked_shr(shift).unwrap_or(0);
    hash.bits = x | y;
}

/// geohashNeighbors: the eight boxes around `hash`.
pub fn geohash_neighbors(hash: &GeoHashBits) -> GeoHashNeighbors {
    let moved = |dx: i8, dy: i8| {
        let mut h = *hash;
        geohash_move_x(&mut h, dx);
        geohash_move_y(&mut h, dy);
        h
    };
    GeoHashNeighbors {
        east: moved(1, 0),
        west: moved(-1, 0),
        south: moved(0, -1),
        north: moved(0, 1),
        north_west: moved(-1, 1),
        north_east: moved(1, 1),
        south_east: moved(1, -1),
        south_west: moved(-1, -1),
    }
}

/// geohashAlign52Bits: the hash as a 52-bit score prefix.
pub fn geohash_align_52bits(hash: GeoHashBits) -> u64 {
    hash.bits << (52 - hash.step as u32 * 2)
}

fn deg_rad(ang: f64) -> f64 {
    ang * D_R
}

fn rad_deg(ang: f64) -> f64 {
    ang / D_R
}

/// geohashEstimateStepsByRadius: the coarsest step whose boxes are still
/// about as wide as the search radius, one step coarser near the poles.
pub fn geohash_estimate_steps_by_radius(mut range_meters: f64, lat: f64) -> u8 {
    if range_meters == 0.0 {
        return 26;
    }
    let mut step: i32 = 1;
    while range_meters < MERCATOR_MAX {
        range_meters *= 2.0;
        step += 1;
    }
    // Make sure the range is included in most of the base cases.
    step -= 2;
    if !(-66.0..=66.0).contains(&lat) {
        step -= 1;
        if !(-80.0..=80.0).contains(&lat) {
            step -= 1;
        }
    }
    step.clamp(1, 26) as u8
}

/// geohashBoundingBox: [min_lon, min_lat, max_lon, max_lat] around the
/// shape. The longitude span is measured at the latitude edge nearer the
/// pole, where meridians are closest.
pub fn geohash_bounding_box(shape: &GeoShape) -> [f64; 4] {
    let [longitude, latitude] = shape.xy;
    let (height, width) = match shape.kind {
        ShapeKind::Radius(r) => (shape.conversion * r, shape.conversion * r),
        ShapeKind::Box { width, height } => (
            shape.conversion * (height / 2.0),
            shape.conversion * (width / 2.0),
        ),
    };
    let lat_delta = rad_deg(height / EARTH_RADIUS_IN_METERS);
    let long_delta_top =
        rad_deg(width / EARTH_RADIUS_IN_METERS / deg_rad(latitude + lat_delta).cos());
    let long_delta_bottom =
        rad_deg(width / EARTH_RADIUS_IN_METERS / deg_rad(latitude - lat_delta).cos());
    let southern = latitude < 0.0;
    let long_delta = if southern {
        long_delta_bottom
    } else {
        long_delta_top
    };
    [
        longitude - long_delta,
        latitude - lat_delta,
        longitude + long_delta,
        latitude + lat_delta,
    ]
}

/// geohashCalculateAreasByShapeWGS84: the centre box and the neighbours a
/// search must scan. The step comes from the radius (for a box, the
/// distance to its corner); it is made one coarser if a neighbour does not
/// reach the bounding box's edge; then neighbours entirely outside the
/// bounding box are dropped (zeroed).
pub fn geohash_calculate_areas_by_shape_wgs84(shape: &GeoShape) -> GeoHashRadius {
    let [min_lon, min_lat, max_lon, max_lat] = geohash_bounding_box(shape);
    let [longitude, latitude] = shape.xy;
    let radius_meters = match shape.kind {
        ShapeKind::Radius(r) => r,
        ShapeKind::Box { width, height } => {
            ((width / 2.0) * (width / 2.0) + (height / 2.0) * (height / 2.0)).sqrt()
        }
    } * shape.conversion;

    let mut steps = geohash_estimate_steps_by_radius(radius_meters, latitude);
    let (long_range, lat_range) = coord_range();
    let cover = |steps: u8| {
        let hash =
            geohash_encode(&long_range, &lat_range, longitude, latitude, steps).unwrap_or_default();
        let neighbors = geohash_neighbors(&hash);
        let area = geohash_decode(long_range, lat_range, hash).unwrap_or_default();
        (hash, neighbors, area)
    };
    let (mut hash, mut neighbors, mut area) = cover(steps);

    // Is the step fine enough at the edges of the covered area?
    let decode = |h: GeoHashBits| geohash_decode(long_range, lat_range, h).unwrap_or_default();
    let (north, south) = (decode(neighbors.north), decode(neighbors.south));
    let (east, west) = (decode(neighbors.east), decode(neighbors.west));
    let decrease_step = north.latitude.max < max_lat
        || south.latitude.min > min_lat
        || east.longitude.max < max_lon
        || west.longitude.min > min_lon;
    if steps > 1 && decrease_step {
        steps -= 1;
        (hash, neighbors, area) = cover(steps);
    }

    // Exclude the search areas that are useless.
    if steps >= 2 {
        let zero = GeoHashBits::default();
        if area.latitude.min < min_lat {
            neighbors.south = zero;
            neighbors.south_west = zero;
            neighbors.south_east = zero;
        }
        if area.latitude.max > max_lat {
            neighbors.north = zero;
            neighbors.north_east = zero;
            neighbors.north_west = zero;
        }
        if area.longitude.min < min_lon {
            neighbors.west = zero;
            neighbors.south_west = zero;
            neighbors.north_west = zero;
        }
        if area.longitude.max > max_lon {
            neighbors.east = zero;
            neighbors.south_east = zero;
            neighbors.north_east = zero;
        }
    }
    GeoHashRadius {
        hash,
        area,
        neighbors,
    }
}

/// geohashGetLatDistance: along a meridian, asin(sin(x)) = x.
pub fn geohash_get_lat_distance(lat1d: f64, lat2d: f64) -> f64 {
    EARTH_RADIUS_IN_METERS * (deg_rad(lat2d) - deg_rad(lat1d)).abs()
}

/// geohashGetDistance: the haversine great-circle distance in meters.
pub fn geohash_get_distance(lon1d: f64, lat1d: f64, lon2d: f64, lat2d: f64) -> f64 {
    let lon1r = deg_rad(lon1d);
    let lon2r = deg_rad(lon2d);
    let v = ((lon2r - lon1r) / 2.0).sin();
    // Same longitude: skip the expensive part.
    if v == 0.0 {
        return geohash_get_lat_distance(lat1d, lat2d);
    }
    let lat1r = deg_rad(lat1d);
    let lat2r = deg_rad(lat2d);
    let u = ((lat2r - lat1r) / 2.0).sin();
    let a = u * u + lat1r.cos() * lat2r.cos() * v * v;
    2.0 * EARTH_RADIUS_IN_METERS * a.sqrt().asin()
}

/// geohashGetDistanceIfInRadiusWGS84: the distance if within `radius`.
pub fn geohash_get_distance_if_in_radius(
    x1: f64,
    y1: f64,
    x2: f64,
    y2: f64,
    radius: f64,
) -> Option<f64> {
    let distance = geohash_get_distance(x1, y1, x2, y2);
    (distance <= radius).then_some(distance)
}

/// geohashGetDistanceIfInRectangle: is (x2, y2) within half the height
/// (along the meridian) and half the width (along its parallel) of the box
/// centred on (x1, y1)? Then the distance between the two.
pub fn geohash_get_distance_if_in_rectangle(
    width_m: f64,
    height_m: f64,
    x1: f64,
    y1: f64,
    x2: f64,
    y2: f64,
) -> Option<f64> {
    // The latitude test is cheaper, so it goes first.
    let lat_distance = geohash_get_lat_distance(y2, y1);
    if lat_distance > height_m / 2.0 {
        return None;
    }
    let lon_distance = geohash_get_distance(x2, y2, x1, y2);
    if lon_distance > width_m / 2.0 {
        return None;
    }
    Some(geohash_get_distance(x1, y1, x2, y2))
}

/// GEOHASH's text: decode the score, re-encode over the standard ranges
/// (-180..180, -90..90) and write 11 base-32 characters (the last one is
/// always '0': 52 bits make only ten and a bit).
pub fn geohash_string(score: f64) -> Option<[u8; 11]> {
    const ALPHABET: &[u8; 32] = b"0123456789bcdefghjkmnpqrstuvwxyz";
    let xy = decode_geohash_score(score)?;
    let long_range = GeoHashRange {
        min: -180.0,
        max: 180.0,
    };
    let lat_range = GeoHashRange {
        min: -90.0,
        max: 90.0,
    };
    // Redis ignores a failed encode here (the hash stays zero).
    let hash = geohash_encode(&long_range, &lat_range, xy[0], xy[1], 26).map_or(0, |h| h.bits);
    let mut buf = [0u8; 11];
    for (i, b) in buf.iter_mut().enumerate() {
        let idx = if i == 10 {
            0
        } else {
            (hash >> (52 - (i + 1) * 5)) & 0x1f
        };
        *b = ALPHABET[idx as usize];
    }
    Some(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleave_and_deinterleave_are_inverse() {
        for (x, y) in [
            (0u32, 0u32),
            (1, 0),
            (0, 1),
            (0x3ff_ffff, 0x155_5555),
            (u32::MAX, 7),
        ] {
            let i = interleave64(x, y);
            assert_eq!(deinterleave64(i), x as u64 | ((y as u64) << 32));
        }
        assert_eq!(interleave64(1, 0), 1);
        assert_eq!(interleave64(0, 1), 2);
    }

    #[test]
    fn geoadd_score_of_palermo_is_redis_s() {
        // GEOADD Sicily 13.361389 38.115556 "Palermo"; ZSCORE answers this.
        assert_eq!(geohash_score(13.361389, 38.115556), Some(3479099956230698));
        assert_eq!(geohash_score(15.087269, 37.502669), Some(3479447370796909));
        assert_eq!(geohash_score(181.0, 0.0), None);
        assert_eq!(geohash_score(0.0, 85.06), None);
    }

    #[test]
    fn decode_returns_the_cell_centre() {
        let xy = decode_geohash_score(3479099956230698.0).unwrap();
        // GEOPOS Sicily Palermo: 13.36138933897018433, 38.11555639549629859
        assert_eq!(xy[0], 13.361389338970184);
        assert_eq!(xy[1], 38.1155563954963);
        assert!(decode_geohash_score(0.0).is_some());
    }

    #[test]
    fn scores_convert_as_c_does() {
        assert_eq!(c_double_to_u64(-1.0), u64::MAX);
        assert_eq!(c_double_to_u64(-0.5), 0);
        assert_eq!(c_double_to_u64(1.5), 1);
        assert_eq!(c_double_to_u64(4503599627370496.0), 1 << 52);
        assert_eq!(c_double_to_u64(1e19), 10_000_000_000_000_000_000);
        assert_eq!(c_double_to_u64(f64::NEG_INFINITY), 1 << 63);
        assert_eq!(c_double_to_u64(f64::INFINITY), 0);
    }

    #[test]
    fn distance_palermo_catania() {
        let p = decode_geohash_score(3479099956230698.0).unwrap();
        let c = decode_geohash_score(3479447370796909.0).unwrap();
        // GEODIST Sicily Palermo Catania: "166274.1516"
        let d = geohash_get_distance(p[0], p[1], c[0], c[1]);
        assert!((d - 166274.1516).abs() < 0.0001, "{d}");
        assert_eq!(
            geohash_get_distance(10.0, 20.0, 10.0, 21.0),
            geohash_get_lat_distance(20.0, 21.0)
        );
    }

    #[test]
    fn geohash_text_as_redis() {
        // GEOHASH Sicily Palermo Catania: sqc8b49rny0 sqdtr74hyu0
        assert_eq!(&geohash_string(3479099956230698.0).unwrap(), b"sqc8b49rny0");
        assert_eq!(&geohash_string(3479447370796909.0).unwrap(), b"sqdtr74hyu0");
    }

    #[test]
    fn neighbours_wrap_around_the_cell_grid() {
        let h = geohash_encode_wgs84(0.0, 0.0, 3).unwrap();
        let n = geohash_neighbors(&h);
        let back = {
            let mut e = n.east;
            geohash_move_x(&mut e, -1);
            e
        };
        assert_eq!(back, h);
        assert_ne!(n.north, n.south);
    }

    #[test]
    fn step_estimate_follows_the_radius() {
        assert_eq!(geohash_estimate_steps_by_radius(0.0, 0.0), 26);
        assert_eq!(geohash_estimate_steps_by_radius(1.0, 0.0), 24);
        assert_eq!(geohash_estimate_steps_by_radius(1.0, 70.0), 23);
        assert_eq!(geohash_estimate_steps_by_radius(1.0, -85.0), 22);
        assert_eq!(geohash_estimate_steps_by_radius(1e9, 0.0), 1);
        assert_eq!(geohash_estimate_steps_by_radius(200_000.0, 0.0), 6);
    }

    #[test]
    fn huge_radius_covers_the_world_without_panicking() {
        let shape = GeoShape {
            xy: [0.0, 85.0],
            conversion: 1000.0,
            kind: ShapeKind::Radius(50_000.0),
        };
        let r = geohash_calculate_areas_by_shape_wgs84(&shape);
        assert_eq!(r.hash.step, 1);
        let shape = GeoShape {
            xy: [179.9, -85.0],
            conversion: 1.0,
            kind: ShapeKind::Box {
                width: 0.0,
                height: 0.0,
            },
        };
        let r = geohash_calculate_areas_by_shape_wgs84(&shape);
        assert!(r.hash.step >= 1);
    }
}
