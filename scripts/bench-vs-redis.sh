#!/usr/bin/env bash
# Throughput of redis-lite next to a real redis-server, same machine, same
# settings (no persistence), measured with redis-benchmark.
#
#   scripts/bench-vs-redis.sh
#   N=1000000 RUNS=5 TESTS=set,get,incr PIPELINES="1 16 64" scripts/bench-vs-redis.sh
#   TESTS=eval,get EVAL_LOOP=1 scripts/bench-vs-redis.sh     # issue 7's scripting numbers
#
# Each (test, pipeline) pair is run RUNS times against each server,
# ALTERNATING lite, redis, lite, redis, ... so a noisy neighbour or thermal
# drift hits both equally; the table shows the median of the runs.
#
# Env: N (requests per run, default 200000), RUNS (default 3), TESTS
# (redis-benchmark -t list, default set,get; `eval` means
# EVAL "return redis.call('get','k')" 0, `xadd` XADD mystream * f v, `xrange`
# XRANGE xr - + COUNT 10 over a 100-entry stream; setbit bitcount bitop bitpos
# bitfield pfadd pfcount pfcount2 pfmerge geoadd geosearch geosearch100
# geopos are custom commands on preloaded data, see bench()), PIPELINES (default "1 16"),
# EVAL_LOOP=1 also times the seed posts' 1M-member SADD loop in one EVAL,
# CLIENTS (redis-benchmark -c, default 50), SKIP_BUILD=1 to reuse the binary,
# BLOCKERS=1 also times the big blocking commands server-side (see blockers()),
# TESTS= (empty) skips the redis-benchmark table,
# LITE_BIN=/path/to/redis-lite to benchmark another build.
set -euo pipefail
cd "$(dirname "$0")/.."

N="${N:-200000}"
RUNS="${RUNS:-3}"
TESTS="${TESTS-set,get}"
PIPELINES="${PIPELINES:-1 16}"
CLIENTS="${CLIENTS:-50}"

for tool in redis-server redis-benchmark redis-cli; do
    command -v "$tool" >/dev/null || { echo "error: $tool not found (apt-get install redis-server redis-tools)" >&2; exit 1; }
done

if [ "${SKIP_BUILD:-0}" != 1 ]; then
    cargo build --release --bin redis-lite >&2
fi
if [ -z "${LITE_BIN:-}" ]; then
    TARGET_DIR="$(cargo metadata --format-version 1 --no-deps 2>/dev/null \
        | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
    LITE_BIN="${TARGET_DIR:-target}/release/redis-lite"
fi
[ -x "$LITE_BIN" ] || LITE_BIN=target/release/redis-lite
[ -x "$LITE_BIN" ] || { echo "error: $LITE_BIN not built" >&2; exit 1; }

# A free port: bind :0 and read back what the kernel chose.
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

