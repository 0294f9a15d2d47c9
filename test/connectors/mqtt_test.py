#!/usr/bin/env python3
"""MQTT sources and PUBLISH sinks against a real mosquitto broker on loopback.

Each case starts its own broker on a free port and its own engine in a
temporary directory, publishes with mosquitto_pub, subscribes with
mosquitto_sub, and checks the stored artifacts (xtrdb) and the counters the
engine reports (xqry -t). Usage: mqtt_test.py BUILD_DIR (MQTT_CASES=a,b: only those cases)
"""
import getpass
import json
from math import gcd
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
XRETRACTOR = os.path.join(BUILD, "tools", "xretractor")
XQRY = os.path.join(BUILD, "tools", "xqry")
XTRDB = os.path.join(BUILD, "tools", "xtrdb")
passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("PASS", name)
    else:
        failed += 1
        print("FAIL", name, detail)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Waits are for a state (a counter reached, a record stored), with generous
# deadlines: a busy machine is slow, not wrong.
def wait_for(pred, timeout, step=0.05):
    end = time.time() + timeout
    while time.time() < end:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return pred()


class Broker:
    def __init__(self, work, port=None, extra=""):
        self.port = port or free_port()
        self.work = work
        self.proc = None
        self.extra = extra  # more mosquitto.conf lines (TLS, passwords)
        self.start()

    def start(self):
        log = open(os.path.join(self.work, "broker.log"), "a")
        # mosquitto keeps at most 1000 QoS 1 messages queued per client by default and drops
        # the rest silently; a burst test needs room for all of them.
        conf = os.path.join(self.work, "mosquitto.conf")
        with open(conf, "w") as f:
            # Started as root, mosquitto would switch to its own user, who cannot read this private directory.
            f.write("user %s\nlistener %d 127.0.0.1\nmax_queued_messages 100000\n" % (getpass.getuser(), self.port))
            f.write(self.extra or "allow_anonymous true\n")
        self.proc = subprocess.Popen(["mosquitto", "-c", conf], stdout=log, stderr=log)

        def up():
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return True
            except OSError:
                return False

        if not wait_for(up, 10):
            raise RuntimeError("mosquitto did not start on port %d" % self.port)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def url(self, topic):
        return "mqtt://127.0.0.1:%d/%s" % (self.port, topic)

    def pub(self, topic, *messages, lines=None):
        base = ["mosquitto_pub", "-h", "127.0.0.1", "-p", str(self.port), "-t", topic, "-q", "1"]
        if lines is not None:
            subprocess.run(base + ["-l"], input="\n".join(lines) + "\n", text=True, check=True, timeout=60)
        for m in messages:
            subprocess.run(base + ["-m", m], check=True, timeout=10)


class Engine:
    def __init__(self, work, query, config=None, args=()):
        self.work = work
        self.env = dict(os.environ, TMPDIR=work)
        with open(os.path.join(work, "q.rql"), "w") as f:
            f.write(query)
        cmd = [XRETRACTOR, "q.rql", "-k", "-v"] + list(args)
        if config:
            with open(os.path.join(work, "engine.toml"), "w") as f:
                f.write(config)
            cmd += ["-g", "engine.toml"]
        self.err = open(os.path.join(work, "engine.err"), "w")
        self.out = open(os.path.join(work, "engine.out"), "w")
        self.proc = subprocess.Popen(cmd, cwd=work, env=self.env, stdout=self.out, stderr=self.err)
        lock = os.path.join(work, "xretractor_service.lock")
        if not wait_for(lambda: os.path.exists(lock) and open(lock).read().startswith("PID:"), 60):
            raise RuntimeError("engine did not start: " + open(os.path.join(work, "engine.err")).read())

    def detail(self, stream):
        r = subprocess.run([XQRY, "-t", stream], env=self.env, capture_output=True, text=True, timeout=10)
        out = {}
        for line in r.stdout.splitlines():
            m = re.match(r"\s+(\w+): (.*)$", line)
            if m:
                out.setdefault(m.group(1), m.group(2).strip().strip("'\""))
        return out

    def connected(self, stream, timeout=60):
        return wait_for(lambda: self.counter(stream, "connected") == 1, timeout)

    def counter(self, stream, key):
        v = self.detail(stream).get(key)
        return int(v) if v is not None and v.isdigit() else -1

    def records(self, stream):
        """The stored records of a computed stream: lists of values (None for NULL)."""
        n = self.count(stream)
        if n <= 0:
            return []
        r = subprocess.run([XTRDB, "-n"], cwd=self.work, input="open %s\nlist %d\nquit\n" % (stream, n),
                           capture_output=True, text=True, timeout=30)
        recs = []
        for line in r.stdout.splitlines():
            m = re.match(r"\{ (.*) \}$", line.strip())
            if m:
                recs.append([None if v.split(":", 1)[1] == "null" else v.split(":", 1)[1] for v in m.group(1).split(" ")])
        return recs

    def count(self, stream):
        v = self.detail(stream).get("count")
        if v is None:
            r = subprocess.run([XQRY, "-y"], env=self.env, capture_output=True, text=True, timeout=10)
            m = re.search(r"name: %s\n(?:\s+\w+: .*\n)*?\s+count: (\d+)" % re.escape(stream), r.stdout)
            return int(m.group(1)) if m else 0
        return int(v)

    def stderr(self):
        self.err.flush()
        return open(os.path.join(self.work, "engine.err")).read()

    def stop(self):
        if self.proc.poll() is None:
            subprocess.run([XQRY, "-k"], env=self.env, capture_output=True, timeout=10)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


