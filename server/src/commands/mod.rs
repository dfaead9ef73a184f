//! The command table (Redis's commands.c / commands.def and
//! populateCommandTable in server.c).
//!
//! One static table: name, handler, arity, flags, key positions, and for
//! container commands (CONFIG, CLIENT, OBJECT, ...) their subcommands. At
//! start-up `CommandTable::new` indexes it by lower-case name; that is the
//! only dispatch there is, so a debugger's stack always reads
//! `process_command -> call -> <name>_command`.
//!
//! Arity follows Redis: `n > 0` means exactly n arguments (the name counts),
//! `-n` means at least n.
//!
//! The module is split the way Redis's sources are:
//! - this file: the row type, the CMD_* flags and the run-time index
//!   (`CommandTable`, populateCommandTable and lookupCommand in server.c);
//! - `table.rs`: the static table itself (commands.def);
//! - `introspection.rs`: COMMAND and its subcommands, and key extraction
//!   from argv (commandCommand, getKeysFromCommand in server.c / db.c);
//! - `../commands_meta.rs` (generated, kept apart): what COMMAND INFO/DOCS
//!   print beyond what dispatch needs.

use std::collections::HashMap;

use crate::latency::CommandHistogram;
use crate::networking::Client;
use crate::server::Server;

mod introspection;
mod table;

pub use introspection::{
    command_command, command_count_command, command_docs_command, command_getkeys_command,
    command_getkeysandflags_command, command_help_command, command_info_command,
    command_list_command, does_command_have_keys, get_keys_from_command,
    get_keys_from_command_legacy, get_keys_using_key_specs, meta_of, KeyReference,
};
pub use table::COMMAND_TABLE;

/// A command implementation: runs against the server on behalf of a client
/// and appends its reply to the client's output buffer.
pub type CommandProc = fn(&mut Server, &mut Client);

// Command flags (server.h CMD_*). Names match COMMAND INFO's flag names.
pub const CMD_WRITE: u64 = 1 << 0;
pub const CMD_READONLY: u64 = 1 << 1;
pub const CMD_DENYOOM: u64 = 1 << 2;
pub const CMD_MODULE: u64 = 1 << 3;
pub const CMD_ADMIN: u64 = 1 << 4;
pub const CMD_PUBSUB: u64 = 1 << 5;
pub const CMD_NOSCRIPT: u64 = 1 << 6;
pub const CMD_BLOCKING: u64 = 1 << 8;
pub const CMD_LOADING: u64 = 1 << 9;
pub const CMD_STALE: u64 = 1 << 10;
pub const CMD_SKIP_MONITOR: u64 = 1 << 11;
pub const CMD_SKIP_SLOWLOG: u64 = 1 << 12;
pub const CMD_ASKING: u64 = 1 << 13;
/// O(1) or O(log N): LATENCY records it as `fast-command`, not `command`.
pub const CMD_FAST: u64 = 1 << 14;
pub const CMD_NO_AUTH: u64 = 1 << 15;
pub const CMD_MAY_REPLICATE: u64 = 1 << 16;
pub const CMD_SENTINEL: u64 = 1 << 17;
pub const CMD_ONLY_SENTINEL: u64 = 1 << 18;
pub const CMD_NO_MANDATORY_KEYS: u64 = 1 << 19;
/// Guarded by an enable-*-command option (DEBUG).
pub const CMD_PROTECTED: u64 = 1 << 20;
pub const CMD_MODULE_GETKEYS: u64 = 1 << 21;
pub const CMD_MODULE_NO_CLUSTER: u64 = 1 << 22;
pub const CMD_NO_ASYNC_LOADING: u64 = 1 << 23;
pub const CMD_NO_MULTI: u64 = 1 << 24;
pub const CMD_MOVABLE_KEYS: u64 = 1 << 25;
pub const CMD_ALLOW_BUSY: u64 = 1 << 26;
pub const CMD_MODULE_GETCHANNELS: u64 = 1 << 27;

