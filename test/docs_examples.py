#!/usr/bin/env python3
"""Checks the examples of the given docs.

Every ```rql block must compile (`xretractor -c` exits 0). A block may be
preceded by ```data FILE blocks (the files it reads) and followed by
```output STREAM blocks (the records xtrdb lists for that stream); then it is
also run, offline for `-m N` slots as its fence says (```rql -m N), once on
the JIT and once on the VM (--interpret), and every stream listed must hold
exactly those records in both runs.

Usage: docs_examples.py XRETRACTOR XTRDB DOC.md...
"""
import os
import re
import subprocess
import sys
import tempfile


def blocks(text):
    """(kind, argument, body) of every fenced block of a known kind."""
    out, cur = [], None
    for line in text.splitlines():
        if cur is None:
            m = re.match(r"^```(rql|data|output)(?: +(.*))?$", line)
            if m:
                cur = [m.group(1), (m.group(2) or "").strip(), []]
        elif line == "```":
            out.append((cur[0], cur[1], "\n".join(cur[2]) + "\n"))
            cur = None
        else:
            cur[2].append(line)
    return out


def examples(text):
    """Groups: the data before an rql block, the block, the outputs after it."""
    group, data = [], []
    for kind, arg, body in blocks(text):
        if kind == "data":
            data.append((arg, body))
        elif kind == "rql":
            group.append({"query": body, "run": arg, "data": data, "outputs": []})
            data = []
        elif group:
            group[-1]["outputs"].append((arg, body))
    return group


def listed(xtrdb, cwd, stream, count):
    cmds = "open %s\nlist %d\nquit\n" % (stream, count)
    # The run's own TMPDIR: xtrdb must not meet another engine serving on the machine.
    env = dict(os.environ, TMPDIR=cwd)
    r = subprocess.run([xtrdb, "-n"], input=cmds, capture_output=True, text=True, cwd=cwd, env=env, timeout=60)
    return [l for l in r.stdout.splitlines() if l.startswith("{")]


def check(xr, xtrdb, name, ex):
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, TMPDIR=d)
        for fname, body in ex["data"]:
            with open(os.path.join(d, fname), "w") as f:
                f.write(body)
        q = os.path.join(d, "q.rql")
        with open(q, "w") as f:
            f.write(ex["query"])
        r = subprocess.run([xr, "-c", "q.rql"], capture_output=True, text=True, cwd=d, env=env, timeout=60)
        if r.returncode != 0:
            return "does not compile:\n" + ex["query"] + r.stderr
        if not ex["outputs"]:
            return None
        for mode in ([], ["--interpret"]):
            args = [xr, "q.rql", "-f", "-r"] + ex["run"].split() + mode
            r = subprocess.run(args, capture_output=True, text=True, cwd=d, env=env, timeout=120)
            if r.returncode != 0:
                return "run %s failed (%d):\n%s" % (" ".join(args[1:]), r.returncode, r.stderr)
            for stream, want in ex["outputs"]:
                want = [l for l in want.splitlines() if l.strip()]
                got = listed(xtrdb, d, stream, len(want) + int(os.environ.get("RDB_DOCS_EXTRA", "2")))
                if got != want:
                    return "%s %s: stream %s holds\n  %s\nexpected\n  %s" % (
                        name, " ".join(mode) or "(JIT)", stream, "\n  ".join(got), "\n  ".join(want))
    return None


def main():
    xr, xtrdb, docs = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), sys.argv[3:]
    ok = bad = ran = 0
    for doc in docs:
        with open(doc) as f:
            exs = examples(f.read())
        for i, ex in enumerate(exs, 1):
            name = "%s example %d" % (os.path.basename(doc), i)
            err = check(xr, xtrdb, name, ex)
            if err:
                bad += 1
                print("FAIL " + name + ": " + err)
            else:
                ok += 1
                ran += bool(ex["outputs"])
    print("%d passed, %d failed (%d run and checked)" % (ok, bad, ran))
    sys.exit(0 if bad == 0 and ok > 0 else 1)


if __name__ == "__main__":
    main()
