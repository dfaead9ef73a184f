//! The stream type (Redis's stream.h and the low-level half of t_stream.c):
//! a radix tree of listpacks, plus consumer groups.
//!
//! A stream is an append-only log of entries, each an ID (`<ms>-<seq>`,
//! 128 bits) and a list of field/value pairs. Redis stores it as a rax
//! keyed by the big-endian ID of each node's first ("master") entry; each
//! value is one listpack holding up to `stream-node-max-entries` entries
//! (100) or `stream-node-max-bytes` bytes (4 KB). A node's listpack is laid
//! out exactly as Redis lays it out, because RDB files store it verbatim:
//!
//! ```text
//! master entry: count | deleted | num-fields | field_1 ... field_N | 0
//! each entry:   flags | ms-diff | seq-diff | [num-fields | field_1 ...]
//!               value_1 ... value_N | lp-count
//! ```
//!
//! * `count`/`deleted`: live and tombstoned entries in this node;
//! * the master fields are the fields of the node's first entry: a later
//!   entry with the same fields sets STREAM_ITEM_FLAG_SAMEFIELDS and stores
//!   only its values (that is why a stream of uniform records is small);
//! * IDs are deltas against the node key, so they fit in small integers;
//! * `lp-count` is the number of listpack elements of the entry, so the
//!   entries can be walked backwards (XREVRANGE);
//! * XDEL only sets STREAM_ITEM_FLAG_DELETED (a tombstone) and fixes the
//!   counters; a node goes away when its last live entry does.
//!
//! Consumer groups keep, per group, the last delivered ID, the read counter
//! behind 7.0's lag, a pending entries list (PEL: a rax of NACKs keyed by
//! ID) and the consumers, each with its own PEL of the same IDs. Redis
//! shares one NACK between the two PELs by pointer; here the group PEL owns
//! the NACK and names its consumer (a shared `Arc<[u8]>`), and a consumer's
//! PEL holds the IDs only.
//!
//! Allocation follows Redis too: a new node is pre-allocated with 4 KB
//! (lpNew(STREAM_LISTPACK_MAX_PRE_ALLOCATE)), grows to exactly the bytes
//! needed when it overflows, shrinks when an edit makes it smaller, and is
//! shrunk to fit when the next node opens. MEMORY USAGE reports those
//! allocations, so they are modelled with the listpack's capacity.
//!
//! Nothing here reads the clock: times come in as parameters.

use std::sync::Arc;

use crate::listpack::{self, Listpack, LpEntry};
use crate::rax::{Rax, RaxIter};

/// STREAM_ITEM_FLAG_DELETED: the entry is a tombstone (XDEL, XTRIM).
pub const STREAM_ITEM_FLAG_DELETED: i64 = 1 << 0;
/// STREAM_ITEM_FLAG_SAMEFIELDS: the entry has the master entry's fields
/// and stores only its values.
pub const STREAM_ITEM_FLAG_SAMEFIELDS: i64 = 1 << 1;

/// STREAM_LISTPACK_MAX_PRE_ALLOCATE: a new node is allocated with this many
/// bytes (or stream-node-max-bytes when smaller), so the next XADDs do not
/// each reallocate.
pub const STREAM_LISTPACK_MAX_PRE_ALLOCATE: usize = 4096;

/// STREAM_LISTPACK_MAX_SIZE: no node grows past 1 GB whatever the config
/// says (a listpack's total length is a 32-bit field).
pub const STREAM_LISTPACK_MAX_SIZE: usize = 1 << 30;

/// SCG_INVALID_ENTRIES_READ: a group whose read counter is unknown.
pub const SCG_INVALID_ENTRIES_READ: i64 = -1;

// ---------------------------------------------------------------- IDs

/// streamID: milliseconds and a sequence number. The derived order is
/// streamCompareID's (ms first, then seq).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StreamID {
    pub ms: u64,
    pub seq: u64,
}

impl StreamID {
    pub const MIN: StreamID = StreamID { ms: 0, seq: 0 };
    pub const MAX: StreamID = StreamID {
        ms: u64::MAX,
        seq: u64::MAX,
    };

    pub fn new(ms: u64, seq: u64) -> StreamID {
        StreamID { ms, seq }
    }

    /// streamEncodeID: 128-bit big endian, so keys sort as IDs do.
    pub fn encode(&self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&self.ms.to_be_bytes());
        b[8..].copy_from_slice(&self.seq.to_be_bytes());
        b
    }

    /// streamDecodeID of a 16-byte key (None for any other length).
    pub fn decode(b: &[u8]) -> Option<StreamID> {
        let b: &[u8; 16] = b.try_into().ok()?;
        Some(StreamID {
            ms: u64::from_be_bytes(b[..8].try_into().ok()?),
            seq: u64::from_be_bytes(b[8..].try_into().ok()?),
        })
    }

    /// streamIncrID: the successor; false (and 0-0) past the last ID.
    pub fn incr(&mut self) -> bool {
        if self.seq == u64::MAX {
            if self.ms == u64::MAX {
                *self = StreamID::MIN;
                return false;
            }
            self.ms += 1;
            self.seq = 0;
        } else {
            self.seq += 1;
        }
        true
    }

    /// streamDecrID: the predecessor; false (and the max ID) before 0-0.
    pub fn decr(&mut self) -> bool {
        if self.seq == 0 {
            if self.ms == 0 {
                *self = StreamID::MAX;
                return false;
            }
            self.ms -= 1;
            self.seq = u64::MAX;
        } else {
            self.seq -= 1;
        }
        true
    }

    /// streamIDEqZero.
    pub fn is_zero(&self) -> bool {
        self.ms == 0 && self.seq == 0
    }
}

impl std::fmt::Display for StreamID {
    /// createStreamIDString: `<ms>-<seq>`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.ms, self.seq)
    }
}

// ------------------------------------------------------- the structures

/// `stream`: the tree of nodes and the bookkeeping around it.
pub struct Stream {
    /// Master entry ID (16 bytes, big endian) -> node listpack.
    pub rax: Rax<Listpack>,
    /// Live entries (tombstones not counted).
    pub length: u64,
    /// The greatest ID ever added (or set by XSETID): new IDs must be above.
    pub last_id: StreamID,
    /// The first live entry, 0-0 when empty.
    pub first_id: StreamID,
    /// The greatest ID ever deleted (7.0, for the lag).
    pub max_deleted_entry_id: StreamID,
    /// All-time count of added entries (7.0).
    pub entries_added: u64,
    /// Group name -> group, created with the first group.
    pub cgroups: Option<Rax<StreamCG>>,
}

/// `streamCG`: a consumer group.
pub struct StreamCG {
    /// The last ID delivered to any consumer: `>` reads after it.
    pub last_id: StreamID,
    /// Logical reads counter (SCG_INVALID_ENTRIES_READ when unknown).
    pub entries_read: i64,
    /// ID -> NACK for every delivered, unacknowledged entry.
    pub pel: Rax<StreamNack>,
    /// Name -> consumer.
    pub consumers: Rax<StreamConsumer>,
}

/// `streamConsumer`.
pub struct StreamConsumer {
    /// Last time (unix ms) the consumer was seen (read or claimed).
    pub seen_time: i64,
    /// The name, shared with the NACKs this consumer owns.
    pub name: Arc<[u8]>,
    /// The IDs of the group PEL entries this consumer owns.
    pub pel: Rax<()>,
}

