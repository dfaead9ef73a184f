//! The RDB writer (rdb.c rdbSave*): objects in, bytes out.
//!
//! `RdbWriter` buffers output in 64 KB chunks and folds each chunk into the
//! running CRC64 before handing it to the underlying `Write` (Redis's rio
//! does the same with `update_cksum`). It serves three callers:
//! - SAVE / BGSAVE: `save_header`, `save_info_aux_fields`, `save_function`,
//!   `save_select_db`, `save_resize_db`, `save_key_value_pair`... `finish`;
//! - DUMP: `save_object_type` + `save_object` (see dump.rs);
//! - OBJECT / DEBUG OBJECT `serializedlength`: `save_object` into a
//!   counting sink (`saved_object_len`), as rdbSavedObjectLen does.
//!
//! Every encoding choice below is Redis's, so the bytes are identical:
//! strings try the integer encodings (<= 11 chars), then LZF (> 20 bytes,
//! when `rdbcompression` is on), then verbatim.

use std::io::{self, Write};

use storage::object::{RObj, StrValue, Value};
use storage::quicklist::NodeEntry;
use storage::t_hash::HashValue;
use storage::t_set::SetValue;
use storage::t_stream::Stream;
use storage::t_zset::ZSetValue;
use storage::util::{ll2string, string2ll};

use crate::*;

/// How much output is buffered before it is checksummed and written.
const WRITE_CHUNK: usize = 64 * 1024;

/// What is saved before a key besides its type: EXPIRETIME_MS, and the
/// eviction hint (IDLE under an LRU policy, FREQ under LFU).
#[derive(Debug, Clone, Copy, Default)]
pub struct KeyMeta {
    pub expire_ms: Option<i64>,
    pub idle_secs: Option<u64>,
    pub freq: Option<u8>,
}

/// An RDB stream being written to `out`.
pub struct RdbWriter<W: Write> {
    out: W,
    buf: Vec<u8>,
    /// rdb->update_cksum is set (rdbchecksum yes).
    digest: Option<crc::Digest<'static, u64, crc::Table<16>>>,
    /// rdbcompression: try LZF on strings longer than 20 bytes.
    compress: bool,
    /// Bytes written so far (rio's processed_bytes).
    written: u64,
}

impl<W: Write> RdbWriter<W> {
    pub fn new(out: W, compress: bool, checksum: bool) -> Self {
        RdbWriter {
            out,
            buf: Vec::with_capacity(WRITE_CHUNK + 1024),
            digest: checksum.then(|| CRC64.digest()),
            compress,
            written: 0,
        }
    }

    /// Bytes produced so far (buffered ones included).
    pub fn written(&self) -> u64 {
        self.written
    }

    /// rdbWriteRaw.
    #[inline]
    fn raw(&mut self, b: &[u8]) -> io::Result<()> {
        self.written += b.len() as u64;
        if self.buf.len() + b.len() > WRITE_CHUNK {
            self.flush_chunk()?;
            if b.len() > WRITE_CHUNK {
                // A big blob goes straight through.
                if let Some(d) = self.digest.as_mut() {
                    d.update(b);
                }
                return self.out.write_all(b);
            }
        }
        self.buf.extend_from_slice(b);
        Ok(())
    }

    fn flush_chunk(&mut self) -> io::Result<()> {
        if let Some(d) = self.digest.as_mut() {
            d.update(&self.buf);
        }
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }

    /// Write out what is buffered and return the CRC64 so far (0 when
    /// checksums are off) and the underlying writer.
    pub fn into_inner(mut self) -> io::Result<(W, u64)> {
        self.flush_chunk()?;
        let crc = self.digest.take().map_or(0, |d| d.finalize());
        Ok((self.out, crc))
    }

    // ------------------------------------------------------------ primitives

    /// rdbSaveType: one byte (object types and opcodes).
    pub fn save_type(&mut self, t: u8) -> io::Result<()> {
        self.raw(&[t])
    }

