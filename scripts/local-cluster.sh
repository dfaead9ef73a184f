#!/usr/bin/env bash
# A local Redis Cluster of redis-lite nodes for a workshop, in one line:
#   scripts/local-cluster.sh start [N=3] [BASEPORT=7000] [REPLICAS=0]
#       N masters and N*REPLICAS replicas, then redis-cli --cluster create
#       (--cluster-replicas REPLICAS): `start 3 7000 1` makes a 3+3 cluster
#       on ports 7000-7005
#   scripts/local-cluster.sh stop  [N=3] [BASEPORT=7000] [REPLICAS=0]   # SHUTDOWN NOSAVE each node
# Node i listens on BASEPORT+i (bus: +10000), works in /tmp/redis-lite-cluster/PORT
# (nodes.conf, log). REDIS_LITE_BIN picks the binary (default target/release/redis-lite),
# NODE_TIMEOUT the cluster-node-timeout (default 5000 ms: a killed master's replica
# takes over after about that plus a second).
set -euo pipefail
cmd=${1:-start}
masters=${2:-3}
base=${3:-7000}
replicas=${4:-0}
n=$((masters * (1 + replicas)))
timeout=${NODE_TIMEOUT:-5000}
bin=$(realpath "${REDIS_LITE_BIN:-$(dirname "$0")/../target/release/redis-lite}")
root=/tmp/redis-lite-cluster
case $cmd in
start)
    addrs=()
    for ((i = 0; i < n; i++)); do
        port=$((base + i))
        mkdir -p "$root/$port"
        (cd "$root/$port" && "$bin" --port "$port" --cluster-enabled yes --save '' \
            --cluster-node-timeout "$timeout" --daemonize yes --logfile log --pidfile pid)
        addrs+=("127.0.0.1:$port")
    done
    for ((i = 0; i < n; i++)); do
        until redis-cli -p $((base + i)) ping >/dev/null 2>&1; do sleep 0.1; done
    done
    redis-cli --cluster create "${addrs[@]}" --cluster-replicas "$replicas" --cluster-yes
    ;;
stop)
    for ((i = 0; i < n; i++)); do
        redis-cli -p $((base + i)) shutdown nosave >/dev/null 2>&1 || true
    done
    rm -rf "$root"
    ;;
*)
    echo "usage: $0 start|stop [N] [BASEPORT] [REPLICAS]" >&2
    exit 2
    ;;
esac
