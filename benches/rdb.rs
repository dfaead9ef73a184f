//! Benchmarks of the RDB encoder and decoder (rdb/ and storage/src/lzf.rs).
//!
//! * `rdb/save_100k_strings` / `rdb/load_100k_strings`: a keyspace of
//!   DEBUG POPULATE's shape (`key:N` -> `value:N`) written to and read from
//!   memory, checksum on: the per-key cost of a BGSAVE child and of a load.
//! * `rdb/save_set_100k` / `rdb/load_set_100k`: one 100k-member hashtable
//!   set (one length + one string per member; loading rebuilds the dict).
//! * `rdb/dump_listpack_hash` / `rdb/restore_listpack_hash`: DUMP and
//!   RESTORE of a 100-field listpack hash: one blob, copied and validated.
//! * `lzf/compress_4k` / `lzf/decompress_4k`: LZF on 4 KB of text.
//!
//! Run with `cargo bench --bench rdb`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rdb::dump::{create_dump_payload, load_dump_payload};
use rdb::load::{Entry, LoadLimits, RdbReader};
use rdb::save::{KeyMeta, RdbWriter};
use storage::dict::Dict;
use storage::object::{RObj, Value};
use storage::t_hash::{hash_type_create, hash_type_set, HashLimits};
use storage::t_set::SetValue;
use storage::t_string::create_string_object;

fn strings(n: usize) -> Vec<(Vec<u8>, RObj)> {
    (0..n)
        .map(|i| {
            let v = create_string_object(format!("value:{i}").as_bytes());
            (format!("key:{i}").into_bytes(), RObj::new(Value::Str(v), 0))
        })
        .collect()
}

fn save(keys: &[(Vec<u8>, RObj)]) -> Vec<u8> {
    let mut w = RdbWriter::new(Vec::with_capacity(4 << 20), true, true);
    w.save_header().unwrap();
    w.save_select_db(0).unwrap();
    w.save_resize_db(keys.len() as u64, 0).unwrap();
    for (k, o) in keys {
        w.save_key_value_pair(k, o, KeyMeta::default()).unwrap();
    }
    w.finish().unwrap()
}

fn load(file: &[u8]) -> usize {
    let mut r = RdbReader::new(file, Some(file.len() as u64), true, LoadLimits::default());
    r.load_header().unwrap();
    let mut n = 0;
    loop {
        match r.next_entry().unwrap() {
            Entry::Key { value, .. } => {
                black_box(value);
                n += 1;
            }
            Entry::Eof { .. } => return n,
            _ => {}
        }
    }
}

fn bench_rdb(c: &mut Criterion) {
    let mut g = c.benchmark_group("rdb");
    g.sample_size(10);
    let keys = strings(100_000);
    let file = save(&keys);
    g.throughput(Throughput::Elements(keys.len() as u64));
    g.bench_function("save_100k_strings", |b| b.iter(|| black_box(save(&keys))));
    g.bench_function("load_100k_strings", |b| b.iter(|| black_box(load(&file))));

    let mut d = Dict::new();
    for i in 0..100_000 {
        let _ = d.add(format!("member:{i}").into_bytes().into_boxed_slice(), ());
    }
    let set = vec![(
        b"set".to_vec(),
        RObj::new(Value::Set(SetValue::Hashtable(Box::new(d))), 0),
    )];
    let set_file = save(&set);
    g.throughput(Throughput::Elements(100_000));
    g.bench_function("save_set_100k", |b| b.iter(|| black_box(save(&set))));
    g.bench_function("load_set_100k", |b| b.iter(|| black_box(load(&set_file))));

    let mut h = hash_type_create();
    for i in 0..100 {
        let (f, v) = (format!("field:{i}"), format!("value:{i}"));
        hash_type_set(&mut h, f.as_bytes(), v.as_bytes(), &HashLimits::default());
    }
    let hash = RObj::new(Value::Hash(h), 0);
    let payload = create_dump_payload(&hash, true);
    g.throughput(Throughput::Elements(1));
    g.bench_function("dump_listpack_hash", |b| {
        b.iter(|| black_box(create_dump_payload(&hash, true)))
    });
    g.bench_function("restore_listpack_hash", |b| {
        b.iter(|| black_box(load_dump_payload(&payload, LoadLimits::default(), false).unwrap()))
    });
    g.finish();
}

fn bench_lzf(c: &mut Criterion) {
    let mut g = c.benchmark_group("lzf");
    let text: Vec<u8> =
        "The quick brown fox jumps over the lazy dog; pack my box with five dozen liquor jugs. "
            .repeat(50)
            .into_bytes()[..4096]
            .to_vec();
    let compressed = storage::lzf::lzf_compress(&text, text.len() - 4).unwrap();
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("compress_4k", |b| {
        b.iter(|| black_box(storage::lzf::lzf_compress(&text, text.len() - 4)))
    });
    g.bench_function("decompress_4k", |b| {
        b.iter(|| black_box(storage::lzf::lzf_decompress(&compressed, text.len())))
    });
    g.finish();
}

criterion_group!(benches, bench_rdb, bench_lzf);
criterion_main!(benches);