    /// rdbSaveLen: 6-bit, 14-bit, 32-bit or 64-bit, big endian.
    pub fn save_len(&mut self, len: u64) -> io::Result<()> {
        if len < (1 << 6) {
            self.raw(&[(len as u8) | (RDB_6BITLEN << 6)])
        } else if len < (1 << 14) {
            self.raw(&[((len >> 8) as u8) | (RDB_14BITLEN << 6), len as u8])
        } else if len <= u32::MAX as u64 {
            let b = (len as u32).to_be_bytes();
            self.raw(&[RDB_32BITLEN, b[0], b[1], b[2], b[3]])
        } else {
            self.raw(&[RDB_64BITLEN])?;
            self.raw(&len.to_be_bytes())
        }
    }

    /// rdbSaveMillisecondTime: 8 bytes little endian.
    pub fn save_millisecond_time(&mut self, t: i64) -> io::Result<()> {
        self.raw(&t.to_le_bytes())
    }

    /// rdbSaveBinaryDoubleValue: IEEE 754 binary64, little endian.
    pub fn save_binary_double(&mut self, v: f64) -> io::Result<()> {
        self.raw(&v.to_le_bytes())
    }

    /// rdbSaveRawString: integer encoding, else LZF, else verbatim.
    pub fn save_raw_string(&mut self, s: &[u8]) -> io::Result<()> {
        if s.len() <= 11 {
            if let Some(enc) = string2ll(s).and_then(encode_integer) {
                return self.raw(enc.as_slice());
            }
        }
        // Under 20 bytes LZF cannot even compress "aaaaaaaaaaaaaaaaaa".
        if self.compress && s.len() > 20 && self.save_lzf_string(s)? {
            return Ok(());
        }
        self.save_len(s.len() as u64)?;
        self.raw(s)
    }

    /// rdbSaveLzfStringObject: only when LZF saves at least 4 bytes.
    /// Returns false when the string did not compress (saved verbatim then).
    fn save_lzf_string(&mut self, s: &[u8]) -> io::Result<bool> {
        let Some(c) = storage::lzf::lzf_compress(s, s.len() - 4) else {
            return Ok(false);
        };
        self.save_lzf_blob(&c, s.len())?;
        Ok(true)
    }

    /// rdbSaveLzfBlob: the 0xC3 marker, both lengths, the compressed bytes.
    pub fn save_lzf_blob(&mut self, compressed: &[u8], original_len: usize) -> io::Result<()> {
        self.raw(&[(RDB_ENCVAL << 6) | RDB_ENC_LZF])?;
        self.save_len(compressed.len() as u64)?;
        self.save_len(original_len as u64)?;
        self.raw(compressed)
    }

    /// rdbSaveLongLongAsStringObject: an integer, encoded when it fits 32
    /// bits, else as its decimal text.
    pub fn save_long_long_as_string(&mut self, v: i64) -> io::Result<()> {
        match encode_integer(v) {
            Some(enc) => self.raw(enc.as_slice()),
            None => {
                let text = ll2string(v);
                self.save_len(text.as_bytes().len() as u64)?;
                self.raw(text.as_bytes())
            }
        }
    }

    /// rdbSaveStringObject: an `int` string skips the decimal round trip.
    pub fn save_string_object(&mut self, s: &StrValue) -> io::Result<()> {
        match s {
            StrValue::Int(v) => self.save_long_long_as_string(*v),
            StrValue::Embstr(b) => self.save_raw_string(b),
            StrValue::Raw(b) => self.save_raw_string(b),
        }
    }

    // --------------------------------------------------------------- objects

    /// rdbSaveObjectType: the type byte for this encoding.
    pub fn save_object_type(&mut self, o: &RObj) -> io::Result<()> {
        self.save_type(object_type(o))
    }

