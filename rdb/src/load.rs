//! The RDB reader (rdb.c rdbLoad*): bytes in, `storage` objects out.
//!
//! Everything read here may come from a hostile client (RESTORE) or a
//! damaged file, so the reader follows three rules:
//! 1. Never panic: every length is checked before use, every blob
//!    (listpack, intset, ziplist, zipmap) is validated before it is trusted.
//! 2. Never allocate by a length the input cannot back: the reader knows
//!    how many bytes are left (`size_hint`), so a 4 GB length in a 20-byte
//!    payload is a short read, not a 4 GB allocation; element counts only
//!    presize tables up to what the remaining bytes could hold.
//! 3. Convert as Redis converts: the same thresholds decide whether a
//!    loaded hash is a listpack or a hashtable, so OBJECT ENCODING after a
//!    reload matches redis-server's.
//!
//! `next_entry` walks a whole file (opcodes, AUX fields, functions, keys);
//! `load_object` reads one value of a given type (DUMP payloads use it).
//! The CRC64 of the bytes consumed is folded in lazily per 64 KB buffer, so
//! the checksum costs one table walk per chunk, not one call per byte.

use std::io::{self, Read};

use storage::dict::{Dict, Sds};
use storage::intset::Intset;
use storage::listpack::{lp_safe_to_add, Listpack, LpEntry};
use storage::object::{StrValue, Value, OBJ_ENCODING_EMBSTR_SIZE_LIMIT};
use storage::quicklist::Quicklist;
use storage::t_hash::{hash_type_convert, HashConvWhy, HashLimits, HashValue};
use storage::t_set::{set_type_convert, SetValue};
use storage::t_stream::{stream_validate_listpack_integrity, Stream, StreamID, StreamNack};
use storage::t_zset::{zset_type_convert, ZConvCheck, ZSet, ZSetLimits, ZSetValue};
use storage::util::{ll2string, string2d, string2ll};

use crate::ziplist::{ziplist_for_each, zipmap_for_each};
use crate::*;

/// How much input is read (and checksummed) at a time.
const READ_CHUNK: usize = 64 * 1024;

/// Without a size hint, a string or table is presized to at most this
/// many bytes/slots and grows as data actually arrives.
const PREALLOC_CAP: u64 = 1 << 20;

/// The conversion thresholds of the loading server (its config).
#[derive(Debug, Clone, Copy)]
pub struct LoadLimits {
    pub list_max_listpack_size: i64,
    pub list_compress_depth: i64,
    pub set_max_intset_entries: usize,
    pub hash: HashLimits,
    pub zset: ZSetLimits,
}

impl Default for LoadLimits {
    /// Redis's defaults: list-max-listpack-size -2, set-max-intset-entries
    /// 512, hash-max-listpack-* 512/64, zset-max-listpack-* 128/64.
    fn default() -> Self {
        LoadLimits {
            list_max_listpack_size: -2,
            list_compress_depth: 0,
            set_max_intset_entries: 512,
            hash: HashLimits::default(),
            zset: ZSetLimits {
                max_listpack_entries: 128,
                max_listpack_value: 64,
            },
        }
    }
}

/// One step of a file: what `next_entry` found.
#[derive(Debug)]
pub enum Entry {
    Aux {
        key: Vec<u8>,
        value: Vec<u8>,
    },
    /// A function library's code (FUNCTION2, or the rc1/rc2 FUNCTION
    /// format translated to it, as rdbFunctionLoad does).
    Function(Vec<u8>),
    SelectDb(u64),
    ResizeDb {
        db_size: u64,
        expires_size: u64,
    },
    /// A key and its value, with the opcodes that preceded it.
    Key {
        key: Vec<u8>,
        value: Value,
        meta: crate::KeyMeta,
    },
    /// A key whose value was empty (an old Redis bug, #8453): skipped.
    EmptyKey {
        key: Vec<u8>,
    },
    /// The end: the stored checksum (None before RDB 5) and the computed one.
    Eof {
        stored: Option<u64>,
        computed: u64,
    },
}

/// An RDB stream being read from `inp`.
pub struct RdbReader<R: Read> {
    inp: R,
    buf: Box<[u8]>,
    pos: usize,
    end: usize,
    /// Bytes of `buf` before this index are already in the digest.
    crc_from: usize,
    digest: Option<crc::Digest<'static, u64, crc::Table<16>>>,
    /// Bytes consumed so far (rio's processed_bytes).
    processed: u64,
    /// Total bytes the input holds, when known.
    size_hint: Option<u64>,
    /// The file's RDB version (10 for payloads).
    version: u32,
    /// load_header succeeded.
    header_read: bool,
    pub limits: LoadLimits,
    /// sanitize-dump-payload: check listpacks for duplicate fields too.
    pub deep: bool,
    /// How many encoded blobs were deep-checked (INFO stats
    /// dump_payload_sanitizations): each quicklist listpack node, intset,
    /// zset or hash listpack and stream node, as Redis's rdbLoadObject
    /// counts them.
    pub sanitizations: u64,
}

