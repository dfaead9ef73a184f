//! A client's output buffer, laid out as Redis 7.0's (networking.c:
//! `c->buf` / `c->bufpos` and the `c->reply` list of `clientReplyBlock`s).
//!
//! Two parts, filled in order:
//!
//! 1. **The static buffer** (`buf`): one allocation of `buf_usable_size`
//!    bytes (16 KB, PROTO_REPLY_CHUNK_BYTES, at first). Small replies, which
//!    are nearly all replies, are copied here and written from here.
//!    `clients_cron_resize_output_buffer` (server.rs's client cron) shrinks
//!    it for clients whose replies are small and grows it back when it
//!    filled up (INFO `reply_buffer_shrinks` / `reply_buffer_expands`).
//! 2. **The reply list** (`blocks`): what does not fit in the static buffer
//!    goes to a list of blocks of at least 16 KB (`_addReplyProtoToList`):
//!    fill the tail block's free space, then start a new block sized
//!    max(rest, 16 KB). Once the list has a block, nothing more goes to the
//!    static buffer, so the bytes stay in order.
//!
//! Why a list and not one growing buffer: a reply that grows to gigabytes
//! (a client pipelining `GET`s of a big value and never reading) costs one
//! copy of each byte into its block. A single buffer would be reallocated
//! and copied again at every doubling, and the whole loop would stall on
//! those copies. Written bytes free their block at once, too.
//!
//! Writing (`write_to`) gathers the static buffer and the first blocks in
//! one `writev(2)`, as Redis's `_writevToClient`: at most IOV_MAX pieces and
//! about NET_MAX_WRITES_PER_EVENT bytes per call. `sentlen` is how much of
//! the first piece already went out.
//!
//! Positions (`len`, `truncate`, `insert_at`, `byte_at`) count the bytes
//! not written yet, in order. Nothing is written while a command runs, so
//! a position a command takes stays valid until it ends.
//!
//! Deferred lengths (`add_deferred_len` / `set_deferred`, Redis's
//! addReplyDeferredLen / setDeferredReply): a reply whose element count is
//! known only at the end puts an empty placeholder block in the list;
//! later elements go to the blocks after it; the header is finally copied
//! into the free room of the block before it, or the one after it, or a
//! block of its own, in place of the placeholder.

use std::collections::VecDeque;
use std::io;

use protocol::reply::ReplySink;

use crate::object::jemalloc_size_class;

/// PROTO_REPLY_CHUNK_BYTES: the static buffer's initial size and the
/// smallest reply block.
pub const PROTO_REPLY_CHUNK_BYTES: usize = 16 * 1024;

/// PROTO_REPLY_MIN_BYTES: the static buffer never shrinks below 1 KB.
pub const PROTO_REPLY_MIN_BYTES: usize = 1024;

/// IOV_MAX: the most pieces one writev(2) takes on Linux.
const IOV_MAX: usize = 1024;

/// NET_MAX_WRITES_PER_EVENT (networking.rs): one writev gathers about this
/// much, the rest waits for the next call.
const NET_MAX_WRITES_PER_EVENT: usize = 64 * 1024;

/// clientReplyBlock: `data.capacity()` is Redis's `size` (the allocation,
/// internal fragmentation included), `data.len()` its `used`.
#[derive(Clone, Debug, Default)]
struct ReplyBlock {
    data: Vec<u8>,
    /// Non-zero: this is the (empty) placeholder of the deferred length
    /// with that number (Redis's NULL list node).
    deferred: u32,
}

impl ReplyBlock {
    /// zmalloc_usable(size): a block of at least `size` bytes that takes
    /// over the allocator's rounding (jemalloc's size class), as Redis's
    /// `tail->size = usable_size - sizeof(clientReplyBlock)`.
    fn with_size(size: usize) -> ReplyBlock {
        ReplyBlock {
            data: Vec::with_capacity(jemalloc_size_class(size)),
            deferred: 0,
        }
    }

    fn size(&self) -> usize {
        self.data.capacity()
    }

    fn avail(&self) -> usize {
        self.data.capacity() - self.data.len()
    }
}

/// A deferred length's placeholder (Redis returns its list node): the
/// index its block had and its number. Placeholders filled meanwhile may
/// have moved it to a lower index, never a higher one. Only good during
/// the command that made it.
#[derive(Clone, Copy, Debug)]
pub struct DeferredLen {
    index: usize,
    id: u32,
}