    /// rdbSaveObject: the value part of a key.
    pub fn save_object(&mut self, o: &RObj) -> io::Result<()> {
        match &o.value {
            Value::Str(s) => self.save_string_object(s),
            Value::List(ql) => {
                // quicklist: node count, then per node its container tag
                // and its listpack (or plain element) as one string.
                self.save_len(ql.node_count() as u64)?;
                // A node compressed by list-compress-depth is saved as its
                // LZF block as it is (rdbSaveLzfBlob), whatever rdbcompression.
                for node in ql.nodes() {
                    let container = if node.is_plain() {
                        QUICKLIST_NODE_CONTAINER_PLAIN
                    } else {
                        QUICKLIST_NODE_CONTAINER_PACKED
                    };
                    self.save_len(container)?;
                    match (node.lzf(), node.raw()) {
                        (Some((lzf, sz)), _) => self.save_lzf_blob(lzf, sz)?,
                        (None, Some(NodeEntry::Packed(lp))) => {
                            self.save_raw_string(lp.as_bytes())?
                        }
                        (None, Some(NodeEntry::Plain(v))) => self.save_raw_string(v)?,
                        (None, None) => unreachable!("a raw node has its content"),
                    }
                }
                Ok(())
            }
            Value::Set(SetValue::Intset(is)) => self.save_raw_string(is.as_bytes()),
            Value::Set(SetValue::Hashtable(d)) => {
                self.save_len(d.len() as u64)?;
                for (member, _) in d.iter() {
                    self.save_raw_string(member)?;
                }
                Ok(())
            }
            Value::ZSet(ZSetValue::Listpack(lp)) => self.save_raw_string(lp.as_bytes()),
            Value::ZSet(ZSetValue::Skiplist(zs)) => {
                // From the greatest to the smallest, so that loading inserts
                // every member at the head of the skiplist in O(1).
                self.save_len(zs.zsl.len() as u64)?;
                let mut cur = zs.zsl.last();
                while let Some(n) = cur {
                    self.save_raw_string(zs.zsl.ele(n))?;
                    self.save_binary_double(zs.zsl.score(n))?;
                    cur = zs.zsl.prev(n);
                }
                Ok(())
            }
            Value::Hash(HashValue::Listpack(lp)) => self.save_raw_string(lp.as_bytes()),
            Value::Hash(HashValue::Hashtable(d)) => {
                self.save_len(d.len() as u64)?;
                for (field, value) in d.iter() {
                    self.save_raw_string(field)?;
                    self.save_raw_string(value)?;
                }
                Ok(())
            }
            Value::Stream(s) => self.save_stream(s),
        }
    }

    /// rdbSaveObject for a stream (RDB_TYPE_STREAM_LISTPACKS_2): every node
    /// as it is stored (master ID, listpack), then the counters a node walk
    /// could not give back cheaply, then each consumer group with its PEL
    /// and consumers. Consumer names are not stored in the group PEL: each
    /// consumer's own PEL says which entries are its (resolved on load).
    fn save_stream(&mut self, s: &Stream) -> io::Result<()> {
        self.save_len(s.rax.len())?;
        let mut nodes = s.nodes();
        while let Some((master_id, lp)) = nodes.next() {
            self.save_raw_string(master_id)?;
            self.save_raw_string(lp.as_bytes())?;
        }
        self.save_len(s.length)?;
        for id in [s.last_id, s.first_id, s.max_deleted_entry_id] {
            self.save_len(id.ms)?;
            self.save_len(id.seq)?;
        }
        self.save_len(s.entries_added)?;
        self.save_len(s.num_groups())?;
        let Some(mut groups) = s.groups() else {
            return Ok(());
        };
        while let Some((name, cg)) = groups.next() {
            self.save_raw_string(name)?;
            self.save_len(cg.last_id.ms)?;
            self.save_len(cg.last_id.seq)?;
            self.save_len(cg.entries_read as u64)?;
            // rdbSaveStreamPEL(nacks = 1): raw 128-bit big-endian IDs, each
            // with its delivery time and count.
            self.save_len(cg.pel.len())?;
            let mut pel = cg.pel.iter();
            while let Some((id, nack)) = pel.next() {
                self.raw(id)?;
                self.save_millisecond_time(nack.delivery_time)?;
                self.save_len(nack.delivery_count)?;
            }
            // rdbSaveStreamConsumers.
            self.save_len(cg.consumers.len())?;
            let mut consumers = cg.consumers.iter();
            while let Some((cname, consumer)) = consumers.next() {
                self.save_raw_string(cname)?;
                self.save_millisecond_time(consumer.seen_time)?;
                self.save_len(consumer.pel.len())?;
                let mut cpel = consumer.pel.iter();
                while let Some((id, ())) = cpel.next() {
                    self.raw(id)?;
                }
            }
        }
        Ok(())
    }

