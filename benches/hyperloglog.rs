//! Benchmarks of the HyperLogLog (storage/src/hyperloglog.rs):
//!
//! * `hll/pfadd_sparse_1000`: 1000 adds into a new (sparse) HLL: each one
//!   walks the opcodes to its register and splits one in place; the string
//!   turns dense past hll-sparse-max-bytes (3000).
//! * `hll/pfadd_dense_1000`: 1000 adds into a dense HLL: hash + one 6-bit
//!   register.
//! * `hll/pfcount_dense` / `pfcount_sparse`: the count without the cache
//!   (a histogram of 16384 registers, then the Ertl estimator).
//! * `hll/pfcount_union_3`: PFCOUNT of three keys (merge into a raw
//!   register array, then count).
//!
//! Run with `cargo bench --bench hyperloglog`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use storage::hyperloglog::{
    create_hll_object, hll_add, hll_count, hll_count_raw, hll_merge, hll_sparse_to_dense,
    HLL_REGISTERS,
};

/// hll-sparse-max-bytes default.
const SPARSE_MAX: i64 = 3000;

fn elements(prefix: &str, n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| format!("{prefix}:{i}").into_bytes())
        .collect()
}

fn filled(els: &[Vec<u8>], dense: bool) -> Vec<u8> {
    let mut s = create_hll_object();
    if dense {
        hll_sparse_to_dense(&mut s).unwrap();
    }
    for e in els {
        hll_add(&mut s, e, SPARSE_MAX).unwrap();
    }
    s
}

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("hll");
    let els = elements("ele", 1000);
    g.bench_function("pfadd_sparse_1000", |b| {
        b.iter_batched(
            create_hll_object,
            |mut s| {
                for e in &els {
                    hll_add(&mut s, e, SPARSE_MAX).unwrap();
                }
                black_box(s)
            },
            BatchSize::SmallInput,
        )
    });
    let dense = filled(&elements("base", 100_000), true);
    g.bench_function("pfadd_dense_1000", |b| {
        b.iter_batched(
            || dense.clone(),
            |mut s| {
                for e in &els {
                    hll_add(&mut s, e, SPARSE_MAX).unwrap();
                }
                black_box(s)
            },
            BatchSize::SmallInput,
        )
    });
    g.bench_function("pfcount_dense", |b| b.iter(|| black_box(hll_count(&dense))));
    let sparse = filled(&elements("few", 300), false);
    g.bench_function("pfcount_sparse", |b| {
        b.iter(|| black_box(hll_count(&sparse)))
    });
    let (h1, h2) = (
        filled(&elements("a", 5000), false),
        filled(&elements("b", 50_000), false),
    );
    g.bench_function("pfcount_union_3", |b| {
        b.iter(|| {
            let mut max = Box::new([0u8; HLL_REGISTERS]);
            for s in [&h1, &h2, &dense] {
                hll_merge(&mut max, s).unwrap();
            }
            black_box(hll_count_raw(&max))
        })
    });
    g.finish();
}

criterion_group!(hll_benches, benches);
criterion_main!(hll_benches);
