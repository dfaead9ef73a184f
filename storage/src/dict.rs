//! Redis 7.0's hash table (dict.c): the keyspace, the expires table and every
//! hashtable-encoded set and hash are one of these.
//!
//! Design, as in dict.c:
//! - Chaining. A table is an array of buckets whose size is a power of two;
//!   a bucket is a singly linked list of individually allocated entries
//!   (`Box<DictEntry>`), new entries pushed at the head. No arena: freeing a
//!   dict of a million entries really is a million `free()` calls, which is
//!   what makes lazy freeing (UNLINK) worth having.
//! - Two tables. `ht_table[0]` is the live one; while it is being resized,
//!   `ht_table[1]` is the target and `rehashidx` is the next bucket of table 0
//!   to move. Rehashing is *incremental*: each insert / find / remove / random
//!   pick on a rehashing dict moves one bucket (`rehash_step`), and the server
//!   cron moves more in 1 ms batches (`rehash_milliseconds`). No single call
//!   ever moves the whole table, so growing to a million keys never stalls.
//! - Lookups search table 0 then table 1; inserts go to table 1 while
//!   rehashing, so table 0 only ever drains.
//! - SCAN walks a cursor in reverse-binary order (`scan`), which is what lets
//!   it survive the table growing or shrinking between two calls.
//!
//! Differences from dict.c, all deliberate:
//! - Keys are owned byte strings (`Sds`) compared byte for byte; there is no
//!   `dictType` with callbacks. Values are any `V`, dropped by Rust.
//! - The hash is std's SipHash-1-3 keyed once per process with random keys
//!   (Redis: SipHash-1-2 keyed with 16 random bytes at start-up). Same idea:
//!   a client cannot predict buckets, so it cannot build long chains.
//! - `get`/`get_mut`/`iter`/`scan` take `&self` (or do no rehash step): the
//!   borrow checker already gives what Redis's "safe iterator" and
//!   `dictPauseRehashing` protect against. `find` is the `dictFind` twin and
//!   does the rehash step.
//! - No `dictExpandAllowed` (maxmemory) veto on growing.

use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::mem;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A key: an owned, binary-safe byte string (Redis: an `sds`). A boxed slice
/// is two words and allocates exactly the key's length, so a key costs no
/// more than Redis's sds header + bytes + NUL.
pub type Sds = Box<[u8]>;

/// DICT_HT_INITIAL_SIZE: the first table has 4 buckets. Small enough that
/// the many tiny dicts (one per hashtable set or hash) stay cheap.
pub const DICT_HT_INITIAL_SIZE: usize = 4;

/// dict_force_resize_ratio: while resizing is disabled (a fork child is
/// sharing pages copy-on-write), a table still grows once it holds more than
/// 5 elements per bucket, because chains that long cost more than the copied
/// pages.
pub const DICT_FORCE_RESIZE_RATIO: usize = 5;

/// HASHTABLE_MIN_FILL (server.h): below 10% fill the cron shrinks a table.
pub const HASHTABLE_MIN_FILL: usize = 10;

/// DICT_STATS_VECTLEN: chain lengths are histogrammed up to 49; longer
/// chains all land in the last slot (which dictGetStats never prints).
const DICT_STATS_VECTLEN: usize = 50;

/// GETFAIR_NUM_ENTRIES: dictGetFairRandomKey samples 15 entries and picks
/// one of them, so an entry's chance no longer depends on its chain length.
const GETFAIR_NUM_ENTRIES: usize = 15;

/// dict_can_resize: cleared while a fork child exists, so the parent does
/// not touch (and copy) every page of a table just to rehash it.
static DICT_CAN_RESIZE: AtomicBool = AtomicBool::new(true);

/// The process-wide hash keys (dict_hash_function_seed), drawn once.
static HASH_SEED: OnceLock<RandomState> = OnceLock::new();

/// dictEnableResize / dictDisableResize: the server turns resizing off while
/// a child process (BGSAVE, BGREWRITEAOF) exists, for every dict at once.
/// (Growing past DICT_FORCE_RESIZE_RATIO and rehashes already started still
/// go on, as in Redis 7.0.)
pub fn set_resize_allowed(enabled: bool) {
    DICT_CAN_RESIZE.store(enabled, Ordering::Relaxed);
}

/// The keyspace dicts' `expandAllowed` (dbDictType's dictExpandAllowed):
/// asked with the bytes the bigger bucket array would take and the current
/// entries-per-bucket ratio, it may refuse a growth that would push
/// used_memory past maxmemory. The server installs it once at start-up.
pub type ExpandAllowed = fn(more_mem: usize, used_ratio: f64) -> bool;

static EXPAND_ALLOWED: OnceLock<ExpandAllowed> = OnceLock::new();

/// Install the server's expandAllowed for every dict built with
/// `Dict::new_guarded` (the first call wins).
pub fn set_expand_allowed(f: ExpandAllowed) {
    let _ = EXPAND_ALLOWED.set(f);
}

/// Is resizing currently allowed (dict_can_resize)?
pub fn resize_allowed() -> bool {
    DICT_CAN_RESIZE.load(Ordering::Relaxed)
}

/// dictGenHashFunction: SipHash of the key bytes with the process seed.
fn dict_hash_key(key: &[u8]) -> u64 {
    let mut hasher = HASH_SEED.get_or_init(RandomState::new).build_hasher();
    hasher.write(key);
    hasher.finish()
}

/// One key/value pair and the link to the next entry of its bucket.
/// With an 8-byte `V` this is 32 bytes, the same jemalloc size class as
/// Redis's 24-byte dictEntry.
struct DictEntry<V> {
    key: Sds,
    val: V,
    next: Option<Box<DictEntry<V>>>,
}

/// A bucket: the head of a chain, or empty. `Option<Box<_>>` is one pointer.
type Bucket<V> = Option<Box<DictEntry<V>>>;

/// A chained hash table in two halves, rehashed incrementally (struct dict).
pub struct Dict<V> {
    /// The bucket arrays. Empty (no allocation) until the first insert; only
    /// `ht_table[1]` is non-empty while rehashing.
    ht_table: [Box<[Bucket<V>]>; 2],
    /// Entries in each table.
    ht_used: [usize; 2],
    /// Next bucket of table 0 to move to table 1, or -1 when not rehashing.
    /// Kept as dict.c's signed sentinel so a debugger shows the same value.
    rehashidx: isize,
    /// >0 while rehashing is paused (dictPauseRehashing).
    pauserehash: u32,
    /// A keyspace dict: growth asks `EXPAND_ALLOWED` first (its dictType
    /// has an expandAllowed callback).
    guarded: bool,
}

impl<V> Default for Dict<V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<V> Dict<V> {
    /// dictCreate: no bucket array yet; the first insert allocates 4.
    pub fn new() -> Self {
        Dict {
            ht_table: [Box::default(), Box::default()],
            ht_used: [0, 0],
            rehashidx: -1,
            pauserehash: 0,
            guarded: false,
        }
    }

    /// A dict whose growth asks the server's expandAllowed first (the
    /// keyspace and expires dicts: dbDictType / dbExpiresDictType).
    pub fn new_guarded() -> Self {
        let mut d = Self::new();
        d.guarded = true;
        d
    }

    /// dictTypeExpandAllowed: may the table grow to hold `used + 1`
    /// entries? Only guarded dicts ask; the cost is the new bucket array.
    fn type_expand_allowed(&self) -> bool {
        if !self.guarded {
            return true;
        }
        let Some(allowed) = EXPAND_ALLOWED.get() else {
            return true;
        };
        let used = self.ht_used[0];
        let size = self.ht_table[0].len();
        let next = (used + 1)
            .max(DICT_HT_INITIAL_SIZE)
            .checked_next_power_of_two()
            .unwrap_or(usize::MAX);
        let more_mem = next.saturating_mul(mem::size_of::<Bucket<V>>());
        allowed(more_mem, used as f64 / size as f64)
    }

