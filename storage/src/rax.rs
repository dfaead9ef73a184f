//! rax: Redis's radix tree (rax.c), node for node.
//!
//! Streams keep three kinds of ordered maps in a rax: the stream itself
//! (128-bit big-endian entry IDs -> listpacks), each consumer group's
//! pending entries list (IDs -> NACKs), and the names of groups and
//! consumers. A radix tree stores the shared prefix of keys once: a stream's
//! node IDs share their leading milliseconds bytes, so a tree of 16-byte
//! keys costs a few bytes per key rather than sixteen.
//!
//! ```text
//!   "foo" = 1, "foobar" = 2, "footer" = 3        (keys are written [..])
//!
//!              ("foo")            a compressed node: the chain f-o-o
//!                 |
//!             [ b   t ]           a key ("foo"), two children
//!              /     \
//!         ("ar")    ("er")        compressed again
//!            |         |
//!           []        []          "foobar", "footer"
//! ```
//!
//! Two kinds of node, as in Redis: a *branch* has one child per edge byte
//! (sorted, scanned linearly like rax.c does), a *compressed* node stands for
//! a chain of single-child nodes and has exactly one child. Any node can end
//! a key and hold its value.
//!
//! Why write the tree out instead of using a `BTreeMap`: Redis reports the
//! tree's *shape*. `XINFO STREAM` prints `radix-tree-nodes`, and `MEMORY
//! USAGE` of a stream charges every node of the stream, of each group PEL
//! and of each consumer PEL (object.c streamRadixTreeMemoryUsage). The node
//! count is not a function of the key set alone: it depends on the order of
//! inserts and removes, and on rax.c's exact split and re-compression rules
//! (for instance, removing a key from a compressed node longer than one
//! byte does not re-compress it). So insertion follows raxGenericInsert's
//! cases (the "ALGO 1" split and "ALGO 2" trim) and removal follows
//! raxRemove's clean-up and re-compression, and `numnodes` is counted at
//! the same places.
//!
//! Differences from rax.c, none of them observable:
//! - each node is a `Box` with its edge bytes and child pointers in two
//!   small vectors, instead of one packed, padded allocation;
//! - a key always has a value (Redis's `isnull` keys are `Rax<()>` here);
//! - the iterator of rax.c is replaced by `seek_*` descents (one per step,
//!   O(key length) like raxSeek) and a stack-based forward walk, `iter` and
//!   `iter_from`, for scans.
//!
//! Everything is iterative: a tree of keys "a", "aa", "aaa", ... is as deep
//! as it has keys, so no function (Drop included) recurses on the depth.

/// RAX_NODE_MAX_SIZE: the 29-bit size field of a node bounds a compressed
/// node's string; longer keys are split over several compressed nodes.
pub const RAX_NODE_MAX_SIZE: usize = (1 << 29) - 1;

/// A radix tree mapping byte strings to values.
pub struct Rax<V> {
    head: Box<RaxNode<V>>,
    /// numele: how many keys.
    numele: u64,
    /// numnodes: how many nodes, the head included (raxNew starts at 1).
    numnodes: u64,
}

struct RaxNode<V> {
    /// iskey: a key ends here, with this value.
    value: Option<V>,
    kind: Kind<V>,
}

enum Kind<V> {
    /// A non-compressed node: one child per edge byte, edges sorted. With
    /// no edges it is a leaf (which is always a key, except an empty head).
    Branch {
        edges: Vec<u8>,
        children: Vec<Box<RaxNode<V>>>,
    },
    /// iscompr: the chain of single-child nodes spelling `chars`, ending
    /// at `child`. Always at least two bytes long.
    Compressed {
        chars: Box<[u8]>,
        child: Box<RaxNode<V>>,
    },
}

impl<V> RaxNode<V> {
    /// raxNewNode(0, 0): a leaf that is not (yet) a key.
    fn leaf() -> Self {
        RaxNode {
            value: None,
            kind: Kind::Branch {
                edges: Vec::new(),
                children: Vec::new(),
            },
        }
    }

    /// A node spelling `s` above `child`: compressed when `s` has more
    /// than one byte, else a branch with one edge (rax.c sets
    /// `iscompr = len > 1` for every trimmed and postfix node).
    fn chain(value: Option<V>, s: &[u8], child: Box<RaxNode<V>>) -> Self {
        let kind = if s.len() > 1 {
            Kind::Compressed {
                chars: s.into(),
                child,
            }
        } else {
            Kind::Branch {
                edges: vec![s[0]],
                children: vec![child],
            }
        };
        RaxNode { value, kind }
    }

    fn is_key(&self) -> bool {
        self.value.is_some()
    }