/// `streamNACK`: a delivered, not yet acknowledged entry.
#[derive(Debug, Clone)]
pub struct StreamNack {
    /// Last delivery time, unix ms.
    pub delivery_time: i64,
    /// Number of deliveries.
    pub delivery_count: u64,
    /// The owner. None only for a moment: while XCLAIM FORCE creates the
    /// NACK, or while a dump is being loaded before its consumers.
    pub consumer: Option<Arc<[u8]>>,
}

/// The node size limits from the config (stream-node-max-bytes,
/// stream-node-max-entries; 0 = no limit).
#[derive(Debug, Clone, Copy)]
pub struct NodeLimits {
    pub max_bytes: i64,
    pub max_entries: i64,
}

impl Default for NodeLimits {
    /// Redis's defaults: 4096 bytes, 100 entries.
    fn default() -> Self {
        NodeLimits {
            max_bytes: 4096,
            max_entries: 100,
        }
    }
}

/// Why streamAppendItem refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppendError {
    /// EDOM: the ID is not above the stream's last ID.
    IdTooSmall,
    /// ERANGE: the fields and values together pass 1 GB.
    TooLarge,
    /// The explicit `<ms>-*` form when `<ms>` already used the last
    /// sequence number (Redis returns C_ERR without setting errno).
    SequenceExhausted,
}

/// The trimming strategy of XADD/XTRIM (streamAddTrimArgs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrimStrategy {
    None,
    MaxLen(u64),
    MinId(StreamID),
}

/// streamAddTrimArgs, the trimming part.
#[derive(Debug, Clone, Copy)]
pub struct TrimArgs {
    pub strategy: TrimStrategy,
    /// `~`: only whole nodes are removed.
    pub approx: bool,
    /// At most this many entries are removed (0 = no limit).
    pub limit: i64,
}

// ------------------------------------------------ listpack helpers

/// lpGetInteger: an integer element (stream listpacks only hold integers
/// in these positions; a string that parses is accepted as Redis does).
fn lp_int(lp: &Listpack, p: usize) -> i64 {
    match lp.get(p) {
        LpEntry::Int(v) => v,
        LpEntry::Str(s) => crate::util::string2ll(s).unwrap_or(0),
    }
}

/// lpNext that carries "no element" along (Redis's NULL pointer).
fn nx(lp: &Listpack, p: Option<usize>) -> Option<usize> {
    lp.next(p?)
}

/// lpPrev, likewise.
fn pv(lp: &Listpack, p: Option<usize>) -> Option<usize> {
    lp.prev(p?)
}

/// lpReplaceInteger with lpInsert's allocation rule: grow to exactly the
/// new size when it does not fit, and reallocate down when it shrank.
fn lp_replace_int(lp: &mut Listpack, p: usize, v: i64) {
    let old = lp.entry_size(p);
    let new = listpack::int_entry_len(v);
    if new > old {
        lp.reserve_exact_total(lp.bytes() + new - old);
    }
    lp.replace_int(p, v);
    if new < old {
        lp.shrink_to_fit();
    }
}

/// The master entry of a node: (live count, deleted count, offset of
/// num-fields).
fn master_counts(lp: &Listpack) -> (i64, i64) {
    let first = lp.first().unwrap_or(listpack::LP_HDR_SIZE);
    let count = lp_int(lp, first);
    let deleted = lp.next(first).map_or(0, |p| lp_int(lp, p));
    (count, deleted)
}

/// The offset of the first field of the master entry and the number of
/// master fields.
fn master_fields(lp: &Listpack) -> (Option<usize>, u64) {
    let p = nx(lp, nx(lp, lp.first())); // num-fields
    let count = p.map_or(0, |p| lp_int(lp, p)) as u64;
    (nx(lp, p), count)
}

/// lpGetEdgeStreamID: the first or last entry ID recorded in a node
/// (tombstones included); None when the node holds no entries.
pub fn lp_get_edge_stream_id(lp: &Listpack, first: bool, master_id: StreamID) -> Option<StreamID> {
    let mut p = if first {
        let (mut p, count) = master_fields(lp);
        for _ in 0..count {
            p = nx(lp, p);
        }
        // Skip the master entry's zero terminator.
        nx(lp, p)?
    } else {
        let mut p = lp.last()?;
        let lp_count = lp_int(lp, p);
        if lp_count == 0 {
            return None; // only the master entry
        }
        for _ in 0..lp_count {
            p = lp.prev(p)?;
        }
        p
    };
    // p is at the flags: the two deltas follow.
    p = lp.next(p)?;
    let ms = lp_int(lp, p);
    p = lp.next(p)?;
    let seq = lp_int(lp, p);
    Some(StreamID {
        ms: master_id.ms.wrapping_add(ms as u64),
        seq: master_id.seq.wrapping_add(seq as u64),
    })
}

// ------------------------------------------------------- the stream

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream")
            .field("length", &self.length)
            .field("nodes", &self.rax.len())
            .field("last_id", &self.last_id)
            .field("first_id", &self.first_id)
            .field("groups", &self.num_groups())
            .finish()
    }
}

impl Default for Stream {
    fn default() -> Self {
        Stream::new()
    }
}

impl Stream {
    /// streamNew.
    pub fn new() -> Stream {
        Stream {
            rax: Rax::new(),
            length: 0,
            last_id: StreamID::MIN,
            first_id: StreamID::MIN,
            max_deleted_entry_id: StreamID::MIN,
            entries_added: 0,
            cgroups: None,
        }
    }

