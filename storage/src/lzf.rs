//! LZF, the small and fast LZ77 compressor Redis vendors (lzf_c.c /
//! lzf_d.c by Marc Lehmann), with Redis's build settings.
//!
//! Redis compresses strings longer than 20 bytes in RDB files and DUMP
//! payloads (`rdbcompression yes`), and quicklist nodes when
//! `list-compress-depth` is set. The compressor below makes the same bytes
//! as Redis's: same hash (HLOG 16, VERY_FAST, the `IDX` formula), same
//! match rules, same "give up when the output would not fit" checks, so a
//! DUMP payload is byte-identical to the one redis-server produces.
//!
//! The compressed format is a sequence of runs:
//!
//! ```text
//! 000LLLLL <L+1 bytes>          literal run of 1..32 bytes
//! LLLooooo oooooooo             back reference: L+2 bytes (L 1..6) from
//!                               offset o+1 (1..8192) behind the output
//! 111ooooo LLLLLLLL oooooooo    back reference of L+9 bytes
//! ```
//!
//! One deliberate difference: Redis builds with INIT_HTAB 0, so its hash
//! table starts with whatever the stack held (slots left by an earlier call
//! can, rarely, point into a reused buffer and produce a different but valid
//! match). We start from an empty table, which is what Redis's output is on
//! a fresh stack and always decodes the same.
//!
//! The decompressor checks every reference and length (CHECK_INPUT), so a
//! hostile RESTORE payload cannot make it read or write out of bounds.

/// HLOG: log2 of the hash table size (lzfP.h default, 64K slots).
const HLOG: u32 = 16;
const HSIZE: usize = 1 << HLOG;
/// MAX_LIT: the longest literal run (5 bits of length + 1).
const MAX_LIT: usize = 1 << 5;
/// MAX_OFF: back references reach at most 8 KB behind.
const MAX_OFF: usize = 1 << 13;
/// MAX_REF: the longest back reference, 264 bytes (255 + 7 + 2).
const MAX_REF: usize = (1 << 8) + (1 << 3);

/// The hash of the 3 bytes starting at `p` (FRST/NEXT/IDX with VERY_FAST).
#[inline]
fn idx(h: u32) -> usize {
    ((h >> (3 * 8 - HLOG)).wrapping_sub(h.wrapping_mul(5)) as usize) & (HSIZE - 1)
}

/// lzf_compress: compress `input` into at most `out_len` bytes. None when
/// the input is empty or does not compress into `out_len` bytes (Redis then
/// stores the string verbatim). Redis calls it with `out_len = len - 4`: a
/// compressed string must save at least 4 bytes to be worth it.
pub fn lzf_compress(input: &[u8], out_len: usize) -> Option<Vec<u8>> {
    let in_len = input.len();
    if in_len == 0 || out_len == 0 {
        return None;
    }
    HTAB.with(|t| {
        let mut t = t.borrow_mut();
        compress_with(&mut t, input, out_len)
    })
}

/// The hash table, reused between calls: clearing 64K slots for every
/// 21-byte string would cost more than compressing it (Redis skips the
/// clearing altogether, INIT_HTAB 0). Each slot holds a call generation in
/// its high 32 bits; a slot from an older call reads as empty.
struct HashTable {
    slots: Vec<u64>,
    generation: u32,
}

impl HashTable {
    /// Slot = input position + 1 of the last 3-byte sequence with that
    /// hash, or 0 when empty in this call (Redis's NULL pointer).
    #[inline]
    fn get(&self, i: usize) -> u32 {
        let v = self.slots[i];
        if (v >> 32) as u32 == self.generation {
            v as u32
        } else {
            0
        }
    }

    #[inline]
    fn set(&mut self, i: usize, pos_plus_one: u32) {
        self.slots[i] = (u64::from(self.generation) << 32) | u64::from(pos_plus_one);
    }
}

thread_local! {
    static HTAB: std::cell::RefCell<HashTable> = const {
        std::cell::RefCell::new(HashTable {
            slots: Vec::new(),
            generation: 0,
        })
    };
}