    /// dictSize: entries in both tables.
    pub fn len(&self) -> usize {
        self.ht_used[0] + self.ht_used[1]
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// dictIsRehashing.
    pub fn is_rehashing(&self) -> bool {
        self.rehashidx != -1
    }

    /// dictSlots: buckets of both tables (for memory accounting and
    /// htNeedsResize).
    pub fn buckets(&self) -> usize {
        self.ht_table[0].len() + self.ht_table[1].len()
    }

    /// (size, used) of table 0 then table 1, as DEBUG HTSTATS reports them.
    pub fn table_sizes(&self) -> (usize, usize, usize, usize) {
        (
            self.ht_table[0].len(),
            self.ht_used[0],
            self.ht_table[1].len(),
            self.ht_used[1],
        )
    }

    /// Bytes of one entry allocation (`sizeof(dictEntry)` in
    /// objectComputeSize), without the key and value they point to.
    pub const fn entry_size() -> usize {
        mem::size_of::<DictEntry<V>>()
    }

    /// dictMemUsage: entries plus bucket arrays, keys and values excluded.
    pub fn mem_usage(&self) -> usize {
        self.len() * Self::entry_size() + self.buckets() * mem::size_of::<Bucket<V>>()
    }

    /// Same as the free function `dict::set_resize_allowed`.
    pub fn set_resize_allowed(enabled: bool) {
        set_resize_allowed(enabled);
    }

    /// Same as the free function `dict::resize_allowed`.
    pub fn resize_allowed() -> bool {
        resize_allowed()
    }

    /// dictPauseRehashing: while paused, lookups and updates do no rehash
    /// step (Redis needs this for safe iterators and scan callbacks).
    pub fn pause_rehashing(&mut self) {
        self.pauserehash += 1;
    }

    /// dictResumeRehashing.
    pub fn resume_rehashing(&mut self) {
        debug_assert!(self.pauserehash > 0, "resume without pause");
        self.pauserehash = self.pauserehash.saturating_sub(1);
    }

    // ----------------------------------------------------------------- lookup

    /// Pure lookup: both tables, no rehash step. For read paths that must not
    /// change the dict (and for `&self` callers).
    pub fn get(&self, key: &[u8]) -> Option<&V> {
        self.get_key_value(key).map(|(_, v)| v)
    }

    /// Like `get`, also handing back the stored key.
    pub fn get_key_value(&self, key: &[u8]) -> Option<(&Sds, &V)> {
        if self.is_empty() {
            return None;
        }
        let h = dict_hash_key(key);
        for table in 0..=1 {
            // The bucket is the low bits of the hash (sizes are powers of 2).
            let idx = h as usize & (self.ht_table[table].len() - 1);
            // Walk the chain comparing whole keys: equal hashes prove nothing.
            let mut he = self.ht_table[table][idx].as_deref();
            while let Some(entry) = he {
                if *entry.key == *key {
                    return Some((&entry.key, &entry.val));
                }
                he = entry.next.as_deref();
            }
            // Table 1 only holds entries while a rehash is in progress.
            if !self.is_rehashing() {
                break;
            }
        }
        None
    }

    /// Pure membership test (no rehash step).
    pub fn contains_key(&self, key: &[u8]) -> bool {
        self.get_key_value(key).is_some()
    }

    /// dictFind: one rehash step if rehashing, then look in both tables.
    /// This is the lookup the keyspace uses, so plain reads help finish a
    /// rehash too.
    pub fn find(&mut self, key: &[u8]) -> Option<&mut V> {
        if self.is_empty() {
            return None;
        }
        // Pay one bucket of the pending rehash before looking: this is how
        // a busy dict finishes its rehash without ever stopping for it.
        if self.is_rehashing() {
            self.rehash_step();
        }
        let h = dict_hash_key(key);
        self.lookup_mut(key, h).map(|entry| &mut entry.val)
    }

    /// Mutable lookup without a rehash step.
    pub fn get_mut(&mut self, key: &[u8]) -> Option<&mut V> {
        if self.is_empty() {
            return None;
        }
        let h = dict_hash_key(key);
        self.lookup_mut(key, h).map(|entry| &mut entry.val)
    }

    /// Searches table 0, then table 1 if rehashing. The two tables are split
    /// into separate borrows so a hit in table 0 can be returned.
    fn lookup_mut(&mut self, key: &[u8], h: u64) -> Option<&mut DictEntry<V>> {
        let rehashing = self.is_rehashing();
        let [t0, t1] = &mut self.ht_table;
        if let Some(entry) = chain_find_mut(t0, h, key) {
            return Some(entry);
        }
        if rehashing {
            return chain_find_mut(t1, h, key);
        }
        None
    }

    // ----------------------------------------------------------------- update

    /// dictReplace: add the key, or overwrite its value and hand back the
    /// old one (the stored key is kept; the `key` passed in is dropped).
    pub fn insert(&mut self, key: Sds, val: V) -> Option<V> {
        match self.add_raw(key, val) {
            Ok(_) => None,
            Err((key, val, h)) => {
                let entry = self.lookup_mut(&key, h).expect("add_raw saw the key");
                Some(mem::replace(&mut entry.val, val))
            }
        }
    }

    /// dictAdd: insert only if the key is absent. On success returns the new
    /// value in place; if the key exists, hands key and value back untouched.
    pub fn add(&mut self, key: Sds, val: V) -> Result<&mut V, (Sds, V)> {
        match self.add_raw(key, val) {
            Ok((table, idx)) => {
                let head = self.ht_table[table][idx].as_deref_mut();
                Ok(&mut head.expect("just inserted").val)
            }
            Err((key, val, _)) => Err((key, val)),
        }
    }

    /// dictAddRaw: one rehash step, then _dictKeyIndex (which grows the table
    /// if needed *before* looking for the key), then link a new entry at the
    /// head of its bucket. Returns the bucket, or everything back plus the
    /// hash if the key exists.
    fn add_raw(&mut self, key: Sds, val: V) -> Result<(usize, usize), (Sds, V, u64)> {
        if self.is_rehashing() {
            self.rehash_step();
        }
        let h = dict_hash_key(&key);
        self.expand_if_needed();
        if self.contains_hashed(&key, h) {
            return Err((key, val, h));
        }
        // While rehashing, new entries go to the new table only.
        let table = if self.is_rehashing() { 1 } else { 0 };
        let idx = h as usize & (self.ht_table[table].len() - 1);
        // Insert at the head: recently added keys are the likeliest to be
        // looked up again, and it is O(1).
        let next = self.ht_table[table][idx].take();
        self.ht_table[table][idx] = Some(Box::new(DictEntry { key, val, next }));
        self.ht_used[table] += 1;
        Ok((table, idx))
    }

    /// Is the key in either table? (the search half of _dictKeyIndex)
    fn contains_hashed(&self, key: &[u8], h: u64) -> bool {
        for table in 0..=1 {
            let idx = h as usize & (self.ht_table[table].len() - 1);
            let mut he = self.ht_table[table][idx].as_deref();
            while let Some(entry) = he {
                if *entry.key == *key {
                    return true;
                }
                he = entry.next.as_deref();
            }
            if !self.is_rehashing() {
                break;
            }
        }
        false
    }

    /// dictDelete / dictUnlink: one rehash step, then unlink the entry and
    /// hand its key and value back (the caller decides where they are freed:
    /// here, or on the lazy-free thread).
    pub fn remove(&mut self, key: &[u8]) -> Option<(Sds, V)> {
        if self.is_empty() {
            return None;
        }
        if self.is_rehashing() {
            self.rehash_step();
        }
        let h = dict_hash_key(key);
        // The key is in table 0 or (while rehashing) table 1, never both.
        for table in 0..=1 {
            let idx = h as usize & (self.ht_table[table].len() - 1);
            // Walk the links until `link` is the one pointing at the key
            // (Redis keeps a `prevHe` pointer for the same purpose).
            let mut link = &mut self.ht_table[table][idx];
            while link.as_ref().is_some_and(|entry| *entry.key != *key) {
                link = &mut link.as_mut().expect("checked above").next;
            }
            if let Some(mut entry) = link.take() {
                // Unlink: whatever pointed at the entry now points past it.
                *link = entry.next.take();
                self.ht_used[table] -= 1;
                // Nothing is freed here: key and value go back to the caller.
                let DictEntry { key, val, .. } = *entry;
                return Some((key, val));
            }
            if !self.is_rehashing() {
                break;
            }
        }
        None
    }

    /// dictEmpty: free every entry and both bucket arrays; back to `new()`.
    pub fn clear(&mut self) {
        for table in 0..=1 {
            free_table(&mut self.ht_table[table]);
            self.ht_used[table] = 0;
        }
        self.rehashidx = -1;
        self.pauserehash = 0;
    }

    // ------------------------------------------------------ resize and rehash

    /// _dictExpandIfNeeded, Redis 7.0's policy: an empty dict gets 4 buckets;
    /// once there are as many entries as buckets the table doubles (to the
    /// next power of two above `used`), unless resizing is disabled, in which
    /// case only past 5 entries per bucket. A guarded dict also asks the
    /// server's expandAllowed (no growth that would exceed maxmemory).
    fn expand_if_needed(&mut self) {
        if self.is_rehashing() {
            return;
        }
        let size = self.ht_table[0].len();
        if size == 0 {
            self.expand(DICT_HT_INITIAL_SIZE);
            return;
        }
        let used = self.ht_used[0];
        if used >= size
            && (Self::resize_allowed() || used / size > DICT_FORCE_RESIZE_RATIO)
            && self.type_expand_allowed()
        {
            self.expand(used + 1);
        }
    }

    /// dictExpand: make the table the next power of two >= `size` (at least
    /// 4). The first allocation is immediate; otherwise it allocates table 1
    /// and starts an incremental rehash. Returns false, changing nothing, if
    /// already rehashing, if `size` is below the element count, or if the
    /// size would not change.
    pub fn expand(&mut self, size: usize) -> bool {
        if self.is_rehashing() || self.ht_used[0] > size {
            return false;
        }
        // _dictNextExp: the smallest power of two >= size, minimum 4.
        let Some(new_size) = size.max(DICT_HT_INITIAL_SIZE).checked_next_power_of_two() else {
            return false;
        };
        if new_size.checked_mul(mem::size_of::<Bucket<V>>()).is_none() {
            return false;
        }
        if new_size == self.ht_table[0].len() {
            return false;
        }
        let new_table = empty_table(new_size);
        // First initialization: not a rehash, just give table 0 its buckets.
        if self.ht_table[0].is_empty() {
            self.ht_table[0] = new_table;
            return true;
        }
        // Otherwise prepare table 1 and let the steps move buckets over.
        self.ht_table[1] = new_table;
        self.ht_used[1] = 0;
        self.rehashidx = 0;
        true
    }

    /// dictResize: shrink (or grow) to the smallest power of two holding all
    /// entries, at least 4. The cron calls this when `needs_resize()`.
    pub fn resize_to_fit(&mut self) -> bool {
        if !Self::resize_allowed() || self.is_rehashing() {
            return false;
        }
        let minimal = self.ht_used[0].max(DICT_HT_INITIAL_SIZE);
        self.expand(minimal)
    }

    /// htNeedsResize (server.c): more than 4 buckets and under 10% full.
    pub fn needs_resize(&self) -> bool {
        let size = self.buckets();
        let used = self.len();
        size > DICT_HT_INITIAL_SIZE && used * 100 / size < HASHTABLE_MIN_FILL
    }

    /// _dictRehashStep: the single bucket every operation contributes.
    fn rehash_step(&mut self) {
        if self.pauserehash == 0 {
            self.rehash(1);
        }
    }

    /// dictRehash: move up to `n` non-empty buckets from table 0 to table 1,
    /// but look at no more than n*10 empty buckets, so one call is bounded
    /// even when table 0 is mostly holes. Returns true while keys remain to
    /// be moved; when table 0 is drained, table 1 becomes table 0.
    pub fn rehash(&mut self, n: usize) -> bool {
        // Ten empty buckets per bucket asked for: after a mass delete most
        // of table 0 may be empty, and skipping holes is work too.
        let mut empty_visits = n * 10;
        if !self.is_rehashing() {
            return false;
        }
        let mask1 = self.ht_table[1].len() - 1;
        let mut n = n;
        while n > 0 && self.ht_used[0] != 0 {
            n -= 1;
            // rehashidx cannot run off the table: ht_used[0] != 0 means a
            // non-empty bucket lies ahead.
            assert!((self.rehashidx as usize) < self.ht_table[0].len());
            while self.ht_table[0][self.rehashidx as usize].is_none() {
                self.rehashidx += 1;
                #[cfg(test)]
                test_counters::EMPTY_VISITED.with(|c| c.set(c.get() + 1));
                empty_visits -= 1;
                if empty_visits == 0 {
                    return true;
                }
            }
            // Move every entry of this bucket to its bucket in table 1. Each
            // key is hashed again: entries do not store their hash (it would
            // cost 8 bytes per key), so rehash pays for it instead.
            let mut de = self.ht_table[0][self.rehashidx as usize].take();
            while let Some(mut entry) = de {
                de = entry.next.take();
                let h = dict_hash_key(&entry.key) as usize & mask1;
                entry.next = self.ht_table[1][h].take();
                self.ht_table[1][h] = Some(entry);
                self.ht_used[0] -= 1;
                self.ht_used[1] += 1;
            }
            #[cfg(test)]
            test_counters::BUCKETS_MOVED.with(|c| c.set(c.get() + 1));
            self.rehashidx += 1;
        }

        // Table 0 drained: free its (empty) array, table 1 takes its place.
        if self.ht_used[0] == 0 {
            self.ht_table[0] = mem::take(&mut self.ht_table[1]);
            self.ht_used[0] = self.ht_used[1];
            self.ht_used[1] = 0;
            self.rehashidx = -1;
            return false;
        }
        true
    }

    /// dictRehashMilliseconds: rehash in batches of 100 buckets until more
    /// than `ms` milliseconds have passed (the cron's "activerehashing" work,
    /// 1 ms per call). Returns the number of buckets asked for (a multiple of
    /// 100), as Redis does. Does nothing while rehashing is paused.
    pub fn rehash_milliseconds(&mut self, ms: u64) -> usize {
        if self.pauserehash > 0 {
            return 0;
        }
        let start = Instant::now();
        let budget = Duration::from_millis(ms);
        let mut rehashes = 0;
        while self.rehash(100) {
            rehashes += 100;
            if start.elapsed() > budget {
                break;
            }
        }
        rehashes
    }

    // ---------------------------------------------------------- iterate, scan

    /// Every entry once, table 0 then table 1 (dictGetIterator). Holding the
    /// iterator borrows the dict, so nothing can rehash under it.
    pub fn iter(&self) -> Iter<'_, V> {
        Iter {
            buckets: self.ht_table[0].iter().chain(self.ht_table[1].iter()),
            entry: None,
            remaining: self.len(),
        }
    }

