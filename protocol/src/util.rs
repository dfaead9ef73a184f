//! Redis's integer rules (util.c string2ll / ll2string), whose one home is
//! the `util` crate: re-exported here so the framing code reads
//! `util::string2ll` next to the RESP it parses.

pub use util::{ll2string, string2ll, ull2string, LONG_STR_SIZE};
