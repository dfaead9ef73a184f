#!/usr/bin/env bash
# The tour's workshop breakpoints, checked: build with the `workshop` profile,
# run redis-lite under gdb in batch mode with one breakpoint per idea, drive
# every path of each idea with redis-cli, and check that each path stopped
# where the tour says it does.
#
#   scripts/tour-breakpoints.sh            # build, run, report; exit 1 on a miss
#
# Each breakpoint prints "HIT <name>" and the first frames of its backtrace,
# then continues, so one run covers everything. The driver runs one path at a
# time and counts the HIT lines that path added (gdb's output goes to a file).
#
# Ideas and their paths (docs/tour.md, "Workshop breakpoints"):
#   keys_command          KEYS *
#   del_generic_command   DEL, UNLINK
#   delete_expired_key    lazy expiry (GET of an expired key -> expire_if_needed),
#                         active expiry (active_expire_cycle -> ExpireHost) and,
#                         on a writable replica, its own keys (expire_slave_keys)
#   active_expire_cycle   the cron / before-sleep cycle
#   free_object_async     UNLINK of a big value, DEL with lazyfree-lazy-user-del,
#                         lazy expiry with lazyfree-lazy-expire, eviction with
#                         lazyfree-lazy-eviction, an overwrite with
#                         lazyfree-lazy-server-del
#   free_database_async   FLUSHALL ASYNC, FLUSHDB ASYNC (Redis: emptyDbAsync -> lazyfreeFreeDatabase,
#                         not freeObjAsync, so it has its own breakpoint)
#   call                  every command: from a client, inside EXEC, from a script
#                         (redis.call), and the master's stream on a replica
#   encoding_log_record   with DEBUG ENCODING-LOG ON, each real conversion: the 513th
#                         integer SADDed converts in set_type_convert (in the backtrace)
#   migrate_try           each MIGRATE attempt (a refused target: the attempt and
#                         its one retry), the loop blocked inside it
set -euo pipefail

