#!/usr/bin/env python3
"""Persistence speed, redis-lite next to redis-server 7.0.15 (not a test).

    cargo build --release && python3 scripts/bench-rdb-vs-redis.py [RUNS]

For each dataset (DEBUG POPULATE 1000000; one 1M-member set built by an
EVAL loop) and each server, alternating runs (default 3), it measures:
  * fork:  latest_fork_usec of a BGSAVE (the stall every client sees);
  * bgsave: wall time from BGSAVE's reply to rdb_bgsave_in_progress:0;
  * save:  SAVE's round trip (the encoder alone, in the main process);
  * load:  "DB loaded from disk: X seconds" from the log of a restart;
and prints medians and the ratio redis-lite / redis-server (lower is better).
Servers run on 127.0.0.1 in temporary directories and are stopped at the end.
"""
import os, re, shutil, socket, statistics, subprocess, sys, tempfile, time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LITE = os.path.join(TOP, "target/release/redis-lite")
REAL = shutil.which("redis-server") or "/usr/bin/redis-server"
RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 3


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Conn:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.f = self.s.makefile("rb")

    def cmd(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.s.sendall(out)
        return self.read()

    def read(self):
        line = self.f.readline()
        t, rest = line[:1], line[1:-2]
        if t in (b"+", b"-"):
            return rest.decode()
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            return None if n < 0 else self.f.read(n + 2)[:-2].decode(errors="replace")
        if t == b"*":
            return [self.read() for _ in range(int(rest))]
        raise RuntimeError(line)

    def info(self, name):
        for l in self.cmd("INFO", "all").splitlines():
            if l.startswith(name + ":"):
                return l.split(":", 1)[1]
        raise KeyError(name)


def start(binary, d):
    port = free_port()
    log = open(os.path.join(d, "log"), "ab")
    p = subprocess.Popen([binary, "--port", str(port), "--save", "", "--appendonly", "no",
                          "--enable-debug-command", "yes", "--bind", "127.0.0.1", "--dir", d],
                         stdout=log, stderr=log, cwd=d)
    for _ in range(60000):
        try:
            c = Conn(port)
            if c.cmd("PING") == "PONG":
                return p, c
        except (OSError, RuntimeError):
            time.sleep(0.005)
    raise RuntimeError("server did not start")


def stop(p, c):
    try:
        c.cmd("SHUTDOWN", "NOSAVE")
    except Exception:
        pass
    p.wait(timeout=60)


def fill(c, dataset):
    if dataset == "populate-1M":
        c.cmd("DEBUG", "POPULATE", "1000000")
    else:
        c.cmd("EVAL", "for i=1,1000000 do redis.call('sadd','s','member:'..i) end", "0")


def one_run(binary, dataset):
    d = tempfile.mkdtemp(prefix="bench-rdb-")
    try:
        p, c = start(binary, d)
        fill(c, dataset)
        t = time.time()
        assert c.cmd("SAVE") == "OK"
        save = time.time() - t
        t = time.time()
        assert c.cmd("BGSAVE").startswith("Background saving started")
        while c.info("rdb_bgsave_in_progress") != "0":
            time.sleep(0.002)
        bgsave = time.time() - t
        fork = int(c.info("latest_fork_usec"))
        assert c.info("rdb_last_bgsave_status") == "ok"
        stop(p, c)
        open(os.path.join(d, "log"), "w").close()
        p, c = start(binary, d)
        text = open(os.path.join(d, "log")).read()
        load = float(re.search(r"DB loaded from disk: ([0-9.]+) seconds", text).group(1))
        size = os.path.getsize(os.path.join(d, "dump.rdb"))
        stop(p, c)
        return {"fork_us": fork, "bgsave_s": bgsave, "save_s": save, "load_s": load, "bytes": size}
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main():
    for dataset in ["populate-1M", "set-1M"]:
        res = {"redis-lite": [], "redis-server": []}
        for _ in range(RUNS):
            res["redis-lite"].append(one_run(LITE, dataset))
            res["redis-server"].append(one_run(REAL, dataset))
        print("\n== %s (%d runs each, medians) ==" % (dataset, RUNS))
        print("%-10s %14s %14s %8s" % ("metric", "redis-lite", "redis-server", "ratio"))
        for m in ["fork_us", "bgsave_s", "save_s", "load_s", "bytes"]:
            a = statistics.median(r[m] for r in res["redis-lite"])
            b = statistics.median(r[m] for r in res["redis-server"])
            print("%-10s %14.4g %14.4g %8.2f" % (m, a, b, a / b if b else float("nan")))


if __name__ == "__main__":
    main()
