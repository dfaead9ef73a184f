#!/usr/bin/env bash
# redis-benchmark on the reply path, several servers side by side:
# -c 50 -n 200000 -t get,set,lrange_100,mset at -P 16 and -P 1, runs
# alternating between the servers (each run on a fresh server), then the
# median requests/s per test and the ratio of each server to the last one.
#
#   scripts/bench-reply-ab.sh RUNS PORT NAME=BINARY... NAME=BINARY
#   scripts/bench-reply-ab.sh 3 25200 before=/tmp/old/redis-lite \
#       after=target/release/redis-lite redis=/usr/bin/redis-server
set -euo pipefail
runs=$1 port=$2; shift 2
tests=get,set,lrange_100,mset
out=$(mktemp -d)
for run in $(seq "$runs"); do
  for spec in "$@"; do
    name=${spec%%=*} bin=${spec#*=}
    "$bin" --port "$port" --save '' --appendonly no --daemonize no --dir "$out" \
      --logfile '' >/dev/null 2>&1 &
    pid=$!
    until redis-cli -p "$port" ping >/dev/null 2>&1; do sleep 0.05; done
    for p in 16 1; do
      redis-benchmark -p "$port" -c 50 -n 200000 -P "$p" -q -t "$tests" 2>/dev/null |
        tr '\r' '\n' | grep 'requests per second' |
        sed -E "s/^([A-Z_0-9]+)[^:]*: ([0-9.]+) requests.*/$name P$p \1 \2/" >>"$out/results" || true
    done
    kill "$pid"; wait "$pid" 2>/dev/null || true
  done
done
python3 - "$out/results" "$@" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
names = [s.split("=", 1)[0] for s in sys.argv[2:]]
med = {}
for name, p, test, rps in rows:
    med.setdefault((p, test), {}).setdefault(name, []).append(float(rps))
ref = names[-1]
print(f"{'test':18}" + "".join(f"{n:>12}" for n in names) +
      "".join(f"{n + '/' + ref:>16}" for n in names[:-1]))
for (p, test), by in sorted(med.items()):
    m = {n: statistics.median(by[n]) for n in names if n in by}
    print(f"{test + ' ' + p:18}" + "".join(f"{m.get(n, 0):12.0f}" for n in names) +
          "".join(f"{m.get(n, 0) / m[ref]:16.2f}" for n in names[:-1]))
PY
rm -rf "$out"