fn compress_with(htab: &mut HashTable, input: &[u8], out_len: usize) -> Option<Vec<u8>> {
    let in_len = input.len();
    if htab.slots.is_empty() {
        htab.slots = vec![0; HSIZE];
    }
    htab.generation = htab.generation.wrapping_add(1);
    if htab.generation == 0 {
        // 4 billion calls later: start again from a clean table.
        htab.slots.iter_mut().for_each(|s| *s = 0);
        htab.generation = 1;
    }
    // A little slack past out_len so the bound checks below (which are
    // Redis's, in the same places) never have to be repeated as indexing.
    let mut out = vec![0u8; out_len + 4];
    let out_end = out_len;
    let mut ip = 0usize;
    let mut op = 1usize; // byte 0 is the header of the first literal run
    let mut lit = 0usize;

    let frst = |p: usize| (u32::from(input[p]) << 8) | u32::from(input[p + 1]);
    let next = |v: u32, p: usize| (v << 8) | u32::from(input[p + 2]);

    let mut hval = if in_len >= 2 { frst(0) } else { 0 };
    while in_len > 2 && ip < in_len - 2 {
        hval = next(hval, ip);
        let slot = idx(hval);
        let r = htab.get(slot);
        htab.set(slot, ip as u32 + 1);

        // The candidate: strictly before ip, within MAX_OFF, not the very
        // first byte (Redis's `ref > in_data`), and the same 3 bytes.
        let candidate = if r > 1 { Some(r as usize - 1) } else { None };
        let matched = candidate.filter(|&rf| {
            rf < ip
                && ip - rf - 1 < MAX_OFF
                && input[rf + 2] == input[ip + 2]
                && input[rf] == input[ip]
                && input[rf + 1] == input[ip + 1]
        });

        if let Some(rf) = matched {
            let off = ip - rf - 1;
            let mut len = 2usize;
            let mut maxlen = in_len - ip - len;
            if maxlen > MAX_REF {
                maxlen = MAX_REF;
            }
            // The exact "does the reference fit" test of lzf_c.c.
            if op + 3 + 1 >= out_end && op - usize::from(lit == 0) + 3 + 1 >= out_end {
                return None;
            }
            out[op - lit - 1] = (lit as u8).wrapping_sub(1); // stop the run
            op -= usize::from(lit == 0); // undo an empty run

            // Extend the match: 16 unrolled steps first when there is
            // room (they may run up to 2 bytes past maxlen, as in C), then
            // one byte at a time up to maxlen.
            let mut done = false;
            if maxlen > 16 {
                for _ in 0..16 {
                    len += 1;
                    if input[rf + len] != input[ip + len] {
                        done = true;
                        break;
                    }
                }
            }
            if !done {
                loop {
                    len += 1;
                    if !(len < maxlen && input[rf + len] == input[ip + len]) {
                        break;
                    }
                }
            }

            len -= 2; // now #octets - 1
            ip += 1;
            if len < 7 {
                out[op] = ((off >> 8) + (len << 5)) as u8;
                op += 1;
            } else {
                out[op] = ((off >> 8) + (7 << 5)) as u8;
                out[op + 1] = (len - 7) as u8;
                op += 2;
            }
            out[op] = off as u8;
            op += 1;
            lit = 0;
            op += 1; // start a new run
            ip += len + 1;
            if ip >= in_len - 2 {
                break;
            }
            // VERY_FAST: hash the two positions before the new ip.
            ip -= 2;
            hval = frst(ip);
            hval = next(hval, ip);
            htab.set(idx(hval), ip as u32 + 1);
            ip += 1;
            hval = next(hval, ip);
            htab.set(idx(hval), ip as u32 + 1);
            ip += 1;
        } else {
            // One more literal byte.
            if op >= out_end {
                return None;
            }
            lit += 1;
            out[op] = input[ip];
            op += 1;
            ip += 1;
            if lit == MAX_LIT {
                out[op - lit - 1] = (lit - 1) as u8;
                lit = 0;
                op += 1;
            }
        }
    }
    if op + 3 > out_end {
        return None; // at most 3 bytes can be missing here
    }
    while ip < in_len {
        lit += 1;
        out[op] = input[ip];
        op += 1;
        ip += 1;
        if lit == MAX_LIT {
            out[op - lit - 1] = (lit - 1) as u8;
            lit = 0;
            op += 1;
        }
    }
    out[op - lit - 1] = (lit as u8).wrapping_sub(1); // end the run
    op -= usize::from(lit == 0);
    out.truncate(op);
    Some(out)
}

