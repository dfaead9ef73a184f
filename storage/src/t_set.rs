//! The set type API (the top half of Redis 7.0's t_set.c).
//!
//! A set has one of two encodings, and the commands never look inside
//! either one: they call the `set_type_*` functions below.
//!
//! - `intset` (OBJ_ENCODING_INTSET): every member is an integer in string2ll
//!   form ("12", "-3"; not "012", "+3", "1.0") and there are at most
//!   `set-max-intset-entries` (512) of them. One sorted allocation.
//! - `hashtable` (OBJ_ENCODING_HT): a `Dict<()>` whose keys are the members.
//!   Every member is its own allocation (a `Box<[u8]>`) hanging off its own
//!   dict entry: no arena. That is the point of the teaching example: DEL
//!   of a 1M-member set frees a million members plus a million entries on
//!   the main thread, and every other client waits (UNLINK exists for it).
//!
//! Redis 7.0 has no listpack sets (7.2 added them). The only conversion is
//! intset -> hashtable, in `set_type_convert`, and a set never goes back,
//! even when SREM leaves three small integers in it.

use std::borrow::Cow;

use crate::dict::Dict;
use crate::intset::Intset;
use crate::object::ScanStep;
use crate::util::string2ll;

/// A set value: `Value::Set` in the keyspace.
#[derive(Debug)]
///
/// The hashtable is boxed for the same reason as a hash's: an inline
/// 64-byte `Dict` would size every `Value`, and so every key.
pub enum SetValue {
    Intset(Intset),
    Hashtable(Box<Dict<()>>),
}

/// One member as setTypeNext hands it out: an integer straight from an
/// intset, or the bytes of a hashtable member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetElement<'a> {
    Int(i64),
    Str(&'a [u8]),
}

impl SetElement<'_> {
    /// The member as bytes (an intset integer in decimal).
    pub fn as_bytes(&self) -> Cow<'_, [u8]> {
        match self {
            SetElement::Int(v) => Cow::Owned(v.to_string().into_bytes()),
            SetElement::Str(s) => Cow::Borrowed(s),
        }
    }

    pub fn to_vec(&self) -> Vec<u8> {
        self.as_bytes().into_owned()
    }
}

/// setTypeCreate: the encoding a new set starts with, chosen by the first
/// member it will receive. The caller then adds that member.
pub fn set_type_create(first: &[u8]) -> SetValue {
    if string2ll(first).is_some() {
        SetValue::Intset(Intset::new())
    } else {
        SetValue::Hashtable(Box::default())
    }
}

/// setTypeConvert, plus the decision setTypeAdd makes around it: THE place
/// where an intset becomes a hashtable (put a breakpoint here).
///
/// Converts when the set is an intset and either
/// - `incoming`, a member about to be added, is not an integer, or
/// - it already holds more than `max_intset_entries` (the add that made it
///   513 just happened).
///
/// The dict is pre-sized to the intset's length (dictExpand) so the copy
/// does not rehash. Returns whether it converted.
pub fn set_type_convert(
    set: &mut SetValue,
    incoming: Option<&[u8]>,
    max_intset_entries: usize,
) -> bool {
    let SetValue::Intset(is) = set else {
        // Never back: a hashtable stays a hashtable.
        return false;
    };
    let not_an_integer = incoming.is_some_and(|m| string2ll(m).is_none());
    if !not_an_integer && is.len() <= max_intset_entries {
        return false;
    }
    if crate::encoding_log::on() {
        let trigger = if not_an_integer {
            "a member that is not an integer".to_string()
        } else {
            format!(
                "{} entries > set-max-intset-entries {max_intset_entries}",
                is.len()
            )
        };
        crate::encoding_log::record("set", "intset", "hashtable", is.len() as u64, trigger);
    }
    let mut d: Dict<()> = Dict::new();
    d.expand(is.len());
    for v in is.iter() {
        // Each integer becomes its own decimal string allocation.
        let _ = d.add(v.to_string().into_bytes().into_boxed_slice(), ());
    }
    *set = SetValue::Hashtable(Box::new(d));
    true
}

