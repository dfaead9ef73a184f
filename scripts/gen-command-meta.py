#!/usr/bin/env python3
"""Generate server/src/commands_meta.rs from a real Redis 7.0.15.

Regenerate (from /work/main, with a Redis 7.0.15 listening on port P):

    redis-server --port P --save '' --appendonly no --daemonize yes
    python3 scripts/gen-command-meta.py --port P > server/src/commands_meta.rs
    redis-cli -p P shutdown nosave

What it does: reads OUR command table (server/src/commands.rs: the rows of
COMMAND_TABLE and of every *_SUBCOMMANDS array), asks the real server for
COMMAND INFO and COMMAND DOCS of exactly those commands (over RESP3, so
maps, sets and arrays stay distinguishable), and prints Rust static data:
ACL categories, tips, key specs and documentation, one CommandMeta per
command or subcommand, sorted by full name ("client|list").

What it does NOT take from Redis: arity, flags and the legacy first/last/step
key positions. Those live in our own table (CommandSpec rows), because the
server dispatches on them. The script compares them with Redis and reports
every difference on stderr ("MISMATCH ..."): fix the row in commands.rs.
Commands in our table that Redis does not know are reported too.

No third-party modules: a tiny RESP3 reader is included. Exit status 1 when
the table and Redis disagree (the Rust file is still printed).
"""

import argparse
import os
import re
import socket
import sys

# ---------------------------------------------------------------------------
# RESP3 client (just enough for COMMAND INFO / COMMAND DOCS).


class Set(list):
    """A RESP3 set (~): kept apart from arrays so the output shape is known."""


class Map(list):
    """A RESP3 map (%): a list of (key, value) pairs, in server order."""

    def get(self, key, default=None):
        for k, v in self:
            if k == key:
                return v
        return default

    def keys(self):
        return [k for k, _ in self]


class Status(str):
    """A simple string (+)."""


class Conn:
    def __init__(self, host, port):
        self.sock = socket.create_connection((host, port))
        self.buf = b""

    def call(self, *args):
        parts = [a if isinstance(a, bytes) else str(a).encode() for a in args]
        req = b"*%d\r\n" % len(parts)
        for p in parts:
            req += b"$%d\r\n%s\r\n" % (len(p), p)
        self.sock.sendall(req)
        return self.read()

    def _fill(self):
        data = self.sock.recv(1 << 20)
        if not data:
            raise ConnectionError("connection closed by the server")
        self.buf += data

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _bytes(self, n):
        while len(self.buf) < n + 2:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def read(self):
        line = self._line()
        t, rest = line[:1], line[1:].decode()
        if t == b"+":
            return Status(rest)
        if t == b"-":
            raise RuntimeError("server error: " + rest)
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            return None if n < 0 else self._bytes(n).decode()
        if t == b"*":
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        if t == b"~":
            return Set(self.read() for _ in range(int(rest)))
        if t == b"%":
            return Map((self.read(), self.read()) for _ in range(int(rest)))
        if t == b"_":
            return None
        raise RuntimeError("unexpected reply type: %r" % line)


# ---------------------------------------------------------------------------
# Our table, read from commands.rs.

FLAG_ABBREV = {
    "W": "write", "R": "readonly", "F": "fast", "M": "denyoom", "A": "admin",
    "NS": "noscript", "LD": "loading", "ST": "stale",
}
# CMD_* constants whose names COMMAND INFO prints (server.c addReplyFlagsForCommand).
FLAG_CONST = {
    "CMD_WRITE": "write", "CMD_READONLY": "readonly", "CMD_DENYOOM": "denyoom",
    "CMD_MODULE": "module", "CMD_ADMIN": "admin", "CMD_PUBSUB": "pubsub",
    "CMD_NOSCRIPT": "noscript", "CMD_BLOCKING": "blocking", "CMD_LOADING": "loading",
    "CMD_STALE": "stale", "CMD_SKIP_MONITOR": "skip_monitor",
    "CMD_SKIP_SLOWLOG": "skip_slowlog", "CMD_ASKING": "asking", "CMD_FAST": "fast",
    "CMD_NO_AUTH": "no_auth",
    "CMD_NO_MANDATORY_KEYS": "no_mandatory_keys",
    "CMD_NO_ASYNC_LOADING": "no_async_loading", "CMD_NO_MULTI": "no_multi",
    "CMD_MOVABLE_KEYS": "movablekeys", "CMD_ALLOW_BUSY": "allow_busy",
}
# Flags Redis keeps but never prints (7.0 does not print may_replicate:
# EVAL, FCALL, PUBLISH carry it for CLIENT PAUSE WRITE and read-only scripts).
FLAG_SILENT = {"CMD_MAY_REPLICATE", "CMD_SENTINEL", "CMD_ONLY_SENTINEL", "CMD_PROTECTED",
               "CMD_MODULE_GETKEYS", "CMD_MODULE_NO_CLUSTER", "CMD_MODULE_GETCHANNELS"}
