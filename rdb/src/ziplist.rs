//! The older compact encodings Redis 7.0 still *loads* (and converts to
//! listpacks): the ziplist (RDB types 10, 12, 13 and the nodes of type 14)
//! and the Redis 2.x zipmap (type 9). Nothing writes them any more.
//!
//! Both walkers validate as they go, the way ziplistValidateIntegrity and
//! zipmapValidateIntegrity do with `deep` set: every length is checked
//! against the blob before anything is read, so a hostile blob makes them
//! return `false`, never panic.
//!
//! ```text
//! ziplist: <zlbytes u32 LE> <zltail u32 LE> <zllen u16 LE> <entry>... <0xFF>
//! entry:   <prevlen: 1 byte, or 0xFE + u32 LE> <encoding> <data>
//! zipmap:  <count u8> (<len> field <len> <free u8> value <free bytes>)... <0xFF>
//! ```

use storage::listpack::LpEntry;

/// ZIPLIST_HEADER_SIZE: zlbytes + zltail + zllen.
const ZIPLIST_HEADER_SIZE: usize = 10;
/// ZIP_END: the byte that closes a ziplist (and a zipmap).
const ZIP_END: u8 = 0xFF;
/// ZIP_BIG_PREVLEN: prevlen bytes >= this use the 5-byte form.
const ZIP_BIG_PREVLEN: u8 = 0xFE;
/// ZIPMAP_BIGLEN: zipmap lengths >= 254 use 5 bytes; a count of 254 means
/// "count it yourself".
const ZIPMAP_BIGLEN: u8 = 254;

/// Read a little-endian unsigned integer of `n` bytes at `p`, if in bounds.
fn le(b: &[u8], p: usize, n: usize) -> Option<u64> {
    let s = b.get(p..p.checked_add(n)?)?;
    Some(
        s.iter()
            .rev()
            .fold(0u64, |acc, &x| (acc << 8) | u64::from(x)),
    )
}

/// One decoded ziplist entry: (prevlen, total entry size, value).
fn entry_at(zl: &[u8], p: usize, end: usize) -> Option<(usize, usize, LpEntry<'_>)> {
    // prevlen
    let first = *zl.get(p)?;
    let (prevlen, plen) = if first < ZIP_BIG_PREVLEN {
        (first as usize, 1)
    } else if first == ZIP_BIG_PREVLEN {
        (le(zl, p + 1, 4)? as usize, 5)
    } else {
        return None;
    };
    let e = p + plen;
    let enc = *zl.get(e)?;
    let (hdr, data_len, int_width): (usize, usize, Option<usize>) = match enc >> 6 {
        0 => (1, (enc & 0x3F) as usize, None),
        1 => (
            2,
            (((enc & 0x3F) as usize) << 8) | *zl.get(e + 1)? as usize,
            None,
        ),
        2 => {
            let s = zl.get(e + 1..e + 5)?;
            (
                5,
                u32::from_be_bytes([s[0], s[1], s[2], s[3]]) as usize,
                None,
            )
        }
        _ => match enc {
            0xC0 => (1, 2, Some(2)),
            0xD0 => (1, 4, Some(4)),
            0xE0 => (1, 8, Some(8)),
            0xF0 => (1, 3, Some(3)),
            0xFE => (1, 1, Some(1)),
            0xF1..=0xFD => (1, 0, Some(0)),
            _ => return None,
        },
    };
    let data = e.checked_add(hdr)?;
    let next = data.checked_add(data_len)?;
    // The entry must end before the closing byte.
    if next > end {
        return None;
    }
    let value = match int_width {
        None => LpEntry::Str(&zl[data..next]),
        Some(0) => LpEntry::Int(i64::from(enc & 0x0F) - 1),
        Some(w) => {
            let u = le(zl, data, w)?;
            // Sign-extend from w bytes.
            let shift = 64 - 8 * w as u32;
            LpEntry::Int(((u << shift) as i64) >> shift)
        }
    };
    Some((prevlen, next - p, value))
}

