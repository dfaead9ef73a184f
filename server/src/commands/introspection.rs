//! COMMAND and its subcommands, and the key extraction from argv that
//! COMMAND GETKEYS, ACL and cluster redirection share (server.c
//! commandCommand and friends, db.c getKeysFromCommand).

use bytes::Bytes;
use storage::util::string_match;

use super::{CmdId, CommandTable, RedisCommand, CMD_FLAG_NAMES, CMD_NO_MANDATORY_KEYS};
use crate::commands_meta::{
    lookup_meta, BeginSearch, CommandArg, CommandDocs, CommandMeta, FindKeys, KeySpec,
};
use crate::networking::Client;
use crate::server::Server;

// ---- COMMAND (server.c commandCommand and friends) ----
//
// COMMAND, COMMAND INFO/DOCS/LIST/COUNT/GETKEYS/GETKEYSANDFLAGS/HELP. What
// they print comes from two places joined by full name: our table (table.rs)
// (arity, flags, legacy key positions: what dispatch uses) and
// commands_meta.rs (ACL categories, tips, key specs, docs: generated from a
// real Redis 7.0.15 by scripts/gen-command-meta.py).
//
// Redis walks its command dict, whose order depends on a random hash seed;
// we walk the table, which is as valid an order and a stable one.

/// The metadata of a command; an empty record when commands_meta.rs has not
/// been regenerated since the command was added (a unit test catches that).
pub fn meta_of(cmd: &RedisCommand) -> &'static CommandMeta {
    static EMPTY: CommandMeta = CommandMeta {
        fullname: "",
        acl_categories: &[],
        tips: &[],
        key_specs: &[],
        docs: CommandDocs {
            summary: "",
            since: "",
            group: "",
            complexity: None,
            doc_flags: &[],
            deprecated_since: None,
            replaced_by: None,
            history: &[],
            arguments: &[],
        },
    };
    lookup_meta(cmd.fullname).unwrap_or(&EMPTY)
}

/// lookupCommandBySds: "get" or "config|get" (case-insensitive). A name
/// with more than one `|`, or a `|` after a command without subcommands,
/// finds nothing.
fn lookup_by_fullname(table: &CommandTable, name: &[u8]) -> Option<CmdId> {
    let mut parts = name.split(|&b| b == b'|');
    let base = table.lookup(parts.next()?)?;
    match (parts.next(), parts.next()) {
        (None, _) => Some(base),
        (Some(sub), None) => table.lookup_sub(base, sub),
        _ => None,
    }
}

/// A set of status strings (flag names, ACL categories).
fn add_reply_status_set(c: &mut Client, items: &[&str]) {
    c.add_reply_set_len(items.len());
    for i in items {
        c.add_reply_status(i.as_bytes());
    }
}

/// addReplyCommandInfo: the 10-element description of one command.
fn add_reply_command_info(srv: &Server, c: &mut Client, id: CmdId) {
    let cmd = srv.commands.get(id);
    let meta = meta_of(cmd);
    c.add_reply_array_len(10);
    c.add_reply_bulk(cmd.fullname.as_bytes());
    c.add_reply_integer(cmd.spec.arity as i64);
    let flags: Vec<&str> = CMD_FLAG_NAMES
        .iter()
        .filter(|(f, _)| cmd.spec.flags & f != 0)
        .map(|(_, n)| *n)
        .collect();
    add_reply_status_set(c, &flags);
    c.add_reply_integer(cmd.spec.first_key as i64);
    c.add_reply_integer(cmd.spec.last_key as i64);
    c.add_reply_integer(cmd.spec.key_step as i64);
    add_reply_status_set(c, meta.acl_categories);
    c.add_reply_set_len(meta.tips.len());
    for t in meta.tips {
        c.add_reply_bulk(t.as_bytes());
    }
    add_reply_key_specs(c, meta.key_specs);
    if cmd.subcommands.is_empty() {
        c.add_reply_set_len(0);
    } else {
        let subs = subcommand_ids(srv, id);
        c.add_reply_array_len(subs.len());
        for sub in subs {
            add_reply_command_info(srv, c, sub);
        }
    }
}