/// The flag names in COMMAND INFO order.
pub const CMD_FLAG_NAMES: &[(u64, &str)] = &[
    (CMD_WRITE, "write"),
    (CMD_READONLY, "readonly"),
    (CMD_DENYOOM, "denyoom"),
    (CMD_MODULE, "module"),
    (CMD_ADMIN, "admin"),
    (CMD_PUBSUB, "pubsub"),
    (CMD_NOSCRIPT, "noscript"),
    (CMD_BLOCKING, "blocking"),
    (CMD_LOADING, "loading"),
    (CMD_STALE, "stale"),
    (CMD_SKIP_MONITOR, "skip_monitor"),
    (CMD_SKIP_SLOWLOG, "skip_slowlog"),
    (CMD_ASKING, "asking"),
    (CMD_FAST, "fast"),
    (CMD_NO_AUTH, "no_auth"),
    (CMD_NO_MANDATORY_KEYS, "no_mandatory_keys"),
    (CMD_NO_ASYNC_LOADING, "no_async_loading"),
    (CMD_NO_MULTI, "no_multi"),
    (CMD_MOVABLE_KEYS, "movablekeys"),
    (CMD_ALLOW_BUSY, "allow_busy"),
];

/// One row of the static table.
pub struct CommandSpec {
    /// Lower-case name as Redis registers it.
    pub name: &'static str,
    pub proc: CommandProc,
    pub arity: i32,
    pub flags: u64,
    /// Legacy key positions (COMMAND INFO first/last/step): first key index,
    /// last key index (-1 = last argument, -2 = second to last...), step.
    pub first_key: i32,
    pub last_key: i32,
    pub key_step: i32,
    /// Subcommands of a container command (CONFIG GET, CLIENT LIST...).
    pub subcommands: &'static [CommandSpec],
}

/// Shorthand constructor so each table row stays on one or two lines.
const fn cmd(
    name: &'static str,
    proc: CommandProc,
    arity: i32,
    flags: u64,
    keys: (i32, i32, i32),
) -> CommandSpec {
    CommandSpec {
        name,
        proc,
        arity,
        flags,
        first_key: keys.0,
        last_key: keys.1,
        key_step: keys.2,
        subcommands: &[],
    }
}

/// A container command (CONFIG, CLIENT...). Its own proc runs only when it
/// is called without a subcommand and its arity allows that (COMMAND alone).
const fn container(
    name: &'static str,
    proc: CommandProc,
    arity: i32,
    subs: &'static [CommandSpec],
) -> CommandSpec {
    CommandSpec {
        name,
        proc,
        arity,
        flags: 0,
        first_key: 0,
        last_key: 0,
        key_step: 0,
        subcommands: subs,
    }
}

/// Per-command statistics (INFO commandstats), kept beside the table like
/// the counters inside Redis's struct redisCommand.
#[derive(Default, Clone, Debug)]
pub struct CommandStats {
    pub calls: u64,
    pub microseconds: u64,
    pub rejected_calls: u64,
    pub failed_calls: u64,
}

/// A command as the server knows it at run time.
pub struct RedisCommand {
    pub spec: &'static CommandSpec,
    /// "get", or "config|get" for a subcommand (Redis's fullname). Built
    /// once when the table is, and kept for the life of the process, so
    /// CLIENT LIST's cmd= can point at it without copying.
    pub fullname: &'static str,
    /// Index of the container for a subcommand.
    pub parent: Option<CmdId>,
    /// Lower-case subcommand name -> id, for container commands.
    pub subcommands: HashMap<Vec<u8>, CmdId>,
    pub stats: CommandStats,
    /// Latency distribution (LATENCY HISTOGRAM, INFO latencystats).
    pub histogram: CommandHistogram,
}

/// Index of a command in `CommandTable::commands`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CmdId(pub usize);

/// populateCommandTable: the run-time index over COMMAND_TABLE.
pub struct CommandTable {
    pub commands: Vec<RedisCommand>,
    by_name: HashMap<Vec<u8>, CmdId>,
}

/// Longest command name we bother to look up (longer cannot match).
const MAX_COMMAND_NAME: usize = 64;

impl CommandTable {
    pub fn new() -> CommandTable {
        let mut t = CommandTable {
            commands: Vec::new(),
            by_name: HashMap::new(),
        };
        for spec in COMMAND_TABLE {
            let id = t.push(spec, spec.name.to_string(), None);
            t.by_name.insert(spec.name.as_bytes().to_vec(), id);
            for sub in spec.subcommands {
                let sid = t.push(sub, format!("{}|{}", spec.name, sub.name), Some(id));
                t.commands[id.0]
                    .subcommands
                    .insert(sub.name.as_bytes().to_vec(), sid);
            }
        }
        t
    }

