//! Redis's skiplist for sorted sets (`zskiplist` in server.h, t_zset.c).
//!
//! A skiplist is a sorted linked list with extra "express lanes": every node
//! has 1..=32 levels, level 0 links every node in (score, member) order and
//! each higher level skips ahead. A node gets level k+1 with probability
//! ZSKIPLIST_P = 1/4, so a search touches O(log N) nodes.
//!
//! Two additions make it Redis's skiplist rather than a textbook one:
//! - every forward link carries a `span`: how many level-0 steps it jumps.
//!   Adding the spans walked during a search gives the rank of a node, so
//!   ZRANK and ZRANGE-by-index are O(log N) too;
//! - every node has a `backward` pointer (level 0 only) for reverse walks
//!   (ZREVRANGE and friends).
//!
//! Rust note: Redis links nodes with raw pointers. Here the nodes live in a
//! `Vec` (an arena) and links are indices into it; index 0 is the header
//! node, freed slots are reused. Each member is still its own allocation
//! (`Box<[u8]>`), as each `sds` is in Redis.

use std::num::NonZeroUsize;

use crate::dict::Dict;

/// ZSKIPLIST_MAXLEVEL: 32 levels are enough for 2^64 elements at p = 1/4.
pub const ZSKIPLIST_MAXLEVEL: usize = 32;

/// ZSKIPLIST_P: the chance that a node also gets the next level up.
pub const ZSKIPLIST_P: f64 = 0.25;

/// The arena index of the header node (zsl->header).
const HEADER: usize = 0;

/// zrangespec: a score interval; `minex`/`maxex` make a bound exclusive
/// (the `(` prefix in ZRANGEBYSCORE).
#[derive(Debug, Clone, Copy)]
pub struct ZRangeSpec {
    pub min: f64,
    pub max: f64,
    pub minex: bool,
    pub maxex: bool,
}

/// One end of a zlexrangespec: `-` / `+` are the infinities, `[x` is
/// inclusive, `(x` exclusive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LexBound {
    MinusInf,
    PlusInf,
    Incl(Vec<u8>),
    Excl(Vec<u8>),
}

/// zlexrangespec: a member interval for the BYLEX commands.
#[derive(Debug, Clone)]
pub struct ZLexRangeSpec {
    pub min: LexBound,
    pub max: LexBound,
}

impl ZRangeSpec {
    /// zslValueGteMin
    pub fn value_gte_min(&self, v: f64) -> bool {
        if self.minex {
            v > self.min
        } else {
            v >= self.min
        }
    }

    /// zslValueLteMax
    pub fn value_lte_max(&self, v: f64) -> bool {
        if self.maxex {
            v < self.max
        } else {
            v <= self.max
        }
    }

    /// True when no score can be inside (min > max, or min == max with an
    /// exclusive end).
    pub fn is_empty(&self) -> bool {
        self.min > self.max || (self.min == self.max && (self.minex || self.maxex))
    }
}

impl ZLexRangeSpec {
    /// zslLexValueGteMin
    pub fn value_gte_min(&self, v: &[u8]) -> bool {
        match &self.min {
            LexBound::MinusInf => true,
            LexBound::PlusInf => false,
            LexBound::Incl(m) => v >= &m[..],
            LexBound::Excl(m) => v > &m[..],
        }
    }

    /// zslLexValueLteMax
    pub fn value_lte_max(&self, v: &[u8]) -> bool {
        match &self.max {
            LexBound::MinusInf => false,
            LexBound::PlusInf => true,
            LexBound::Incl(m) => v <= &m[..],
            LexBound::Excl(m) => v < &m[..],
        }
    }

    /// True when no member can be inside (zslIsInLexRange's first test).
    pub fn is_empty(&self) -> bool {
        use LexBound::*;
        match (&self.min, &self.max) {
            (PlusInf, _) | (_, MinusInf) => true,
            (MinusInf, _) | (_, PlusInf) => false,
            (Incl(a), Incl(b)) => a > b,
            (Incl(a) | Excl(a), Incl(b) | Excl(b)) => a >= b,
        }
    }
}

