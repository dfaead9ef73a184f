//! Access control lists: users, their passwords and permissions, the
//! permission check every command passes, the ACL LOG and the ACL command
//! (Redis 7.0's acl.c).
//!
//! # The model
//!
//! A **user** has a name, flags (`on`/`off`, `nopass`), a list of SHA-256
//! password hashes (hex, as Redis stores them: the clear text is never
//! kept) and one or more **selectors**. The first selector is the *root*
//! one: the rules written outside parentheses (`+get ~foo`). Redis 7.0 adds
//! more with `(+set ~bar)`; a command is allowed when ANY selector allows
//! it as a whole (command, keys and channels together).
//!
//! A selector holds:
//! - a bitmap of allowed commands, one bit per command of the table (a
//!   `CmdId` is the bit index) plus one reserved bit past the end that only
//!   `+@all`/`allcommands` set: "may run commands added later". It is how
//!   ACL LIST knows whether to describe the user as `+@all -x` or `-@all +y`;
//! - "first args": `+select|0` allows SELECT only with that first argument
//!   (a deprecated trick for commands without real subcommands);
//! - key patterns, each with read and/or write permission (`~p`, `%R~p`,
//!   `%W~p`), or the `allkeys` flag;
//! - channel patterns (`&p`), or the `allchannels` flag.
//!
//! Categories (`+@read`) are not stored: applying one sets the bits of the
//! commands in it, in table order, as Redis does, so `+@all -@dangerous
//! +@admin` means what it reads as, step by step. Describing a user
//! (ACL GETUSER / LIST / SAVE) works backwards from the bitmap with Redis's
//! best-fit search over the categories, then single commands.
//!
//! # Where the checks happen
//!
//! `acl_check_all_perm` (ACLCheckAllPerm) runs in `process_command` after
//! the NOAUTH check, again for every queued command at EXEC (the rules may
//! have changed since it was queued), and for each `redis.call` of a script
//! (as the script's caller). A denial is logged in the ACL LOG with its
//! reason (command/key/channel/auth) and context (toplevel/multi/lua).
//!
//! Clients refer to their user by name (`Client::user`); deleting a user
//! closes its connections, so a name never outlives its user for a client.

use std::collections::{BTreeMap, HashMap, VecDeque};

use bytes::Bytes;
use sha2::{Digest, Sha256};
use storage::util::string_match;

use crate::commands::{CmdId, CommandTable, CMD_NO_AUTH};
use crate::log::{server_log, LogLevel};
use crate::networking::{self, Client, CLIENT_CLOSE_AFTER_REPLY, CLIENT_CLOSE_ASAP};
use crate::server::{self, Server};
use crate::shared;

/// The categories in Redis's order (ACLCommandCategories): ACL CAT prints
/// them so, and describing a user tries them in this order. Category `i` is
/// bit `1 << i` of a command's mask.
pub const ACL_CATEGORY_NAMES: &[&str] = &[
    "keyspace",
    "read",
    "write",
    "set",
    "sortedset",
    "list",
    "hash",
    "string",
    "bitmap",
    "hyperloglog",
    "geo",
    "stream",
    "pubsub",
    "admin",
    "fast",
    "slow",
    "blocking",
    "dangerous",
    "connection",
    "transaction",
    "scripting",
];

/// USER_FLAG_*: the user's flags, in the order ACL LIST prints them.
pub const USER_FLAG_ENABLED: u32 = 1 << 0;
pub const USER_FLAG_DISABLED: u32 = 1 << 1;
pub const USER_FLAG_NOPASS: u32 = 1 << 2;
pub const USER_FLAG_SANITIZE_PAYLOAD: u32 = 1 << 3;
pub const USER_FLAG_SANITIZE_PAYLOAD_SKIP: u32 = 1 << 4;
const USER_FLAG_NAMES: &[(&str, u32)] = &[
    ("on", USER_FLAG_ENABLED),
    ("off", USER_FLAG_DISABLED),
    ("nopass", USER_FLAG_NOPASS),
    ("skip-sanitize-payload", USER_FLAG_SANITIZE_PAYLOAD_SKIP),
    ("sanitize-payload", USER_FLAG_SANITIZE_PAYLOAD),
];

/// SELECTOR_FLAG_*: the root selector, and the "everything" shortcuts.
pub const SELECTOR_FLAG_ROOT: u32 = 1 << 0;
pub const SELECTOR_FLAG_ALLKEYS: u32 = 1 << 1;
pub const SELECTOR_FLAG_ALLCOMMANDS: u32 = 1 << 2;
pub const SELECTOR_FLAG_ALLCHANNELS: u32 = 1 << 3;

/// ACL_READ_PERMISSION / ACL_WRITE_PERMISSION: what a key pattern grants.
const ACL_READ_PERMISSION: u8 = 1 << 0;
const ACL_WRITE_PERMISSION: u8 = 1 << 1;
const ACL_ALL_PERMISSION: u8 = ACL_READ_PERMISSION | ACL_WRITE_PERMISSION;

/// HASH_PASSWORD_LEN: a SHA-256 digest in hex.
const HASH_PASSWORD_LEN: usize = 64;

/// ACL_LOG_GROUPING_MAX_TIME_DELTA: a denial like one logged less than a
/// minute ago bumps that entry's count instead of adding a new one.
const ACL_LOG_GROUPING_MAX_TIME_DELTA: i64 = 60_000;

/// GENPASS_MAX_BITS: ACL GENPASS makes at most a 4096-bit password.
const GENPASS_MAX_BITS: i64 = 4096;

/// Why a command was refused (ACL_DENIED_*). The order matters: with
/// several selectors, the "most specific" failure is reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum AclDenied {
    Cmd = 1,
    Key = 2,
    Auth = 3,
    Channel = 4,
}

/// ACL_LOG_CTX_*: where the denied command came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AclLogCtx {
    Toplevel,
    Lua,
    Multi,
}

/// Why an ACL rule could not be applied (the errno values of ACLSetUser).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AclRuleError {
    /// EINVAL
    Syntax,
    /// ENOENT
    UnknownCommand,
    /// EEXIST
    PatternAfterAllKeys,
    /// EISDIR
    PatternAfterAllChannels,
    /// ENODEV
    NoSuchPassword,
    /// EBADMSG
    BadHash,
    /// EALREADY
    DuplicateUser,
    /// ECHILD
    FirstArgOfSubcommand,
}

impl AclRuleError {
    /// ACLSetUserStringError.
    pub fn message(self) -> &'static str {
        match self {
            AclRuleError::UnknownCommand => "Unknown command or category name in ACL",
            AclRuleError::Syntax => "Syntax error",
            AclRuleError::PatternAfterAllKeys => "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns",
            AclRuleError::PatternAfterAllChannels => "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels",
            AclRuleError::NoSuchPassword => "The password you are trying to remove from the user does not exist",
            AclRuleError::BadHash => "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters",
            AclRuleError::DuplicateUser => "Duplicate user found. A user can only be defined once in config files",
            AclRuleError::FirstArgOfSubcommand => "Allowing first-arg of a subcommand is not supported",
        }
    }
}

/// A key pattern and what it grants (keyPattern).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyPattern {
    flags: u8,
    pattern: Bytes,
}

/// One selector (aclSelector): see the top of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selector {
    pub flags: u32,
    allowed_commands: Vec<u64>,
    /// Command id -> first arguments allowed although the command is not.
    allowed_firstargs: BTreeMap<usize, Vec<Bytes>>,
    patterns: Vec<KeyPattern>,
    channels: Vec<Bytes>,
}

/// A user (struct user).
#[derive(Debug, Clone)]
pub struct User {
    pub name: Bytes,
    pub flags: u32,
    /// SHA-256 hex digests, in the order they were added.
    pub passwords: Vec<String>,
    /// The root selector first.
    pub selectors: Vec<Selector>,
}

/// One ACL LOG entry (ACLLogEntry).
#[derive(Debug, Clone)]
pub struct AclLogEntry {
    count: u64,
    reason: AclDenied,
    context: AclLogCtx,
    object: Bytes,
    username: Bytes,
    ctime: i64,
    cinfo: Vec<u8>,
}

/// What ACL needs to know about the command table, computed once: the
/// category mask of each command, its parent and subcommands, and names.
pub struct CmdIndex {
    n: usize,
    cats: Vec<u64>,
    subs: Vec<Vec<usize>>,
    parent: Vec<Option<usize>>,
    noauth: Vec<bool>,
    names: Vec<&'static str>,
    by_name: HashMap<String, usize>,
}

impl CmdIndex {
    fn new(table: &CommandTable) -> CmdIndex {
        let n = table.commands.len();
        let mut idx = CmdIndex {
            n,
            cats: vec![0; n],
            subs: vec![Vec::new(); n],
            parent: vec![None; n],
            noauth: vec![false; n],
            names: Vec::with_capacity(n),
            by_name: HashMap::new(),
        };
        for (i, cmd) in table.commands.iter().enumerate() {
            let meta = crate::commands::meta_of(cmd);
            for cat in meta.acl_categories {
                if let Some(bit) = category_flag(cat.trim_start_matches('@').as_bytes()) {
                    idx.cats[i] |= bit;
                }
            }
            idx.parent[i] = cmd.parent.map(|p| p.0);
            if let Some(p) = cmd.parent {
                idx.subs[p.0].push(i);
            }
            idx.noauth[i] = cmd.spec.flags & CMD_NO_AUTH != 0;
            idx.names.push(cmd.fullname);
            idx.by_name.insert(cmd.fullname.to_string(), i);
        }
        idx
    }