class Sub:
    """mosquitto_sub on a topic, its messages as parsed JSON."""

    def __init__(self, broker, topic):
        self.path = os.path.join(broker.work, "sub-%s.out" % topic.replace("/", "_"))
        self.f = open(self.path, "w")
        self.proc = subprocess.Popen(["mosquitto_sub", "-h", "127.0.0.1", "-p", str(broker.port), "-t", topic, "-q", "1"],
                                     stdout=self.f, stderr=subprocess.DEVNULL)
        # Subscribed once a probe sent to the topic comes back (messages() leaves probes out).
        seen = lambda: any('"probe"' in line for line in open(self.path))
        for _ in range(120):
            broker.pub(topic, '{"probe": 1}')
            if wait_for(seen, 0.5):
                return
        raise RuntimeError("mosquitto_sub did not subscribe to " + topic)

    def messages(self):
        self.f.flush()
        out = []
        for line in open(self.path):
            try:
                m = json.loads(line)
            except ValueError:
                continue
            if not (isinstance(m, dict) and "probe" in m):
                out.append(m)
        return out

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def subscribed_engine(work, procs, query, stream, **kw):
    """An engine on `query`, once its source `stream` has subscribed."""
    eng = Engine(work, query, **kw)
    procs.append(eng)
    check("the source %s subscribed" % stream, eng.connected(stream))
    return eng


def case(fn):
    work = tempfile.mkdtemp(prefix="rdb-mqtt.")
    broker = None
    procs = []
    try:
        print("--", fn.__name__)
        broker = Broker(work)
        fn(work, broker, procs)
    except Exception as e:  # a case that breaks is a failure, and the others still run
        check(fn.__name__ + " ran to its end", False, repr(e))
    finally:
        for p in procs:
            try:
                p.stop()
            except Exception:
                pass
        if broker:
            broker.stop()
        if failed and os.environ.get("KEEP"):
            print("kept", work)
        else:
            shutil.rmtree(work, ignore_errors=True)