TMP="$(mktemp -d)"
LITE_PID=""
REDIS_PID=""
cleanup() {
    for pid in "$LITE_PID" "$REDIS_PID"; do
        if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
            kill "$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
        fi
    done
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

wait_ready() { # port pid name
    for _ in $(seq 1 200); do
        if redis-cli -p "$1" PING 2>/dev/null | grep -q PONG; then return 0; fi
        kill -0 "$2" 2>/dev/null || { echo "error: $3 exited; log:" >&2; cat "$TMP/$3.log" >&2; exit 1; }
        sleep 0.05
    done
    echo "error: $3 not answering PING on port $1" >&2
    exit 1
}

LITE_PORT="$(free_port)"
"$LITE_BIN" --port "$LITE_PORT" --save '' --appendonly no --enable-debug-command yes >"$TMP/redis-lite.log" 2>&1 &
LITE_PID=$!
wait_ready "$LITE_PORT" "$LITE_PID" redis-lite

REDIS_PORT="$(free_port)"
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
    --enable-debug-command yes \
    >"$TMP/redis-server.log" 2>&1 &
REDIS_PID=$!
wait_ready "$REDIS_PORT" "$REDIS_PID" redis-server

# Data for the bitmap / HLL / GEO tests, the same bytes on both servers:
# 1 MB and 64 KB random bitmaps, a dense HLL of 100k elements, 100k points
# in a 400 x 400 km square around Paris.
load_bits_geo_hll() { # port
    [ -f "$TMP/data.txt" ] || python3 - "$TMP" <<'PY'
import os, random, sys
tmp = sys.argv[1]
r = random.Random(1)
for name, n in (("bm1mb", 1 << 20), ("bm64ka", 1 << 16), ("bm64kb", 1 << 16)):
    open(os.path.join(tmp, name), "wb").write(bytes(r.getrandbits(8) for _ in range(n)))
with open(os.path.join(tmp, "data.txt"), "w") as f:
    for i in range(0, 100000, 1000):
        f.write("PFADD hll " + " ".join("e%d" % j for j in range(i, i + 1000)) + "\n")
        f.write("PFADD hll2 " + " ".join("f%d" % j for j in range(i, i + 1000)) + "\n")
    for i in range(0, 100000, 100):
        pts = ("%.6f %.6f p%d" % (2.35 + (r.random() - 0.5) * 5.4, 48.86 + (r.random() - 0.5) * 3.6, j)
               for j in range(i, i + 100))
        f.write("GEOADD geo " + " ".join(pts) + "\n")
PY
    for k in bm1mb bm64ka bm64kb; do redis-cli -p "$1" -x SET "$k" <"$TMP/$k" >/dev/null; done
    redis-cli -p "$1" <"$TMP/data.txt" >/dev/null
}

# rps of one redis-benchmark run for one test: "SET: 123456.78 requests per second, ..."
bench() { # port test pipeline
    local what=(-t "$2")
    if [ "$2" = eval ]; then
        redis-cli -p "$1" SET k v >/dev/null
        what=(eval "return redis.call('get','k')" 0)
    fi
    if [ "$2" = xadd ]; then
        redis-cli -p "$1" DEL mystream >/dev/null
        what=(XADD mystream '*' f v)
    fi
    if [ "$2" = xrange ]; then
        redis-cli -p "$1" DEL xr >/dev/null
        for i in $(seq 1 100); do echo "XADD xr * field value$i"; done | redis-cli -p "$1" >/dev/null
        what=(XRANGE xr - + COUNT 10)
    fi
    # Custom commands (-r: __rand_int__ below that bound). No ':' in their
    # arguments: the rps line is parsed up to the first one.
    case "$2" in
        # (__rand_int__ is zero-padded, "000000001234", not a valid offset.)
        setbit) what=(-r 100000 setbit bm__rand_int__ 1000 1) ;;
        bitcount) what=(bitcount bm1mb) ;;
        bitop) what=(bitop and bmdst bm64ka bm64kb) ;;
        bitpos) what=(bitpos bm1mb 0 1 -1) ;;
        bitfield) what=(-r 100000 bitfield bf__rand_int__ incrby u8 100 1 get i16 3) ;;
        pfadd) what=(-r 100000000 pfadd hllnew __rand_int__) ;;
        pfcount) what=(pfcount hll) ;;
        pfcount2) what=(pfcount hll hll2) ;;
        pfmerge) what=(pfmerge hllm hll hll2) ;;
        geoadd) what=(-r 1000000 geoadd geoadd 13.361389 38.115556 m__rand_int__) ;;
        geosearch) what=(geosearch geo fromlonlat 2.35 48.86 byradius 10 km) ;;
        geosearch100) what=(geosearch geo fromlonlat 2.35 48.86 byradius 100 km count 10 asc) ;;
        geopos) what=(geopos geo p1 p2 p3) ;;
    esac
    redis-benchmark -p "$1" -q -n "$N" -c "$CLIENTS" -P "$3" "${what[@]}" 2>/dev/null \
        | tr '\r' '\n' | grep 'requests per second' | tail -n 1 \
        | sed -E 's/^[^:]+: *([0-9.]+) requests per second.*/\1/'
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "0"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "redis-lite: $LITE_BIN" >&2
echo "redis     : $(redis-server --version)" >&2
echo "N=$N RUNS=$RUNS TESTS=$TESTS PIPELINES=\"$PIPELINES\" CLIENTS=$CLIENTS" >&2
echo

case ",$TESTS," in
    *,bit*|*,pf*|*,geo*)
        load_bits_geo_hll "$LITE_PORT"
        load_bits_geo_hll "$REDIS_PORT"
        ;;
esac

[ -n "$TESTS" ] && printf '%-8s %8s %16s %16s %12s\n' test pipeline "redis-lite rps" "redis rps" "lite/redis"
[ -n "$TESTS" ] && printf '%-8s %8s %16s %16s %12s\n' -------- -------- ---------------- ---------------- ------------
test_list=()
[ -n "$TESTS" ] && IFS=',' read -r -a test_list <<<"$TESTS"
for t in ${test_list[@]+"${test_list[@]}"}; do
    for p in $PIPELINES; do
        : >"$TMP/lite.txt"
        : >"$TMP/redis.txt"
        for _ in $(seq 1 "$RUNS"); do
            bench "$LITE_PORT" "$t" "$p" >>"$TMP/lite.txt"
            bench "$REDIS_PORT" "$t" "$p" >>"$TMP/redis.txt"
        done
        lite="$(median <"$TMP/lite.txt")"
        redis="$(median <"$TMP/redis.txt")"
        ratio="$(awk -v a="$lite" -v b="$redis" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')"
        printf '%-8s %8s %16s %16s %12s\n' "$t" "$p" "$lite" "$redis" "$ratio"
    done
done

