#!/usr/bin/env python3
"""Who waited for whom: a victim client sends GET every 1 ms while one blocker
command runs on another connection (experiments E1/E2 in shared/experiments.md).

Runs the same steps against redis-lite and a real redis-server, side by side:

    scripts/victim-probe.py --lite-port 6380 --redis-port 6379

Steps (each on a fresh set, so both servers do identical work):
  DEL of a 1M-member hashtable set, UNLINK of the same set,
  250k keys expiring at the same moment (the active expiry cycle),
  BGSAVE of DEBUG POPULATE's 1M keys (the fork() stall; latest_fork_usec),
and reports the blocker's own time and the victim's count / p50 / max during it.
Needs redis-py (`pip install redis`). Both servers must allow DEBUG (redis-lite
does from localhost; start redis-server with --enable-debug-command yes).
"""
import argparse
import statistics
import threading
import time

import redis


def victim(port, stop, samples):
    r = redis.Redis(port=port)
    r.set("hot", "x")
    while not stop.is_set():
        t0 = time.perf_counter()
        r.get("hot")
        samples.append((t0, (time.perf_counter() - t0) * 1000.0))
        time.sleep(0.001)


def build_set(r, key, n):
    pipe = r.pipeline(transaction=False)
    for start in range(0, n, 1000):
        pipe.sadd(key, *[f"member:{i}" for i in range(start, min(start + 1000, n))])
        if start % 100000 == 0:
            pipe.execute()
    pipe.execute()


def measure(port, blocker, settle=0.3, window=None):
    """Run blocker() while a victim GETs every 1 ms; return stats."""
    stop, samples = threading.Event(), []
    t = threading.Thread(target=victim, args=(port, stop, samples))
    t.start()
    time.sleep(settle)
    start = time.perf_counter()
    blocker()
    took = (time.perf_counter() - start) * 1000.0
    if window:
        time.sleep(window)
    end = time.perf_counter()
    time.sleep(0.05)
    stop.set()
    t.join()
    during = [ms for (t0, ms) in samples if start - 0.002 <= t0 <= end]
    return {
        "blocker_ms": took,
        "count": len(during),
        "p50": statistics.median(during) if during else 0.0,
        "max": max(during) if during else 0.0,
    }


def run(port, n_set, n_expire):
    r = redis.Redis(port=port)
    r.flushall()
    r.config_set("lazyfree-lazy-user-del", "no")
    results = {}
    build_set(r, "big:set", n_set)
    results["DEL 1M set"] = measure(port, lambda: r.delete("big:set"))
    build_set(r, "big:set", n_set)
    results["UNLINK 1M set"] = measure(port, lambda: r.unlink("big:set"))
    # n_expire keys with the same deadline, then wait for the active cycle.
    deadline_ms = int(time.time() * 1000) + 2000
    pipe = r.pipeline(transaction=False)
    for i in range(n_expire):
        pipe.set(f"exp:{i}", "v", pxat=deadline_ms)
        if i % 10000 == 9999:
            pipe.execute()
    pipe.execute()
    wait = max(0.0, deadline_ms / 1000.0 - time.time())
    results[f"{n_expire // 1000}k keys expiring"] = measure(
        port, lambda: time.sleep(wait), window=3.0
    )
    # BGSAVE: fork() copies the parent's page tables while every client
    # waits; then the child writes and the parent serves again.
    r.flushall()
    r.execute_command("DEBUG", "POPULATE", n_set)

    def bgsave():
        r.bgsave()
        while r.info("persistence")["rdb_bgsave_in_progress"]:
            time.sleep(0.005)

    step = f"BGSAVE {n_set // 1000}k keys"
    results[step] = measure(port, bgsave)
    results[step]["fork_usec"] = r.info("stats")["latest_fork_usec"]
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lite-port", type=int, required=True)
    ap.add_argument("--redis-port", type=int, required=True)
    ap.add_argument("--set-size", type=int, default=1_000_000)
    ap.add_argument("--expire-keys", type=int, default=250_000)
    a = ap.parse_args()
    both = {}
    for name, port in (("redis-lite", a.lite_port), ("redis", a.redis_port)):
        info = redis.Redis(port=port).info("server")
        print(f"{name}: port {port} redis_version {info['redis_version']} hz {info['hz']}")
        both[name] = run(port, a.set_size, a.expire_keys)
    print()
    print(f"{'step':<22} {'server':<11} {'blocker ms':>11} {'victims':>8} {'p50 ms':>8} {'max ms':>8}")
    for step in both["redis-lite"]:
        for name in both:
            s = both[name][step]
            print(f"{step:<22} {name:<11} {s['blocker_ms']:>11.1f} {s['count']:>8} {s['p50']:>8.2f} {s['max']:>8.1f}")
    for name in both:
        d, u = both[name]["DEL 1M set"], both[name]["UNLINK 1M set"]
        print(f"{name}: victim max DEL / UNLINK = {d['max'] / max(u['max'], 0.001):.1f}x")
    for name in both:
        b = [v for k, v in both[name].items() if k.startswith("BGSAVE")][0]
        print(f"{name}: BGSAVE latest_fork_usec {b['fork_usec']}, victim max {b['max']:.1f} ms")


if __name__ == "__main__":
    main()