/// The subcommands of a container, in table order.
fn subcommand_ids(srv: &Server, parent: CmdId) -> Vec<CmdId> {
    (0..srv.commands.commands.len())
        .map(CmdId)
        .filter(|&i| srv.commands.get(i).parent == Some(parent))
        .collect()
}

/// addReplyCommandKeySpecs.
fn add_reply_key_specs(c: &mut Client, specs: &[KeySpec]) {
    c.add_reply_set_len(specs.len());
    for spec in specs {
        c.add_reply_map_len(3 + usize::from(spec.notes.is_some()));
        if let Some(notes) = spec.notes {
            c.add_reply_bulk(b"notes");
            c.add_reply_bulk(notes.as_bytes());
        }
        c.add_reply_bulk(b"flags");
        add_reply_status_set(c, spec.flags);
        c.add_reply_bulk(b"begin_search");
        c.add_reply_map_len(2);
        c.add_reply_bulk(b"type");
        match spec.begin_search {
            BeginSearch::Unknown => add_reply_spec(c, "unknown", &[]),
            BeginSearch::Index(pos) => add_reply_spec(c, "index", &[("index", pos)]),
            BeginSearch::Keyword { keyword, startfrom } => {
                c.add_reply_bulk(b"keyword");
                c.add_reply_bulk(b"spec");
                c.add_reply_map_len(2);
                c.add_reply_bulk(b"keyword");
                c.add_reply_bulk(keyword.as_bytes());
                c.add_reply_bulk(b"startfrom");
                c.add_reply_integer(startfrom as i64);
            }
        }
        c.add_reply_bulk(b"find_keys");
        c.add_reply_map_len(2);
        c.add_reply_bulk(b"type");
        match spec.find_keys {
            FindKeys::Unknown => add_reply_spec(c, "unknown", &[]),
            FindKeys::Range {
                lastkey,
                keystep,
                limit,
            } => add_reply_spec(
                c,
                "range",
                &[("lastkey", lastkey), ("keystep", keystep), ("limit", limit)],
            ),
            FindKeys::Keynum {
                keynumidx,
                firstkey,
                keystep,
            } => add_reply_spec(
                c,
                "keynum",
                &[
                    ("keynumidx", keynumidx),
                    ("firstkey", firstkey),
                    ("keystep", keystep),
                ],
            ),
        }
    }
}

/// `<type>` then `spec` => a map of integer fields.
fn add_reply_spec(c: &mut Client, kind: &str, fields: &[(&str, i32)]) {
    c.add_reply_bulk(kind.as_bytes());
    c.add_reply_bulk(b"spec");
    c.add_reply_map_len(fields.len());
    for (name, v) in fields {
        c.add_reply_bulk(name.as_bytes());
        c.add_reply_integer(*v as i64);
    }
}

/// addReplyCommandDocs: a map whose optional fields appear only when set.
fn add_reply_command_docs(srv: &Server, c: &mut Client, id: CmdId) {
    let cmd = srv.commands.get(id);
    let d = &meta_of(cmd).docs;
    let has_subs = !cmd.subcommands.is_empty();
    let optional = [
        d.complexity.is_some(),
        !d.doc_flags.is_empty(),
        d.deprecated_since.is_some(),
        d.replaced_by.is_some(),
        !d.history.is_empty(),
        !d.arguments.is_empty(),
        has_subs,
    ];
    c.add_reply_map_len(3 + optional.iter().filter(|&&b| b).count());
    add_reply_bulk_pair(c, "summary", d.summary);
    add_reply_bulk_pair(c, "since", d.since);
    add_reply_bulk_pair(c, "group", d.group);
    if let Some(x) = d.complexity {
        add_reply_bulk_pair(c, "complexity", x);
    }
    if !d.doc_flags.is_empty() {
        c.add_reply_bulk(b"doc_flags");
        add_reply_status_set(c, d.doc_flags);
    }
    if let Some(x) = d.deprecated_since {
        add_reply_bulk_pair(c, "deprecated_since", x);
    }
    if let Some(x) = d.replaced_by {
        add_reply_bulk_pair(c, "replaced_by", x);
    }
    if !d.history.is_empty() {
        c.add_reply_bulk(b"history");
        c.add_reply_set_len(d.history.len());
        for (since, changes) in d.history {
            c.add_reply_array_len(2);
            c.add_reply_bulk(since.as_bytes());
            c.add_reply_bulk(changes.as_bytes());
        }
    }
    if !d.arguments.is_empty() {
        c.add_reply_bulk(b"arguments");
        add_reply_command_args(c, d.arguments);
    }
    if has_subs {
        c.add_reply_bulk(b"subcommands");
        let subs = subcommand_ids(srv, id);
        c.add_reply_map_len(subs.len());
        for sub in subs {
            c.add_reply_bulk(srv.commands.get(sub).fullname.as_bytes());
            add_reply_command_docs(srv, c, sub);
        }
    }
}

