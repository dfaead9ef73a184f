//! Benchmarks of the request parser and the reply writers (protocol crate).
//!
//! The two parsing cases are the two shapes of traffic that matter for
//! redis-benchmark and for big values:
//!
//! * `parse/pipeline_16_set`: one read holding 16 pipelined
//!   `SET key:NNN value` commands (redis-benchmark -P 16). Measures the
//!   per-command cost: header lines, three small arguments, the argv Vec.
//! * `parse/bulk_1mb_in_16k_chunks`: a `SET big <1 MB>` arriving in 16 KB
//!   reads (PROTO_IOBUF_LEN). Measures that an argument being received is not
//!   rescanned: 64 calls that each compare one length, then one split.
//!
//! Both reuse one parser and one buffer per benchmark, as a connection does.
//! Run with `cargo bench --bench protocol`.

use std::hint::black_box;

use bytes::BytesMut;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use protocol::reply::{self, Resp};
use protocol::{ParseLimits, RequestParser};

/// PROTO_IOBUF_LEN (server.h): what one read() returns at most, normally.
const PROTO_IOBUF_LEN: usize = 16 * 1024;

/// Append a request the way client libraries send one: a multibulk array
/// of bulk strings (the server never encodes requests, so this lives here).
fn encode_command(args: &[&[u8]], buf: &mut BytesMut) {
    reply::array_len(buf, args.len());
    for arg in args {
        reply::bulk(buf, arg);
    }
}

/// Parse every command in `buf`; return how many arguments were seen.
fn drain(parser: &mut RequestParser, buf: &mut BytesMut, limits: &ParseLimits) -> usize {
    let mut args = 0;
    while let Some(argv) = parser.next_command(buf, limits).expect("valid RESP") {
        args += argv.len();
        black_box(argv);
    }
    args
}

fn parse_pipeline(c: &mut Criterion) {
    let mut wire = BytesMut::new();
    for i in 0..16 {
        let key = format!("key:{i:03}");
        encode_command(&[b"SET", key.as_bytes(), b"value"], &mut wire);
    }
    let wire = wire.freeze();
    let limits = ParseLimits::default();

    let mut group = c.benchmark_group("parse");
    group.throughput(Throughput::Elements(16));
    group.bench_function("pipeline_16_set", |b| {
        let mut parser = RequestParser::new();
        let mut buf = BytesMut::with_capacity(PROTO_IOBUF_LEN);
        b.iter(|| {
            buf.extend_from_slice(&wire); // one read() worth of commands
            let args = drain(&mut parser, &mut buf, &limits);
            assert_eq!(args, 48);
        })
    });
    group.finish();
}

fn parse_big_bulk(c: &mut Criterion) {
    let payload = vec![b'x'; 1024 * 1024];
    let mut wire = BytesMut::new();
    encode_command(&[b"SET", b"big", &payload], &mut wire);
    let wire = wire.freeze();
    let limits = ParseLimits::default();

    let mut group = c.benchmark_group("parse");
    group.throughput(Throughput::Bytes(wire.len() as u64));
    group.bench_function("bulk_1mb_in_16k_chunks", |b| {
        let mut parser = RequestParser::new();
        let mut buf = BytesMut::with_capacity(PROTO_IOBUF_LEN);
        b.iter(|| {
            let mut args = 0;
            for chunk in wire.chunks(PROTO_IOBUF_LEN) {
                buf.extend_from_slice(chunk); // one read()
                args += drain(&mut parser, &mut buf, &limits);
            }
            assert_eq!(args, 3);
        })
    });
    group.finish();
}

fn write_replies(c: &mut Criterion) {
    let mut group = c.benchmark_group("reply");
    group.bench_function("bulk_and_integer_x16", |b| {
        let mut out = BytesMut::with_capacity(PROTO_IOBUF_LEN);
        b.iter(|| {
            out.clear();
            for i in 0..16i64 {
                reply::bulk(&mut out, black_box(b"value"));
                reply::integer(&mut out, black_box(i * 1_000_003));
            }
            black_box(&out);
        })
    });
    group.bench_function("double_g17_x16", |b| {
        let mut out = BytesMut::with_capacity(PROTO_IOBUF_LEN);
        b.iter(|| {
            out.clear();
            for i in 0..16 {
                reply::double(&mut out, black_box(0.1 * f64::from(i) + 1e-7), Resp::V2);
            }
            black_box(&out);
        })
    });
    group.finish();
}

criterion_group!(benches, parse_pipeline, parse_big_bulk, write_replies);
criterion_main!(benches);