    /// streamAppendItem: add an entry with the field/value pairs in
    /// `argv` (field, value, field, value...). `use_id` is an explicit ID;
    /// with `seq_given` false only its ms part was given (`<ms>-*`).
    /// `now_ms` feeds the automatic ID (streamNextID).
    pub fn append_item<B: AsRef<[u8]>>(
        &mut self,
        argv: &[B],
        use_id: Option<StreamID>,
        seq_given: bool,
        now_ms: u64,
        limits: NodeLimits,
    ) -> Result<StreamID, AppendError> {
        let numfields = argv.len() / 2;
        // Generate the new ID.
        let id = match use_id {
            Some(u) if seq_given => u,
            Some(u) => {
                if self.last_id.ms == u.ms {
                    if self.last_id.seq == u64::MAX {
                        return Err(AppendError::SequenceExhausted);
                    }
                    StreamID::new(u.ms, self.last_id.seq + 1)
                } else {
                    StreamID::new(u.ms, 0)
                }
            }
            None if now_ms > self.last_id.ms => StreamID::new(now_ms, 0),
            None => {
                // The clock did not move (or went back): next sequence.
                let mut id = self.last_id;
                id.incr();
                id
            }
        };
        if id <= self.last_id {
            return Err(AppendError::IdTooSmall);
        }
        let totelelen: usize = argv.iter().map(|a| a.as_ref().len()).sum();
        if totelelen > STREAM_LISTPACK_MAX_SIZE {
            return Err(AppendError::TooLarge);
        }

        // Can the tail node take one more entry?
        let mut tail_key = Vec::new();
        let mut tail = self.rax.last(&mut tail_key).is_some();
        if tail {
            let lp = self.rax.find_mut(&tail_key).expect("tail node");
            let node_max_bytes = match limits.max_bytes {
                b if b <= 0 || b as u64 > STREAM_LISTPACK_MAX_SIZE as u64 => {
                    STREAM_LISTPACK_MAX_SIZE
                }
                b => b as usize,
            };
            let mut new_node = lp.bytes() + totelelen >= node_max_bytes;
            if !new_node && limits.max_entries != 0 {
                // Live and deleted entries both count.
                let (count, deleted) = master_counts(lp);
                new_node = count + deleted >= limits.max_entries;
            }
            if new_node {
                // The full node gives back its pre-allocated space.
                lp.shrink_to_fit();
                tail = false;
            }
        }

        let mut flags = 0i64;
        let master_id;
        let lp: &mut Listpack = if !tail {
            // A new node: its master entry takes this entry's fields.
            master_id = id;
            let prealloc = match limits.max_bytes {
                b if b > 0 && (b as usize) < STREAM_LISTPACK_MAX_PRE_ALLOCATE => b as usize,
                _ => STREAM_LISTPACK_MAX_PRE_ALLOCATE,
            };
            let mut lp = Listpack::with_capacity(prealloc);
            let mut total = lp.bytes()
                + listpack::int_entry_len(1)
                + listpack::int_entry_len(0)
                + listpack::int_entry_len(numfields as i64)
                + listpack::int_entry_len(0);
            for f in argv.iter().step_by(2) {
                total += listpack::entry_len(f.as_ref());
            }
            lp.reserve_exact_total(total);
            lp.append_int(1); // one item, the one we are adding
            lp.append_int(0); // zero deleted so far
            lp.append_int(numfields as i64);
            for f in argv.iter().step_by(2) {
                lp.append(f.as_ref());
            }
            lp.append_int(0); // master entry terminator
            let node_key = id.encode();
            self.rax.insert(&node_key, lp);
            flags |= STREAM_ITEM_FLAG_SAMEFIELDS;
            self.rax.find_mut(&node_key).expect("new node")
        } else {
            master_id = StreamID::decode(&tail_key).expect("16-byte node key");
            let lp = self.rax.find_mut(&tail_key).expect("tail node");
            let first = lp.first().expect("master entry");
            let count = lp_int(lp, first);
            lp_replace_int(lp, first, count + 1);
            // Same fields as the master entry?
            let (mut p, master_count) = master_fields(lp);
            if numfields as u64 == master_count {
                let mut same = true;
                for f in argv.iter().step_by(2) {
                    let Some(q) = p else {
                        same = false;
                        break;
                    };
                    if !lp.get(q).eq_bytes(f.as_ref()) {
                        same = false;
                        break;
                    }
                    p = lp.next(q);
                }
                if same {
                    flags |= STREAM_ITEM_FLAG_SAMEFIELDS;
                }
            }
            lp
        };

        // The entry: flags, ID deltas, [num-fields, fields], values, lp-count.
        let same = flags & STREAM_ITEM_FLAG_SAMEFIELDS != 0;
        let ms_diff = id.ms.wrapping_sub(master_id.ms) as i64;
        let seq_diff = id.seq.wrapping_sub(master_id.seq) as i64;
        let mut lp_count = numfields as i64 + 3;
        if !same {
            lp_count += numfields as i64 + 1;
        }
        let mut total = lp.bytes()
            + listpack::int_entry_len(flags)
            + listpack::int_entry_len(ms_diff)
            + listpack::int_entry_len(seq_diff)
            + listpack::int_entry_len(lp_count);
        if !same {
            total += listpack::int_entry_len(numfields as i64);
        }
        for (i, a) in argv.iter().enumerate() {
            if i % 2 == 1 || !same {
                total += listpack::entry_len(a.as_ref());
            }
        }
        lp.reserve_exact_total(total);
        lp.append_int(flags);
        lp.append_int(ms_diff);
        lp.append_int(seq_diff);
        if !same {
            lp.append_int(numfields as i64);
        }
        for pair in argv.chunks_exact(2) {
            if !same {
                lp.append(pair[0].as_ref());
            }
            lp.append(pair[1].as_ref());
        }
        lp.append_int(lp_count);

        self.length += 1;
        self.entries_added += 1;
        self.last_id = id;
        if self.length == 1 {
            self.first_id = id;
        }
        Ok(id)
    }

