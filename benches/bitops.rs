//! Benchmarks of the bitmap primitives (storage/src/bitops.rs), the work
//! behind BITCOUNT, BITPOS and BITOP on big strings:
//!
//! * `bitops/bitcount_1mb`: population count of a 1 MB bitmap (8M bits),
//!   eight bytes at a time as Redis's redisPopcount.
//! * `bitops/bitpos_1mb`: the first set bit at the very end of 1 MB of
//!   zeros (whole words skipped).
//! * `bitops/bitop_and_2x1mb` and `bitop_or_4x1mb`: BITOP over 1 MB sources.
//! * `bitops/bitfield_incr_u8_x1000`: 1000 BITFIELD INCRBY u8 on a small
//!   bitmap, the bit-by-bit field access.
//!
//! Run with `cargo bench --bench bitops`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use storage::bitops::{
    bitop, bitpos, check_unsigned_bitfield_overflow, get_unsigned_bitfield, popcount,
    set_unsigned_bitfield, BitOp, Overflow,
};

const MB: usize = 1 << 20;

fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("bitops");
    let a = pattern(MB, 1);
    let b = pattern(MB, 2);
    let c3 = pattern(MB, 3);
    let d = pattern(MB, 4);
    g.throughput(Throughput::Bytes(MB as u64));
    g.bench_function("bitcount_1mb", |bch| {
        bch.iter(|| black_box(popcount(black_box(&a))))
    });
    let mut zeros = vec![0u8; MB];
    zeros[MB - 1] = 1;
    g.bench_function("bitpos_1mb", |bch| {
        bch.iter(|| black_box(bitpos(black_box(&zeros), true)))
    });
    g.bench_function("bitop_and_2x1mb", |bch| {
        bch.iter(|| black_box(bitop(BitOp::And, &[&a, &b])))
    });
    g.throughput(Throughput::Bytes(4 * MB as u64));
    g.bench_function("bitop_or_4x1mb", |bch| {
        bch.iter(|| black_box(bitop(BitOp::Or, &[&a, &b, &c3, &d])))
    });
    g.finish();

    let mut g = c.benchmark_group("bitops");
    let mut field = vec![0u8; 128];
    g.bench_function("bitfield_incr_u8_x1000", |bch| {
        bch.iter(|| {
            for i in 0..1000u64 {
                let off = (i * 8) % 1000;
                let old = get_unsigned_bitfield(&field, off, 8);
                let new = check_unsigned_bitfield_overflow(old, 1, 8, Overflow::Wrap)
                    .limit()
                    .unwrap_or(old + 1);
                set_unsigned_bitfield(&mut field, off, 8, new);
            }
            black_box(&field);
        })
    });
    g.finish();
}

criterion_group!(bitops_benches, benches);
criterion_main!(bitops_benches);
