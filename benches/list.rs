//! Benchmarks of the list type (storage/src/quicklist.rs through the list
//! type API in storage/src/t_list.rs), Redis 7.0's quicklist of listpacks at
//! the default fill (-2: 8 KB nodes).
//!
//! * `list/push_pop`: RPUSH then LPOP of 1000 short values (a queue).
//! * `list/lrange_100` / `list/lrange_600`: walking the first 100 / 600
//!   elements, the work behind redis-benchmark's LRANGE_100 / LRANGE_600
//!   (without the reply encoding).
//! * `list/lindex_middle_1m`: LINDEX of the middle element of a 1M-element
//!   list: a walk over node headers to the right node, then inside one
//!   listpack.
//! * `list/drop_1m`: freeing a 1M-element list of small integers: about 600
//!   node allocations, which is why DEL of a big list is cheap.
//!
//! Run with `cargo bench --bench list`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use storage::quicklist::Quicklist;
use storage::t_list::{list_type_index, list_type_iter, list_type_pop, list_type_push, ListWhere};

/// list-max-listpack-size default and list-compress-depth 0.
const FILL: i64 = -2;

fn list_of(n: usize) -> Quicklist {
    let mut ql = Quicklist::new(FILL, 0);
    for i in 0..n {
        list_type_push(&mut ql, i.to_string().as_bytes(), ListWhere::Tail);
    }
    ql
}

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("list");

    g.bench_function("push_pop", |b| {
        let mut ql = Quicklist::new(FILL, 0);
        b.iter(|| {
            for _ in 0..1000 {
                list_type_push(&mut ql, b"xxx", ListWhere::Tail);
            }
            for _ in 0..1000 {
                black_box(list_type_pop(&mut ql, ListWhere::Head));
            }
        })
    });

    let ql = list_of(1000);
    for n in [100usize, 600] {
        g.bench_function(format!("lrange_{n}"), |b| {
            b.iter(|| {
                let mut bytes = 0;
                for e in list_type_iter(&ql, 0, true).take(n) {
                    bytes += e.len();
                }
                black_box(bytes)
            })
        });
    }

    let big = list_of(1_000_000);
    g.bench_function("lindex_middle_1m", |b| {
        b.iter(|| black_box(list_type_index(&big, 500_000)))
    });

    g.sample_size(10);
    g.bench_function("drop_1m", |b| {
        b.iter_batched(|| list_of(1_000_000), drop, BatchSize::PerIteration)
    });
    g.finish();
}

criterion_group!(list, benches);
criterion_main!(list);