    /// Words in a command bitmap: one bit per command plus the reserved one.
    fn words(&self) -> usize {
        (self.n + 1).div_ceil(64)
    }

    /// ACLLookupCommand (lookupCommandBySdsLogic, strict): "get" or
    /// "config|get"; a `|` on a command without subcommands finds nothing.
    fn lookup(&self, name: &[u8]) -> Option<usize> {
        let lower = String::from_utf8_lossy(name).to_ascii_lowercase();
        let parts: Vec<&str> = lower.split('|').collect();
        if lower.is_empty() || parts.len() > 2 {
            return None;
        }
        let base = *self.by_name.get(parts[0])?;
        if parts.len() == 1 {
            return Some(base);
        }
        if self.subs[base].is_empty() {
            return None;
        }
        self.by_name.get(&lower).copied()
    }
}

/// ACLGetCommandCategoryFlagByName: the bit of a category, case-insensitive.
pub fn category_flag(name: &[u8]) -> Option<u64> {
    ACL_CATEGORY_NAMES
        .iter()
        .position(|c| c.as_bytes().eq_ignore_ascii_case(name))
        .map(|i| 1u64 << i)
}

/// ACLHashPassword: the hex SHA-256 of a clear-text password.
pub fn hash_password(clear: &[u8]) -> String {
    let digest = Sha256::digest(clear);
    let mut hex = String::with_capacity(HASH_PASSWORD_LEN);
    for b in digest {
        hex.push_str(&format!("{b:02x}"));
    }
    hex
}

/// ACLCheckPasswordHash: 64 lower-case hex characters.
fn valid_password_hash(h: &[u8]) -> bool {
    h.len() == HASH_PASSWORD_LEN && h.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
}

/// time_independent_strcmp: no early exit, so the time taken does not tell
/// how many leading characters matched (both are 64-byte digests).
fn time_independent_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut diff = 0u8;
    for (x, y) in a.iter().zip(b) {
        diff |= x ^ y;
    }
    diff == 0
}

/// ACLStringHasSpaces: user names and patterns may not hold whitespace or
/// NUL (they are written back space-separated by ACL LIST/SAVE).
pub fn string_has_spaces(s: &[u8]) -> bool {
    s.iter()
        .any(|&b| b == 0 || matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c))
}

// ---------------------------------------------------------------------------
// Selectors
// ---------------------------------------------------------------------------

impl Selector {
    /// ACLCreateSelector: no permissions, plus acl-pubsub-default.
    fn new(ci: &CmdIndex, flags: u32, pubsub_default: u32) -> Selector {
        Selector {
            flags: flags | pubsub_default,
            allowed_commands: vec![0; ci.words()],
            allowed_firstargs: BTreeMap::new(),
            patterns: Vec::new(),
            channels: Vec::new(),
        }
    }

    /// ACLGetSelectorCommandBit.
    fn bit(&self, id: usize) -> bool {
        self.allowed_commands
            .get(id / 64)
            .is_some_and(|w| w & (1u64 << (id % 64)) != 0)
    }

    /// ACLSetSelectorCommandBit: clearing any bit drops ALLCOMMANDS.
    fn set_bit(&mut self, id: usize, value: bool) {
        let Some(w) = self.allowed_commands.get_mut(id / 64) else {
            return;
        };
        if value {
            *w |= 1u64 << (id % 64);
        } else {
            *w &= !(1u64 << (id % 64));
            self.flags &= !SELECTOR_FLAG_ALLCOMMANDS;
        }
    }

    /// ACLSelectorCanExecuteFutureCommands: the reserved bit.
    fn can_execute_future_commands(&self, ci: &CmdIndex) -> bool {
        self.bit(ci.n)
    }

    /// ACLChangeSelectorPerm: a command, and all subcommands of a container.
    fn change_perm(&mut self, ci: &CmdIndex, id: usize, allow: bool) {
        self.set_bit(id, allow);
        self.allowed_firstargs.remove(&id);
        for &sub in &ci.subs[id] {
            self.set_bit(sub, allow);
        }
    }

    /// ACLSetSelectorCommandBitsForCategory: every command of the category,
    /// containers before their subcommands, in table order.
    fn set_category(&mut self, ci: &CmdIndex, cflag: u64, allow: bool) {
        for id in 0..ci.n {
            if ci.cats[id] & cflag != 0 {
                self.change_perm(ci, id, allow);
            }
        }
    }

    /// ACLCountCategoryBitsForSelector: allowed and denied commands of a
    /// category.
    fn count_category(&self, ci: &CmdIndex, cflag: u64) -> (u64, u64) {
        let (mut on, mut off) = (0, 0);
        for id in 0..ci.n {
            if ci.cats[id] & cflag != 0 {
                if self.bit(id) {
                    on += 1;
                } else {
                    off += 1;
                }
            }
        }
        (on, off)
    }

    /// ACLAddAllowedFirstArg (case-insensitive duplicates are skipped).
    fn add_firstarg(&mut self, id: usize, sub: &[u8]) {
        let list = self.allowed_firstargs.entry(id).or_default();
        if !list.iter().any(|a| a.eq_ignore_ascii_case(sub)) {
            list.push(Bytes::copy_from_slice(sub));
        }
    }

    /// ACLSetSelector: apply one rule to a selector.
    fn apply(&mut self, ci: &CmdIndex, op: &[u8]) -> Result<(), AclRuleError> {
        let is = |w: &str| op.eq_ignore_ascii_case(w.as_bytes());
        if is("allkeys") || is("~*") {
            self.flags |= SELECTOR_FLAG_ALLKEYS;
            self.patterns.clear();
        } else if is("resetkeys") {
            self.flags &= !SELECTOR_FLAG_ALLKEYS;
            self.patterns.clear();
        } else if is("allchannels") || is("&*") {
            self.flags |= SELECTOR_FLAG_ALLCHANNELS;
            self.channels.clear();
        } else if is("resetchannels") {
            self.flags &= !SELECTOR_FLAG_ALLCHANNELS;
            self.channels.clear();
        } else if is("allcommands") || is("+@all") {
            self.allowed_commands.iter_mut().for_each(|w| *w = u64::MAX);
            self.flags |= SELECTOR_FLAG_ALLCOMMANDS;
            self.allowed_firstargs.clear();
        } else if is("nocommands") || is("-@all") {
            self.allowed_commands.iter_mut().for_each(|w| *w = 0);
            self.flags &= !SELECTOR_FLAG_ALLCOMMANDS;
            self.allowed_firstargs.clear();
        } else if op[0] == b'~' || op[0] == b'%' {
            self.add_key_pattern(op)?;
        } else if op[0] == b'&' {
            if self.flags & SELECTOR_FLAG_ALLCHANNELS != 0 {
                return Err(AclRuleError::PatternAfterAllChannels);
            }
            if string_has_spaces(&op[1..]) {
                return Err(AclRuleError::Syntax);
            }
            if !self.channels.iter().any(|c| c[..] == op[1..]) {
                self.channels.push(Bytes::copy_from_slice(&op[1..]));
            }
            self.flags &= !SELECTOR_FLAG_ALLCHANNELS;
        } else if op[0] == b'+' && op.get(1) != Some(&b'@') {
            self.allow_command(ci, &op[1..])?;
        } else if op[0] == b'-' && op.get(1) != Some(&b'@') {
            let id = ci.lookup(&op[1..]).ok_or(AclRuleError::UnknownCommand)?;
            self.change_perm(ci, id, false);
        } else if op[0] == b'+' || op[0] == b'-' {
            let cflag = category_flag(&op[2..]).ok_or(AclRuleError::UnknownCommand)?;
            self.set_category(ci, cflag, op[0] == b'+');
        } else {
            return Err(AclRuleError::Syntax);
        }
        Ok(())
    }

    /// `~pattern`, `%R~pattern`, `%W~pattern`, `%RW~pattern`.
    fn add_key_pattern(&mut self, op: &[u8]) -> Result<(), AclRuleError> {
        if self.flags & SELECTOR_FLAG_ALLKEYS != 0 {
            return Err(AclRuleError::PatternAfterAllKeys);
        }
        let mut flags = 0u8;
        let mut offset = 1;
        if op[0] == b'%' {
            let mut perm_ok = true;
            while offset < op.len() {
                let ch = op[offset].to_ascii_uppercase();
                if ch == b'R' && flags & ACL_READ_PERMISSION == 0 {
                    flags |= ACL_READ_PERMISSION;
                } else if ch == b'W' && flags & ACL_WRITE_PERMISSION == 0 {
                    flags |= ACL_WRITE_PERMISSION;
                } else if op[offset] == b'~' {
                    offset += 1;
                    break;
                } else {
                    perm_ok = false;
                    break;
                }
                offset += 1;
            }
            if flags == 0 || !perm_ok {
                return Err(AclRuleError::Syntax);
            }
        } else {
            flags = ACL_ALL_PERMISSION;
        }
        let pat = &op[offset.min(op.len())..];
        if string_has_spaces(pat) {
            return Err(AclRuleError::Syntax);
        }
        match self.patterns.iter_mut().find(|p| p.pattern[..] == *pat) {
            Some(p) => p.flags |= flags,
            None => self.patterns.push(KeyPattern {
                flags,
                pattern: Bytes::copy_from_slice(pat),
            }),
        }
        self.flags &= !SELECTOR_FLAG_ALLKEYS;
        Ok(())
    }

