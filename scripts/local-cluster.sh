#!/usr/bin/env bash
# A local Redis Cluster of redis-lite nodes for a workshop, in one line:
#   scripts/local-cluster.sh start [N=3] [BASEPORT=7000]   # N masters, then redis-cli --cluster create
#   scripts/local-cluster.sh stop  [N=3] [BASEPORT=7000]   # SHUTDOWN NOSAVE each node
# Node i listens on BASEPORT+i (bus: +10000), works in /tmp/redis-lite-cluster/PORT
# (nodes.conf, log). REDIS_LITE_BIN picks the binary (default target/release/redis-lite).
set -euo pipefail
cmd=${1:-start}
n=${2:-3}
base=${3:-7000}
bin=$(realpath "${REDIS_LITE_BIN:-$(dirname "$0")/../target/release/redis-lite}")
root=/tmp/redis-lite-cluster
case $cmd in
start)
    addrs=()
    for ((i = 0; i < n; i++)); do
        port=$((base + i))
        mkdir -p "$root/$port"
        (cd "$root/$port" && "$bin" --port "$port" --cluster-enabled yes --save '' \
            --cluster-node-timeout 5000 --daemonize yes --logfile log --pidfile pid)
        addrs+=("127.0.0.1:$port")
    done
    for ((i = 0; i < n; i++)); do
        until redis-cli -p $((base + i)) ping >/dev/null 2>&1; do sleep 0.1; done
    done
    redis-cli --cluster create "${addrs[@]}" --cluster-yes
    ;;
stop)
    for ((i = 0; i < n; i++)); do
        redis-cli -p $((base + i)) shutdown nosave >/dev/null 2>&1 || true
    done
    rm -rf "$root"
    ;;
*)
    echo "usage: $0 start|stop [N] [BASEPORT]" >&2
    exit 2
    ;;
esac
