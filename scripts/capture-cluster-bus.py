#!/usr/bin/env python3
"""Capture real Redis 7.0.15 cluster bus packets (and nodes.conf files) as
test fixtures for the `cluster` crate.

    python3 scripts/capture-cluster-bus.py [OUT_DIR]     # default: cluster/testdata

What it does, all on 127.0.0.1 and free ports, in a temporary directory:

1. Starts a small relay per node: node X listens for the bus on its real
   `cluster-port` Q, but announces `cluster-announce-bus-port` R, where the
   relay listens and forwards to Q. Every bus connection therefore runs
   through a relay, which copies the bytes through unchanged and cuts them
   into packets by their `totlen` field. (No tcpdump needed.)
2. Starts four redis-servers (cluster-enabled, cluster-node-timeout 1000):
   a, b, c masters and d, which becomes a's replica. a, b and d announce a
   hostname (node-a.test, ...), c does not, so there are packets with and
   without the hostname extension.
3. Drives the cluster through the events that produce each message type:
   `redis-cli --cluster create` (MEET, PING, PONG), Redis's example module
   add-node --cluster-slave,
   PUBLISH (PUBLISH) and SPUBLISH (PUBLISHSHARD to the replica), CLUSTER
   FAILOVER on d (MFSTART, a PING flagged PAUSED, FAILOVER_AUTH_REQUEST with
   FORCEACK, FAILOVER_AUTH_ACK), a stale slot claim (UPDATE), and SIGSTOP of
   c for a few seconds (gossip with PFAIL, FAIL), then SIGCONT. Last, when a
   C compiler and the Redis source are at hand, a separate two-node cluster
   e+f loads Redis's example module hellocluster.c (MODULE).
4. Writes, into OUT_DIR:
   bus/NAME.bin     one packet each, exactly as it crossed the wire
   bus/manifest.tsv file, type, sender, to, note (what the test may assert)
   bus/nodes.tsv    label, node ID, client port, announced bus port, hostname
   nodes-conf/      each node's nodes.conf and CLUSTER NODES at the end
   keyslot.tsv      hex key, CLUSTER KEYSLOT of it
   and removes the temporary directory and every process it started.

The node IDs, ports and timestamps differ on every run, so the tests read
them from nodes.tsv and manifest.tsv instead of hard-coding them.
"""

import os
import random
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

TYPE_NAMES = {
    0: "ping", 1: "pong", 2: "meet", 3: "fail", 4: "publish", 5: "auth-req",
    6: "auth-ack", 7: "update", 8: "mfstart", 9: "module", 10: "publishshard",
}
MIN_LEN = 2256
FLAG0_PAUSED = 1
FLAG0_FORCEACK = 2
NODE_PFAIL = 4
NODE_SLAVE = 2


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------- RESP client