    /// Like `iter`, with mutable values.
    pub fn iter_mut(&mut self) -> IterMut<'_, V> {
        let remaining = self.len();
        let [t0, t1] = &mut self.ht_table;
        IterMut {
            buckets: t0.iter_mut().chain(t1.iter_mut()),
            entry: None,
            remaining,
        }
    }

    /// The entries of one bucket, for callers that walk buckets by index as
    /// Redis 7.0's active expire cycle does (`table` 0 or 1). Empty if the
    /// index is out of range.
    pub fn bucket_iter(&self, table: usize, idx: usize) -> BucketIter<'_, V> {
        let entry = self
            .ht_table
            .get(table)
            .and_then(|t| t.get(idx))
            .and_then(|b| b.as_deref());
        BucketIter { entry }
    }

    /// dictScan: emit one bucket (plus, while rehashing, its expansions in the
    /// bigger table) and return the next cursor; 0 means done.
    ///
    /// The cursor is a bucket index incremented in *reverse-binary* order
    /// (for 8 buckets: 0 4 2 6 1 5 3 7). With power-of-two tables, bucket i
    /// of a small table splits into buckets i and i+size of a table twice as
    /// big; counting from the high bits means both halves are either already
    /// visited or still ahead, so an entry present for the whole scan is
    /// reported at least once whatever resizes happen between calls
    /// (shrinking may report some twice).
    pub fn scan<F: FnMut(&Sds, &V)>(&self, cursor: u64, mut f: F) -> u64 {
        if self.is_empty() {
            return 0;
        }
        let mut v = cursor;
        if !self.is_rehashing() {
            let m0 = (self.ht_table[0].len() - 1) as u64;
            // Emit the entries of the bucket at the cursor.
            for (key, val) in self.bucket_iter(0, (v & m0) as usize) {
                f(key, val);
            }
            // Set the bits above the mask so the increment below carries
            // straight through them, then add one to the reversed cursor.
            v |= !m0;
            v = v.reverse_bits().wrapping_add(1).reverse_bits();
        } else {
            // Make `small` the smaller table and `big` the bigger one.
            let (small, big) = if self.ht_table[0].len() > self.ht_table[1].len() {
                (1, 0)
            } else {
                (0, 1)
            };
            let m0 = (self.ht_table[small].len() - 1) as u64;
            let m1 = (self.ht_table[big].len() - 1) as u64;

            for (key, val) in self.bucket_iter(small, (v & m0) as usize) {
                f(key, val);
            }
            // Then every bucket of the big table that is an expansion of
            // that small-table bucket (same low bits, all higher bits).
            loop {
                for (key, val) in self.bucket_iter(big, (v & m1) as usize) {
                    f(key, val);
                }
                // Increment the bits of the big mask not in the small mask.
                v |= !m1;
                v = v.reverse_bits().wrapping_add(1).reverse_bits();
                // Done once those bits have wrapped back to zero.
                if v & (m0 ^ m1) == 0 {
                    break;
                }
            }
        }
        v
    }

    // ----------------------------------------------------------------- random

    /// dictGetFairRandomKey: sample up to 15 entries (`some_entries`) and
    /// pick one, falling back to `random_entry_unfair` if the sample came
    /// back empty. RANDOMKEY, SPOP and SRANDMEMBER use this one.
    pub fn random_entry(&mut self) -> Option<(&Sds, &V)> {
        if self.is_empty() {
            return None;
        }
        let mut picks = [Position::default(); GETFAIR_NUM_ENTRIES];
        let count = self.sample_positions(&mut picks);
        if count == 0 {
            return self.random_entry_unfair();
        }
        let pick = picks[(rand::random::<u64>() % count as u64) as usize];
        Some(self.entry_at(pick))
    }

    /// dictGetRandomKey: a random non-empty bucket, then a random entry of
    /// its chain (so entries in short chains are favoured).
    pub fn random_entry_unfair(&mut self) -> Option<(&Sds, &V)> {
        if self.is_empty() {
            return None;
        }
        if self.is_rehashing() {
            self.rehash_step();
        }
        let (table, idx) = if self.is_rehashing() {
            // Buckets of table 0 below rehashidx are known to be empty, so
            // draw among the others: [rehashidx, size0 + size1).
            let s0 = self.ht_table[0].len();
            let first = self.rehashidx as usize;
            let span = (self.buckets() - first) as u64;
            loop {
                let h = first + (rand::random::<u64>() % span) as usize;
                let (t, i) = if h >= s0 { (1, h - s0) } else { (0, h) };
                if self.ht_table[t][i].is_some() {
                    break (t, i);
                }
            }
        } else {
            let m0 = self.ht_table[0].len() - 1;
            loop {
                let i = rand::random::<u64>() as usize & m0;
                if self.ht_table[0][i].is_some() {
                    break (0, i);
                }
            }
        };
        // A chain is a linked list: count it, then walk to a random element.
        let chain_len = self.bucket_iter(table, idx).count();
        let chain_pos = (rand::random::<u64>() % chain_len as u64) as usize;
        Some(self.entry_at(Position {
            table,
            idx,
            chain_pos,
        }))
    }

    /// dictGetSomeKeys: up to `count` entries from consecutive buckets at a
    /// random spot: fast, possibly fewer than asked, not uniformly random
    /// (but a long chain is reservoir-sampled to its end).
    /// Redis's eviction samples keys this way.
    pub fn some_entries(&mut self, count: usize) -> Vec<(&Sds, &V)> {
        let mut picks = vec![Position::default(); count.min(self.len())];
        let stored = self.sample_positions(&mut picks);
        let this: &Self = self;
        picks[..stored]
            .iter()
            .map(|&pick| this.entry_at(pick))
            .collect()
    }

    /// The body of dictGetSomeKeys, recording where each sampled entry sits
    /// instead of a pointer to it. Fills `out` from the front and returns how
    /// many positions it stored.
    fn sample_positions(&mut self, out: &mut [Position]) -> usize {
        let count = out.len().min(self.len());
        let mut maxsteps = count * 10;
        // Rehash work proportional to the number of entries asked for.
        for _ in 0..count {
            if !self.is_rehashing() {
                break;
            }
            self.rehash_step();
        }
        let tables = if self.is_rehashing() { 2 } else { 1 };
        let mut maxsizemask = self.ht_table[0].len().wrapping_sub(1);
        if tables > 1 {
            maxsizemask = maxsizemask.max(self.ht_table[1].len() - 1);
        }
        if count == 0 {
            return 0;
        }

        // Start at a random bucket of the larger table and walk forward.
        let mut i = rand::random::<u64>() as usize & maxsizemask;
        let mut emptylen = 0;
        let mut stored = 0;
        while stored < count && maxsteps > 0 {
            maxsteps -= 1;
            for table in 0..tables {
                // Buckets of table 0 below rehashidx are empty: skip them,
                // jumping straight to rehashidx if also past table 1's end.
                if tables == 2 && table == 0 && i < self.rehashidx as usize {
                    if i >= self.ht_table[1].len() {
                        i = self.rehashidx as usize;
                    } else {
                        continue;
                    }
                }
                if i >= self.ht_table[table].len() {
                    continue;
                }
                if self.ht_table[table][i].is_none() {
                    // After a run of empty buckets (>= 5 and > count), jump
                    // to another random spot.
                    emptylen += 1;
                    if emptylen >= 5 && emptylen > count {
                        i = rand::random::<u64>() as usize & maxsizemask;
                        emptylen = 0;
                    }
                } else {
                    emptylen = 0;
                    // Collect the whole chain. Once `count` are stored, go
                    // on with reservoir sampling to the chain's end, so the
                    // tail of a long chain can be sampled too (7.0.15).
                    for chain_pos in 0..self.bucket_iter(table, i).count() {
                        let here = Position {
                            table,
                            idx: i,
                            chain_pos,
                        };
                        if stored < count {
                            out[stored] = here;
                        } else {
                            let r = (rand::random::<u64>() % (stored as u64 + 1)) as usize;
                            if r < count {
                                out[r] = here;
                            }
                        }
                        stored += 1;
                    }
                    if stored >= count {
                        return count;
                    }
                }
            }
            i = (i + 1) & maxsizemask;
        }
        stored.min(count)
    }

    /// The entry at a sampled position (which must exist).
    fn entry_at(&self, pos: Position) -> (&Sds, &V) {
        self.bucket_iter(pos.table, pos.idx)
            .nth(pos.chain_pos)
            .expect("sampled position exists")
    }

    // ------------------------------------------------------------------ stats

    /// dictGetStats: the text of DEBUG HTSTATS / HTSTATS-KEY for this dict,
    /// table 0 then (while rehashing) table 1.
    ///
    /// `full = true` is byte for byte what Redis 7.0.15 prints (it has no
    /// `full` option and always includes the chain-length histogram);
    /// `full = false` stops after the element count, as Redis 7.2's short
    /// form does. Redis writes into a 4096-byte buffer and truncates; this
    /// returns the whole text and leaves any truncation to the caller.
    pub fn stats(&self, full: bool) -> String {
        let mut out = String::new();
        self.table_stats(0, full, &mut out);
        if self.is_rehashing() {
            self.table_stats(1, full, &mut out);
        }
        out
    }

    /// _dictGetStatsHt for one table.
    fn table_stats(&self, htidx: usize, full: bool, out: &mut String) {
        use std::fmt::Write;
        let name = if htidx == 0 {
            "main hash table"
        } else {
            "rehashing target"
        };
        let _ = writeln!(out, "Hash table {htidx} stats ({name}):");
        let used = self.ht_used[htidx];
        if used == 0 {
            out.push_str("No stats available for empty dictionaries\n");
            return;
        }
        let size = self.ht_table[htidx].len();
        let _ = writeln!(out, " table size: {size}");
        let _ = writeln!(out, " number of elements: {used}");
        if !full {
            return;
        }

        // Histogram of chain lengths; slot 0 counts empty buckets.
        let mut clvector = [0usize; DICT_STATS_VECTLEN];
        let mut slots = 0usize;
        let mut maxchainlen = 0usize;
        let mut totchainlen = 0usize;
        for bucket in self.ht_table[htidx].iter() {
            if bucket.is_none() {
                clvector[0] += 1;
                continue;
            }
            slots += 1;
            let chainlen = self.chain_len(bucket);
            clvector[chainlen.min(DICT_STATS_VECTLEN - 1)] += 1;
            maxchainlen = maxchainlen.max(chainlen);
            totchainlen += chainlen;
        }

        // Redis computes these averages and percentages in `float`.
        let counted = totchainlen as f32 / slots as f32;
        let computed = used as f32 / slots as f32;
        let _ = writeln!(out, " different slots: {slots}");
        let _ = writeln!(out, " max chain length: {maxchainlen}");
        let _ = writeln!(out, " avg chain length (counted): {counted:.2}");
        let _ = writeln!(out, " avg chain length (computed): {computed:.2}");
        out.push_str(" Chain length distribution:\n");
        // The last slot (chains of 49 or more) is never printed, as in Redis.
        for (len, &n) in clvector.iter().enumerate().take(DICT_STATS_VECTLEN - 1) {
            if n == 0 {
                continue;
            }
            let pct = (n as f32 / size as f32) * 100.0;
            let _ = writeln!(out, "   {len}: {n} ({pct:.2}%)");
        }
    }

    fn chain_len(&self, bucket: &Bucket<V>) -> usize {
        let mut len = 0;
        let mut he = bucket.as_deref();
        while let Some(entry) = he {
            len += 1;
            he = entry.next.as_deref();
        }
        len
    }
}

