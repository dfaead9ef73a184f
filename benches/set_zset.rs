//! Benchmarks of the set and sorted-set encodings (storage/src/t_set.rs,
//! intset.rs, t_zset.rs, skiplist.rs).
//!
//! * `set/sadd_intset_512` vs `set/sadd_hashtable_512`: 512 SADDs into a set
//!   that stays an intset (integers) or is a hashtable (strings): a sorted
//!   array with binary search and memmove vs a hash table.
//! * `set/sismember_intset` vs `set/sismember_hashtable`: 512 lookups in
//!   each, the O(log N) vs O(1) trade the 512-entry threshold balances.
//! * `zset/zadd_1m`: building a 1M-member skiplist zset.
//! * `zset/zrank_1m`: ZRANK of 1000 members of a 1M zset (span arithmetic
//!   down the skiplist levels).
//!
//! Run with `cargo bench --bench set_zset`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use storage::t_set::{set_type_add, set_type_create, set_type_is_member, SetValue};
use storage::t_zset::{zset_type_create, ZAddFlags, ZSetLimits, ZSetValue};

/// set-max-intset-entries default.
const MAX_INTSET: usize = 512;
/// zset-max-listpack-entries / -value defaults.
const ZLIMITS: ZSetLimits = ZSetLimits {
    max_listpack_entries: 128,
    max_listpack_value: 64,
};

fn members(n: usize, ints: bool) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| {
            if ints {
                i.to_string().into_bytes()
            } else {
                format!("member:{i}").into_bytes()
            }
        })
        .collect()
}

fn build_set(m: &[Vec<u8>]) -> SetValue {
    let mut s = set_type_create(&m[0]);
    for x in m {
        set_type_add(&mut s, x, MAX_INTSET);
    }
    s
}

fn build_zset(n: usize) -> ZSetValue {
    let mut z = zset_type_create(&ZLIMITS, 10);
    for i in 0..n {
        let ele = format!("member:{i}");
        z.add(&ZLIMITS, i as f64, ele.as_bytes(), ZAddFlags::default());
    }
    z
}

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("set");
    for (name, ints) in [("intset", true), ("hashtable", false)] {
        let m = members(512, ints);
        g.bench_function(format!("sadd_{name}_512"), |b| {
            b.iter_batched(
                || m.clone(),
                |m| black_box(build_set(&m)),
                BatchSize::SmallInput,
            )
        });
        let s = build_set(&m);
        g.bench_function(format!("sismember_{name}"), |b| {
            b.iter(|| m.iter().filter(|x| set_type_is_member(&s, x)).count())
        });
    }
    g.finish();

    let mut g = c.benchmark_group("zset");
    g.sample_size(10);
    g.bench_function("zadd_1m", |b| {
        b.iter_batched(
            || (),
            |_| black_box(build_zset(1_000_000)),
            BatchSize::PerIteration,
        )
    });
    let mut z = build_zset(1_000_000);
    let probes: Vec<Vec<u8>> = (0..1000)
        .map(|i| format!("member:{}", i * 997).into_bytes())
        .collect();
    g.bench_function("zrank_1m", |b| {
        b.iter(|| {
            for p in &probes {
                black_box(z.rank(p, false));
            }
        })
    });
    g.finish();
}

criterion_group!(set_zset, benches);
criterion_main!(set_zset);