    fn is_compressed(&self) -> bool {
        matches!(self.kind, Kind::Compressed { .. })
    }

    /// The node's `size` field: number of children, or compressed length.
    fn size(&self) -> usize {
        match &self.kind {
            Kind::Branch { edges, .. } => edges.len(),
            Kind::Compressed { chars, .. } => chars.len(),
        }
    }

    /// "Has exactly one child and is not a key": the nodes raxRemove frees
    /// on the way up and folds into compressed nodes.
    fn is_chain_link(&self) -> bool {
        !self.is_key() && (self.is_compressed() || self.size() == 1)
    }

    /// The bytes on the way to child `i` (an edge byte, or the whole
    /// compressed string).
    fn edge(&self, i: usize) -> &[u8] {
        match &self.kind {
            Kind::Branch { edges, .. } => &edges[i..i + 1],
            Kind::Compressed { chars, .. } => chars,
        }
    }

    fn num_children(&self) -> usize {
        match &self.kind {
            Kind::Branch { children, .. } => children.len(),
            Kind::Compressed { .. } => 1,
        }
    }

    fn child(&self, i: usize) -> &RaxNode<V> {
        match &self.kind {
            Kind::Branch { children, .. } => &children[i],
            Kind::Compressed { child, .. } => child,
        }
    }

    fn child_mut(&mut self, i: usize) -> &mut RaxNode<V> {
        match &mut self.kind {
            Kind::Branch { children, .. } => &mut children[i],
            Kind::Compressed { child, .. } => child,
        }
    }

    /// raxRemoveChild: unlink child `i` (and drop it). A compressed node
    /// losing its only child becomes an empty branch.
    fn remove_child(&mut self, i: usize) -> Box<RaxNode<V>> {
        match &mut self.kind {
            Kind::Branch { edges, children } => {
                edges.remove(i);
                children.remove(i)
            }
            Kind::Compressed { .. } => {
                let old = std::mem::replace(
                    &mut self.kind,
                    Kind::Branch {
                        edges: Vec::new(),
                        children: Vec::new(),
                    },
                );
                match old {
                    Kind::Compressed { child, .. } => child,
                    Kind::Branch { .. } => unreachable!(),
                }
            }
        }
    }

    /// Move out the only child of a compressed or one-edge node.
    fn into_only_child(self) -> (Box<[u8]>, Box<RaxNode<V>>) {
        match self.kind {
            Kind::Compressed { chars, child } => (chars, child),
            Kind::Branch {
                edges,
                mut children,
            } => (edges.into_boxed_slice(), children.pop().expect("one child")),
        }
    }
}

/// Where raxLowWalk stopped.
struct Walk {
    /// How many bytes of the key were matched.
    i: usize,
    /// The split position inside the stop node when it is compressed.
    splitpos: usize,
}

/// raxLowWalk's loop, shared by lookups and removal: follow `s` from `h`
/// while nodes match. Calls `step(child_index)` for every descent.
fn low_walk<'a, V>(
    mut h: &'a RaxNode<V>,
    s: &[u8],
    mut step: impl FnMut(usize),
) -> (Walk, &'a RaxNode<V>) {
    let (mut i, mut j) = (0, 0);
    while h.size() > 0 && i < s.len() {
        let idx = match &h.kind {
            Kind::Compressed { chars, .. } => {
                j = 0;
                while j < chars.len() && i < s.len() && chars[j] == s[i] {
                    j += 1;
                    i += 1;
                }
                if j != chars.len() {
                    break;
                }
                0
            }
            Kind::Branch { edges, .. } => match edges.iter().position(|&e| e == s[i]) {
                Some(p) => {
                    i += 1;
                    p
                }
                None => break,
            },
        };
        step(idx);
        h = h.child(idx);
        j = 0;
    }
    (Walk { i, splitpos: j }, h)
}

impl<V> Default for Rax<V> {
    fn default() -> Self {
        Rax::new()
    }
}

impl<V> Rax<V> {
    /// raxNew: an empty tree is one node, the head.
    pub fn new() -> Self {
        Rax {
            head: Box::new(RaxNode::leaf()),
            numele: 0,
            numnodes: 1,
        }
    }

    /// raxSize: the number of keys.
    pub fn len(&self) -> u64 {
        self.numele
    }

    pub fn is_empty(&self) -> bool {
        self.numele == 0
    }

    /// rax->numnodes, as XINFO STREAM's radix-tree-nodes reports it.
    pub fn numnodes(&self) -> u64 {
        self.numnodes
    }

    /// raxFind.
    pub fn find(&self, s: &[u8]) -> Option<&V> {
        let (w, h) = low_walk(&self.head, s, |_| {});
        if w.i != s.len() || (h.is_compressed() && w.splitpos != 0) {
            return None;
        }
        h.value.as_ref()
    }

