//! Configuration: the parameter registry, redis.conf parsing, and CONFIG
//! GET / SET / RESETSTAT / REWRITE / HELP (Redis's config.c).
//!
//! Design, as in Redis 7.0:
//! * ONE static table, `CONFIGS`, lists every parameter Redis 7.0.15 knows:
//!   its name, its old alias (`slave-priority`, `hash-max-ziplist-entries`),
//!   flags (immutable, protected, hidden, multi-argument) and its type with
//!   the default and the bounds. Redis's `standardConfig static_configs[]`.
//! * The value of every parameter lives in `Config::values`, one `Value` per
//!   table row, so CONFIG GET returns exactly what CONFIG SET stored (after
//!   Redis's normalisation: memory as bytes, bools yes/no, enums lower-case).
//! * The values the server READS live in typed fields (`port`, `hz`,
//!   `maxmemory`...). They are a mirror refreshed by `Config::sync_typed()`
//!   after every load or CONFIG SET: read them freely, never write them; to
//!   change a parameter go through `Config::set_from_str`.
//! * Type behaviour (parse, print, rewrite) is one `match` per type below,
//!   the counterpart of Redis's boolConfigSet / numericConfigSet /
//!   enumConfigSet ... A breakpoint in `parse_value` sees every CONFIG SET
//!   and every redis.conf line.
//!
//! Differences from Redis, on purpose:
//! * `enable-debug-command` defaults to `local` (Redis: `no`), so DEBUG works
//!   from the loopback in workshops.
//! * Settings of features redis-lite lacks (TLS, cluster, replication, AOF)
//!   are accepted and stored, so configs written for Redis load unchanged.
//! * CONFIG GET with patterns answers in table order; Redis answers in the
//!   order of a randomly seeded hash table, so no client can rely on it.
//!
//! The module follows the banners config.c is read by, in reading order:
//! - `types.rs`: the public types the server reads (`Config`, policies,
//!   NOTIFY_* flags, client buffer limits);
//! - `registry.rs`: the table, `CONFIGS` (config.c static_configs[]);
//! - `validators.rs`: the isValid* checks some rows carry;
//! - `util.rs`: value parsing helpers (util.c memtoull, yesnotoi...);
//! - `interface.rs`: per-type parse / print (config.c interface.set/get);
//! - `values.rs`: `impl Config`, the values and their typed mirrors;
//! - `load.rs`: start-up, the command line and redis.conf (server.c main,
//!   config.c loadServerConfig / loadServerConfigFromString);
//! - `rewrite.rs`: CONFIG REWRITE (config.c rewriteConfig and friends);
//! - `command.rs`: the CONFIG command.

use std::collections::HashMap;
use std::io;
use std::sync::OnceLock;

use crate::log::{server_log, LogLevel};
use crate::networking::Client;
use crate::server::{Server, REDIS_VERSION};

mod command;
mod interface;
mod load;
mod registry;
mod rewrite;
#[cfg(test)]
mod tests;
mod types;
mod util;
mod validators;
mod values;

pub use command::*;
pub use interface::*;
pub use load::*;
pub use registry::*;
use rewrite::*;
pub use types::*;
pub use util::*;
use validators::*;
