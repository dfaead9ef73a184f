#!/usr/bin/env bash
# What one MONITOR costs (experiment E3): redis-benchmark throughput with and
# without one `redis-cli monitor > /dev/null` attached, on redis-lite and on a
# real redis-server, and the with/without ratio per test.
#
#   scripts/bench-monitor.sh                  # N=200000 TESTS=set,get,hset
#   N=100000 TESTS=set,get PIPELINE=16 scripts/bench-monitor.sh
set -euo pipefail
cd "$(dirname "$0")/.."
N="${N:-200000}"
PIPELINE="${PIPELINE:-1}"
TESTS="${TESTS:-set,get,hset}"
[ "${SKIP_BUILD:-0}" = 1 ] || cargo build --release -q
LITE_BIN="${LITE_BIN:-target/release/redis-lite}"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
LITE_PORT=$(free_port); REDIS_PORT=$(free_port)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT INT TERM

"$LITE_BIN" --port "$LITE_PORT" --save '' > /dev/null 2>&1 & PIDS+=($!)
redis-server --port "$REDIS_PORT" --save '' --appendonly no > /dev/null 2>&1 & PIDS+=($!)
for p in "$LITE_PORT" "$REDIS_PORT"; do
    for _ in $(seq 50); do redis-cli -p "$p" ping > /dev/null 2>&1 && break; sleep 0.1; done
done

# rps of each test, one line per test: "<name> <rps>"
bench() { redis-benchmark -p "$1" -q -n "$N" -P "$PIPELINE" -t "$TESTS" 2>/dev/null | tr '\r' '\n' \
    | awk -F': ' '/requests per second/ {split($2, a, " "); print $1, a[1]}'; }

declare -A RPS
for server in lite redis; do
    port=$LITE_PORT; [ "$server" = redis ] && port=$REDIS_PORT
    while read -r name rps; do RPS[$server,plain,$name]=$rps; done < <(bench "$port")
    redis-cli -p "$port" monitor > /dev/null & MON=$!
    sleep 0.3
    while read -r name rps; do RPS[$server,monitor,$name]=$rps; done < <(bench "$port")
    kill "$MON" 2>/dev/null || true; wait "$MON" 2>/dev/null || true
done

printf '%-6s %-7s %12s %12s %8s\n' test server plain monitor ratio
for name in $(echo "$TESTS" | tr ',' ' ' | tr '[:lower:]' '[:upper:]'); do
    for server in lite redis; do
        plain=${RPS[$server,plain,$name]:-0}; mon=${RPS[$server,monitor,$name]:-0}
        ratio=$(python3 -c "print(f'{float($mon)/float($plain):.2f}' if float($plain) else 'n/a')")
        printf '%-6s %-7s %12s %12s %8s\n' "$name" "$server" "$plain" "$mon" "$ratio"
    done
done