    /// raxFind for a value the caller changes in place (the same walk as
    /// `low_walk`, holding a mutable handle).
    pub fn find_mut(&mut self, s: &[u8]) -> Option<&mut V> {
        let mut h: &mut RaxNode<V> = &mut self.head;
        let (mut i, mut j) = (0usize, 0usize);
        while h.size() > 0 && i < s.len() {
            let idx = match &h.kind {
                Kind::Compressed { chars, .. } => {
                    j = common_prefix(chars, &s[i..]);
                    i += j;
                    if j != chars.len() {
                        break;
                    }
                    0
                }
                Kind::Branch { edges, .. } => match edges.iter().position(|&e| e == s[i]) {
                    Some(p) => {
                        i += 1;
                        p
                    }
                    None => break,
                },
            };
            h = h.child_mut(idx);
            j = 0;
        }
        if i != s.len() || (h.is_compressed() && j != 0) {
            return None;
        }
        h.value.as_mut()
    }

    /// raxInsert: add `s` or overwrite its value; returns the old value.
    pub fn insert(&mut self, s: &[u8], data: V) -> Option<V> {
        match self.generic_insert(s, data, true) {
            Ok(old) => old,
            Err(_) => unreachable!("overwriting insert never refuses"),
        }
    }

    /// raxTryInsert: add `s` only if absent; gives `data` back otherwise.
    pub fn try_insert(&mut self, s: &[u8], data: V) -> Result<(), V> {
        self.generic_insert(s, data, false).map(|_| ())
    }

    /// raxGenericInsert. Ok(old value) when inserted or overwritten,
    /// Err(data) when the key exists and `overwrite` is false.
    fn generic_insert(&mut self, s: &[u8], data: V, overwrite: bool) -> Result<Option<V>, V> {
        let len = s.len();
        // raxLowWalk, keeping a mutable handle on the node we stop at.
        let mut h: &mut RaxNode<V> = &mut self.head;
        let (mut i, mut j) = (0usize, 0usize);
        while h.size() > 0 && i < len {
            let idx = match &h.kind {
                Kind::Compressed { chars, .. } => {
                    j = 0;
                    while j < chars.len() && i < len && chars[j] == s[i] {
                        j += 1;
                        i += 1;
                    }
                    if j != chars.len() {
                        break;
                    }
                    0
                }
                Kind::Branch { edges, .. } => match edges.iter().position(|&e| e == s[i]) {
                    Some(p) => {
                        i += 1;
                        p
                    }
                    None => break,
                },
            };
            h = h.child_mut(idx);
            j = 0;
        }

        // The whole key walked, and not stopped inside a compressed node:
        // this node represents the key already.
        if i == len && (!h.is_compressed() || j == 0) {
            return match h.value {
                Some(_) if !overwrite => Err(data),
                Some(ref mut v) => Ok(Some(std::mem::replace(v, data))),
                None => {
                    h.value = Some(data);
                    self.numele += 1;
                    Ok(None)
                }
            };
        }

        if h.is_compressed() && i != len {
            // ALGO 1: a mismatch at `j` inside a compressed node. The node
            // becomes [trimmed "chars[..j]"] -> [split node: chars[j]] ->
            // [postfix "chars[j+1..]"] -> next; the key's own byte is added
            // to the split node by the loop below.
            let old = std::mem::replace(h, RaxNode::leaf());
            let value = old.value;
            let Kind::Compressed { chars, child: next } = old.kind else {
                unreachable!()
            };
            let postfix = if chars.len() - j - 1 > 0 {
                self.numnodes += 1;
                Box::new(RaxNode::chain(None, &chars[j + 1..], next))
            } else {
                next
            };
            let mut splitnode = RaxNode {
                value: None,
                kind: Kind::Branch {
                    edges: vec![chars[j]],
                    children: vec![postfix],
                },
            };
            if j == 0 {
                // 3a: the split node replaces the old node, keeping its key.
                splitnode.value = value;
                *h = splitnode;
            } else {
                // 3b: a trimmed node keeps the common part and the key.
                self.numnodes += 1;
                *h = RaxNode::chain(value, &chars[..j], Box::new(splitnode));
                h = h.child_mut(0);
            }
        } else if h.is_compressed() && i == len {
            // ALGO 2: the key ends inside a compressed node: trim it at `j`
            // and hang the rest below as a new node holding the key.
            let old = std::mem::replace(h, RaxNode::leaf());
            let value = old.value;
            let Kind::Compressed { chars, child: next } = old.kind else {
                unreachable!()
            };
            self.numnodes += 1;
            let postfix = RaxNode::chain(Some(data), &chars[j..], next);
            *h = RaxNode::chain(value, &chars[..j], Box::new(postfix));
            self.numele += 1;
            return Ok(None);
        }

        // Add the missing nodes for the rest of the key: a compressed node
        // when a leaf would get a chain of single children, else one edge.
        while i < len {
            let idx = if h.size() == 0 && len - i > 1 {
                let comprsize = (len - i).min(RAX_NODE_MAX_SIZE);
                h.kind = Kind::Compressed {
                    chars: s[i..i + comprsize].into(),
                    child: Box::new(RaxNode::leaf()),
                };
                i += comprsize;
                0
            } else {
                let Kind::Branch { edges, children } = &mut h.kind else {
                    unreachable!("only branches get new edges")
                };
                let pos = edges.iter().position(|&e| e > s[i]).unwrap_or(edges.len());
                edges.insert(pos, s[i]);
                children.insert(pos, Box::new(RaxNode::leaf()));
                i += 1;
                pos
            };
            self.numnodes += 1;
            h = h.child_mut(idx);
        }
        if h.value.is_none() {
            self.numele += 1;
        }
        Ok(h.value.replace(data))
    }

