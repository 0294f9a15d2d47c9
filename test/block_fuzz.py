#!/usr/bin/env python3
"""Differential fuzz of block execution (test/block_fuzz.sh runs it).

A fixed-seed sample of generated query sets (windows with k > 1, k > |w| and
negative w; reducers over BYTE, INTEGER, UINT near 2^31 and 2^32-1, RATIONAL,
FLOAT and DOUBLE; NULLs; chains window -> reducer -> window -> reducer; a
window read by two streams; > + # & % - over different intervals; streams
linked in the shapes the engine compiles as one loop; VOLATILE or not;
TEXTFILE and BINFILE sources, ONESHOT, --until-eof; runs of 5 to 3000 slots)
is run slot by slot (--threads 1 --block 1 --no-fuse --no-chains, the
reference) and in other combinations of --block (1 2 3 7 64 513 4096,
default), window fusion on/off, --threads 1/2 (two threads on optimised code
from the start, where chains run) and JIT/--interpret. Every artifact must be
byte-identical (.meta after its 8-byte creation time).

usage: block_fuzz.py XRETRACTOR [--seed S] [--cases N] [--modes M] [--keep DIR] [-v]
Prints each failing case (query, inputs kept under --keep, differing files),
then "N passed, N failed"; exit status 1 when a case failed.
"""
import argparse, itertools, os, random, shutil, struct, subprocess, sys, tempfile
from fractions import Fraction as Fr

INTS = ["BYTE", "INTEGER", "UINT"]
ALL = ["BYTE", "INTEGER", "UINT", "FLOAT", "DOUBLE"]
INTERVALS = [Fr(1), Fr(1), Fr(1, 2), Fr(1, 3), Fr(2, 3), Fr(1, 4), Fr(3, 2), Fr(2), Fr(1, 5), Fr(1, 10), Fr(3, 10),
             Fr(1, 8), Fr(5, 4)]


def rat(x):
    x = Fr(x)
    return str(x.numerator) if x.denominator == 1 else "%d/%d" % (x.numerator, x.denominator)


def widest(ts):
    order = ["BYTE", "INTEGER", "UINT", "RATIONAL", "FLOAT", "DOUBLE", "STRING"]
    return max(ts, key=order.index) if ts else "INTEGER"


def value(rng, t, nullp):
    if rng.random() < nullp:
        return "NULL"
    r = rng.random()
    if t == "BYTE":
        if r < 0.05:
            return str(rng.choice([256, 300, -1, 1000]))
        return str(rng.choice([0, 1, 2, 127, 128, 254, 255]) if r < 0.3 else rng.randint(0, 255))
    if t == "INTEGER":
        if r < 0.2:
            return str(rng.choice([2147483647, -2147483648, 2147483646, -2147483647, 1073741824, -1073741824,
                                   2000000000, -2000000000, 2147483648, 99999999999]))
        if r < 0.25:
            return rng.choice(["x", "1e3", "+7", "-0", "12abc"])
        return str(rng.randint(-1000, 1000) if r < 0.7 else rng.randint(-10, 10))
    if t == "UINT":
        if r < 0.35:
            return str(rng.choice([4294967295, 4294967294, 2147483648, 2147483647, 2147483649, 3000000000,
                                   4000000000, 4294967296, -1]))
        return str(rng.randint(0, 5000))
    if t in ("FLOAT", "DOUBLE"):
        if r < 0.15:
            return rng.choice(["1e30", "-1e30", "3.4e38", "1e300", "-0.0", "0", "1e-30", "2.5", "-2.5", "0.1",
                               "16777217", "9007199254740993", "1e39"])
        return "%.*f" % (rng.randint(0, 6), rng.uniform(-1000, 1000))
    if t == "STRING":
        return '"%s"' % "".join(rng.choice("abcxyz") for _ in range(rng.randint(0, 6)))
    raise ValueError(t)