/// lzf_decompress: expand `input` into exactly `out_len` bytes. None on
/// any malformed input (a run past either end, a reference before the
/// start of the output) or when the result is not `out_len` bytes long:
/// Redis's "Invalid LZF compressed string".
pub fn lzf_decompress(input: &[u8], out_len: usize) -> Option<Vec<u8>> {
    let mut out: Vec<u8> = Vec::with_capacity(out_len);
    let mut ip = 0usize;
    while ip < input.len() {
        let ctrl = input[ip] as usize;
        ip += 1;
        if ctrl < (1 << 5) {
            // Literal run of ctrl+1 bytes.
            let n = ctrl + 1;
            if out.len() + n > out_len || ip + n > input.len() {
                return None;
            }
            out.extend_from_slice(&input[ip..ip + n]);
            ip += n;
        } else {
            // Back reference.
            let mut len = ctrl >> 5;
            if ip >= input.len() {
                return None;
            }
            if len == 7 {
                len += input[ip] as usize;
                ip += 1;
                if ip >= input.len() {
                    return None;
                }
            }
            let back = ((ctrl & 0x1f) << 8) + input[ip] as usize + 1;
            ip += 1;
            len += 2;
            if out.len() + len > out_len || back > out.len() {
                return None;
            }
            let start = out.len() - back;
            if back >= len {
                // Disjoint areas: one copy.
                out.extend_from_within(start..start + len);
            } else {
                // Overlapping (a run like "abcabcabc"): byte by byte.
                for i in 0..len {
                    let b = out[start + i];
                    out.push(b);
                }
            }
        }
    }
    (out.len() == out_len).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(data: &[u8]) {
        if data.len() <= 4 {
            return;
        }
        if let Some(c) = lzf_compress(data, data.len() - 4) {
            assert!(c.len() <= data.len() - 4);
            assert_eq!(lzf_decompress(&c, data.len()).as_deref(), Some(data));
        }
    }

    /// A payload captured from redis-server 7.0.15: `SET k <100 x 'a'>`
    /// then DUMP. The LZF blob is bytes 4.. of the payload (after the type,
    /// the 0xC3 marker and the two lengths).
    #[test]
    fn lzf_compress_matches_redis_for_a_run_of_a() {
        let data = vec![b'a'; 100];
        let c = lzf_compress(&data, 96).unwrap();
        assert_eq!(
            c,
            vec![0x01, 0x61, 0x61, 0xe0, 0x57, 0x00, 0x01, 0x61, 0x61]
        );
        assert_eq!(lzf_decompress(&c, 100).unwrap(), data);
    }

    #[test]
    fn lzf_roundtrips_assorted_inputs() {
        roundtrip(b"hello hello hello hello hello hello");
        roundtrip(&(0..5000u32).map(|i| (i % 251) as u8).collect::<Vec<_>>());
        roundtrip(&(0..5000u32).map(|i| (i * 7 / 13) as u8).collect::<Vec<_>>());
        let mut x = 12345u64;
        let noisy: Vec<u8> = (0..3000)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                (x >> 60) as u8 + b'a'
            })
            .collect();
        roundtrip(&noisy);
        for n in 5..80 {
            roundtrip(&vec![b'z'; n]);
            roundtrip(&(0..n as u8).collect::<Vec<_>>());
        }
    }

    #[test]
    fn lzf_incompressible_input_gives_none() {
        let data: Vec<u8> = (0..=255u8).collect();
        assert!(lzf_compress(&data, data.len() - 4).is_none());
    }

    #[test]
    fn lzf_decompress_rejects_garbage_without_panicking() {
        let good = lzf_compress(&[b'q'; 300], 296).unwrap();
        for cut in 0..good.len() {
            let _ = lzf_decompress(&good[..cut], 300);
        }
        // A reference before the start of the output.
        assert!(lzf_decompress(&[0x20, 0x05], 10).is_none());
        // Wrong declared length.
        assert!(lzf_decompress(&good, 299).is_none());
        assert!(lzf_decompress(&good, 301).is_none());
        let mut x = 1u32;
        for _ in 0..2000 {
            let junk: Vec<u8> = (0..40)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    x as u8
                })
                .collect();
            let _ = lzf_decompress(&junk, 200);
        }
    }
}
