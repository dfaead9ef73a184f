#!/usr/bin/env python3
"""A huge pending reply and the clients around it (issue 18), redis-lite vs
redis-server, side by side.

One client ("flooder") sends N pipelined `GET big` of a V-byte value and never
reads, so the server has to keep about N*V bytes of replies for it. Another
client ("victim") sends PING every 10 ms and times each answer. The longest
answer is the stall the victim saw while the server copied the replies into
the flooder's output buffer. Also printed: the flooder's CLIENT LIST oll /
omem / tot-mem once every GET ran, and the server's peak RSS.

    scripts/bench-big-reply.py --lite target/release/redis-lite \\
        --redis /usr/bin/redis-server --runs 3

Runs alternate (lite, redis, lite, ...), each on a freshly started server on
its own port; the table shows each run and the median. Only the standard
library is needed.
"""
import argparse
import os
import socket
import statistics
import subprocess
import tempfile
import threading
import time


def start_server(binary, port, workdir):
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--save", "", "--appendonly", "no",
         "--daemonize", "no", "--dir", workdir, "--logfile", ""],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=1)
            s.sendall(b"PING\r\n")
            if s.recv(64).startswith(b"+PONG"):
                s.settimeout(None)
                return proc, s
            s.close()
        except OSError:
            pass
        time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"{binary} did not start on port {port}")


def command(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def read_reply(sock):
    """One reply of a simple / bulk type, enough for PING, SET, CLIENT LIST, INFO."""
    buf = b""
    while b"\r\n" not in buf:
        buf += sock.recv(65536)
    head, rest = buf.split(b"\r\n", 1)
    if head[:1] != b"$":
        return head
    n = int(head[1:])
    while len(rest) < n + 2:
        rest += sock.recv(65536)
    return rest[:n]


def call(sock, *args):
    sock.sendall(command(args))
    return read_reply(sock)


def victim(port, stop, samples):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    while not stop.is_set():
        t0 = time.perf_counter()
        s.sendall(b"PING\r\n")
        got = b""
        while not got.endswith(b"\r\n"):
            got += s.recv(64)
        samples.append(time.perf_counter() - t0)
        time.sleep(0.010)
    s.close()


def rss_peak_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def one_run(binary, port, n, size):
    with tempfile.TemporaryDirectory() as workdir:
        proc, ctl = start_server(binary, port, workdir)
        try:
            call(ctl, "SET", "big", b"x" * size)
            stop, samples = threading.Event(), []
            t = threading.Thread(target=victim, args=(port, stop, samples))
            t.start()
            time.sleep(0.3)
            flood = socket.create_connection(("127.0.0.1", port))
            # A small receive window: the server keeps nearly everything.
            flood.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            call(flood, "CLIENT", "SETNAME", "flooder")
            flood.sendall(command(["GET", "big"]) * n)
            # Every GET has run once the server counted them all (the query
            # arrives in 16 KB reads, so an empty query buffer alone says
            # nothing); the victim keeps pinging meanwhile.
            def processed():
                info = call(ctl, "INFO", "commandstats").decode()
                for l in info.splitlines():
                    if l.startswith("cmdstat_get:"):
                        return int(l.split("calls=")[1].split(",")[0])
                return 0
            deadline = time.time() + 300
            while processed() < n and time.time() < deadline:
                time.sleep(0.2)
            line = [l for l in call(ctl, "CLIENT", "LIST").decode().splitlines()
                    if "name=flooder" in l][0]
            fields = dict(kv.split("=", 1) for kv in line.split(" "))
            time.sleep(0.5)
            stop.set()
            t.join()
            info = call(ctl, "INFO", "memory").decode()
            used = [l for l in info.splitlines() if l.startswith("used_memory:")][0]
            flood.close()
            return {
                "stall_ms": max(samples) * 1000.0,
                "pings": len(samples),
                "oll": int(fields.get("oll", 0)),
                "omem": int(fields.get("omem", 0)),
                "tot_mem": int(fields.get("tot-mem", 0)),
                "used_memory": int(used.split(":")[1]),
                "rss_peak_mb": rss_peak_kb(proc.pid) / 1024.0,
            }
        finally:
            ctl.close()
            proc.kill()
            proc.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lite", default="target/release/redis-lite")
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--gets", type=int, default=2000)
    ap.add_argument("--size", type=int, default=1 << 20)
    ap.add_argument("--port", type=int, default=25100)
    a = ap.parse_args()
    results = {"lite": [], "redis": []}
    for i in range(a.runs):
        for name, binary, port in (("lite", a.lite, a.port), ("redis", a.redis, a.port + 1)):
            r = one_run(os.path.abspath(binary), port, a.gets, a.size)
            results[name].append(r)
            print(f"run {i + 1} {name:5}: stall {r['stall_ms']:7.1f} ms  pings {r['pings']:4}  "
                  f"oll {r['oll']:6}  omem {r['omem'] / 2**20:8.1f} MB  "
                  f"tot-mem {r['tot_mem'] / 2**20:8.1f} MB  "
                  f"used_memory {r['used_memory'] / 2**20:8.1f} MB  "
                  f"peak RSS {r['rss_peak_mb']:8.1f} MB", flush=True)
    print(f"\n{a.gets} pipelined GET of a {a.size}-byte value, never read; "
          f"median of {a.runs} alternating runs")
    print(f"{'':24}{'redis-lite':>12}{'redis':>12}{'ratio':>8}")
    for key, label, scale in (("stall_ms", "longest PING (ms)", 1),
                              ("oll", "oll (blocks)", 1),
                              ("omem", "omem (MB)", 2**20),
                              ("rss_peak_mb", "peak RSS (MB)", 1)):
        lite = statistics.median(r[key] for r in results["lite"]) / scale
        real = statistics.median(r[key] for r in results["redis"]) / scale
        ratio = lite / real if real else float("nan")
        print(f"{label:24}{lite:12.1f}{real:12.1f}{ratio:8.2f}")


if __name__ == "__main__":
    main()