class Gen:
    def __init__(self, rng):
        self.rng = rng
        self.streams = {}  # name -> dict(interval, types, declared, volatile)
        self.order = []
        self.lines = []
        self.files = {}
        self.n = 0
        self.readers = {}
        self.views = False  # linked(): windows read far back too

    def name(self, p):
        self.n += 1
        return "%s%d" % (p, self.n)

    # ----------------------------------------------------------- sources
    def source(self, types=None, iv=None, nrec=None):
        rng = self.rng
        nm = self.name("src")
        nf = rng.choice([1, 1, 2, 2, 3, 4])
        prof = rng.random()
        given = types is not None
        if given:
            pass
        elif prof < 0.35:
            t0 = rng.choice(INTS)
            types = [t0] * nf
        elif prof < 0.55:
            t0 = rng.choice(ALL)
            types = [t0] * nf
        else:
            types = [rng.choice(ALL + INTS) for _ in range(nf)]
        if rng.random() < 0.05 and not given:  # the draw stays, so that seeds keep their cases
            types = types + ["STRING"]
        decl = []
        elems = []
        for i, t in enumerate(types):
            if t == "STRING":
                decl.append("f%d STRING[4]" % i)
                elems.append("STRING")
            elif rng.random() < 0.1:
                k = rng.randint(2, 4)
                decl.append("f%d %s[%d]" % (i, t, k))
                elems += [t] * k
            else:
                decl.append("f%d %s" % (i, t))
                elems.append(t)
        iv = iv if iv is not None else rng.choice(INTERVALS)
        nrec = nrec or rng.choice([1, 2, 3, 5, 10, 20, 50, 200])
        nullp = rng.choice([0, 0, 0.05, 0.2, 0.5, 0.95])
        lines = []
        for _ in range(nrec):
            lines.append(" ".join(value(rng, t, nullp) for t in elems))
        flags = ""
        if rng.random() < 0.2:
            flags = " ONESHOT"
        if rng.random() < 0.2:
            fn = nm + ".bin"
            self.files[fn] = binrecs(rng, elems, nrec)
            kind = "BINFILE"
        else:
            fn = nm + ".txt"
            self.files[fn] = "\n".join(lines) + "\n"
            kind = "TEXTFILE"
        self.lines.append("DECLARE %s STREAM %s, %s %s '%s'%s" % (", ".join(decl), nm, rat(iv), kind, fn, flags))
        self.streams[nm] = dict(interval=iv, types=elems, declared=True)
        self.order.append(nm)
        return nm

    # ----------------------------------------------------------- helpers
    def pick(self, numeric=False, prefer_recent=True):
        rng = self.rng
        cands = list(self.order)
        if numeric:
            c2 = [c for c in cands if all(t != "STRING" for t in self.streams[c]["types"])]
            if c2:
                cands = c2
        if prefer_recent and rng.random() < 0.5:
            cands = cands[-3:]
        return rng.choice(cands)

    def exprs(self, sname, types):
        """A SELECT list over the FROM result named sname with element types."""
        rng = self.rng
        W = len(types)
        num = [i for i, t in enumerate(types) if t != "STRING"]
        if not num or rng.random() < 0.35 or W == 0:
            return "*", list(types)
        out = []
        otypes = []
        for _ in range(rng.choice([1, 1, 2, 3, 4])):
            i = rng.choice(num)
            j = rng.choice(num)
            x = "%s[%d]" % (sname, i)
            y = "%s[%d]" % (sname, j)
            ti, tj = types[i], types[j]
            c = rng.choice([2, 3, 7, 10, 65536, 1000000, 2147483647, 0, -1])
            form = rng.randrange(19) if rng.random() < 0.8 else rng.randrange(100, 116)
            if form == 0:
                e, t = x, ti
            elif form == 1:
                e, t = "%s + %s" % (x, y), widest([ti, tj, "INTEGER"])
            elif form == 2:
                e, t = "%s * %d" % (x, c), widest([ti, "INTEGER"])
            elif form == 3:
                e, t = "%s / %d" % (x, rng.choice([2, 3, 7, 0, 10, -4])), "RATIONAL" if ti in INTS + ["RATIONAL"] else ti
            elif form == 4:
                e, t = "(%s + 1) / (%s)" % (x, y), "RATIONAL"
            elif form == 5:
                e, t = "to_float(%s)" % x, "FLOAT"
            elif form == 6:
                e, t = "to_double(%s)" % x, "DOUBLE"
            elif form == 7:
                e, t = "to_integer(%s)" % x, "INTEGER"
            elif form == 8:
                e, t = "null2zero(%s)" % x, ti
            elif form == 9:
                e, t = "isnull(%s)" % x, "INTEGER"
            elif form == 10:
                e, t = "Abs(%s)" % x, ti
            elif form == 11:
                e, t = "%s - %s" % (x, y), widest([ti, tj, "INTEGER"])
            elif form == 12:
                e, t = "%s / 3 + %s / 5" % (x, y), "RATIONAL"
            elif form == 13:
                e, t = "Sqrt(to_double(%s))" % x, "DOUBLE"
            elif form == 14:
                e, t = "%s + 2147483000" % x, "INTEGER"
            elif form == 15:
                e, t = "to_float(%s) / 3" % x, "FLOAT"
            elif form == 16:
                e, t = "-%s" % x, ti
            elif form == 17:
                e, t = "Floor(%s)" % x, ti
            elif form == 100:
                e, t = "%s / -1" % x, "RATIONAL"
            elif form == 101:
                e, t = "Ceil(to_double(%s) / 3)" % x, "DOUBLE"
            elif form == 102:
                e, t = "round(to_float(%s) / 7)" % x, "FLOAT"
            elif form == 103:
                e, t = "exp(to_double(%s))" % x, "DOUBLE"
            elif form == 104:
                e, t = "log(to_double(%s))" % x, "DOUBLE"
            elif form == 105:
                e, t = "to_string(%s:6)" % x, "STRING"
            elif form == 106:
                e, t = "Length(to_string(%s))" % x, "INTEGER"
            elif form == 107:
                e, t = "NOT %s" % x, "INTEGER"
            elif form == 108:
                e, t = "%s * %s * %s" % (x, x, y), widest([ti, tj, "INTEGER"])
            elif form == 109:
                e, t = "to_integer(to_double(%s) * 1000000 * 1000000)" % x, "INTEGER"
            elif form == 110:
                e, t = "%s - 4294967295" % x, widest([ti, "INTEGER"])
            elif form == 111:
                e, t = "to_double(%s) / 0" % x, "DOUBLE"
            elif form == 112:
                e, t = "Sqrt(to_float(%s))" % x, "FLOAT"
            elif form == 113:
                e, t = "trunc(to_double(%s) / 3)" % x, "DOUBLE"
            elif form == 114:
                e, t = "(%s / 3) * (%s / 7) / (%s + 1)" % (x, y, x), "RATIONAL"
            elif form == 115:
                e, t = "sin(to_double(%s))" % x, "DOUBLE"
            else:
                e, t = "%s * %s" % (x, y), widest([ti, tj, "INTEGER"])
            out.append(e)
            otypes.append(t)
        return ", ".join(out), otypes

    def add_select(self, frm, interval, types, volatile=None, name=None, plain=None, prefix="s"):
        rng = self.rng
        nm = name or self.name(prefix)
        if plain is None:
            sel, otypes = self.exprs(nm, types)
        else:
            sel, otypes = plain, list(types) if plain == "*" else plain_types(plain, types)
        if volatile is None:
            volatile = rng.random() < 0.3
        self.lines.append("SELECT %s STREAM %s FROM %s%s" % (sel, nm, frm, " VOLATILE" if volatile else ""))
        self.streams[nm] = dict(interval=interval, types=otypes, declared=False, volatile=volatile)
        self.order.append(nm)
        return nm

    def kw(self):
        rng = self.rng
        k = rng.choice([1, 1, 1, 1, 2, 2, 3, 4, 5, 7, 9])
        r = rng.random()
        if r < 0.06:
            w = rng.choice([300, 513, 700, 1100])
        elif r < 0.1:
            k = rng.choice([64, 513, 600])
            w = rng.choice([1, 3, 600])
        else:
            w = rng.choice([1, 2, 3, 3, 4, 5, 8, 10, 17, 33])
        if rng.random() < 0.3:
            w = -w
        if rng.random() < 0.15:  # k > |w|
            k = abs(w) + rng.randint(1, 4)
        return k, w

    # ----------------------------------------------------------- statements
    def window(self, p=None, volatile=None):
        rng = self.rng
        p = p or self.pick()
        st = self.streams[p]
        k, w = self.kw()
        F = max(len(st["types"]), 1)
        iv = st["interval"] * k / F
        t = widest([x for x in st["types"]])
        nm = self.add_select("%s@(%d,%d)" % (p, k, w), iv, [t] * abs(w),
                             volatile=(rng.random() < 0.75) if volatile is None else volatile,
                             plain="*" if rng.random() < 0.85 else None, prefix="w")
        return nm

    def reducer(self, p=None):
        rng = self.rng
        p = p or self.pick(numeric=True)
        st = self.streams[p]
        red = rng.choice(["avg", "min", "max", "sumc", "sumc", "avg"])
        t = "RATIONAL" if all(x in INTS + ["RATIONAL"] for x in st["types"]) else widest(st["types"])
        if red in ("min", "max") and t == "RATIONAL" and all(x in INTS for x in st["types"]):
            t = "RATIONAL"
        nm = self.name("r")
        r = rng.random()
        if r < 0.5:
            sel = "*"
        elif r < 0.7:
            sel = "%s[0]" % nm
        elif r < 0.8:
            sel = "to_double(%s[0])" % nm
        elif r < 0.9:
            sel = "%s[0] * 3, %s[0] / 2" % (nm, nm)
        else:
            sel = "to_integer(%s[0])" % nm
        otypes = [t] * (1 if "," not in sel else 2)
        self.add_select("%s.%s" % (p, red), st["interval"], [t], name=nm, plain=sel if sel != "*" else "*",
                        prefix="r")
        self.streams[nm]["types"] = otypes
        return nm

    def win_red(self, p=None):
        w = self.window(p)
        return self.reducer(w)

    def chain(self):
        p = self.pick(numeric=True)
        r1 = self.win_red(p)
        r2 = self.win_red(r1)
        if self.rng.random() < 0.4:
            self.win_red(r2)

    def linked(self, a):
        """Streams each read by the next alone, in the shapes the engine runs as one
        compiled loop (a chain): INTEGER maps, a join with a slower source, folds
        of INTEGER records, windows @(1,w) and fused windows folded as they slide."""
        rng = self.rng
        cur, iv = a, self.streams[a]["interval"]
        vol = lambda: " VOLATILE" if rng.random() < 0.5 else ""
        for _ in range(rng.choice([2, 3, 4, 5])):
            c = rng.random()
            nm = self.name("l")
            view = self.views and c < 0.4
            if c < 0.3 and not view:  # a map, NULL where the divisor is zero
                m = rng.choice([2, 3, 5])
                e = rng.choice(["%s[0] * %d + %d" % (cur, rng.randint(-9, 9), rng.randint(-99, 99)),
                                "%d / (%s[0] - %d * (%s[0] / %d))" % (rng.randint(1, 99), cur, m, cur, m),
                                "%s[0] - 1000000000" % cur, "%s[0] + 2000000000" % cur])
                self.lines.append("SELECT %s STREAM %s FROM %s%s" % (e, nm, cur, vol()))
            elif view:  # a window joined with a much slower source: read far back
                w = rng.randint(2, 30)
                k = self.source(types=["INTEGER"], iv=iv * rng.choice([300, 520]))
                self.lines.append("SELECT * STREAM %sw FROM %s@(1,%d) VOLATILE" % (nm, cur, w))
                self.lines.append("SELECT %sw[0] * 3 - %sw[%d] + %sw[%d] * %s[0] STREAM %s FROM %sw + %s%s" %
                                  (nm, nm, w - 1, nm, rng.randint(1, w - 1), k, nm, nm, k, vol()))
            elif c < 0.5:  # a materialised window and a map over it
                w = rng.randint(1, 9)
                self.lines.append("SELECT * STREAM %s FROM %s@(1,%d)" % (nm + "w", cur, w))
                self.lines.append("SELECT %sw[0] - %sw[%d] STREAM %s FROM %sw%s" % (nm, nm, w - 1, nm, nm, vol()))
            elif c < 0.75:  # a fused window folded as it slides
                w = rng.randint(1, 40)
                red = rng.choice(["avg", "sumc", "sumc"])
                self.lines.append("SELECT * STREAM %s FROM %s@(1,%d) VOLATILE" % (nm + "w", cur, w))
                self.lines.append("SELECT to_integer(%sw[0]) STREAM %s FROM %sw.%s%s" % (nm, nm, nm, red, vol()))
            else:  # a join with a slower source, then the fold of its record
                k = self.source(types=["INTEGER"], iv=iv * rng.choice([2, 4, 5]))
                self.lines.append("SELECT * STREAM %s FROM %s + %s%s" % (nm + "j", cur, k, vol()))
                red = rng.choice(["avg", "sumc", "min", "max"])
                self.lines.append("SELECT to_integer(%sj[0]) STREAM %s FROM %sj.%s%s" % (nm, nm, nm, red, vol()))
            self.streams[nm] = dict(interval=iv, types=["INTEGER"], declared=False)
            self.order.append(nm)
            cur = nm
        return cur

    def shared_window(self):
        rng = self.rng
        w = self.window(volatile=True)
        self.reducer(w)
        c = rng.random()
        if c < 0.4:
            self.reducer(w)
        elif c < 0.6:
            st = self.streams[w]
            self.add_select("%s>%d" % (w, rng.choice([1, 2, 5])), st["interval"], st["types"])
        elif c < 0.8:
            st = self.streams[w]
            self.add_select(w, st["interval"], st["types"])
        else:
            q = self.pick()
            self.addop(w, q)

    def addop(self, a=None, b=None):
        a = a or self.pick()
        b = b or self.pick()
        sa, sb = self.streams[a], self.streams[b]
        return self.add_select("%s+%s" % (a, b), min(sa["interval"], sb["interval"]), sa["types"] + sb["types"])

    def hashop(self):
        rng = self.rng
        a = self.pick()
        sa = self.streams[a]
        same = [c for c in self.order if self.streams[c]["types"] == sa["types"]]
        if rng.random() < 0.5 and len(same) > 1:
            b = rng.choice(same)
        else:
            r = sa["interval"] * rng.choice([Fr(1), Fr(2), Fr(3), Fr(3, 2)])
            b = self.add_select("%s-%s" % (a, rat(r)), r, sa["types"], plain="*")
        sb = self.streams[b]
        iv = sa["interval"] * sb["interval"] / (sa["interval"] + sb["interval"])
        n = max(len(sa["types"]), len(sb["types"]))
        ts = []
        for i in range(n):
            tt = [x[i] for x in (sa["types"], sb["types"]) if i < len(x)]
            ts.append(widest(tt))
        return self.add_select("%s#%s" % (a, b), iv, ts)

    def timemove(self):
        rng = self.rng
        a = self.pick()
        n = rng.choice([0, 1, 1, 2, 3, 5, 10, 100, 513, 600, 1000])
        if rng.random() < 0.08:
            n = rng.choice([1048600, 1100000])  # rings beyond 2^20 records: modulo positions
        sa = self.streams[a]
        return self.add_select("%s>%d" % (a, n), sa["interval"], sa["types"])

    def subtract(self):
        rng = self.rng
        a = self.pick()
        sa = self.streams[a]
        r = sa["interval"] * rng.choice([Fr(1), Fr(2), Fr(3), Fr(3, 2), Fr(5, 3), Fr(7, 2), Fr(10)])
        return self.add_select("%s-%s" % (a, rat(r)), r, sa["types"])

    def dehash(self):
        rng = self.rng
        a = self.pick()
        sa = self.streams[a]
        r = sa["interval"] * rng.choice([Fr(2), Fr(3), Fr(3, 2), Fr(4), Fr(1, 2), Fr(5, 2)])
        if r == sa["interval"]:
            r *= 2
        iv = sa["interval"] * r / abs(sa["interval"] - r)
        op = rng.choice(["&", "%"])
        return self.add_select("%s%s%s" % (a, op, rat(r)), iv, sa["types"])

    def nested(self):
        rng = self.rng
        a = self.pick()
        b = self.pick()
        sa, sb = self.streams[a], self.streams[b]
        c = rng.randrange(5)
        if c == 0:
            k, w = self.kw()
            F = len(sa["types"]) + len(sb["types"])
            iv = min(sa["interval"], sb["interval"]) * k / F
            t = widest(sa["types"] + sb["types"])
            return self.add_select("(%s+%s)@(%d,%d)" % (a, b, k, w), iv, [t] * abs(w))
        if c == 1:
            n = rng.choice([1, 2, 7])
            return self.add_select("(%s+%s)>%d" % (a, b, n), min(sa["interval"], sb["interval"]),
                                   sa["types"] + sb["types"])
        if c == 2:
            k, w = self.kw()
            F = max(len(sa["types"]), 1)
            iv = sa["interval"] * k / F
            r = iv * rng.choice([2, 3])
            iv2 = iv * r / abs(iv - r)
            return self.add_select("(%s@(%d,%d))&%s" % (a, k, w, rat(r)), iv2, [widest(sa["types"])] * abs(w))
        if c == 3:
            k, w = self.kw()
            F = max(len(sa["types"]), 1)
            iv = sa["interval"] * k / F
            return self.add_select("(%s@(%d,%d))>%d" % (a, k, w, rng.choice([1, 3])), iv,
                                   [widest(sa["types"])] * abs(w))
        n = max(len(sa["types"]), len(sb["types"]))
        ts = [widest([x[i] for x in (sa["types"], sb["types"]) if i < len(x)]) for i in range(n)]
        iv = sa["interval"] * sb["interval"] / (sa["interval"] + sb["interval"])
        return self.add_select("(%s#%s)-%s" % (a, b, rat(iv * 2)), iv * 2, ts)

    def plain(self):
        a = self.pick()
        sa = self.streams[a]
        return self.add_select(a, sa["interval"], sa["types"])

    def rational_producer(self):
        """A SELECT with several RATIONAL/INTEGER fields, then windows + reducers over it."""
        rng = self.rng
        a = self.pick(numeric=True)
        sa = self.streams[a]
        nm = self.name("p")
        num = [i for i, t in enumerate(sa["types"]) if t != "STRING"] or [0]
        F = rng.choice([1, 2, 3])
        kind = rng.choice(["div", "int", "uint", "mixed", "byte"])
        es, ts = [], []
        for f in range(F):
            i = rng.choice(num)
            x = "%s[%d]" % (nm, i)
            if kind == "div":
                es.append("%s / %d" % (x, rng.choice([3, 7, 2, 1000, -9]))); ts.append("RATIONAL")
            elif kind == "int":
                es.append("to_integer(%s)" % x); ts.append("INTEGER")
            elif kind == "uint":
                es.append("%s" % x); ts.append(sa["types"][i])
            elif kind == "byte":
                es.append("%s" % x); ts.append(sa["types"][i])
            else:
                c = rng.randrange(4)
                es.append(["%s / 3" % x, "to_integer(%s)" % x, "to_double(%s)" % x, x][c])
                ts.append(["RATIONAL", "INTEGER", "DOUBLE", sa["types"][i]][c])
        self.lines.append("SELECT %s STREAM %s FROM %s%s" % (", ".join(es), nm, a,
                                                               " VOLATILE" if rng.random() < 0.3 else ""))
        self.streams[nm] = dict(interval=sa["interval"], types=ts, declared=False)
        self.order.append(nm)
        self.win_red(nm)
        if rng.random() < 0.3:
            self.reducer(nm)
        return nm