/// A link to another node: its arena index. No link ever points at the
/// header (index 0): forward links go to real nodes, and a node right after
/// the header has no backward link. So a link is a `NonZeroUsize`, and
/// `Option<Link>` is one word, like Redis's pointer (it would be two words
/// as an `Option<usize>`).
type Link = NonZeroUsize;

/// The link to node `n` (never the header).
fn link(n: usize) -> Option<Link> {
    debug_assert!(n != HEADER, "no link points at the header");
    NonZeroUsize::new(n)
}

/// zskiplistLevel: a forward link and how many level-0 steps it covers
/// (16 bytes, as in Redis).
#[derive(Debug, Clone, Copy, Default)]
struct Level {
    forward: Option<Link>,
    span: usize,
}

impl Level {
    fn forward(&self) -> Option<usize> {
        self.forward.map(Link::get)
    }

    fn set_forward(&mut self, f: Option<usize>) {
        self.forward = f.and_then(link);
    }
}

/// zskiplistNode. The levels are a boxed slice, not a `Vec`: a node's
/// height is fixed when it is created, so no capacity word is needed, and
/// the node is 48 bytes in the arena.
#[derive(Debug)]
struct Node {
    ele: Box<[u8]>,
    score: f64,
    backward: Option<Link>,
    level: Box<[Level]>,
}

impl Node {
    fn backward(&self) -> Option<usize> {
        self.backward.map(Link::get)
    }

    fn set_backward(&mut self, b: Option<usize>) {
        self.backward = b.and_then(link);
    }
}

/// zskiplist
#[derive(Debug)]
pub struct ZSkipList {
    nodes: Vec<Node>,
    free: Vec<usize>,
    tail: Option<usize>,
    length: usize,
    level: usize,
}

impl Default for ZSkipList {
    fn default() -> Self {
        Self::new()
    }
}

/// zslRandomLevel: level 1, plus one more with probability 1/4 each time.
fn random_level() -> usize {
    let threshold = (ZSKIPLIST_P * 65535.0) as u32;
    let mut level = 1;
    while (rand::random::<u32>() & 0xFFFF) < threshold && level < ZSKIPLIST_MAXLEVEL {
        level += 1;
    }
    level
}

/// Does (score, ele) sort before (s, e)? Members break score ties (sdscmp).
fn less(score: f64, ele: &[u8], s: f64, e: &[u8]) -> bool {
    score < s || (score == s && ele < e)
}

impl ZSkipList {
    /// zslCreate: an empty list whose header has all 32 levels.
    pub fn new() -> ZSkipList {
        let header = Node {
            ele: Box::default(),
            score: 0.0,
            backward: None,
            level: vec![Level::default(); ZSKIPLIST_MAXLEVEL].into_boxed_slice(),
        };
        ZSkipList {
            nodes: vec![header],
            free: Vec::new(),
            tail: None,
            length: 0,
            level: 1,
        }
    }

    pub fn len(&self) -> usize {
        self.length
    }

    pub fn is_empty(&self) -> bool {
        self.length == 0
    }

    /// The node with the lowest (score, member), or None.
    pub fn first(&self) -> Option<usize> {
        self.nodes[HEADER].level[0].forward()
    }

    pub fn last(&self) -> Option<usize> {
        self.tail
    }

    /// The following node at level 0.
    pub fn next(&self, n: usize) -> Option<usize> {
        self.nodes[n].level[0].forward()
    }

    /// The backward pointer.
    pub fn prev(&self, n: usize) -> Option<usize> {
        self.nodes[n].backward()
    }

    pub fn ele(&self, n: usize) -> &[u8] {
        &self.nodes[n].ele
    }