def indexed_delivery(work, broker, procs):
    """Records with their index ("n") are each taken once, in order, however they arrive."""
    q = ("DECLARE v INTEGER, x FLOAT STREAM e, 1/20 MQTT '%s' TIMEOUT 3\n"
         "SELECT e[0], e[1] STREAM r FROM e PUBLISH '%s'\n"
         "SELECT AVG(e[0] : 3) STREAM a FROM e PUBLISH '%s'\n") % (broker.url("edge/e"), broker.url("out/r"),
                                                                   broker.url("out/a"))
    sub = Sub(broker, "out/r")
    suba = Sub(broker, "out/a")
    procs += [sub, suba]
    eng = subscribed_engine(work, procs, q, "e")
    msgs = [json.dumps({"stream": "e", "n": k, "v": k, "x": k / 2}) for k in range(200)]
    # Irregular: a burst, duplicates (as after a failover), pauses longer than a slot.
    broker.pub("edge/e", lines=msgs[:50] + msgs[40:50])
    time.sleep(0.4)
    broker.pub("edge/e", lines=msgs[50:120])
    time.sleep(0.3)
    broker.pub("edge/e", lines=msgs[120:200] + msgs[150:160])
    ok = wait_for(lambda: eng.counter("e", "reads") >= 200, 60)
    check("all 200 records taken (reads %s)" % eng.counter("e", "reads"), ok)
    # r stores a record a slot after it is read; the duplicates after the last one are dropped as they come.
    stored = lambda: [r for r in eng.records("r") if r[0] is not None]
    wait_for(lambda: len(stored()) >= 200 and eng.counter("e", "dropped") >= 20, 60)
    recs = stored()
    values = [int(r[0]) for r in recs]
    check("the stored records are 0..199 once each, in order", values == list(range(200)),
          str(values[:10]) + "..." + str(values[-5:]))
    check("FLOAT fields arrive exactly", all(float(r[1]) == int(r[0]) / 2 for r in recs))
    check("the 20 duplicates were dropped (dropped %d)" % eng.counter("e", "dropped"), eng.counter("e", "dropped") == 20)
    # The sink: every record of r as JSON, in order, with its index and slot time.
    got = wait_for(lambda: [m for m in sub.messages() if m.get("r_0") is not None] if len(
        [m for m in sub.messages() if m.get("r_0") is not None]) >= 200 else None, 60) or []
    check("the sink published the 200 records (%d)" % len(got), len(got) == 200)
    allm = sub.messages()
    ns = [m["n"] for m in allm]
    check("published indices are consecutive from 0", ns == list(range(len(ns))), str(ns[:5]))
    check("each message has stream, n, t, t_exact and the fields",
          all(list(m.keys()) == ["stream", "n", "t", "t_exact", "r_0", "r_1"] for m in allm),
          str(allm[:1]))
    def same(m):
        p, q = (m["a_0_exact"].split("/") + ["1"])[:2]
        return abs(m["a_0"] - int(p) / int(q)) < 1e-9 and gcd(int(p), int(q)) == 1 and int(q) > 0
    am = suba.messages()
    check("a RATIONAL field is a number and exactly p/q (reduced)",
          all(same(m) for m in am if m["a_0"] is not None) and any(m["a_0"] is not None for m in am), str(am[5:6]))
    def exact(m):
        n, d = (m["t_exact"].split("/") + ["1"])[:2]
        return int(n) * 20 == (m["n"] + 1) * int(d)
    check("slot times: record n at (n+1)/20 s", all(exact(m) and abs(m["t"] - (m["n"] + 1) / 20) < 1e-9 for m in allm))
    check("NULL records are published as null", all(m["r_1"] is None for m in allm if m["r_0"] is None))
    rc = eng.stop()
    check("the engine stops cleanly (exit %s)" % rc, rc == 0)
    check("the sink lost nothing: acknowledged == records",
          re.search(r"publish: r (\d+) acknowledged, 0 dropped, 0 still queued", open(os.path.join(work, "engine.out")).read()) is not None)


def payload_forms(work, broker, procs):
    """JSON objects and text records; malformed payloads are counted and logged, never fatal."""
    q = ("DECLARE t FLOAT, h INTEGER, s DOUBLE STREAM room, 1/5 MQTT '%s'\n"
         "SELECT room[0], room[1], room[2] STREAM r FROM room\n") % broker.url("sensors/room")
    eng = subscribed_engine(work, procs, q, "room")
    good = ['{"t": 21.5, "h": 40, "s": 0.25}', '{"t": 22.25, "h": null}', "23.5 41 -2e3", "24.5,42,0.5",
            '{"h": 43, "s": 3}']
    bad = ["{not json", '{"t": "warm", "h": 1}', "1 2 3 4", '{"h": 1.5}', "25.5 abc 1"]
    for k, (g, b) in enumerate(zip(good, bad)):
        # Each good record is taken (read by a slot) before the next message comes.
        broker.pub("sensors/room", g)
        wait_for(lambda: eng.counter("room", "reads") >= k + 1, 60)
        broker.pub("sensors/room", b)
        wait_for(lambda: eng.counter("room", "received") >= 2 * k + 2, 60)
    check("received counts every message", wait_for(lambda: eng.counter("room", "received") == 10, 60),
          str(eng.detail("room")))
    check("malformed counts the 5 bad payloads", eng.counter("room", "malformed") == 5)
    stored = lambda: [r for r in eng.records("r") if any(v is not None for v in r)]
    wait_for(lambda: len(stored()) >= 5, 60)  # r stores a record a slot after it is read
    got = stored()
    want = [["21.5", "40", "0.25"], ["22.25", None, None], ["23.5", "41", "-2000"], ["24.5", "42", "0.5"],
            [None, "43", "3"]]
    check("the good payloads are stored once each, in order", got == want, str(got))
    err = eng.stderr()
    check("each malformed payload is logged with its topic",
          len(re.findall(r"MQTT source room \(topic sensors/room\): malformed payload", err)) == 5, err[-400:])
    check("the engine is still running", eng.proc.poll() is None)