/// ziplistValidateIntegrity(deep) + a callback per entry, in order. Returns
/// false on any inconsistency or when `f` returns false.
pub fn ziplist_for_each(zl: &[u8], mut f: impl FnMut(LpEntry<'_>) -> bool) -> bool {
    let size = zl.len();
    if size < ZIPLIST_HEADER_SIZE + 1 {
        return false;
    }
    let (Some(bytes), Some(tail), Some(count)) = (le(zl, 0, 4), le(zl, 4, 4), le(zl, 8, 2)) else {
        return false;
    };
    if bytes as usize != size || zl[size - 1] != ZIP_END || tail as usize > size - 1 {
        return false;
    }
    let end = size - 1;
    let mut p = ZIPLIST_HEADER_SIZE;
    let mut prev_size = 0usize;
    let mut prev_at = None;
    let mut n = 0u64;
    while p < end {
        let Some((prevlen, sz, v)) = entry_at(zl, p, end) else {
            return false;
        };
        if prevlen != prev_size || !f(v) {
            return false;
        }
        prev_at = Some(p);
        prev_size = sz;
        p += sz;
        n += 1;
    }
    // zltail points at the last entry (at the header's end when empty).
    let expect_tail = prev_at.unwrap_or(ZIPLIST_HEADER_SIZE);
    if p != end || tail as usize != expect_tail {
        return false;
    }
    count == u64::from(u16::MAX) || count == n
}

/// zipmapDecodeLength + its size, bounds-checked.
fn zipmap_len(zm: &[u8], p: usize) -> Option<(usize, usize)> {
    let b = *zm.get(p)?;
    if b < ZIPMAP_BIGLEN {
        Some((b as usize, 1))
    } else if b == ZIPMAP_BIGLEN {
        Some((le(zm, p + 1, 4)? as usize, 5))
    } else {
        None
    }
}

/// zipmapValidateIntegrity(deep) + a callback per (field, value).
pub fn zipmap_for_each(zm: &[u8], mut f: impl FnMut(&[u8], &[u8]) -> bool) -> bool {
    let size = zm.len();
    if size < 2 || zm[size - 1] != ZIP_END {
        return false;
    }
    let end = size - 1;
    let mut p = 1usize;
    let mut count = 0usize;
    while zm[p] != ZIP_END {
        let Some((flen, fs)) = zipmap_len(zm, p) else {
            return false;
        };
        if flen < ZIPMAP_BIGLEN as usize && fs != 1 {
            return false;
        }
        let Some(field_at) = p.checked_add(fs) else {
            return false;
        };
        let Some(after_field) = field_at.checked_add(flen) else {
            return false;
        };
        if after_field > end {
            return false;
        }
        let Some((vlen, vs)) = zipmap_len(zm, after_field) else {
            return false;
        };
        if vlen < ZIPMAP_BIGLEN as usize && vs != 1 {
            return false;
        }
        let free_at = after_field + vs;
        let Some(&free) = zm.get(free_at) else {
            return false;
        };
        let value_at = free_at + 1;
        let Some(after) = value_at
            .checked_add(vlen)
            .and_then(|x| x.checked_add(free as usize))
        else {
            return false;
        };
        if free_at >= end || after > end {
            return false;
        }
        if !f(&zm[field_at..after_field], &zm[value_at..value_at + vlen]) {
            return false;
        }
        count += 1;
        p = after;
    }
    count != 0 && (zm[0] == ZIPMAP_BIGLEN || zm[0] as usize == count)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ziplist builder for tests (ziplistPush of strings and integers).
    pub(crate) fn build_ziplist(items: &[LpEntry<'_>]) -> Vec<u8> {
        let mut body = Vec::new();
        let mut prev = 0usize;
        let mut last_at = ZIPLIST_HEADER_SIZE;
        for it in items {
            let mut e = Vec::new();
            if prev < 254 {
                e.push(prev as u8);
            } else {
                e.push(0xFE);
                e.extend_from_slice(&(prev as u32).to_le_bytes());
            }
            match it {
                LpEntry::Str(s) => {
                    if s.len() < 64 {
                        e.push(s.len() as u8);
                    } else if s.len() < 16384 {
                        e.push(0x40 | (s.len() >> 8) as u8);
                        e.push(s.len() as u8);
                    } else {
                        e.push(0x80);
                        e.extend_from_slice(&(s.len() as u32).to_be_bytes());
                    }
                    e.extend_from_slice(s);
                }
                LpEntry::Int(v) => {
                    if (0..=12).contains(v) {
                        e.push(0xF1 + *v as u8);
                    } else if i8::try_from(*v).is_ok() {
                        e.push(0xFE);
                        e.push(*v as u8);
                    } else if i16::try_from(*v).is_ok() {
                        e.push(0xC0);
                        e.extend_from_slice(&(*v as i16).to_le_bytes());
                    } else if i32::try_from(*v).is_ok() {
                        e.push(0xD0);
                        e.extend_from_slice(&(*v as i32).to_le_bytes());
                    } else {
                        e.push(0xE0);
                        e.extend_from_slice(&v.to_le_bytes());
                    }
                }
            }
            last_at = ZIPLIST_HEADER_SIZE + body.len();
            prev = e.len();
            body.extend_from_slice(&e);
        }
        let total = ZIPLIST_HEADER_SIZE + body.len() + 1;
        let mut zl = Vec::new();
        zl.extend_from_slice(&(total as u32).to_le_bytes());
        zl.extend_from_slice(&(last_at as u32).to_le_bytes());
        zl.extend_from_slice(&(items.len() as u16).to_le_bytes());
        zl.extend_from_slice(&body);
        zl.push(ZIP_END);
        zl
    }

    fn collect(zl: &[u8]) -> Option<Vec<Vec<u8>>> {
        let mut out = Vec::new();
        ziplist_for_each(zl, |e| {
            out.push(e.to_vec());
            true
        })
        .then_some(out)
    }

    #[test]
    fn ziplist_walk_decodes_every_encoding() {
        let big = vec![b'x'; 300];
        let items = [
            LpEntry::Str(b"hello"),
            LpEntry::Int(7),
            LpEntry::Int(-100),
            LpEntry::Int(3000),
            LpEntry::Int(100_000),
            LpEntry::Int(-5_000_000_000),
            LpEntry::Str(&big),
        ];
        let zl = build_ziplist(&items);
        let got = collect(&zl).unwrap();
        let want: Vec<Vec<u8>> = items.iter().map(|e| e.to_vec()).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn ziplist_walk_rejects_every_truncation_and_flip() {
        let zl = build_ziplist(&[
            LpEntry::Str(b"abc"),
            LpEntry::Int(1234567),
            LpEntry::Str(b"z"),
        ]);
        for cut in 0..zl.len() {
            assert!(collect(&zl[..cut]).is_none());
        }
        for i in 0..zl.len() {
            for bit in 0..8 {
                let mut z = zl.clone();
                z[i] ^= 1 << bit;
                let _ = collect(&z); // must not panic
            }
        }
    }

    #[test]
    fn zipmap_walk_reads_pairs_and_rejects_garbage() {
        // {"foo": "bar", "k": "vv"} with one byte of free space on "vv".
        let zm = [
            2, 3, b'f', b'o', b'o', 3, 0, b'b', b'a', b'r', 1, b'k', 2, 1, b'v', b'v', 0, 0xFF,
        ];
        let mut pairs = Vec::new();
        assert!(zipmap_for_each(&zm, |f, v| {
            pairs.push((f.to_vec(), v.to_vec()));
            true
        }));
        assert_eq!(
            pairs,
            vec![
                (b"foo".to_vec(), b"bar".to_vec()),
                (b"k".to_vec(), b"vv".to_vec())
            ]
        );
        for cut in 0..zm.len() {
            assert!(!zipmap_for_each(&zm[..cut], |_, _| true));
        }
        for i in 0..zm.len() {
            let mut z = zm;
            z[i] ^= 0x41;
            let _ = zipmap_for_each(&z, |_, _| true);
        }
    }
}