    /// rdbSaveKeyValuePair: [EXPIRETIME_MS] [IDLE | FREQ] type key value.
    pub fn save_key_value_pair(&mut self, key: &[u8], o: &RObj, meta: KeyMeta) -> io::Result<()> {
        if let Some(when) = meta.expire_ms {
            self.save_type(RDB_OPCODE_EXPIRETIME_MS)?;
            self.save_millisecond_time(when)?;
        }
        if let Some(idle) = meta.idle_secs {
            self.save_type(RDB_OPCODE_IDLE)?;
            self.save_len(idle)?;
        }
        if let Some(freq) = meta.freq {
            self.save_type(RDB_OPCODE_FREQ)?;
            self.raw(&[freq])?;
        }
        self.save_object_type(o)?;
        self.save_raw_string(key)?;
        self.save_object(o)
    }

    // ------------------------------------------------------------ file parts

    /// The magic: "REDIS" and the version in 4 digits.
    pub fn save_header(&mut self) -> io::Result<()> {
        self.raw(format!("REDIS{RDB_VERSION:04}").as_bytes())
    }

    /// rdbSaveAuxField: AUX key value (both as strings).
    pub fn save_aux_field(&mut self, key: &[u8], val: &[u8]) -> io::Result<()> {
        self.save_type(RDB_OPCODE_AUX)?;
        self.save_raw_string(key)?;
        self.save_raw_string(val)
    }

    /// rdbSaveInfoAuxFields without the repl-* fields.
    pub fn save_info_aux_fields(
        &mut self,
        redis_ver: &str,
        ctime: i64,
        used_mem: u64,
        aof_base: bool,
    ) -> io::Result<()> {
        self.save_info_aux_fields_rsi(redis_ver, ctime, used_mem, None, aof_base)
    }

    /// rdbSaveInfoAuxFields: with `rsi` (repl-stream-db, repl-id,
    /// repl-offset), saved by a master with a replication backlog, so the
    /// replica that loads the file knows where its stream continues.
    pub fn save_info_aux_fields_rsi(
        &mut self,
        redis_ver: &str,
        ctime: i64,
        used_mem: u64,
        rsi: Option<(i64, &str, i64)>,
        aof_base: bool,
    ) -> io::Result<()> {
        self.save_aux_field(b"redis-ver", redis_ver.as_bytes())?;
        self.save_aux_field(b"redis-bits", b"64")?;
        self.save_aux_field(b"ctime", ctime.to_string().as_bytes())?;
        self.save_aux_field(b"used-mem", used_mem.to_string().as_bytes())?;
        if let Some((stream_db, replid, offset)) = rsi {
            self.save_aux_field(b"repl-stream-db", stream_db.to_string().as_bytes())?;
            self.save_aux_field(b"repl-id", replid.as_bytes())?;
            self.save_aux_field(b"repl-offset", offset.to_string().as_bytes())?;
        }
        self.save_aux_field(b"aof-base", if aof_base { b"1" } else { b"0" })
    }

