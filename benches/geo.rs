//! Benchmarks of GEOSEARCH's work (server/src/geo.rs on
//! storage/src/geohash.rs): the nine score ranges of a search, every
//! candidate decoded and measured, on a 100k-point sorted set.
//!
//! * `geo/search_radius_10km` / `search_radius_100km`: GEOSEARCH FROMLONLAT
//!   ... BYRADIUS around the centre of the point cloud.
//! * `geo/search_box_50km`: BYBOX 50 x 50 km.
//! * `geo/search_any_count_10`: BYRADIUS 100 km COUNT 10 ANY (stops early).
//! * `geo/geoadd_score`: turning one coordinate pair into its 52-bit score.
//!
//! Run with `cargo bench --bench geo`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use redis_lite::geo::members_of_all_neighbors;
use storage::geohash::{geohash_score, GeoShape, ShapeKind};
use storage::t_zset::{zset_type_create, ZAddFlags, ZSetLimits};

const ZLIMITS: ZSetLimits = ZSetLimits {
    max_listpack_entries: 128,
    max_listpack_value: 64,
};

fn benches(c: &mut Criterion) {
    // 100k points spread over roughly 400 x 400 km around (2.35, 48.86).
    let mut z = zset_type_create(&ZLIMITS, 8);
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut rnd = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % 1_000_000) as f64 / 1_000_000.0
    };
    for i in 0..100_000 {
        let lon = 2.35 + (rnd() - 0.5) * 5.0;
        let lat = 48.86 + (rnd() - 0.5) * 3.6;
        let score = geohash_score(lon, lat).unwrap() as f64;
        z.add(
            &ZLIMITS,
            score,
            format!("p{i}").as_bytes(),
            ZAddFlags::default(),
        );
    }
    let shape = |kind| GeoShape {
        xy: [2.35, 48.86],
        conversion: 1000.0,
        kind,
    };
    let mut g = c.benchmark_group("geo");
    for km in [10.0, 100.0] {
        let s = shape(ShapeKind::Radius(km));
        g.bench_function(format!("search_radius_{km}km"), |b| {
            b.iter(|| black_box(members_of_all_neighbors(&z, &s, 0).len()))
        });
    }
    let s = shape(ShapeKind::Box {
        width: 50.0,
        height: 50.0,
    });
    g.bench_function("search_box_50km", |b| {
        b.iter(|| black_box(members_of_all_neighbors(&z, &s, 0).len()))
    });
    let s = shape(ShapeKind::Radius(100.0));
    g.bench_function("search_any_count_10", |b| {
        b.iter(|| black_box(members_of_all_neighbors(&z, &s, 10).len()))
    });
    g.bench_function("geoadd_score", |b| {
        b.iter(|| black_box(geohash_score(black_box(13.361389), black_box(38.115556))))
    });
    g.finish();
}

criterion_group!(geo_benches, benches);
criterion_main!(geo_benches);