    /// The node reached from the head by following child indexes.
    fn node_at(&self, path: &[usize]) -> &RaxNode<V> {
        let mut h: &RaxNode<V> = &self.head;
        for &i in path {
            h = h.child(i);
        }
        h
    }

    fn node_at_mut(&mut self, path: &[usize]) -> &mut RaxNode<V> {
        let mut h: &mut RaxNode<V> = &mut self.head;
        for &i in path {
            h = h.child_mut(i);
        }
        h
    }

    /// raxRemove: delete `s`, returning its value. The path from the head
    /// (rax.c's raxStack of parents) is kept as child indexes.
    pub fn remove(&mut self, s: &[u8]) -> Option<V> {
        let mut path = Vec::new();
        let (w, h) = low_walk(&self.head, s, |i| path.push(i));
        if w.i != s.len() || (h.is_compressed() && w.splitpos != 0) || !h.is_key() {
            return None;
        }
        let node = self.node_at_mut(&path);
        let old = node.value.take();
        let node_size = node.size();
        self.numele -= 1;

        // Where to try re-compression, as a depth into `path`.
        let mut trycompress: Option<usize> = None;
        if node_size == 0 {
            // A leaf: free it and every parent that was only a link in a
            // chain (not a key, one child), up to the head.
            let mut k = path.len();
            while k > 0 {
                self.numnodes -= 1;
                k -= 1;
                if !self.node_at(&path[..k]).is_chain_link() {
                    break;
                }
            }
            if k < path.len() {
                let parent = self.node_at_mut(&path[..k]);
                drop(parent.remove_child(path[k]));
                if parent.size() == 1 && !parent.is_key() {
                    trycompress = Some(k);
                }
            }
        } else if node_size == 1 {
            // A one-child node that is no longer a key may join a chain.
            trycompress = Some(path.len());
        }

        if let Some(mut k) = trycompress {
            // Go up to the first node of the compressible chain.
            while k > 0 && self.node_at(&path[..k - 1]).is_chain_link() {
                k -= 1;
            }
            // Count the chain: the start node and the links below it.
            let start = self.node_at(&path[..k]);
            let (mut comprsize, mut nodes) = (start.size(), 1usize);
            let mut h = start;
            while h.size() != 0 {
                h = h.child(h.num_children() - 1);
                if !h.is_chain_link() || comprsize + h.size() > RAX_NODE_MAX_SIZE {
                    break;
                }
                nodes += 1;
                comprsize += h.size();
            }
            if nodes > 1 {
                // Replace the chain by one compressed node over the first
                // node that is not part of it.
                let slot = self.node_at_mut(&path[..k]);
                let mut cur = std::mem::replace(slot, RaxNode::leaf());
                let mut chars = Vec::with_capacity(comprsize);
                for _ in 0..nodes {
                    let (edge, child) = cur.into_only_child();
                    chars.extend_from_slice(&edge);
                    cur = *child;
                }
                *slot = RaxNode {
                    value: None,
                    kind: Kind::Compressed {
                        chars: chars.into_boxed_slice(),
                        child: Box::new(cur),
                    },
                };
                self.numnodes = self.numnodes + 1 - nodes as u64;
            }
        }
        old
    }

    // ---- ordered access (raxSeek and friends) ----

    /// raxSeek "^" + raxNext: the smallest key, written into `key`.
    pub fn first(&self, key: &mut Vec<u8>) -> Option<&V> {
        key.clear();
        leftmost(&self.head, key)
    }

