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
# MEMORY=1 also measures memory per key / per member (see memory()),
# FULL=1 is issue 18's whole table: every test of redis-benchmark's default
# suite at -c 50 -P 1, -c 50 -P 16 and -c 4 -P 1, then MEMORY and BLOCKERS,
# TESTS= (empty) skips the redis-benchmark table,
# LITE_BIN=/path/to/redis-lite to benchmark another build.
#
#   FULL=1 N=100000 scripts/bench-vs-redis.sh     # the table in the README
set -euo pipefail
cd "$(dirname "$0")/.."

N="${N:-200000}"
RUNS="${RUNS:-3}"
# redis-benchmark's default suite (what it runs without -t), test by test.
DEFAULT_SUITE=ping_inline,ping_mbulk,set,get,incr,lpush,rpush,lpop,rpop,sadd,hset,spop,zadd,zpopmin,lrange_100,lrange_300,lrange_500,lrange_600,mset
if [ "${FULL:-0}" = 1 ]; then
    TESTS="${TESTS-$DEFAULT_SUITE}"
    MEMORY=1
    BLOCKERS=1
fi
TESTS="${TESTS-set,get}"
PIPELINES="${PIPELINES:-1 16}"
CLIENTS="${CLIENTS:-50}"
# The (clients, pipeline) pairs of the table: every pipeline at CLIENTS,
# and with FULL=1 also 4 clients without pipelining (the victims' pattern
# in the experiments, where the per-request path is all that counts).
CONFIGS=""
for p in $PIPELINES; do CONFIGS="$CONFIGS $CLIENTS:$p"; done
[ "${FULL:-0}" = 1 ] && CONFIGS="$CONFIGS 4:1"

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
bench() { # port test pipeline [clients]
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
    redis-benchmark -p "$1" -q -n "$N" -c "${4:-$CLIENTS}" -P "$3" "${what[@]}" 2>/dev/null \
        | tr '\r' '\n' | grep 'requests per second' | tail -n 1 \
        | sed -E 's/^[^:]+: *([0-9.]+) requests per second.*/\1/'
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "0"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "redis-lite: $LITE_BIN" >&2
echo "redis     : $(redis-server --version)" >&2
echo "N=$N RUNS=$RUNS TESTS=$TESTS clients:pipeline=\"${CONFIGS# }\"" >&2
echo "machine   : $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%Y-%m-%d %H:%M UTC')" >&2
echo

case ",$TESTS," in
    *,bit*|*,pf*|*,geo*)
        load_bits_geo_hll "$LITE_PORT"
        load_bits_geo_hll "$REDIS_PORT"
        ;;
esac

[ -n "$TESTS" ] && printf '%-12s %8s %8s %16s %16s %12s\n' test clients pipeline "redis-lite rps" "redis rps" "lite/redis"
[ -n "$TESTS" ] && printf '%-12s %8s %8s %16s %16s %12s\n' ------------ -------- -------- ---------------- ---------------- ------------
test_list=()
[ -n "$TESTS" ] && IFS=',' read -r -a test_list <<<"$TESTS"
for cfg in $CONFIGS; do
    c="${cfg%%:*}"
    p="${cfg#*:}"
    for t in ${test_list[@]+"${test_list[@]}"}; do
        : >"$TMP/lite.txt"
        : >"$TMP/redis.txt"
        for _ in $(seq 1 "$RUNS"); do
            bench "$LITE_PORT" "$t" "$p" "$c" >>"$TMP/lite.txt"
            bench "$REDIS_PORT" "$t" "$p" "$c" >>"$TMP/redis.txt"
        done
        lite="$(median <"$TMP/lite.txt")"
        redis="$(median <"$TMP/redis.txt")"
        ratio="$(awk -v a="$lite" -v b="$redis" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')"
        printf '%-12s %8s %8s %16s %16s %12s\n' "$t" "$c" "$p" "$lite" "$redis" "$ratio"
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
    elif kind == "zset":
        print("ZADD", key, " ".join("%d member:%d" % (i, i) for i in r))
    else:
        print("HSET", key, " ".join("field:%d %d" % (i, i) for i in r))
