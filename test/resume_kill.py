#!/usr/bin/env python3
"""Checkpoints and --resume, end to end (meson test resume-kill).

test/resume/plan.rql (a 180-record window through a VOLATILE chain, AVG, a
join of two intervals, an interleave, a RULE ... DUMP) runs offline once
uninterrupted (the reference, dir A) and once SIGKILLed --kills times and
resumed until a run ends by itself (dir B); the kill points are states: the
engine just started, an output file past a threshold, a checkpoint being
written. Every file of B must equal A's (checkpoint files left out, .meta
after its 8-byte creation time). Then, once: a changed plan, a cut checkpoint
and two corrupt ones against a killed run's files, and a clocked run stopped
with SIGTERM and resumed after a pause (clocked_case).

usage: resume_kill.py XRETRACTOR [--mode jit|vm|both] [--kills N] [--seed S] [--keep DIR]
Ends with "resume-kill: N passed, M failed"; exit status 1 on a failure.
"""
import argparse, hashlib, os, random, re, shutil, signal, struct, subprocess, sys, tempfile, time, zlib

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "resume")
CKPT = ".retractor.checkpoint"
SLOTS = 4000000  # about 1.5 s uninterrupted on an idle core
DEADLINE = 120  # seconds for any one run or wait (a checkpointing run took 22 s beside a build)
WATCH = "mean"  # the output file whose size places the kills
passed, failed = 0, 0


def check(name, ok, detail=""):
    global passed, failed
    passed, failed = passed + bool(ok), failed + (not ok)
    print("ok   " + name if ok else "FAIL " + name + (": " + detail if detail else ""), flush=True)
    return ok


def write_data(d):
    """The plan's sources: fixed, whatever --seed is. Out-of-range values are
    stored NULL: about 1% of fast's second values (the .meta files get runs)
    and one first value a pass (in the window for 180 records: a record per
    .meta entry there)."""
    rng = random.Random(1207)
    null = "2147483648"
    with open(os.path.join(d, "fast.txt"), "w") as f:
        f.writelines("%s %s\n" % (null if i == 1500 else rng.randint(-500, 500),
                                  null if rng.random() < 0.01 else rng.randint(0, 100)) for i in range(3001))
    with open(os.path.join(d, "other.txt"), "w") as f:
        f.writelines("%d %d\n" % (rng.randint(-500, 500), rng.randint(0, 100)) for _ in range(2003))
    with open(os.path.join(d, "slow.bin"), "wb") as f:
        f.write(struct.pack("<997i", *(rng.randint(-1000, 1000) for _ in range(997))))
    with open(os.path.join(d, "ticks.txt"), "w") as f:
        f.writelines("%d\n" % i for i in range(1, 20001))


