#!/usr/bin/env python3
"""Checks a run of the QRS detector (rec205-detect.rql, VOLATILE removed):
every stored RATIONAL has a positive denominator and is in lowest terms;
mwi and mwi_thr are each the RATIONAL nearest to the exact average of the
stored records they average (Python fractions; the nearest is checked
through its neighbours among the representable fractions); and mwi, mwi_thr
and detect_out agree with a float64 computation of the same formulas within
1e-6 (relative, or absolute below 1).

usage: check_qrs.py STORAGE_DIR SAMPLES_BIN BP_COEF D_COEF [--show N]"""
import math
from fractions import Fraction
import os
import re
import struct
import sys

SIZES = {"BYTE": 1, "INTEGER": 4, "UINT": 4, "RATIONAL": 8, "FLOAT": 4, "DOUBLE": 8}


def fields(desc):
    out = []
    for m in re.finditer(r"(BYTE|INTEGER|UINT|RATIONAL|FLOAT|DOUBLE|STRING)\s+(\S+)(?:\s+(\d+))?", open(desc).read()):
        t, name, n = m.group(1), m.group(2), int(m.group(3) or 1)
        if t == "STRING":
            raise SystemExit(f"{desc}: STRING not expected")
        out.append((t, name, n))
    return out


def records(storage, stream):
    fl = fields(os.path.join(storage, stream + ".desc"))
    size = sum(SIZES[t] * n for t, _, n in fl)
    data = open(os.path.join(storage, stream), "rb").read()
    recs = []
    for off in range(0, len(data) - size + 1, size):
        r, p = [], off
        for t, _, n in fl:
            for _ in range(n):
                if t == "RATIONAL":
                    r.append(("R",) + struct.unpack_from("<ii", data, p))
                elif t in ("INTEGER",):
                    r.append(struct.unpack_from("<i", data, p)[0])
                elif t == "UINT":
                    r.append(struct.unpack_from("<I", data, p)[0])
                elif t == "BYTE":
                    r.append(data[p])
                elif t == "FLOAT":
                    r.append(struct.unpack_from("<f", data, p)[0])
                else:
                    r.append(struct.unpack_from("<d", data, p)[0])
                p += SIZES[t]
        recs.append(r)
    return recs


def value(v):
    return v[1] / v[2] if isinstance(v, tuple) else float(v)


LIM = 2**31 - 1