    /// An iterator over entries from `start` to `end` (inclusive; None for
    /// the stream's ends), backwards when `rev` (streamIteratorStart).
    pub fn iter(
        &self,
        start: Option<StreamID>,
        end: Option<StreamID>,
        rev: bool,
    ) -> StreamIterator<'_> {
        StreamIterator::new(self, start, end, rev)
    }

    /// streamGetEdgeID: the first or last ID, tombstones included unless
    /// `skip_tombstones`. An empty stream answers the max ID for the first
    /// and 0-0 for the last.
    pub fn get_edge_id(&self, first: bool, skip_tombstones: bool) -> StreamID {
        let mut si = self.iter(None, None, !first);
        si.skip_tombstones = skip_tombstones;
        match si.next_id() {
            Some((id, _)) => id,
            None if first => StreamID::MAX,
            None => StreamID::MIN,
        }
    }

    /// streamLastValidID: the last live entry (0-0 when empty).
    pub fn last_valid_id(&self) -> StreamID {
        self.iter(None, None, true)
            .next_id()
            .map_or(StreamID::MIN, |(id, _)| id)
    }

    /// streamEntryExists: is `id` a live entry?
    pub fn entry_exists(&self, id: StreamID) -> bool {
        self.iter(Some(id), Some(id), false).next_id().is_some()
    }

    /// streamDeleteItem: tombstone `id` (streamIteratorRemoveEntry).
    /// Returns false when it is not a live entry.
    pub fn delete_item(&mut self, id: StreamID) -> bool {
        let (node_key, flags_at) = {
            let mut si = self.iter(Some(id), Some(id), false);
            if si.next_id().is_none() {
                return false;
            }
            (si.node_key(), si.lp_flags)
        };
        let lp = self.rax.find_mut(&node_key).expect("iterated node");
        let flags = lp_int(lp, flags_at) | STREAM_ITEM_FLAG_DELETED;
        lp_replace_int(lp, flags_at, flags);
        let first = lp.first().expect("master entry");
        let count = lp_int(lp, first);
        if count == 1 {
            // The node's last live entry: the whole node goes.
            self.rax.remove(&node_key);
        } else {
            lp_replace_int(lp, first, count - 1);
            let p = lp.next(first).expect("deleted count");
            let deleted = lp_int(lp, p);
            lp_replace_int(lp, p, deleted + 1);
        }
        self.length -= 1;
        true
    }

    /// streamTrim: remove entries from the head by MAXLEN or MINID;
    /// returns how many. `approx` removes whole nodes only; `limit` caps
    /// the entries removed (the latency guard of `~`).
    pub fn trim(&mut self, args: &TrimArgs) -> i64 {
        if args.strategy == TrimStrategy::None {
            return 0;
        }
        let mut deleted: i64 = 0;
        let mut key = Vec::new();
        let mut have = self.rax.first(&mut key).is_some();
        while have {
            if let TrimStrategy::MaxLen(maxlen) = args.strategy {
                if self.length <= maxlen {
                    break;
                }
            }
            let lp = self.rax.find(&key).expect("seeked node");
            let entries = master_counts(lp).0;
            // The amount of work we may do.
            if args.limit != 0 && deleted + entries > args.limit {
                break;
            }
            let master_id = StreamID::decode(&key).unwrap_or_default();
            let remove_node = match args.strategy {
                TrimStrategy::MaxLen(maxlen) => self.length - entries as u64 >= maxlen,
                TrimStrategy::MinId(minid) => {
                    // The whole node goes if its last ID is below `minid`.
                    lp_get_edge_stream_id(lp, false, master_id).is_some_and(|last| last < minid)
                }
                TrimStrategy::None => false,
            };
            if remove_node {
                self.rax.remove(&key);
                self.length -= entries as u64;
                deleted += entries;
                let k = key.clone();
                have = self.rax.seek_ge(&k, &mut key).is_some();
                continue;
            }
            // A node we cannot remove whole: with `~` that is where we stop.
            if args.approx {
                break;
            }
            deleted += self.trim_inside_node(&key, master_id, args.strategy);
            break;
        }
        if self.length == 0 {
            self.first_id = StreamID::MIN;
        } else if deleted != 0 {
            self.first_id = self.get_edge_id(true, true);
        }
        deleted
    }

    /// The exact part of streamTrim: tombstone the entries of one node from
    /// its start until the stream is short enough or the IDs reach MINID.
    fn trim_inside_node(&mut self, key: &[u8], master_id: StreamID, strategy: TrimStrategy) -> i64 {
        let mut length = self.length;
        let lp = self.rax.find_mut(key).expect("node");
        let (entries, marked) = master_counts(lp);
        let (mut p, master_count) = master_fields(lp);
        for _ in 0..master_count {
            p = nx(lp, p);
        }
        p = nx(lp, p); // skip the master entry terminator
        let mut deleted_from_lp = 0i64;
        while let Some(flags_at) = p {
            let flags = lp_int(lp, flags_at);
            let mut q = lp.next(flags_at);
            let ms_delta = q.map_or(0, |q| lp_int(lp, q));
            q = nx(lp, q);
            let seq_delta = q.map_or(0, |q| lp_int(lp, q));
            q = nx(lp, q);
            let stop = match strategy {
                TrimStrategy::MaxLen(maxlen) => length <= maxlen,
                TrimStrategy::MinId(minid) => {
                    let cur = StreamID::new(
                        master_id.ms.wrapping_add(ms_delta as u64),
                        master_id.seq.wrapping_add(seq_delta as u64),
                    );
                    cur >= minid
                }
                TrimStrategy::None => true,
            };
            if stop {
                break;
            }
            let to_skip = if flags & STREAM_ITEM_FLAG_SAMEFIELDS != 0 {
                master_count as i64
            } else {
                let n = q.map_or(0, |q| lp_int(lp, q));
                q = nx(lp, q);
                n * 2
            };
            for _ in 0..to_skip {
                q = nx(lp, q);
            }
            q = nx(lp, q); // skip lp-count
            if flags & STREAM_ITEM_FLAG_DELETED == 0 {
                // Same-size replace (bit 0 of a small integer): `q` stays valid.
                lp_replace_int(lp, flags_at, flags | STREAM_ITEM_FLAG_DELETED);
                deleted_from_lp += 1;
                length -= 1;
            }
            p = q;
        }
        // The node's counters.
        let first = lp.first().expect("master entry");
        lp_replace_int(lp, first, entries - deleted_from_lp);
        let d = lp.next(first).expect("deleted count");
        lp_replace_int(lp, d, marked + deleted_from_lp);
        self.length = length;
        deleted_from_lp
    }

    /// streamRangeHasTombstones: may [start, end] hold a tombstone? Only
    /// the greatest deleted ID is known, so this answers for it.
    pub fn range_has_tombstones(&self, start: Option<StreamID>, end: Option<StreamID>) -> bool {
        if self.length == 0 || self.max_deleted_entry_id.is_zero() {
            return false;
        }
        if self.first_id > self.max_deleted_entry_id {
            return false; // the latest tombstone is before the first entry
        }
        let start = start.unwrap_or(StreamID::MIN);
        let end = end.unwrap_or(StreamID::MAX);
        start <= self.max_deleted_entry_id && self.max_deleted_entry_id <= end
    }

    /// streamEstimateDistanceFromFirstEverEntry: the logical read counter
    /// of `id` when it can be known, else SCG_INVALID_ENTRIES_READ.
    pub fn estimate_distance_from_first_ever_entry(&self, id: StreamID) -> i64 {
        if self.entries_added == 0 {
            return 0; // never used: every counter is 0
        }
        if self.length == 0 && id <= self.last_id {
            return self.entries_added as i64;
        }
        if id == self.last_id {
            return self.entries_added as i64;
        } else if id > self.last_id {
            return SCG_INVALID_ENTRIES_READ; // a future ID
        }
        if self.max_deleted_entry_id.is_zero() || self.max_deleted_entry_id < self.first_id {
            // No fragmentation ahead.
            if id < self.first_id {
                return (self.entries_added - self.length) as i64;
            } else if id == self.first_id {
                return (self.entries_added - self.length + 1) as i64;
            }
        }
        SCG_INVALID_ENTRIES_READ
    }

    /// streamReplyWithCGLag's computation: the number of entries the group
    /// has not read yet, None when it cannot be known (XDELs ahead).
    pub fn cg_lag(&self, cg: &StreamCG) -> Option<i64> {
        if self.entries_added == 0 {
            return Some(0);
        }
        if cg.entries_read != SCG_INVALID_ENTRIES_READ
            && !self.range_has_tombstones(Some(cg.last_id), None)
        {
            return Some(self.entries_added as i64 - cg.entries_read);
        }
        let entries_read = self.estimate_distance_from_first_ever_entry(cg.last_id);
        (entries_read != SCG_INVALID_ENTRIES_READ).then(|| self.entries_added as i64 - entries_read)
    }

    /// The read counter after a group delivers `id` (the group part of
    /// streamReplyWithRange): incremented while it is valid and no
    /// tombstone lies ahead, else re-estimated.
    pub fn cg_entries_read_after(&self, entries_read: i64, id: StreamID) -> i64 {
        if entries_read != SCG_INVALID_ENTRIES_READ && !self.range_has_tombstones(Some(id), None) {
            entries_read + 1
        } else if self.entries_added != 0 {
            self.estimate_distance_from_first_ever_entry(id)
        } else {
            entries_read
        }
    }

    // ---- consumer groups (streamCreateCG, streamLookupCG ...) ----

    /// streamCreateCG: None when a group of that name exists.
    pub fn create_cg(
        &mut self,
        name: &[u8],
        id: StreamID,
        entries_read: i64,
    ) -> Option<&mut StreamCG> {
        let groups = self.cgroups.get_or_insert_with(Rax::new);
        let cg = StreamCG {
            last_id: id,
            entries_read,
            pel: Rax::new(),
            consumers: Rax::new(),
        };
        groups.try_insert(name, cg).ok()?;
        groups.find_mut(name)
    }

    /// streamLookupCG.
    pub fn lookup_cg(&self, name: &[u8]) -> Option<&StreamCG> {
        self.cgroups.as_ref()?.find(name)
    }

    pub fn lookup_cg_mut(&mut self, name: &[u8]) -> Option<&mut StreamCG> {
        self.cgroups.as_mut()?.find_mut(name)
    }

    /// XGROUP DESTROY's removal (streamFreeCG).
    pub fn destroy_cg(&mut self, name: &[u8]) -> bool {
        self.cgroups.as_mut().and_then(|g| g.remove(name)).is_some()
    }

    /// raxSize(s->cgroups), 0 before the first group.
    pub fn num_groups(&self) -> u64 {
        self.cgroups.as_ref().map_or(0, |g| g.len())
    }

    /// The groups in name order.
    pub fn groups(&self) -> Option<RaxIter<'_, StreamCG>> {
        self.cgroups.as_ref().map(|g| g.iter())
    }

    // ---- for RDB and DUMP: the nodes as they are stored ----

    /// Every node, in order: (16-byte master ID, listpack). The listpack
    /// bytes (`as_bytes`) are what RDB_TYPE_STREAM_LISTPACKS writes.
    pub fn nodes(&self) -> RaxIter<'_, Listpack> {
        self.rax.iter()
    }

    /// Add a loaded node (rdbLoadObject's raxTryInsert). Refuses a key that
    /// is not 16 bytes, an empty node, or a duplicate. The caller then sets
    /// `length`, `last_id`, `first_id`, `max_deleted_entry_id` and
    /// `entries_added` from the payload.
    pub fn insert_node(&mut self, master_key: &[u8], lp: Listpack) -> Result<(), Listpack> {
        if master_key.len() != 16 || lp.first().is_none() {
            return Err(lp);
        }
        self.rax.try_insert(master_key, lp)
    }

    /// streamDup (COPY): nodes copied byte for byte into exact-size
    /// allocations and re-inserted in order, groups rebuilt the same way,
    /// so the copy's trees have the shape Redis's copy has.
    pub fn dup(&self) -> Stream {
        let mut new = Stream::new();
        let mut it = self.rax.iter();
        while let Some((key, lp)) = it.next() {
            let copy = Listpack::from_bytes(lp.as_bytes()).expect("valid node");
            new.rax.insert(key, copy);
        }
        new.length = self.length;
        new.first_id = self.first_id;
        new.last_id = self.last_id;
        new.max_deleted_entry_id = self.max_deleted_entry_id;
        new.entries_added = self.entries_added;
        let Some(mut groups) = self.groups() else {
            return new;
        };
        while let Some((name, cg)) = groups.next() {
            let new_cg = new
                .create_cg(name, cg.last_id, cg.entries_read)
                .expect("unique group names");
            let mut pel = cg.pel.iter();
            while let Some((id, nack)) = pel.next() {
                let copy = StreamNack {
                    consumer: None,
                    ..nack.clone()
                };
                new_cg.pel.insert(id, copy);
            }
            let mut consumers = cg.consumers.iter();
            while let Some((cname, consumer)) = consumers.next() {
                new_cg.create_consumer(cname, consumer.seen_time);
                let mut cpel = consumer.pel.iter();
                while let Some((id, ())) = cpel.next() {
                    new_cg
                        .consumer_pel_add(cname, id)
                        .expect("consumer PEL entries are in the group PEL");
                }
            }
        }
        new
    }
}

