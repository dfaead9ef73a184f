#!/usr/bin/env bash
# Run Redis 7.0.15's own Tcl test suite against redis-lite.
#
#   scripts/redis-suite.sh unit/type/list                 # spawn mode: redis-lite stands in as src/redis-server
#   scripts/redis-suite.sh --external unit/type/list      # external mode: one redis-lite on a free port
#   REDIS_BIN=/usr/bin/redis-server scripts/redis-suite.sh unit/dump   # the same units against real Redis
#   scripts/redis-suite.sh --lite-replica integration/replication-4  # mixed pairs: every 2nd server spawned is
#                                                       # redis-lite, the others real redis-server (the
#                                                       # outer start_server = real master, inner = lite
#                                                       # replica); --lite-outer swaps the roles
#
# The suite itself is Debian's source package of redis 7.0.15 (`apt-get source redis`,
# which needs a deb-src line); it is fetched into $REDIS_SRC_CACHE (default
# ~/.cache/redis-src) and never committed. Extra arguments go to ./runtest
# (e.g. --only 'test name', --verbose, --clients 1).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cache=${REDIS_SRC_CACHE:-$HOME/.cache/redis-src}
src=${REDIS_SRC:-}
if [ -z "$src" ]; then
    for d in /work/redis-src/redis-7.0.15 "$cache"/redis-7.0.15; do
        [ -x "$d/runtest" ] && src=$d && break
    done
fi
if [ -z "$src" ]; then
    mkdir -p "$cache"
    (cd "$cache" && apt-get source redis >/dev/null) || {
        echo "cannot fetch Redis's source: add a deb-src line for bookworm and run 'apt-get update'" >&2
        exit 2
    }
    src=$(ls -d "$cache"/redis-7.0.15* | head -1)
fi
command -v tclsh >/dev/null || { echo "tclsh is needed (apt-get install -y tcl)" >&2; exit 2; }

external=0
mixed=
units=()
extra=()
while [ $# -gt 0 ]; do
    case "$1" in
        --external) external=1 ;;
        --lite-replica) mixed=1 ;;
        --lite-outer) mixed=0 ;;
        unit/*|integration/*) units+=(--single "$1") ;;
        *) extra+=("$1") ;;
    esac
    shift
done

bin=${REDIS_BIN:-$top/target/release/redis-lite}
[ -x "$bin" ] || (cd "$top" && cargo build --release >/dev/null)

# A private copy of the suite whose src/ holds redis-lite and Redis's tools.
work=$(mktemp -d /tmp/redis-suite.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp -r "$src/tests" "$src/runtest" "$work/"
mkdir -p "$work/src"
if [ -n "$mixed" ]; then
    # Alternate binaries by spawn order: lite on spawns with parity $mixed.
    real=$(command -v redis-server)
    cat >"$work/mixed-server" <<EOS
#!/bin/bash
for a in "\$@"; do case "\$a" in --version|-v) exec "$real" "\$@";; esac; done
n=\$(cat "$work/mixed.count" 2>/dev/null || echo 0); echo \$((n+1)) >"$work/mixed.count"
if [ \$((n % 2)) -eq $mixed ]; then exec "$bin" "\$@"; else exec "$real" "\$@"; fi
EOS
    chmod +x "$work/mixed-server"
    ln -s "$work/mixed-server" "$work/src/redis-server"
else
    ln -s "$bin" "$work/src/redis-server"
fi
for t in redis-cli redis-benchmark redis-check-aof redis-check-rdb; do
    p=$(command -v $t || true)
    [ -n "$p" ] && ln -s "$p" "$work/src/$t"
done
cd "$work"
if [ "$external" = 1 ]; then
    port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
    "$bin" --port "$port" --save '' --appendonly no --enable-debug-command yes >"$work/server.log" 2>&1 &
    pid=$!
    trap 'kill $pid 2>/dev/null; rm -rf "$work"' EXIT
    sleep 0.5
    ./runtest --host 127.0.0.1 --port "$port" "${units[@]}" "${extra[@]}"
else
    ./runtest "${units[@]}" "${extra[@]}"
fi