/// setTypeAdd: add `member`; false if it was already there.
pub fn set_type_add(set: &mut SetValue, member: &[u8], max_intset_entries: usize) -> bool {
    // A non-integer cannot live in an intset: convert first.
    set_type_convert(set, Some(member), max_intset_entries);
    let added = match set {
        SetValue::Hashtable(d) => d.add(member.into(), ()).is_ok(),
        SetValue::Intset(is) => {
            // set_type_convert guaranteed the member parses.
            let Some(v) = string2ll(member) else {
                return false;
            };
            is.add(v)
        }
    };
    // Past set-max-intset-entries: convert after the add (Redis's order, so
    // the dict is sized for the new length).
    if added {
        set_type_convert(set, None, max_intset_entries);
    }
    added
}

/// setTypeRemove: remove `member`; false if it was not there. A hashtable
/// that falls under 10% fill is shrunk right away (htNeedsResize/dictResize).
pub fn set_type_remove(set: &mut SetValue, member: &[u8]) -> bool {
    match set {
        SetValue::Hashtable(d) => {
            if d.remove(member).is_none() {
                return false;
            }
            if d.needs_resize() {
                d.resize_to_fit();
            }
            true
        }
        SetValue::Intset(is) => string2ll(member).is_some_and(|v| is.remove(v)),
    }
}

/// setTypeIsMember. (Redis's dictFind also does a rehash step; this lookup
/// takes `&self` so several sets of one db can be borrowed at once, as
/// SINTER needs, and leaves rehashing to writes and the cron.)
pub fn set_type_is_member(set: &SetValue, member: &[u8]) -> bool {
    match set {
        SetValue::Hashtable(d) => d.contains_key(member),
        SetValue::Intset(is) => string2ll(member).is_some_and(|v| is.find(v)),
    }
}

/// setTypeIsMember for a member handed out by an iterator: an intset
/// integer is looked up in another intset directly (intsetFind), and only
/// turned into a string for a hashtable (SINTER's inner loop).
pub fn set_type_is_member_element(set: &SetValue, ele: SetElement<'_>) -> bool {
    match (set, ele) {
        (SetValue::Intset(is), SetElement::Int(v)) => is.find(v),
        (_, SetElement::Str(s)) => set_type_is_member(set, s),
        (_, SetElement::Int(v)) => set_type_is_member(set, v.to_string().as_bytes()),
    }
}

/// A new empty set for a computed result (createIntsetObject): SINTERSTORE,
/// SUNION, SDIFF and SPOP build into one, so an all-integer small result
/// stays an intset.
pub fn set_type_new_result() -> SetValue {
    SetValue::Intset(Intset::new())
}

/// setTypeSize.
pub fn set_type_size(set: &SetValue) -> usize {
    match set {
        SetValue::Hashtable(d) => d.len(),
        SetValue::Intset(is) => is.len(),
    }
}

/// The OBJECT ENCODING name.
pub fn set_type_encoding_name(set: &SetValue) -> &'static str {
    match set {
        SetValue::Hashtable(_) => "hashtable",
        SetValue::Intset(_) => "intset",
    }
}

/// setTypeRandomElement: a random member (the dict's fair random pick, or
/// a uniform intset slot), copied out so the caller may then remove it.
pub fn set_type_random_element(set: &mut SetValue) -> Option<Vec<u8>> {
    match set {
        SetValue::Hashtable(d) => d.random_entry().map(|(k, _)| k.to_vec()),
        SetValue::Intset(is) => is.random().map(|v| v.to_string().into_bytes()),
    }
}

/// setTypeInitIterator / setTypeNext: intsets in ascending order, hashtables
/// in bucket order.
pub fn set_type_iter(set: &SetValue) -> SetIter<'_> {
    match set {
        SetValue::Hashtable(d) => SetIter::Hashtable(d.iter()),
        SetValue::Intset(is) => SetIter::Intset(is.iter()),
    }
}

/// One step of SSCAN: an intset whole, or one dict bucket of a hashtable
/// (with its expansions while rehashing, as dictScan).
// redis: db.c scanGenericCommand (OBJ_SET cases)
pub fn set_type_scan(set: &SetValue, cursor: u64, out: &mut Vec<Vec<u8>>) -> ScanStep {
    match set {
        SetValue::Intset(_) => {
            out.extend(set_type_iter(set).map(|e| e.to_vec()));
            ScanStep::Whole
        }
        SetValue::Hashtable(d) => ScanStep::Bucket(d.scan(cursor, |k, _| out.push(k.to_vec()))),
    }
}