// ---------------------------------------------------- consumer groups

impl StreamCG {
    /// streamLookupConsumer (the caller refreshes seen_time when it should).
    pub fn lookup_consumer(&self, name: &[u8]) -> Option<&StreamConsumer> {
        self.consumers.find(name)
    }

    pub fn lookup_consumer_mut(&mut self, name: &[u8]) -> Option<&mut StreamConsumer> {
        self.consumers.find_mut(name)
    }

    /// streamCreateConsumer: false when it exists already.
    pub fn create_consumer(&mut self, name: &[u8], now_ms: i64) -> bool {
        let consumer = StreamConsumer {
            seen_time: now_ms,
            name: Arc::from(name),
            pel: Rax::new(),
        };
        self.consumers.try_insert(name, consumer).is_ok()
    }

    /// streamDelConsumer: drop the consumer and its pending entries from
    /// the group PEL. Returns how many entries it had pending.
    pub fn del_consumer(&mut self, name: &[u8]) -> Option<u64> {
        let consumer = self.consumers.remove(name)?;
        let mut it = consumer.pel.iter();
        while let Some((id, ())) = it.next() {
            self.pel.remove(id);
        }
        Some(consumer.pel.len())
    }

    /// Link the NACK of `id` to consumer `name` and add it to that
    /// consumer's PEL (rdbLoad's consumer PEL and streamDup). Err (with
    /// rdbLoad's reason) when the consumer or the NACK is missing, or the
    /// ID is already in that consumer's PEL.
    pub fn consumer_pel_add(&mut self, name: &[u8], id: &[u8]) -> Result<(), &'static str> {
        let consumer = self.consumers.find_mut(name).ok_or("no such consumer")?;
        let nack = self
            .pel
            .find_mut(id)
            .ok_or("Consumer entry not found in group global PEL")?;
        nack.consumer = Some(consumer.name.clone());
        consumer
            .pel
            .try_insert(id, ())
            .map_err(|_| "Duplicated consumer PEL entry  loading a stream consumer group")
    }

    /// Does every NACK have an owner (rdbLoad's deep integrity check)?
    pub fn pel_all_owned(&self) -> bool {
        let mut it = self.pel.iter();
        while let Some((_, nack)) = it.next() {
            if nack.consumer.is_none() {
                return false;
            }
        }
        true
    }

    /// The PEL part of streamReplyWithRange: `id` was delivered to
    /// `consumer` at `now_ms`. A new NACK normally; if the ID is already
    /// pending (XGROUP SETID moved the group back) it changes owner and its
    /// delivery count restarts at 1. Same steps as Redis, in its order.
    pub fn deliver(&mut self, id: StreamID, consumer: &[u8], now_ms: i64) {
        let key = id.encode();
        let Some(owner) = self.consumers.find_mut(consumer) else {
            return;
        };
        let name = owner.name.clone();
        let nack = StreamNack {
            delivery_time: now_ms,
            delivery_count: 1,
            consumer: Some(name.clone()),
        };
        let group_inserted = self.pel.try_insert(&key, nack).is_ok();
        let _ = owner.pel.try_insert(&key, ());
        if !group_inserted {
            let nack = self.pel.find_mut(&key).expect("pending entry");
            if let Some(old) = nack.consumer.replace(name) {
                if let Some(prev) = self.consumers.find_mut(&old) {
                    prev.pel.remove(&key);
                }
            }
            nack.delivery_time = now_ms;
            nack.delivery_count = 1;
            if let Some(owner) = self.consumers.find_mut(consumer) {
                owner.pel.insert(&key, ());
            }
        }
    }

    /// XACK of one ID: drop it from the group PEL and its owner's PEL.
    pub fn ack(&mut self, id: StreamID) -> bool {
        let key = id.encode();
        let Some(nack) = self.pel.remove(&key) else {
            return false;
        };
        if let Some(owner) = nack.consumer.and_then(|n| self.consumers.find_mut(&n)) {
            owner.pel.remove(&key);
        }
        true
    }

    /// XCLAIM/XAUTOCLAIM's transfer: the NACK of `key` now belongs to
    /// `consumer` (removed from the old owner's PEL, added to the new one's
    /// when the owner changes).
    pub fn transfer_nack(&mut self, key: &[u8], consumer: &[u8]) {
        let Some(new_owner) = self.consumers.find(consumer).map(|c| c.name.clone()) else {
            return;
        };
        let Some(nack) = self.pel.find_mut(key) else {
            return;
        };
        if nack.consumer.as_deref() == Some(&new_owner[..]) {
            return;
        }
        if let Some(old) = nack.consumer.replace(new_owner) {
            if let Some(prev) = self.consumers.find_mut(&old) {
                prev.pel.remove(key);
            }
        }
        if let Some(owner) = self.consumers.find_mut(consumer) {
            owner.pel.insert(key, ());
        }
    }
}

// ----------------------------------------------------------- iterator

/// streamIterator: walks entries from node to node, reading the listpack
/// elements in the order the layout above gives them. `next_id` positions
/// on an entry and returns its ID and number of fields; `next_field` then
/// returns the pairs one at a time (streamIteratorGetID/GetField).
pub struct StreamIterator<'a> {
    stream: &'a Stream,
    master_id: StreamID,
    master_fields_count: u64,
    master_fields_start: Option<usize>,
    master_fields_ptr: Option<usize>,
    entry_flags: i64,
    rev: bool,
    /// Tombstones are not emitted (the default).
    pub skip_tombstones: bool,
    start_key: [u8; 16],
    end_key: [u8; 16],
    start_given: bool,
    end_given: bool,
    /// The current node's key; `started` once a node was visited.
    rax_key: Vec<u8>,
    started: bool,
    lp: Option<&'a Listpack>,
    lp_ele: Option<usize>,
    lp_flags: usize,
    /// Fields of the current entry not read yet by `next_field`.
    fields_left: u64,
    /// Out of range: the iteration is over.
    done: bool,
}