def resp(port, *args, timeout=5.0):
    """Send one command, return the decoded reply (bytes/int/list/Exception)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        s.sendall(out)
        f = s.makefile("rb")
        return read_reply(f)


def read_reply(f):
    line = f.readline()
    if not line:
        raise ConnectionError("closed")
    kind, rest = line[:1], line[1:-2]
    if kind == b"+":
        return rest
    if kind == b"-":
        return RuntimeError(rest.decode())
    if kind == b":":
        return int(rest)
    if kind == b"$":
        n = int(rest)
        if n < 0:
            return None
        data = f.read(n + 2)[:-2]
        return data
    if kind == b"*":
        n = int(rest)
        return None if n < 0 else [read_reply(f) for _ in range(n)]
    raise ValueError("bad reply %r" % line)


def wait_for(what, cond, timeout=60.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if cond():
                return
        except (OSError, ConnectionError):
            pass
        time.sleep(0.1)
    raise TimeoutError("timed out waiting for " + what)


# ---------------------------------------------------------------- the relay

class Capture:
    """All packets seen by all relays, in arrival order."""

    def __init__(self):
        self.lock = threading.Lock()
        self.packets = []  # (seq, relay_label, direction, bytes)

    def add(self, label, direction, packet):
        with self.lock:
            self.packets.append((len(self.packets), label, direction, packet))


class Relay(threading.Thread):
    """Listens on `listen_port`, forwards each connection to `target_port`."""

    def __init__(self, label, listen_port, target_port, capture):
        super().__init__(daemon=True)
        self.label = label
        self.target_port = target_port
        self.capture = capture
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", listen_port))
        self.sock.listen(64)
        self.stopping = False

    def run(self):
        while not self.stopping:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:
                client.close()
                continue
            # "to": packets sent to the relay's node; "from": its answers.
            for src, dst, direction in ((client, upstream, "to"), (upstream, client, "from")):
                threading.Thread(target=self.pump, args=(src, dst, direction), daemon=True).start()

    def pump(self, src, dst, direction):
        buf = b""
        framing = True
        while True:
            try:
                data = src.recv(65536)
            except OSError:
                data = b""
            if not data:
                for s in (src, dst):
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                return
            try:
                dst.sendall(data)
            except OSError:
                return
            if not framing:
                continue
            buf += data
            while len(buf) >= 8:
                if buf[:4] != b"RCmb":
                    framing = False  # not a bus stream: stop cutting
                    break
                totlen = struct.unpack(">I", buf[4:8])[0]
                if totlen < MIN_LEN or len(buf) < totlen:
                    break
                self.capture.add(self.label, direction, buf[:totlen])
                buf = buf[totlen:]

    def stop(self):
        self.stopping = True
        self.sock.close()


# ---------------------------------------------------------------- the nodes

def build_hellocluster(workdir):
    """Redis's example module hellocluster.c (it sends MODULE messages), built
    from the Redis source tree ($REDIS_SRC, default /work/redis-src/redis-7.0.15);
    None when the source or a C compiler is missing."""
    src = os.environ.get("REDIS_SRC", "/work/redis-src/redis-7.0.15")
    module_c = os.path.join(src, "src", "modules", "hellocluster.c")
    cc = shutil.which("cc") or shutil.which("gcc")
    if not os.path.exists(module_c) or cc is None:
        print("note: no %s or no C compiler: no MODULE fixture" % module_c)
        return None
    so = os.path.join(workdir, "hellocluster.so")
    subprocess.run([cc, "-I" + os.path.join(src, "src"), "-std=c99", "-O2", "-fPIC", "-shared",
                    module_c, "-o", so], check=True)
    return so


class Node:
    def __init__(self, label, workdir, capture, hostname, module=None):
        self.label = label
        self.port = free_port()
        self.bus_port = free_port()       # where redis-server listens
        self.announced_bus = free_port()  # where the relay listens
        self.hostname = hostname
        self.dir = os.path.join(workdir, label)
        os.makedirs(self.dir)
        self.relay = Relay(label, self.announced_bus, self.bus_port, capture)
        self.relay.start()
        args = [
            "redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
            "--dir", self.dir, "--save", "", "--appendonly", "no",
            "--logfile", os.path.join(self.dir, "redis.log"),
            "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
            "--cluster-node-timeout", "1000",
            "--cluster-port", str(self.bus_port),
            "--cluster-announce-bus-port", str(self.announced_bus),
        ]
        if hostname:
            args += ["--cluster-announce-hostname", hostname]
        if module:
            args += ["--loadmodule", module]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(label + " to start", lambda: resp(self.port, "PING") == b"PONG")
        self.name = resp(self.port, "CLUSTER", "MYID").decode()

    def cmd(self, *args):
        return resp(self.port, *args)

    def info_field(self, field):
        for line in self.cmd("CLUSTER", "INFO").decode().splitlines():
            if line.startswith(field + ":"):
                return line.split(":", 1)[1]
        return None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.relay.stop()


# ---------------------------------------------------------------- scenario

def header(packet):
    """The fields the selection below looks at."""
    (totlen, ver, port, mtype, count) = struct.unpack(">IHHHH", packet[4:16])
    sender = packet[40:80].decode("latin-1")
    slaveof = packet[2128:2168]
    extensions = struct.unpack(">H", packet[2214:2216])[0]
    cport, flags = struct.unpack(">HH", packet[2248:2252])
    mflags0 = packet[2253]
    return dict(type=mtype, count=count, sender=sender, port=port, cport=cport, flags=flags,
                extensions=extensions, mflags0=mflags0, is_replica=slaveof != b"\0" * 40,
                has_slots=any(packet[80:2128]))


def gossip_flags(packet, count):
    return [struct.unpack(">H", packet[MIN_LEN + 104 * i + 98:MIN_LEN + 104 * i + 100])[0]
            for i in range(count)]


def main():
    out_dir = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                              os.path.join(os.path.dirname(__file__), "..", "cluster", "testdata"))
    if shutil.which("redis-server") is None or shutil.which("redis-cli") is None:
        sys.exit("needs redis-server and redis-cli (Redis 7.0.15)")
    version = subprocess.run(["redis-server", "--version"], capture_output=True, text=True).stdout
    print(version.strip())

    workdir = tempfile.mkdtemp(prefix="capture-cluster-bus-")
    capture = Capture()
    nodes = []
    try:
        a = Node("a", workdir, capture, "node-a.test")
        b = Node("b", workdir, capture, "node-b.test")
        c = Node("c", workdir, capture, None)
        d = Node("d", workdir, capture, "node-d.test")
        nodes = [a, b, c, d]
        by_name = {n.name: n for n in nodes}

        # 1. Create the cluster: MEETs, then PINGs and PONGs with gossip.
        subprocess.run(["redis-cli", "--cluster", "create"] +
                       ["127.0.0.1:%d" % n.port for n in (a, b, c)] + ["--cluster-yes"],
                       check=True, stdout=subprocess.DEVNULL)
        for n in (a, b, c):
            wait_for("cluster ok on " + n.label, lambda n=n: n.info_field("cluster_state") == "ok")

        # 2. d joins as a's replica.
        subprocess.run(["redis-cli", "--cluster", "add-node", "127.0.0.1:%d" % d.port,
                        "127.0.0.1:%d" % a.port, "--cluster-slave", "--cluster-master-id", a.name],
                       check=True, stdout=subprocess.DEVNULL)
        wait_for("d replicating a", lambda: b"master_link_status:up" in d.cmd("INFO", "replication"))
        wait_for("everyone sees d as a replica",
                 lambda: all(b"slave " + a.name.encode() in n.cmd("CLUSTER", "NODES") for n in nodes))
        time.sleep(1.5)  # a few rounds of gossip that include d

        # 3. PUBLISH goes to every node; SPUBLISH to the shard (a's replica d).
        a.cmd("PUBLISH", "news", "hello from a")
        shard_channel = next(ch for ch in ("shard-%d" % i for i in range(1000))
                             if a.cmd("CLUSTER", "KEYSLOT", ch) <= 5460)
        a.cmd("SPUBLISH", shard_channel, "hello shard")
        time.sleep(0.5)

        # 4. Manual failover: d takes over from a (MFSTART, PAUSED, AUTH).
        reply = d.cmd("CLUSTER", "FAILOVER")
        assert reply == b"OK", reply
        wait_for("d promoted", lambda: b"role:master" in d.cmd("INFO", "replication"))
        wait_for("a follows d", lambda: b"role:slave" in a.cmd("INFO", "replication"))
        time.sleep(1.0)

        # 5. A stale slot claim: b takes one of c's slots without a newer
        # epoch, so the nodes that know better answer with UPDATE.
        c_slot = 10923
        for _ in range(20):
            b.cmd("CLUSTER", "SETSLOT", c_slot, "NODE", b.name)
            time.sleep(0.6)
            if any(header(p[3])["type"] == 7 for p in capture.packets):
                break
        wait_for("c owns its slot again everywhere", lambda: all(
            (c.name + " ").encode() in line and b"10923-16383" in line
            for n in nodes for line in n.cmd("CLUSTER", "NODES").split(b"\n")
            if line.startswith(c.name.encode())), timeout=60)

        # 6. c stops answering: PFAIL in gossip, then FAIL; then it is back.
        c.proc.send_signal(signal.SIGSTOP)
        wait_for("c marked fail", lambda: all(
            b" master,fail " in line or b"master,fail\n" in line
            for n in (a, b, d) for line in n.cmd("CLUSTER", "NODES").split(b"\n")
            if line.startswith(c.name.encode())), timeout=60)
        time.sleep(0.5)
        c.proc.send_signal(signal.SIGCONT)
        wait_for("c back", lambda: all(n.info_field("cluster_state") == "ok" for n in nodes),
                 timeout=60)

        # 7. A slot in migration, so nodes.conf shows [slot->-id] / [slot-<-id].
        assert b.cmd("CLUSTER", "SETSLOT", 6000, "MIGRATING", c.name) == b"OK"
        assert c.cmd("CLUSTER", "SETSLOT", 6000, "IMPORTING", b.name) == b"OK"
        time.sleep(0.5)

        # nodes.conf and CLUSTER NODES of every node.
        conf_dir = os.path.join(out_dir, "nodes-conf")
        os.makedirs(conf_dir, exist_ok=True)
        for n in nodes:
            n.cmd("CLUSTER", "SAVECONFIG")
            shutil.copy(os.path.join(n.dir, "nodes.conf"), os.path.join(conf_dir, "nodes-%s.conf" % n.label))
            with open(os.path.join(conf_dir, "cluster-nodes-%s.txt" % n.label), "wb") as f:
                f.write(n.cmd("CLUSTER", "NODES"))

        # CLUSTER KEYSLOT of tricky keys (hash tags) and random binary keys.
        keys = [b"", b"foo", b"bar", b"{", b"}", b"{}", b"}{", b"{{}}", b"{a}", b"{{a}}",
                b"foo{}{bar}", b"foo{{bar}}zap", b"foo{bar}{zap}", b"a}b{c}", b"{user1000}.following",
                b"{user1000}.followers", b"user1000", b"foo{bar", b"foo}bar{", b"{}x", b"x{}",
                b"\x00{\x00}\x00", b"123456789", b"somekey", b"{\xff\xfe}tail", b"\xe2\x82\xac"]
        rng = random.Random(15)
        for _ in range(200):
            alphabet = b"{}ab\x00\xff"
            keys.append(bytes(rng.choice(alphabet) for _ in range(rng.randrange(0, 12))))
        with open(os.path.join(out_dir, "keyslot.tsv"), "w") as f:
            f.write("# key (hex)\tCLUSTER KEYSLOT from redis-server 7.0.15\n")
            for k in keys:
                f.write("%s\t%d\n" % (k.hex() or "-", a.cmd("CLUSTER", "KEYSLOT", k)))
        # 8. MODULE messages, in a separate two-node cluster e+f that loads
        # Redis's example module hellocluster.c (it turns slot updates off
        # with NO_REDIRECTION, so it must stay out of the cluster above):
        # PINGALL on e sends "Hey", f's module answers "Ohi!".
        module = build_hellocluster(workdir)
        if module:
            e = Node("e", workdir, capture, None, module)
            f = Node("f", workdir, capture, None, module)
            nodes += [e, f]
            by_name.update({e.name: e, f.name: f})
            assert e.cmd("CLUSTER", "MEET", "127.0.0.1", f.port, f.announced_bus) == b"OK"
            wait_for("e and f met", lambda: all(
                other.name.encode() in n.cmd("CLUSTER", "NODES")
                and b"handshake" not in n.cmd("CLUSTER", "NODES")
                for n, other in ((e, f), (f, e))))
            e.cmd("HELLOCLUSTER.PINGALL")
            wait_for("f's module answer", lambda: any(
                header(p[3])["type"] == 9 and p[3].endswith(b"Ohi!") for p in capture.packets))
    except BaseException:
        for n in nodes:
            print("--- %s (%s) log tail ---" % (n.label, n.name if hasattr(n, "name") else "?"))
            with open(os.path.join(n.dir, "redis.log"), errors="replace") as f:
                print("".join(f.readlines()[-15:]))
        raise
    finally:
        for n in nodes:
            n.stop()
        shutil.rmtree(workdir, ignore_errors=True)

    select_packets(capture.packets, nodes, by_name, out_dir, c_slot, shard_channel)


def select_packets(packets, nodes, by_name, out_dir, c_slot, shard_channel):
    final_dir = os.path.join(out_dir, "bus")
    bus_dir = final_dir + ".new"  # swapped in only once every pick succeeded
    if os.path.isdir(bus_dir):
        shutil.rmtree(bus_dir)
    os.makedirs(bus_dir)
    a, b, c, d = nodes[:4]
    chosen = []  # (file, packet, note)

    def pick(file, note, pred, best=None, optional=False):
        cands = [p for p in packets if pred(header(p[3]), p)]
        if not cands and optional:
            print("note: no %s this run (%s); the tests skip it" % (file, note))
            return
        if not cands:
            raise SystemExit("no packet for %s: %s" % (file, note))
        p = max(cands, key=best) if best else cands[0]
        chosen.append((file, p, note))

    hdr = header
    pick("meet.bin", "MEET sent by redis-cli --cluster create's CLUSTER MEET",
         lambda h, p: h["type"] == 2, best=lambda p: hdr(p[3])["count"])
    pick("ping-hostname-gossip.bin", "PING from a master with gossip and the hostname extension",
         lambda h, p: h["type"] == 0 and h["extensions"] == 1 and h["count"] >= 2
         and not h["is_replica"] and h["has_slots"])
    pick("pong-no-extension.bin", "PONG from c, which announces no hostname",
         lambda h, p: h["type"] == 1 and h["sender"] == c.name and h["count"] >= 2)
    pick("pong-hostname.bin", "PONG with the hostname extension",
         lambda h, p: h["type"] == 1 and h["extensions"] == 1 and h["count"] >= 2)
    pick("ping-replica.bin", "PING from d while a's replica (slaveof set, master's slots)",
         lambda h, p: h["type"] == 0 and h["sender"] == d.name and h["is_replica"])
    pick("ping-gossip-pfail.bin", "PING whose gossip reports c as PFAIL",
         lambda h, p: h["type"] in (0, 1) and any(
             f & NODE_PFAIL for f in gossip_flags(p[3], h["count"])))
    pick("fail.bin", "FAIL about c", lambda h, p: h["type"] == 3)
    update_about = lambda p: p[MIN_LEN + 8:MIN_LEN + 48].decode("latin-1")
    pick("update.bin", "UPDATE about c's slots, sent to b after its stale claim",
         lambda h, p: h["type"] == 7 and update_about(p[3]) == c.name)
    pick("update-after-failover.bin", "UPDATE about d's slots, sent to a, which still claimed them",
         lambda h, p: h["type"] == 7 and update_about(p[3]) == d.name, optional=True)
    pick("publish.bin", "PUBLISH news 'hello from a'", lambda h, p: h["type"] == 4)
    pick("publishshard.bin", "SPUBLISH %s 'hello shard' from a to its replica" % shard_channel,
         lambda h, p: h["type"] == 10)
    pick("mfstart.bin", "MFSTART from d to a (CLUSTER FAILOVER)", lambda h, p: h["type"] == 8)
    pick("ping-paused.bin", "PING from a with mflags PAUSED during the manual failover",
         lambda h, p: h["type"] in (0, 1) and h["sender"] == a.name and h["mflags0"] & FLAG0_PAUSED)
    pick("auth-request.bin", "FAILOVER_AUTH_REQUEST from d with FORCEACK",
         lambda h, p: h["type"] == 5 and h["mflags0"] & FLAG0_FORCEACK)
    pick("auth-ack.bin", "FAILOVER_AUTH_ACK to d", lambda h, p: h["type"] == 6)
    pick("module-ping.bin", "MODULE from hellocluster.c's PINGALL on a: type 1, 'Hey'",
         lambda h, p: h["type"] == 9 and p[3][MIN_LEN + 13:] == b"Hey", optional=True)
    pick("module-pong.bin", "MODULE answer from hellocluster.c: type 2, 'Ohi!'",
         lambda h, p: h["type"] == 9 and p[3][MIN_LEN + 13:] == b"Ohi!", optional=True)

    with open(os.path.join(bus_dir, "nodes.tsv"), "w") as f:
        f.write("# label\tnode ID\tclient port\tannounced bus port\thostname\n")
        for n in nodes:
            f.write("%s\t%s\t%d\t%d\t%s\n" % (n.label, n.name, n.port, n.announced_bus, n.hostname or "-"))
    with open(os.path.join(bus_dir, "manifest.tsv"), "w") as f:
        f.write("# file\ttype\tsender\tthrough relay of\tdirection\tnote\n")
        f.write("# c_slot=%d shard_channel=%s\n" % (c_slot, shard_channel))
        for file, (seq, relay, direction, packet), note in chosen:
            h = header(packet)
            with open(os.path.join(bus_dir, file), "wb") as pf:
                pf.write(packet)
            sender = by_name.get(h["sender"])
            f.write("%s\t%s\t%s\t%s\t%s\t%s\n" % (file, TYPE_NAMES.get(h["type"], "unknown"),
                                              sender.label if sender else "?", relay, direction, note))
    if os.path.isdir(final_dir):
        shutil.rmtree(final_dir)
    os.rename(bus_dir, final_dir)
    bus_dir = final_dir
    counts = {}
    for p in packets:
        t = TYPE_NAMES.get(header(p[3])["type"], "unknown")
        counts[t] = counts.get(t, 0) + 1
    print("captured %d packets: %s" % (len(packets), counts))
    print("wrote %d fixtures to %s" % (len(chosen), bus_dir))


if __name__ == "__main__":
    main()