/// The output buffer of one client: static buffer plus reply list.
#[derive(Clone, Debug)]
pub struct ReplyBuffer {
    /// The static buffer: `buf.len()` is Redis's `bufpos`,
    /// `buf.capacity()` its `buf_usable_size`. Never grows by appending.
    buf: Vec<u8>,
    /// Bytes of the first piece (the static buffer while it holds any,
    /// else the first block) already written.
    sentlen: usize,
    /// The reply list.
    blocks: VecDeque<ReplyBlock>,
    /// reply_bytes: the sum of the blocks' sizes.
    reply_bytes: usize,
    /// The sum of the blocks' used bytes, so `len` is O(1).
    list_used: usize,
    /// buf_peak: the most the static buffer held since the last reset
    /// (clients_cron_resize_output_buffer), and when that reset was.
    buf_peak: usize,
    buf_peak_last_reset_time: i64,
    /// The number of the last deferred-length placeholder.
    last_deferred: u32,
}

impl Default for ReplyBuffer {
    fn default() -> ReplyBuffer {
        ReplyBuffer::new(PROTO_REPLY_CHUNK_BYTES)
    }
}

impl ReplySink for ReplyBuffer {
    #[inline]
    fn put(&mut self, b: &[u8]) {
        self.extend_from_slice(b);
    }
}

impl ReplyBuffer {
    /// createClient's `c->buf = zmalloc_usable(PROTO_REPLY_CHUNK_BYTES)`.
    pub fn new(buf_size: usize) -> ReplyBuffer {
        ReplyBuffer {
            buf: Vec::with_capacity(buf_size),
            sentlen: 0,
            blocks: VecDeque::new(),
            reply_bytes: 0,
            list_used: 0,
            buf_peak: 0,
            buf_peak_last_reset_time: crate::server::mstime(),
            last_deferred: 0,
        }
    }

    /// A buffer with no static part: everything goes to blocks. For a
    /// scratch reply that is thrown away (CLIENT REPLY OFF), so no 16 KB
    /// is allocated for it.
    pub fn unbuffered() -> ReplyBuffer {
        ReplyBuffer::new(0)
    }

    /// _addReplyToBufferOrList: the static buffer while the list is empty
    /// and it has room, the rest to the list.
    #[inline]
    pub fn extend_from_slice(&mut self, s: &[u8]) {
        let n = self.add_to_buffer(s);
        if n < s.len() {
            self.add_proto_to_list(&s[n..]);
        }
    }

    /// _addReplyToBuffer: as much of `s` as fits; returns how much.
    #[inline]
    fn add_to_buffer(&mut self, s: &[u8]) -> usize {
        if !self.blocks.is_empty() {
            return 0;
        }
        let n = s.len().min(self.buf.capacity() - self.buf.len());
        self.buf.extend_from_slice(&s[..n]);
        // The peak is taken after the append, as Redis.
        self.buf_peak = self.buf_peak.max(self.buf.len());
        n
    }

    /// _addReplyProtoToList: fill the tail block's free room, then a new
    /// block of max(rest, PROTO_REPLY_CHUNK_BYTES).
    fn add_proto_to_list(&mut self, mut s: &[u8]) {
        if let Some(tail) = self.blocks.back_mut() {
            let copy = tail.avail().min(s.len());
            tail.data.extend_from_slice(&s[..copy]);
            self.list_used += copy;
            s = &s[copy..];
        }
        if !s.is_empty() {
            let mut block = ReplyBlock::with_size(s.len().max(PROTO_REPLY_CHUNK_BYTES));
            block.data.extend_from_slice(s);
            self.list_used += s.len();
            self.reply_bytes += block.size();
            self.blocks.push_back(block);
        }
    }

    /// Bytes not written yet.
    pub fn len(&self) -> usize {
        self.buf.len() + self.list_used - self.sentlen
    }

    /// clientHasPendingReplies: anything left to write.
    #[inline]
    pub fn is_empty(&self) -> bool {
        if self.buf.len() > self.sentlen {
            return false;
        }
        // The first block may be written in part (sentlen), the others hold
        // bytes unless they are empty placeholders.
        let skip = if self.buf.is_empty() { self.sentlen } else { 0 };
        let mut iter = self.blocks.iter();
        match iter.next() {
            None => true,
            Some(first) => first.data.len() <= skip && iter.all(|b| b.data.is_empty()),
        }
    }

