//! The list type API (the listType* half of Redis 7.0's t_list.c).
//!
//! Commands reach a list only through these functions, never through the
//! quicklist directly, so the encoding could change (Redis 7.2 brings back a
//! single-listpack encoding for small lists) without touching a command.
//! In Redis 7.0 every list is a quicklist, so `OBJECT ENCODING` always says
//! `quicklist` and the conversion function Redis 7.2 has does not exist yet.
//!
//! Indexes follow Redis: 0 is the head, -1 the tail.

use crate::listpack::LpEntry;
use crate::object::Value;
use crate::quicklist::{Pos, Quicklist, QuicklistIter};

/// LIST_HEAD / LIST_TAIL: which end a push or pop works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListWhere {
    Head,
    Tail,
}

/// createQuicklistObject + quicklistSetOptions: a new, empty list with the
/// server's current list-max-listpack-size and list-compress-depth. The
/// options stay with the list: changing the config later does not repack it.
pub fn create_quicklist_object(fill: i64, compress: i64) -> Value {
    Value::List(Box::new(Quicklist::new(fill, compress)))
}

/// listTypePush.
pub fn list_type_push(ql: &mut Quicklist, v: &[u8], wh: ListWhere) {
    match wh {
        ListWhere::Head => ql.push_head(v),
        ListWhere::Tail => ql.push_tail(v),
    }
}

/// listTypePop: the element removed from `wh`, or None if the list is empty.
pub fn list_type_pop(ql: &mut Quicklist, wh: ListWhere) -> Option<Vec<u8>> {
    ql.pop(wh == ListWhere::Head)
}

/// listTypeLength.
pub fn list_type_length(ql: &Quicklist) -> usize {
    ql.len()
}

/// quicklistGetIteratorEntryAtIdx + copy: the element at `index`.
pub fn list_type_index(ql: &Quicklist, index: i64) -> Option<Vec<u8>> {
    ql.index(index).map(|p| ql.get(p).to_vec())
}

/// listTypeReplaceAtIndex (quicklistReplaceAtIndex): false if out of range.
pub fn list_type_replace_at_index(ql: &mut Quicklist, index: i64, v: &[u8]) -> bool {
    ql.replace_at_index(index, v)
}

/// listTypeDelRange: delete `count` elements from `start`.
pub fn list_type_delete_range(ql: &mut Quicklist, start: i64, count: i64) {
    ql.del_range(start, count);
}

/// listTypeInitIterator: elements from `index` towards the tail (`forward`)
/// or towards the head.
pub fn list_type_iter(ql: &Quicklist, index: i64, forward: bool) -> QuicklistIter<'_> {
    ql.iter_from(index, forward)
}

/// LINSERT's core (listTypeInsert after a listTypeEqual scan from the head):
/// insert `v` before/after the first element equal to `pivot`. Returns false
/// when the pivot is not in the list.
pub fn list_type_insert(ql: &mut Quicklist, pivot: &[u8], v: &[u8], after: bool) -> bool {
    let mut pos = ql.first_pos();
    while let Some(p) = pos {
        if ql.get(p).eq_bytes(pivot) {
            ql.insert(p, v, after);
            return true;
        }
        pos = ql.next_pos(p);
    }
    false
}

/// LREM's core: remove up to |count| elements equal to `v` (all if count is
/// 0), from the head when count >= 0, from the tail when negative.
pub fn list_type_rem(ql: &mut Quicklist, v: &[u8], count: i64) -> usize {
    let forward = count >= 0;
    let limit = count.unsigned_abs();
    let mut removed = 0usize;
    let mut pos: Option<Pos> = if forward {
        ql.first_pos()
    } else {
        ql.last_pos()
    };
    while let Some(p) = pos {
        if ql.get(p).eq_bytes(v) {
            pos = ql.del_entry(p, forward);
            removed += 1;
            if limit != 0 && removed as u64 == limit {
                break;
            }
        } else {
            pos = if forward {
                ql.next_pos(p)
            } else {
                ql.prev_pos(p)
            };
        }
    }
    removed
}

/// Does the element compare equal to `v`? (listTypeEqual)
pub fn list_type_equal(e: &LpEntry<'_>, v: &[u8]) -> bool {
    e.eq_bytes(v)
}

/// A deep copy (COPY; quicklistDup).
pub fn list_type_dup(ql: &Quicklist) -> Quicklist {
    ql.clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(ql: &Quicklist) -> Vec<Vec<u8>> {
        list_type_iter(ql, 0, true).map(|e| e.to_vec()).collect()
    }

    #[test]
    fn list_type_rem_from_both_ends() {
        let mut ql = Quicklist::new(2, 0);
        for v in ["a", "b", "a", "c", "a", "a"] {
            list_type_push(&mut ql, v.as_bytes(), ListWhere::Tail);
        }
        assert_eq!(list_type_rem(&mut ql, b"a", -2), 2);
        assert_eq!(
            all(&ql),
            vec![b"a".to_vec(), b"b".to_vec(), b"a".to_vec(), b"c".to_vec()]
        );
        assert_eq!(list_type_rem(&mut ql, b"a", 0), 2);
        assert_eq!(all(&ql), vec![b"b".to_vec(), b"c".to_vec()]);
    }

    #[test]
    fn list_type_insert_finds_pivot() {
        let mut ql = Quicklist::new(-2, 0);
        for v in ["1", "2", "3"] {
            list_type_push(&mut ql, v.as_bytes(), ListWhere::Tail);
        }
        assert!(list_type_insert(&mut ql, b"2", b"x", false));
        assert!(list_type_insert(&mut ql, b"3", b"y", true));
        assert!(!list_type_insert(&mut ql, b"9", b"z", true));
        assert_eq!(
            all(&ql),
            vec![
                b"1".to_vec(),
                b"x".to_vec(),
                b"2".to_vec(),
                b"3".to_vec(),
                b"y".to_vec()
            ]
        );
        assert_eq!(list_type_pop(&mut ql, ListWhere::Head), Some(b"1".to_vec()));
        assert_eq!(list_type_index(&ql, -1), Some(b"y".to_vec()));
    }
}