fn add_reply_bulk_pair(c: &mut Client, name: &str, value: &str) {
    c.add_reply_bulk(name.as_bytes());
    c.add_reply_bulk(value.as_bytes());
}

/// addReplyCommandArgList: one map per argument, nested for oneof/block.
fn add_reply_command_args(c: &mut Client, args: &[CommandArg]) {
    c.add_reply_array_len(args.len());
    for a in args {
        // Key arguments, and patterns that name keys (SORT BY/GET).
        let is_key = a.key_spec_index != -1;
        let nested = a.kind == "oneof" || a.kind == "block";
        let optional = [
            is_key,
            a.token.is_some(),
            a.summary.is_some(),
            a.since.is_some(),
            a.deprecated_since.is_some(),
            !a.flags.is_empty(),
            nested,
        ];
        c.add_reply_map_len(2 + optional.iter().filter(|&&b| b).count());
        add_reply_bulk_pair(c, "name", a.name);
        add_reply_bulk_pair(c, "type", a.kind);
        if is_key {
            c.add_reply_bulk(b"key_spec_index");
            c.add_reply_integer(a.key_spec_index as i64);
        }
        for (field, value) in [
            ("token", a.token),
            ("summary", a.summary),
            ("since", a.since),
            ("deprecated_since", a.deprecated_since),
        ] {
            if let Some(v) = value {
                add_reply_bulk_pair(c, field, v);
            }
        }
        if !a.flags.is_empty() {
            c.add_reply_bulk(b"flags");
            add_reply_status_set(c, a.flags);
        }
        if nested {
            c.add_reply_bulk(b"arguments");
            add_reply_command_args(c, a.arguments);
        }
    }
}

/// COMMAND
// redis: server.c commandCommand
pub fn command_command(srv: &mut Server, c: &mut Client) {
    let ids: Vec<CmdId> = srv.commands.top_level().map(|(id, _)| id).collect();
    c.add_reply_array_len(ids.len());
    for id in ids {
        add_reply_command_info(srv, c, id);
    }
}

/// COMMAND COUNT
// redis: server.c commandCountCommand
pub fn command_count_command(srv: &mut Server, c: &mut Client) {
    // dictSize(server.commands): a command renamed to "" no longer counts.
    c.add_reply_integer(srv.commands.names() as i64);
}

/// COMMAND INFO [command-name [command-name ...]]
// redis: server.c commandInfoCommand
pub fn command_info_command(srv: &mut Server, c: &mut Client) {
    if c.argc() == 2 {
        return command_command(srv, c);
    }
    c.add_reply_array_len(c.argc() - 2);
    for j in 2..c.argc() {
        match lookup_by_fullname(&srv.commands, c.arg(j)) {
            Some(id) => add_reply_command_info(srv, c, id),
            None => c.add_reply_null(),
        }
    }
}

/// COMMAND DOCS [command-name [command-name ...]]
// redis: server.c commandDocsCommand (unknown names are skipped)
pub fn command_docs_command(srv: &mut Server, c: &mut Client) {
    let ids: Vec<CmdId> = if c.argc() == 2 {
        srv.commands.top_level().map(|(id, _)| id).collect()
    } else {
        (2..c.argc())
            .filter_map(|j| lookup_by_fullname(&srv.commands, c.arg(j)))
            .collect()
    };
    c.add_reply_map_len(ids.len());
    for id in ids {
        c.add_reply_bulk(srv.commands.get(id).fullname.as_bytes());
        add_reply_command_docs(srv, c, id);
    }
}