def binval(rng, t):
    r = rng.random()
    if t == "BYTE":
        return bytes([rng.randrange(256)])
    if t == "INTEGER":
        v = rng.choice([2147483647, -2147483648, 0, -1, 1]) if r < 0.3 else rng.randint(-2000, 2000)
        return struct.pack("<i", v)
    if t == "UINT":
        v = rng.choice([4294967295, 2147483648, 2147483647, 3000000000]) if r < 0.35 else rng.randint(0, 5000)
        return struct.pack("<I", v)
    if t == "FLOAT":
        if r < 0.15:
            return rng.choice([b"\x00\x00\xc0\x7f", b"\x01\x00\x80\x7f", b"\x00\x00\x80\x7f", b"\x00\x00\x80\xff",
                               b"\x00\x00\x00\x80", b"\xff\xff\xff\xff", b"\x01\x00\x00\x00"])
        return struct.pack("<f", rng.uniform(-1e4, 1e4))
    if t == "DOUBLE":
        if r < 0.15:
            return rng.choice([struct.pack("<d", float("nan")), struct.pack("<d", float("inf")),
                               struct.pack("<d", -float("inf")), struct.pack("<d", -0.0),
                               b"\x01\x00\x00\x00\x00\x00\xf0\x7f", b"\xff" * 8, struct.pack("<d", 1e300)])
        return struct.pack("<d", rng.uniform(-1e6, 1e6))
    if t == "STRING":
        return bytes(rng.randrange(256) if rng.random() < 0.2 else rng.choice(b"abc\x00") for _ in range(4))
    raise ValueError(t)