PRINT_ORDER = list(FLAG_CONST.values())
KEYS_ALIAS = {"NOKEYS": (0, 0, 0), "KEY1": (1, 1, 1)}

ROW_RE = re.compile(r'\b(cmd|container)\(\s*"([^"]+)"\s*,\s*([^,]+?)\s*,\s*(-?\d+)\s*,\s*(.*?)\)\s*,\s*$')


def parse_flags(expr):
    names = set()
    for tok in expr.split("|"):
        tok = tok.strip()
        if tok in ("", "0"):
            continue
        if tok in FLAG_ABBREV:
            names.add(FLAG_ABBREV[tok])
        elif tok in FLAG_CONST:
            names.add(FLAG_CONST[tok])
        elif tok in FLAG_SILENT:
            pass
        else:
            raise SystemExit("gen-command-meta: unknown flag %r in commands.rs" % tok)
    return [f for f in PRINT_ORDER if f in names]


def parse_keys(expr):
    expr = expr.strip()
    if expr in KEYS_ALIAS:
        return KEYS_ALIAS[expr]
    m = re.fullmatch(r"\(\s*(-?\d+)\s*,\s*(-?\d+)\s*,\s*(-?\d+)\s*\)", expr)
    if not m:
        raise SystemExit("gen-command-meta: cannot read key positions %r" % expr)
    return tuple(int(x) for x in m.groups())


def parse_row(line):
    """One table row (joined onto one line) -> dict, or None."""
    # A container with flags of its own is written with struct update syntax:
    # `CommandSpec { flags: LD | ST, ..container("command", ...) },`
    own_flags = []
    upd = re.match(r"\s*CommandSpec\s*\{\s*flags:\s*([^,]+),\s*\.\.(.*)\}\s*,\s*$", line)
    if upd:
        own_flags = parse_flags(upd.group(1))
        line = upd.group(2).rstrip() + ","
    m = ROW_RE.search(line)
    if not m:
        return None
    kind, name, _proc, arity, rest = m.groups()
    if kind == "container":
        return {"name": name, "arity": int(arity), "flags": own_flags, "keys": (0, 0, 0),
                "subs_array": rest.strip()}
    # rest = "<flags>, <keys>"; keys is the last comma-separated item
    # unless it is a tuple.
    if rest.rstrip().endswith(")"):
        idx = rest.rfind("(")
        flags_expr, keys_expr = rest[:idx].rstrip().rstrip(","), rest[idx:]
    else:
        flags_expr, _, keys_expr = rest.rpartition(",")
    return {"name": name, "arity": int(arity), "flags": parse_flags(flags_expr),
            "keys": parse_keys(keys_expr), "subs_array": None}


def read_table(path):
    text = open(path).read()
    arrays = {}
    for m in re.finditer(r"static (\w+): &\[CommandSpec\] = &\[(.*?)\n\];", text, re.S):
        rows = []
        # A row may span several lines (rustfmt wraps long ones): gather
        # lines until parentheses and braces balance, then parse the row.
        pending, depth = "", 0
        for line in m.group(2).splitlines():
            line = line.split("//")[0].strip()
            if not line:
                continue
            pending += (" " if pending else "") + line
            depth += line.count("(") - line.count(")") + line.count("{") - line.count("}")
            if depth == 0 and pending.endswith(","):
                joined = re.sub(r"\(\s+", "(", pending)
                joined = re.sub(r",\s*\)", ")", joined)
                row = parse_row(joined)
                if row:
                    rows.append(row)
                pending = ""
        arrays[m.group(1)] = rows
    if "COMMAND_TABLE" not in arrays:
        raise SystemExit("gen-command-meta: COMMAND_TABLE not found in " + path)
    table = []
    for row in arrays["COMMAND_TABLE"]:
        row["subs"] = arrays.get(row["subs_array"], []) if row["subs_array"] else []
        table.append(row)
    return table


