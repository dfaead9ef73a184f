//! What the loop flight recorder (server/src/recorder.rs) costs one
//! command: `call()` run on a GET and on a SET through a client with no
//! connection (Client::new_fake), as a script runs commands, 100 commands
//! per iteration inside one loop pass as a pipelined client sees them.
//!
//! * `recorder/get_off` / `recorder/set_off`: the recorder built in but
//!   off, the default: one relaxed load per command.
//! * `recorder/get_on` / `recorder/set_on`: after DEBUG RECORDER START:
//!   every command copied into the command ring (its key and the client
//!   address inline), blame totals counted, a pass recorded per 100.
//!
//! The baseline with no recorder at all is the `_off` rows of the same
//! bench built without the feature: `cargo bench --bench recorder
//! --no-default-features` (the `_on` rows do not exist there). The
//! README's cost paragraph has the whole-server figures.
//!
//! Run with `cargo bench --bench recorder`.

use std::hint::black_box;

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use mio::Token;
use redis_lite::commands::CmdId;
use redis_lite::config::Config;
use redis_lite::networking::Client;
use redis_lite::server::{self, Server};

/// Commands per iteration (one loop pass).
const PER_PASS: usize = 100;

fn setup(argv: &[&str]) -> (Server, Client, CmdId) {
    let mut srv = Server::new(Config::default()).expect("a server");
    let mut c = Client::new_fake(1, Token(1_000_000));
    c.addr = "127.0.0.1:50000".to_string();
    c.argv = argv
        .iter()
        .map(|a| Bytes::copy_from_slice(a.as_bytes()))
        .collect();
    let id = srv.commands.lookup(argv[0].as_bytes()).expect("a command");
    // The key exists, so the GET replies its value.
    let mut set = Client::new_fake(2, Token(1_000_001));
    set.argv = ["set", "key:1", "value"]
        .iter()
        .map(|a| Bytes::from_static(a.as_bytes()))
        .collect();
    let set_id = srv.commands.lookup(b"set").unwrap();
    server::call(&mut srv, &mut set, set_id);
    (srv, c, id)
}

/// PER_PASS calls of the command; with `recording`, framed by the pass
/// hooks ae_process_events calls when the recorder is on.
fn pass(srv: &mut Server, c: &mut Client, id: CmdId, recording: bool) {
    #[cfg(feature = "recorder")]
    if recording {
        redis_lite::recorder::pass_begin(false);
    }
    for _ in 0..PER_PASS {
        server::call(srv, c, id);
        black_box(c.reply.len());
        c.reply.clear();
    }
    #[cfg(feature = "recorder")]
    if recording {
        redis_lite::recorder::pass_end();
    }
    let _ = recording;
}

fn bench_command(cr: &mut Criterion, name: &str, argv: &[&str]) {
    let mut g = cr.benchmark_group("recorder");
    g.throughput(Throughput::Elements(PER_PASS as u64));
    let (mut srv, mut c, id) = setup(argv);
    g.bench_function(format!("{name}_off"), |b| {
        b.iter(|| pass(&mut srv, &mut c, id, false))
    });
    #[cfg(feature = "recorder")]
    {
        redis_lite::recorder::start(&srv, -1, None);
        g.bench_function(format!("{name}_on"), |b| {
            b.iter(|| pass(&mut srv, &mut c, id, true))
        });
        redis_lite::recorder::stop();
        redis_lite::recorder::reset_recording();
    }
    g.finish();
}

fn get(cr: &mut Criterion) {
    bench_command(cr, "get", &["get", "key:1"]);
}

fn set(cr: &mut Criterion) {
    bench_command(cr, "set", &["set", "key:1", "value"]);
}

criterion_group!(benches, get, set);
criterion_main!(benches);