    /// `+command`, `+container|subcommand` or `+command|first-arg`.
    fn allow_command(&mut self, ci: &CmdIndex, name: &[u8]) -> Result<(), AclRuleError> {
        let Some(bar) = name.iter().rposition(|&b| b == b'|') else {
            let id = ci.lookup(name).ok_or(AclRuleError::UnknownCommand)?;
            self.change_perm(ci, id, true);
            return Ok(());
        };
        let (base, sub) = (&name[..bar], &name[bar + 1..]);
        let id = ci.lookup(base).ok_or(AclRuleError::UnknownCommand)?;
        if ci.parent[id].is_some() {
            return Err(AclRuleError::FirstArgOfSubcommand);
        }
        if sub.is_empty() {
            return Err(AclRuleError::Syntax);
        }
        if !ci.subs[id].is_empty() {
            let sid = ci.lookup(name).ok_or(AclRuleError::UnknownCommand)?;
            self.change_perm(ci, sid, true);
        } else {
            server_log(
                LogLevel::Warning,
                &format!(
                    "Deprecation warning: Allowing a first arg of an otherwise blocked command is a misuse of ACL and may get disabled in the future (offender: +{})",
                    String::from_utf8_lossy(name)
                ),
            );
            self.add_firstarg(id, sub);
        }
        Ok(())
    }

    /// ACLDescribeSelectorCommandRules: the shortest-looking rule list that
    /// rebuilds the bitmap. Start from +@all (the reserved bit is set) or
    /// -@all; apply the best-fitting category while one fits (more commands
    /// in common than different); fix the rest command by command. A
    /// scratch selector tracks what the rules so far produce.
    fn describe_command_rules(&self, ci: &CmdIndex) -> String {
        let mut rules = String::new();
        let mut fake = Selector::new(ci, 0, 0);
        let additive = !self.can_execute_future_commands(ci);
        if additive {
            rules.push_str("-@all ");
        } else {
            rules.push_str("+@all ");
            let _ = fake.apply(ci, b"+@all");
        }
        let mut temp = Selector::new(ci, 0, 0);
        temp.allowed_commands = self.allowed_commands.clone();
        let mut applied = [false; 21];
        loop {
            let mut best = None;
            let (mut mindiff, mut maxsame) = (u64::MAX, 0);
            for (j, _) in ACL_CATEGORY_NAMES.iter().enumerate() {
                if applied[j] {
                    continue;
                }
                let (on, off) = temp.count_category(ci, 1 << j);
                let (diff, same) = if additive { (off, on) } else { (on, off) };
                if same > diff && (diff < mindiff || (diff == mindiff && same > maxsame)) {
                    best = Some(j);
                    mindiff = diff;
                    maxsame = same;
                }
            }
            let Some(j) = best else { break };
            fake.set_category(ci, 1 << j, additive);
            temp.set_category(ci, 1 << j, !additive);
            rules.push_str(if additive { "+@" } else { "-@" });
            rules.push_str(ACL_CATEGORY_NAMES[j]);
            rules.push(' ');
            applied[j] = true;
        }
        // ACLDescribeSelectorCommandRulesSingleCommands.
        for id in 0..ci.n {
            let userbit = self.bit(id);
            if userbit != fake.bit(id) {
                rules.push(if userbit { '+' } else { '-' });
                rules.push_str(ci.names[id]);
                rules.push(' ');
                fake.change_perm(ci, id, userbit);
            }
            if !userbit {
                if let Some(args) = self.allowed_firstargs.get(&id) {
                    for a in args {
                        rules.push('+');
                        rules.push_str(ci.names[id]);
                        rules.push('|');
                        rules.push_str(&String::from_utf8_lossy(a));
                        rules.push(' ');
                    }
                }
            }
        }
        rules.pop();
        rules
    }

    /// ACLDescribeSelector: keys, channels, then command rules.
    fn describe(&self, ci: &CmdIndex) -> Vec<u8> {
        let mut res = Vec::new();
        if self.flags & SELECTOR_FLAG_ALLKEYS != 0 {
            res.extend_from_slice(b"~* ");
        } else {
            for p in &self.patterns {
                cat_pattern_string(&mut res, p);
                res.push(b' ');
            }
        }
        if self.flags & SELECTOR_FLAG_ALLCHANNELS != 0 {
            res.extend_from_slice(b"&* ");
        } else {
            res.extend_from_slice(b"resetchannels ");
            for ch in &self.channels {
                res.push(b'&');
                res.extend_from_slice(ch);
                res.push(b' ');
            }
        }
        res.extend_from_slice(self.describe_command_rules(ci).as_bytes());
        res
    }

    /// ACLSelectorCheckKey: some pattern grants every permission the key's
    /// flags ask for and matches the key.
    fn check_key(&self, key: &[u8], keyspec_flags: &[&str]) -> bool {
        if self.flags & SELECTOR_FLAG_ALLKEYS != 0 {
            return true;
        }
        let need = key_flags_to_permissions(keyspec_flags);
        self.patterns
            .iter()
            .any(|p| p.flags & need == need && string_match(&p.pattern, key, false))
    }

    /// ACLSelectorCheckCmd: command bit (or first arg), keys, channels.
    fn check_cmd(
        &self,
        ci: &CmdIndex,
        cmds: &CommandTable,
        id: CmdId,
        argv: &[Bytes],
        keys: &mut Option<Vec<crate::commands::KeyReference>>,
    ) -> Result<(), (AclDenied, usize)> {
        let cid = id.0;
        if self.flags & SELECTOR_FLAG_ALLCOMMANDS == 0 && !ci.noauth[cid] && !self.bit(cid) {
            let idx = if ci.parent[cid].is_some() { 2 } else { 1 };
            let allowed = argv.len() >= 2
                && self.allowed_firstargs.get(&cid).is_some_and(|l| {
                    argv.get(idx)
                        .is_some_and(|a| l.iter().any(|f| f.eq_ignore_ascii_case(a)))
                });
            if !allowed {
                return Err((AclDenied::Cmd, 0));
            }
        }
        if self.flags & SELECTOR_FLAG_ALLKEYS == 0 {
            let cmd = cmds.get(id);
            if crate::commands::does_command_have_keys(cmd) {
                let keys =
                    keys.get_or_insert_with(|| crate::commands::get_keys_from_command(cmd, argv));
                for k in keys.iter() {
                    if !self.check_key(&argv[k.pos], k.flags) {
                        return Err((AclDenied::Key, k.pos));
                    }
                }
            }
        }
        if self.flags & SELECTOR_FLAG_ALLCHANNELS == 0 {
            for (pos, flags) in get_channels_from_command(ci.names[cid], argv) {
                if flags & (CHANNEL_PUBLISH | CHANNEL_SUBSCRIBE) == 0 {
                    continue;
                }
                let is_pattern = flags & CHANNEL_PATTERN != 0;
                if !check_channel_against_list(&self.channels, &argv[pos], is_pattern) {
                    return Err((AclDenied::Channel, pos));
                }
            }
        }
        Ok(())
    }
}

/// sdsCatPatternString: `~p`, `%R~p` or `%W~p`.
fn cat_pattern_string(out: &mut Vec<u8>, p: &KeyPattern) {
    out.extend_from_slice(match p.flags {
        ACL_READ_PERMISSION => b"%R~",
        ACL_WRITE_PERMISSION => b"%W~",
        _ => b"~",
    });
    out.extend_from_slice(&p.pattern);
}

/// The permissions a key's spec flags need: `access` reads; `insert`,
/// `delete` and `update` write (RO/RW/OW alone need nothing).
fn key_flags_to_permissions(flags: &[&str]) -> u8 {
    let mut need = 0;
    for f in flags {
        match *f {
            "access" => need |= ACL_READ_PERMISSION,
            "insert" | "delete" | "update" => need |= ACL_WRITE_PERMISSION,
            _ => {}
        }
    }
    need
}

/// CMD_CHANNEL_*: how a command uses a channel argument.
const CHANNEL_PATTERN: u8 = 1 << 0;
const CHANNEL_PUBLISH: u8 = 1 << 1;
const CHANNEL_SUBSCRIBE: u8 = 1 << 2;
const CHANNEL_UNSUBSCRIBE: u8 = 1 << 3;