    /// raxSeek "$" + raxNext: the greatest key.
    pub fn last(&self, key: &mut Vec<u8>) -> Option<&V> {
        key.clear();
        rightmost(&self.head, key)
    }

    /// raxSeek ">=": the smallest key not below `target`.
    pub fn seek_ge(&self, target: &[u8], key: &mut Vec<u8>) -> Option<&V> {
        self.lower_bound(target, false, key)
    }

    /// raxSeek ">": the smallest key above `target`.
    pub fn seek_gt(&self, target: &[u8], key: &mut Vec<u8>) -> Option<&V> {
        self.lower_bound(target, true, key)
    }

    /// raxSeek "<=": the greatest key not above `target`.
    pub fn seek_le(&self, target: &[u8], key: &mut Vec<u8>) -> Option<&V> {
        self.upper_bound(target, false, key)
    }

    /// raxSeek "<": the greatest key below `target`.
    pub fn seek_lt(&self, target: &[u8], key: &mut Vec<u8>) -> Option<&V> {
        self.upper_bound(target, true, key)
    }

    /// Descend along `target`, remembering the deepest subtree whose keys
    /// are all greater; the answer is `target` itself or that subtree's
    /// smallest key.
    fn lower_bound(&self, target: &[u8], strict: bool, key: &mut Vec<u8>) -> Option<&V> {
        key.clear();
        // (subtree root, key length of its parent, the bytes to it)
        let mut fallback: Option<(&RaxNode<V>, usize, &[u8])> = None;
        let mut node: &RaxNode<V> = &self.head;
        let mut r = target;
        loop {
            if r.is_empty() {
                if !strict && node.is_key() {
                    return node.value.as_ref();
                }
                if node.num_children() > 0 {
                    fallback = Some((node.child(0), key.len(), node.edge(0)));
                }
                break;
            }
            match &node.kind {
                Kind::Compressed { chars, child } => {
                    let m = common_prefix(chars, r);
                    if m == chars.len() {
                        key.extend_from_slice(chars);
                        r = &r[m..];
                        node = child;
                        continue;
                    }
                    if m == r.len() || chars[m] > r[m] {
                        fallback = Some((child, key.len(), chars));
                    }
                    break;
                }
                Kind::Branch { edges, children } => {
                    let b = r[0];
                    let p = edges.partition_point(|&e| e < b);
                    let hit = p < edges.len() && edges[p] == b;
                    let greater = if hit { p + 1 } else { p };
                    if greater < edges.len() {
                        fallback = Some((&children[greater], key.len(), &edges[greater..=greater]));
                    }
                    if !hit {
                        break;
                    }
                    key.push(b);
                    r = &r[1..];
                    node = &children[p];
                }
            }
        }
        let (sub, len, edge) = fallback?;
        key.truncate(len);
        key.extend_from_slice(edge);
        leftmost(sub, key)
    }

    /// The mirror of `lower_bound`: the deepest candidate wins, and at one
    /// level a smaller sibling's subtree beats the node's own key.
    fn upper_bound(&self, target: &[u8], strict: bool, key: &mut Vec<u8>) -> Option<&V> {
        key.clear();
        let mut fallback: Option<Below<'_, V>> = None;
        let mut node: &RaxNode<V> = &self.head;
        let mut r = target;
        loop {
            if r.is_empty() {
                if !strict && node.is_key() {
                    return node.value.as_ref();
                }
                break;
            }
            // The node's own key is a proper prefix of the target.
            if node.is_key() {
                fallback = Some(Below::Node(node, key.len()));
            }
            match &node.kind {
                Kind::Compressed { chars, child } => {
                    let m = common_prefix(chars, r);
                    if m == chars.len() {
                        key.extend_from_slice(chars);
                        r = &r[m..];
                        node = child;
                        continue;
                    }
                    if m < r.len() && chars[m] < r[m] {
                        fallback = Some(Below::Subtree(child, key.len(), chars));
                    }
                    break;
                }
                Kind::Branch { edges, children } => {
                    let b = r[0];
                    let p = edges.partition_point(|&e| e < b);
                    if p > 0 {
                        fallback = Some(Below::Subtree(
                            &children[p - 1],
                            key.len(),
                            &edges[p - 1..p],
                        ));
                    }
                    if p < edges.len() && edges[p] == b {
                        key.push(b);
                        r = &r[1..];
                        node = &children[p];
                    } else {
                        break;
                    }
                }
            }
        }
        match fallback? {
            Below::Node(n, len) => {
                key.truncate(len);
                n.value.as_ref()
            }
            Below::Subtree(sub, len, edge) => {
                key.truncate(len);
                key.extend_from_slice(edge);
                rightmost(sub, key)
            }
        }
    }