/// COMMAND LIST FILTERBY's three filters (commandListFilterType).
enum ListFilter {
    /// No modules exist: a MODULE filter matches nothing.
    Module,
    /// "@read" form of a known category, or None for an unknown one.
    AclCat(Option<String>),
    Pattern(Bytes),
}

impl ListFilter {
    fn matches(&self, cmd: &RedisCommand) -> bool {
        match self {
            ListFilter::Module => false,
            ListFilter::AclCat(None) => false,
            ListFilter::AclCat(Some(cat)) => meta_of(cmd).acl_categories.contains(&cat.as_str()),
            ListFilter::Pattern(p) => string_match(p, cmd.fullname.as_bytes(), true),
        }
    }
}

/// COMMAND LIST [FILTERBY MODULE module-name|ACLCAT category|PATTERN pattern]
// redis: server.c commandListCommand (subcommands are listed too)
pub fn command_list_command(srv: &mut Server, c: &mut Client) {
    let mut filter = None;
    let mut i = 2;
    while i < c.argc() {
        let moreargs = c.argc() - 1 - i;
        if !(c.arg(i).eq_ignore_ascii_case(b"filterby") && moreargs == 2) {
            return c.add_reply_syntax_error();
        }
        let (kind, arg) = (c.arg(i + 1), c.argv[i + 2].clone());
        filter = Some(if kind.eq_ignore_ascii_case(b"module") {
            ListFilter::Module
        } else if kind.eq_ignore_ascii_case(b"aclcat") {
            // The categories Redis 7.0 knows (acl.rs, ACLCommandCategories):
            // an unknown name filters out everything.
            let known = crate::acl::ACL_CATEGORY_NAMES
                .iter()
                .find(|n| n.as_bytes().eq_ignore_ascii_case(&arg));
            ListFilter::AclCat(known.map(|n| format!("@{n}")))
        } else if kind.eq_ignore_ascii_case(b"pattern") {
            ListFilter::Pattern(arg)
        } else {
            return c.add_reply_syntax_error();
        });
        i += 3;
    }
    // Each top-level command, then its subcommands (commandListWithFilter).
    let mut names = Vec::new();
    for (id, cmd) in srv.commands.top_level() {
        for cid in std::iter::once(id).chain(subcommand_ids(srv, id)) {
            let cmd = if cid == id {
                cmd
            } else {
                srv.commands.get(cid)
            };
            if filter.as_ref().is_none_or(|f| f.matches(cmd)) {
                names.push(cmd.fullname);
            }
        }
    }
    c.add_reply_array_len(names.len());
    for n in names {
        c.add_reply_bulk(n.as_bytes());
    }
}

/// One key found in a command line: its argv index and its key-spec flags.
#[derive(Debug, PartialEq, Eq)]
pub struct KeyReference {
    pub pos: usize,
    pub flags: &'static [&'static str],
}

/// getKeysUsingKeySpecs: walk each key spec over `argv` (argv[0] is the
/// command name). None when a spec does not fit the arguments (Redis's
/// invalid_spec: the caller may fall back to a getkeys procedure).
pub fn get_keys_using_key_specs(specs: &[KeySpec], argv: &[Bytes]) -> Option<Vec<KeyReference>> {
    let argc = argv.len() as i64;
    let mut keys = Vec::new();
    for spec in specs {
        if spec.flags.contains(&"not_key") {
            continue;
        }
        let mut first = match spec.begin_search {
            BeginSearch::Index(pos) => pos as i64,
            BeginSearch::Keyword { keyword, startfrom } => {
                match find_keyword(argv, keyword, startfrom as i64) {
                    Some(i) => i + 1,
                    None => continue, // keyword absent: no keys from this spec
                }
            }
            BeginSearch::Unknown => return None,
        };
        let (last, step) = match spec.find_keys {
            FindKeys::Range {
                lastkey,
                keystep,
                limit,
            } => {
                let (lastkey, limit) = (lastkey as i64, limit as i64);
                let last = if lastkey >= 0 {
                    first + lastkey
                } else if limit == 0 {
                    argc + lastkey
                } else {
                    first + ((argc - first) / limit + lastkey)
                };
                (last, keystep as i64)
            }
            FindKeys::Keynum {
                keynumidx,
                firstkey,
                keystep,
            } => {
                let idx = first + keynumidx as i64;
                if idx >= argc {
                    return None;
                }
                let numkeys = storage::util::string2ll(&argv[idx as usize]).filter(|&n| n >= 0)?;
                first += firstkey as i64;
                (first.saturating_add(numkeys) - 1, keystep as i64)
            }
            FindKeys::Unknown => return None,
        };
        if last >= argc || last < first || first >= argc || step <= 0 {
            return None;
        }
        // first <= last < argc: every position stepped on is an argument.
        let mut i = first;
        while i <= last {
            keys.push(KeyReference {
                pos: i as usize,
                flags: spec.flags,
            });
            i += step;
        }
        if spec.flags.contains(&"incomplete") {
            return None;
        }
    }
    Some(keys)
}