/// getChannelsFromCommand (db.c commands_with_channels): the channel
/// arguments of the pub/sub commands, with how each is used.
fn get_channels_from_command(name: &str, argv: &[Bytes]) -> Vec<(usize, u8)> {
    let (flags, count) = match name {
        "subscribe" | "ssubscribe" => (CHANNEL_SUBSCRIBE, None),
        "unsubscribe" | "sunsubscribe" => (CHANNEL_UNSUBSCRIBE, None),
        "psubscribe" => (CHANNEL_PATTERN | CHANNEL_SUBSCRIBE, None),
        "punsubscribe" => (CHANNEL_PATTERN | CHANNEL_UNSUBSCRIBE, None),
        "publish" | "spublish" => (CHANNEL_PUBLISH, Some(1)),
        _ => return Vec::new(),
    };
    let stop = count.map_or(argv.len(), |n| (1 + n).min(argv.len()));
    (1..stop).map(|i| (i, flags)).collect()
}

/// ACLCheckChannelAgainstList: a channel is matched against the patterns;
/// a PSUBSCRIBE pattern only against an identical pattern.
fn check_channel_against_list(list: &[Bytes], channel: &[u8], is_pattern: bool) -> bool {
    list.iter().any(|p| {
        if is_pattern {
            p[..] == *channel
        } else {
            string_match(p, channel, false)
        }
    })
}

// ---------------------------------------------------------------------------
// Users
// ---------------------------------------------------------------------------

impl User {
    /// ACLCreateUser: disabled, no passwords, a root selector with nothing.
    fn new(ci: &CmdIndex, name: &[u8], pubsub_default: u32) -> User {
        User {
            name: Bytes::copy_from_slice(name),
            flags: USER_FLAG_DISABLED,
            passwords: Vec::new(),
            selectors: vec![Selector::new(ci, SELECTOR_FLAG_ROOT, pubsub_default)],
        }
    }

    /// ACLSetUser: apply one rule (user-level ones here, selector rules to
    /// the root selector).
    fn apply(&mut self, ci: &CmdIndex, op: &[u8], pubsub_default: u32) -> Result<(), AclRuleError> {
        if op.is_empty() {
            return Ok(());
        }
        let is = |w: &str| op.eq_ignore_ascii_case(w.as_bytes());
        if is("on") {
            self.flags = (self.flags | USER_FLAG_ENABLED) & !USER_FLAG_DISABLED;
        } else if is("off") {
            self.flags = (self.flags | USER_FLAG_DISABLED) & !USER_FLAG_ENABLED;
        } else if is("skip-sanitize-payload") {
            self.flags =
                (self.flags | USER_FLAG_SANITIZE_PAYLOAD_SKIP) & !USER_FLAG_SANITIZE_PAYLOAD;
        } else if is("sanitize-payload") {
            self.flags =
                (self.flags | USER_FLAG_SANITIZE_PAYLOAD) & !USER_FLAG_SANITIZE_PAYLOAD_SKIP;
        } else if is("nopass") {
            self.flags |= USER_FLAG_NOPASS;
            self.passwords.clear();
        } else if is("resetpass") {
            self.flags &= !USER_FLAG_NOPASS;
            self.passwords.clear();
        } else if op[0] == b'>' || op[0] == b'#' {
            let hash = if op[0] == b'>' {
                hash_password(&op[1..])
            } else if valid_password_hash(&op[1..]) {
                String::from_utf8_lossy(&op[1..]).into_owned()
            } else {
                return Err(AclRuleError::BadHash);
            };
            if !self.passwords.contains(&hash) {
                self.passwords.push(hash);
            }
            self.flags &= !USER_FLAG_NOPASS;
        } else if op[0] == b'<' || op[0] == b'!' {
            let hash = if op[0] == b'<' {
                hash_password(&op[1..])
            } else if valid_password_hash(&op[1..]) {
                String::from_utf8_lossy(&op[1..]).into_owned()
            } else {
                return Err(AclRuleError::BadHash);
            };
            let pos = self
                .passwords
                .iter()
                .position(|p| *p == hash)
                .ok_or(AclRuleError::NoSuchPassword)?;
            self.passwords.remove(pos);
        } else if op[0] == b'(' && op[op.len() - 1] == b')' {
            let selector = selector_from_op_set(ci, op, pubsub_default)?;
            self.selectors.push(selector);
        } else if is("clearselectors") {
            self.selectors.truncate(1);
        } else if is("reset") {
            for rule in ["resetpass", "resetkeys", "resetchannels"] {
                let _ = self.apply(ci, rule.as_bytes(), pubsub_default);
            }
            if pubsub_default & SELECTOR_FLAG_ALLCHANNELS != 0 {
                let _ = self.apply(ci, b"allchannels", pubsub_default);
            }
            for rule in ["off", "sanitize-payload", "clearselectors", "-@all"] {
                let _ = self.apply(ci, rule.as_bytes(), pubsub_default);
            }
        } else {
            self.selectors[0].apply(ci, op)?;
        }
        Ok(())
    }

    /// ACLDescribeUser: flags, password hashes, then the selectors (the
    /// root one bare, the others in parentheses), as ACL LIST shows it.
    pub fn describe(&self, ci: &CmdIndex) -> Vec<u8> {
        let mut res = Vec::new();
        for (name, flag) in USER_FLAG_NAMES {
            if self.flags & flag != 0 {
                res.extend_from_slice(name.as_bytes());
                res.push(b' ');
            }
        }
        for p in &self.passwords {
            res.push(b'#');
            res.extend_from_slice(p.as_bytes());
            res.push(b' ');
        }
        for s in &self.selectors {
            let d = s.describe(ci);
            if s.flags & SELECTOR_FLAG_ROOT != 0 {
                res.extend_from_slice(&d);
            } else {
                res.extend_from_slice(b" (");
                res.extend_from_slice(&d);
                res.push(b')');
            }
        }
        res
    }
}

/// aclCreateSelectorFromOpSet: `(rule rule ...)` split as redis-cli would.
fn selector_from_op_set(
    ci: &CmdIndex,
    op: &[u8],
    pubsub_default: u32,
) -> Result<Selector, AclRuleError> {
    let mut s = Selector::new(ci, 0, pubsub_default);
    let inner = String::from_utf8_lossy(&op[1..op.len() - 1]).into_owned();
    let args = crate::config::split_args(&inner).unwrap_or_default();
    for a in args {
        s.apply(ci, a.as_bytes())?;
    }
    Ok(s)
}

/// ACLMergeSelectorArguments: `(+get` `~x)` given as two arguments become
/// one selector rule. Err(index) at an unclosed parenthesis.
fn merge_selector_arguments(argv: &[Bytes]) -> Result<Vec<Bytes>, usize> {
    let mut out = Vec::new();
    let mut open: Option<(usize, Vec<u8>)> = None;
    for (j, op) in argv.iter().enumerate() {
        if let Some((_, sel)) = open.as_mut() {
            sel.push(b' ');
            sel.extend_from_slice(op);
            if op.last() == Some(&b')') {
                let (_, sel) = open.take().unwrap_or_default();
                out.push(Bytes::from(sel));
            }
            continue;
        }
        if op.first() == Some(&b'(') && op.last() != Some(&b')') {
            open = Some((j, op.to_vec()));
            continue;
        }
        out.push(op.clone());
    }
    match open {
        Some((j, _)) => Err(j),
        None => Ok(out),
    }
}

// ---------------------------------------------------------------------------
// The ACL state
// ---------------------------------------------------------------------------

/// Everything acl.c keeps in globals: the users (Redis's `Users` radix
/// tree: byte order, so a BTreeMap), the users read from redis.conf and
/// waiting to be created, and the ACL LOG (newest first).
pub struct Acl {
    pub ci: CmdIndex,
    pub users: BTreeMap<Bytes, User>,
    pub users_to_load: Vec<Vec<Bytes>>,
    pub log: VecDeque<AclLogEntry>,
}

/// The default user's name.
pub const DEFAULT_USER: &[u8] = b"default";

impl Acl {
    /// ACLInit + ACLCreateDefaultUser: `default` may do everything and
    /// needs no password.
    pub fn new(table: &CommandTable) -> Acl {
        let ci = CmdIndex::new(table);
        let mut acl = Acl {
            ci,
            users: BTreeMap::new(),
            users_to_load: Vec::new(),
            log: VecDeque::new(),
        };
        let def = acl.create_default_user(0);
        acl.users.insert(def.name.clone(), def);
        acl
    }

    fn create_default_user(&self, pubsub_default: u32) -> User {
        let mut u = User::new(&self.ci, DEFAULT_USER, pubsub_default);
        for rule in ["+@all", "~*", "&*", "on", "nopass"] {
            let _ = u.apply(&self.ci, rule.as_bytes(), pubsub_default);
        }
        u
    }

    pub fn default_user(&self) -> &User {
        &self.users[DEFAULT_USER]
    }

    /// ACLUpdateDefaultUserPassword: `requirepass` is the default user's
    /// only password; empty means nopass.
    pub fn update_default_user_password(&mut self, password: &str) {
        let ci = &self.ci;
        if let Some(u) = self.users.get_mut(DEFAULT_USER) {
            let _ = u.apply(ci, b"resetpass", 0);
            if password.is_empty() {
                let _ = u.apply(ci, b"nopass", 0);
            } else {
                let mut op = b">".to_vec();
                op.extend_from_slice(password.as_bytes());
                let _ = u.apply(ci, &op, 0);
            }
        }
    }

