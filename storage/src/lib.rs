//! redis-lite's storage: the keyspace and Redis's encodings.
//!
//! Layers, bottom to top (never skipped):
//! 1. primitives: `dict` (chained hash table with incremental rehash and the
//!    reverse-binary SCAN cursor), `listpack`, `quicklist`, `intset`,
//!    `skiplist`, `rax`;
//! 2. type APIs: `t_string` (and one module per type) choose encodings;
//! 3. `db`: one database, its keyspace and expires dicts.
//!
//! Nothing here does I/O or reads the clock: time comes in as a parameter.

pub mod bitops;
pub mod db;
pub mod dict;
pub mod encoding_log;
pub mod expire;
pub mod geohash;
pub mod hyperloglog;
pub mod intset;
pub mod listpack;
pub mod lzf;
pub mod object;
pub mod pqsort;
pub mod quicklist;
pub mod rax;
pub mod skiplist;
pub mod t_hash;
pub mod t_list;
pub mod t_set;
pub mod t_stream;
pub mod t_string;
pub mod t_zset;
pub mod util;