# ---------------------------------------------------------------------------
# Rust output.


def rs_str(s):
    out = ['"']
    for ch in s:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append("\\u{%x}" % ord(ch))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def rs_opt(s):
    return "None" if s is None else "Some(%s)" % rs_str(s)


def rs_strs(items):
    return "&[" + ", ".join(rs_str(s) for s in items) + "]"


def expect_keys(where, m, allowed):
    extra = [k for k in m.keys() if k not in allowed]
    if extra:
        raise SystemExit("gen-command-meta: %s has unknown fields %r: update the generator"
                         % (where, extra))


def key_spec_rs(spec, where):
    expect_keys(where, spec, ("notes", "flags", "begin_search", "find_keys"))
    expect_order(where, spec, ("notes", "flags", "begin_search", "find_keys"))
    bs, fk = spec.get("begin_search"), spec.get("find_keys")
    bs_type, bs_spec = bs.get("type"), bs.get("spec")
    if bs_type == "index":
        bs_rs = "BeginSearch::Index(%d)" % bs_spec.get("index")
    elif bs_type == "keyword":
        bs_rs = "BeginSearch::Keyword { keyword: %s, startfrom: %d }" % (
            rs_str(bs_spec.get("keyword")), bs_spec.get("startfrom"))
    elif bs_type == "unknown":
        bs_rs = "BeginSearch::Unknown"
    else:
        raise SystemExit("gen-command-meta: %s: begin_search type %r" % (where, bs_type))
    fk_type, fk_spec = fk.get("type"), fk.get("spec")
    if fk_type == "range":
        fk_rs = "FindKeys::Range { lastkey: %d, keystep: %d, limit: %d }" % (
            fk_spec.get("lastkey"), fk_spec.get("keystep"), fk_spec.get("limit"))
    elif fk_type == "keynum":
        fk_rs = "FindKeys::Keynum { keynumidx: %d, firstkey: %d, keystep: %d }" % (
            fk_spec.get("keynumidx"), fk_spec.get("firstkey"), fk_spec.get("keystep"))
    elif fk_type == "unknown":
        fk_rs = "FindKeys::Unknown"
    else:
        raise SystemExit("gen-command-meta: %s: find_keys type %r" % (where, fk_type))
    return "KeySpec { notes: %s, flags: %s, begin_search: %s, find_keys: %s }" % (
        rs_opt(spec.get("notes")), rs_strs(spec.get("flags")), bs_rs, fk_rs)


# The fields of one argument, in the order Redis 7.0.15 prints them
# (server.c addReplyCommandArgList). The generator refuses anything else, so
# a server that prints differently is noticed instead of mis-encoded.
ARG_FIELDS = ("name", "type", "key_spec_index", "token", "summary", "since",
              "deprecated_since", "flags", "arguments")


def expect_order(where, m, order):
    pos = [order.index(k) for k in m.keys()]
    if pos != sorted(pos):
        raise SystemExit("gen-command-meta: %s: fields in unexpected order %r" % (where, m.keys()))


def args_rs(args, indent, where):
    if not args:
        return "&[]"
    pad = " " * indent
    lines = ["&["]
    for a in args:
        expect_keys(where, a, ARG_FIELDS)
        expect_order(where, a, ARG_FIELDS)
        kind = a.get("type")
        # Keys always have a key spec; patterns that name keys (SORT) may.
        if (kind == "key" and "key_spec_index" not in a.keys()) or (
                kind not in ("key", "pattern") and "key_spec_index" in a.keys()):
            raise SystemExit("gen-command-meta: %s: key_spec_index/type mismatch" % where)
        if (kind in ("oneof", "block")) != ("arguments" in a.keys()):
            raise SystemExit("gen-command-meta: %s: arguments/type mismatch" % where)
        sub = args_rs(a.get("arguments"), indent + 4, where + "/" + a.get("name"))
        lines.append(
            "%s    CommandArg { name: %s, kind: %s, key_spec_index: %d, token: %s, "
            "summary: %s, since: %s, deprecated_since: %s, flags: %s, arguments: %s },"
            % (pad, rs_str(a.get("name")), rs_str(kind), a.get("key_spec_index", -1),
               rs_opt(a.get("token")), rs_opt(a.get("summary")), rs_opt(a.get("since")),
               rs_opt(a.get("deprecated_since")), rs_strs(a.get("flags") or []), sub))
    lines.append(pad + "]")
    return "\n".join(lines)