    pub fn score(&self, n: usize) -> f64 {
        self.nodes[n].score
    }

    /// Number of levels of node `n` (for tests and DEBUG-style output).
    pub fn node_level(&self, n: usize) -> usize {
        self.nodes[n].level.len()
    }

    /// Walk from the header to the last node before (score, ele) on every
    /// level, recording it in `update` and its rank in `rank`.
    fn find_update(
        &self,
        score: f64,
        ele: &[u8],
    ) -> ([usize; ZSKIPLIST_MAXLEVEL], [usize; ZSKIPLIST_MAXLEVEL]) {
        let mut update = [HEADER; ZSKIPLIST_MAXLEVEL];
        let mut rank = [0usize; ZSKIPLIST_MAXLEVEL];
        let mut x = HEADER;
        for i in (0..self.level).rev() {
            rank[i] = if i == self.level - 1 { 0 } else { rank[i + 1] };
            while let Some(f) = self.nodes[x].level[i].forward() {
                let fnode = &self.nodes[f];
                if !less(fnode.score, &fnode.ele, score, ele) {
                    break;
                }
                rank[i] += self.nodes[x].level[i].span;
                x = f;
            }
            update[i] = x;
        }
        (update, rank)
    }

    fn alloc(&mut self, node: Node) -> usize {
        match self.free.pop() {
            Some(i) => {
                self.nodes[i] = node;
                i
            }
            None => {
                self.nodes.push(node);
                self.nodes.len() - 1
            }
        }
    }

    /// zslInsert: the caller made sure `ele` is not already present (the
    /// zset's dict knows). Returns the new node.
    pub fn insert(&mut self, score: f64, ele: Box<[u8]>) -> usize {
        debug_assert!(!score.is_nan());
        let (mut update, mut rank) = self.find_update(score, &ele);
        let level = random_level();
        if level > self.level {
            for i in self.level..level {
                rank[i] = 0;
                update[i] = HEADER;
                self.nodes[HEADER].level[i].span = self.length;
            }
            self.level = level;
        }
        let x = self.alloc(Node {
            ele,
            score,
            backward: None,
            level: vec![Level::default(); level].into_boxed_slice(),
        });
        for i in 0..level {
            let u = update[i];
            let f = self.nodes[u].level[i].forward();
            self.nodes[x].level[i].set_forward(f);
            self.nodes[u].level[i].set_forward(Some(x));
            // The old span of update[i] is split in two around x.
            self.nodes[x].level[i].span = self.nodes[u].level[i].span - (rank[0] - rank[i]);
            self.nodes[u].level[i].span = (rank[0] - rank[i]) + 1;
        }
        // Levels above x's height now jump over one more node.
        for (i, &u) in update.iter().enumerate().take(self.level).skip(level) {
            self.nodes[u].level[i].span += 1;
        }
        let b = if update[0] == HEADER {
            None
        } else {
            Some(update[0])
        };
        self.nodes[x].set_backward(b);
        match self.nodes[x].level[0].forward() {
            Some(f) => self.nodes[f].set_backward(Some(x)),
            None => self.tail = Some(x),
        }
        self.length += 1;
        x
    }

    /// zslDeleteNode: unlink `x`, given its predecessors on every level.
    fn delete_node(&mut self, x: usize, update: &[usize; ZSKIPLIST_MAXLEVEL]) -> Box<[u8]> {
        for (i, &u) in update.iter().enumerate().take(self.level) {
            if self.nodes[u].level[i].forward() == Some(x) {
                self.nodes[u].level[i].span += self.nodes[x].level[i].span;
                self.nodes[u].level[i].span -= 1;
                let f = self.nodes[x].level[i].forward();
                self.nodes[u].level[i].set_forward(f);
            } else {
                self.nodes[u].level[i].span -= 1;
            }
        }
        match self.nodes[x].level[0].forward() {
            Some(f) => {
                let b = self.nodes[x].backward();
                self.nodes[f].set_backward(b);
            }
            None => self.tail = self.nodes[x].backward(),
        }
        while self.level > 1 && self.nodes[HEADER].level[self.level - 1].forward().is_none() {
            self.level -= 1;
        }
        self.length -= 1;
        let ele = std::mem::take(&mut self.nodes[x].ele);
        self.nodes[x].level = Box::default();
        self.free.push(x);
        ele
    }

