//! DUMP / RESTORE payloads (cluster.c createDumpPayload / verifyDumpPayload):
//!
//! ```text
//! <type byte> <value as in an RDB file> <RDB version u16 LE> <CRC64 u64 LE>
//! ```
//!
//! The CRC64 covers everything before it, the version included. A payload
//! carries no key, no expire and no LRU/LFU: RESTORE's arguments give those.

use storage::object::{RObj, Value};

use crate::load::{LoadLimits, RdbReader};
use crate::save::RdbWriter;
use crate::{crc64, RdbError, RDB_VERSION};

/// createDumpPayload: the serialized object, the version and the checksum.
pub fn create_dump_payload(o: &RObj, compress: bool) -> Vec<u8> {
    let mut w = RdbWriter::new(Vec::new(), compress, false);
    // Writing into a Vec cannot fail.
    let _ = w.save_object_type(o);
    let _ = w.save_object(o);
    let mut out = match w.into_inner() {
        Ok((v, _)) => v,
        Err(_) => Vec::new(),
    };
    out.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = crc64(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// verifyDumpPayload: at least the 10-byte footer, a version this server
/// can read, and (unless `skip_checksum`) a matching CRC64. Returns the
/// payload's RDB version.
pub fn verify_dump_payload(p: &[u8], skip_checksum: bool) -> Option<u16> {
    if p.len() < 10 {
        return None;
    }
    let footer = &p[p.len() - 10..];
    let ver = u16::from_le_bytes([footer[0], footer[1]]);
    if ver > RDB_VERSION {
        return None;
    }
    if skip_checksum {
        return Some(ver);
    }
    let stored = u64::from_le_bytes([
        footer[2], footer[3], footer[4], footer[5], footer[6], footer[7], footer[8], footer[9],
    ]);
    (crc64(&p[..p.len() - 8]) == stored).then_some(ver)
}

/// RESTORE's load: the type byte and the value. Like Redis's rio over the
/// whole argument, a (corrupt) value may run into the footer bytes: only
/// the end of the buffer stops it. Ok(None) for an empty collection; any
/// error is "Bad data format".
pub fn load_dump_payload(
    p: &[u8],
    limits: LoadLimits,
    deep: bool,
) -> Result<Option<Value>, RdbError> {
    load_dump_payload_counted(p, limits, deep).0
}

/// `load_dump_payload`, also saying how many blobs a deep check looked at
/// (see `RdbReader::sanitizations`; failed loads count too, as in Redis).
pub fn load_dump_payload_counted(
    p: &[u8],
    limits: LoadLimits,
    deep: bool,
) -> (Result<Option<Value>, RdbError>, u64) {
    let mut r = RdbReader::new(p, Some(p.len() as u64), false, limits);
    r.deep = deep;
    let res = r.load_type().and_then(|t| {
        if !crate::rdb_is_object_type(t) {
            return Err(RdbError::Corrupt(format!("Unknown object type {t}")));
        }
        r.load_object(t)
    });
    (res, r.sanitizations)
}

/// The DUMP payload decoder as a fuzz target, one function taking
/// arbitrary bytes, so the coverage-guided campaign
/// (`fuzz/fuzz_targets/dump_payload.rs`, `cargo +nightly fuzz run
/// dump_payload`) and the stable deterministic one (`tests/restore_fuzz.rs`,
/// which feeds it mutations of real DUMPs) run the same code.
///
/// RESTORE's path without the network: the footer check (the checksum is
/// skipped, as `DEBUG SET-SKIP-CHECKSUM-VALIDATION 1` does, or a fuzzer
/// would never get past it), then the decoder with and without deep
/// sanitization. A value that decodes must survive its own DUMP: encoded
/// again (plain and LZF), it decodes again. Panics only on a bug.
pub fn fuzz_dump_payload(data: &[u8]) {
    if verify_dump_payload(data, true).is_none() {
        return;
    }
    for deep in [false, true] {
        let Ok(Some(v)) = load_dump_payload(data, LoadLimits::default(), deep) else {
            continue;
        };
        let o = RObj::new(v, 0);
        for compress in [false, true] {
            let again = create_dump_payload(&o, compress);
            assert!(
                verify_dump_payload(&again, false).is_some(),
                "our own DUMP fails its checksum"
            );
            match load_dump_payload(&again, LoadLimits::default(), deep) {
                Ok(Some(_)) => {}
                other => panic!(
                    "a value decoded (deep {deep}) does not decode from its own DUMP: {:?}",
                    other.err()
                ),
            }
        }
    }
}