DOC_FIELDS = ("summary", "since", "group", "complexity", "doc_flags", "deprecated_since",
              "replaced_by", "history", "arguments", "subcommands")


def meta_rs(fullname, info, docs):
    where = fullname
    # COMMAND INFO: name arity flags first last step categories tips specs subs
    categories, tips, specs = info[6], info[7], info[8]
    expect_keys(where + " docs", docs, DOC_FIELDS)
    expect_order(where + " docs", docs, DOC_FIELDS)
    for opt in ("history", "arguments"):
        if opt in docs.keys() and not docs.get(opt):
            raise SystemExit("gen-command-meta: %s: empty %s would not be printed" % (where, opt))
    history = docs.get("history") or []
    out = []
    out.append("    CommandMeta {")
    out.append("        fullname: %s," % rs_str(fullname))
    out.append("        acl_categories: %s," % rs_strs(categories))
    out.append("        tips: %s," % rs_strs(tips))
    if not specs:
        out.append("        key_specs: &[],")
    else:
        out.append("        key_specs: &[")
        for i, s in enumerate(specs):
            out.append("            %s," % key_spec_rs(s, "%s key spec %d" % (where, i)))
        out.append("        ],")
    out.append("        docs: CommandDocs {")
    out.append("            summary: %s," % rs_str(docs.get("summary")))
    out.append("            since: %s," % rs_str(docs.get("since")))
    out.append("            group: %s," % rs_str(docs.get("group")))
    out.append("            complexity: %s," % rs_opt(docs.get("complexity")))
    out.append("            doc_flags: %s," % rs_strs(docs.get("doc_flags") or []))
    out.append("            deprecated_since: %s," % rs_opt(docs.get("deprecated_since")))
    out.append("            replaced_by: %s," % rs_opt(docs.get("replaced_by")))
    out.append("            history: &[%s]," % ", ".join(
        "(%s, %s)" % (rs_str(v), rs_str(t)) for v, t in history))
    out.append("            arguments: %s," % args_rs(docs.get("arguments"), 12, where))
    out.append("        },")
    out.append("    },")
    return "\n".join(out)