    /// zslDelete: remove the node with exactly (score, ele). Returns the
    /// member if it was found.
    pub fn delete(&mut self, score: f64, ele: &[u8]) -> Option<Box<[u8]>> {
        let (update, _) = self.find_update(score, ele);
        let x = self.nodes[update[0]].level[0].forward()?;
        if self.nodes[x].score == score && &self.nodes[x].ele[..] == ele {
            Some(self.delete_node(x, &update))
        } else {
            None
        }
    }

    /// zslUpdateScore: move (curscore, ele) to `newscore`. If the node stays
    /// between its neighbours the score changes in place; otherwise it is
    /// removed and re-inserted. Returns the node.
    pub fn update_score(&mut self, curscore: f64, ele: &[u8], newscore: f64) -> usize {
        let (update, _) = self.find_update(curscore, ele);
        let x = self.nodes[update[0]].level[0]
            .forward()
            .expect("zsl_update_score: member not found");
        debug_assert!(self.nodes[x].score == curscore && &self.nodes[x].ele[..] == ele);
        let prev_ok = match self.nodes[x].backward() {
            None => true,
            Some(b) => self.nodes[b].score < newscore,
        };
        let next_ok = match self.nodes[x].level[0].forward() {
            None => true,
            Some(f) => self.nodes[f].score > newscore,
        };
        if prev_ok && next_ok {
            self.nodes[x].score = newscore;
            return x;
        }
        let ele = self.delete_node(x, &update);
        self.insert(newscore, ele)
    }

    /// zslGetRank: 1-based rank of (score, ele), or 0 if absent.
    pub fn get_rank(&self, score: f64, ele: &[u8]) -> usize {
        let mut rank = 0;
        let mut x = HEADER;
        for i in (0..self.level).rev() {
            while let Some(f) = self.nodes[x].level[i].forward() {
                let fnode = &self.nodes[f];
                if !(fnode.score < score || (fnode.score == score && &fnode.ele[..] <= ele)) {
                    break;
                }
                rank += self.nodes[x].level[i].span;
                x = f;
            }
            if x != HEADER && &self.nodes[x].ele[..] == ele {
                return rank;
            }
        }
        0
    }

    /// zslGetElementByRank: the node at 1-based `rank`.
    pub fn get_element_by_rank(&self, rank: usize) -> Option<usize> {
        let mut traversed = 0;
        let mut x = HEADER;
        for i in (0..self.level).rev() {
            while let Some(f) = self.nodes[x].level[i].forward() {
                if traversed + self.nodes[x].level[i].span > rank {
                    break;
                }
                traversed += self.nodes[x].level[i].span;
                x = f;
            }
            if traversed == rank {
                return if x == HEADER { None } else { Some(x) };
            }
        }
        None
    }

    /// zslIsInRange: could any node be inside `range`?
    fn is_in_range(&self, range: &ZRangeSpec) -> bool {
        if range.is_empty() {
            return false;
        }
        match (self.tail, self.first()) {
            (Some(t), Some(h)) => {
                range.value_gte_min(self.nodes[t].score) && range.value_lte_max(self.nodes[h].score)
            }
            _ => false,
        }
    }

    /// zslFirstInRange: the first node with a score inside `range`.
    pub fn first_in_range(&self, range: &ZRangeSpec) -> Option<usize> {
        if !self.is_in_range(range) {
            return None;
        }
        let mut x = HEADER;
        for i in (0..self.level).rev() {
            while let Some(f) = self.nodes[x].level[i].forward() {
                if range.value_gte_min(self.nodes[f].score) {
                    break;
                }
                x = f;
            }
        }
        let x = self.nodes[x].level[0].forward()?;
        range.value_lte_max(self.nodes[x].score).then_some(x)
    }