/// The index of `keyword` (case-insensitive) searching from `startfrom`:
/// forwards when positive, backwards from the end when negative.
fn find_keyword(argv: &[Bytes], keyword: &str, startfrom: i64) -> Option<i64> {
    let argc = argv.len() as i64;
    let (mut i, end, delta) = if startfrom > 0 {
        (startfrom, argc - 1, 1)
    } else {
        (argc + startfrom, 1, -1)
    };
    while i != end + delta {
        if i >= argc || i < 1 {
            return None;
        }
        if argv[i as usize].eq_ignore_ascii_case(keyword.as_bytes()) {
            return Some(i);
        }
        i += delta;
    }
    None
}

/// setGetKeys (db.c): SET's key is always argv[1]; its flags depend on GET.
fn set_get_keys(argv: &[Bytes]) -> Vec<KeyReference> {
    let get = argv.iter().skip(3).any(|a| a.eq_ignore_ascii_case(b"get"));
    let flags: &'static [&'static str] = if get {
        &["RW", "access", "update"]
    } else {
        &["OW", "update"]
    };
    vec![KeyReference { pos: 1, flags }]
}

/// A command's own key finder (Redis's redisGetKeysProc).
type GetKeysProc = fn(&[Bytes]) -> Vec<KeyReference>;

/// The getkeys procedures of commands whose key specs are not enough
/// (variable flags, incomplete specs). Redis keeps them in the table.
fn getkeys_proc(fullname: &str) -> Option<GetKeysProc> {
    match fullname {
        "set" => Some(set_get_keys),
        "bitfield" => Some(crate::bitops::bitfield_get_keys),
        "sort" => Some(crate::sort::sort_get_keys),
        "sort_ro" => Some(crate::sort::sort_ro_get_keys),
        "migrate" => Some(crate::migrate::migrate_get_keys),
        _ => None,
    }
}

/// doesCommandHaveKeys: a getkeys procedure, or a key spec that is not
/// `not_key`.
pub fn does_command_have_keys(cmd: &RedisCommand) -> bool {
    getkeys_proc(cmd.fullname).is_some()
        || meta_of(cmd)
            .key_specs
            .iter()
            .any(|s| !s.flags.contains(&"not_key"))
}

/// getKeysFromCommandWithSpecs: key specs first when their flags are
/// reliable, else the command's own procedure.
pub fn get_keys_from_command(cmd: &RedisCommand, argv: &[Bytes]) -> Vec<KeyReference> {
    let specs = meta_of(cmd).key_specs;
    let has_keyspec = specs.iter().any(|s| !s.flags.contains(&"not_key"));
    let has_varflags = specs.iter().any(|s| s.flags.contains(&"variable_flags"));
    if has_keyspec && !has_varflags {
        if let Some(keys) = get_keys_using_key_specs(specs, argv) {
            return keys;
        }
    }
    getkeys_proc(cmd.fullname)
        .map(|p| p(argv))
        .unwrap_or_default()
}