    /// A forward walk over every key in order (raxSeek "^" + raxNext).
    pub fn iter(&self) -> RaxIter<'_, V> {
        RaxIter {
            stack: vec![(&*self.head, 0, 0)],
            key: Vec::new(),
            emit_top: true,
        }
    }

    /// A forward walk from the first key not below `target` (raxSeek
    /// ">=" + raxNext): the descent leaves on the stack exactly the parts
    /// of the tree that are still to come.
    pub fn iter_from(&self, target: &[u8]) -> RaxIter<'_, V> {
        let mut it = RaxIter {
            stack: Vec::new(),
            key: Vec::new(),
            emit_top: false,
        };
        let mut node: &RaxNode<V> = &self.head;
        let mut r = target;
        loop {
            let klen = it.key.len();
            if r.is_empty() {
                // Everything from this node down is >= target.
                it.stack.push((node, 0, klen));
                it.emit_top = true;
                break;
            }
            match &node.kind {
                Kind::Compressed { chars, child } => {
                    let m = common_prefix(chars, r);
                    if m == chars.len() {
                        it.stack.push((node, 1, klen));
                        it.key.extend_from_slice(chars);
                        r = &r[m..];
                        node = child;
                        continue;
                    }
                    // The child's subtree is entirely above or below.
                    let above = m == r.len() || chars[m] > r[m];
                    it.stack.push((node, if above { 0 } else { 1 }, klen));
                    break;
                }
                Kind::Branch { edges, children } => {
                    let b = r[0];
                    let p = edges.partition_point(|&e| e < b);
                    if p < edges.len() && edges[p] == b {
                        it.stack.push((node, p + 1, klen));
                        it.key.push(b);
                        r = &r[1..];
                        node = &children[p];
                    } else {
                        it.stack.push((node, p, klen));
                        break;
                    }
                }
            }
        }
        it
    }

    /// Every node reachable from the head, counted by walking (tests check
    /// it against `numnodes`).
    pub fn count_nodes(&self) -> u64 {
        let mut n = 0;
        let mut todo: Vec<&RaxNode<V>> = vec![&self.head];
        while let Some(h) = todo.pop() {
            n += 1;
            for i in 0..h.num_children() {
                todo.push(h.child(i));
            }
        }
        n
    }
}

/// A candidate below the target in `upper_bound`.
enum Below<'a, V> {
    /// The node's own key (its key length).
    Node(&'a RaxNode<V>, usize),
    /// The greatest key of a subtree hanging under (key length, bytes).
    Subtree(&'a RaxNode<V>, usize, &'a [u8]),
}

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// The smallest key at or under `node`, appended to `key`.
fn leftmost<'a, V>(mut node: &'a RaxNode<V>, key: &mut Vec<u8>) -> Option<&'a V> {
    loop {
        if node.is_key() || node.size() == 0 {
            return node.value.as_ref();
        }
        key.extend_from_slice(node.edge(0));
        node = node.child(0);
    }
}

/// The greatest key at or under `node`, appended to `key`.
fn rightmost<'a, V>(mut node: &'a RaxNode<V>, key: &mut Vec<u8>) -> Option<&'a V> {
    loop {
        if node.size() == 0 {
            return node.value.as_ref();
        }
        let last = node.num_children() - 1;
        key.extend_from_slice(node.edge(last));
        node = node.child(last);
    }
}

/// The forward iterator: a depth-first walk with an explicit stack of
/// (node, next child to visit, key length at the node). `next` returns the
/// key in a buffer that lives until the following call, as raxNext's
/// `ri.key` does.
pub struct RaxIter<'a, V> {
    stack: Vec<(&'a RaxNode<V>, usize, usize)>,
    key: Vec<u8>,
    /// The node on top was reached by a seek and is itself still to emit.
    emit_top: bool,
}

impl<'a, V> RaxIter<'a, V> {
    /// raxNext: the next key and its value, in order.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<(&[u8], &'a V)> {
        if std::mem::take(&mut self.emit_top) {
            let (top, _, _) = *self.stack.last()?;
            if let Some(v) = top.value.as_ref() {
                return Some((&self.key, v));
            }
        }
        loop {
            let (node, idx, klen) = self.stack.last_mut()?;
            let node: &'a RaxNode<V> = node;
            if *idx >= node.num_children() {
                self.stack.pop();
                continue;
            }
            let i = *idx;
            *idx += 1;
            let klen = *klen;
            self.key.truncate(klen);
            self.key.extend_from_slice(node.edge(i));
            let child = node.child(i);
            self.stack.push((child, 0, self.key.len()));
            if let Some(v) = child.value.as_ref() {
                return Some((&self.key, v));
            }
        }
    }
}

