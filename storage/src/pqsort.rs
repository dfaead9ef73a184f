//! pqsort (Redis's pqsort.c): a partial quicksort that sorts only what a
//! range of positions needs.
//!
//! GEORADIUS ... COUNT N with many candidates must return the N nearest in
//! order, not sort them all: Bentley & McIlroy's quicksort ("Engineering a
//! Sort Function", the NetBSD qsort Redis started from) that skips every
//! partition lying entirely outside `lrange..=rrange`.
//!
//! It is not a stable sort, so equal keys (two members at the same
//! distance) come out in the order this exact algorithm leaves them. That
//! order is part of Redis's reply, which is why this is a faithful port
//! (same pivots, same swaps) rather than `select_nth_unstable` + `sort`.

use std::cmp::Ordering;

/// Sort `v` enough that positions `lrange..=rrange` hold the elements a full
/// sort would put there, in order.
pub fn pqsort<T>(v: &mut [T], cmp: &impl Fn(&T, &T) -> Ordering, lrange: usize, rrange: usize) {
    let n = v.len();
    pqsort_inner(v, 0, n, cmp, lrange, rrange);
}

/// med3: the index of the median of three.
fn med3<T>(v: &[T], a: usize, b: usize, c: usize, cmp: &impl Fn(&T, &T) -> Ordering) -> usize {
    let lt = |x: usize, y: usize| cmp(&v[x], &v[y]) == Ordering::Less;
    let gt = |x: usize, y: usize| cmp(&v[x], &v[y]) == Ordering::Greater;
    if lt(a, b) {
        if lt(b, c) {
            b
        } else if lt(a, c) {
            c
        } else {
            a
        }
    } else if gt(b, c) {
        b
    } else if lt(a, c) {
        a
    } else {
        c
    }
}

/// vecswap: swap the `n` elements starting at `a` with those at `b`.
fn vecswap<T>(v: &mut [T], a: usize, b: usize, n: usize) {
    for k in 0..n {
        v.swap(a + k, b + k);
    }
}

/// Does the partition `l..=r` miss the wanted range entirely?
fn outside(l: usize, r: usize, lrange: usize, rrange: usize) -> bool {
    (lrange < l && rrange < l) || (lrange > r && rrange > r)
}

/// _pqsort on the `n` elements from index `a` (C's pointers become indexes).
fn pqsort_inner<T>(
    v: &mut [T],
    mut a: usize,
    mut n: usize,
    cmp: &impl Fn(&T, &T) -> Ordering,
    lrange: usize,
    rrange: usize,
) {
    loop {
        // Insertion sort for tiny partitions.
        if n < 7 {
            for pm in a + 1..a + n {
                let mut pl = pm;
                while pl > a && cmp(&v[pl - 1], &v[pl]) == Ordering::Greater {
                    v.swap(pl, pl - 1);
                    pl -= 1;
                }
            }
            return;
        }
        // The pivot: middle element, median of three, or ninther.
        let mut pm = a + n / 2;
        if n > 7 {
            let mut pl = a;
            let mut pn = a + n - 1;
            if n > 40 {
                let d = n / 8;
                pl = med3(v, pl, pl + d, pl + 2 * d, cmp);
                pm = med3(v, pm - d, pm, pm + d, cmp);
                pn = med3(v, pn - 2 * d, pn - d, pn, cmp);
            }
            pm = med3(v, pl, pm, pn, cmp);
        }
        v.swap(a, pm);
        // Split-end partitioning: keys equal to the pivot gather at both
        // ends (a..pa and pd..), smaller ones left of pb, larger right of pc.
        let (mut pa, mut pb) = (a + 1, a + 1);
        let (mut pc, mut pd) = (a + n - 1, a + n - 1);
        loop {
            while pb <= pc {
                let r = cmp(&v[pb], &v[a]);
                if r == Ordering::Greater {
                    break;
                }
                if r == Ordering::Equal {
                    v.swap(pa, pb);
                    pa += 1;
                }
                pb += 1;
            }
            while pb <= pc {
                let r = cmp(&v[pc], &v[a]);
                if r == Ordering::Less {
                    break;
                }
                if r == Ordering::Equal {
                    v.swap(pc, pd);
                    pd -= 1;
                }
                pc -= 1;
            }
            if pb > pc {
                break;
            }
            v.swap(pb, pc);
            pb += 1;
            pc -= 1;
        }
        // Move the equal keys from the ends into the middle.
        let pn = a + n;
        let r = (pa - a).min(pb - pa);
        vecswap(v, a, pb - r, r);
        let r = (pd - pc).min(pn - pd - 1);
        vecswap(v, pb, pn - r, r);
        // Recurse into the smaller side only if it meets the range...
        let r = pb - pa;
        if r > 1 && !outside(a, a + r - 1, lrange, rrange) {
            pqsort_inner(v, a, r, cmp, lrange, rrange);
        }
        // ...and iterate on the larger side rather than recursing.
        let r = pd - pc;
        if r > 1 {
            a = pn - r;
            n = r;
            if !outside(a, a + r - 1, lrange, rrange) {
                continue;
            }
        }
        return;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(seed: &mut u64) -> u64 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *seed >> 33
    }

    #[test]
    fn sorts_the_requested_prefix() {
        let mut seed = 7;
        for n in [0usize, 1, 5, 7, 8, 40, 41, 100, 1000] {
            for k in [1usize, 3, 10, 50] {
                if n == 0 {
                    continue;
                }
                let k = k.min(n);
                let mut v: Vec<u64> = (0..n).map(|_| lcg(&mut seed) % 50).collect();
                let mut sorted = v.clone();
                sorted.sort();
                pqsort(&mut v, &|a: &u64, b: &u64| a.cmp(b), 0, k - 1);
                assert_eq!(&v[..k], &sorted[..k], "n {n} k {k}");
                // Nothing was lost or duplicated.
                let mut all = v.clone();
                all.sort();
                assert_eq!(all, sorted);
            }
        }
    }

    #[test]
    fn full_range_is_a_full_sort() {
        let mut seed = 3;
        let mut v: Vec<u64> = (0..500).map(|_| lcg(&mut seed)).collect();
        let n = v.len();
        pqsort(&mut v, &|a: &u64, b: &u64| a.cmp(b), 0, n - 1);
        assert!(v.windows(2).all(|w| w[0] <= w[1]));
    }
}
