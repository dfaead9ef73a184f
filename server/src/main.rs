//! `redis-lite`: start like redis-server.
//!
//! `redis-lite [/path/to/redis.conf] [--port 6380] [--hz 10] ...`
//!
//! `--loop-step` (a redis-lite extension, not a config directive): step
//! through the loop one pass at a time (loop_step.rs).

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(i) = args.iter().position(|a| a == "--loop-step") {
        args.remove(i);
        redis_lite::loop_step::enable();
    }
    std::process::exit(redis_lite::run(&args));
}