    /// rewriteConfigUserOption: one `user` line per user, as ACL LIST.
    pub fn config_user_lines(&self) -> Vec<String> {
        self.users
            .values()
            .map(|u| {
                let mut line = b"user ".to_vec();
                line.extend_from_slice(&u.name);
                line.push(b' ');
                line.extend_from_slice(&u.describe(&self.ci));
                String::from_utf8_lossy(&line).into_owned()
            })
            .collect()
    }

    /// ACLCheckUserCredentials.
    pub fn check_user_credentials(&self, username: &[u8], password: &[u8]) -> bool {
        let Some(u) = self.users.get(username) else {
            return false;
        };
        if u.flags & USER_FLAG_DISABLED != 0 {
            return false;
        }
        if u.flags & USER_FLAG_NOPASS != 0 {
            return true;
        }
        let hashed = hash_password(password);
        u.passwords
            .iter()
            .any(|p| time_independent_eq(hashed.as_bytes(), p.as_bytes()))
    }

    /// ACLStringSetUser: apply the rules to a copy of the user (or a new
    /// one), and only when all of them are valid store it. Returns the
    /// replaced user so the caller can cut pub/sub clients that lost
    /// channels.
    pub fn string_set_user(
        &mut self,
        username: &[u8],
        argv: &[Bytes],
        pubsub_default: u32,
    ) -> Result<Option<User>, String> {
        let merged = merge_selector_arguments(argv).map_err(|j| {
            format!(
                "Unmatched parenthesis in acl selector starting at '{}'.",
                String::from_utf8_lossy(&argv[j])
            )
        })?;
        let original = self.users.get(username).cloned();
        let mut temp = match &original {
            Some(u) => u.clone(),
            None => User::new(&self.ci, username, pubsub_default),
        };
        for op in &merged {
            if let Err(e) = temp.apply(&self.ci, op, pubsub_default) {
                return Err(format!(
                    "Error in ACL SETUSER modifier '{}': {}",
                    String::from_utf8_lossy(op),
                    e.message()
                ));
            }
        }
        temp.name = Bytes::copy_from_slice(username);
        self.users.insert(temp.name.clone(), temp);
        Ok(original)
    }

    /// ACLAppendUserForLoading: a `user` line of redis.conf, checked now
    /// (unknown commands excepted) and created once the server starts.
    pub fn append_user_for_loading(&mut self, argv: &[Bytes]) -> Result<(), (usize, AclRuleError)> {
        if argv.len() < 2 {
            return Err((0, AclRuleError::Syntax));
        }
        if self.users_to_load.iter().any(|u| u[0] == argv[1]) {
            return Err((1, AclRuleError::DuplicateUser));
        }
        let merged = merge_selector_arguments(&argv[2..]).map_err(|j| (j, AclRuleError::Syntax))?;
        let mut fake = User::new(&self.ci, b"__fakeuser__", 0);
        for (j, op) in merged.iter().enumerate() {
            match fake.apply(&self.ci, op, 0) {
                Err(AclRuleError::UnknownCommand) | Ok(()) => {}
                Err(e) => return Err((j, e)),
            }
        }
        let mut def = vec![argv[1].clone()];
        def.extend(merged);
        self.users_to_load.push(def);
        Ok(())
    }

    /// ACLLoadConfiguredUsers: create the users of redis.conf.
    /// Returns false after logging the first bad rule.
    fn load_configured_users(&mut self, pubsub_default: u32) -> bool {
        let defs = std::mem::take(&mut self.users_to_load);
        for def in &defs {
            let name = &def[0];
            if string_has_spaces(name) {
                server_log(LogLevel::Warning, "Spaces not allowed in ACL usernames");
                return false;
            }
            let mut u = match self.users.get(&name[..]) {
                Some(existing) => {
                    let mut u = existing.clone();
                    let _ = u.apply(&self.ci, b"reset", pubsub_default);
                    u
                }
                None => User::new(&self.ci, name, pubsub_default),
            };
            for op in &def[1..] {
                if let Err(e) = u.apply(&self.ci, op, pubsub_default) {
                    server_log(
                        LogLevel::Warning,
                        &format!(
                            "Error loading ACL rule '{}' for the user named '{}': {}",
                            String::from_utf8_lossy(op),
                            String::from_utf8_lossy(name),
                            e.message()
                        ),
                    );
                    return false;
                }
            }
            if u.flags & USER_FLAG_DISABLED != 0 {
                server_log(
                    LogLevel::Notice,
                    &format!(
                        "The user '{}' is disabled (there is no 'on' modifier in the user description). Make sure this is not a configuration error.",
                        String::from_utf8_lossy(name)
                    ),
                );
            }
            self.users.insert(name.clone(), u);
        }
        self.users_to_load = defs;
        true
    }

    /// ACLLoadFromFile: parse the whole file into a fresh user set; any
    /// error leaves the current users untouched and lists every problem.
    pub fn load_from_file(&mut self, filename: &str, pubsub_default: u32) -> Result<(), String> {
        let text = std::fs::read(filename).map_err(|e| {
            format!(
                "Error loading ACLs, opening file '{filename}': {}",
                crate::config::strerror(&e)
            )
        })?;
        let mut errors = String::new();
        let mut users: BTreeMap<Bytes, User> = BTreeMap::new();
        for (i, raw) in text.split(|&b| b == b'\n').enumerate() {
            let linenum = i + 1;
            let line = trim_bytes(raw, b" \t\r\n");
            if line.is_empty() {
                continue;
            }
            let argv: Vec<Bytes> = line
                .split(|&b| b == b' ')
                .map(Bytes::copy_from_slice)
                .collect();
            if &argv[0][..] != b"user" || argv.len() < 2 {
                errors.push_str(&format!(
                    "{filename}:{linenum} should start with user keyword followed by the username. "
                ));
                continue;
            }
            if string_has_spaces(&argv[1]) {
                errors.push_str(&format!(
                    "'{filename}:{linenum}: username '{}' contains invalid characters. ",
                    String::from_utf8_lossy(&argv[1])
                ));
                continue;
            }
            if users.contains_key(&argv[1]) {
                errors.push_str(&format!(
                    "WARNING: Duplicate user '{}' found on line {linenum}. ",
                    String::from_utf8_lossy(&argv[1])
                ));
                continue;
            }
            let mut u = User::new(&self.ci, &argv[1], pubsub_default);
            let merged = match merge_selector_arguments(&argv[2..]) {
                Ok(m) => m,
                Err(_) => {
                    errors.push_str(&format!(
                        "{filename}:{linenum}: Unmatched parenthesis in selector definition."
                    ));
                    Vec::new()
                }
            };
            let mut syntax_error = false;
            for op in &merged {
                let op = trim_bytes(op, b"\t\r\n");
                if let Err(e) = u.apply(&self.ci, op, pubsub_default) {
                    if e == AclRuleError::UnknownCommand {
                        errors.push_str(&format!(
                            "{filename}:{linenum}: Error in applying operation '{}': {}. ",
                            String::from_utf8_lossy(op),
                            e.message()
                        ));
                    } else if !syntax_error {
                        errors.push_str(&format!("{filename}:{linenum}: {}. ", e.message()));
                        syntax_error = true;
                    }
                }
            }
            users.insert(u.name.clone(), u);
        }
        if !errors.is_empty() {
            errors.push_str(
                "WARNING: ACL errors detected, no change to the previously active ACL rules was performed",
            );
            return Err(errors);
        }
        if !users.contains_key(DEFAULT_USER) {
            let def = self.create_default_user(pubsub_default);
            users.insert(def.name.clone(), def);
        }
        self.users = users;
        Ok(())
    }

    /// ACLSaveToFile: every user as a `user` line, through a temp file
    /// renamed over the old one.
    /// Returns false after logging the I/O error.
    pub fn save_to_file(&self, filename: &str) -> bool {
        let mut acl = Vec::new();
        for u in self.users.values() {
            acl.extend_from_slice(b"user ");
            acl.extend_from_slice(&u.name);
            acl.push(b' ');
            acl.extend_from_slice(&u.describe(&self.ci));
            acl.push(b'\n');
        }
        let tmp = format!("{filename}.tmp-{}-{}", std::process::id(), server::mstime());
        if let Err(e) = std::fs::write(&tmp, &acl) {
            server_log(
                LogLevel::Warning,
                &format!(
                    "Opening temp ACL file for ACL SAVE: {}",
                    crate::config::strerror(&e)
                ),
            );
            let _ = std::fs::remove_file(&tmp);
            return false;
        }
        if let Err(e) = std::fs::rename(&tmp, filename) {
            server_log(
                LogLevel::Warning,
                &format!(
                    "Renaming ACL file for ACL SAVE: {}",
                    crate::config::strerror(&e)
                ),
            );
            let _ = std::fs::remove_file(&tmp);
            return false;
        }
        true
    }