    /// rdbSaveFunctions, one library: FUNCTION2 <code>.
    pub fn save_function(&mut self, code: &[u8]) -> io::Result<()> {
        self.save_type(RDB_OPCODE_FUNCTION2)?;
        self.save_raw_string(code)
    }

    /// SELECTDB <dbid>.
    pub fn save_select_db(&mut self, dbid: u64) -> io::Result<()> {
        self.save_type(RDB_OPCODE_SELECTDB)?;
        self.save_len(dbid)
    }

    /// RESIZEDB <db size> <expires size>: sizing hints for the loader.
    pub fn save_resize_db(&mut self, db_size: u64, expires_size: u64) -> io::Result<()> {
        self.save_type(RDB_OPCODE_RESIZEDB)?;
        self.save_len(db_size)?;
        self.save_len(expires_size)
    }

    /// EOF and the CRC64 of everything before it (0 when checksums are
    /// off: the loader then skips the check). Returns the writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.save_type(RDB_OPCODE_EOF)?;
        let (mut out, crc) = self.into_inner()?;
        out.write_all(&crc.to_le_bytes())?;
        Ok(out)
    }
}

/// The RDB type byte of an object (rdbSaveObjectType).
pub fn object_type(o: &RObj) -> u8 {
    match &o.value {
        Value::Str(_) => RDB_TYPE_STRING,
        Value::List(_) => RDB_TYPE_LIST_QUICKLIST_2,
        Value::Set(SetValue::Intset(_)) => RDB_TYPE_SET_INTSET,
        Value::Set(SetValue::Hashtable(_)) => RDB_TYPE_SET,
        Value::ZSet(ZSetValue::Listpack(_)) => RDB_TYPE_ZSET_LISTPACK,
        Value::ZSet(ZSetValue::Skiplist(_)) => RDB_TYPE_ZSET_2,
        Value::Hash(HashValue::Listpack(_)) => RDB_TYPE_HASH_LISTPACK,
        Value::Hash(HashValue::Hashtable(_)) => RDB_TYPE_HASH,
        Value::Stream(_) => RDB_TYPE_STREAM_LISTPACKS_2,
    }
}

/// rdbEncodeInteger: values that fit 8, 16 or 32 signed bits.
fn encode_integer(v: i64) -> Option<EncodedInt> {
    let mut e = EncodedInt {
        bytes: [0; 5],
        len: 0,
    };
    let le = v.to_le_bytes();
    if (-(1 << 7)..(1 << 7)).contains(&v) {
        e.bytes[0] = (RDB_ENCVAL << 6) | RDB_ENC_INT8;
        e.bytes[1] = le[0];
        e.len = 2;
    } else if (-(1 << 15)..(1 << 15)).contains(&v) {
        e.bytes[0] = (RDB_ENCVAL << 6) | RDB_ENC_INT16;
        e.bytes[1..3].copy_from_slice(&le[..2]);
        e.len = 3;
    } else if (-(1i64 << 31)..(1i64 << 31)).contains(&v) {
        e.bytes[0] = (RDB_ENCVAL << 6) | RDB_ENC_INT32;
        e.bytes[1..5].copy_from_slice(&le[..4]);
        e.len = 5;
    } else {
        return None;
    }
    Some(e)
}

/// An integer-encoded string: up to 5 bytes, no allocation.
struct EncodedInt {
    bytes: [u8; 5],
    len: usize,
}

impl EncodedInt {
    fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// A `Write` that only counts (rdbSavedObjectLen passes a NULL rio).
struct Counter;

impl Write for Counter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// rdbSavedObjectLen: the bytes `save_object` would write (OBJECT / DEBUG
/// OBJECT serializedlength), with the same compression decisions.
pub fn saved_object_len(o: &RObj, compress: bool) -> u64 {
    let mut w = RdbWriter::new(Counter, compress, false);
    // Writing to Counter cannot fail.
    let _ = w.save_object(o);
    w.written()
}