impl<'a> StreamIterator<'a> {
    fn new(s: &'a Stream, start: Option<StreamID>, end: Option<StreamID>, rev: bool) -> Self {
        StreamIterator {
            stream: s,
            master_id: StreamID::MIN,
            master_fields_count: 0,
            master_fields_start: None,
            master_fields_ptr: None,
            entry_flags: 0,
            rev,
            skip_tombstones: true,
            start_key: start.unwrap_or(StreamID::MIN).encode(),
            end_key: end.unwrap_or(StreamID::MAX).encode(),
            start_given: start.is_some_and(|s| !s.is_zero()),
            end_given: end.is_some_and(|e| !e.is_zero()),
            rax_key: Vec::new(),
            started: false,
            lp: None,
            lp_ele: None,
            lp_flags: 0,
            fields_left: 0,
            done: false,
        }
    }

    /// The node the iterator is on (its 16-byte key).
    fn node_key(&self) -> Vec<u8> {
        self.rax_key.clone()
    }

    /// raxNext / raxPrev on the stream's tree: the first call seeks the
    /// node holding the range's start (or end when reversed).
    fn next_node(&mut self) -> Option<&'a Listpack> {
        let rax = &self.stream.rax;
        let mut key = Vec::new();
        let lp = if !self.started {
            self.started = true;
            if !self.rev {
                let hit = if self.start_given {
                    rax.seek_le(&self.start_key, &mut key)
                } else {
                    None
                };
                hit.or_else(|| rax.first(&mut key))
            } else {
                let hit = if self.end_given {
                    rax.seek_le(&self.end_key, &mut key)
                } else {
                    None
                };
                hit.or_else(|| rax.last(&mut key))
            }
        } else if !self.rev {
            rax.seek_gt(&self.rax_key, &mut key)
        } else {
            rax.seek_lt(&self.rax_key, &mut key)
        };
        self.rax_key = key;
        lp
    }

    /// streamIteratorGetID: the next entry in range, as (ID, number of
    /// field/value pairs); None when the range is done.
    pub fn next_id(&mut self) -> Option<(StreamID, u64)> {
        if self.done {
            return None;
        }
        loop {
            if self.lp.is_none() || self.lp_ele.is_none() {
                // Start of the iteration, or the node is done: next node.
                let lp = self.next_node()?;
                self.master_id = StreamID::decode(&self.rax_key).unwrap_or_default();
                self.lp = Some(lp);
                let (start, count) = master_fields(lp);
                self.master_fields_count = count;
                self.master_fields_start = start;
                self.lp_ele = start;
                if !self.rev {
                    // Forward: skip the master fields (to the terminator).
                    for _ in 0..count {
                        self.lp_ele = nx(lp, self.lp_ele);
                    }
                } else {
                    // Backward: start from the last entry's lp-count.
                    self.lp_ele = lp.last();
                }
            } else {
                // Past the entry emitted last. Redis relies on the caller
                // having read every field; skipping what is left makes
                // reading only the ID (streamEntryExists) just as safe.
                let lp = self.lp?;
                if !self.rev {
                    let per_field = if self.entry_flags & STREAM_ITEM_FLAG_SAMEFIELDS != 0 {
                        1
                    } else {
                        2
                    };
                    for _ in 0..self.fields_left * per_field {
                        self.lp_ele = nx(lp, self.lp_ele);
                    }
                } else {
                    // Back from the entry's flags to the previous lp-count.
                    self.lp_ele = lp.prev(self.lp_flags);
                }
                self.fields_left = 0;
            }
            if let Some(found) = self.scan_node() {
                return Some(found);
            }
            if self.done {
                return None;
            }
        }
    }

    /// The inner loop of streamIteratorGetID over one node's entries.
    fn scan_node(&mut self) -> Option<(StreamID, u64)> {
        let lp = self.lp?;
        loop {
            if !self.rev {
                // Past the previous lp-count (or the master terminator).
                self.lp_ele = nx(lp, self.lp_ele);
                self.lp_ele?;
            } else {
                let n = self.lp_ele.map_or(0, |p| lp_int(lp, p));
                if n == 0 {
                    // Back at the master entry: this node is done.
                    self.lp = None;
                    self.lp_ele = None;
                    return None;
                }
                for _ in 0..n {
                    self.lp_ele = pv(lp, self.lp_ele);
                }
            }
            let flags_at = self.lp_ele?;
            self.lp_flags = flags_at;
            let flags = lp_int(lp, flags_at);
            let mut p = lp.next(flags_at);
            let ms = p.map_or(0, |p| lp_int(lp, p));
            p = nx(lp, p);
            let seq = p.map_or(0, |p| lp_int(lp, p));
            p = nx(lp, p);
            let id = StreamID::new(
                self.master_id.ms.wrapping_add(ms as u64),
                self.master_id.seq.wrapping_add(seq as u64),
            );
            let numfields = if flags & STREAM_ITEM_FLAG_SAMEFIELDS != 0 {
                self.master_fields_count
            } else {
                let n = p.map_or(0, |p| lp_int(lp, p)).max(0) as u64;
                p = nx(lp, p);
                n
            };
            self.lp_ele = p;
            let key = id.encode();
            let live = !self.skip_tombstones || flags & STREAM_ITEM_FLAG_DELETED == 0;
            if !self.rev {
                if key >= self.start_key && live {
                    if key > self.end_key {
                        // Out of range: nothing more in this direction.
                        self.done = true;
                        return None;
                    }
                    return Some(self.emit(flags, id, numfields));
                }
            } else if key <= self.end_key && live {
                if key < self.start_key {
                    self.done = true;
                    return None;
                }
                return Some(self.emit(flags, id, numfields));
            }
            // Not emitted: move past it.
            if !self.rev {
                let skip = if flags & STREAM_ITEM_FLAG_SAMEFIELDS != 0 {
                    numfields
                } else {
                    numfields * 2
                };
                for _ in 0..skip {
                    self.lp_ele = nx(lp, self.lp_ele);
                }
            } else {
                // flags + ms + seq + one more to the previous lp-count,
                // and the num-fields when it is there.
                let back = if flags & STREAM_ITEM_FLAG_SAMEFIELDS != 0 {
                    4
                } else {
                    5
                };
                for _ in 0..back {
                    self.lp_ele = pv(lp, self.lp_ele);
                }
            }
        }
    }

    fn emit(&mut self, flags: i64, id: StreamID, numfields: u64) -> (StreamID, u64) {
        self.entry_flags = flags;
        self.fields_left = numfields;
        if flags & STREAM_ITEM_FLAG_SAMEFIELDS != 0 {
            self.master_fields_ptr = self.master_fields_start;
        }
        (id, numfields)
    }

    /// streamIteratorGetField: the next (field, value) of the current entry.
    pub fn next_field(&mut self) -> (LpEntry<'a>, LpEntry<'a>) {
        let Some(lp) = self.lp else {
            return (LpEntry::Str(b""), LpEntry::Str(b""));
        };
        let field_at = if self.entry_flags & STREAM_ITEM_FLAG_SAMEFIELDS != 0 {
            let f = self.master_fields_ptr;
            self.master_fields_ptr = nx(lp, f);
            f
        } else {
            let f = self.lp_ele;
            self.lp_ele = nx(lp, f);
            f
        };
        let value_at = self.lp_ele;
        self.lp_ele = nx(lp, value_at);
        self.fields_left = self.fields_left.saturating_sub(1);
        let get = |p: Option<usize>| p.map_or(LpEntry::Str(b""), |p| lp.get(p));
        (get(field_at), get(value_at))
    }

    /// The flags of the current entry (a tombstone when deleted).
    pub fn entry_flags(&self) -> i64 {
        self.entry_flags
    }
}