    fn push(
        &mut self,
        spec: &'static CommandSpec,
        fullname: String,
        parent: Option<CmdId>,
    ) -> CmdId {
        let fullname: &'static str = match parent {
            None => spec.name,
            Some(_) => Box::leak(fullname.into_boxed_str()),
        };
        self.commands.push(RedisCommand {
            spec,
            fullname,
            parent,
            subcommands: HashMap::new(),
            stats: CommandStats::default(),
            histogram: CommandHistogram::new(),
        });
        CmdId(self.commands.len() - 1)
    }

    pub fn get(&self, id: CmdId) -> &RedisCommand {
        &self.commands[id.0]
    }

    pub fn get_mut(&mut self, id: CmdId) -> &mut RedisCommand {
        &mut self.commands[id.0]
    }

    /// lookupCommandBySds: case-insensitive lookup of a top-level name.
    pub fn lookup(&self, name: &[u8]) -> Option<CmdId> {
        lookup_lowercase(&self.by_name, name)
    }

    /// rename-command: the command answers to `new` from now on, or to
    /// nothing when `new` is empty (it stays in the table: COMMAND INFO of
    /// its own name and the ACL categories still know it, as in Redis,
    /// whose rename only touches the lookup dict).
    pub fn rename(&mut self, old: &[u8], new: &[u8]) -> Result<(), &'static str> {
        let old = old.to_ascii_lowercase();
        let Some(id) = self.by_name.remove(&old) else {
            return Err("No such command in rename-command");
        };
        if new.is_empty() {
            return Ok(());
        }
        let new = new.to_ascii_lowercase();
        if self.by_name.contains_key(&new) {
            return Err("Target command name already exists");
        }
        self.by_name.insert(new, id);
        Ok(())
    }

    /// How many names the top-level commands answer to.
    pub fn names(&self) -> usize {
        self.by_name.len()
    }

    /// lookupSubcommand on a container.
    pub fn lookup_sub(&self, parent: CmdId, name: &[u8]) -> Option<CmdId> {
        lookup_lowercase(&self.commands[parent.0].subcommands, name)
    }

    /// lookupCommand as processCommand uses it: the subcommand when the base
    /// is a container and there is a second argument; the base otherwise.
    /// Err(base) when the base is a container and the subcommand is unknown.
    pub fn lookup_argv(&self, argv: &[bytes::Bytes]) -> Result<Option<CmdId>, CmdId> {
        let Some(base) = self.lookup(&argv[0]) else {
            return Ok(None);
        };
        if argv.len() == 1 || self.commands[base.0].subcommands.is_empty() {
            return Ok(Some(base));
        }
        match self.lookup_sub(base, &argv[1]) {
            Some(sub) => Ok(Some(sub)),
            None => Err(base),
        }
    }

    /// Top-level commands in table order (COMMAND, COMMAND LIST).
    pub fn top_level(&self) -> impl Iterator<Item = (CmdId, &RedisCommand)> {
        // server.commands: a command renamed to "" is no longer in it, so
        // COMMAND, COMMAND DOCS and COMMAND LIST leave it out (it stays in
        // the table, Redis's orig_commands).
        let mut named = vec![false; self.commands.len()];
        for id in self.by_name.values() {
            named[id.0] = true;
        }
        self.commands
            .iter()
            .enumerate()
            .filter(move |(i, c)| c.parent.is_none() && named[*i])
            .map(|(i, c)| (CmdId(i), c))
    }
}

impl Default for CommandTable {
    fn default() -> Self {
        Self::new()
    }
}

fn lookup_lowercase(map: &HashMap<Vec<u8>, CmdId>, name: &[u8]) -> Option<CmdId> {
    if name.len() > MAX_COMMAND_NAME {
        return None;
    }
    // Lower-case into a stack buffer: no allocation per command.
    let mut buf = [0u8; MAX_COMMAND_NAME];
    let lower = &mut buf[..name.len()];
    for (d, s) in lower.iter_mut().zip(name) {
        *d = s.to_ascii_lowercase();
    }
    map.get(&lower[..]).copied()
}