/// Where a sampled entry sits: table, bucket, and place in the chain.
#[derive(Clone, Copy, Default)]
struct Position {
    table: usize,
    idx: usize,
    chain_pos: usize,
}

/// A table of `size` empty buckets (zcalloc).
fn empty_table<V>(size: usize) -> Box<[Bucket<V>]> {
    let mut table = Vec::with_capacity(size);
    table.resize_with(size, || None);
    table.into_boxed_slice()
}

/// Frees every entry of a table one by one, chains with a loop (a recursive
/// drop of a long chain could overflow the stack), then the array itself.
fn free_table<V>(table: &mut Box<[Bucket<V>]>) {
    for bucket in table.iter_mut() {
        let mut he = bucket.take();
        while let Some(mut entry) = he {
            he = entry.next.take();
            // `entry` (key, value, the allocation) is freed here.
        }
    }
    *table = Box::default();
}

/// The entry for `key` in the bucket `h` selects in `table`, if present.
fn chain_find_mut<'a, V>(
    table: &'a mut [Bucket<V>],
    h: u64,
    key: &[u8],
) -> Option<&'a mut DictEntry<V>> {
    if table.is_empty() {
        return None;
    }
    let idx = h as usize & (table.len() - 1);
    let mut he = table[idx].as_deref_mut();
    while let Some(entry) = he {
        if *entry.key == *key {
            return Some(entry);
        }
        he = entry.next.as_deref_mut();
    }
    None
}