/// getKeysFromCommand, the path cluster routing (getNodeByQuery) takes:
/// the command's own procedure, else the legacy first/last/step range of
/// COMMAND INFO, which covers NOT_KEY specs too, so the shard channels of
/// SPUBLISH / SSUBSCRIBE / SUNSUBSCRIBE route like keys.
// redis: db.c getKeysFromCommand, getKeysUsingLegacyRangeSpec
pub fn get_keys_from_command_legacy(cmd: &RedisCommand, argv: &[Bytes]) -> Vec<KeyReference> {
    if let Some(p) = getkeys_proc(cmd.fullname) {
        return p(argv);
    }
    let (first, step) = (cmd.spec.first_key as i64, cmd.spec.key_step as i64);
    if first <= 0 || step <= 0 {
        return Vec::new();
    }
    let argc = argv.len() as i64;
    let mut last = cmd.spec.last_key as i64;
    if last < 0 {
        last += argc;
    }
    let mut keys = Vec::new();
    let mut j = first;
    while j <= last {
        // A variadic command with too few arguments: no keys, the
        // command reports its own error.
        if j >= argc {
            return Vec::new();
        }
        keys.push(KeyReference {
            pos: j as usize,
            flags: &[],
        });
        j += step;
    }
    keys
}

/// COMMAND GETKEYS command [arg ...] and COMMAND GETKEYSANDFLAGS.
// redis: server.c getKeysSubcommandImpl
fn getkeys_generic_command(srv: &mut Server, c: &mut Client, with_flags: bool) {
    let argv = &c.argv[2..];
    let Ok(Some(id)) = srv.commands.lookup_argv(argv) else {
        return c.add_reply_error("ERR Invalid command specified");
    };
    let cmd = srv.commands.get(id);
    let argc = argv.len() as i32;
    if getkeys_proc(cmd.fullname).is_none() && meta_of(cmd).key_specs.is_empty() {
        return c.add_reply_error("ERR The command has no key arguments");
    }
    if (cmd.spec.arity > 0 && cmd.spec.arity != argc) || argc < -cmd.spec.arity {
        return c.add_reply_error("ERR Invalid number of arguments specified for command");
    }
    let keys = get_keys_from_command(cmd, argv);
    if keys.is_empty() && cmd.spec.flags & CMD_NO_MANDATORY_KEYS == 0 {
        return c.add_reply_error("ERR Invalid arguments specified for command");
    }
    let names: Vec<Bytes> = keys.iter().map(|k| argv[k.pos].clone()).collect();
    c.add_reply_array_len(keys.len());
    for (k, name) in keys.iter().zip(names) {
        if with_flags {
            c.add_reply_array_len(2);
            c.add_reply_bulk(&name);
            add_reply_status_set(c, k.flags);
        } else {
            c.add_reply_bulk(&name);
        }
    }
}

/// COMMAND GETKEYS command [arg [arg ...]]
// redis: server.c commandGetKeysCommand
pub fn command_getkeys_command(srv: &mut Server, c: &mut Client) {
    getkeys_generic_command(srv, c, false);
}

/// COMMAND GETKEYSANDFLAGS command [arg [arg ...]]
// redis: server.c commandGetKeysAndFlagsCommand
pub fn command_getkeysandflags_command(srv: &mut Server, c: &mut Client) {
    getkeys_generic_command(srv, c, true);
}

/// COMMAND HELP
// redis: server.c commandHelpCommand
pub fn command_help_command(_srv: &mut Server, c: &mut Client) {
    c.add_reply_help(
        "COMMAND",
        &[
            "(no subcommand)",
            "    Return details about all Redis commands.",
            "COUNT",
            "    Return the total number of commands in this Redis server.",
            "LIST",
            "    Return a list of all commands in this Redis server.",
            "INFO [<command-name> ...]",
            "    Return details about multiple Redis commands.",
            "    If no command names are given, documentation details for all",
            "    commands are returned.",
            "DOCS [<command-name> ...]",
            "    Return documentation details about multiple Redis commands.",
            "    If no command names are given, documentation details for all",
            "    commands are returned.",
            "GETKEYS <full-command>",
            "    Return the keys from a full Redis command.",
            "GETKEYSANDFLAGS <full-command>",
            "    Return the keys and the access flags from a full Redis command.",
        ],
    );
}