def binrecs(rng, elems, nrec):
    out = b"".join(b"".join(binval(rng, t) for t in elems) for _ in range(nrec))
    if rng.random() < 0.2 and out:  # a trailing partial record
        out += out[:max(1, len(out) // nrec // 2)]
    if rng.random() < 0.03:
        out = b""
    return out


def plain_types(sel, types):
    return [widest(types)] * (sel.count(",") + 1)


def ok_interval(iv):
    return iv.denominator <= 600 and Fr(1, 400) <= iv <= 2000




def gen_case(rng, theme):
    """One query set: the theme's statements first, then a few random ones."""
    for _ in range(200):
        g = Gen(rng)
        if theme == "fused_uint":
            p = g.source(types=["UINT"])
            g.win_red(p)
            g.reducer(g.window(p, volatile=True))
        elif theme == "fused_int_multi":
            p = g.source(types=["INTEGER"] * rng.choice([2, 3]))
            g.win_red(p)
            g.win_red(p)
        elif theme == "byte":
            p = g.source(types=["BYTE"] * rng.choice([1, 2]))
            g.win_red(p)
        elif theme == "rational":
            g.source(types=["INTEGER", "INTEGER"])
            g.rational_producer()
        elif theme == "float":
            p = g.source(types=[rng.choice(["FLOAT", "DOUBLE"])] * rng.choice([1, 2]))
            g.win_red(p)
        elif theme == "chain":
            g.source(types=[rng.choice(INTS)])
            g.chain()
        elif theme == "shared":
            g.source(types=[rng.choice(INTS)] * rng.choice([1, 2]))
            g.shared_window()
        elif theme == "intervals":
            a = g.source(types=["INTEGER"], iv=Fr(1))
            b = g.source(types=["INTEGER"], iv=rng.choice([Fr(1, 2), Fr(1, 3)]))
            g.win_red(g.addop(a, b))
            g.hashop()
        elif theme == "operators":
            g.source()
            rng.choice([g.dehash, g.subtract, g.timemove, g.nested])()
            g.win_red()
        elif theme == "linked":
            g.linked(g.source(types=["INTEGER"]))
        elif theme == "view":  # chains whose window is read in its producer's ring
            g.views = True
            src = g.source(types=["INTEGER"], nrec=rng.choice([37, 200, 601]))
            a = g.name("l")
            g.lines.append("SELECT %s[0] * %d + %d STREAM %s FROM %s VOLATILE" %
                           (src, rng.randint(2, 9), rng.randint(-99, 99), a, src))
            g.streams[a] = dict(interval=g.streams[src]["interval"], types=["INTEGER"], declared=False)
            g.order.append(a)
            g.linked(a)
        elif theme == "mixed_byte":  # a window over INTEGER and BYTE fields
            p = g.source(types=["INTEGER", "BYTE"])
            g.add_select(p, g.streams[p]["interval"], g.streams[p]["types"], plain="*", volatile=False)
            g.win_red()
        else:
            raise ValueError(theme)
        acts = [(g.win_red, 20), (g.window, 6), (g.reducer, 6), (g.chain, 4), (g.shared_window, 6), (g.addop, 6),
                (g.hashop, 5), (g.timemove, 5), (g.subtract, 4), (g.dehash, 5), (g.nested, 5), (g.plain, 3),
                (g.rational_producer, 8)]
        fs, ws = zip(*acts)
        for _ in range(rng.choice([0, 1, 1, 2, 3])):
            rng.choices(fs, ws)[0]()
        if all(ok_interval(s["interval"]) for s in g.streams.values()):
            break
    files = dict(g.files)
    files["query.rql"] = "\n".join(g.lines) + "\n"
    m = rng.choice([5, 10, 50, 200, 513, 514, 1025, 3000])
    extra = ["--until-eof"] if rng.random() < 0.15 else []
    return dict(files=files, m=m, extra=extra)


THEMES = ["fused_uint", "fused_int_multi", "byte", "rational", "float", "chain", "shared", "intervals", "operators",
          "mixed_byte", "linked", "view"]
REF = ["--threads", "1", "--block", "1", "--no-fuse", "--no-chains"]
COMBOS = []
for b, fuse, th, interp in itertools.product([1, 2, 3, 7, 64, 513, 4096, None], [True, False], [1, 2], [False, True]):
    # Two threads: independent pipelines side by side from the first block.
    # Two threads also start on optimised code, where chains of streams run as one loop.
    a = ["--threads", str(th)] + (["--parallel"] if th == 2 else []) + (["--block", str(b)] if b is not None else []) + \
        ([] if fuse else ["--no-fuse"]) + (["--interpret"] if interp else ["--jit-tier", "optimised"] if th == 2 else [])
    if a != REF:
        COMBOS.append(a)


def write(d, files):
    os.makedirs(d, exist_ok=True)
    for n, t in files.items():
        with open(os.path.join(d, n), "wb") as f:
            f.write(t if isinstance(t, bytes) else t.encode())


def run(xr, d, files, m, args, extra, env):
    shutil.rmtree(d, ignore_errors=True)
    write(d, files)
    try:
        p = subprocess.run([xr, "query.rql", "--no-clock", "-m", str(m)] + extra + args, cwd=d, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60)
        return p.returncode, p.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired:
        return "timeout", ""


def artifacts(d, files):
    out = {}
    for root, _, fs in os.walk(d):
        for f in fs:
            rel = os.path.relpath(os.path.join(root, f), d)
            # A checkpoint names the run's options (these runs differ in them): test/resume_kill.py checks it.
            if rel in files or rel.endswith(".lock") or f.startswith(".retractor.checkpoint"):
                continue
            with open(os.path.join(root, f), "rb") as fh:
                b = fh.read()
            out[rel] = b[8:] if rel.endswith(".meta") else b
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("xretractor")
    ap.add_argument("--seed", type=int, default=20261201)
    ap.add_argument("--cases", type=int, default=30)
    ap.add_argument("--modes", type=int, default=6, help="mode combinations per case besides the reference")
    ap.add_argument("--keep", help="copy failing cases here")
    ap.add_argument("--themes", help="comma-separated: only these themes (default: all, in turn)")
    ap.add_argument("-v", action="store_true")
    o = ap.parse_args()
    themes = o.themes.split(",") if o.themes else THEMES
    xr = os.path.abspath(o.xretractor)
    work = tempfile.mkdtemp(prefix="block_fuzz.")
    # A private temp directory: the engine's instance lock and socket live there,
    # so a run never collides with another engine of this user.
    env = dict(os.environ, TMPDIR=os.path.join(work, "tmp"))
    os.makedirs(env["TMPDIR"])
    passed = failed = 0
    try:
        for i in range(o.cases):
            theme = themes[i % len(themes)]
            case = None
            for attempt in range(50):
                c = gen_case(random.Random("%d/%d/%d" % (o.seed, i, attempt)), theme)
                d = os.path.join(work, "c")
                shutil.rmtree(d, ignore_errors=True)
                write(d, c["files"])
                p = subprocess.run([xr, "-c", "query.rql"], cwd=d, env=env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
                if p.returncode == 0:
                    case = c
                    break
            if case is None:
                print("case %d (%s): no compiling query generated" % (i, theme))
                failed += 1
                continue
            files, m, extra = case["files"], case["m"], case["extra"]
            rrc, rerr = run(xr, os.path.join(work, "ref"), files, m, REF, extra, env)
            ref = artifacts(os.path.join(work, "ref"), files)
            problems = []
            if rrc != 0:
                problems.append("reference: exit %s %s" % (rrc, rerr.strip()[:200]))
            for k in range(o.modes):
                args = COMBOS[(i * o.modes + k) % len(COMBOS)]
                rc, err = run(xr, os.path.join(work, "alt"), files, m, args, extra, env)
                if rc != rrc:
                    problems.append("%s: exit %s, reference %s %s" % (" ".join(args), rc, rrc, err.strip()[:200]))
                    continue
                alt = artifacts(os.path.join(work, "alt"), files)
                diff = sorted(f for f in set(ref) | set(alt) if ref.get(f) != alt.get(f))
                if diff:
                    problems.append("%s: differs: %s" % (" ".join(args), " ".join(diff)))
            if problems:
                failed += 1
                print("FAIL case %d (%s), -m %d %s" % (i, theme, m, " ".join(extra)))
                print("  " + files["query.rql"].strip().replace("\n", "\n  "))
                for p in problems:
                    print("  " + p)
                if o.keep:
                    write(os.path.join(o.keep, "case%d" % i), files)
            else:
                passed += 1
                if o.v:
                    print("ok case %d (%s), -m %d" % (i, theme, m))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