impl<R: Read> RdbReader<R> {
    /// A reader over `inp`; `size_hint` is the input's total size if known
    /// (file size, payload length); `checksum` computes the CRC64.
    pub fn new(inp: R, size_hint: Option<u64>, checksum: bool, limits: LoadLimits) -> Self {
        RdbReader {
            inp,
            buf: vec![0; READ_CHUNK].into_boxed_slice(),
            pos: 0,
            end: 0,
            crc_from: 0,
            digest: checksum.then(|| CRC64.digest()),
            processed: 0,
            size_hint,
            version: RDB_VERSION as u32,
            header_read: false,
            limits,
            deep: false,
            sanitizations: 0,
        }
    }

    /// Bytes consumed so far (loading_loaded_bytes).
    pub fn processed(&self) -> u64 {
        self.processed
    }

    pub fn version(&self) -> u32 {
        self.version
    }

    // ------------------------------------------------------------ raw input

    fn fold_crc(&mut self) {
        if let Some(d) = self.digest.as_mut() {
            d.update(&self.buf[self.crc_from..self.pos]);
        }
        self.crc_from = self.pos;
    }

    /// Refill the buffer once it is used up. Ok(false) at end of input.
    fn fill(&mut self) -> io::Result<bool> {
        self.fold_crc();
        loop {
            match self.inp.read(&mut self.buf) {
                Ok(0) => return Ok(false),
                Ok(n) => {
                    self.pos = 0;
                    self.end = n;
                    self.crc_from = 0;
                    return Ok(true);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    fn short_read() -> RdbError {
        RdbError::Io(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "Unexpected EOF reading RDB file",
        ))
    }

    /// rioRead: exactly `out.len()` bytes.
    fn read_into(&mut self, mut out: &mut [u8]) -> Result<(), RdbError> {
        while !out.is_empty() {
            if self.pos == self.end && !self.fill()? {
                return Err(Self::short_read());
            }
            let n = out.len().min(self.end - self.pos);
            out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
            self.pos += n;
            self.processed += n as u64;
            out = &mut out[n..];
        }
        Ok(())
    }

    fn read_u8(&mut self) -> Result<u8, RdbError> {
        if self.pos < self.end {
            let b = self.buf[self.pos];
            self.pos += 1;
            self.processed += 1;
            return Ok(b);
        }
        let mut b = [0u8; 1];
        self.read_into(&mut b)?;
        Ok(b[0])
    }

    fn read_array<const N: usize>(&mut self) -> Result<[u8; N], RdbError> {
        let mut b = [0u8; N];
        self.read_into(&mut b)?;
        Ok(b)
    }

    /// How many bytes may still come, as far as we know.
    fn remaining(&self) -> Option<u64> {
        self.size_hint.map(|s| s.saturating_sub(self.processed))
    }

    /// A presize for `n` items of at least one byte each: never more than
    /// the input could still hold (RESIZEDB hints are capped with it too).
    pub fn cap(&self, n: u64) -> usize {
        n.min(self.remaining().unwrap_or(PREALLOC_CAP)) as usize
    }

    /// `len` bytes into a fresh Vec. A length longer than the input left is
    /// a short read at once; without a size hint the Vec grows by chunks
    /// as bytes really arrive.
    fn read_vec(&mut self, len: u64) -> Result<Vec<u8>, RdbError> {
        if self.remaining().is_some_and(|r| len > r) {
            return Err(Self::short_read());
        }
        let Ok(len) = usize::try_from(len) else {
            return Err(Self::short_read());
        };
        let mut v = Vec::with_capacity(len.min(self.cap(len as u64).max(READ_CHUNK)));
        while v.len() < len {
            if self.pos == self.end && !self.fill()? {
                return Err(Self::short_read());
            }
            let n = (len - v.len()).min(self.end - self.pos);
            v.extend_from_slice(&self.buf[self.pos..self.pos + n]);
            self.pos += n;
            self.processed += n as u64;
        }
        Ok(v)
    }

    /// rioRead of `len` raw bytes past the RDB (the 40-byte EOF mark that
    /// ends a diskless transfer): a short read if the input ends first.
    pub fn read_raw(&mut self, len: usize) -> Result<Vec<u8>, RdbError> {
        let mut out = vec![0u8; len];
        self.read_into(&mut out)?;
        Ok(out)
    }

    /// The input back, with the bytes read ahead into the buffer and not
    /// consumed (a replica hands them on to the master client).
    pub fn into_parts(self) -> (R, Vec<u8>) {
        let rest = self.buf[self.pos..self.end].to_vec();
        (self.inp, rest)
    }

    /// The CRC64 of everything consumed so far (0 when not computing it).
    pub fn checksum_so_far(&mut self) -> u64 {
        self.fold_crc();
        self.digest.as_ref().map_or(0, |d| d.clone().finalize())
    }

    // ------------------------------------------------------------ primitives

    /// rdbLoadType.
    pub fn load_type(&mut self) -> Result<u8, RdbError> {
        self.read_u8()
    }

    /// rdbLoadLenByRef: the length, and whether it is a special encoding
    /// (then the value is an RDB_ENC_* number).
    pub fn load_len_enc(&mut self) -> Result<(u64, bool), RdbError> {
        let b = self.read_u8()?;
        match b >> 6 {
            RDB_ENCVAL => Ok(((b & 0x3F) as u64, true)),
            RDB_6BITLEN => Ok(((b & 0x3F) as u64, false)),
            RDB_14BITLEN => Ok(((((b & 0x3F) as u64) << 8) | self.read_u8()? as u64, false)),
            _ => match b {
                RDB_32BITLEN => Ok((u32::from_be_bytes(self.read_array()?) as u64, false)),
                RDB_64BITLEN => Ok((u64::from_be_bytes(self.read_array()?), false)),
                _ => corrupt(format!(
                    "Unknown length encoding {} in rdbLoadLen()",
                    b >> 6
                )),
            },
        }
    }

    /// rdbLoadLen: a plain length (an encoded one here is corruption).
    pub fn load_len(&mut self) -> Result<u64, RdbError> {
        match self.load_len_enc()? {
            (len, false) => Ok(len),
            (enc, true) => corrupt(format!("Unexpected string encoding {enc} for a length")),
        }
    }

    /// rdbLoadIntegerObject: the value of an RDB_ENC_INT* string.
    fn load_integer(&mut self, enc: u64) -> Result<i64, RdbError> {
        Ok(match enc as u8 {
            RDB_ENC_INT8 => self.read_u8()? as i8 as i64,
            RDB_ENC_INT16 => i16::from_le_bytes(self.read_array()?) as i64,
            RDB_ENC_INT32 => i32::from_le_bytes(self.read_array()?) as i64,
            _ => return corrupt(format!("Unknown RDB integer encoding type {enc}")),
        })
    }

    /// rdbLoadLzfStringObject: read the compressed bytes first, then expand
    /// them. LZF expands at most ~88x (a 3-byte reference yields 264
    /// bytes), so a claimed length beyond that is rejected before anything
    /// is allocated for it.
    fn load_lzf(&mut self) -> Result<Vec<u8>, RdbError> {
        let clen = self.load_len()?;
        let len = self.load_len()?;
        let c = self.read_vec(clen)?;
        if len > clen.saturating_mul(88).saturating_add(32) {
            return corrupt("Invalid LZF compressed string");
        }
        match storage::lzf::lzf_decompress(&c, len as usize) {
            Some(v) => Ok(v),
            None => corrupt("Invalid LZF compressed string"),
        }
    }

    /// rdbGenericLoadStringObject(RDB_LOAD_PLAIN): the bytes of a string,
    /// integer encodings turned into their decimal text.
    pub fn load_string(&mut self) -> Result<Vec<u8>, RdbError> {
        match self.load_len_enc()? {
            (len, false) => self.read_vec(len),
            (RDB_ENC_LZF_U64, true) => self.load_lzf(),
            (enc, true) => Ok(ll2string(self.load_integer(enc)?).as_bytes().to_vec()),
        }
    }

    /// rdbLoadEncodedStringObject + tryObjectEncoding: a string value in
    /// the encoding Redis would give it (int, embstr, raw).
    pub fn load_string_value(&mut self) -> Result<StrValue, RdbError> {
        let bytes = match self.load_len_enc()? {
            (len, false) => self.read_vec(len)?,
            (RDB_ENC_LZF_U64, true) => self.load_lzf()?,
            (enc, true) => return Ok(StrValue::Int(self.load_integer(enc)?)),
        };
        Ok(string_value(bytes))
    }

    /// rdbLoadBinaryDoubleValue.
    fn load_binary_double(&mut self) -> Result<f64, RdbError> {
        Ok(f64::from_le_bytes(self.read_array()?))
    }

    /// rdbLoadDoubleValue: the old text form (RDB_TYPE_ZSET), with 253/254/255
    /// meaning NaN, +inf and -inf.
    fn load_double_text(&mut self) -> Result<f64, RdbError> {
        let len = self.read_u8()?;
        match len {
            255 => Ok(f64::NEG_INFINITY),
            254 => Ok(f64::INFINITY),
            253 => Ok(f64::NAN),
            _ => {
                let b = self.read_vec(len as u64)?;
                match string2d(&b).or_else(|| std::str::from_utf8(&b).ok()?.trim().parse().ok()) {
                    Some(v) => Ok(v),
                    None => corrupt("Bad double value"),
                }
            }
        }
    }

    // --------------------------------------------------------------- objects

    /// rdbLoadObject: one value of type `rdbtype`. Ok(None) for an empty
    /// collection (the caller skips the key, as Redis does).
    pub fn load_object(&mut self, rdbtype: u8) -> Result<Option<Value>, RdbError> {
        let lim = self.limits;
        match rdbtype {
            RDB_TYPE_STRING => Ok(Some(Value::Str(self.load_string_value()?))),
            RDB_TYPE_LIST => {
                let len = self.load_len()?;
                let mut ql = Quicklist::new(lim.list_max_listpack_size, lim.list_compress_depth);
                for _ in 0..len {
                    ql.push_tail(&self.load_string()?);
                }
                Ok((!ql.is_empty()).then(|| Value::List(Box::new(ql))))
            }
            RDB_TYPE_SET => self.load_set(),
            RDB_TYPE_ZSET | RDB_TYPE_ZSET_2 => self.load_zset(rdbtype == RDB_TYPE_ZSET_2),
            RDB_TYPE_HASH => self.load_hash(),
            RDB_TYPE_LIST_QUICKLIST | RDB_TYPE_LIST_QUICKLIST_2 => {
                self.load_quicklist(rdbtype == RDB_TYPE_LIST_QUICKLIST_2)
            }
            RDB_TYPE_HASH_ZIPMAP
            | RDB_TYPE_LIST_ZIPLIST
            | RDB_TYPE_SET_INTSET
            | RDB_TYPE_ZSET_ZIPLIST
            | RDB_TYPE_ZSET_LISTPACK
            | RDB_TYPE_HASH_ZIPLIST
            | RDB_TYPE_HASH_LISTPACK => {
                let blob = self.load_string()?;
                if self.deep
                    && matches!(
                        rdbtype,
                        RDB_TYPE_SET_INTSET | RDB_TYPE_ZSET_LISTPACK | RDB_TYPE_HASH_LISTPACK
                    )
                {
                    self.sanitizations += 1;
                }
                load_blob_object(rdbtype, blob, &lim, self.deep)
            }
            RDB_TYPE_STREAM_LISTPACKS | RDB_TYPE_STREAM_LISTPACKS_2 => {
                self.load_stream(rdbtype == RDB_TYPE_STREAM_LISTPACKS_2)
            }
            RDB_TYPE_MODULE_PRE_GA | RDB_TYPE_MODULE_2 => Err(RdbError::Unsupported(format!(
                "unsupported type {rdbtype} (modules)"
            ))),
            _ => corrupt(format!("Unknown RDB encoding type {rdbtype}")),
        }
    }

    /// RDB_TYPE_STREAM_LISTPACKS(_2): the nodes, the counters (7.0's `_2`
    /// adds first ID, max deleted ID and entries added; older files get
    /// them estimated as Redis does), then the consumer groups. Group PEL
    /// entries are loaded without an owner; each consumer's PEL then names
    /// its entries. A stream may be empty (XADD ... then XDEL), so unlike
    /// other types it is never skipped.
    fn load_stream(&mut self, v2: bool) -> Result<Option<Value>, RdbError> {
        let mut s = Box::new(Stream::new());
        let nodes = self.load_len()?;
        for _ in 0..nodes {
            let master_id = self.load_string()?;
            if master_id.len() != 16 {
                return corrupt("Stream node key entry is not the size of a stream ID");
            }
            let bytes = self.load_string()?;
            if self.deep {
                self.sanitizations += 1;
            }
            let Some(lp) = stream_validate_listpack_integrity(&bytes) else {
                return corrupt("Stream listpack integrity check failed.");
            };
            if lp.first().is_none() {
                return corrupt("Empty listpack inside stream");
            }
            if s.insert_node(&master_id, lp).is_err() {
                return corrupt("Listpack re-added with existing key");
            }
        }
        s.length = self.load_len()?;
        s.last_id = self.load_stream_id()?;
        if v2 {
            s.first_id = self.load_stream_id()?;
            s.max_deleted_entry_id = self.load_stream_id()?;
            s.entries_added = self.load_len()?;
        } else {
            s.max_deleted_entry_id = StreamID::default();
            s.entries_added = s.length;
            s.first_id = s.get_edge_id(true, true);
        }
        if s.length > 0 && s.rax.is_empty() {
            return corrupt("Stream length inconsistent with rax entries");
        }
        let groups = self.load_len()?;
        for _ in 0..groups {
            let name = self.load_string()?;
            let last_id = self.load_stream_id()?;
            let entries_read = if v2 {
                self.load_len()? as i64
            } else {
                s.estimate_distance_from_first_ever_entry(last_id)
            };
            let Some(cg) = s.create_cg(&name, last_id, entries_read) else {
                return corrupt(format!(
                    "Duplicated consumer group name {}",
                    String::from_utf8_lossy(&name)
                ));
            };
            let pel_size = self.load_len()?;
            for _ in 0..pel_size {
                let id: [u8; 16] = self.read_array()?;
                let nack = StreamNack {
                    delivery_time: i64::from_le_bytes(self.read_array()?),
                    delivery_count: self.load_len()?,
                    consumer: None,
                };
                if cg.pel.try_insert(&id, nack).is_err() {
                    return corrupt("Duplicated global PEL entry loading stream consumer group");
                }
            }
            let consumers = self.load_len()?;
            for _ in 0..consumers {
                let cname = self.load_string()?;
                let seen_time = i64::from_le_bytes(self.read_array()?);
                if !cg.create_consumer(&cname, seen_time) {
                    return corrupt("Duplicate stream consumer detected.");
                }
                let pel_size = self.load_len()?;
                for _ in 0..pel_size {
                    let id: [u8; 16] = self.read_array()?;
                    cg.consumer_pel_add(&cname, &id).or_else(corrupt)?;
                }
            }
            if self.deep && !cg.pel_all_owned() {
                return corrupt("Stream CG PEL entry without consumer");
            }
        }
        Ok(Some(Value::Stream(s)))
    }

    /// Two lengths: a stream ID's milliseconds and sequence.
    fn load_stream_id(&mut self) -> Result<StreamID, RdbError> {
        Ok(StreamID::new(self.load_len()?, self.load_len()?))
    }

    /// RDB_TYPE_SET: intset while every member is an integer and there are
    /// few enough of them, else a hashtable presized to the count.
    fn load_set(&mut self) -> Result<Option<Value>, RdbError> {
        let len = self.load_len()?;
        if len == 0 {
            return Ok(None);
        }
        let max = self.limits.set_max_intset_entries.min(1 << 30);
        let mut set = if len > max as u64 {
            let mut d = Dict::new();
            d.expand(self.cap(len));
            SetValue::Hashtable(Box::new(d))
        } else {
            SetValue::Intset(Intset::new())
        };
        for _ in 0..len {
            let ele = self.load_string()?;
            if let SetValue::Intset(is) = &mut set {
                match string2ll(&ele) {
                    Some(v) => {
                        if !is.add(v) {
                            return corrupt("Duplicate set members detected");
                        }
                        continue;
                    }
                    None => {
                        set_type_convert(&mut set, Some(&ele), max);
                        if let SetValue::Hashtable(d) = &mut set {
                            d.expand(self.cap(len));
                        }
                    }
                }
            }
            if let SetValue::Hashtable(d) = &mut set {
                if d.add(ele.into_boxed_slice(), ()).is_err() {
                    return corrupt("Duplicate set members detected");
                }
            }
        }
        Ok(Some(Value::Set(set)))
    }

    /// RDB_TYPE_ZSET_2 (binary scores) / RDB_TYPE_ZSET (text scores): a
    /// skiplist, turned into a listpack *after* loading if it is small.
    fn load_zset(&mut self, binary: bool) -> Result<Option<Value>, RdbError> {
        let len = self.load_len()?;
        if len == 0 {
            return Ok(None);
        }
        let mut zs = Box::<ZSet>::default();
        zs.dict.expand(self.cap(len));
        let (mut maxelelen, mut totelelen) = (0usize, 0usize);
        for _ in 0..len {
            let ele = self.load_string()?;
            let score = if binary {
                self.load_binary_double()?
            } else {
                self.load_double_text()?
            };
            if score.is_nan() {
                return corrupt("Zset with NAN score detected");
            }
            maxelelen = maxelelen.max(ele.len());
            totelelen += ele.len();
            let ele: Sds = ele.into_boxed_slice();
            if zs.dict.add(ele.clone(), score).is_err() {
                return corrupt("Duplicate zset fields detected");
            }
            zs.zsl.insert(score, ele);
        }
        let mut zv = ZSetValue::Skiplist(zs);
        zset_type_convert(
            &mut zv,
            &self.limits.zset,
            ZConvCheck::Store {
                maxelelen,
                totelelen,
            },
        );
        Ok(Some(Value::ZSet(zv)))
    }

    /// RDB_TYPE_HASH: a listpack while the pairs are few and short, a
    /// hashtable from the first long field or value on (or from the start
    /// when there are more than hash-max-listpack-entries).
    fn load_hash(&mut self) -> Result<Option<Value>, RdbError> {
        let mut len = self.load_len()?;
        if len == 0 {
            return Ok(None);
        }
        let lim = self.limits.hash;
        let mut h = HashValue::Listpack(Listpack::new());
        if len > lim.max_listpack_entries as u64 {
            hash_type_convert(&mut h, HashConvWhy::Load);
        }
        let mut dups = (self.deep && matches!(h, HashValue::Listpack(_)))
            .then(std::collections::HashSet::<Vec<u8>>::new);
        while len > 0 {
            let HashValue::Listpack(lp) = &mut h else {
                break;
            };
            len -= 1;
            let field = self.load_string()?;
            let value = self.load_string()?;
            if let Some(seen) = dups.as_mut() {
                if !seen.insert(field.clone()) {
                    return corrupt("Hash with dup elements");
                }
            }
            if field.len() > lim.max_listpack_value
                || value.len() > lim.max_listpack_value
                || !lp_safe_to_add(Some(lp), field.len() + value.len())
            {
                hash_type_convert(&mut h, HashConvWhy::Load);
                if let HashValue::Hashtable(d) = &mut h {
                    if d.add(field.into_boxed_slice(), value.into_boxed_slice())
                        .is_err()
                    {
                        return corrupt("Duplicate hash fields detected");
                    }
                }
                break;
            }
            lp.append(&field);
            lp.append(&value);
        }
        if let HashValue::Hashtable(d) = &mut h {
            // dictTryExpand(len): the pairs still to come.
            if len > storage::dict::DICT_HT_INITIAL_SIZE as u64 {
                d.expand(self.cap(len));
            }
            for _ in 0..len {
                let field = self.load_string()?;
                let value = self.load_string()?;
                if d.add(field.into_boxed_slice(), value.into_boxed_slice())
                    .is_err()
                {
                    return corrupt("Duplicate hash fields detected");
                }
            }
        }
        Ok(Some(Value::Hash(h)))
    }

    /// RDB_TYPE_LIST_QUICKLIST_2 (listpack or plain nodes) and the 6.x
    /// RDB_TYPE_LIST_QUICKLIST (ziplist nodes, converted): each saved node
    /// becomes one node again; empty nodes are skipped.
    fn load_quicklist(&mut self, v2: bool) -> Result<Option<Value>, RdbError> {
        let len = self.load_len()?;
        if len == 0 {
            return Ok(None);
        }
        let lim = self.limits;
        let mut ql = Quicklist::new(lim.list_max_listpack_size, lim.list_compress_depth);
        for _ in 0..len {
            let mut container = QUICKLIST_NODE_CONTAINER_PACKED;
            if v2 {
                container = self.load_len()?;
                if container != QUICKLIST_NODE_CONTAINER_PACKED
                    && container != QUICKLIST_NODE_CONTAINER_PLAIN
                {
                    return corrupt("Quicklist integrity check failed.");
                }
            }
            let data = self.load_string()?;
            if data.is_empty() {
                return corrupt("Quicklist node is empty");
            }
            if container == QUICKLIST_NODE_CONTAINER_PLAIN {
                ql.append_plain(data);
                continue;
            }
            let lp = if v2 {
                if self.deep {
                    self.sanitizations += 1;
                }
                match Listpack::from_vec(data) {
                    Ok(lp) => lp,
                    Err(_) => return corrupt("Listpack integrity check failed."),
                }
            } else {
                let mut lp = Listpack::new();
                if !ziplist_for_each(&data, |e| {
                    lp_push_entry(&mut lp, e);
                    true
                }) {
                    return corrupt("Ziplist integrity check failed.");
                }
                lp
            };
            ql.append_listpack(lp);
        }
        Ok((!ql.is_empty()).then(|| Value::List(Box::new(ql))))
    }

    // ------------------------------------------------------------ the file

    /// The magic "REDISnnnn": sets and returns the version.
    /// Reads the header once: a caller that checked it first (a replica,
    /// whose bad header is no corruption) leaves nothing for the loader.
    pub fn load_header(&mut self) -> Result<u32, RdbError> {
        if self.header_read {
            return Ok(self.version);
        }
        let magic: [u8; 9] = self.read_array()?;
        if &magic[..5] != b"REDIS" {
            return corrupt("Wrong signature trying to load DB from file");
        }
        // atoi(buf+5): leading digits, anything else stops it.
        let ver = magic[5..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .fold(0u32, |acc, &b| acc * 10 + u32::from(b - b'0'));
        if ver < 1 || ver > RDB_VERSION as u32 {
            return corrupt(format!("Can't handle RDB format version {ver}"));
        }
        self.version = ver;
        self.header_read = true;
        Ok(ver)
    }

    /// One step of rdbLoadRioWithLoadingCtx's loop: opcodes that describe
    /// the next key (expire, idle, freq) are gathered, everything else is
    /// returned as it comes.
    pub fn next_entry(&mut self) -> Result<Entry, RdbError> {
        let mut meta = crate::KeyMeta::default();
        loop {
            let t = self.load_type()?;
            match t {
                RDB_OPCODE_EXPIRETIME => {
                    let secs = i32::from_le_bytes(self.read_array()?);
                    meta.expire_ms = Some(secs as i64 * 1000);
                }
                RDB_OPCODE_EXPIRETIME_MS => {
                    meta.expire_ms = Some(i64::from_le_bytes(self.read_array()?));
                }
                RDB_OPCODE_FREQ => meta.freq = Some(self.read_u8()?),
                RDB_OPCODE_IDLE => meta.idle_secs = Some(self.load_len()?),
                RDB_OPCODE_EOF => {
                    let computed = self.checksum_so_far();
                    let stored = if self.version >= 5 {
                        Some(u64::from_le_bytes(self.read_array()?))
                    } else {
                        None
                    };
                    return Ok(Entry::Eof { stored, computed });
                }
                RDB_OPCODE_SELECTDB => return Ok(Entry::SelectDb(self.load_len()?)),
                RDB_OPCODE_RESIZEDB => {
                    let db_size = self.load_len()?;
                    let expires_size = self.load_len()?;
                    return Ok(Entry::ResizeDb {
                        db_size,
                        expires_size,
                    });
                }
                RDB_OPCODE_AUX => {
                    let key = self.load_string()?;
                    let value = self.load_string()?;
                    return Ok(Entry::Aux { key, value });
                }
                RDB_OPCODE_MODULE_AUX => {
                    return Err(RdbError::Unsupported(
                        "The RDB file contains AUX module data I can't load".into(),
                    ))
                }
                RDB_OPCODE_FUNCTION2 => return Ok(Entry::Function(self.load_string()?)),
                RDB_OPCODE_FUNCTION => {
                    // 7.0-rc1/rc2: name, engine, [desc], code.
                    let name = self.load_string()?;
                    let engine = self.load_string()?;
                    if self.load_len()? != 0 {
                        self.load_string()?;
                    }
                    let blob = self.load_string()?;
                    let mut code = b"#!".to_vec();
                    code.extend_from_slice(&engine);
                    code.extend_from_slice(b" name=");
                    code.extend_from_slice(&name);
                    code.push(b'\n');
                    code.extend_from_slice(&blob);
                    return Ok(Entry::Function(code));
                }
                _ => {
                    let key = self.load_string()?;
                    return Ok(match self.load_object(t)? {
                        Some(value) => Entry::Key { key, value, meta },
                        None => Entry::EmptyKey { key },
                    });
                }
            }
        }
    }
}

/// RDB_ENC_LZF as the u64 `load_len_enc` returns.
const RDB_ENC_LZF_U64: u64 = RDB_ENC_LZF as u64;

/// tryObjectEncoding on loaded bytes: `int` for a short canonical integer,
/// then embstr / raw by length (the Vec is kept, no copy, for raw).
fn string_value(bytes: Vec<u8>) -> StrValue {
    if bytes.len() <= 20 {
        if let Some(v) = string2ll(&bytes) {
            return StrValue::Int(v);
        }
    }
    if bytes.len() <= OBJ_ENCODING_EMBSTR_SIZE_LIMIT {
        StrValue::Embstr(bytes.into_boxed_slice())
    } else {
        StrValue::Raw(bytes)
    }
}

/// lpAppend / lpAppendInteger of a ziplist entry.
fn lp_push_entry(lp: &mut Listpack, e: LpEntry<'_>) {
    match e {
        LpEntry::Str(s) => lp.append(s),
        LpEntry::Int(v) => lp.append_int(v),
    }
}

/// The listpack of a hash or zset blob: an even number of entries and, in
/// deep mode, no repeated field (lpPairsValidateIntegrityAndDups).
fn pairs_listpack(blob: Vec<u8>, deep: bool) -> Option<Listpack> {
    let lp = Listpack::from_vec(blob).ok()?;
    let n = lp.len();
    if !n.is_multiple_of(2) {
        return None;
    }
    if deep {
        let mut seen = std::collections::HashSet::with_capacity(n / 2);
        let mut it = lp.iter();
        while let Some(f) = it.next() {
            it.next();
            if !seen.insert(f.to_vec()) {
                return None;
            }
        }
    }
    Some(lp)
}

/// ziplistPairsConvertAndValidateIntegrity: a ziplist of field/value (or
/// member/score) pairs as a listpack, refusing duplicate fields.
fn ziplist_pairs_to_listpack(zl: &[u8]) -> Option<Listpack> {
    let mut lp = Listpack::new();
    let mut seen = std::collections::HashSet::new();
    let mut count = 0usize;
    let ok = ziplist_for_each(zl, |e| {
        if count.is_multiple_of(2) && !seen.insert(e.to_vec()) {
            return false;
        }
        lp_push_entry(&mut lp, e);
        count += 1;
        true
    });
    (ok && count.is_multiple_of(2)).then_some(lp)
}

/// The blob-encoded types (rdbLoadObject's last big branch): validate the
/// blob, then convert it by the loading server's thresholds.
fn load_blob_object(
    rdbtype: u8,
    blob: Vec<u8>,
    lim: &LoadLimits,
    deep: bool,
) -> Result<Option<Value>, RdbError> {
    match rdbtype {
        RDB_TYPE_HASH_ZIPMAP => {
            let mut lp = Listpack::new();
            let mut seen = std::collections::HashSet::new();
            let mut maxlen = 0usize;
            let mut ok_sizes = true;
            let ok = zipmap_for_each(&blob, |f, v| {
                maxlen = maxlen.max(f.len()).max(v.len());
                if !lp_safe_to_add(Some(&lp), f.len() + v.len()) {
                    ok_sizes = false;
                    return false;
                }
                if !seen.insert(f.to_vec()) {
                    return false;
                }
                lp.append(f);
                lp.append(v);
                true
            });
            if !ok || !ok_sizes {
                return corrupt("Zipmap integrity check failed.");
            }
            let mut h = HashValue::Listpack(lp);
            if seen.len() > lim.hash.max_listpack_entries || maxlen > lim.hash.max_listpack_value {
                hash_type_convert(&mut h, HashConvWhy::Load);
            }
            Ok(Some(Value::Hash(h)))
        }
        RDB_TYPE_LIST_ZIPLIST => {
            let mut ql = Quicklist::new(lim.list_max_listpack_size, lim.list_compress_depth);
            if !ziplist_for_each(&blob, |e| {
                ql.push_tail(&e.to_vec());
                true
            }) {
                return corrupt("List ziplist integrity check failed.");
            }
            Ok((!ql.is_empty()).then(|| Value::List(Box::new(ql))))
        }
        RDB_TYPE_SET_INTSET => {
            let Some(is) = Intset::from_bytes(&blob, deep) else {
                return corrupt("Intset integrity check failed.");
            };
            let mut set = SetValue::Intset(is);
            set_type_convert(&mut set, None, lim.set_max_intset_entries);
            Ok(Some(Value::Set(set)))
        }
        RDB_TYPE_ZSET_ZIPLIST | RDB_TYPE_ZSET_LISTPACK => {
            let lp = if rdbtype == RDB_TYPE_ZSET_ZIPLIST {
                ziplist_pairs_to_listpack(&blob)
            } else {
                pairs_listpack(blob, deep)
            };
            let Some(lp) = lp else {
                return corrupt(if rdbtype == RDB_TYPE_ZSET_ZIPLIST {
                    "Zset ziplist integrity check failed."
                } else {
                    "Zset listpack integrity check failed."
                });
            };
            if lp.is_empty() {
                return Ok(None);
            }
            let mut zv = ZSetValue::Listpack(lp);
            if zv.len() > lim.zset.max_listpack_entries {
                zset_type_convert(&mut zv, &lim.zset, ZConvCheck::Sort);
            }
            Ok(Some(Value::ZSet(zv)))
        }
        RDB_TYPE_HASH_ZIPLIST | RDB_TYPE_HASH_LISTPACK => {
            let lp = if rdbtype == RDB_TYPE_HASH_ZIPLIST {
                ziplist_pairs_to_listpack(&blob)
            } else {
                pairs_listpack(blob, deep)
            };
            let Some(lp) = lp else {
                return corrupt(if rdbtype == RDB_TYPE_HASH_ZIPLIST {
                    "Hash ziplist integrity check failed."
                } else {
                    "Hash listpack integrity check failed."
                });
            };
            if lp.is_empty() {
                return Ok(None);
            }
            let mut h = HashValue::Listpack(lp);
            if storage::t_hash::hash_type_length(&h) > lim.hash.max_listpack_entries {
                hash_type_convert(&mut h, HashConvWhy::Load);
            }
            Ok(Some(Value::Hash(h)))
        }
        _ => corrupt(format!("Unknown RDB encoding type {rdbtype}")),
    }
}