def burst(work, broker, procs):
    """10,000 messages in one slot: all received, the newest taken, the rest counted as dropped."""
    q = ("DECLARE v INTEGER STREAM b, 1 MQTT '%s'\n"
         "SELECT b[0] STREAM r FROM b\n") % broker.url("burst")
    eng = subscribed_engine(work, procs, q, "b")
    t0 = time.time()
    broker.pub("burst", lines=[str(k) for k in range(10000)])
    ok = wait_for(lambda: eng.counter("b", "received") == 10000, 60)
    secs = time.time() - t0
    check("all 10000 received (%.2f s, %.0f messages/s)" % (secs, 10000 / secs), ok)
    wait_for(lambda: any(r[0] == "9999" for r in eng.records("r")), 60)
    vals = [r[0] for r in eng.records("r") if r[0] is not None]
    check("the slot after the burst took the newest (9999)", vals and vals[-1] == "9999", str(vals))
    d = eng.detail("b")
    check("reads + dropped == received", int(d["reads"]) + int(d["dropped"]) == 10000, str(d))
    n0 = eng.count("r")
    # Two slots of 1 s; a stall after the burst would never get there (10 s leave room for a busy machine).
    wait_for(lambda: eng.count("r") >= n0 + 2, 10)
    check("the slot clock went on (%d -> %d records)" % (n0, eng.count("r")), eng.count("r") >= n0 + 2)


def broker_restart(work, broker, procs):
    """The broker goes away mid-run: no stall, misses counted, reconnection, the sink's bounded buffer."""
    q = ("DECLARE v INTEGER STREAM c, 1/10 MQTT '%s'\n"
         "SELECT c[0] STREAM r FROM c PUBLISH '%s'\n") % (broker.url("in/c"), broker.url("out/r"))
    eng = subscribed_engine(work, procs, q, "c", config="[mqtt]\nbuffer_records = 5\n")
    broker.pub("in/c", "1")
    check("a record before the outage", wait_for(lambda: any(r[0] == "1" for r in eng.records("r")), 30))
    misses0 = eng.counter("c", "misses")
    n0 = eng.count("r")
    t0 = time.time()
    broker.stop()
    # 15 slots of 0.1 s; a slot thread held up by the missing broker would not get
    # there in 10 s (room for a busy machine).
    wait_for(lambda: eng.count("r") >= n0 + 15 and eng.counter("c", "misses") >= misses0 + 15, 10)
    n1 = eng.count("r")
    check("the slot clock does not stall without a broker (%d -> %d records in %.1f s)" % (n0, n1, time.time() - t0),
          n1 >= n0 + 15)
    check("slots without a message are misses", eng.counter("c", "misses") >= misses0 + 15)
    check("the loss is logged", wait_for(lambda: "connection lost" in eng.stderr(), 30), eng.stderr()[-300:])
    broker.start()
    sub = Sub(broker, "out/r")
    procs.append(sub)
    check("the source connects again", wait_for(lambda: eng.stderr().count("connected again") >= 2, 60),
          eng.stderr()[-300:])
    # Sent again until taken: the source may be connected before its subscription is back.
    def sent_and_taken():
        broker.pub("in/c", "2")
        return wait_for(lambda: any(r[0] == "2" for r in eng.records("r")), 1)
    check("a record after the outage", wait_for(sent_and_taken, 60))
    check("the sink dropped the oldest records beyond its buffer of 5 (%d)" % eng.counter("r", "publish_dropped"),
          eng.counter("r", "publish_dropped") >= 10)
    wait_for(lambda: len(sub.messages()) > 6, 60)
    ns = [m["n"] for m in sub.messages()]
    # A record in flight when the broker died may come first (the client sends it
    # again); from the queue on, records follow without gaps.
    queued = ns[1:] if len(ns) > 1 and ns[1] != ns[0] + 1 else ns
    check("after the outage the sink publishes in order, without gaps (%d messages)" % len(ns),
          len(queued) > 5 and ns == sorted(set(ns)) and queued == list(range(queued[0], queued[0] + len(queued))),
          str(ns[:12]))