class Runs:
    def __init__(self, xr, work):
        self.xr, self.work, self.procs = xr, work, []
        self.data = os.path.join(work, "data")
        os.makedirs(self.data)
        write_data(self.data)
        self.env = dict(os.environ, TMPDIR=work)  # the instance lock is this test's own

    def fresh(self, name, plan="plan.rql"):
        """A new run dir: the plan, its sources and an empty storage dir."""
        d = os.path.join(self.work, name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(os.path.join(d, "out"))
        shutil.copy(os.path.join(FIXTURES, plan), d)
        for f in os.listdir(self.data):
            shutil.copy(os.path.join(self.data, f), d)
        return d

    def start(self, d, args, plan="plan.rql"):
        """Starts the engine in d; its stdout and stderr go to d/run-K.out/.err."""
        base = os.path.join(d, "run-%d" % (len(self.procs) + 1))
        with open(base + ".out", "w") as o, open(base + ".err", "w") as e:
            p = subprocess.Popen([self.xr, plan] + args, cwd=d, stdin=subprocess.DEVNULL, stdout=o, stderr=e,
                                 env=self.env)
        p.base = base
        self.procs.append(p)
        return p

    def run(self, d, args, plan="plan.rql"):
        """Runs to the end; returns (exit status, stdout, stderr)."""
        p = self.start(d, args, plan)
        rc = wait(p)
        return rc, read(p.base + ".out"), read(p.base + ".err")


def wait(p):
    """p's exit status, or "timeout" (and p killed) after DEADLINE."""
    try:
        return p.wait(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        return "timeout"


def read(path, binary=False):
    with open(path, "rb") if binary else open(path, errors="replace") as f:
        return f.read()


def size(path):
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return 0


def poll(cond, p, step=0.001):
    """Waits until cond() holds while p runs: True, or False when p ended first."""
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        if p.poll() is not None:
            return False
        if cond():
            return True
        time.sleep(step)
    raise RuntimeError("no state reached within %d s" % DEADLINE)


def in_setup(p, out):
    """Whether p holds the storage lock (its file says "PID: <pid>"): the
    engine is setting up, before it touches any other file."""
    try:
        with open(os.path.join(out, ".xretractor_storage.lock")) as f:
            return f.read().split() == ["PID:", str(p.pid)]
    except OSError:
        return False


def writing(p, out):
    """Whether p's checkpoint is being written (its temporary file exists)."""
    return os.path.exists(os.path.join(out, "%s.tmp.%d" % (CKPT, p.pid)))


def stored(d):
    """Relative paths of the files of d, checkpoint files left out."""
    got = []
    for root, _, files in os.walk(d):
        got += [os.path.relpath(os.path.join(root, f), d) for f in files if not f.startswith(CKPT)]
    return sorted(got)


def compare(a, b):
    """Mismatches of storage dirs a and b: missing files, first differing byte."""
    fa, fb = stored(a), stored(b)
    bad = ["%s: only in %s" % (f, a) for f in fa if f not in fb]
    bad += ["%s: only in %s" % (f, b) for f in fb if f not in fa]
    for f in sorted(set(fa) & set(fb)):
        skip = 8 if re.search(r"\.meta(\.old\d+)?$", f) else 0  # the index's creation time differs by run
        x, y = read(os.path.join(a, f), True), read(os.path.join(b, f), True)
        if x[skip:] != y[skip:]:
            n = min(len(x), len(y))  # the first differing 4 KiB, then the byte in it
            i = next((k for k in range(skip, n, 4096) if x[k:k + 4096] != y[k:k + 4096]), n)
            i = next((k for k in range(i, min(i + 4096, n)) if x[k] != y[k]), min(i + 4096, n))
            bad.append("%s: first difference at byte %d (sizes %d and %d)" % (f, i, len(x), len(y)))
    return bad


def check_same(name, a, b):
    bad = compare(a, b)
    for m in bad[:20]:
        print("     " + m)
    return check(name, not bad, "%d files differ" % len(bad))


def hashes(d):
    # The storage lock, which a run takes and drops, is no data.
    return {f: hashlib.sha256(read(os.path.join(d, f), True)).hexdigest() for f in os.listdir(d) if f[-5:] != ".lock"}


def clean_error(rc):
    """A refusal: a non-zero exit of the engine's own, not a signal or an abort."""
    return isinstance(rc, int) and rc > 0 and rc not in (134, 139)


def self_test(a2, ref):
    """The comparison finds a flipped byte and a missing file (a2 is spoiled after)."""
    with open(os.path.join(a2, WATCH), "r+b") as f:
        c = f.read(1235)[-1]
        f.seek(1234)
        f.write(bytes([c ^ 0x55]))
    os.remove(os.path.join(a2, "spikes.desc"))
    bad = compare(ref, a2)
    want = ["spikes.desc: only in " + ref, WATCH + ": first difference at byte 1234"]
    check("comparison finds a flipped byte and a missing file", len(bad) == 2 and all(
        any(m.startswith(w) for m in bad) for w in want), "; ".join(bad))


def killed_runs(runs, mode, flags, ref_size, kills, rng):
    """Runs the plan in fresh dirs B, SIGKILLed at `kills` points and resumed
    each time, until a run ends by itself. Returns (finished dirs, kills
    done, kills that left a checkpoint half written, resumed starts)."""
    # Thresholds sorted: each kill lands later in the output than the one before.
    points = sorted(rng.uniform(0.02, 0.97) * ref_size for _ in range(kills))
    kinds = [rng.choice(["size", "size", "size", "ckpt", "ckpt", "setup", "resumed"]) for _ in points]
    done, in_write, resumed, dirs = 0, 0, 0, []
    while done < kills:
        b = runs.fresh("B-%s-%d" % (mode, len(dirs)))
        out, last, first = os.path.join(b, "out"), 0, done
        while True:
            p = runs.start(b, flags + ["--resume", "--checkpoint", "0.02"])
            hit = False
            if done < kills:
                kind, limit = kinds[done], max(points[done], last + 1)
                if kind == "setup":  # as soon as it holds the storage lock
                    hit = poll(lambda: in_setup(p, out), p, step=0.0002)
                elif kind == "resumed":  # right after it restored (or found none)
                    hit = poll(lambda: size(p.base + ".out") > 0, p)
                else:
                    hit = poll(lambda: size(os.path.join(out, WATCH)) >= limit, p)
                if kind == "ckpt" and hit:  # then while a checkpoint is being written, or give up a little later
                    hit = poll(lambda: writing(p, out) or size(os.path.join(out, WATCH)) >= limit + ref_size / 30, p,
                               step=0.0002)
            if hit:
                p.send_signal(signal.SIGKILL)
            rc = wait(p)
            resumed += bool(re.match(r"resumed \S*plan\.rql at slot \d+", read(p.base + ".out")))
            if rc == -signal.SIGKILL:
                done += 1
                last = size(os.path.join(out, WATCH))
                in_write += writing(p, out)
                continue
            if rc != 0:
                check("%s: resumed run exits 0" % mode, False, "exit %s: %s" % (rc, read(p.base + ".err")[-500:]))
                return dirs, done, in_write, resumed
            break  # it ended by itself: B is complete
        dirs.append(b)
        if done == first:  # the next kill point is never reached: another B would not reach it either
            check("%s: kill point %d reached" % (mode, done + 1), False, kinds[done])
            break
    return dirs, done, in_write, resumed


def per_mode(runs, mode, kills, rng, supported):
    flags = ["-f", "-k", "-r", "-m", str(SLOTS)] + (["--interpret"] if mode == "vm" else [])
    a = runs.fresh("A-" + mode)
    t0 = time.monotonic()
    rc, _, err = runs.run(a, flags + (["--checkpoint", "0"] if supported else []))
    took = time.monotonic() - t0
    if not check("%s: uninterrupted run (%.2f s)" % (mode, took), rc == 0, "exit %s: %s" % (rc, err[-500:])):
        return None, flags
    ref = os.path.join(a, "out")
    if supported:
        check("%s: no checkpoint with --checkpoint 0" % mode, not any(f.startswith(CKPT) for f in os.listdir(ref)))
    # A second uninterrupted run, with checkpoints when there are: the same files.
    a2 = runs.fresh("A2-" + mode)
    rc, out, err = runs.run(a2, flags + (["--resume", "--checkpoint", "0.02"] if supported else []))
    check("%s: second uninterrupted run" % mode, rc == 0, "exit %s: %s" % (rc, err[-500:]))
    if supported:
        check("%s: --resume without a checkpoint says so" % mode, "checkpoint" in out and not out.startswith("resumed"),
              repr(out[:200]))
    check_same("%s: checkpoints change no output" % mode if supported else "%s: two runs give the same files" % mode,
               ref, os.path.join(a2, "out"))
    self_test(os.path.join(a2, "out"), ref)
    shutil.rmtree(a2)
    if not supported:
        return ref, flags
    dirs, done, in_write, resumed = killed_runs(runs, mode, flags, size(os.path.join(ref, WATCH)), kills, rng)
    print("     %s: %d SIGKILLs (%d during a checkpoint write), %d resumed starts, %d complete runs" %
          (mode, done, in_write, resumed, len(dirs)), flush=True)
    check("%s: at least %d kills" % (mode, kills), done >= kills, "%d" % done)
    check("%s: some starts resumed from a checkpoint" % mode, resumed > 0)
    for b in dirs:
        if check_same("%s: killed and resumed %s equals the reference" % (mode, os.path.basename(b)), ref,
                      os.path.join(b, "out")):
            shutil.rmtree(b)  # 50 MB each; a differing one is kept for --keep
    return ref, flags


def extra_cases(runs, ref, flags):
    """A changed plan, a cut checkpoint and two corrupt ones against the files
    of a run killed after its second checkpoint."""
    s = runs.fresh("S")
    out = os.path.join(s, "out")
    p = runs.start(s, flags + ["--resume", "--checkpoint", "0.02"])
    hit = poll(lambda: os.path.exists(os.path.join(out, CKPT + ".prev")), p)
    p.send_signal(signal.SIGKILL)
    p.wait()
    if not check("a run writes a second checkpoint (.prev) before its end", hit):
        return
    # (a) the plan changed: refused, naming the stream, nothing touched.
    d = os.path.join(runs.work, "Sa")
    shutil.copytree(s, d)
    text = read(os.path.join(d, "plan.rql"))
    changed = text.replace("fast[0], fast[1], slow[0] STREAM joined", "fast[0], fast[1] + 1, slow[0] STREAM joined")
    assert changed != text
    with open(os.path.join(d, "plan.rql"), "w") as f:
        f.write(changed)
    before = hashes(os.path.join(d, "out"))
    rc, _, err = runs.run(d, flags + ["--resume"])
    check("changed plan: refused", clean_error(rc), "exit %s" % rc)
    check("changed plan: stderr names the stream joined", "joined" in err, err[-300:])
    check("changed plan: files unchanged", hashes(os.path.join(d, "out")) == before)
    # (b) the current checkpoint cut to half: a warning, .prev used, the same output.
    d = os.path.join(runs.work, "Sb")
    shutil.copytree(s, d)
    cur = os.path.join(d, "out", CKPT)
    os.truncate(cur, size(cur) // 2)
    rc, o, err = runs.run(d, flags + ["--resume", "--checkpoint", "0.02"])
    check("cut checkpoint: the run resumes and completes", rc == 0 and o.startswith("resumed"),
          "exit %s: %s %s" % (rc, o[:200], err[-500:]))
    check("cut checkpoint: a warning on stderr names .prev", "warning" in err and CKPT + ".prev" in err, err[-300:])
    check_same("cut checkpoint: output equals the reference", ref, os.path.join(d, "out"))
    shutil.rmtree(d)
    # (c) both checkpoints corrupt: a clear error, no crash, nothing touched.
    d = os.path.join(runs.work, "Sc")
    shutil.copytree(s, d)
    for name in (CKPT, CKPT + ".prev"):
        with open(os.path.join(d, "out", name), "r+b") as f:
            data = bytearray(f.read())
            for at in range(len(data) // 3, len(data), max(1, len(data) // 7)):
                data[at] ^= 0xA5
            f.seek(0)
            f.write(data)
    before = hashes(os.path.join(d, "out"))
    rc, _, err = runs.run(d, flags + ["--resume"])
    check("corrupt checkpoints: a clean error exit (no signal, no abort)", clean_error(rc), "exit %s" % rc)
    check("corrupt checkpoints: stderr names the checkpoint file", CKPT in err, err[-300:])
    check("corrupt checkpoints: files unchanged", hashes(os.path.join(d, "out")) == before)
    # (d) a stream's files rewritten by another plan since (an xqry --reset): refused, not cut back as this layout.
    d = os.path.join(runs.work, "Sd")
    shutil.copytree(s, d)
    with open(os.path.join(d, "out", "joined.desc"), "w") as f:
        f.write("{\tDOUBLE a\n\tDOUBLE b\n\tDOUBLE c\n}")
    size_before = size(os.path.join(d, "out", "joined"))
    rc, _, err = runs.run(d, flags + ["--resume"])
    check("another layout on disk: refused, naming joined.desc", clean_error(rc) and "joined.desc" in err,
          "exit %s %s" % (rc, err[-300:]))
    check("another layout on disk: its data not cut", size(os.path.join(d, "out", "joined")) == size_before)
    # (e) a resume that takes no checkpoints removes the one it came from (it would be stale).
    rc, o, err = runs.run(s, without_m(flags) + ["--resume", "--checkpoint", "0", "-m", "1000"])
    check("--resume --checkpoint 0: the checkpoint it came from is removed",
          rc == 0 and not os.path.exists(os.path.join(out, CKPT)), "exit %s %s" % (rc, err[-300:]))


def without_m(flags):
    return [f for i, f in enumerate(flags) if f != "-m" and (i == 0 or flags[i - 1] != "-m")]


def with_crc(path, change):
    """Rewrites a checkpoint's payload with change(bytearray) and a CRC that
    matches: the engine's checks, not the checksum, must refuse it."""
    data = bytearray(read(path, True))
    payload = data[20:-4]
    change(payload)
    body = bytes(data[:12]) + struct.pack("<Q", len(payload)) + bytes(payload)
    with open(path, "wb") as f:
        f.write(body + struct.pack("<I", zlib.crc32(body) & 0xffffffff))


def hostile_checkpoints(runs, flags):
    """Checkpoints with a valid CRC and impossible contents: a section count
    near 2^64, an open dump pointed at another file. Each is refused (exit 1),
    nothing is touched, no signal, no huge allocation."""
    flags = without_m(flags)
    # A run stopped (cleanly) while a dump is open: its checkpoint names the dump's file.
    found = None
    for m in range(1000, 1040):
        d = runs.fresh("H")
        runs.run(d, flags + ["-m", str(m)])
        payload = read(os.path.join(d, "out", CKPT), True)[20:-4]
        at = payload.find(b"spikes_high_dump")
        if at >= 0:
            found = (d, at)
            break
    if not check("a checkpoint with an open dump (a stop at -m 1000..1039)", found):
        return
    d, at = found
    out = os.path.join(d, "out")
    ckpt = os.path.join(out, CKPT)
    keep = read(ckpt, True)
    # The dump's path is a length-prefixed text: find its start and end.
    end = keep[20:-4].index(b".tmp", at) + 4
    start = next(b for b in range(at, max(0, at - 64), -1) if struct.unpack_from("<Q", keep, 20 + b - 8)[0] == end - b)
    victim = b"out/" + b"v" * (end - start - 4)
    with open(os.path.join(d, victim.decode()), "w") as f:
        f.write("not a dump: must stay as it is\n")

    def redirect(payload):
        payload[start:end] = victim
    with_crc(ckpt, redirect)
    before = hashes(out)
    rc, _, err = runs.run(d, flags + ["--resume", "-m", "1100"])
    check("hostile checkpoint (a dump at another file): refused", clean_error(rc), "exit %s %s" % (rc, err[-300:]))
    check("hostile checkpoint (a dump at another file): nothing touched", hashes(out) == before)

    def huge(payload):
        payload[0:8] = struct.pack("<Q", (1 << 64) - 1)
    with open(ckpt, "wb") as f:
        f.write(keep)
    with_crc(ckpt, huge)
    rc, _, err = runs.run(d, flags + ["--resume", "-m", "1100"])
    check("hostile checkpoint (2^64 sections): refused cleanly", clean_error(rc), "exit %s %s" % (rc, err[-300:]))


def rotation_case(runs, flags):
    """ROTATION, killed before its first periodic checkpoint: the resume goes
    on from the start's checkpoint (slot 0), not from the killed session's
    files, and the clean stop archives one session equal to an uninterrupted
    run's."""
    def rotating(d):
        text = read(os.path.join(d, "plan.rql")).replace("STORAGE 'out'", "STORAGE 'out'\nROTATION 'out/rot.txt'")
        with open(os.path.join(d, "plan.rql"), "w") as f:
            f.write(text)
    a = runs.fresh("RA")
    rotating(a)
    rc, _, err = runs.run(a, flags + ["--checkpoint", "100"])
    check("rotation: an uninterrupted run archives session 0", rc == 0 and os.path.exists(
        os.path.join(a, "out", WATCH + ".old0")), "exit %s %s" % (rc, err[-300:]))
    b = runs.fresh("RB")
    rotating(b)
    p = runs.start(b, flags + ["--checkpoint", "100"])
    hit = poll(lambda: size(os.path.join(b, "out", WATCH)) > 100000, p)
    p.send_signal(signal.SIGKILL)
    p.wait()
    check("rotation: killed mid-run, before a periodic checkpoint", hit)
    # A refused resume (another plan) leaves everything as it found it: no archive, the checkpoint kept.
    changed = read(os.path.join(b, "plan.rql")).replace("STREAM joined", "STREAM joined2")
    with open(os.path.join(b, "changed.rql"), "w") as f:
        f.write(changed)
    before = hashes(os.path.join(b, "out"))
    rc, _, err = runs.run(b, flags + ["--checkpoint", "100", "--resume"], "changed.rql")
    check("rotation: a refused resume archives nothing and keeps the checkpoint",
          clean_error(rc) and hashes(os.path.join(b, "out")) == before, "exit %s %s" % (rc, err[-300:]))
    rc, o, err = runs.run(b, flags + ["--checkpoint", "100", "--resume"])
    check("rotation: resumed from the start's checkpoint", rc == 0 and "resumed plan.rql at slot 0 " in o,
          "exit %s: %s %s" % (rc, o[:200], err[-300:]))
    check_same("rotation: the archived session equals the uninterrupted run's", os.path.join(a, "out"),
               os.path.join(b, "out"))


def records(d, stream, bits=1):
    """The INTEGER values of a one-field stream, None where its .meta says NULL."""
    raw = read(os.path.join(d, stream), True)
    vals = list(struct.unpack("<%di" % (len(raw) // 4), raw[:len(raw) // 4 * 4]))
    meta = read(os.path.join(d, stream + ".meta"), True)[8:]
    E, nulls = 17 + (bits + 7) // 8, []
    for at in range(0, len(meta) - E + 1, E):  # entries: gap flag, count, bits, bitmap (1 = NULL)
        if not meta[at]:  # a gap entry marks missing time, not records
            nulls += [bool(meta[at + 17] & 1)] * struct.unpack_from("<Q", meta, at + 1)[0]
    return [None if i < len(nulls) and nulls[i] else v for i, v in enumerate(vals)], len(raw) % 4 == 0


def clocked_case(runs, supported, m=300):
    """Clocked, 10 ms a slot: stopped with SIGTERM after >= 50 records, down
    for >= 0.2 s, resumed with -m M. The slots due while it was down are run
    late, the file read on: the records are those of an offline -m M run,
    none written twice, none lost, none NULL."""
    off = runs.fresh("C-offline", "clock.rql")
    rc, _, err = runs.run(off, ["-f", "-k", "-r", "-m", str(m)], "clock.rql")
    want, whole = records(os.path.join(off, "out"), "seen")
    check("clocked: offline -m %d reads 1, 2, 3, ..." % m, rc == 0 and whole and want == list(range(1, len(want) + 1)),
          "exit %s %s" % (rc, err[-300:]))
    if not supported:
        return
    c = runs.fresh("C", "clock.rql")
    out = os.path.join(c, "out")
    p = runs.start(c, ["-k", "-r", "-m", "100", "--checkpoint", "0.05"], "clock.rql")
    hit = poll(lambda: size(os.path.join(out, "seen")) >= 50 * 4, p)
    p.send_signal(signal.SIGTERM)
    rc = wait(p)
    stopped = time.monotonic()
    check("clocked: SIGTERM after 50 records stops it cleanly", hit and rc == 0, "exit %s" % rc)
    first, _ = records(out, "seen")
    while time.monotonic() < stopped + 0.2:  # down for at least 20 slots
        time.sleep(0.01)
    rc, o, err = runs.run(c, ["-k", "-r", "-v", "-m", str(m), "--checkpoint", "0.05", "--resume"], "clock.rql")
    check("clocked: resumed run exits 0 and says so", rc == 0 and re.search(r"^resumed clock.rql at slot ", o, re.M), "exit %s: %s %s" %
          (rc, o[:200], err[-300:]))
    missed = re.search(r"resume: (\d+) slots were due while the engine was down", o)
    check("clocked: -v counts the slots due while it was down (>= 18)", missed and int(missed.group(1)) >= 18,
          o[-400:])
    got, whole = records(out, "seen")
    check("clocked: the records before the stop kept", got[:len(first)] == first)
    check("clocked: the records of an offline -m %d run (%d), none twice, none lost, none NULL" % (m, len(want)),
          whole and got == want,
          "%d records, %d NULL, first difference at %s" %
          (len(got), got.count(None), next((i for i, (x, y) in enumerate(zip(got, want)) if x != y), "-")))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("xretractor")
    ap.add_argument("--mode", choices=["jit", "vm", "both"], default="both")
    ap.add_argument("--kills", type=int, default=30)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--keep", default=None)
    o = ap.parse_args()
    xr = os.path.abspath(o.xretractor)
    seed = o.seed if o.seed is not None else random.randrange(1 << 30)
    print("resume-kill: seed %d (rerun: --seed %d)" % (seed, seed), flush=True)
    rng = random.Random(seed)
    if o.keep:
        os.makedirs(o.keep, exist_ok=True)
        work = tempfile.mkdtemp(prefix="resume-kill.", dir=o.keep)
    else:
        work = tempfile.mkdtemp(prefix="resume-kill.")
    helptext = subprocess.run([xr, "--help"], capture_output=True, text=True).stdout
    supported = "--resume" in helptext and "--checkpoint" in helptext
    check("%s has --resume and --checkpoint" % xr, supported)
    runs = Runs(xr, work)
    try:
        refs = [per_mode(runs, mode, o.kills, rng, supported) for mode in
                (["jit", "vm"] if o.mode == "both" else [o.mode])]
        if supported and refs[0][0]:
            extra_cases(runs, *refs[0])  # once, in the first mode
            hostile_checkpoints(runs, refs[0][1])
            rotation_case(runs, refs[0][1])
        clocked_case(runs, supported)
    except Exception as e:  # a stuck state or a missing file: a failure, not a traceback only
        check("no unexpected error", False, repr(e))
    finally:
        for p in runs.procs:  # whatever went wrong, no engine is left running
            if p.poll() is None:
                p.kill()
                p.wait()
        if o.keep:
            print("resume-kill: files kept in " + work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    print("resume-kill: %d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