    /// Drop everything pending (a client that will be closed, a fake
    /// client's reply once read). The static buffer keeps its allocation.
    pub fn clear(&mut self) {
        self.buf.clear();
        self.blocks.clear();
        self.sentlen = 0;
        self.reply_bytes = 0;
        self.list_used = 0;
    }

    /// listLength(c->reply): CLIENT LIST's oll.
    pub fn list_len(&self) -> usize {
        self.blocks.len()
    }

    /// c->reply_bytes.
    pub fn reply_bytes(&self) -> usize {
        self.reply_bytes
    }

    /// getClientOutputBufferMemoryUsage for a normal client: the blocks'
    /// sizes plus each list entry. CLIENT LIST's omem, and what the output
    /// buffer limits compare. The static buffer is not in it.
    pub fn output_memory(&self) -> usize {
        self.reply_bytes + self.blocks.len() * std::mem::size_of::<ReplyBlock>()
    }

    /// c->bufpos: bytes the static buffer holds (CLIENT LIST obl).
    pub fn bufpos(&self) -> usize {
        self.buf.len()
    }

    /// c->buf_usable_size (CLIENT LIST rbs).
    pub fn buf_usable_size(&self) -> usize {
        self.buf.capacity()
    }

    /// c->buf_peak (CLIENT LIST rbp).
    pub fn buf_peak(&self) -> usize {
        self.buf_peak
    }

    /// Every allocation the buffer holds: the static buffer, the blocks
    /// and the list's own array (client eviction's measure).
    pub fn allocated(&self) -> usize {
        self.buf.capacity()
            + self.output_memory()
            + (self.blocks.capacity() - self.blocks.len()) * std::mem::size_of::<ReplyBlock>()
    }

    /// The pending bytes as slices, in order.
    pub fn chunks(&self) -> impl Iterator<Item = &[u8]> {
        let (buf_skip, block_skip) = if self.buf.is_empty() {
            (0, self.sentlen)
        } else {
            (self.sentlen, 0)
        };
        std::iter::once(&self.buf[buf_skip.min(self.buf.len())..])
            .chain(
                self.blocks
                    .iter()
                    .enumerate()
                    .map(move |(i, b)| &b.data[if i == 0 { block_skip } else { 0 }..]),
            )
            .filter(|s| !s.is_empty())
    }