def tls_and_password(work, broker, procs):
    """mqtts:// with the CA from [mqtt] ca_file, user and password from [mqtt]; a wrong password never connects."""
    broker.stop()
    ssl = lambda *a: subprocess.run(["openssl"] + list(a), cwd=work, check=True, capture_output=True, timeout=60)
    ssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=test-ca", "-keyout", "ca.key",
        "-out", "ca.pem")
    ssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", "srv.key", "-out", "srv.csr")
    with open(os.path.join(work, "san.ext"), "w") as f:
        f.write("subjectAltName = IP:127.0.0.1\n")
    ssl("x509", "-req", "-in", "srv.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
        "-extfile", "san.ext", "-out", "srv.pem")
    subprocess.run(["mosquitto_passwd", "-c", "-b", os.path.join(work, "passwd"), "engine", "s3cret"], check=True,
                   capture_output=True, timeout=10)
    tls = Broker(work, extra="allow_anonymous false\npassword_file %s/passwd\ncafile %s/ca.pem\ncertfile %s/srv.pem\n"
                 "keyfile %s/srv.key\n" % (work, work, work, work))
    procs.append(tls)
    url = "mqtts://127.0.0.1:%d/secure/in" % tls.port
    q = "DECLARE v INTEGER STREAM c, 1/10 MQTT '%s'\nSELECT c[0] STREAM r FROM c\n" % url
    good = "[mqtt]\nuser = \"engine\"\npassword = \"s3cret\"\nca_file = \"%s/ca.pem\"\n" % work
    os.makedirs(os.path.join(work, "ok"))
    eng = Engine(os.path.join(work, "ok"), q, config=good)
    procs.append(eng)
    check("connects over TLS with the configured CA, user and password", eng.connected("c"), eng.stderr()[-300:])
    subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(tls.port), "--cafile", os.path.join(work, "ca.pem"), "-u", "engine",
                    "-P", "s3cret", "-t", "secure/in", "-q", "1", "-m", "77"], check=True, timeout=10)
    check("a record arrives over TLS", wait_for(lambda: any(r[0] == "77" for r in eng.records("r")), 30))
    os.makedirs(os.path.join(work, "bad"))
    bad = Engine(os.path.join(work, "bad"), q, config=good.replace("s3cret", "wrong"))
    procs.append(bad)
    wait_for(lambda: "no broker answers" in bad.stderr() and bad.count("r") >= 10, 30)
    check("a wrong password never connects", bad.counter("c", "connected") == 0)
    check("and says why, without the password",
          "no broker answers" in bad.stderr() and "wrong" not in bad.stderr(), bad.stderr()[-300:])
    check("the engine with the wrong password still runs its slots", bad.count("r") >= 10)
    check("an address with credentials is refused at compile time",
          subprocess.run([XRETRACTOR, "-c", "/dev/stdin"], input="DECLARE v INTEGER STREAM c, 1 MQTT "
                         "'mqtt://u:p@127.0.0.1:1/t'\n", capture_output=True, text=True).returncode != 0)


def poison_payload(work, broker, procs):
    """A payload nested 100,000 levels deep (issue 23) is malformed, acknowledged and never fatal; a restart does not get it again."""
    q = ("DECLARE t FLOAT, h INTEGER STREAM room, 1/10 MQTT '%s'\n"
         "SELECT room[0], room[1] STREAM r FROM room\n") % broker.url("sensors/room")
    eng = subscribed_engine(work, procs, q, "room")
    broker.pub("sensors/room", "1.5 1")
    check("a record before the poison", wait_for(lambda: any(r[1] == "1" for r in eng.records("r")), 30))
    depth = 100000
    poison = os.path.join(work, "poison.json")
    with open(poison, "w") as f:
        f.write('{"t":' + "[" * depth + "]" * depth + ',"h":1}')
    # QoS 1 to the engine's persistent session: unacknowledged, the broker would hand it over again.
    subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(broker.port), "-t", "sensors/room", "-q", "1", "-f",
                    poison], check=True, timeout=10)
    wait_for(lambda: eng.proc.poll() is not None or eng.counter("room", "received") >= 2, 60)
    check("the engine survives a payload nested %d levels deep (exit %s)" % (depth, eng.proc.poll()),
          eng.proc.poll() is None, eng.stderr()[-300:])
    check("it is counted as malformed", eng.counter("room", "malformed") == 1, str(eng.detail("room")))
    lines = [l for l in eng.stderr().splitlines() if "malformed payload" in l]
    check("and logged once, with a bounded excerpt (%s)" % [len(l) for l in lines],
          len(lines) == 1 and len(lines[0]) < 400 and "nested deeper than" in lines[0], str(lines)[:400])
    broker.pub("sensors/room", "2.5 2")
    check("good records are taken after it", wait_for(lambda: any(r[1] == "2" for r in eng.records("r")), 30))
    rc = eng.stop()
    check("the engine stops cleanly (exit %s)" % rc, rc == 0)
    procs.remove(eng)
    again = subscribed_engine(work, procs, q, "room")  # the same client id: the same session
    # A record sent now comes after anything the session still held: once it is
    # received, the poison would have been too.
    broker.pub("sensors/room", "3.5 3")
    wait_for(lambda: again.counter("room", "received") >= 1, 30)
    check("a restart on the same session does not receive it again (received %d, malformed %d)" %
          (again.counter("room", "received"), again.counter("room", "malformed")),
          again.counter("room", "received") == 1 and again.counter("room", "malformed") == 0 and
          again.proc.poll() is None, again.stderr()[-300:])