    /// ACLCheckAllUserCommandPerm: Ok when some selector allows the whole
    /// command; otherwise the most relevant failure (a key or channel over
    /// a command; the last argument among equals) and its argv index.
    pub fn check_all_user_command_perm(
        &self,
        cmds: &CommandTable,
        user: &[u8],
        id: CmdId,
        argv: &[Bytes],
    ) -> Result<(), (AclDenied, usize)> {
        let Some(u) = self.users.get(user) else {
            return Ok(());
        };
        let mut relevant = (AclDenied::Cmd, 0usize);
        let mut keys = None;
        for s in &u.selectors {
            match s.check_cmd(&self.ci, cmds, id, argv, &mut keys) {
                Ok(()) => return Ok(()),
                Err((why, idx)) => {
                    if why > relevant.0 || (why == relevant.0 && idx > relevant.1) {
                        relevant = (why, idx);
                    }
                }
            }
        }
        Err(relevant)
    }

    /// ACLUserCheckKeyPerm.
    pub fn user_check_key_perm(&self, user: &[u8], key: &[u8], flags: &[&str]) -> bool {
        self.users
            .get(user)
            .is_none_or(|u| u.selectors.iter().any(|s| s.check_key(key, flags)))
    }

    /// ACLUserCheckChannelPerm.
    pub fn user_check_channel_perm(&self, user: &[u8], channel: &[u8], is_pattern: bool) -> bool {
        self.users.get(user).is_none_or(|u| {
            u.selectors.iter().any(|s| {
                s.flags & SELECTOR_FLAG_ALLCHANNELS != 0
                    || check_channel_against_list(&s.channels, channel, is_pattern)
            })
        })
    }
}

fn trim_bytes<'a>(mut b: &'a [u8], set: &[u8]) -> &'a [u8] {
    while let Some((f, rest)) = b.split_first() {
        if !set.contains(f) {
            break;
        }
        b = rest;
    }
    while let Some((l, rest)) = b.split_last() {
        if !set.contains(l) {
            break;
        }
        b = rest;
    }
    b
}

/// acl-pubsub-default as selector flags: `allchannels` adds the flag to
/// every new selector, `resetchannels` (7.0's default) adds nothing.
pub fn pubsub_default_flags(srv: &Server) -> u32 {
    if srv.config.acl_pubsub_default_allchannels {
        SELECTOR_FLAG_ALLCHANNELS
    } else {
        0
    }
}

