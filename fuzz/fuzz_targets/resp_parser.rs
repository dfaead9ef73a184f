//! The request parser on arbitrary bytes, delivered in pieces (see
//! protocol::fuzz::parse_requests).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    protocol::fuzz::parse_requests(data);
});