def payload_limits(work, broker, procs):
    """[mqtt] max_payload_bytes and max_json_depth: a payload over either is malformed, before any parse."""
    q = ("DECLARE t FLOAT, h INTEGER STREAM room, 1/10 MQTT '%s'\n"
         "SELECT room[0], room[1] STREAM r FROM room\n") % broker.url("sensors/room")
    eng = subscribed_engine(work, procs, q, "room", config="[mqtt]\nmax_payload_bytes = 200\nmax_json_depth = 2\n")
    broker.pub("sensors/room", "1.5 " + "0" * 300 + "1")  # a good record, but 305 bytes
    broker.pub("sensors/room", '{"t": [[1.5]], "h": 2}')  # depth 3
    broker.pub("sensors/room", '{"t": 2.5, "h": 3, "note": "[[[["}')  # brackets in a string do not count
    check("all three received", wait_for(lambda: eng.counter("room", "received") == 3, 30), str(eng.detail("room")))
    check("the long and the deep one are malformed", eng.counter("room", "malformed") == 2, str(eng.detail("room")))
    err = eng.stderr()
    check("the log says why", "305 bytes, over the limit of 200" in err and "nested deeper than 2" in err, err[-600:])
    check("brackets inside a JSON string are no nesting",
          wait_for(lambda: any(r[1] == "3" for r in eng.records("r")), 30), str(eng.records("r")))


def offline_sink_broker_down(work, broker, procs):
    """Offline (-f -u) with a PUBLISH sink and no broker: one 30 s wait per sink, then the oldest go; SIGTERM ends it at once."""
    broker.stop()
    port = free_port()  # nobody listens here
    with open(os.path.join(work, "in.txt"), "w") as f:
        f.write("\n".join(str(k) for k in range(60)) + "\n")
    with open(os.path.join(work, "q.rql"), "w") as f:
        f.write("DECLARE v INTEGER STREAM s, 1/10 TEXTFILE 'in.txt'\n"
                "SELECT s[0] STREAM r FROM s PUBLISH 'mqtt://127.0.0.1:%d/out/r'\n" % port)
    with open(os.path.join(work, "engine.toml"), "w") as f:
        f.write("[mqtt]\nbuffer_records = 5\n")
    env = dict(os.environ, TMPDIR=work)

    def run(args):
        err = open(os.path.join(work, "run.err"), "w")
        out = open(os.path.join(work, "run.out"), "w")
        return subprocess.Popen([XRETRACTOR, "q.rql", "-g", "engine.toml", "-k"] + args, cwd=work, env=env,
                                stdout=out, stderr=err)

    def ended(p, timeout):
        try:
            p.wait(timeout)
            return True
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            return False

    # SIGTERM while the sink waits for the broker.
    p = run(["--no-clock", "--until-eof"])
    time.sleep(3)  # the 60 records take milliseconds: the sink is waiting by then, on any but the slowest start
    say_hello = lambda: subprocess.run([XQRY, "--hello"], env=env, capture_output=True, text=True, timeout=20)
    hello = wait_for(lambda: (lambda r: r if r.returncode == 0 else None)(say_hello()), 60) or say_hello()
    check("the engine answers clients while its sink waits (xqry --hello exit %d)" % hello.returncode,
          hello.returncode == 0, hello.stdout + hello.stderr)
    t0 = time.time()
    p.send_signal(signal.SIGTERM)
    ok = ended(p, 30)
    # Not the 30 s wait: ended at once (ten seconds leave room for a busy machine).
    check("SIGTERM mid-wait ends the run promptly (%.2f s, exit %s)" % (time.time() - t0, p.returncode),
          ok and time.time() - t0 < 10.0 and p.returncode == 0)
    # To the end: one 30 s wait, then the oldest go; the log counts what never went out.
    t0 = time.time()
    p = run(["-f", "-u"])
    ok = ended(p, 70)
    secs = time.time() - t0
    # One wait, not two (60 s); a busy machine may add to the run's own time.
    check("the offline run ends after the sink's one 30 s wait (%.1f s, exit %s)" % (secs, p.returncode),
          ok and 29 <= secs < 55 and p.returncode == 0)
    err = open(os.path.join(work, "run.err")).read()
    m = re.search(r"PUBLISH r \(topic out/r\): (\d+) of (\d+) records not delivered", err)
    check("the log says how many records were not delivered (%s)" % (m.group(0) if m else None),
          m is not None and m.group(1) == m.group(2) == "60", err[-600:])
    check("and that it gave up waiting once", err.count("the broker took no record for 30 s") == 1, err[-600:])