// ------------------------------------------------------- validation

/// streamValidateListpackIntegrity: a node payload read from a file is a
/// valid listpack *and* a valid stream node (master entry, then entries
/// whose lp-count matches their shape, nothing after). Returns the
/// listpack when it is.
pub fn stream_validate_listpack_integrity(bytes: &[u8]) -> Option<Listpack> {
    let lp = Listpack::from_bytes(bytes)?;
    let int = |p: usize| -> Option<i64> {
        match lp.get(p) {
            LpEntry::Int(v) => Some(v),
            LpEntry::Str(s) => crate::util::string2ll(s),
        }
    };
    let mut p = lp.first();
    let take = |p: &mut Option<usize>| -> Option<usize> {
        let cur = (*p)?;
        *p = lp.next(cur);
        Some(cur)
    };
    let entry_count = int(take(&mut p)?)?;
    let deleted_count = int(take(&mut p)?)?;
    let master_fields = int(take(&mut p)?)?;
    for _ in 0..master_fields {
        take(&mut p)?;
    }
    if int(take(&mut p)?)? != 0 {
        return None; // the master entry's zero terminator
    }
    let mut entries = entry_count.checked_add(deleted_count)?;
    while entries > 0 {
        entries -= 1;
        let flags = int(take(&mut p)?)?;
        int(take(&mut p)?)?; // ms delta
        int(take(&mut p)?)?; // seq delta
        let mut fields = master_fields;
        let mut extra = 3;
        if flags & STREAM_ITEM_FLAG_SAMEFIELDS == 0 {
            fields = int(take(&mut p)?)?;
            if fields < 0 {
                return None;
            }
            for _ in 0..fields {
                take(&mut p)?;
            }
            extra += fields + 1;
        }
        for _ in 0..fields {
            take(&mut p)?;
        }
        if int(take(&mut p)?)? != fields + extra {
            return None;
        }
    }
    if p.is_some() {
        return None; // elements after the last entry
    }
    Some(lp)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    fn parse_id(s: &str) -> StreamID {
        let (ms, seq) = s.split_once('-').unwrap();
        StreamID::new(ms.parse().unwrap(), seq.parse().unwrap())
    }

    /// Replays one scenario of testdata/stream_nodes.txt (written by
    /// scripts/stream-node-fixture.py from a real redis-server 7.0.15).
    fn replay(cmds: &[Vec<String>]) -> Stream {
        let mut s = Stream::new();
        for c in cmds {
            match c[0].as_str() {
                "XADD" => {
                    let id = parse_id(&c[2]);
                    s.append_item(&c[3..], Some(id), true, 0, NodeLimits::default())
                        .unwrap();
                }
                "XDEL" => {
                    for id in &c[2..] {
                        let id = parse_id(id);
                        if s.delete_item(id) && id > s.max_deleted_entry_id {
                            s.max_deleted_entry_id = id;
                        }
                    }
                }
                "XTRIM" => {
                    let strategy = match c[2].as_str() {
                        "MAXLEN" => TrimStrategy::MaxLen(c[3].parse().unwrap()),
                        _ => TrimStrategy::MinId(parse_id(&c[3])),
                    };
                    s.trim(&TrimArgs {
                        strategy,
                        approx: false,
                        limit: 0,
                    });
                }
                other => panic!("unknown command {other}"),
            }
        }
        s
    }

    #[test]
    fn stream_nodes_are_byte_identical_to_redis() {
        let fixture = include_str!("../testdata/stream_nodes.txt");
        let mut scenarios = 0;
        for block in fixture.split("# ").filter(|b| !b.trim().is_empty()) {
            let mut lines = block.lines();
            let name = lines.next().unwrap();
            let mut cmds = Vec::new();
            let mut nodes = Vec::new();
            let mut radix_nodes = 0;
            for l in lines {
                let words: Vec<String> = l.split(' ').map(String::from).collect();
                match words[0].as_str() {
                    ">" => cmds.push(words[1..].to_vec()),
                    "node" => nodes.push((words[1].clone(), words[2].clone())),
                    "radix-tree-nodes" => radix_nodes = words[1].parse().unwrap(),
                    _ => {}
                }
            }
            let s = replay(&cmds);
            let mut got = Vec::new();
            let mut it = s.nodes();
            while let Some((k, lp)) = it.next() {
                got.push((hex(k), hex(lp.as_bytes())));
            }
            assert_eq!(got, nodes, "scenario {name}");
            assert_eq!(s.rax.numnodes(), radix_nodes, "scenario {name}");
            for (_, lp) in &nodes {
                let bytes: Vec<u8> = (0..lp.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&lp[i..i + 2], 16).unwrap())
                    .collect();
                assert!(stream_validate_listpack_integrity(&bytes).is_some());
            }
            scenarios += 1;
        }
        assert!(scenarios >= 10);
    }

    fn xadd(s: &mut Stream, id: &str, fv: &[&str]) -> Result<StreamID, AppendError> {
        s.append_item(fv, Some(parse_id(id)), true, 0, NodeLimits::default())
    }

    #[test]
    fn stream_append_ids_follow_stream_next_id() {
        let mut s = Stream::new();
        let lim = NodeLimits::default();
        // `*`: the clock's ms, then the next sequence while it stands still.
        assert_eq!(
            s.append_item(&["f", "v"], None, false, 100, lim),
            Ok(StreamID::new(100, 0))
        );
        assert_eq!(
            s.append_item(&["f", "v"], None, false, 100, lim),
            Ok(StreamID::new(100, 1))
        );
        assert_eq!(
            s.append_item(&["f", "v"], None, false, 50, lim),
            Ok(StreamID::new(100, 2))
        );
        // `<ms>-*`: the same ms continues its sequence, a new ms starts at 0.
        let ms_star = |s: &mut Stream, ms| {
            s.append_item(&["f", "v"], Some(StreamID::new(ms, 0)), false, 0, lim)
        };
        assert_eq!(ms_star(&mut s, 100), Ok(StreamID::new(100, 3)));
        assert_eq!(ms_star(&mut s, 200), Ok(StreamID::new(200, 0)));
        assert_eq!(ms_star(&mut s, 150), Err(AppendError::IdTooSmall));
        assert_eq!(
            xadd(&mut s, "200-0", &["f", "v"]),
            Err(AppendError::IdTooSmall)
        );
        assert_eq!(
            xadd(&mut s, "300-18446744073709551615", &["f", "v"]).map(|_| ()),
            Ok(())
        );
        assert_eq!(ms_star(&mut s, 300), Err(AppendError::SequenceExhausted));
        assert_eq!((s.length, s.entries_added), (6, 6));
        assert_eq!(s.first_id, StreamID::new(100, 0));
    }

    #[test]
    fn stream_iterates_both_ways_over_nodes_and_tombstones() {
        let mut s = Stream::new();
        for i in 1..=250u64 {
            let v = i.to_string();
            let fields: Vec<&str> = if i % 3 == 0 {
                vec!["a", &v, "other", "x"]
            } else {
                vec!["a", &v]
            };
            xadd(&mut s, &format!("{i}-0"), &fields).unwrap();
        }
        for i in (5..=250).step_by(5) {
            assert!(s.delete_item(StreamID::new(i, 0)));
        }
        assert!(!s.delete_item(StreamID::new(5, 0)));
        let live: Vec<u64> = (1..=250).filter(|i| i % 5 != 0).collect();
        let collect = |rev: bool, start: Option<StreamID>, end: Option<StreamID>| {
            let mut it = s.iter(start, end, rev);
            let mut out = Vec::new();
            while let Some((id, n)) = it.next_id() {
                let mut f = Vec::new();
                for _ in 0..n {
                    let (k, v) = it.next_field();
                    f.push((k.to_vec(), v.to_vec()));
                }
                assert_eq!(f[0], (b"a".to_vec(), id.ms.to_string().into_bytes()));
                assert_eq!(f.len(), if id.ms % 3 == 0 { 2 } else { 1 });
                out.push(id.ms);
            }
            out
        };
        assert_eq!(collect(false, None, None), live);
        let mut rev = live.clone();
        rev.reverse();
        assert_eq!(collect(true, None, None), rev);
        let range = |a: u64, b: u64| (Some(StreamID::new(a, 0)), Some(StreamID::new(b, 0)));
        let (a, b) = range(98, 203);
        let want: Vec<u64> = live
            .iter()
            .copied()
            .filter(|&i| (98..=203).contains(&i))
            .collect();
        assert_eq!(collect(false, a, b), want);
        let mut want_rev = want.clone();
        want_rev.reverse();
        assert_eq!(collect(true, a, b), want_rev);
        assert_eq!(s.length, 200);
        assert_eq!(s.last_valid_id(), StreamID::new(249, 0));
        assert_eq!(s.get_edge_id(true, true), StreamID::new(1, 0));
        assert!(s.entry_exists(StreamID::new(4, 0)));
        assert!(!s.entry_exists(StreamID::new(5, 0)));
        // With tombstones: the deleted 250-0 is the last recorded entry.
        assert_eq!(s.get_edge_id(false, false), StreamID::new(250, 0));
    }

    #[test]
    fn stream_trim_approx_removes_whole_nodes_only() {
        let mut s = Stream::new();
        for i in 1..=250u64 {
            xadd(&mut s, &format!("{i}-0"), &["f", "v"]).unwrap();
        }
        let approx = |maxlen| TrimArgs {
            strategy: TrimStrategy::MaxLen(maxlen),
            approx: true,
            limit: 10000,
        };
        // 250 entries in nodes of 100: ~ 180 cannot drop a whole node.
        assert_eq!(s.trim(&approx(180)), 0);
        assert_eq!(s.trim(&approx(140)), 100);
        assert_eq!(s.length, 150);
        assert_eq!(s.first_id, StreamID::new(101, 0));
        // LIMIT smaller than a node: nothing.
        let limited = TrimArgs {
            limit: 50,
            ..approx(0)
        };
        assert_eq!(s.trim(&limited), 0);
        let exact = TrimArgs {
            strategy: TrimStrategy::MinId(StreamID::new(230, 0)),
            approx: false,
            limit: 0,
        };
        assert_eq!(s.trim(&exact), 129);
        assert_eq!(s.length, 21);
        assert_eq!(s.first_id, StreamID::new(230, 0));
    }

    #[test]
    fn stream_lag_and_read_counter_as_7_0() {
        let mut s = Stream::new();
        for i in 1..=5u64 {
            xadd(&mut s, &format!("{i}-0"), &["f", "v"]).unwrap();
        }
        let cg = StreamCG {
            last_id: StreamID::MIN,
            entries_read: 0,
            pel: Rax::new(),
            consumers: Rax::new(),
        };
        assert_eq!(s.cg_lag(&cg), Some(5));
        assert_eq!(s.cg_entries_read_after(0, StreamID::new(1, 0)), 1);
        // An XDEL in the middle makes the counter unknowable ahead of it.
        assert!(s.delete_item(StreamID::new(3, 0)));
        s.max_deleted_entry_id = StreamID::new(3, 0);
        let invalid = StreamCG {
            entries_read: SCG_INVALID_ENTRIES_READ,
            ..cg
        };
        assert_eq!(s.cg_lag(&invalid), None);
        assert_eq!(
            s.estimate_distance_from_first_ever_entry(StreamID::new(5, 0)),
            5
        );
        assert_eq!(
            s.estimate_distance_from_first_ever_entry(StreamID::new(2, 0)),
            SCG_INVALID_ENTRIES_READ
        );
        assert!(s.range_has_tombstones(Some(StreamID::new(2, 0)), None));
        assert!(!s.range_has_tombstones(Some(StreamID::new(4, 0)), None));
    }

    #[test]
    fn stream_groups_deliver_ack_and_transfer() {
        let mut s = Stream::new();
        xadd(&mut s, "1-0", &["f", "v"]).unwrap();
        let cg = s.create_cg(b"g", StreamID::MIN, 0).unwrap();
        assert!(cg.create_consumer(b"alice", 10));
        assert!(!cg.create_consumer(b"alice", 11));
        assert!(cg.create_consumer(b"bob", 12));
        cg.deliver(StreamID::new(1, 0), b"alice", 100);
        assert_eq!(cg.pel.len(), 1);
        // Delivered again to bob (after a SETID): bob owns it, count 1.
        cg.deliver(StreamID::new(1, 0), b"bob", 200);
        let key = StreamID::new(1, 0).encode();
        let nack = cg.pel.find(&key).unwrap();
        assert_eq!(nack.consumer.as_deref(), Some(&b"bob"[..]));
        assert_eq!((nack.delivery_time, nack.delivery_count), (200, 1));
        assert_eq!(cg.lookup_consumer(b"alice").unwrap().pel.len(), 0);
        assert_eq!(cg.lookup_consumer(b"bob").unwrap().pel.len(), 1);
        cg.transfer_nack(&key, b"alice");
        assert_eq!(cg.lookup_consumer(b"alice").unwrap().pel.len(), 1);
        assert_eq!(cg.lookup_consumer(b"bob").unwrap().pel.len(), 0);
        assert!(cg.pel_all_owned());
        let copy = s.dup();
        assert_eq!(copy.lookup_cg(b"g").unwrap().pel.len(), 1);
        assert!(copy.lookup_cg(b"g").unwrap().pel_all_owned());
        let cg = s.lookup_cg_mut(b"g").unwrap();
        assert!(cg.ack(StreamID::new(1, 0)));
        assert!(!cg.ack(StreamID::new(1, 0)));
        assert_eq!(cg.lookup_consumer(b"alice").unwrap().pel.len(), 0);
        assert!(s.create_cg(b"g", StreamID::MIN, 0).is_none());
        assert!(s.destroy_cg(b"g"));
        assert_eq!(s.num_groups(), 0);
    }

    #[test]
    fn stream_node_validation_rejects_broken_nodes() {
        let mut s = Stream::new();
        xadd(&mut s, "1-0", &["f", "v"]).unwrap();
        let mut key = Vec::new();
        let good = s.rax.first(&mut key).unwrap().as_bytes().to_vec();
        assert!(stream_validate_listpack_integrity(&good).is_some());
        // A listpack that is not a stream node: four strings.
        let mut lp = Listpack::new();
        for v in ["a", "b", "c", "d"] {
            lp.append(v.as_bytes());
        }
        assert!(stream_validate_listpack_integrity(lp.as_bytes()).is_none());
        // Claiming two entries where there is one.
        let mut lp = Listpack::from_bytes(&good).unwrap();
        let first = lp.first().unwrap();
        lp.replace_int(first, 2);
        assert!(stream_validate_listpack_integrity(lp.as_bytes()).is_none());
        assert!(stream_validate_listpack_integrity(&good[..good.len() - 1]).is_none());
    }
}
