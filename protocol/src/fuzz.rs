//! The request parser as a fuzz target: one function that takes arbitrary
//! bytes, so the coverage-guided campaign (`fuzz/fuzz_targets/resp_parser.rs`,
//! `cargo +nightly fuzz run resp_parser`) and the stable deterministic one
//! (this crate's tests, `tests/fuzz.rs` over TCP) run the same code.
//!
//! The bytes arrive the way a socket delivers them: in pieces. The first
//! byte picks the piece size (1..=64), the rest is the stream. After each
//! piece the parser is asked for commands until it needs more; a protocol
//! error ends the stream, as the server closes the connection then.

use bytes::BytesMut;

use crate::{ParseLimits, RequestParser};

/// The largest bulk the target allows: small, so an announced 512 MB bulk
/// is refused instead of reserved (the server's own limit is a config).
const FUZZ_MAX_BULK: i64 = 1 << 20;

/// Feed `data` to a fresh parser in pieces; panics only on a parser bug
/// (a command whose argument is longer than the limit, say).
pub fn parse_requests(data: &[u8]) {
    let Some((&first, stream)) = data.split_first() else {
        return;
    };
    let piece = 1 + (first as usize % 64);
    let limits = ParseLimits {
        proto_max_bulk_len: FUZZ_MAX_BULK,
        // Odd first bytes parse as an unauthenticated client (the tighter
        // pre-auth limits).
        authenticated: first & 1 == 0,
    };
    let mut parser = RequestParser::new();
    let mut buf = BytesMut::new();
    for chunk in stream.chunks(piece) {
        buf.extend_from_slice(chunk);
        loop {
            match parser.next_command(&mut buf, &limits) {
                Ok(Some(argv)) => {
                    for a in &argv {
                        assert!(a.len() as i64 <= FUZZ_MAX_BULK, "argument over the limit");
                    }
                }
                Ok(None) => break,
                Err(_) => return,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_requests;

    /// xorshift64*: the same generator as the integration fuzzers.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            let mut x = self.0;
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            self.0 = x;
            x.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
    }

    /// The fuzz target's short deterministic campaign on stable: valid
    /// frames, then the same mutated (flips, truncation, spliced length
    /// headers), in random pieces.
    #[test]
    fn parse_requests_survives_mutated_frames() {
        const SEEDS: &[&[u8]] = &[
            b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nvalue\r\n",
            b"*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$0\r\n\r\n",
            b"PING\r\nSET a \"b c\" 'd\\'e'\r\n\"\\x41\\n\"\r\n",
            b"*2147483648\r\n",
            b"*1\r\n$2000000000\r\n",
            b"*-1\r\n*0\r\n\r\n\n",
            b"*2\r\n$3\r\nGET\r\n$40000\r\nab",
        ];
        const HEADERS: &[&[u8]] = &[
            b"*1048577\r\n",
            b"$-2\r\n",
            b"$1048577\r\n",
            b"*9223372036854775807\r\n",
            b"$\r\n",
            b"*\r\n",
            b"\"unbalanced",
        ];
        let mut rng = Rng(0x0123_4567_89AB_CDEF);
        for n in 0..200_000u64 {
            let mut data = vec![rng.next() as u8];
            data.extend_from_slice(SEEDS[(rng.next() % SEEDS.len() as u64) as usize]);
            match n % 4 {
                0 => {}
                1 => {
                    for _ in 0..1 + rng.next() % 4 {
                        let i = 1 + (rng.next() as usize % (data.len() - 1));
                        data[i] ^= 1 << (rng.next() % 8);
                    }
                }
                2 => data.truncate(1 + rng.next() as usize % data.len()),
                _ => {
                    let i = 1 + (rng.next() as usize % data.len());
                    let h = HEADERS[(rng.next() % HEADERS.len() as u64) as usize];
                    data.splice(i.min(data.len())..i.min(data.len()), h.iter().copied());
                }
            }
            parse_requests(&data);
        }
    }
}
