#!/usr/bin/env python3
"""10,000 clients parked in BLPOP: what they cost the loop, side by side.

For redis-lite and redis-server (7.0.15), alternating, ROUNDS times each:
  1. connect N idle clients (time to connect them, each answered a PING);
  2. park them: each sends `BLPOP key:<i> 30` (time until CLIENT LIST /
     INFO shows N blocked clients);
  3. idle CPU: the server process's utime+stime over IDLE_SECONDS while the
     N clients stay blocked and nobody sends anything (percent of one core);
  4. probe: one more client sends PROBES sequential GETs; p50 / p99 latency.
Figures are the medians over the rounds.

Usage: scripts/bench-clients.py [--clients 10000] [--rounds 3]
       [--lite target/release/redis-lite] [--redis /usr/bin/redis-server]
The machine's load matters: run it on a quiet machine and compare the two
columns, not the absolute numbers.
"""
import argparse
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time

IDLE_SECONDS = 5
PROBES = 2000


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def start(binary, port, workdir):
    args = [binary, "--port", str(port), "--save", "", "--appendonly", "no",
            "--maxclients", "20000", "--bind", "127.0.0.1"]
    proc = subprocess.Popen(args, cwd=workdir, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.time() + 20
    while time.time() < deadline:
        try:
            c = socket.create_connection(("127.0.0.1", port), timeout=1)
            c.sendall(b"PING\r\n")
            if c.recv(64).startswith(b"+PONG"):
                c.close()
                return proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"{binary} did not start")


def cmd(sock, *args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    sock.sendall(out)


def read_line_reply(sock):
    """Read one simple reply (status/integer/bulk up to a few KB)."""
    buf = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed")
        buf += chunk
        if buf[:1] == b"$":
            head, _, rest = buf.partition(b"\r\n")
            n = int(head[1:])
            if n < 0 or len(rest) >= n + 2:
                return buf
        elif buf.endswith(b"\r\n"):
            return buf


def info_field(sock, section, name):
    cmd(sock, "INFO", section)
    data = read_line_reply(sock).decode()
    for line in data.splitlines():
        if line.startswith(name + ":"):
            return line.split(":", 1)[1].strip()
    return ""


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def one_round(binary, n):
    port = free_port()
    with tempfile.TemporaryDirectory() as wd:
        proc = start(binary, port, wd)
        try:
            t0 = time.time()
            conns = []
            for _ in range(n):
                conns.append(socket.create_connection(("127.0.0.1", port)))
            # Every client answered: a PING on each, pipelined in waves.
            for i in range(0, n, 1000):
                wave = conns[i:i + 1000]
                for c in wave:
                    c.sendall(b"PING\r\n")
                for c in wave:
                    read_line_reply(c)
            connect_s = time.time() - t0

            admin = socket.create_connection(("127.0.0.1", port))
            t0 = time.time()
            for i, c in enumerate(conns):
                cmd(c, "BLPOP", f"key:{i}", 30)
            while int(info_field(admin, "clients", "blocked_clients") or 0) < n:
                time.sleep(0.005)
            park_s = time.time() - t0

            hz = os.sysconf("SC_CLK_TCK")
            before = cpu_ticks(proc.pid)
            time.sleep(IDLE_SECONDS)
            idle_cpu = (cpu_ticks(proc.pid) - before) / hz / IDLE_SECONDS * 100

            probe = socket.create_connection(("127.0.0.1", port))
            probe.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            cmd(probe, "SET", "probe", "x" * 16)
            read_line_reply(probe)
            lat = []
            for _ in range(PROBES):
                a = time.perf_counter()
                cmd(probe, "GET", "probe")
                read_line_reply(probe)
                lat.append((time.perf_counter() - a) * 1e6)
            lat.sort()
            p50 = lat[len(lat) // 2]
            p99 = lat[int(len(lat) * 0.99)]
            for c in conns:
                c.close()
            return {"connect_s": connect_s, "park_s": park_s,
                    "idle_cpu_pct": idle_cpu, "get_p50_us": p50, "get_p99_us": p99}
        finally:
            proc.kill()
            proc.wait()


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--clients", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--lite", default=os.path.join(here, "..", "target", "release", "redis-lite"))
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    a = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = a.clients + 500
    if hard < want:
        raise SystemExit(f"RLIMIT_NOFILE hard limit {hard} < {want}: raise ulimit -n")
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    results = {"redis-lite": [], "redis-server": []}
    for r in range(a.rounds):
        for name, binary in (("redis-lite", a.lite), ("redis-server", a.redis)):
            res = one_round(binary, a.clients)
            results[name].append(res)
            print(f"round {r + 1} {name}: " +
                  " ".join(f"{k}={v:.2f}" for k, v in res.items()), flush=True)
    keys = ["connect_s", "park_s", "idle_cpu_pct", "get_p50_us", "get_p99_us"]
    print(f"\nmedians over {a.rounds} rounds, {a.clients} clients blocked in BLPOP:")
    print(f"{'':14}" + "".join(f"{k:>14}" for k in keys))
    med = {name: {k: statistics.median(x[k] for x in rs) for k in keys}
           for name, rs in results.items()}
    for name in results:
        print(f"{name:14}" + "".join(f"{med[name][k]:14.2f}" for k in keys))
    # redis-lite / redis-server: above 1 means redis-lite is slower.
    print(f"{'lite/redis':14}" + "".join(
        f"{med['redis-lite'][k] / med['redis-server'][k]:14.2f}"
        if med["redis-server"][k] else f"{'-':>14}" for k in keys))


if __name__ == "__main__":
    sys.exit(main())