impl<V> Drop for Dict<V> {
    /// dictRelease: entry by entry, with chains freed iteratively.
    fn drop(&mut self) {
        self.clear();
    }
}

impl<V> fmt::Debug for Dict<V> {
    /// A summary (the entries could be millions).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (size0, used0, size1, used1) = self.table_sizes();
        f.debug_struct("Dict")
            .field("size0", &size0)
            .field("used0", &used0)
            .field("size1", &size1)
            .field("used1", &used1)
            .field("rehashidx", &self.rehashidx)
            .field("pauserehash", &self.pauserehash)
            .finish()
    }
}

/// Iterator over `(&key, &value)` of both tables (see `Dict::iter`).
pub struct Iter<'a, V> {
    buckets: std::iter::Chain<std::slice::Iter<'a, Bucket<V>>, std::slice::Iter<'a, Bucket<V>>>,
    entry: Option<&'a DictEntry<V>>,
    remaining: usize,
}

impl<'a, V> Iterator for Iter<'a, V> {
    type Item = (&'a Sds, &'a V);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            // Rest of the current chain first, then the next bucket.
            if let Some(entry) = self.entry {
                self.entry = entry.next.as_deref();
                self.remaining -= 1;
                return Some((&entry.key, &entry.val));
            }
            self.entry = self.buckets.next()?.as_deref();
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl<V> ExactSizeIterator for Iter<'_, V> {}

impl<'a, V> IntoIterator for &'a Dict<V> {
    type Item = (&'a Sds, &'a V);
    type IntoIter = Iter<'a, V>;

    fn into_iter(self) -> Iter<'a, V> {
        self.iter()
    }
}

/// Iterator over `(&key, &mut value)` (see `Dict::iter_mut`).
pub struct IterMut<'a, V> {
    buckets:
        std::iter::Chain<std::slice::IterMut<'a, Bucket<V>>, std::slice::IterMut<'a, Bucket<V>>>,
    entry: Option<&'a mut DictEntry<V>>,
    remaining: usize,
}

impl<'a, V> Iterator for IterMut<'a, V> {
    type Item = (&'a Sds, &'a mut V);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(entry) = self.entry.take() {
                let DictEntry { key, val, next } = entry;
                self.entry = next.as_deref_mut();
                self.remaining -= 1;
                return Some((&*key, val));
            }
            self.entry = self.buckets.next()?.as_deref_mut();
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl<V> ExactSizeIterator for IterMut<'_, V> {}

/// The chain of one bucket (see `Dict::bucket_iter`).
pub struct BucketIter<'a, V> {
    entry: Option<&'a DictEntry<V>>,
}

impl<'a, V> Iterator for BucketIter<'a, V> {
    type Item = (&'a Sds, &'a V);

    fn next(&mut self) -> Option<Self::Item> {
        let entry = self.entry?;
        self.entry = entry.next.as_deref();
        Some((&entry.key, &entry.val))
    }
}

/// Counters the tests read to prove each operation's rehash work is bounded.
#[cfg(test)]
mod test_counters {
    use std::cell::Cell;

    thread_local! {
        /// Non-empty buckets moved from table 0 to table 1.
        pub static BUCKETS_MOVED: Cell<usize> = const { Cell::new(0) };
        /// Empty buckets of table 0 stepped over.
        pub static EMPTY_VISITED: Cell<usize> = const { Cell::new(0) };
    }