/// A set iterator over either encoding.
pub enum SetIter<'a> {
    Intset(crate::intset::IntsetIter<'a>),
    Hashtable(crate::dict::Iter<'a, ()>),
}

impl<'a> Iterator for SetIter<'a> {
    type Item = SetElement<'a>;
    fn next(&mut self) -> Option<SetElement<'a>> {
        match self {
            SetIter::Intset(it) => it.next().map(SetElement::Int),
            SetIter::Hashtable(it) => it.next().map(|(k, _)| SetElement::Str(k)),
        }
    }
}

/// setTypeDup: a deep copy in the same encoding (COPY).
pub fn set_type_dup(set: &SetValue) -> SetValue {
    match set {
        SetValue::Intset(is) => SetValue::Intset(is.clone()),
        SetValue::Hashtable(d) => {
            let mut nd: Dict<()> = Dict::new();
            nd.expand(d.len());
            for (k, _) in d.iter() {
                let _ = nd.add(k.clone(), ());
            }
            SetValue::Hashtable(Box::new(nd))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filled(members: &[&str], max: usize) -> SetValue {
        let mut s = set_type_create(members[0].as_bytes());
        for m in members {
            set_type_add(&mut s, m.as_bytes(), max);
        }
        s
    }

    #[test]
    fn set_type_create_picks_encoding_from_first_member() {
        assert!(matches!(set_type_create(b"12"), SetValue::Intset(_)));
        assert!(matches!(set_type_create(b"012"), SetValue::Hashtable(_)));
        assert!(matches!(set_type_create(b"a"), SetValue::Hashtable(_)));
    }

    #[test]
    fn set_type_convert_at_max_entries_plus_one() {
        let mut s = set_type_create(b"0");
        for i in 0..512 {
            assert!(set_type_add(&mut s, i.to_string().as_bytes(), 512));
        }
        assert_eq!(set_type_encoding_name(&s), "intset");
        assert!(!set_type_add(&mut s, b"5", 512));
        assert_eq!(set_type_encoding_name(&s), "intset");
        assert!(set_type_add(&mut s, b"512", 512));
        assert_eq!(set_type_encoding_name(&s), "hashtable");
        assert_eq!(set_type_size(&s), 513);
        assert!(set_type_is_member(&s, b"511"));
    }

    #[test]
    fn set_type_convert_on_first_non_integer_and_never_back() {
        let mut s = filled(&["1", "2", "3"], 512);
        assert_eq!(set_type_encoding_name(&s), "intset");
        assert!(set_type_add(&mut s, b"+4", 512));
        assert_eq!(set_type_encoding_name(&s), "hashtable");
        assert!(set_type_remove(&mut s, b"+4"));
        assert_eq!(set_type_encoding_name(&s), "hashtable");
        assert!(set_type_is_member(&s, b"2"));
    }

    #[test]
    fn set_type_remove_and_member_on_intset() {
        let mut s = filled(&["10", "-5"], 512);
        assert!(!set_type_is_member(&s, b"x"));
        assert!(!set_type_remove(&mut s, b"x"));
        assert!(set_type_remove(&mut s, b"10"));
        let got: Vec<_> = set_type_iter(&s).map(|e| e.to_vec()).collect();
        assert_eq!(got, vec![b"-5".to_vec()]);
    }

    #[test]
    fn set_type_dup_keeps_encoding_and_members() {
        let s = filled(&["a", "b", "1"], 512);
        let d = set_type_dup(&s);
        assert_eq!(set_type_encoding_name(&d), "hashtable");
        assert_eq!(set_type_size(&d), 3);
        assert!(set_type_is_member(&d, b"1"));
    }

    #[test]
    fn set_type_random_element_is_member() {
        let mut s = filled(&["a", "b", "c", "d"], 512);
        for _ in 0..50 {
            let m = set_type_random_element(&mut s).unwrap();
            assert!(set_type_is_member(&s, &m));
        }
    }
}