impl<V> Drop for Rax<V> {
    /// raxFree without recursion: children are moved to a work list so a
    /// deep tree cannot overflow the stack.
    fn drop(&mut self) {
        let mut todo: Vec<Box<RaxNode<V>>> = Vec::new();
        let head = std::mem::replace(&mut self.head, Box::new(RaxNode::leaf()));
        todo.push(head);
        while let Some(mut n) = todo.pop() {
            match std::mem::replace(
                &mut n.kind,
                Kind::Branch {
                    edges: Vec::new(),
                    children: Vec::new(),
                },
            ) {
                Kind::Branch { children, .. } => todo.extend(children),
                Kind::Compressed { child, .. } => todo.push(child),
            }
        }
    }
}

impl<V: std::fmt::Debug> std::fmt::Debug for Rax<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut m = f.debug_map();
        let mut it = self.iter();
        while let Some((k, v)) = it.next() {
            m.entry(&String::from_utf8_lossy(k), v);
        }
        m.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// splitmix64: the same generator as the C harness the expected node
    /// counts below came from (rax.c of Redis 7.0.15, raxInsert/raxRemove).
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E3779B97F4A7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
            z ^ (z >> 31)
        }
    }

    /// Replays the harness: random keys over an `alpha`-letter alphabet,
    /// two inserts for one remove; returns (numnodes, numele, history hash)
    /// and checks the tree against a BTreeMap model on the way.
    fn replay(seed: u64, steps: usize, alpha: u64, maxlen: u64) -> (u64, u64, u64) {
        let mut rng = Rng(seed);
        let mut r: Rax<u32> = Rax::new();
        let mut model = BTreeMap::new();
        let mut h: u64 = 0;
        for step in 0..steps {
            let len = rng.next() % (maxlen + 1);
            let k: Vec<u8> = (0..len)
                .map(|_| b'a' + (rng.next() % alpha) as u8)
                .collect();
            if rng.next() % 3 < 2 {
                assert_eq!(
                    r.insert(&k, step as u32),
                    model.insert(k.clone(), step as u32)
                );
            } else {
                assert_eq!(r.remove(&k), model.remove(&k));
            }
            h = h
                .wrapping_mul(1000003)
                .wrapping_add(r.numnodes() * 31 + r.len());
        }
        assert_eq!(r.count_nodes(), r.numnodes());
        assert_eq!(r.len(), model.len() as u64);
        let mut it = r.iter();
        for (k, v) in &model {
            assert_eq!(it.next(), Some((&k[..], v)));
        }
        assert!(it.next().is_none());
        (r.numnodes(), r.len(), h)
    }

    #[test]
    fn rax_node_counts_match_redis_rax_c() {
        assert_eq!(replay(1, 2000, 3, 6), (482, 381, 14049283057339588587));
        assert_eq!(replay(2, 5000, 2, 10), (1035, 762, 14248587313481078728));
        assert_eq!(replay(3, 3000, 4, 4), (228, 200, 16223166815743022412));
        assert_eq!(replay(4, 20000, 3, 12), (11466, 6316, 14019630629620377972));
        assert_eq!(replay(5, 10000, 26, 3), (2176, 1958, 999556813588444198));
    }

    #[test]
    fn rax_insert_splits_as_rax_h_describes() {
        let mut r = Rax::new();
        r.insert(b"foo", 1);
        // head ("foo") -> leaf
        assert_eq!(r.numnodes(), 2);
        r.insert(b"foobar", 2);
        // a compressed node appended: "foo" -> ["bar"] -> []
        assert_eq!(r.numnodes(), 3);
        r.insert(b"footer", 3);
        // "foo" -> [b t] -> "ar" -> [], "er" -> []
        assert_eq!(r.numnodes(), 6);
        r.insert(b"first", 4);
        // the split of "foo" at 1: (f) -> [i o] -> "rst" / (o) ...
        assert_eq!(r.numnodes(), 10);
        assert_eq!(r.count_nodes(), 10);
        assert_eq!(r.find(b"foo"), Some(&1));
        assert_eq!(r.find(b"fo"), None);
        assert_eq!(r.find(b"footer"), Some(&3));
        assert_eq!(r.find(b"footers"), None);
        // ALGO 2: a key ending inside a compressed node.
        r.insert(b"fooba", 5);
        assert_eq!(r.numnodes(), 11);
        assert_eq!(r.find(b"fooba"), Some(&5));
        assert_eq!(r.count_nodes(), r.numnodes());
    }

    #[test]
    fn rax_remove_keeps_a_compressed_key_node_uncompressed() {
        // "FOO" -> "BAR" -> []: removing FOO leaves the node of size 3
        // alone (raxRemove only re-compresses after a size-1 node).
        let mut r = Rax::new();
        r.insert(b"FOO", 1);
        r.insert(b"FOOBAR", 2);
        assert_eq!(r.numnodes(), 3);
        assert_eq!(r.remove(b"FOO"), Some(1));
        assert_eq!(r.numnodes(), 3);
        // Removing the last key frees everything but the head.
        assert_eq!(r.remove(b"FOOBAR"), Some(2));
        assert_eq!((r.numnodes(), r.len()), (1, 0));
        assert_eq!(r.count_nodes(), 1);
        assert_eq!(r.remove(b"FOOBAR"), None);
    }

    #[test]
    fn rax_try_insert_does_not_overwrite() {
        let mut r = Rax::new();
        assert_eq!(r.try_insert(b"k", 1), Ok(()));
        assert_eq!(r.try_insert(b"k", 2), Err(2));
        assert_eq!(r.find(b"k"), Some(&1));
        assert_eq!(r.insert(b"k", 3), Some(1));
        *r.find_mut(b"k").unwrap() += 1;
        assert_eq!(r.find(b"k"), Some(&4));
        // The empty key lives in the head.
        assert_eq!(r.insert(b"", 9), None);
        assert_eq!(r.find(b""), Some(&9));
        assert_eq!(r.len(), 2);
    }

    #[test]
    fn rax_seeks_match_an_ordered_map() {
        let mut rng = Rng(42);
        let mut r = Rax::new();
        let mut model = BTreeMap::new();
        for i in 0..3000u32 {
            let len = rng.next() % 6;
            let k: Vec<u8> = (0..len).map(|_| b'a' + (rng.next() % 3) as u8).collect();
            if rng.next().is_multiple_of(4) {
                r.remove(&k);
                model.remove(&k);
            } else {
                r.insert(&k, i);
                model.insert(k, i);
            }
        }
        let mut key = Vec::new();
        for len in 0..7 {
            for n in 0..3u64.pow(len) {
                let t: Vec<u8> = (0..len)
                    .map(|p| b'a' + ((n / 3u64.pow(p)) % 3) as u8)
                    .collect();
                let ge = model.range(t.clone()..).next();
                assert_eq!(
                    r.seek_ge(&t, &mut key).map(|v| (key.clone(), *v)),
                    ge.map(|(k, v)| (k.clone(), *v))
                );
                let gt = model
                    .range((
                        std::ops::Bound::Excluded(t.clone()),
                        std::ops::Bound::Unbounded,
                    ))
                    .next();
                assert_eq!(
                    r.seek_gt(&t, &mut key).map(|v| (key.clone(), *v)),
                    gt.map(|(k, v)| (k.clone(), *v))
                );
                let le = model.range(..=t.clone()).next_back();
                assert_eq!(
                    r.seek_le(&t, &mut key).map(|v| (key.clone(), *v)),
                    le.map(|(k, v)| (k.clone(), *v))
                );
                let lt = model.range(..t.clone()).next_back();
                assert_eq!(
                    r.seek_lt(&t, &mut key).map(|v| (key.clone(), *v)),
                    lt.map(|(k, v)| (k.clone(), *v))
                );
                // iter_from walks the same keys as the model's range.
                let mut it = r.iter_from(&t);
                for (k, v) in model.range(t.clone()..) {
                    assert_eq!(it.next(), Some((&k[..], v)));
                }
                assert!(it.next().is_none());
            }
        }
        assert_eq!(
            r.first(&mut key).map(|_| key.clone()),
            model.keys().next().cloned()
        );
        assert_eq!(
            r.last(&mut key).map(|_| key.clone()),
            model.keys().next_back().cloned()
        );
    }

    #[test]
    fn rax_empty_tree_seeks_nothing() {
        let r: Rax<()> = Rax::new();
        let mut key = Vec::new();
        assert!(r.first(&mut key).is_none());
        assert!(r.last(&mut key).is_none());
        assert!(r.seek_ge(b"a", &mut key).is_none());
        assert!(r.seek_le(b"a", &mut key).is_none());
        assert!(r.iter().next().is_none());
        assert!(r.iter_from(b"x").next().is_none());
    }

    #[test]
    fn rax_deep_chain_drops_without_recursion() {
        // "a", "aa", "aaa", ...: every node a key with one child.
        let mut r = Rax::new();
        let mut k = Vec::new();
        for i in 0..30_000u32 {
            k.push(b'a');
            r.insert(&k, i);
        }
        assert_eq!(r.len(), 30_000);
        let mut key = Vec::new();
        assert_eq!(r.last(&mut key), Some(&29_999));
        drop(r);
    }
}