cd "$(dirname "$0")/.."
PORT=${PORT:-$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')}
OUT=$(mktemp /tmp/tour-gdb.XXXXXX)
GDBCMDS=$(mktemp /tmp/tour-gdb-cmds.XXXXXX)
trap 'rm -f "$GDBCMDS"' EXIT

cargo build --profile workshop -p redis-lite >&2
BIN=${CARGO_TARGET_DIR:-target}/workshop/redis-lite
CLI="redis-cli -p $PORT"

bp() { # bp NAME SYMBOL: a breakpoint that reports and goes on
  cat >>"$GDBCMDS" <<EOF
break $2
commands
silent
printf "HIT $1\n"
bt 8
continue
end
EOF
}

{
  echo "set pagination off"
  echo "set breakpoint pending on"
  echo "set print thread-events off"
} >"$GDBCMDS"
bp keys_command redis_lite::db::keys_command
bp del_generic_command redis_lite::db::del_generic_command
bp delete_expired_key redis_lite::db::delete_expired_key
bp free_object_async lazyfree::LazyFree::free_object_async
bp free_database_async lazyfree::LazyFree::free_database_async
bp call redis_lite::server::call
bp migrate_try redis_lite::migrate::migrate_try
bp encoding_log_record storage::encoding_log::record
# active_expire_cycle runs on every cron tick and every pass (fast cycle):
# an idle server at hz 10 stops about ten times a second, which is fine.
bp active_expire_cycle redis_lite::expire::active_expire_cycle
cat >>"$GDBCMDS" <<'EOF'
run
EOF

gdb -batch -x "$GDBCMDS" --args "$BIN" --port "$PORT" --save '' >"$OUT" 2>&1 &
GDB_PID=$!

for _ in $(seq 100); do
  $CLI ping >/dev/null 2>&1 && break
  sleep 0.2
done

fail=0
hits() { grep -c "^HIT $1\$" "$OUT" || true; }
# check PATH NAME [FRAME]: run "$@" after the two names, then expect new HIT
# NAME lines (and FRAME somewhere in the new output when given).
check() {
  local path=$1 name=$2 frame=$3
  shift 3
  local before lines_before
  before=$(hits "$name")
  lines_before=$(wc -l <"$OUT")
  "$@" >/dev/null
  # gdb prints each stop a moment after it happens (slower on a loaded
  # machine, with active_expire_cycle stopping ten times a second): wait up
  # to 15 s for the new stop and its frame rather than a fixed time.
  local after tries
  for tries in $(seq 30); do
    sleep 0.5
    after=$(hits "$name")
    if [ "$after" -gt "$before" ] &&
      { [ -z "$frame" ] || tail -n +"$lines_before" "$OUT" | grep -q "$frame"; }; then
      echo "ok    $name <- $path"
      return
    fi
  done
  echo "MISS  $name <- $path"
  fail=1
}

drive() { for cmd in "$@"; do eval "$CLI $cmd"; done; }
# One connection for all the commands (MULTI ... EXEC must share one).
session() { printf '%s\n' "$@" | $CLI; }
BIG="eval \"for i=1,200 do redis.call('sadd','big',i..'x') end\" 0"

check "any command (PING)" call "" drive "ping"
check "KEYS *" keys_command "" drive "set k v" "keys '*'"
check "DEL" del_generic_command "" drive "set k v" "del k"
check "UNLINK" del_generic_command "" drive "set k v" "unlink k"
check "lazy expiry (GET)" delete_expired_key expire_if_needed \
  drive "debug set-active-expire 0" "set e v px 1" "debug sleep 0.05" "get e" "debug set-active-expire 1"
check "active expiry (cron)" delete_expired_key active_expire_cycle \
  drive "set a v px 1" "debug sleep 0.5"
check "the expire cycle" active_expire_cycle "" drive "debug sleep 0.2"
check "UNLINK of a big set" free_object_async "" \
  drive "eval \"for i=1,200 do redis.call('sadd','big',i..'x') end\" 0" "unlink big"
check "DEL with lazyfree-lazy-user-del" free_object_async "" \
  drive "config set lazyfree-lazy-user-del yes" \
  "eval \"for i=1,200 do redis.call('sadd','big',i..'x') end\" 0" "del big" \
  "config set lazyfree-lazy-user-del no"
check "lazy expiry with lazyfree-lazy-expire" free_object_async delete_expired_key \
  drive "config set lazyfree-lazy-expire yes" "debug set-active-expire 0" "$BIG" \
  "pexpire big 1" "debug sleep 0.05" "get big" "debug set-active-expire 1" \
  "config set lazyfree-lazy-expire no"
check "eviction with lazyfree-lazy-eviction" free_object_async perform_evictions \
  drive "flushall" "config set lazyfree-lazy-eviction yes" "$BIG" \
  "config set maxmemory-policy allkeys-random" "config set maxmemory 1" "debug sleep 0.2" \
  "config set maxmemory 0" "config set maxmemory-policy noeviction" \
  "config set lazyfree-lazy-eviction no"
check "overwrite with lazyfree-lazy-server-del" free_object_async set_key \
  drive "config set lazyfree-lazy-server-del yes" "$BIG" "set big v" \
  "config set lazyfree-lazy-server-del no"
check "FLUSHALL ASYNC" free_database_async "" drive "set k v" "flushall async"
check "FLUSHDB ASYNC" free_database_async "" drive "set k v" "flushdb async"
check "a command inside EXEC" call exec_command session "multi" "set m 1" "exec"
check "redis.call from a script" call script_call drive "eval \"return redis.call('set','s','1')\" 0"
check "redis.call from a function" call script_call \
  session "function load replace \"#!lua name=tourlib\nredis.register_function('tourf', function() return redis.call('ping') end)\"" \
  "fcall tourf 0"
check "SADD of a 513th integer" encoding_log_record set_type_convert \
  drive "debug encoding-log on" "eval \"for i=1,513 do redis.call('sadd','ints',i) end\" 0" \
  "debug encoding-log off"
# A port nobody listens on: the handshake is refused, MIGRATE retries once.
CLOSED=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
check "MIGRATE to a closed port" migrate_try migrate_command \
  drive "set mk v" "migrate 127.0.0.1 $CLOSED mk 0 100"

# The replicated stream: the server under gdb becomes a replica of a
# real redis-server (or a second redis-lite), and runs the master's writes
# through call() too. As a writable replica, it also expires the keys it
# was written directly (expire_slave_keys), not through active expiry.
MASTER_BIN=${MASTER_BIN:-$(command -v redis-server || echo "$BIN")}
MPORT=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
"$MASTER_BIN" --port "$MPORT" --save '' >/dev/null 2>&1 &
MASTER_PID=$!
for _ in $(seq 50); do redis-cli -p "$MPORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
$CLI replicaof 127.0.0.1 "$MPORT" >/dev/null
for _ in $(seq 100); do
  $CLI info replication | grep -q 'master_link_status:up' && break
  sleep 0.2
done
check "the master's stream on a replica" call process_input_buffer \
  redis-cli -p "$MPORT" set replicated 1
check "a writable replica's own key" delete_expired_key expire_slave_keys \
  drive "config set replica-read-only no" "set w v px 1" "debug sleep 0.5" \
  "config set replica-read-only yes"
$CLI replicaof no one >/dev/null
kill "$MASTER_PID" 2>/dev/null || true

$CLI shutdown nosave >/dev/null 2>&1 || true
wait "$GDB_PID" || true
echo "gdb output: $OUT"
exit $fail