#[cfg(test)]
mod command_tests {
    use super::*;
    use crate::commands_meta::COMMAND_META;

    fn argv(line: &str) -> Vec<Bytes> {
        line.split(' ')
            .map(|s| Bytes::copy_from_slice(s.as_bytes()))
            .collect()
    }

    fn positions(keys: &[KeyReference]) -> Vec<usize> {
        keys.iter().map(|k| k.pos).collect()
    }

    #[test]
    fn command_meta_covers_the_table() {
        // Run scripts/gen-command-meta.py when this fails.
        let t = CommandTable::new();
        for cmd in &t.commands {
            assert!(
                lookup_meta(cmd.fullname).is_some(),
                "no metadata for {}",
                cmd.fullname
            );
        }
        assert!(COMMAND_META
            .windows(2)
            .all(|w| w[0].fullname < w[1].fullname));
    }

    const RANGE_ALL: KeySpec = KeySpec {
        notes: None,
        flags: &["RW"],
        begin_search: BeginSearch::Index(1),
        find_keys: FindKeys::Range {
            lastkey: -1,
            keystep: 2,
            limit: 0,
        },
    };

    #[test]
    fn key_specs_range_with_step() {
        let keys = get_keys_using_key_specs(&[RANGE_ALL], &argv("mset a 1 b 2")).unwrap();
        assert_eq!(positions(&keys), vec![1, 3]);
    }

    #[test]
    fn key_specs_keynum_and_bad_numkeys() {
        let spec = KeySpec {
            notes: None,
            flags: &["RO"],
            begin_search: BeginSearch::Index(2),
            find_keys: FindKeys::Keynum {
                keynumidx: 0,
                firstkey: 1,
                keystep: 1,
            },
        };
        let keys = get_keys_using_key_specs(&[spec], &argv("zunion x 2 k1 k2 WEIGHTS 1 2"));
        assert_eq!(positions(&keys.unwrap()), vec![3, 4]);
        let spec = KeySpec {
            begin_search: BeginSearch::Index(1),
            ..spec
        };
        assert!(get_keys_using_key_specs(&[spec], &argv("eval x s")).is_none());
        // numkeys past the end of the arguments is invalid, not a panic.
        assert!(get_keys_using_key_specs(&[spec], &argv("eval 9 k")).is_none());
        assert!(get_keys_using_key_specs(&[spec], &argv("eval 9999999999999999999 k")).is_none());
    }

    #[test]
    fn key_specs_keyword_search_backwards() {
        let spec = KeySpec {
            notes: None,
            flags: &["RW"],
            begin_search: BeginSearch::Keyword {
                keyword: "KEYS",
                startfrom: -2,
            },
            find_keys: FindKeys::Range {
                lastkey: -1,
                keystep: 1,
                limit: 0,
            },
        };
        let keys = get_keys_using_key_specs(&[spec], &argv("migrate h p \"\" 0 5 keys a b"));
        assert_eq!(positions(&keys.unwrap()), vec![7, 8]);
        // No keyword: no keys from that spec, and no error.
        let keys = get_keys_using_key_specs(&[spec], &argv("migrate h p k 0 5"));
        assert_eq!(keys.unwrap(), vec![]);
    }

    #[test]
    fn set_flags_depend_on_get() {
        assert_eq!(set_get_keys(&argv("set k v"))[0].flags, &["OW", "update"]);
        assert_eq!(
            set_get_keys(&argv("set k v ex 1 GET"))[0].flags,
            &["RW", "access", "update"]
        );
    }

    #[test]
    fn fullname_lookup_splits_once() {
        let t = CommandTable::new();
        assert!(lookup_by_fullname(&t, b"GET").is_some());
        assert!(lookup_by_fullname(&t, b"client|LIST").is_some());
        assert!(lookup_by_fullname(&t, b"client|nope").is_none());
        assert!(lookup_by_fullname(&t, b"get|x").is_none());
        assert!(lookup_by_fullname(&t, b"client|list|x").is_none());
        assert!(lookup_by_fullname(&t, b"").is_none());
    }
}
