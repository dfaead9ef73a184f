//! The DUMP / RESTORE payload decoder on arbitrary bytes (see
//! rdb::dump::fuzz_dump_payload: the checksum is skipped so the decoder is
//! reached; a value that decodes must decode again from its own DUMP).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    rdb::dump::fuzz_dump_payload(data);
});