    /// zslLastInRange: the last node with a score inside `range`.
    pub fn last_in_range(&self, range: &ZRangeSpec) -> Option<usize> {
        if !self.is_in_range(range) {
            return None;
        }
        let mut x = HEADER;
        for i in (0..self.level).rev() {
            while let Some(f) = self.nodes[x].level[i].forward() {
                if !range.value_lte_max(self.nodes[f].score) {
                    break;
                }
                x = f;
            }
        }
        (x != HEADER && range.value_gte_min(self.nodes[x].score)).then_some(x)
    }

    /// zslIsInLexRange
    fn is_in_lex_range(&self, range: &ZLexRangeSpec) -> bool {
        if range.is_empty() {
            return false;
        }
        match (self.tail, self.first()) {
            (Some(t), Some(h)) => {
                range.value_gte_min(&self.nodes[t].ele) && range.value_lte_max(&self.nodes[h].ele)
            }
            _ => false,
        }
    }

    /// zslFirstInLexRange
    pub fn first_in_lex_range(&self, range: &ZLexRangeSpec) -> Option<usize> {
        if !self.is_in_lex_range(range) {
            return None;
        }
        let mut x = HEADER;
        for i in (0..self.level).rev() {
            while let Some(f) = self.nodes[x].level[i].forward() {
                if range.value_gte_min(&self.nodes[f].ele) {
                    break;
                }
                x = f;
            }
        }
        let x = self.nodes[x].level[0].forward()?;
        range.value_lte_max(&self.nodes[x].ele).then_some(x)
    }

    /// zslLastInLexRange
    pub fn last_in_lex_range(&self, range: &ZLexRangeSpec) -> Option<usize> {
        if !self.is_in_lex_range(range) {
            return None;
        }
        let mut x = HEADER;
        for i in (0..self.level).rev() {
            while let Some(f) = self.nodes[x].level[i].forward() {
                if !range.value_lte_max(&self.nodes[f].ele) {
                    break;
                }
                x = f;
            }
        }
        (x != HEADER && range.value_gte_min(&self.nodes[x].ele)).then_some(x)
    }

    /// zslDeleteRangeByScore: remove every node inside `range` from the
    /// list and from `dict`; returns how many.
    pub fn delete_range_by_score(&mut self, range: &ZRangeSpec, dict: &mut Dict<f64>) -> usize {
        let mut update = [HEADER; ZSKIPLIST_MAXLEVEL];
        let mut x = HEADER;
        for i in (0..self.level).rev() {
            while let Some(f) = self.nodes[x].level[i].forward() {
                if range.value_gte_min(self.nodes[f].score) {
                    break;
                }
                x = f;
            }
            update[i] = x;
        }
        let mut removed = 0;
        let mut cur = self.nodes[x].level[0].forward();
        while let Some(n) = cur {
            if !range.value_lte_max(self.nodes[n].score) {
                break;
            }
            cur = self.nodes[n].level[0].forward();
            let ele = self.delete_node(n, &update);
            dict.remove(&ele);
            removed += 1;
        }
        removed
    }

    /// zslDeleteRangeByLex
    pub fn delete_range_by_lex(&mut self, range: &ZLexRangeSpec, dict: &mut Dict<f64>) -> usize {
        let mut update = [HEADER; ZSKIPLIST_MAXLEVEL];
        let mut x = HEADER;
        for i in (0..self.level).rev() {
            while let Some(f) = self.nodes[x].level[i].forward() {
                if range.value_gte_min(&self.nodes[f].ele) {
                    break;
                }
                x = f;
            }
            update[i] = x;
        }
        let mut removed = 0;
        let mut cur = self.nodes[x].level[0].forward();
        while let Some(n) = cur {
            if !range.value_lte_max(&self.nodes[n].ele) {
                break;
            }
            cur = self.nodes[n].level[0].forward();
            let ele = self.delete_node(n, &update);
            dict.remove(&ele);
            removed += 1;
        }
        removed
    }