PY
}
# Every element of one key by HSCAN/SSCAN/ZSCAN from cursor 0 back to 0
# (COUNT left at its default 10), over a raw RESP connection.
scan_key() { # port command key
    python3 - "$@" <<'PY'
import socket, sys
port, cmd, key = int(sys.argv[1]), sys.argv[2], sys.argv[3]
s = socket.create_connection(("127.0.0.1", port))
f = s.makefile("rb")
def send(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a.encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    s.sendall(out)
def read():
    line = f.readline()
    t, rest = line[:1], line[1:-2]
    if t == b"*":
        return [read() for _ in range(int(rest))]
    if t == b"$":
        data = f.read(int(rest) + 2)
        return data[:-2]
    if t == b"-":
        sys.exit("scan: " + rest.decode())
    return rest
cursor = "0"
while True:
    send(cmd, key, cursor)
    cursor = read()[0].decode()
    if cursor == "0":
        break
PY
}
blocker() { # port row -> usec of the row's command, and its calls
    local p="$1" c
    redis-cli -p "$p" FLUSHALL >/dev/null
    case "$2" in
        del-list | lrange) fill "$p" list big ;;
        smembers | del-set | sscan) fill "$p" set big ;;
        hgetall | del-hash | hscan) fill "$p" hash big ;;
        del-zset | zscan) fill "$p" zset big ;;
        scan | flushall) redis-cli -p "$p" DEBUG POPULATE 1000000 >/dev/null ;;
        expire)
            redis-cli -p "$p" CONFIG SET latency-monitor-threshold 1 >/dev/null
            redis-cli -p "$p" LATENCY RESET >/dev/null
            ;;
    esac
    redis-cli -p "$p" CONFIG RESETSTAT >/dev/null
    case "$2" in
        del-list | del-set | del-hash | del-zset) c=del; redis-cli -p "$p" DEL big >/dev/null ;;
        lrange) c=lrange; redis-cli -p "$p" LRANGE big 0 -1 >/dev/null ;;
        smembers) c=smembers; redis-cli -p "$p" SMEMBERS big >/dev/null ;;
        hgetall) c=hgetall; redis-cli -p "$p" HGETALL big >/dev/null ;;
        sscan | hscan | zscan) c="$2"; scan_key "$p" "$2" big ;;
        scan) c=scan; redis-cli -p "$p" --scan >/dev/null ;;
        flushall) c=flushall; redis-cli -p "$p" FLUSHALL >/dev/null ;;
        expire)
            # 250k keys that expire 100 ms after the script that wrote them,
            # then nothing but the active expire cycle until they are gone:
            # the longest expire-cycle latency event, in us (the monitor
            # keeps milliseconds on both servers).
            redis-cli -p "$p" EVAL "for i = 1, 250000 do redis.call('SET', 'e:' .. i, 'v', 'PX', 100) end" 0 >/dev/null
            for _ in $(seq 1 600); do
                [ "$(redis-cli -p "$p" DBSIZE)" = 0 ] && break
                sleep 0.1
            done
            local ms
            ms="$(redis-cli -p "$p" LATENCY LATEST | awk 'prev == "expire-cycle" && ++n == 3 { print; exit } { if ($0 == "expire-cycle") { prev = $0; n = 0 } }')"
            redis-cli -p "$p" CONFIG SET latency-monitor-threshold 0 >/dev/null
            echo "$(( ${ms:-0} * 1000 )) 1"
            return
            ;;
    esac
    echo "$(cmd_usec "$p" "$c") $(cmd_calls "$p" "$c")"
}
if [ "${BLOCKERS:-0}" = 1 ]; then
    echo
    printf '%-24s %14s %14s %12s %13s\n' blocker "redis-lite us" "redis us" "lite/redis" calls
    printf '%-24s %14s %14s %12s %13s\n' ------------------------ -------------- -------------- ------------ -------------
    for row in del-list del-set del-hash del-zset lrange smembers hgetall scan sscan hscan zscan flushall expire; do
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
            del-set) label="DEL 1M-member set" ;;
            del-hash) label="DEL 1M-field hash" ;;
            del-zset) label="DEL 1M-member zset" ;;
            sscan) label="full SSCAN of 1M" ;;
            hscan) label="full HSCAN of 1M" ;;
            zscan) label="full ZSCAN of 1M" ;;
            expire) label="expire cycle, 250k keys" ;;
            lrange) label="LRANGE 0 -1 of 1M" ;;
            smembers) label="SMEMBERS of 1M" ;;
            hgetall) label="HGETALL of 1M" ;;
            scan) label="full SCAN of 1M keys" ;;
            flushall) label="FLUSHALL of 1M keys" ;;
        esac
        calls="1"
        case "$row" in *scan) calls="$calls_lite/$calls_redis" ;; esac
        printf '%-24s %14s %14s %12s %13s\n' "$label" "$lite" "$redis" "$ratio" "$calls"
    done
