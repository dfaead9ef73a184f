//! Benchmarks of the dict (storage/src/dict.rs), the structure under every
//! keyspace lookup.
//!
//! * `dict/insert_1m`: a million `key:N` inserts into an empty dict,
//!   doubling from 4 buckets to 1M with incremental rehash along the way:
//!   the cost of DEBUG POPULATE 1000000 without pre-sizing.
//! * `dict/lookup_hit` / `dict/lookup_miss`: `find` on a 1M-key dict, 1000
//!   keys per iteration (GET / EXISTS without the protocol around them).
//! * `dict/scan_full_1m`: every SCAN call of a full cursor loop over 1M keys,
//!   the work behind `redis-cli --scan`.
//! * `dict/drop_1m`: freeing a 1M-entry dict, one allocation per entry: what
//!   DEL of a big hashtable set costs the main thread, and why UNLINK exists.
//!
//! Run with `cargo bench --bench dict`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use storage::dict::{Dict, Sds};

const KEYS: usize = 1_000_000;

/// Lookups per iteration of the lookup benchmarks.
const LOOKUPS: usize = 1000;

fn key(i: usize) -> Sds {
    format!("key:{i}").into_bytes().into_boxed_slice()
}

fn build(n: usize) -> Dict<u64> {
    let mut d = Dict::new();
    for i in 0..n {
        d.insert(key(i), i as u64);
    }
    // Finish any rehash in progress so lookups see one table.
    while d.rehash(1000) {}
    d
}

fn insert(c: &mut Criterion) {
    let mut group = c.benchmark_group("dict");
    group.sample_size(10);
    group.throughput(Throughput::Elements(KEYS as u64));
    group.bench_function("insert_1m", |b| {
        b.iter_batched(
            // Keys are allocated outside the timed part; the dict they go
            // into is dropped outside it too.
            || (0..KEYS).map(key).collect::<Vec<_>>(),
            |keys| {
                let mut d = Dict::new();
                for (i, k) in keys.into_iter().enumerate() {
                    d.insert(k, i as u64);
                }
                d
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

fn lookup(c: &mut Criterion) {
    let mut d = build(KEYS);
    let hits: Vec<Sds> = (0..LOOKUPS).map(|i| key(i * (KEYS / LOOKUPS))).collect();
    let misses: Vec<Sds> = (0..LOOKUPS).map(|i| key(KEYS + i)).collect();

    let mut group = c.benchmark_group("dict");
    group.throughput(Throughput::Elements(LOOKUPS as u64));
    group.bench_function("lookup_hit", |b| {
        b.iter(|| {
            let mut found = 0;
            for k in &hits {
                found += d.find(k).is_some() as usize;
            }
            black_box(found)
        })
    });
    group.bench_function("lookup_miss", |b| {
        b.iter(|| {
            let mut found = 0;
            for k in &misses {
                found += d.find(k).is_some() as usize;
            }
            black_box(found)
        })
    });
    group.finish();
}

fn scan(c: &mut Criterion) {
    let d = build(KEYS);
    let mut group = c.benchmark_group("dict");
    group.sample_size(10);
    group.throughput(Throughput::Elements(KEYS as u64));
    group.bench_function("scan_full_1m", |b| {
        b.iter(|| {
            let mut seen = 0usize;
            let mut cursor = 0;
            loop {
                cursor = d.scan(cursor, |k, _| seen += k.len());
                if cursor == 0 {
                    break;
                }
            }
            black_box(seen)
        })
    });
    group.finish();
}

fn drop_dict(c: &mut Criterion) {
    let mut group = c.benchmark_group("dict");
    group.sample_size(10);
    group.throughput(Throughput::Elements(KEYS as u64));
    group.bench_function("drop_1m", |b| {
        b.iter_batched(|| build(KEYS), drop, BatchSize::PerIteration)
    });
    group.finish();
}

criterion_group!(benches, insert, lookup, scan, drop_dict);
criterion_main!(benches);