/// ACLLoadUsersAtStartup: `user` lines of redis.conf, or the aclfile, not
/// both. Returns the exit code on error.
pub fn acl_load_users_at_startup(srv: &mut Server) -> Result<(), i32> {
    let pd = pubsub_default_flags(srv);
    let aclfile = srv.config.aclfile.clone();
    if !aclfile.is_empty() && !srv.acl.users_to_load.is_empty() {
        server_log(LogLevel::Warning, "Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid. This setup is very likely to lead to configuration errors and security holes, please define either an ACL file or declare users directly in your redis.conf, but not both.");
        return Err(1);
    }
    if !srv.acl.load_configured_users(pd) {
        server_log(
            LogLevel::Warning,
            "Critical error while loading ACLs. Exiting.",
        );
        return Err(1);
    }
    if !aclfile.is_empty() {
        if let Err(errors) = srv.acl.load_from_file(&aclfile, pd) {
            server_log(
                LogLevel::Warning,
                &format!("Aborting Redis startup because of ACL errors: {errors}"),
            );
            return Err(1);
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Checks used by the rest of the server
// ---------------------------------------------------------------------------

/// authRequired: the default user needs a password (or is off) and the
/// client has not authenticated.
pub fn auth_required(srv: &Server, c: &Client) -> bool {
    let d = srv.acl.default_user();
    (d.flags & USER_FLAG_NOPASS == 0 || d.flags & USER_FLAG_DISABLED != 0) && !c.authenticated
}

/// Protected mode applies while the default user is `nopass`
/// (clientAcceptHandler tests DefaultUser->flags & USER_FLAG_NOPASS).
pub fn default_user_is_nopass(srv: &Server) -> bool {
    srv.acl.default_user().flags & USER_FLAG_NOPASS != 0
}

/// Whether a new connection starts authenticated as `default`.
pub fn default_user_authenticates(srv: &Server) -> bool {
    let d = srv.acl.default_user();
    d.flags & USER_FLAG_NOPASS != 0 && d.flags & USER_FLAG_DISABLED == 0
}

/// Whether the user's root selector allows everything (no check can fail).
pub fn user_is_unrestricted(srv: &Server, user: &[u8]) -> bool {
    const ALL: u32 = SELECTOR_FLAG_ALLCOMMANDS | SELECTOR_FLAG_ALLKEYS | SELECTOR_FLAG_ALLCHANNELS;
    srv.acl
        .users
        .get(user)
        .is_none_or(|u| u.selectors[0].flags & ALL == ALL)
}

/// ACLUserCheckCmdWithUnrestrictedKeyAccess for the client's running
/// command: some selector allows the command AND grants `flags` (e.g.
/// `access` = read) on every key (`~*`, `%R~*`, allkeys). SORT's BY/GET
/// patterns need it.
pub fn user_check_cmd_with_unrestricted_key_access(
    srv: &Server,
    c: &Client,
    flags: &[&str],
) -> bool {
    let Ok(Some(id)) = srv.commands.lookup_argv(&c.argv) else {
        return false;
    };
    let Some(u) = srv.acl.users.get(&c.user) else {
        return true;
    };
    let need = key_flags_to_permissions(flags);
    let mut keys = None;
    u.selectors.iter().any(|s| {
        s.check_cmd(&srv.acl.ci, &srv.commands, id, &c.argv, &mut keys)
            .is_ok()
            && (s.flags & SELECTOR_FLAG_ALLKEYS != 0
                || s.patterns
                    .iter()
                    .any(|p| p.flags & need == need && &p.pattern[..] == b"*"))
    })
}

/// ACLCheckAllPerm for the client's current command.
pub fn acl_check_all_perm(srv: &Server, c: &Client, id: CmdId) -> Result<(), (AclDenied, usize)> {
    if user_is_unrestricted(srv, &c.user) {
        return Ok(());
    }
    srv.acl
        .check_all_user_command_perm(&srv.commands, &c.user, id, &c.argv)
}

/// ACLAuthenticateUser: on success the client becomes that user; on failure
/// an `auth` entry goes to the ACL LOG.
pub fn acl_authenticate_user(srv: &mut Server, c: &mut Client, user: &[u8], pass: &[u8]) -> bool {
    if srv.acl.check_user_credentials(user, pass) {
        c.authenticated = true;
        c.user = Bytes::copy_from_slice(user);
        true
    } else {
        let ctx = if c.has_flag(networking::CLIENT_MULTI) {
            AclLogCtx::Multi
        } else {
            AclLogCtx::Toplevel
        };
        let object = c.argv.first().cloned().unwrap_or_default();
        add_acl_log_entry(srv, c, AclDenied::Auth, ctx, Some(user), Some(object));
        false
    }
}

/// addACLLogEntry: log a denial, or bump a matching recent entry (the ten
/// newest are compared). `object` defaults by reason: the command's full
/// name, or the denied key/channel at `argpos`.
pub fn add_acl_log_entry_at(
    srv: &mut Server,
    c: &Client,
    reason: AclDenied,
    context: AclLogCtx,
    argpos: usize,
    fullname: &str,
) {
    let object = match reason {
        AclDenied::Cmd => Bytes::copy_from_slice(fullname.as_bytes()),
        AclDenied::Key | AclDenied::Channel => c.argv.get(argpos).cloned().unwrap_or_default(),
        AclDenied::Auth => c.argv.first().cloned().unwrap_or_default(),
    };
    add_acl_log_entry(srv, c, reason, context, None, Some(object));
}

fn add_acl_log_entry(
    srv: &mut Server,
    c: &Client,
    reason: AclDenied,
    context: AclLogCtx,
    username: Option<&[u8]>,
    object: Option<Bytes>,
) {
    // A script's commands are logged with its caller's client info.
    let caller_info = srv
        .script_run_ctx
        .as_ref()
        .and_then(|x| x.caller_info.as_ref());
    let cinfo = match (c.has_flag(networking::CLIENT_SCRIPT), caller_info) {
        (true, Some(info)) => info.clone(),
        _ => networking::client_info_string(c),
    };
    let le = AclLogEntry {
        count: 1,
        reason,
        context,
        object: object.unwrap_or_default(),
        username: Bytes::copy_from_slice(username.unwrap_or(&c.user)),
        ctime: server::mstime(),
        cinfo,
    };
    let log = &mut srv.acl.log;
    let matched = log.iter().take(10).position(|cur| {
        cur.reason == le.reason
            && cur.context == le.context
            && (cur.ctime - le.ctime).abs() <= ACL_LOG_GROUPING_MAX_TIME_DELTA
            && cur.object == le.object
            && cur.username == le.username
    });
    match matched {
        Some(i) => {
            if let Some(mut cur) = log.remove(i) {
                cur.cinfo = le.cinfo;
                cur.ctime = le.ctime;
                cur.count += 1;
                log.push_front(cur);
            }
        }
        None => {
            log.push_front(le);
            let max = srv.config.acllog_max_len.max(0) as usize;
            while log.len() > max {
                log.pop_back();
            }
        }
    }
}

/// The NOPERM reply of processCommand for a denial.
pub fn noperm_error(reason: AclDenied, fullname: &str) -> String {
    match reason {
        AclDenied::Cmd => {
            format!("NOPERM this user has no permissions to run the '{fullname}' command")
        }
        AclDenied::Key => {
            "NOPERM this user has no permissions to access one of the keys used as arguments".into()
        }
        AclDenied::Channel => {
            "NOPERM this user has no permissions to access one of the channels used as arguments"
                .into()
        }
        AclDenied::Auth => "NOPERM no permission".into(),
    }
}

/// getAclErrorMessage: the end of a script's denial text.
pub fn get_acl_error_message(reason: AclDenied) -> &'static str {
    match reason {
        AclDenied::Cmd => "can't run this command or subcommand",
        AclDenied::Key => {
            "can't access at least one of the keys mentioned in the command arguments"
        }
        AclDenied::Channel => "can't publish to the channel mentioned in the command",
        AclDenied::Auth => "lacking the permissions for the command",
    }
}

/// Every client of `user`, the running one (`c`) included: close them (a
/// deleted user, ACL LOAD). The running client is closed after its reply.
fn kill_clients_of_user(srv: &mut Server, c: &mut Client, user: &[u8]) {
    for cl in srv.clients.values_mut() {
        if cl.user[..] == *user {
            cl.user = Bytes::from_static(DEFAULT_USER);
            cl.authenticated = false;
            cl.flags |= CLIENT_CLOSE_ASAP;
            srv.clients_to_close.push(cl.token);
        }
    }
    if c.user[..] == *user {
        c.user = Bytes::from_static(DEFAULT_USER);
        c.authenticated = false;
        c.flags |= CLIENT_CLOSE_AFTER_REPLY;
    }
}

/// ACLKillPubsubClientsIfNeeded: after a user's rules changed, close its
/// pub/sub clients subscribed to a channel or pattern the new rules no
/// longer allow. Nothing to do when a selector allows all channels or the
/// new channel list contains every old one.
fn kill_pubsub_clients_if_needed(srv: &mut Server, c: &mut Client, original: &User) {
    let Some(new) = srv.acl.users.get(&original.name) else {
        return;
    };
    if new
        .selectors
        .iter()
        .any(|s| s.flags & SELECTOR_FLAG_ALLCHANNELS != 0)
    {
        return;
    }
    let upcoming: Vec<Bytes> = new
        .selectors
        .iter()
        .flat_map(|s| s.channels.iter().cloned())
        .collect();
    let superset = original.selectors.iter().all(|s| {
        s.flags & SELECTOR_FLAG_ALLCHANNELS == 0
            && s.channels.iter().all(|ch| upcoming.contains(ch))
    });
    if superset {
        return;
    }
    let violates = |cl: &Client| {
        cl.user == original.name
            && networking::client_type(cl) == networking::ClientType::Pubsub
            && (cl
                .pubsub_patterns
                .iter()
                .any(|p| !check_channel_against_list(&upcoming, p, true))
                || cl
                    .pubsub_channels
                    .iter()
                    .chain(cl.pubsubshard_channels.iter())
                    .any(|ch| !check_channel_against_list(&upcoming, ch, false)))
    };
    let doomed: Vec<mio::Token> = srv
        .clients
        .values()
        .filter(|cl| violates(cl))
        .map(|cl| cl.token)
        .collect();
    for t in doomed {
        crate::networking::free_client(srv, t);
    }
    if violates(c) {
        c.flags |= CLIENT_CLOSE_AFTER_REPLY;
    }
}

// ---------------------------------------------------------------------------
// ACL subcommands
// ---------------------------------------------------------------------------

/// ACL SETUSER username [rule [rule ...]]
// redis: acl.c aclCommand ("setuser") -> ACLStringSetUser
pub fn acl_setuser_command(srv: &mut Server, c: &mut Client) {
    // The rules may hold passwords: SLOWLOG and MONITOR never show them.
    for j in 2..c.argc() {
        c.redact_client_command_argument(j);
    }
    let username = c.argv[2].clone();
    if string_has_spaces(&username) {
        return c.add_reply_error("ERR Usernames can't contain spaces or null characters");
    }
    let pd = pubsub_default_flags(srv);
    let rules: Vec<Bytes> = c.argv[3..].to_vec();
    match srv.acl.string_set_user(&username, &rules, pd) {
        Ok(original) => {
            if let Some(orig) = original {
                kill_pubsub_clients_if_needed(srv, c, &orig);
            }
            c.add_reply_ok();
        }
        Err(e) => {
            let safe: String = e
                .chars()
                .map(|ch| if ch == '\r' || ch == '\n' { ' ' } else { ch })
                .collect();
            c.add_reply_error(&format!("ERR {safe}"));
        }
    }
}

/// ACL DELUSER username [username ...]
// redis: acl.c aclCommand ("deluser")
pub fn acl_deluser_command(srv: &mut Server, c: &mut Client) {
    if c.argv[2..].iter().any(|u| &u[..] == DEFAULT_USER) {
        return c.add_reply_error("ERR The 'default' user cannot be removed");
    }
    let mut deleted = 0;
    for j in 2..c.argc() {
        let name = c.argv[j].clone();
        if srv.acl.users.remove(&name).is_some() {
            kill_clients_of_user(srv, c, &name);
            deleted += 1;
        }
    }
    c.add_reply_integer(deleted);
}

/// aclAddReplySelectorDescription: commands, keys, channels.
fn add_reply_selector_description(c: &mut Client, ci: &CmdIndex, s: &Selector) {
    c.add_reply_bulk(b"commands");
    c.add_reply_bulk(s.describe_command_rules(ci).as_bytes());
    c.add_reply_bulk(b"keys");
    if s.flags & SELECTOR_FLAG_ALLKEYS != 0 {
        c.add_reply_bulk(b"~*");
    } else {
        let mut dsl = Vec::new();
        for (i, p) in s.patterns.iter().enumerate() {
            if i > 0 {
                dsl.push(b' ');
            }
            cat_pattern_string(&mut dsl, p);
        }
        c.add_reply_bulk(&dsl);
    }
    c.add_reply_bulk(b"channels");
    if s.flags & SELECTOR_FLAG_ALLCHANNELS != 0 {
        c.add_reply_bulk(b"&*");
    } else {
        let mut dsl = Vec::new();
        for (i, ch) in s.channels.iter().enumerate() {
            if i > 0 {
                dsl.push(b' ');
            }
            dsl.push(b'&');
            dsl.extend_from_slice(ch);
        }
        c.add_reply_bulk(&dsl);
    }
}

/// ACL GETUSER username
// redis: acl.c aclCommand ("getuser")
pub fn acl_getuser_command(srv: &mut Server, c: &mut Client) {
    let Some(u) = srv.acl.users.get(&c.argv[2]) else {
        return c.add_reply_null();
    };
    let ci = &srv.acl.ci;
    c.add_reply_map_len(6);
    c.add_reply_bulk(b"flags");
    let flags: Vec<&str> = USER_FLAG_NAMES
        .iter()
        .filter(|(_, f)| u.flags & f != 0)
        .map(|(n, _)| *n)
        .collect();
    c.add_reply_set_len(flags.len());
    for f in flags {
        c.add_reply_bulk(f.as_bytes());
    }
    c.add_reply_bulk(b"passwords");
    c.add_reply_array_len(u.passwords.len());
    for p in &u.passwords {
        c.add_reply_bulk(p.as_bytes());
    }
    add_reply_selector_description(c, ci, &u.selectors[0]);
    c.add_reply_bulk(b"selectors");
    c.add_reply_array_len(u.selectors.len() - 1);
    for s in &u.selectors[1..] {
        c.add_reply_map_len(3);
        add_reply_selector_description(c, ci, s);
    }
}

/// ACL LIST
// redis: acl.c aclCommand ("list")
pub fn acl_list_command(srv: &mut Server, c: &mut Client) {
    c.add_reply_array_len(srv.acl.users.len());
    for u in srv.acl.users.values() {
        let mut line = b"user ".to_vec();
        line.extend_from_slice(&u.name);
        line.push(b' ');
        line.extend_from_slice(&u.describe(&srv.acl.ci));
        c.add_reply_bulk(&line);
    }
}

/// ACL USERS
// redis: acl.c aclCommand ("users")
pub fn acl_users_command(srv: &mut Server, c: &mut Client) {
    c.add_reply_array_len(srv.acl.users.len());
    for name in srv.acl.users.keys() {
        c.add_reply_bulk(name);
    }
}

/// ACL WHOAMI
// redis: acl.c aclCommand ("whoami")
pub fn acl_whoami_command(_srv: &mut Server, c: &mut Client) {
    let name = c.user.clone();
    c.add_reply_bulk(&name);
}

/// ACL LOAD and ACL SAVE need an aclfile.
fn no_aclfile(srv: &Server, c: &mut Client) -> bool {
    if srv.config.aclfile.is_empty() {
        c.add_reply_error("ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration.");
        return true;
    }
    false
}

/// ACL LOAD
// redis: acl.c aclCommand ("load") -> ACLLoadFromFile
pub fn acl_load_command(srv: &mut Server, c: &mut Client) {
    if no_aclfile(srv, c) {
        return;
    }
    let pd = pubsub_default_flags(srv);
    let file = srv.config.aclfile.clone();
    let old: Vec<Bytes> = srv.acl.users.keys().cloned().collect();
    match srv.acl.load_from_file(&file, pd) {
        Ok(()) => {
            // The old users are freed: their clients go (the default user is
            // copied in place, so its clients stay).
            for name in old.iter().filter(|n| n[..] != *DEFAULT_USER) {
                kill_clients_of_user(srv, c, name);
            }
            c.add_reply_ok();
        }
        Err(e) => c.add_reply_error(&format!("ERR {e}")),
    }
}

/// ACL SAVE
// redis: acl.c aclCommand ("save") -> ACLSaveToFile
pub fn acl_save_command(srv: &mut Server, c: &mut Client) {
    if no_aclfile(srv, c) {
        return;
    }
    match srv.acl.save_to_file(&srv.config.aclfile) {
        true => c.add_reply_ok(),
        false => c.add_reply_error("ERR There was an error trying to save the ACLs. Please check the server logs for more information"),
    }
}

/// ACL CAT [category]
// redis: acl.c aclCommand ("cat")
pub fn acl_cat_command(srv: &mut Server, c: &mut Client) {
    if c.argc() == 2 {
        c.add_reply_array_len(ACL_CATEGORY_NAMES.len());
        for n in ACL_CATEGORY_NAMES {
            c.add_reply_bulk(n.as_bytes());
        }
        return;
    }
    if c.argc() != 3 {
        return c.add_reply_subcommand_syntax_error();
    }
    let Some(cflag) = category_flag(c.arg(2)) else {
        let name = server::lossy_truncated(c.arg(2), 128);
        return c.add_reply_error(&format!("ERR Unknown category '{name}'"));
    };
    let ci = &srv.acl.ci;
    let names: Vec<&str> = (0..ci.n)
        .filter(|&id| ci.cats[id] & cflag != 0)
        .map(|id| ci.names[id])
        .collect();
    c.add_reply_array_len(names.len());
    for n in names {
        c.add_reply_bulk(n.as_bytes());
    }
}

/// ACL GENPASS [bits]
// redis: acl.c aclCommand ("genpass")
pub fn acl_genpass_command(_srv: &mut Server, c: &mut Client) {
    if c.argc() > 3 {
        return c.add_reply_subcommand_syntax_error();
    }
    let mut bits = 256i64;
    if c.argc() == 3 {
        match protocol::util::string2ll(c.arg(2)) {
            Some(b) => bits = b,
            None => return c.add_reply_error(shared::NOT_INTEGER_ERR),
        }
    }
    if bits <= 0 || bits > GENPASS_MAX_BITS {
        return c.add_reply_error(&format!("ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to {GENPASS_MAX_BITS}"));
    }
    let chars = ((bits + 3) / 4) as usize;
    c.add_reply_bulk(server::random_hex(chars).as_bytes());
}

/// ACL LOG [count|RESET]
// redis: acl.c aclCommand ("log")
pub fn acl_log_command(srv: &mut Server, c: &mut Client) {
    if c.argc() > 3 {
        return c.add_reply_subcommand_syntax_error();
    }
    let mut count = 10i64;
    if c.argc() == 3 {
        if c.arg(2).eq_ignore_ascii_case(b"reset") {
            srv.acl.log.clear();
            return c.add_reply_ok();
        }
        match protocol::util::string2ll(c.arg(2)) {
            Some(n) => count = n.max(0),
            None => return c.add_reply_error(shared::NOT_INTEGER_ERR),
        }
    }
    let count = (count as usize).min(srv.acl.log.len());
    let now = server::mstime();
    c.add_reply_array_len(count);
    for le in srv.acl.log.iter().take(count) {
        c.add_reply_map_len(7);
        c.add_reply_bulk(b"count");
        c.add_reply_integer(le.count as i64);
        c.add_reply_bulk(b"reason");
        c.add_reply_bulk(match le.reason {
            AclDenied::Cmd => b"command",
            AclDenied::Key => b"key",
            AclDenied::Channel => b"channel",
            AclDenied::Auth => b"auth",
        });
        c.add_reply_bulk(b"context");
        c.add_reply_bulk(match le.context {
            AclLogCtx::Toplevel => b"toplevel".as_slice(),
            AclLogCtx::Multi => b"multi",
            AclLogCtx::Lua => b"lua",
        });
        c.add_reply_bulk(b"object");
        c.add_reply_bulk(&le.object);
        c.add_reply_bulk(b"username");
        c.add_reply_bulk(&le.username);
        c.add_reply_bulk(b"age-seconds");
        c.add_reply_double((now - le.ctime) as f64 / 1000.0);
        c.add_reply_bulk(b"client-info");
        c.add_reply_bulk(&le.cinfo);
    }
}

/// ACL DRYRUN username command [arg ...]
// redis: acl.c aclCommand ("dryrun")
pub fn acl_dryrun_command(srv: &mut Server, c: &mut Client) {
    if !srv.acl.users.contains_key(&c.argv[2]) {
        let u = String::from_utf8_lossy(c.arg(2)).into_owned();
        return c.add_reply_error(&format!("ERR User '{u}' not found"));
    }
    let argv: Vec<Bytes> = c.argv[3..].to_vec();
    let Ok(Some(id)) = srv.commands.lookup_argv(&argv) else {
        let name = String::from_utf8_lossy(c.arg(3)).into_owned();
        return c.add_reply_error(&format!("ERR Command '{name}' not found"));
    };
    let cmd = srv.commands.get(id);
    let argc = argv.len() as i32;
    if (cmd.spec.arity > 0 && cmd.spec.arity != argc) || argc < -cmd.spec.arity {
        let msg = format!(
            "ERR wrong number of arguments for '{}' command",
            cmd.fullname
        );
        return c.add_reply_error(&msg);
    }
    let fullname = cmd.fullname;
    match srv
        .acl
        .check_all_user_command_perm(&srv.commands, &c.argv[2], id, &argv)
    {
        Ok(()) => c.add_reply_ok(),
        Err((why, idx)) => {
            let mut msg = match why {
                AclDenied::Cmd => {
                    format!("This user has no permissions to run the '{fullname}' command")
                        .into_bytes()
                }
                AclDenied::Key => b"This user has no permissions to access the '".to_vec(),
                _ => b"This user has no permissions to access the '".to_vec(),
            };
            if why != AclDenied::Cmd {
                msg.extend_from_slice(&argv[idx]);
                msg.extend_from_slice(if why == AclDenied::Key {
                    b"' key"
                } else {
                    b"' channel"
                });
            }
            c.add_reply_bulk(&msg);
        }
    }
}

/// ACL HELP
// redis: acl.c aclCommand ("help")
pub fn acl_help_command(_srv: &mut Server, c: &mut Client) {
    c.add_reply_help(
        "acl",
        &[
            "CAT [<category>]",
            "    List all commands that belong to <category>, or all command categories",
            "    when no category is specified.",
            "DELUSER <username> [<username> ...]",
            "    Delete a list of users.",
            "DRYRUN <username> <command> [<arg> ...]",
            "    Returns whether the user can execute the given command without executing the command.",
            "GETUSER <username>",
            "    Get the user's details.",
            "GENPASS [<bits>]",
            "    Generate a secure 256-bit user password. The optional `bits` argument can",
            "    be used to specify a different size.",
            "LIST",
            "    Show users details in config file format.",
            "LOAD",
            "    Reload users from the ACL file.",
            "LOG [<count> | RESET]",
            "    Show the ACL log entries.",
            "SAVE",
            "    Save the current config to the ACL file.",
            "SETUSER <username> <attribute> [<attribute> ...]",
            "    Create or modify a user with the specified attributes.",
            "USERS",
            "    List all the registered usernames.",
            "WHOAMI",
            "    Return the current connection username.",
        ],
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acl() -> Acl {
        Acl::new(&CommandTable::new())
    }

    #[test]
    fn time_independent_eq_needs_same_bytes_and_length() {
        assert!(time_independent_eq(b"secret", b"secret"));
        assert!(!time_independent_eq(b"secret", b"secreT"));
        assert!(!time_independent_eq(b"secret", b"secret2"));
        assert!(!time_independent_eq(b"", b"x"));
        assert!(time_independent_eq(b"", b""));
    }

    #[test]
    fn hash_password_is_hex_sha256() {
        assert_eq!(
            hash_password(b"foo"),
            "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"
        );
    }

    #[test]
    fn default_user_describes_as_redis() {
        let a = acl();
        let d = a.default_user().describe(&a.ci);
        assert_eq!(String::from_utf8_lossy(&d), "on nopass ~* &* +@all");
    }

    #[test]
    fn category_rules_describe_back() {
        let mut a = acl();
        let rules: Vec<Bytes> = ["on", "+@read", "-get"]
            .iter()
            .map(|s| Bytes::from(*s))
            .collect();
        a.string_set_user(b"u", &rules, 0).unwrap();
        let d = a.users[&b"u"[..]].describe(&a.ci);
        assert_eq!(
            String::from_utf8_lossy(&d),
            "on resetchannels -@all +@read -get"
        );
    }
}