    /// zslDeleteRangeByRank: remove ranks `start..=end` (1-based).
    pub fn delete_range_by_rank(
        &mut self,
        start: usize,
        end: usize,
        dict: &mut Dict<f64>,
    ) -> usize {
        let mut update = [HEADER; ZSKIPLIST_MAXLEVEL];
        let mut traversed = 0;
        let mut x = HEADER;
        for i in (0..self.level).rev() {
            while let Some(f) = self.nodes[x].level[i].forward() {
                if traversed + self.nodes[x].level[i].span >= start {
                    break;
                }
                traversed += self.nodes[x].level[i].span;
                x = f;
            }
            update[i] = x;
        }
        traversed += 1;
        let mut removed = 0;
        let mut cur = self.nodes[x].level[0].forward();
        while let Some(n) = cur {
            if traversed > end {
                break;
            }
            cur = self.nodes[n].level[0].forward();
            let ele = self.delete_node(n, &update);
            dict.remove(&ele);
            removed += 1;
            traversed += 1;
        }
        removed
    }

    /// Check every structural invariant (tests): order, spans equal to the
    /// level-0 distance, backward links, tail and length.
    pub fn check_invariants(&self) {
        // Level-0 positions.
        let mut pos = std::collections::HashMap::new();
        let mut x = self.first();
        let mut prev: Option<usize> = None;
        let mut r = 0;
        while let Some(n) = x {
            r += 1;
            pos.insert(n, r);
            assert_eq!(self.nodes[n].backward(), prev, "backward link");
            if let Some(p) = prev {
                assert!(less(
                    self.nodes[p].score,
                    &self.nodes[p].ele,
                    self.nodes[n].score,
                    &self.nodes[n].ele
                ));
            }
            prev = Some(n);
            x = self.next(n);
        }
        assert_eq!(r, self.length);
        assert_eq!(self.tail, prev);
        for i in 0..ZSKIPLIST_MAXLEVEL {
            let mut x = HEADER;
            let mut xr = 0;
            loop {
                let lv = self.nodes[x].level.get(i).copied().unwrap_or_default();
                match lv.forward() {
                    Some(f) => {
                        assert!(i < self.level, "link above zsl->level");
                        assert_eq!(lv.span, pos[&f] - xr, "span at level {i}");
                        xr = pos[&f];
                        x = f;
                    }
                    None => {
                        if i < self.level && x == HEADER {
                            // An empty top level only happens for level 0.
                            assert!(i == 0 || self.length == 0 || i < self.level);
                        }
                        break;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: u32) -> Box<[u8]> {
        format!("m{i}").into_bytes().into_boxed_slice()
    }

    #[test]
    fn skiplist_rank_and_span_invariants_after_random_ops() {
        let mut zsl = ZSkipList::new();
        let mut dict: Dict<f64> = Dict::new();
        let mut model: Vec<(f64, Vec<u8>)> = Vec::new();
        for step in 0..4000u32 {
            let op = rand::random::<u32>() % 10;
            let m = rand::random::<u32>() % 300;
            let k = key(m);
            let score = (rand::random::<u32>() % 50) as f64 / 2.0;
            let present = model.iter().position(|(_, e)| e[..] == k[..]);
            match (op, present) {
                (0..=4, None) => {
                    zsl.insert(score, k.clone());
                    dict.insert(k.clone(), score);
                    model.push((score, k.to_vec()));
                }
                (0..=4, Some(p)) => {
                    zsl.update_score(model[p].0, &k, score);
                    dict.insert(k.clone(), score);
                    model[p].0 = score;
                }
                (5..=7, Some(p)) => {
                    assert!(zsl.delete(model[p].0, &k).is_some());
                    dict.remove(&k);
                    model.remove(p);
                }
                (8, _) if !model.is_empty() => {
                    let r = ZRangeSpec {
                        min: score,
                        max: score + 2.0,
                        minex: step % 2 == 0,
                        maxex: step % 3 == 0,
                    };
                    let n = zsl.delete_range_by_score(&r, &mut dict);
                    let before = model.len();
                    model.retain(|(s, _)| !(r.value_gte_min(*s) && r.value_lte_max(*s)));
                    assert_eq!(n, before - model.len());
                }
                (9, _) if model.len() > 3 => {
                    let n = zsl.delete_range_by_rank(2, 3, &mut dict);
                    model.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap().then(a.1.cmp(&b.1)));
                    model.drain(1..3);
                    assert_eq!(n, 2);
                }
                _ => {}
            }
            if step % 97 == 0 {
                zsl.check_invariants();
            }
        }
        zsl.check_invariants();
        model.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap().then(a.1.cmp(&b.1)));
        assert_eq!(zsl.len(), model.len());
        assert_eq!(dict.len(), model.len());
        for (i, (s, e)) in model.iter().enumerate() {
            assert_eq!(zsl.get_rank(*s, e), i + 1);
            let n = zsl.get_element_by_rank(i + 1).unwrap();
            assert_eq!(zsl.ele(n), &e[..]);
        }
        assert_eq!(zsl.get_rank(1000.0, b"nope"), 0);
        assert!(zsl.get_element_by_rank(model.len() + 1).is_none());
    }

    #[test]
    fn skiplist_score_and_lex_ranges() {
        let mut zsl = ZSkipList::new();
        for (i, c) in (b'a'..=b'j').enumerate() {
            zsl.insert(i as f64, vec![c].into_boxed_slice());
        }
        let r = ZRangeSpec {
            min: 2.0,
            max: 5.0,
            minex: true,
            maxex: false,
        };
        assert_eq!(zsl.ele(zsl.first_in_range(&r).unwrap()), b"d");
        assert_eq!(zsl.ele(zsl.last_in_range(&r).unwrap()), b"f");
        let empty = ZRangeSpec {
            min: 5.0,
            max: 5.0,
            minex: true,
            maxex: false,
        };
        assert!(zsl.first_in_range(&empty).is_none());
        let lex = ZLexRangeSpec {
            min: LexBound::Excl(b"b".to_vec()),
            max: LexBound::Incl(b"e".to_vec()),
        };
        assert_eq!(zsl.ele(zsl.first_in_lex_range(&lex).unwrap()), b"c");
        assert_eq!(zsl.ele(zsl.last_in_lex_range(&lex).unwrap()), b"e");
        let all = ZLexRangeSpec {
            min: LexBound::MinusInf,
            max: LexBound::PlusInf,
        };
        let mut dict = Dict::new();
        for (i, c) in (b'a'..=b'j').enumerate() {
            dict.insert(vec![c].into_boxed_slice(), i as f64);
        }
        assert_eq!(zsl.delete_range_by_lex(&lex, &mut dict), 3);
        assert_eq!(zsl.delete_range_by_lex(&all, &mut dict), 7);
        assert!(zsl.is_empty());
        assert!(dict.is_empty());
        zsl.check_invariants();
    }

    /// A member's skiplist cost: its arena slot (48 bytes) and its levels
    /// (16 bytes each, one allocation). An `Option<usize>` link or a `Vec`
    /// of levels would make these 64 and 24.
    #[test]
    fn node_and_level_sizes() {
        assert_eq!(std::mem::size_of::<Node>(), 48);
        assert_eq!(std::mem::size_of::<Level>(), 16);
        assert_eq!(std::mem::size_of::<Option<Link>>(), 8);
    }
}