def text_fields(work, broker, procs):
    """Text payloads (issue 25): an empty value between commas is NULL, not skipped; a huge token is logged cut short."""
    q = ("DECLARE a INTEGER, b INTEGER, c INTEGER, d INTEGER, e INTEGER, f INTEGER STREAM s, 1/10 MQTT '%s'\n"
         "SELECT s[0], s[1], s[2], s[3], s[4], s[5] STREAM r FROM s\n") % broker.url("sensors/six")
    eng = subscribed_engine(work, procs, q, "s", config="[mqtt]\nmax_payload_bytes = 16000000\n")
    broker.pub("sensors/six", "7 , 8 ,, 9 1 1")
    check("'7 , 8 ,, 9 1 1' is 7, 8, NULL, 9, 1, 1",
          wait_for(lambda: ["7", "8", None, "9", "1", "1"] in eng.records("r"), 5), str(eng.records("r")[-3:]))
    broker.pub("sensors/six", ",2,3,4,5,")
    check("a leading and a trailing comma stand for NULL",
          wait_for(lambda: [None, "2", "3", "4", "5", None] in eng.records("r"), 5), str(eng.records("r")[-3:]))
    big = os.path.join(work, "big.txt")
    with open(big, "w") as f:
        f.write("x" * 10000000 + " 1 2 3 4 5")
    subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(broker.port), "-t", "sensors/six", "-q", "1", "-f",
                    big], check=True, timeout=30)
    check("a 10 MB token is malformed", wait_for(lambda: eng.counter("s", "malformed") == 1, 10), str(eng.detail("s")))
    lines = [l for l in eng.stderr().splitlines() if "malformed payload" in l]
    check("and logged on one bounded line (%s bytes)" % [len(l) for l in lines],
          len(lines) == 1 and len(lines[0]) < 600, str(lines)[:300])


def strict_json(raw):
    """One payload as strict JSON: UTF-8 only, no bare NaN or Infinity; None when it is not."""
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
    except ValueError:
        return None


def payloads(sub):
    """The raw payloads mosquitto_sub printed, its subscription probes left out."""
    sub.f.flush()
    return [l for l in open(sub.path, "rb").read().split(b"\n") if l and b'"probe"' not in l]


