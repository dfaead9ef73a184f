//! Benchmarks of the glob matcher (storage/src/util.rs, `string_match`), the
//! per-key cost of KEYS pattern and SCAN MATCH.
//!
//! * `glob/keys_10k/<pattern>`: one pattern against 10,000 keys shaped like
//!   `user:<id>:session`, the loop keys_command runs. Patterns: a prefix, a
//!   suffix, single-byte wildcards, and a class.
//! * `glob/adversarial`: "a*a*...*b" (30 stars) against 60 'a's, which is
//!   exponential without Redis's skipLongerMatches cut-off and linear with it.
//!
//! Run with `cargo bench --bench glob`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use storage::util::string_match;

const KEYS: usize = 10_000;

fn keys_patterns(c: &mut Criterion) {
    let keys: Vec<Vec<u8>> = (0..KEYS)
        .map(|i| format!("user:{i}:session").into_bytes())
        .collect();
    let patterns = [
        "user:*",
        "*:session",
        "user:1?3:*",
        "user:[0-4]*:session",
        "*9*9*",
    ];

    let mut group = c.benchmark_group("glob/keys_10k");
    group.throughput(Throughput::Elements(KEYS as u64));
    for pattern in patterns {
        group.bench_with_input(BenchmarkId::from_parameter(pattern), pattern, |b, p| {
            b.iter(|| {
                let mut matched = 0;
                for k in &keys {
                    matched += string_match(p.as_bytes(), k, false) as usize;
                }
                black_box(matched)
            })
        });
    }
    group.finish();
}

fn adversarial(c: &mut Criterion) {
    let pattern = format!("{}b", "a*".repeat(30));
    let string = "a".repeat(60);
    c.bench_function("glob/adversarial", |b| {
        b.iter(|| {
            string_match(
                black_box(pattern.as_bytes()),
                black_box(string.as_bytes()),
                false,
            )
        })
    });
}

criterion_group!(benches, keys_patterns, adversarial);
criterion_main!(benches);