# The seed posts' way of building a 1M-member set: one EVAL, one loop. The
# whole loop is one command: nothing else runs meanwhile on either server.
eval_loop() { # port -> seconds
    redis-cli -p "$1" DEL big:set >/dev/null
    local start end
    start=$(date +%s.%N)
    redis-cli -p "$1" EVAL "for i = 1, 1000000 do redis.call('SADD', KEYS[1], 'member:' .. i) end" 1 big:set >/dev/null
    end=$(date +%s.%N)
    redis-cli -p "$1" DEL big:set >/dev/null
    awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f\n", b - a }'
}
if [ "${EVAL_LOOP:-0}" = 1 ]; then
    : >"$TMP/lite.txt"
    : >"$TMP/redis.txt"
    for _ in $(seq 1 "$RUNS"); do
        eval_loop "$LITE_PORT" >>"$TMP/lite.txt"
        eval_loop "$REDIS_PORT" >>"$TMP/redis.txt"
    done
    lite="$(median <"$TMP/lite.txt")"
    redis="$(median <"$TMP/redis.txt")"
    echo
    printf '1M SADD in one EVAL: redis-lite %ss, redis %ss, lite/redis time %s\n' "$lite" "$redis" \
        "$(awk -v a="$lite" -v b="$redis" 'BEGIN { printf "%.2f", a / b }')"
fi
# The big blocking commands (issue 18): each is one call that stalls every
# other client, so what counts is the server's own time for it, read from
# INFO commandstats (cmdstat_<cmd>:usec, the time call() measured, the same
# clock SLOWLOG uses) after CONFIG RESETSTAT. The full SCAN sums the usec of
# all its calls and prints how many there were (the same on both servers
# when their tables have the same size). Data: 1M small integers in one
# list (a quicklist), 1M "member:<i>" in a set (hashtable), 1M fields in a
# hash (hashtable), 1M keys of DEBUG POPULATE.
cmd_usec() { # port command -> usec
    redis-cli -p "$1" INFO commandstats | tr -d '\r' \
        | sed -n "s/^cmdstat_$2:calls=\([0-9]*\),usec=\([0-9]*\),.*/\2/p"
}
cmd_calls() { # port command -> calls
    redis-cli -p "$1" INFO commandstats | tr -d '\r' \
        | sed -n "s/^cmdstat_$2:calls=\([0-9]*\),.*/\1/p"
}
fill() { # port kind key: 1M elements, 1000 per command
    python3 - "$2" "$3" <<'PY' | redis-cli -p "$1" >/dev/null
import sys
kind, key = sys.argv[1], sys.argv[2]
for base in range(0, 1000000, 1000):
    r = range(base, base + 1000)
    if kind == "list":
        print("RPUSH", key, " ".join(str(i) for i in r))
    elif kind == "set":
        print("SADD", key, " ".join("member:%d" % i for i in r))
    else:
        print("HSET", key, " ".join("field:%d %d" % (i, i) for i in r))
PY
}
blocker() { # port row -> usec of the row's command
    local p="$1" c
    redis-cli -p "$p" FLUSHALL >/dev/null
    case "$2" in
        del-list | lrange) fill "$p" list big ;;
        smembers) fill "$p" set big ;;
        hgetall) fill "$p" hash big ;;
        scan | flushall) redis-cli -p "$p" DEBUG POPULATE 1000000 >/dev/null ;;
    esac
    redis-cli -p "$p" CONFIG RESETSTAT >/dev/null
    case "$2" in
        del-list) c=del; redis-cli -p "$p" DEL big >/dev/null ;;
        lrange) c=lrange; redis-cli -p "$p" LRANGE big 0 -1 >/dev/null ;;
        smembers) c=smembers; redis-cli -p "$p" SMEMBERS big >/dev/null ;;
        hgetall) c=hgetall; redis-cli -p "$p" HGETALL big >/dev/null ;;
        scan) c=scan; redis-cli -p "$p" --scan >/dev/null ;;
        flushall) c=flushall; redis-cli -p "$p" FLUSHALL >/dev/null ;;
    esac
    echo "$(cmd_usec "$p" "$c") $(cmd_calls "$p" "$c")"
}
if [ "${BLOCKERS:-0}" = 1 ]; then
    echo
    printf '%-22s %14s %14s %12s %8s\n' blocker "redis-lite us" "redis us" "lite/redis" calls
    printf '%-22s %14s %14s %12s %8s\n' ---------------------- -------------- -------------- ------------ --------
    for row in del-list lrange smembers hgetall scan flushall; do
        : >"$TMP/lite.txt"
        : >"$TMP/redis.txt"
        for _ in $(seq 1 "$RUNS"); do
            read -r us calls_lite < <(blocker "$LITE_PORT" "$row")
            echo "$us" >>"$TMP/lite.txt"
            read -r us calls_redis < <(blocker "$REDIS_PORT" "$row")
            echo "$us" >>"$TMP/redis.txt"
        done
        lite="$(median <"$TMP/lite.txt")"
        redis="$(median <"$TMP/redis.txt")"
        ratio="$(awk -v a="$lite" -v b="$redis" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')"
        case "$row" in
            del-list) label="DEL 1M-int list" ;;
            lrange) label="LRANGE 0 -1 of 1M" ;;
            smembers) label="SMEMBERS of 1M" ;;
            hgetall) label="HGETALL of 1M" ;;
            scan) label="full SCAN of 1M keys" ;;
            flushall) label="FLUSHALL of 1M keys" ;;
        esac
        calls="1"
        [ "$row" = scan ] && calls="$calls_lite/$calls_redis"
        printf '%-22s %14s %14s %12s %8s\n' "$label" "$lite" "$redis" "$ratio" "$calls"
    done
fi
# Servers are stopped by the EXIT trap.
