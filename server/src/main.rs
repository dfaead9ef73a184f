//! `redis-lite`: start like redis-server.
//!
//! `redis-lite [/path/to/redis.conf] [--port 6380] [--hz 10] ...`

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(redis_lite::run(&args));
}