    /// The pending bytes in one piece (a fake client's reply, read by the
    /// script that ran the command: Redis concatenates `buf` and the list
    /// the same way).
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len());
        for s in self.chunks() {
            out.extend_from_slice(s);
        }
        out
    }

    /// The pending bytes as one slice, for a fake client whose reply is
    /// read in place (a script's redis.call): the static buffer when the
    /// list is empty, else everything moved into one block first.
    pub fn make_contiguous(&mut self) -> &[u8] {
        if !self.blocks.is_empty() {
            let all = self.to_vec();
            self.clear();
            let mut block = ReplyBlock::with_size(all.len());
            block.data.extend_from_slice(&all);
            self.reply_bytes = block.size();
            self.list_used = block.data.len();
            self.blocks.push_back(block);
            return &self.blocks[0].data;
        }
        &self.buf[self.sentlen..]
    }

    /// The pending byte at `pos`.
    pub fn byte_at(&self, mut pos: usize) -> Option<u8> {
        for s in self.chunks() {
            if pos < s.len() {
                return Some(s[pos]);
            }
            pos -= s.len();
        }
        None
    }

    /// Keep the first `len` pending bytes, drop the rest (a reply taken
    /// back: CLIENT REPLY OFF, a replica's error). Blocks past the cut are
    /// freed.
    pub fn truncate(&mut self, len: usize) {
        let mut excess = self.len().saturating_sub(len);
        while excess > 0 {
            let keep_from_head = if self.blocks.len() == 1 && self.buf.is_empty() {
                self.sentlen
            } else {
                0
            };
            let Some(tail) = self.blocks.back_mut() else {
                break;
            };
            let room = tail.data.len() - keep_from_head;
            if room > excess {
                let new_len = tail.data.len() - excess;
                tail.data.truncate(new_len);
                self.list_used -= excess;
                return;
            }
            excess -= room;
            self.list_used -= room;
            if keep_from_head > 0 {
                // The partly written head block: only its written part stays.
                tail.data.truncate(keep_from_head);
                return;
            }
            let gone = self.blocks.pop_back().expect("tail exists");
            self.reply_bytes -= gone.size();
        }
        if excess > 0 {
            let new_len = self.buf.len() - excess;
            self.buf.truncate(new_len);
        }
    }

    /// Insert `bytes` at pending position `pos` (pushes that must precede
    /// the reply a command has started: pubsub.rs, tracking.rs). The part
    /// after `pos` is taken out and appended again after `bytes`.
    pub fn insert_at(&mut self, pos: usize, bytes: &[u8]) {
        let pos = pos.min(self.len());
        let rest = {
            let mut rest = Vec::with_capacity(self.len() - pos);
            let mut at = 0usize;
            for s in self.chunks() {
                let end = at + s.len();
                if end > pos {
                    rest.extend_from_slice(&s[pos.saturating_sub(at)..]);
                }
                at = end;
            }
            rest
        };
        self.truncate(pos);
        self.extend_from_slice(bytes);
        self.extend_from_slice(&rest);
    }

    /// Append every pending byte of `other` (a CLIENT REPLY OFF scratch
    /// turned back on, a stashed reply).
    pub fn append(&mut self, other: &ReplyBuffer) {
        for s in other.chunks() {
            self.extend_from_slice(s);
        }
    }

    /// addReplyDeferredLen: an empty placeholder block at the tail; the
    /// replies that follow go to new blocks after it. First, as Redis's
    /// trimReplyUnusedTailSpace, a small tail block with much free room
    /// is shrunk to what it holds, since nothing more will be appended to it.
    pub fn add_deferred_len(&mut self) -> DeferredLen {
        if let Some(tail) = self.blocks.back_mut() {
            if tail.avail() > tail.size() / 4 && tail.data.len() < PROTO_REPLY_CHUNK_BYTES {
                let old = tail.size();
                let want = jemalloc_size_class(tail.data.len().max(1));
                let mut data = Vec::with_capacity(want);
                data.extend_from_slice(&tail.data);
                tail.data = data;
                self.reply_bytes = self.reply_bytes + tail.size() - old;
            }
        }
        self.last_deferred = self.last_deferred.wrapping_add(1).max(1);
        self.blocks.push_back(ReplyBlock {
            data: Vec::new(),
            deferred: self.last_deferred,
        });
        DeferredLen {
            index: self.blocks.len() - 1,
            id: self.last_deferred,
        }
    }

    /// setDeferredReply: put `s` where the placeholder is. Into the free
    /// room of the block before it as far as it fits; what is left in
    /// front of the block after it when that one has the room and is not
    /// big (a memmove of at most 64 KB); else in a block of its own.
    pub fn set_deferred(&mut self, d: DeferredLen, mut s: &[u8]) {
        // Gone when the buffer was dropped meanwhile (client closing).
        let top = d.index.min(self.blocks.len().saturating_sub(1));
        let Some(idx) = (0..=top)
            .rev()
            .find(|&i| self.blocks.get(i).is_some_and(|b| b.deferred == d.id))
        else {
            return;
        };
        if idx > 0 {
            let prev = &mut self.blocks[idx - 1];
            let copy = prev.avail().min(s.len());
            prev.data.extend_from_slice(&s[..copy]);
            self.list_used += copy;
            s = &s[copy..];
            if s.is_empty() {
                self.blocks.remove(idx);
                return;
            }
        }
        if let Some(next) = self.blocks.get_mut(idx + 1) {
            if next.deferred == 0
                && next.avail() >= s.len()
                && next.data.len() < PROTO_REPLY_CHUNK_BYTES * 4
            {
                next.data.splice(0..0, s.iter().copied());
                self.list_used += s.len();
                self.blocks.remove(idx);
                return;
            }
        }
        let mut block = ReplyBlock::with_size(s.len());
        block.data.extend_from_slice(s);
        self.list_used += s.len();
        self.reply_bytes += block.size();
        self.blocks[idx] = block;
    }

    /// _writevToClient: one writev(2) of the static buffer and the first
    /// blocks, then free what went out. Returns the bytes written.
    pub fn write_to(&mut self, fd: std::os::fd::RawFd) -> io::Result<usize> {
        let mut iov: Vec<libc::iovec> = Vec::with_capacity(16);
        let mut total = 0usize;
        for s in self.chunks() {
            if iov.len() == IOV_MAX || total >= NET_MAX_WRITES_PER_EVENT {
                break;
            }
            iov.push(libc::iovec {
                iov_base: s.as_ptr() as *mut libc::c_void,
                iov_len: s.len(),
            });
            total += s.len();
        }
        if iov.is_empty() {
            // Only empty placeholders left (cannot outlive a command, but
            // never leave them to spin on).
            self.blocks.retain(|b| !b.data.is_empty());
            self.reply_bytes = self.blocks.iter().map(|b| b.size()).sum();
            return Ok(0);
        }
        // SAFETY: every iovec points into a live buffer of `self`, which is
        // not touched until writev returns.
        let n = unsafe { libc::writev(fd, iov.as_ptr(), iov.len() as libc::c_int) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = n as usize;
        self.consume(n);
        Ok(n)
    }

    /// Mark `n` pending bytes written: the static buffer first (reset to
    /// empty once all of it went out), then whole blocks are freed and the
    /// first partly written one keeps `sentlen`.
    fn consume(&mut self, mut n: usize) {
        if !self.buf.is_empty() {
            let left = self.buf.len() - self.sentlen;
            if n < left {
                self.sentlen += n;
                return;
            }
            n -= left;
            self.buf.clear();
            self.sentlen = 0;
        }
        while let Some(head) = self.blocks.front() {
            let left = head.data.len() - self.sentlen;
            if n < left {
                self.sentlen += n;
                return;
            }
            // Written out (or an empty block): free it.
            n -= left;
            let gone = self.blocks.pop_front().expect("head exists");
            self.reply_bytes -= gone.size();
            self.list_used -= gone.data.len();
            self.sentlen = 0;
        }
    }

    /// clientsCronResizeOutputBuffer (server.c), for one client: shrink
    /// the static buffer to its recent peak when that peak was under half
    /// of it (not below 1 KB), double it (up to 16 KB) when the peak filled
    /// it; the peak restarts from what is held every `peak_reset_time` ms
    /// (-1: never). Returns +1 for an expand, -1 for a shrink, 0 otherwise,
    /// for INFO's reply_buffer_expands / reply_buffer_shrinks.
    pub fn cron_resize(&mut self, now_ms: i64, peak_reset_time: i64) -> i32 {
        let usable = self.buf.capacity();
        let shrink_target = usable / 2;
        let expand_target = usable * 2;
        let mut new_size = 0;
        let mut outcome = 0;
        if shrink_target >= PROTO_REPLY_MIN_BYTES && self.buf_peak < shrink_target {
            new_size = PROTO_REPLY_MIN_BYTES.max(self.buf_peak + 1);
            outcome = -1;
        } else if expand_target < PROTO_REPLY_CHUNK_BYTES * 2 && self.buf_peak == usable {
            new_size = PROTO_REPLY_CHUNK_BYTES.min(expand_target);
            outcome = 1;
        }
        if peak_reset_time >= 0 && now_ms - self.buf_peak_last_reset_time >= peak_reset_time {
            self.buf_peak = self.buf.len();
            self.buf_peak_last_reset_time = now_ms;
        }
        if new_size > 0 {
            // zmalloc_usable: the new buffer takes the allocator's rounding.
            let mut buf = Vec::with_capacity(jemalloc_size_class(new_size));
            buf.extend_from_slice(&self.buf);
            self.buf = buf;
        }
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(r: &ReplyBuffer) -> Vec<u8> {
        let v = r.to_vec();
        assert_eq!(v.len(), r.len(), "len() agrees with the bytes");
        let used: usize = r.blocks.iter().map(|b| b.data.len()).sum();
        assert_eq!(used, r.list_used);
        let sizes: usize = r.blocks.iter().map(|b| b.size()).sum();
        assert_eq!(sizes, r.reply_bytes);
        v
    }

    #[test]
    fn small_replies_stay_in_the_static_buffer() {
        let mut r = ReplyBuffer::default();
        r.extend_from_slice(b"+OK\r\n");
        r.extend_from_slice(b":1\r\n");
        assert_eq!(r.list_len(), 0);
        assert_eq!(r.bufpos(), 9);
        assert_eq!(r.output_memory(), 0);
        assert_eq!(pending(&r), b"+OK\r\n:1\r\n");
    }

    #[test]
    fn overflow_fills_the_tail_block_then_a_new_one() {
        let mut r = ReplyBuffer::default();
        r.extend_from_slice(&vec![b'a'; PROTO_REPLY_CHUNK_BYTES - 10]);
        // 10 bytes to the static buffer, 20 to a first 16 KB block.
        r.extend_from_slice(&[b'b'; 30]);
        assert_eq!(r.bufpos(), PROTO_REPLY_CHUNK_BYTES);
        assert_eq!(r.list_len(), 1);
        assert_eq!(r.reply_bytes(), PROTO_REPLY_CHUNK_BYTES);
        // Once the list exists, the static buffer gets nothing more.
        r.extend_from_slice(b"c");
        assert_eq!(r.list_len(), 1);
        // A 1 MB value: the tail block's room, then one block of the rest.
        r.extend_from_slice(&vec![b'd'; 1 << 20]);
        assert_eq!(r.list_len(), 2);
        assert!(r.reply_bytes() >= PROTO_REPLY_CHUNK_BYTES + (1 << 20) - PROTO_REPLY_CHUNK_BYTES);
        assert_eq!(r.len(), PROTO_REPLY_CHUNK_BYTES - 10 + 30 + 1 + (1 << 20));
        let all = pending(&r);
        assert_eq!(all[PROTO_REPLY_CHUNK_BYTES - 10], b'b');
        assert_eq!(all[PROTO_REPLY_CHUNK_BYTES + 20], b'c');
        assert_eq!(*all.last().unwrap(), b'd');
    }

    #[test]
    fn consume_frees_written_blocks() {
        let mut r = ReplyBuffer::new(4);
        r.extend_from_slice(b"abcdefgh");
        r.extend_from_slice(&vec![b'x'; PROTO_REPLY_CHUNK_BYTES]);
        r.consume(2);
        assert_eq!(r.len(), 6 + PROTO_REPLY_CHUNK_BYTES);
        assert_eq!(r.byte_at(0), Some(b'c'));
        r.consume(4); // static buffer done, 2 bytes into the first block
        assert_eq!(r.bufpos(), 0);
        assert_eq!(r.byte_at(0), Some(b'g'));
        r.consume(2 + PROTO_REPLY_CHUNK_BYTES - 1);
        assert_eq!(r.len(), 1);
        r.consume(1);
        assert!(r.is_empty());
        assert_eq!(r.list_len(), 0);
        assert_eq!(r.reply_bytes(), 0);
    }

    #[test]
    fn truncate_and_insert_keep_order_across_blocks() {
        let mut r = ReplyBuffer::new(8);
        r.extend_from_slice(b"01234567");
        r.extend_from_slice(b"89");
        let mark = r.len();
        r.extend_from_slice(&vec![b'z'; 40_000]);
        r.truncate(mark);
        assert_eq!(pending(&r), b"0123456789");
        assert_eq!(r.list_len(), 1);
        r.insert_at(3, b"--");
        assert_eq!(pending(&r), b"012--3456789");
        r.truncate(2);
        assert_eq!(pending(&r), b"01");
        assert_eq!(r.list_len(), 0);
        assert_eq!(r.reply_bytes(), 0);
    }

    #[test]
    fn deferred_len_goes_before_the_elements() {
        let mut r = ReplyBuffer::new(4);
        r.extend_from_slice(b"+AB\r\n");
        let d = r.add_deferred_len();
        r.extend_from_slice(b"$1\r\nx\r\n");
        r.set_deferred(d, b"*1\r\n");
        assert_eq!(pending(&r), b"+AB\r\n*1\r\n$1\r\nx\r\n");
        // With nothing before it in the list.
        let mut r = ReplyBuffer::new(16);
        let d = r.add_deferred_len();
        r.extend_from_slice(b":7\r\n");
        r.set_deferred(d, b"*1\r\n");
        assert_eq!(pending(&r), b"*1\r\n:7\r\n");
        assert!(r.list_len() >= 1);
    }

    #[test]
    fn cron_resize_shrinks_idle_and_grows_full_buffers() {
        let mut r = ReplyBuffer::default();
        r.extend_from_slice(b"+OK\r\n");
        assert_eq!(r.cron_resize(0, 5000), -1);
        assert_eq!(r.buf_usable_size(), PROTO_REPLY_MIN_BYTES);
        assert_eq!(pending(&r), b"+OK\r\n");
        r.extend_from_slice(&[b'a'; PROTO_REPLY_MIN_BYTES]);
        assert_eq!(r.buf_peak(), PROTO_REPLY_MIN_BYTES);
        assert_eq!(r.cron_resize(0, 5000), 1);
        assert_eq!(r.buf_usable_size(), 2 * PROTO_REPLY_MIN_BYTES);
    }
}