def neighbour(p, q, above):
    """The fraction next to p/q (p >= 0, reduced) among a/b with 0 <= a, b <= LIM."""
    if q == 1:
        if above:
            if p >= LIM:
                return None
            d = LIM if p == 0 else min(LIM, (LIM - 1) // p)
            return Fraction(p * d + 1, d)
        if p == 0:
            return None
        d = min(LIM, (LIM + 1) // p)
        return Fraction(p * d - 1, d)
    inv = pow(p, -1, q)
    d0 = (q - inv) % q if above else inv
    c0 = (1 + p * d0) // q if above else (p * d0 - 1) // q
    k = (LIM - d0) // q
    if p > 0:
        k = min(k, (LIM - c0) // p)
    return Fraction(c0 + k * p, d0 + k * q)


def is_nearest(x, p, q):
    """Whether p/q is the RATIONAL the rule makes of x (ties: smaller denominator, then toward zero)."""
    if (p < 0) != (x < 0) and p != 0:
        return False
    ax, ap = abs(x), abs(p)
    if ax >= LIM:
        return ap == LIM and q == 1
    dist = abs(ax - Fraction(ap, q))
    for above in (False, True):
        g = neighbour(ap, q, above)
        if g is None:
            continue
        dg = abs(ax - g)
        if dg < dist or (dg == dist and (g.denominator < q or (g.denominator == q and g.numerator < ap))):
            return False
    return True


def exact_averages(storage, src, stream, width):
    """Stored records of `stream` against the exact average of `width` stored records of `src`."""
    xs = [Fraction(v[1], v[2]) for (v,) in records(storage, src)]
    out = records(storage, stream)
    bad = 0
    total = sum(xs[:width - 1], Fraction(0))
    for k, (v,) in enumerate(out):
        t = k + width - 1
        if t >= len(xs):
            break
        total += xs[t]
        if t >= width:
            total -= xs[t - width]
        if not is_nearest(total / width, v[1], v[2]):
            if bad < 10:
                print(f"{stream} record {k}: {v[1]}/{v[2]} is not the nearest to {total / width}")
            bad += 1
    return bad, len(out)


def main():
    storage, samples, bpc, dc = sys.argv[1:5]
    show = int(sys.argv[sys.argv.index("--show") + 1]) if "--show" in sys.argv else 0
    bad = 0
    rationals = 0
    for name in sorted(os.listdir(storage)):
        if not name.endswith(".desc") or not os.path.exists(os.path.join(storage, name[:-5])):
            continue
        stream = name[:-5]
        if not any(t == "RATIONAL" for t, _, _ in fields(os.path.join(storage, name))):
            continue
        for k, r in enumerate(records(storage, stream)):
            for v in r:
                if isinstance(v, tuple):
                    rationals += 1
                    _, p, q = v
                    if q <= 0 or math.gcd(p, q) != 1 or p == -2**31:
                        if bad < 10:
                            print(f"{stream} record {k}: invalid rational {p}/{q}")
                        bad += 1
    exact_checked = 0
    for src, stream, width in (("sq_out", "mwi", 30), ("mwi", "mwi_thr", 180)):
        b, n_ = exact_averages(storage, src, stream, width)
        bad += b
        exact_checked += n_
    raw = open(samples, "rb").read()
    mlii = [struct.unpack_from("<ii", raw, 8 * i)[0] for i in range(len(raw) // 8)]
    v1 = [struct.unpack_from("<ii", raw, 8 * i)[1] for i in range(len(raw) // 8)]
    c = [int(x) for x in open(bpc).read().split()][:25]
    d = [int(x) for x in open(dc).read().split()][:5]
    n = len(mlii)
    bp = [math.nan] * n
    for t in range(24, n):
        bp[t] = sum(mlii[t - i] * c[i] for i in range(25)) / 1000
    dd = [math.nan] * n
    for t in range(28, n):
        dd[t] = sum(bp[t - i] * d[i] for i in range(5))
    sq = [x * x / 1000 for x in dd]
    mwi = [math.nan] * n
    for t in range(57, n):
        mwi[t] = sum(sq[t - i] for i in range(30)) / 30
    thr = [math.nan] * n
    for t in range(236, n):
        thr[t] = sum(mwi[t - i] for i in range(180)) / 180

    def agree(got, want):
        return abs(got - want) <= 1e-6 * max(abs(want), 1.0)

    compared = 0
    for stream, origin, model in (("mwi", 57, lambda t: [mwi[t]]), ("mwi_thr", 236, lambda t: [thr[t]]),
                                  ("detect_out", 236,
                                   lambda t: [mlii[t] - 900, v1[t] - 900, (mwi[t] - 2 * thr[t]) * 5])):
        recs = records(storage, stream)
        if not recs:
            print(f"{stream}: no records")
            bad += 1
        for k, r in enumerate(recs):
            t = origin + k
            if t >= n:
                break
            want = model(t)
            for i, (g, w) in enumerate(zip(r, want)):
                compared += 1
                if not agree(value(g), w):
                    if bad < 10:
                        print(f"{stream} record {k} [{i}]: {g} = {value(g)!r}, float64 gives {w!r}")
                    bad += 1
        if stream == "detect_out" and show:
            print("record  sample  detect_out[2] (stored)        value            float64")
            for k in range(min(show, len(recs))):
                g = recs[k][2]
                print(f"{k:6d}  {origin + k:6d}  {g[1]:>12d}/{g[2]:<12d} {value(g):16.6f} {model(origin + k)[2]:16.6f}")
    print(f"{rationals} stored rationals checked, {exact_checked} averages checked against the exact model, "
          f"{compared} values compared with float64, {bad} bad")
    return 1 if bad or compared == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