HEADER = """\
//! COMMAND metadata: ACL categories, tips, key specs and documentation of
//! every command in our table, as Redis 7.0.15 reports them.
//!
//! GENERATED by scripts/gen-command-meta.py from a running redis-server
//! 7.0.15: do not edit by hand. Regenerate after adding commands:
//!     python3 scripts/gen-command-meta.py --port P > server/src/commands_meta.rs
//!
//! Redis keeps this data in commands.def (generated from src/commands/*.json);
//! here it sits beside our table in commands.rs, which keeps what dispatch
//! needs (handler, arity, flags, legacy key positions). COMMAND INFO/DOCS in
//! commands.rs join the two by full name ("get", "client|list").

/// Where the keys of a command begin (Redis's kspec_bs_type).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BeginSearch {
    Unknown,
    /// The first key is at this argument index.
    Index(i32),
    /// Keys follow `keyword`, searched from `startfrom` (negative: from the
    /// end, backwards).
    Keyword {
        keyword: &'static str,
        startfrom: i32,
    },
}

/// How many keys there are from the beginning (Redis's kspec_fk_type).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FindKeys {
    Unknown,
    /// `lastkey` relative to the first key (negative: from the end), every
    /// `keystep` arguments; `limit` > 0 restricts to 1/limit of the rest.
    Range {
        lastkey: i32,
        keystep: i32,
        limit: i32,
    },
    /// The key count is at `keynumidx` (relative to the begin index), the
    /// keys start `firstkey` after it.
    Keynum {
        keynumidx: i32,
        firstkey: i32,
        keystep: i32,
    },
}

/// One key specification (Redis's keySpec); `flags` are the names COMMAND
/// INFO prints ("RO", "access", ...).
#[derive(Debug, Clone, Copy)]
pub struct KeySpec {
    pub notes: Option<&'static str>,
    pub flags: &'static [&'static str],
    pub begin_search: BeginSearch,
    pub find_keys: FindKeys,
}

/// One documented argument (Redis's redisCommandArg). `key_spec_index` is
/// meaningful only when `kind` is "key"; `arguments` only for "oneof"/"block".
#[derive(Debug)]
pub struct CommandArg {
    pub name: &'static str,
    pub kind: &'static str,
    pub key_spec_index: i32,
    pub token: Option<&'static str>,
    pub summary: Option<&'static str>,
    pub since: Option<&'static str>,
    pub deprecated_since: Option<&'static str>,
    pub flags: &'static [&'static str],
    pub arguments: &'static [CommandArg],
}

/// COMMAND DOCS fields. Empty `history`/`arguments`/`doc_flags` are not
/// printed, as Redis omits NULL ones.
#[derive(Debug)]
pub struct CommandDocs {
    pub summary: &'static str,
    pub since: &'static str,
    pub group: &'static str,
    pub complexity: Option<&'static str>,
    pub doc_flags: &'static [&'static str],
    pub deprecated_since: Option<&'static str>,
    pub replaced_by: Option<&'static str>,
    pub history: &'static [(&'static str, &'static str)],
    pub arguments: &'static [CommandArg],
}

/// Everything COMMAND INFO/DOCS print that is not in our CommandSpec row.
#[derive(Debug)]
pub struct CommandMeta {
    pub fullname: &'static str,
    pub acl_categories: &'static [&'static str],
    pub tips: &'static [&'static str],
    pub key_specs: &'static [KeySpec],
    pub docs: CommandDocs,
}

/// The metadata of one command by full name (binary search: the table is
/// sorted by the generator).
pub fn lookup_meta(fullname: &str) -> Option<&'static CommandMeta> {
    COMMAND_META
        .binary_search_by(|m| m.fullname.cmp(fullname))
        .ok()
        .map(|i| &COMMAND_META[i])
}
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--table", default=os.path.join(here, "..", "server", "src", "commands.rs"))
    opts = ap.parse_args()

    table = read_table(opts.table)
    conn = Conn(opts.host, opts.port)
    hello = conn.call("HELLO", "3")
    version = hello.get("version")
    if version != "7.0.15":
        print("gen-command-meta: WARNING: server is %s, not 7.0.15" % version, file=sys.stderr)

    problems = 0
    entries = []  # (fullname, ours-row)
    for row in table:
        entries.append((row["name"], row))
        for sub in row["subs"]:
            entries.append(("%s|%s" % (row["name"], sub["name"]), sub))

    metas = []
    for fullname, row in entries:
        info = conn.call("COMMAND", "INFO", fullname)[0]
        if info is None:
            print("MISSING %s: Redis 7.0.15 has no such command" % fullname, file=sys.stderr)
            problems += 1
            continue
        docs = conn.call("COMMAND", "DOCS", fullname).get(fullname)
        theirs = {"arity": info[1], "flags": [str(f) for f in info[2]],
                  "keys": (info[3], info[4], info[5])}
        for field in ("arity", "flags", "keys"):
            if row[field] != theirs[field]:
                print("MISMATCH %s %s: ours %r, redis %r" % (fullname, field, row[field],
                                                            theirs[field]), file=sys.stderr)
                problems += 1
        # Subcommands Redis has that we do not (for information only).
        if row["subs_array"]:
            ours = {s["name"] for s in row["subs"]}
            theirs_subs = sorted(s[0].split("|", 1)[1] for s in info[9])
            missing = [s for s in theirs_subs if s not in ours]
            if missing:
                print("NOTE %s: subcommands not in our table: %s" % (fullname, " ".join(missing)),
                      file=sys.stderr)
        metas.append((fullname, meta_rs(fullname, info, docs)))

    metas.sort(key=lambda m: m[0].encode())
    sys.stdout.write(HEADER)
    sys.stdout.write("\n/// Sorted by full name (byte order): see `lookup_meta`.\n")
    sys.stdout.write("#[rustfmt::skip]\npub static COMMAND_META: &[CommandMeta] = &[\n")
    for _, text in metas:
        sys.stdout.write(text + "\n")
    sys.stdout.write("];\n")
    print("gen-command-meta: %d commands, %d problems" % (len(metas), problems), file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