fi
# Memory per key (issue 18): used_memory before and after building the same
# data on both servers, divided by the number of keys (or members, for the
# two big keys). The data is written by one EVAL loop on each server, so no
# client buffer is part of it, and used_memory leaves the Lua heap out on
# both. The encoding column is OBJECT ENCODING of one key, the same on both.
# Redis 7.0 has no listpack sets: small sets of integers are intsets.
used_memory() { # port
    redis-cli -p "$1" INFO memory | tr -d '\r' | sed -n 's/^used_memory:\([0-9]*\)$/\1/p'
}
memory_case() { # port case -> "bytes-per-item encoding"
    local p="$1" loop sample n=1000000
    redis-cli -p "$p" FLUSHALL >/dev/null
    case "$2" in
        strings) loop="" sample="key:1" ;;
        hashes) loop="redis.call('HSET', 'h:' .. i, 'f1', 'v1', 'f2', 'v2')" sample="h:1" ;;
        intsets) loop="redis.call('SADD', 's:' .. i, 1, 2, 3)" sample="s:1" ;;
        zsets) loop="redis.call('ZADD', 'z:' .. i, 1, 'a', 2, 'b')" sample="z:1" ;;
        lists) loop="redis.call('RPUSH', 'l:' .. i, 'a', 'b')" sample="l:1" ;;
        bigset) loop="redis.call('SADD', 'big', 'member:' .. i)" sample="big" ;;
        bigzset) loop="redis.call('ZADD', 'big', i, 'member:' .. i)" sample="big" ;;
    esac
    local before after
    before="$(used_memory "$p")"
    if [ "$2" = strings ]; then
        redis-cli -p "$p" DEBUG POPULATE "$n" >/dev/null
    else
        redis-cli -p "$p" EVAL "for i = 1, $n do $loop end" 0 >/dev/null
    fi
    after="$(used_memory "$p")"
    local enc
    enc="$(redis-cli -p "$p" OBJECT ENCODING "$sample")"
    redis-cli -p "$p" FLUSHALL >/dev/null
    awk -v a="$after" -v b="$before" -v n="$n" -v e="$enc" 'BEGIN { printf "%.1f %s\n", (a - b) / n, e }'
}
if [ "${MEMORY:-0}" = 1 ]; then
    echo
    printf '%-36s %12s %12s %12s %12s\n' "memory per key" "redis-lite B" "redis B" "lite/redis" encoding
    printf '%-36s %12s %12s %12s %12s\n' ------------------------------------ ------------ ------------ ------------ ------------
    for row in strings hashes intsets zsets lists bigset bigzset; do
        read -r lite enc_lite < <(memory_case "$LITE_PORT" "$row")
        read -r redis enc_redis < <(memory_case "$REDIS_PORT" "$row")
        ratio="$(awk -v a="$lite" -v b="$redis" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')"
        case "$row" in
            strings) label="DEBUG POPULATE 1M (per key)" ;;
            hashes) label="1M hashes of 2 fields (per key)" ;;
            intsets) label="1M sets of 3 ints (per key)" ;;
            zsets) label="1M zsets of 2 members (per key)" ;;
            lists) label="1M lists of 2 items (per key)" ;;
            bigset) label="one 1M-member set (per member)" ;;
            bigzset) label="one 1M-member zset (per member)" ;;
        esac
        enc="$enc_lite"
        [ "$enc_lite" = "$enc_redis" ] || enc="$enc_lite/$enc_redis"
        printf '%-36s %12s %12s %12s %12s\n' "$label" "$lite" "$redis" "$ratio" "$enc"
    done
fi
# Servers are stopped by the EXIT trap.
