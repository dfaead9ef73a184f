//! Benchmarks of the stream type (storage/src/t_stream.rs over the rax in
//! storage/src/rax.rs), at Redis's default node limits (100 entries or
//! 4 KB per listpack node).
//!
//! * `stream/xadd_1000`: 1000 XADDs with automatic IDs of a two-field
//!   entry into a stream that keeps growing: the master-fields match
//!   (SAMEFIELDS), the node pre-allocation, a new node every 100 entries.
//! * `stream/xadd_maxlen_1000`: the same into a capped stream (`MAXLEN ~
//!   1000`): each append also tries the approximate trim, which drops a
//!   whole node now and then.
//! * `stream/xrange_100` / `stream/xrevrange_100`: reading 100 entries
//!   with their fields from the middle of a 100k-entry stream (the seek
//!   in the rax, then the listpack walk), without the reply encoding.
//! * `stream/pel_insert_remove_1000`: a consumer group's PEL work for 1000
//!   deliveries and their XACKs (rax inserts and removes of 16-byte keys).
//!
//! Run with `cargo bench --bench stream`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use storage::t_stream::{NodeLimits, Stream, StreamID, TrimArgs, TrimStrategy};

const FIELDS: [&str; 4] = ["name", "alice", "count", "12"];

fn stream_of(n: u64) -> Stream {
    let mut s = Stream::new();
    for i in 1..=n {
        let v = i.to_string();
        s.append_item(
            &["name", "alice", "count", &v],
            None,
            false,
            i,
            NodeLimits::default(),
        )
        .unwrap();
    }
    s
}

/// Read `count` entries from `start`, touching every field and value.
fn read_range(s: &Stream, start: StreamID, end: StreamID, rev: bool, count: usize) -> usize {
    let mut it = s.iter(Some(start), Some(end), rev);
    let mut bytes = 0;
    let mut n = 0;
    while let Some((_, numfields)) = it.next_id() {
        for _ in 0..numfields {
            let (f, v) = it.next_field();
            bytes += f.len() + v.len();
        }
        n += 1;
        if n == count {
            break;
        }
    }
    bytes
}

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("stream");

    g.bench_function("xadd_1000", |b| {
        b.iter_batched(
            Stream::new,
            |mut s| {
                for ms in 1..=1000u64 {
                    black_box(s.append_item(&FIELDS, None, false, ms, NodeLimits::default()))
                        .unwrap();
                }
                s
            },
            BatchSize::SmallInput,
        )
    });

    g.bench_function("xadd_maxlen_1000", |b| {
        let trim = TrimArgs {
            strategy: TrimStrategy::MaxLen(1000),
            approx: true,
            limit: 10_000,
        };
        let mut s = stream_of(1000);
        let mut ms = 1_000_000u64;
        b.iter(|| {
            for _ in 0..1000 {
                ms += 1;
                black_box(s.append_item(&FIELDS, None, false, ms, NodeLimits::default())).unwrap();
                black_box(s.trim(&trim));
            }
        })
    });

    let big = stream_of(100_000);
    let (start, end) = (StreamID::new(50_000, 0), StreamID::MAX);
    g.bench_function("xrange_100", |b| {
        b.iter(|| black_box(read_range(&big, start, end, false, 100)))
    });
    let (start, end) = (StreamID::MIN, StreamID::new(50_000, 0));
    g.bench_function("xrevrange_100", |b| {
        b.iter(|| black_box(read_range(&big, start, end, true, 100)))
    });

    g.bench_function("pel_insert_remove_1000", |b| {
        let mut s = stream_of(1000);
        let cg = s.create_cg(b"g", StreamID::MIN, 0).unwrap();
        cg.create_consumer(b"alice", 0);
        b.iter(|| {
            for ms in 1..=1000u64 {
                cg.deliver(StreamID::new(ms, 0), b"alice", 1);
            }
            for ms in 1..=1000u64 {
                black_box(cg.ack(StreamID::new(ms, 0)));
            }
        })
    });
    g.finish();
}

criterion_group!(stream_benches, benches);
criterion_main!(stream_benches);