    /// (buckets moved, empty buckets visited) so far on this thread.
    pub fn read() -> (usize, usize) {
        (
            BUCKETS_MOVED.with(|c| c.get()),
            EMPTY_VISITED.with(|c| c.get()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

    /// `dict_can_resize` is process-wide and tests run in parallel: tests
    /// that depend on the resize policy hold this for reading, the one test
    /// that flips it holds it for writing.
    static RESIZE_POLICY: RwLock<()> = RwLock::new(());

    fn policy_shared() -> RwLockReadGuard<'static, ()> {
        RESIZE_POLICY.read().unwrap_or_else(|e| e.into_inner())
    }

    fn policy_exclusive() -> RwLockWriteGuard<'static, ()> {
        RESIZE_POLICY.write().unwrap_or_else(|e| e.into_inner())
    }

    fn key(i: usize) -> Sds {
        format!("key:{i}").into_bytes().into_boxed_slice()
    }

    fn dict_with(n: usize) -> Dict<usize> {
        let mut d = Dict::new();
        for i in 0..n {
            d.insert(key(i), i);
        }
        d
    }

    /// Runs rehash steps until the rehash in progress is done.
    fn finish_rehash<V>(d: &mut Dict<V>) {
        while d.rehash(100) {}
    }

    fn scan_all<V>(d: &Dict<V>) -> Vec<Sds> {
        let mut seen = Vec::new();
        let mut cursor = 0;
        loop {
            cursor = d.scan(cursor, |k, _| seen.push(k.clone()));
            if cursor == 0 {
                return seen;
            }
        }
    }

    #[test]
    fn dict_new_allocates_no_table() {
        let d: Dict<u8> = Dict::new();
        assert_eq!(d.table_sizes(), (0, 0, 0, 0));
        assert!(d.is_empty());
        assert_eq!(d.get(b"x"), None);
        assert_eq!(d.scan(0, |_, _| panic!("empty")), 0);
    }

    #[test]
    fn dict_first_insert_allocates_initial_size() {
        let _g = policy_shared();
        let mut d = Dict::new();
        d.insert(key(1), 1);
        assert_eq!(d.table_sizes(), (DICT_HT_INITIAL_SIZE, 1, 0, 0));
        assert!(!d.is_rehashing());
    }

    #[test]
    fn dict_grows_when_used_reaches_size() {
        let _g = policy_shared();
        let mut d = dict_with(4);
        assert_eq!(d.table_sizes(), (4, 4, 0, 0));
        // The fifth insert sees used == size and starts a rehash to 8.
        d.insert(key(4), 4);
        assert!(d.is_rehashing());
        let (size0, _, size1, used1) = d.table_sizes();
        assert_eq!((size0, size1), (4, 8));
        assert!(used1 >= 1, "new keys go to the new table");
        finish_rehash(&mut d);
        assert_eq!(d.table_sizes(), (8, 5, 0, 0));
    }

    #[test]
    fn dict_resize_disabled_grows_only_past_force_ratio() {
        let _g = policy_exclusive();
        /// Turns resizing back on even if an assertion fails.
        struct Reenable;
        impl Drop for Reenable {
            fn drop(&mut self) {
                Dict::<usize>::set_resize_allowed(true);
            }
        }
        let _reenable = Reenable;
        Dict::<usize>::set_resize_allowed(false);
        let mut d = Dict::new();
        // 4 buckets hold up to 4 * 5 = 20 entries, then 24 (used/size = 6 > 5)
        // is the first insert allowed to grow the table.
        for i in 0..=24 {
            d.insert(key(i), i);
            if i < 24 {
                assert_eq!(d.table_sizes().0, 4, "grew early at insert {i}");
                assert!(!d.is_rehashing());
            }
        }
        assert!(d.is_rehashing());
        assert_eq!(d.table_sizes().2, 32, "next power of two >= used + 1");
        // dictResize refuses to shrink while resizing is disabled.
        finish_rehash(&mut d);
        for i in 0..24 {
            d.remove(&key(i));
        }
        assert!(d.needs_resize());
        assert!(!d.resize_to_fit());
        Dict::<usize>::set_resize_allowed(true);
        assert!(d.resize_to_fit());
        finish_rehash(&mut d);
        assert_eq!(d.table_sizes(), (4, 1, 0, 0));
    }

    #[test]
    fn dict_insert_replaces_and_returns_old_value() {
        let _g = policy_shared();
        let mut d = Dict::new();
        assert_eq!(d.insert(key(1), "a"), None);
        assert_eq!(d.insert(key(1), "b"), Some("a"));
        assert_eq!(d.len(), 1);
        assert_eq!(d.get(&key(1)), Some(&"b"));
    }

    #[test]
    fn dict_add_refuses_existing_key() {
        let _g = policy_shared();
        let mut d = Dict::new();
        *d.add(key(1), 1).unwrap() += 10;
        assert_eq!(d.get(&key(1)), Some(&11));
        let (k, v) = d.add(key(1), 2).unwrap_err();
        assert_eq!((&*k, v), (&*key(1), 2));
    }

    #[test]
    fn dict_keys_are_binary_safe_and_case_sensitive() {
        let _g = policy_shared();
        let mut d = Dict::new();
        d.insert(b"a\0b".to_vec().into(), 1);
        d.insert(b"A\0b".to_vec().into(), 2);
        d.insert(Box::default(), 3);
        assert_eq!(d.get(b"a\0b"), Some(&1));
        assert_eq!(d.get(b"A\0b"), Some(&2));
        assert_eq!(d.get(b""), Some(&3));
        assert_eq!(d.get(b"a"), None);
    }

    #[test]
    fn dict_remove_returns_key_and_value() {
        let _g = policy_shared();
        let mut d = dict_with(100);
        let (k, v) = d.remove(&key(42)).unwrap();
        assert_eq!((&*k, v), (&*key(42), 42));
        assert_eq!(d.remove(&key(42)), None);
        assert_eq!(d.len(), 99);
        assert!(d.find(&key(42)).is_none());
        for i in (0..100).filter(|&i| i != 42) {
            assert_eq!(d.remove(&key(i)).map(|(_, v)| v), Some(i));
        }
        assert!(d.is_empty());
    }

    #[test]
    fn dict_find_and_remove_during_rehash_use_both_tables() {
        let _g = policy_shared();
        let mut d = dict_with(1000);
        finish_rehash(&mut d);
        assert!(d.expand(1 << 14));
        assert!(d.is_rehashing());
        // Every operation below does one step; keys are split across tables.
        for i in 0..1000 {
            assert_eq!(d.find(&key(i)).copied(), Some(i));
        }
        for i in (0..1000).step_by(2) {
            assert!(d.remove(&key(i)).is_some());
        }
        for i in 0..1000 {
            assert_eq!(d.get(&key(i)).is_some(), i % 2 == 1, "key {i}");
        }
    }

    #[test]
    fn dict_single_operation_moves_at_most_one_bucket() {
        let _g = policy_shared();
        let mut d = dict_with(50_000);
        finish_rehash(&mut d);
        // A big, sparse target: most table-0 buckets are still full, so
        // every step has real work to do.
        assert!(d.expand(1 << 20));
        let mut i = 50_000;
        while d.is_rehashing() {
            let (moved0, empty0) = test_counters::read();
            match i % 3 {
                0 => {
                    d.insert(key(i), i);
                }
                1 => {
                    d.find(&key(i - 1));
                }
                _ => {
                    d.random_entry_unfair();
                }
            }
            let (moved1, empty1) = test_counters::read();
            assert!(
                moved1 - moved0 <= 1,
                "one op moved {} buckets",
                moved1 - moved0
            );
            assert!(
                empty1 - empty0 <= 10,
                "one op visited {} empty",
                empty1 - empty0
            );
            i += 1;
        }
    }

    #[test]
    fn dict_rehash_visits_at_most_ten_empty_buckets_per_step() {
        let _g = policy_shared();
        let mut d = dict_with(2000);
        finish_rehash(&mut d);
        // Delete almost everything (no shrink: nobody calls resize_to_fit)
        // so table 0 is mostly empty buckets, then start a rehash.
        for i in 0..1990 {
            d.remove(&key(i));
        }
        assert!(d.resize_to_fit());
        let mut steps = 0;
        loop {
            let (_, empty0) = test_counters::read();
            let more = d.rehash(1);
            let (_, empty1) = test_counters::read();
            assert!(empty1 - empty0 <= 10);
            steps += 1;
            if !more {
                break;
            }
        }
        assert!(steps > 10, "an almost empty table takes many bounded steps");
        assert_eq!(d.table_sizes(), (16, 10, 0, 0));
    }

    #[test]
    fn dict_million_keys_found_during_and_after_rehash() {
        let _g = policy_shared();
        const N: usize = 1_000_000;
        let mut d = Dict::new();
        let mut checks_while_rehashing = 0;
        for i in 0..N {
            d.insert(key(i), i);
            // At a few points mid-rehash, every key inserted so far must be
            // visible through one table or the other.
            if d.is_rehashing() && i.is_power_of_two() && i >= 1024 {
                for j in 0..=i {
                    assert_eq!(d.get(&key(j)), Some(&j), "key {j} lost at {i}");
                }
                checks_while_rehashing += 1;
            }
        }
        assert!(checks_while_rehashing >= 5);
        assert_eq!(d.len(), N);
        for j in 0..N {
            assert_eq!(d.find(&key(j)).copied(), Some(j));
        }
        finish_rehash(&mut d);
        assert_eq!(d.table_sizes(), (1 << 20, N, 0, 0));
        for j in 0..N {
            assert_eq!(d.get(&key(j)), Some(&j));
        }
    }

    #[test]
    fn dict_rehash_milliseconds_finishes_a_rehash() {
        let _g = policy_shared();
        let mut d = dict_with(10_000);
        finish_rehash(&mut d);
        assert!(d.expand(1 << 16));
        let mut batches = 0;
        while d.is_rehashing() {
            let n = d.rehash_milliseconds(1);
            assert_eq!(n % 100, 0);
            batches += 1;
        }
        assert!(batches >= 1);
        assert_eq!(d.table_sizes(), (1 << 16, 10_000, 0, 0));
        d.pause_rehashing();
        assert!(d.expand(1 << 17));
        assert_eq!(d.rehash_milliseconds(1), 0, "paused");
        d.resume_rehashing();
        assert!(d.rehash_milliseconds(1000) > 0);
    }

    #[test]
    fn dict_paused_rehash_does_no_step() {
        let _g = policy_shared();
        let mut d = dict_with(100);
        finish_rehash(&mut d);
        assert!(d.expand(1024));
        d.pause_rehashing();
        let before = d.table_sizes();
        d.find(&key(1));
        d.remove(&key(2));
        let after = d.table_sizes();
        assert_eq!(before.1, after.1 + 1, "only the removal left table 0");
        d.resume_rehashing();
    }

    #[test]
    fn dict_expand_refuses_while_rehashing_or_too_small() {
        let _g = policy_shared();
        let mut d = dict_with(100);
        finish_rehash(&mut d);
        assert!(!d.expand(50), "smaller than the element count");
        assert!(!d.expand(128), "same size");
        assert!(d.expand(129));
        assert_eq!(d.table_sizes().2, 256);
        assert!(!d.expand(4096), "already rehashing");
    }

    #[test]
    fn dict_resize_to_fit_shrinks_after_deletes() {
        let _g = policy_shared();
        let mut d = dict_with(1000);
        finish_rehash(&mut d);
        assert!(!d.needs_resize());
        for i in 0..950 {
            d.remove(&key(i));
        }
        // 50 keys in 1024 buckets: 4% < HASHTABLE_MIN_FILL.
        assert!(d.needs_resize());
        assert!(d.resize_to_fit());
        finish_rehash(&mut d);
        assert_eq!(d.table_sizes(), (64, 50, 0, 0));
        assert!(!d.needs_resize());
        // The floor is DICT_HT_INITIAL_SIZE buckets.
        for i in 950..1000 {
            d.remove(&key(i));
        }
        assert!(d.resize_to_fit());
        finish_rehash(&mut d);
        assert_eq!(d.table_sizes(), (4, 0, 0, 0));
        assert!(!d.needs_resize(), "4 buckets is never too big");
    }

    #[test]
    fn dict_iter_visits_every_entry_once_even_while_rehashing() {
        let _g = policy_shared();
        let mut d = dict_with(5000);
        finish_rehash(&mut d);
        assert!(d.expand(1 << 15));
        for i in 0..100 {
            d.find(&key(i));
        }
        assert!(d.is_rehashing());
        let it = d.iter();
        assert_eq!(it.len(), 5000);
        let seen: HashSet<usize> = it.map(|(_, &v)| v).collect();
        assert_eq!(seen.len(), 5000);
        for (_, v) in d.iter_mut() {
            *v += 1;
        }
        assert_eq!(d.get(&key(7)), Some(&8));
        assert_eq!((&d).into_iter().count(), 5000);
    }

    #[test]
    fn dict_clear_frees_tables() {
        let _g = policy_shared();
        let mut d = dict_with(100);
        d.clear();
        assert_eq!(d.table_sizes(), (0, 0, 0, 0));
        assert!(!d.is_rehashing());
        d.insert(key(1), 1);
        assert_eq!(d.table_sizes(), (4, 1, 0, 0));
    }

    #[test]
    fn dict_drop_of_long_chain_does_not_recurse() {
        // Build a single chain of a million entries by hand (random hashing
        // would never produce one) and drop it on a small test-thread stack.
        let mut d: Dict<u64> = Dict::new();
        d.expand(4);
        let mut head: Bucket<u64> = None;
        for i in 0..1_000_000u64 {
            head = Some(Box::new(DictEntry {
                key: key(i as usize),
                val: i,
                next: head,
            }));
        }
        d.ht_table[0][0] = head;
        d.ht_used[0] = 1_000_000;
        drop(d);
    }

    #[test]
    fn scan_cursor_order_for_size_8() {
        let _g = policy_shared();
        let mut d = dict_with(5);
        finish_rehash(&mut d);
        assert_eq!(d.table_sizes().0, 8);
        let mut cursors = vec![0];
        let mut cursor = 0;
        loop {
            cursor = d.scan(cursor, |_, _| {});
            if cursor == 0 {
                break;
            }
            cursors.push(cursor);
        }
        assert_eq!(cursors, [0, 4, 2, 6, 1, 5, 3, 7]);
    }

    #[test]
    fn scan_full_returns_every_key_exactly_once_when_stable() {
        let _g = policy_shared();
        let mut d = dict_with(3000);
        finish_rehash(&mut d);
        let seen = scan_all(&d);
        assert_eq!(seen.len(), 3000);
        let unique: HashSet<_> = seen.into_iter().collect();
        assert_eq!(unique.len(), 3000);
    }

    /// Scans one call at a time, calling `between` after each call with the
    /// call number; returns the distinct keys seen.
    fn scan_with<F: FnMut(&mut Dict<usize>, usize)>(
        d: &mut Dict<usize>,
        mut between: F,
    ) -> HashSet<Sds> {
        let mut seen = HashSet::new();
        let mut cursor = 0;
        let mut call = 0;
        loop {
            cursor = d.scan(cursor, |k, _| {
                seen.insert(k.clone());
            });
            if cursor == 0 {
                return seen;
            }
            between(d, call);
            call += 1;
        }
    }

    #[test]
    fn scan_returns_every_stable_key_when_table_grows_between_calls() {
        let _g = policy_shared();
        let mut d = dict_with(200);
        finish_rehash(&mut d);
        // Keys 0..200 stay for the whole scan; more are added as it runs,
        // growing the table (with rehashes half done between calls).
        let mut next = 200;
        let seen = scan_with(&mut d, |d, call| {
            if call < 60 {
                for _ in 0..40 {
                    d.insert(key(next), next);
                    next += 1;
                }
            }
        });
        assert!(d.len() > 2000, "the table grew several times");
        for i in 0..200 {
            assert!(seen.contains(&key(i)), "stable key {i} missed");
        }
    }

    #[test]
    fn scan_returns_every_stable_key_when_table_shrinks_between_calls() {
        let _g = policy_shared();
        let mut d = dict_with(5000);
        finish_rehash(&mut d);
        // Keys 0..100 stay; the rest are deleted as the scan runs and the
        // table is shrunk (cron style) whenever it is under 10% full.
        let mut victim = 100;
        let seen = scan_with(&mut d, |d, _| {
            for _ in 0..200 {
                if victim < 5000 {
                    d.remove(&key(victim));
                    victim += 1;
                }
            }
            if d.needs_resize() {
                d.resize_to_fit();
            }
            d.rehash(3);
        });
        assert_eq!(d.len(), 100);
        for i in 0..100 {
            assert!(seen.contains(&key(i)), "stable key {i} missed");
        }
    }

    #[test]
    fn scan_during_rehash_visits_small_then_big_table() {
        let _g = policy_shared();
        // Growing: 8 -> 64 buckets, half moved.
        let mut d = dict_with(8);
        finish_rehash(&mut d);
        assert!(d.expand(64));
        d.rehash(1);
        assert!(d.is_rehashing());
        let seen: HashSet<Sds> = scan_all(&d).into_iter().collect();
        assert_eq!(seen.len(), 8);
        // Shrinking: 1024 -> 16 buckets, part moved.
        let mut d = dict_with(1000);
        finish_rehash(&mut d);
        for i in 10..1000 {
            d.remove(&key(i));
        }
        assert!(d.resize_to_fit());
        d.rehash(2);
        assert!(d.is_rehashing());
        let seen: HashSet<Sds> = scan_all(&d).into_iter().collect();
        assert_eq!(seen.len(), 10);
        // With rehashing in progress a call covers one small-table bucket:
        // a 16-bucket scan takes exactly 16 calls whatever the big table.
        let mut calls = 0;
        let mut cursor = 0;
        loop {
            cursor = d.scan(cursor, |_, _| {});
            calls += 1;
            if cursor == 0 {
                break;
            }
        }
        assert_eq!(calls, 16);
    }

    #[test]
    fn scan_step_while_growing_emits_small_bucket_and_every_expansion() {
        let _g = policy_shared();
        // 64 -> 256 buckets (each small bucket has 4 expansions), a third
        // of the small table moved: both tables hold entries.
        let mut d = dict_with(60);
        finish_rehash(&mut d);
        assert!(d.expand(256));
        d.rehash(20);
        assert!(d.is_rehashing());
        let (size0, used0, size1, used1) = d.table_sizes();
        assert!(used0 > 0 && used1 > 0, "both tables in use");
        let (small, big) = if size0 < size1 { (0, 1) } else { (1, 0) };
        let (m0, m1) = (size0.min(size1) - 1, size0.max(size1) - 1);
        // What dictScan emits for cursor v: bucket v & m0 of the small
        // table, then buckets (v & m0) + k * (m0 + 1) of the big one.
        let expected = |v: u64| -> HashSet<Sds> {
            let b = (v as usize) & m0;
            let mut e: HashSet<Sds> = d.bucket_iter(small, b).map(|(k, _)| k.clone()).collect();
            for k in 0..=(m1 / (m0 + 1)) {
                e.extend(d.bucket_iter(big, b + k * (m0 + 1)).map(|(k, _)| k.clone()));
            }
            e
        };
        let mut cursor = 0;
        let mut steps = 0;
        let mut all = HashSet::new();
        loop {
            let want = expected(cursor);
            let mut got = HashSet::new();
            let next = d.scan(cursor, |k, _| {
                got.insert(k.clone());
            });
            assert_eq!(got, want, "cursor {cursor}");
            all.extend(got);
            steps += 1;
            cursor = next;
            if cursor == 0 {
                break;
            }
        }
        // One step per small-table bucket, every entry seen.
        assert_eq!(steps, m0 + 1);
        assert_eq!(all.len(), 60);
    }

    #[test]
    fn scan_empty_dict_ends_at_once_whatever_the_cursor() {
        let d: Dict<u8> = Dict::new();
        assert_eq!(d.scan(12345, |_, _| {}), 0);
    }

    #[test]
    fn random_entry_returns_members_and_covers_the_dict() {
        let _g = policy_shared();
        let mut d: Dict<usize> = Dict::new();
        assert!(d.random_entry().is_none());
        assert!(d.random_entry_unfair().is_none());
        d.insert(key(7), 7);
        assert_eq!(d.random_entry().map(|(_, v)| *v), Some(7));
        let mut d = dict_with(20);
        let mut seen = HashSet::new();
        for _ in 0..2000 {
            seen.insert(*d.random_entry().unwrap().1);
            seen.insert(*d.random_entry_unfair().unwrap().1);
        }
        assert_eq!(seen.len(), 20);
    }

    #[test]
    fn random_entry_works_during_rehash() {
        let _g = policy_shared();
        let mut d = dict_with(1000);
        finish_rehash(&mut d);
        assert!(d.expand(1 << 16));
        d.pause_rehashing(); // keep both tables populated
        for _ in 0..500 {
            let (k, v) = d.random_entry().unwrap();
            assert_eq!(&**k, &*key(*v));
            let (k, v) = d.random_entry_unfair().unwrap();
            assert_eq!(&**k, &*key(*v));
        }
        d.resume_rehashing();
    }

    #[test]
    fn some_entries_returns_at_most_count_distinct_positions() {
        let _g = policy_shared();
        let mut d = dict_with(100);
        let got = d.some_entries(10);
        assert!(!got.is_empty() && got.len() <= 10);
        for (k, v) in &got {
            assert_eq!(&***k, &*key(**v));
        }
        assert!(d.some_entries(1000).len() <= 100);
        assert!(Dict::<u8>::new().some_entries(5).is_empty());
    }

    #[test]
    fn stats_match_redis_text() {
        let _g = policy_shared();
        let d: Dict<u8> = Dict::new();
        assert_eq!(
            d.stats(true),
            "Hash table 0 stats (main hash table):\n\
             No stats available for empty dictionaries\n"
        );
        let mut d = Dict::new();
        d.insert(key(1), 1);
        assert_eq!(
            d.stats(true),
            "Hash table 0 stats (main hash table):\n \
             table size: 4\n \
             number of elements: 1\n \
             different slots: 1\n \
             max chain length: 1\n \
             avg chain length (counted): 1.00\n \
             avg chain length (computed): 1.00\n \
             Chain length distribution:\n   \
             0: 3 (75.00%)\n   \
             1: 1 (25.00%)\n"
        );
        assert_eq!(
            d.stats(false),
            "Hash table 0 stats (main hash table):\n table size: 4\n number of elements: 1\n"
        );
        // While rehashing, the target table follows.
        for i in 2..=5 {
            d.insert(key(i), i);
        }
        assert!(d.is_rehashing());
        let text = d.stats(true);
        assert!(text.contains("Hash table 1 stats (rehashing target):\n table size: 8\n"));
    }

    #[test]
    fn stats_percentages_round_like_printf() {
        // 1 empty bucket in 32 is 3.125%: printf's %.02f gives 3.12. The
        // layout is built by hand; stats never rehash, so hashes don't matter.
        let mut d: Dict<usize> = Dict::new();
        d.expand(32);
        for i in 0..31 {
            d.ht_table[0][i] = Some(Box::new(DictEntry {
                key: key(i),
                val: i,
                next: None,
            }));
        }
        d.ht_used[0] = 31;
        let text = d.stats(true);
        assert!(text.contains(" avg chain length (counted): 1.00\n"));
        assert!(
            text.contains("   0: 1 (3.12%)\n   1: 31 (96.88%)\n"),
            "{text}"
        );
    }

    #[test]
    fn entry_is_four_words_with_pointer_sized_value() {
        assert_eq!(Dict::<Box<u8>>::entry_size(), 32);
        assert_eq!(mem::size_of::<Bucket<Box<u8>>>(), 8);
    }
}