def string_not_utf8(work, broker, procs):
    """Issue 42: a STRING that is not UTF-8 is published with U+FFFD for each bad sequence (it aborted the engine,
    exit 134); NaN and the infinities are "NaN", "Infinity", "-Infinity", apart from NULL (null); an MQTT source
    reads such payloads back."""
    # A live engine: a STRING source gets 0xff 0xfe from outside; another source reads PUBLISH payloads back.
    q = ("DECLARE s STRING[4] STREAM m, 1/10 MQTT '%s'\n"
         "SELECT m[0] STREAM p FROM m PUBLISH '%s'\n"
         "DECLARE o_0 STRING[8], o_1 DOUBLE, o_2 DOUBLE, o_3 DOUBLE, o_4 DOUBLE, o_5 FLOAT STREAM back, 1/10 MQTT '%s'\n"
         "SELECT back[0], back[1], back[2], back[3], back[4], back[5] STREAM r FROM back\n"
         ) % (broker.url("in/m"), broker.url("out/p"), broker.url("in/back"))
    os.makedirs(os.path.join(work, "live"))
    eng = subscribed_engine(os.path.join(work, "live"), procs, q, "m")
    check("the source back subscribed", eng.connected("back"))
    subp = Sub(broker, "out/p")
    procs.append(subp)
    subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(broker.port), "-t", "in/m", "-q", "1", "-m",
                    b"\xff\xfe"], check=True, timeout=10)
    pm = wait_for(lambda: eng.proc.poll() is not None or
                  [m for m in map(strict_json, payloads(subp)) if m and m.get("p_0") is not None], 15)
    pm = pm if isinstance(pm, list) else []
    check("mosquitto_pub -m $'\\xff\\xfe' to a STRING source is published as strict JSON, two U+FFFD (%s)" % pm[:1],
          len(pm) == 1 and pm[0]["p_0"] == "\ufffd\ufffd", str(payloads(subp))[:300])
    check("the engine still runs (exit %s)" % eng.proc.poll(), eng.proc.poll() is None, eng.stderr()[-300:])

    # The offline run: a TEXTFILE STRING, and NaN, infinities and NULL beside it.
    sub = Sub(broker, "out/o")
    procs.append(sub)
    with open(os.path.join(work, "s.txt"), "wb") as f:
        f.write(b'"ok" 4\n"\xff\xfe" -1\n"a\xe2\x82" 1e200\n"z" 0\n')
    with open(os.path.join(work, "p.rql"), "w") as f:
        f.write("DECLARE s STRING[4], x DOUBLE STREAM src, 1 TEXTFILE 's.txt'\n"
                "SELECT src[0], Sqrt(src[1]), src[1] * src[1], 0 - src[1] * src[1], 1 / src[1], "
                "to_float(src[1] * src[1]) STREAM o FROM src PUBLISH '%s'\n" % broker.url("out/o"))
    run = subprocess.run([XRETRACTOR, "p.rql", "-f", "-u", "-r"], cwd=work, env=dict(os.environ, TMPDIR=work),
                         capture_output=True, timeout=60)
    check("an offline run publishing a STRING of 0xff 0xfe ends cleanly (exit %d)" % run.returncode,
          run.returncode == 0, run.stderr.decode("utf-8", "replace")[-300:])
    raw = wait_for(lambda: payloads(sub) if len(payloads(sub)) >= 4 else None, 10) or payloads(sub)
    msgs = [strict_json(p) for p in raw]
    check("the 4 records are published as strict JSON (%d)" % len(msgs), len(msgs) == 4 and None not in msgs, str(raw))
    if len(msgs) != 4 or None in msgs or eng.proc.poll() is not None:
        return
    check("invalid UTF-8 is U+FFFD, one for each bad sequence",
          [m["o_0"] for m in msgs] == ["ok", "\ufffd\ufffd", "a\ufffd", "z"], str([m["o_0"] for m in msgs]))
    check("NaN, Infinity and -Infinity are strings, NULL is null",
          msgs[1]["o_1"] == "NaN" and msgs[2]["o_2"] == "Infinity" and msgs[2]["o_3"] == "-Infinity"
          and msgs[2]["o_5"] == "Infinity" and msgs[3]["o_4"] is None and msgs[0]["o_1"] == 2.0, str(msgs))

    # Those payloads read back by the live engine's MQTT source (o_0 is wide enough for the U+FFFD).
    subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(broker.port), "-t", "in/back", "-q", "1", "-l"],
                   input=b"\n".join(raw) + b"\n", check=True, timeout=30)
    want = [["ok", "2", "16", "-16", "0.25", "16"], ["\ufffd\ufffd", "nan", "1", "-1", "-1", "1"],
            ["a\ufffd", "1e+100", "inf", "-inf", "1e-200", "inf"], ["z", "0", "0", "0", None, "0"]]
    stored = lambda: [r for r in eng.records("r") if r[0] is not None]
    got = wait_for(lambda: stored() if len(stored()) >= 4 else None, 60) or stored()
    check("an MQTT source reads the published records back: NaN, infinities and NULL as they were", got == want,
          str(got))
    check("none of them was malformed", eng.counter("back", "malformed") == 0, str(eng.detail("back")))
    rc = eng.stop()
    check("the engine stops cleanly (exit %s)" % rc, rc == 0)


def silent_broker(work, broker, procs):
    """A server that takes the TCP connection and never answers MQTT (issue 25) is named in the log."""
    port = free_port()
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", port))
    srv.listen(8)
    held = []
    stop = threading.Event()

    def accept():
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(srv.accept()[0])
            except OSError:
                pass
    t = threading.Thread(target=accept, daemon=True)
    t.start()
    try:
        q = ("DECLARE v INTEGER STREAM m, 1/10 MQTT 'mqtt://127.0.0.1:%d/t'\n"
             "SELECT m[0] STREAM o FROM m\n") % port
        eng = Engine(work, q)
        procs.append(eng)
        want = "no broker answers at tcp://127.0.0.1:%d" % port
        check("a silent server is logged with its address within 10 s",
              wait_for(lambda: want in eng.stderr(), 10), eng.stderr()[-300:])
        check("while the engine runs on", eng.proc.poll() is None and len(held) >= 1)
    finally:
        stop.set()
        t.join()
        for c in held:
            c.close()
        srv.close()


def main():
    for tool in ("mosquitto", "mosquitto_pub", "mosquitto_sub"):
        if not shutil.which(tool):
            print("FAIL %s is not installed (tools/setup.sh installs it)" % tool)
            print("0 passed, 1 failed")
            return 1
    cases = (indexed_delivery, payload_forms, burst, broker_restart, tls_and_password, poison_payload, payload_limits,
             offline_sink_broker_down, text_fields, silent_broker, string_not_utf8)
    only = os.environ.get("MQTT_CASES", "").split(",")
    for c in cases:
        if only != [""] and c.__name__ not in only:
            continue
        case(c)
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
