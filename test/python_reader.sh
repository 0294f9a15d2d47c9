#!/usr/bin/env bash
# python/retractor_artifacts.py against the engine's own reader: real artifacts
# are made by running xretractor (and xtrdb) over small TEXTFILE/BINFILE
# sources, then every record the Python reader returns is compared value by
# value with what `xtrdb list` prints for the same files: NULLs (division by
# zero, NULL tokens, a FLOAT window), RETENTION segments (some dropped),
# DIRECT/POSIX profiles, RATIONAL reducers, arrays, ROTATION archives (each
# read with its own descriptor after a layout change),
# .shadow/.meta.shadow updates, corrupt files (errors naming file and offset),
# ranged reads against whole ones, and 3 records printed from a 10 GiB sparse
# data file in bounded memory.
# usage: python_reader.sh BUILD_DIR        (PYTHON: the interpreter, default /usr/bin/python3)
set -u
[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR"; exit 2; }
B=$(cd "$1" && pwd) || exit 2
XR=$B/tools/xretractor XT=$B/tools/xtrdb
PY=${PYTHON:-/usr/bin/python3}
export PYTHONDONTWRITEBYTECODE=1  # no __pycache__ in the source tree
here=$(cd "$(dirname "$0")" && pwd)
MOD=$here/../python/retractor_artifacts.py
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; [ -n "${2:-}" ] && [ -f "$2" ] && sed -n 1,15p "$2"; }
finish() { echo "$pass passed, $fail failed"; [ "$fail" = 0 ]; exit $?; }
"$PY" -c 'import numpy' 2>/dev/null || { echo "FAIL numpy missing for $PY (apt-get install python3-numpy)"; fail=1; finish; }
[ -x "$XR" ] && [ -x "$XT" ] || { echo "FAIL no $XR or $XT"; fail=1; finish; }

tmp=$(mktemp -d /tmp/rdb_pyreader.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP  # through the EXIT trap: the 10 GiB file goes too

# engine DIR QUERY SLOTS: one xretractor run in DIR with a TMPDIR of its own (the instance lock).
engine() {
  mkdir -p "$1/tmp"
  (cd "$1" && TMPDIR=$1/tmp "$XR" "$2" -k -f -r -m "$3" >run.out 2>run.err)
}
# xtrdb DIR < script: xtrdb in DIR, batch mode, its own TMPDIR.
xtrdb() {
  mkdir -p "$1/tmp"
  (cd "$1" && TMPDIR=$1/tmp "$XT" -n 2>&1)
}

# The value-by-value comparison: Python's records and NULL flags against xtrdb's text.
cat >"$tmp/cmp.py" <<'EOF'
"""cmp.py MODE ...: exits 1 on the first differences (printed).
  same PATH XTRDB_OUT [--no-shadow]   every record, every field, NULL flags too
  cli PYTHON_CLI_OUT XTRDB_OUT         the CLI's text equals xtrdb's record lines
  flat PATH PERIOD XTRDB_OUT           a declared array source (PATH) against xtrdb's flat copy
  column PATH XTRDB_OUT NAME           PATH's only field against field NAME of the copy, by global index"""
import math
import re
import sys
from fractions import Fraction

sys.path.insert(0, sys.argv[1])
import retractor_artifacts as ra

mode, args = sys.argv[2], sys.argv[3:]
errors = []


def xtrdb_lines(path):
    recs, fetch = [], 0
    for line in open(path, encoding="utf-8", errors="surrogateescape"):
        line = line.rstrip("\n")
        if line.startswith("{"):
            recs.append(line)
        elif "fetch error" in line:
            fetch += 1
    return recs, fetch


def split(line, names):
    """'{ a:1 b:x y }' -> ['1', 'x y'] for the field names in order."""
    body, out, at = line[1:-2], [], 0
    starts = []
    for n in names:
        k = body.index(" " + n + ":", at)
        starts.append((k, k + len(n) + 2))
        at = k + len(n) + 2
    for j, (k, v) in enumerate(starts):
        out.append(body[v : starts[j + 1][0]] if j + 1 < len(starts) else body[v:])
    return out


def element_ok(t, v, tok):
    if t in ("BYTE", "INTEGER", "UINT"):
        return int(tok) == int(v)
    if t in ("FLOAT", "DOUBLE"):
        x, y = float(tok), float(v)
        if math.isnan(x) or math.isnan(y):
            return math.isnan(x) and math.isnan(y)
        return x == y or math.isclose(x, y, rel_tol=5e-6)  # xtrdb prints 6 significant digits
    if t == "RATIONAL":
        return int(v["den"]) > 0 and Fraction(tok) == Fraction(int(v["num"]), int(v["den"]))
    raise AssertionError(t)


def values(e, v):
    """One field's elements as (type, value) pairs; STRING is one element."""
    if e.type == "STRING":
        return [("STRING", bytes(v).split(b"\0", 1)[0].decode("utf-8", "surrogateescape"))]
    return [(e.type, x) for x in (v if e.count > 1 else [v])]


def field_ok(e, v, tok):
    vals = values(e, v)
    if e.type == "STRING":
        return tok == vals[0][1]
    toks = tok.split(" ")
    return len(toks) == len(vals) and all(element_ok(t, x, k) for (t, x), k in zip(vals, toks))


def same(path, xt, shadow=True):
    s = ra.open_stream(path, shadow=shadow)
    lines, fetch = xtrdb_lines(xt)
    dfs = s.descriptor.data_fields
    if s.nulls.shape != (len(s.records), len(dfs)):
        errors.append(f"nulls shape {s.nulls.shape} for {len(s.records)} records of {len(dfs)} fields")
    if fetch != s.first:
        errors.append(f"xtrdb could not fetch {fetch} records, Python starts at global index {s.first}")
    if len(lines) != len(s.records):
        errors.append(f"xtrdb listed {len(lines)} records, Python read {len(s.records)}")
    if len(s.records) == 0:
        errors.append("no records at all")
    for i, line in enumerate(lines[: len(s.records)]):
        toks = split(line, [e.name for e in dfs])
        for k, (e, tok) in enumerate(zip(dfs, toks)):
            if (tok == "null") != bool(s.nulls[i, k]):
                errors.append(f"record {s.first + i} {e.name}: xtrdb {tok!r}, Python null={bool(s.nulls[i, k])}")
            elif tok != "null" and not field_ok(e, s.records[i][k], tok):
                errors.append(f"record {s.first + i} {e.name}: xtrdb {tok!r}, Python {s.records[i][k]!r}")
    return s


if mode == "same":
    same(args[0], args[1], shadow="--no-shadow" not in args)
elif mode == "cli":
    py = open(args[0], encoding="utf-8", errors="surrogateescape").read().splitlines()
    xt, _ = xtrdb_lines(args[1])
    if py != xt:
        for i, (a, b) in enumerate(zip(py + [""] * len(xt), xt + [""] * len(py))):
            if a != b:
                errors.append(f"line {i}: python {a!r} xtrdb {b!r}")
elif mode == "flat":
    s = ra.open_stream(args[0])
    period = int(args[1])
    lines, _ = xtrdb_lines(args[2])
    if len(s.records) != period:
        errors.append(f"{args[0]}: {len(s.records)} records, the file holds {period}")
    if not lines:
        errors.append("xtrdb listed nothing")
    for i, line in enumerate(lines):
        flat = [tv for e, v in zip(s.descriptor.data_fields, s.records[i % period]) for tv in values(e, v)]
        toks = split(line, [f"arr_{j}" for j in range(len(flat))])
        for j, ((t, v), tok) in enumerate(zip(flat, toks)):
            if not element_ok(t, v, tok):
                errors.append(f"copy record {i} element {j}: xtrdb {tok!r}, Python {v!r} (source record {i % period})")
elif mode == "column":
    s = ra.open_stream(args[0])
    lines, _ = xtrdb_lines(args[1])
    e = s.descriptor.data_fields[0]
    if s.first == 0 or len(s.records) == 0:
        errors.append(f"expected dropped segments and kept records, got first={s.first} n={len(s.records)}")
    for i in range(len(s.records)):
        g = s.first + i
        if g >= len(lines):
            errors.append(f"record {g} beyond the copy's {len(lines)}")
            break
        m = re.search(" " + re.escape(args[2]) + r":(\S+)", lines[g])
        tok = m.group(1) if m else None
        if tok is None or not element_ok(e.type, s.records[i][0], tok):
            errors.append(f"record {g}: copy {tok!r}, Python {s.records[i][0]!r}")
for m in errors[:8]:
    print("   ", m)
if len(errors) > 8:
    print(f"    ... {len(errors) - 8} more")
sys.exit(1 if errors else 0)
EOF
cmp_py() { "$PY" "$tmp/cmp.py" "$here/../python" "$@"; }
cli() { "$PY" "$MOD" "$@"; }

# ================================================================ 1. engine streams
w=$tmp/run1
mkdir -p "$w/out"
cat >"$w/a.txt" <<'EOF'
5 1 9 3 250 3.14159265 2.718281828459 "ab"
2 0 4 7 7 -2.25 NULL "hello"
7 3 6 NULL 0 -0.0 1e300 NULL
1 5 2 4000000000 12 NULL -3.75 "a b c"
9 NULL 8 2 255 NULL 2.5e-7 "sixsix"
EOF
cat >"$w/q.rql" <<'EOF'
STORAGE 'out'
DECLARE a INTEGER[3], u UINT, b BYTE, f FLOAT, g DOUBLE, s STRING[6] STREAM src, 1 TEXTFILE 'a.txt'
SELECT * STREAM copy FROM src
SELECT 100/src[1], src[0] * 2, src[6] * 3, to_string(src[0] : 4) + 'x', src[3] + 1 STREAM mix FROM src
SELECT src[0], src[1], src[2] STREAM ints FROM src
SELECT * STREAM avgs FROM AVG(ints@(1,4))
SELECT src.f STREAM fl FROM src
SELECT * STREAM favg FROM AVG(fl@(1,2))
SELECT src[0] STREAM kept FROM src RETENTION 3 2
SELECT src[0], src[5] STREAM allseg FROM src RETENTION 4 0
SELECT src[1] STREAM seg5 FROM src RETENTION 5 3 STORAGE DIRECT
SELECT src[2] STREAM px FROM src STORAGE POSIX
EOF
streams="copy mix ints avgs fl favg kept allseg seg5 px STREAM_AGSE_1_4_ints"
if engine "$w" q.rql 60; then ok "engine run (12 streams, 60 slots)"; else bad "engine run" "$w/run.err"; finish; fi

# The Python reader reads `out`; xtrdb (which opens stores writable) a copy.
cp -a "$w/out" "$w/xt"
for s in $streams; do
  printf 'storage xt\nopen %s\nlist 100\nquit\n' "$s" | xtrdb "$w" >"$w/$s.xt"
  cli "$w/out/$s" >"$w/$s.py" 2>"$w/$s.pyerr"
done
for s in $streams; do
  if cmp_py same "$w/out/$s" "$w/$s.xt" >"$w/$s.cmp" 2>&1; then ok "values and NULLs of $s equal xtrdb's"; else bad "values of $s" "$w/$s.cmp"; fi
  if cmp_py cli "$w/$s.py" "$w/$s.xt" >"$w/$s.cli" 2>&1; then ok "CLI text of $s equals xtrdb list"; else bad "CLI text of $s" "$w/$s.cli"; fi
done

# What the streams must hold for the checks above to mean something.
cat >"$tmp/api.py" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import retractor_artifacts as ra
out = sys.argv[2]
fails = []
def check(cond, what):
    if not cond:
        fails.append(what)
r, n = ra.read_stream(out + "/mix")
check(n.dtype == bool and n.shape == (len(r), 5), f"mix nulls {n.dtype} {n.shape}")
c, cn = ra.read_stream(out + "/copy")
check(len(c) == len(r) > 15, f"copy {len(c)} records, mix {len(r)}")
zero = (c["src_1"] == 0) & ~cn[:, 1]
check(zero.any() and (n[:, 0] == (zero | cn[:, 1])).all(), "mix_0 (100/src_1) is NULL exactly where src_1 is 0 or NULL")
check(cn[:, 3].any() and cn[:, 6].any() and not cn.all(), "copy has NULLs and values")
check(r.dtype["mix_2"] == np.dtype("<f8") and r.dtype["mix_3"] == np.dtype("S5") and r.dtype["mix_4"] == np.dtype("<u4"), f"mix dtype {r.dtype}")
check(c.dtype.itemsize == 4 * 3 + 4 + 1 + 4 + 8 + 6, f"copy record {c.dtype.itemsize} bytes")
a, an = ra.read_stream(out + "/avgs")
check(a.dtype["avg"].names == ("num", "den") and (a["avg"]["den"] > 0).all(), "avgs is RATIONAL (num, den), den > 0")
f, fn = ra.read_stream(out + "/favg")
check(f.dtype["avg"] == np.dtype("<f4") and fn.any() and not fn.all(), "favg is FLOAT with some NULLs")
m = ra.masked(f, fn, "avg")
check(m.count() == int((~fn[:, 0]).sum()), "masked() hides the NULLs")
k = ra.open_stream(out + "/kept")
check(k.first > 0 and len(k.files) == 2 and k.first % 3 == 0, f"kept: first {k.first}, {len(k.files)} segment files")
check(k.first + len(k.records) == len(c) and (k.records["kept_0"] == c["src_0"][k.first:]).all(), "kept holds the tail of src_0")
s = ra.open_stream(out + "/allseg")
check(s.first == 0 and len(s.files) >= 5 and len(s.records) == len(c), f"allseg: first {s.first}, {len(s.files)} segments")
check(((s.nulls[:, 1] == cn[:, 5]) & (s.nulls[:, 0] == cn[:, 0])).all(), "allseg NULLs follow copy's")
d = ra.open_stream(out + "/seg5")
check(d.descriptor.profile == "DIRECT" and d.first > 0 and len(d.files) == 3, f"seg5: DIRECT, first {d.first}, {len(d.files)} files")
check(ra.fields(out + "/copy.desc")[7] == ("src_7", "STRING", 6), f"fields(): {ra.fields(out + '/copy')}")
check(ra.fields(out + "/kept_segment_" + str(k.first // 3)) == [("kept_0", "INTEGER", 1)], "a segment path names its stream")
try:
    ra.read_stream(out + "/src")
    fails.append("a TEXTFILE source read as records")
except ra.ArtifactError as e:
    check("TEXTFILE" in str(e), str(e))
for x in fails:
    print("   ", x)
sys.exit(1 if fails else 0)
EOF
if "$PY" "$tmp/api.py" "$here/../python" "$w/out" >"$w/api.out" 2>&1; then ok "API: dtypes, NULL positions, RETENTION first index, fields()"; else bad "API checks" "$w/api.out"; fi

# ================================================================ 2. updates: .shadow and .meta.shadow
# xtrdb `write 0` of record 1 (mix_0 NULL) over record 0: the data update goes
# to mix.shadow, the NULL bits to mix.meta.shadow.
cp -a "$w/out" "$w/upd"
printf 'storage upd\nopen mix\nread 1\nwrite 0\nlist 100\nquit\n' | xtrdb "$w" >"$w/upd1.xt"
if [ -s "$w/upd/mix.shadow" ] && [ -s "$w/upd/mix.meta.shadow" ]; then ok "xtrdb update wrote mix.shadow and mix.meta.shadow"; else bad "no shadow files after xtrdb write"; fi
if cmp_py same "$w/upd/mix" "$w/upd1.xt" >"$w/upd1.cmp" 2>&1; then ok "updated record read through both shadows equals xtrdb's session"; else bad "shadowed update" "$w/upd1.cmp"; fi
cli "$w/upd/mix" --no-shadow >"$w/upd.noshadow" 2>&1
# Reopening empties a DEFAULT store's .shadow but keeps .meta.shadow: record 0
# then has its old data with record 1's NULL bits; --no-shadow reads exactly that.
printf 'storage upd\nopen mix\nlist 100\nquit\n' | xtrdb "$w" >"$w/upd2.xt"
if cmp_py cli "$w/upd.noshadow" "$w/upd2.xt" >"$w/upd2.cmp" 2>&1; then ok "--no-shadow equals xtrdb after reopen (data shadow emptied, index shadow kept)"; else bad "no-shadow read" "$w/upd2.cmp"; fi

# ================================================================ 3. arrays written by xtrdb
w3=$tmp/arrays
mkdir -p "$w3"
cat >"$w3/script" <<'EOF'
open t { INTEGER a[2] BYTE b[3] UINT u FLOAT f[2] DOUBLE d RATIONAL r[2] STRING s[5] }
set a -7 2147483647
set b 0 128 255
set u 4294967295
set f 0.1 -1e-20
set d 3.25
set r 1/3 -6/4
set s hello
append
set a 0 -1
set s ab
set r 0/5 7/1
set d -1e300
append
set f 1e30 2
set s xyz
append
list 10
quit
EOF
xtrdb "$w3" <"$w3/script" >"$w3/t.xt"
if cmp_py same "$w3/t" "$w3/t.xt" >"$w3/t.cmp" 2>&1; then ok "arrays (INTEGER[2] BYTE[3] FLOAT[2] RATIONAL[2] STRING[5]) equal xtrdb's"; else bad "array store" "$w3/t.cmp"; fi
cli "$w3/t" >"$w3/t.py" 2>&1
if cmp_py cli "$w3/t.py" "$w3/t.xt" >"$w3/t.cli" 2>&1; then ok "CLI text of the array store equals xtrdb list"; else bad "array CLI" "$w3/t.cli"; fi

# ================================================================ 4. BINFILE arrays, ROTATION archives
w2=$tmp/run2
mkdir -p "$w2/out"
"$PY" - "$w2/arr.bin" <<'EOF'
import struct, sys
with open(sys.argv[1], "wb") as f:
    for i in range(6):
        f.write(struct.pack("<4i", i, -i, i * 100000, 7) + bytes([i, 255 - i, 3]) + struct.pack("<2d", i / 3, -1.5 * i))
EOF
cat >"$w2/q.rql" <<'EOF'
STORAGE 'out'
ROTATION 'rot.txt'
DECLARE v INTEGER[4], b BYTE[3], d DOUBLE[2] STREAM arr, 1 BINFILE 'arr.bin'
SELECT * STREAM acopy FROM arr
SELECT arr[0] STREAM kept FROM arr RETENTION 3 2
EOF
if engine "$w2" q.rql 8 && engine "$w2" q.rql 9 && [ -f "$w2/out/acopy.old1" ] && [ -f "$w2/out/kept.meta.old1" ]; then
  ok "two ROTATION sessions left acopy.old0/.old1 and kept_segment_K.old1"
else
  bad "rotation runs" "$w2/run.err"
fi
cp -a "$w2/out" "$w2/xt"
for k in 0 1; do
  printf 'storage xt\nopen acopy.old%s\nlist 100\nquit\n' "$k" | xtrdb "$w2" >"$w2/acopy$k.xt"
  if cmp_py same "$w2/out/acopy.old$k" "$w2/acopy$k.xt" >"$w2/acopy$k.cmp" 2>&1; then ok "archive acopy.old$k (its own .meta.old$k) equals xtrdb's"; else bad "archive acopy.old$k" "$w2/acopy$k.cmp"; fi
done
# The declared BINFILE source: its .desc keeps the arrays, REF names arr.bin
# (relative to the engine's directory, the storage directory's parent here).
if cmp_py flat "$w2/out/arr" 6 "$w2/acopy1.xt" >"$w2/arr.cmp" 2>&1; then ok "BINFILE source arr (INTEGER[4] BYTE[3] DOUBLE[2]) equals the engine's flat copy"; else bad "BINFILE arrays" "$w2/arr.cmp"; fi
# A segmented archive: kept_segment_K.old1 with kept.meta.old1 (xtrdb has no name for it).
if cmp_py column "$w2/out/kept.old1" "$w2/acopy1.xt" arr_0 >"$w2/kept.cmp" 2>&1; then ok "segmented archive kept.old1 equals acopy.old1 by global index"; else bad "segmented archive" "$w2/kept.cmp"; fi
# A third session gives acopy another layout (in a copy of the run: the reads
# of run2 below stay as they are). Each archive reads with its own descriptor,
# acopy.desc.old<N>: session 0 still equals what xtrdb listed before the change.
w4=$tmp/run4
cp -a "$w2" "$w4" && rm -rf "$w4/tmp" "$w4/xt"
sed 's/SELECT \* STREAM acopy FROM arr/SELECT arr[0], arr[7] * 2 STREAM acopy FROM arr/' "$w2/q.rql" >"$w4/q.rql"
if engine "$w4" q.rql 4 && [ -f "$w4/out/acopy.desc.old2" ]; then ok "a third session writes acopy with another layout"; else bad "layout change run" "$w4/run.err"; fi
if cmp_py same "$w4/out/acopy.old0" "$w2/acopy0.xt" >"$w4/old0.cmp" 2>&1; then ok "archive acopy.old0 reads with its own descriptor after the layout changed"; else bad "archive of the earlier layout" "$w4/old0.cmp"; fi
cp -a "$w4/out" "$w4/xt"
printf 'storage xt\nopen acopy.old2\nlist 100\nquit\n' | xtrdb "$w4" >"$w4/acopy2.xt"
if cmp_py same "$w4/out/acopy.old2" "$w4/acopy2.xt" >"$w4/old2.cmp" 2>&1; then ok "archive acopy.old2 (INTEGER, DOUBLE) equals xtrdb's"; else bad "archive of the new layout" "$w4/old2.cmp"; fi

# ================================================================ 5. corrupt and truncated files
c=$tmp/bad
# expect_error NAME PATTERN PATH [CLI args]: the CLI fails with an error matching PATTERN.
expect_error() {
  local name=$1 pat=$2
  shift 2
  if cli "$@" >"$c/out" 2>"$c/err"; then
    bad "$name: no error" "$c/out"
  elif grep -Eq "$pat" "$c/err"; then
    ok "$name: $(head -1 "$c/err" | sed "s|$c/||g")"
  else
    bad "$name: wrong message" "$c/err"
  fi
}
fresh() { rm -rf "$c" && cp -a "$w/out" "$c"; }

fresh
size=$(stat -c %s "$c/copy")
truncate -s -3 "$c/copy"
expect_error "partial record" "copy: byte $((size - 35)): truncated record: 32 of 35 bytes" "$c/copy"
if cli "$c/copy" --lenient >"$c/len" 2>&1 && [ "$(wc -l <"$c/len")" = $((size / 35 - 1)) ]; then ok "--lenient drops the partial record"; else bad "--lenient" "$c/len"; fi

fresh
msize=$(stat -c %s "$c/mix.meta")
truncate -s -1 "$c/mix.meta"
expect_error "partial index entry" "mix.meta: byte $(( (msize - 8) / 18 * 18 - 18 + 8 )): truncated index entry" "$c/mix"

fresh
printf '\007' | dd of="$c/ints.meta" bs=1 seek=8 conv=notrunc status=none
expect_error "bad gap flag" "ints.meta: byte 8: index entry 0: flag 7" "$c/ints"

fresh
printf '\011' | dd of="$c/ints.meta" bs=1 seek=17 conv=notrunc status=none
expect_error "wrong bit count" "ints.meta: byte 17: index entry 0 holds 9 bits, the descriptor has 3" "$c/ints"

fresh
printf 'abc' >"$c/ints.meta"
expect_error "index header cut short" "ints.meta: byte 3: index header cut short" "$c/ints"

fresh
printf '{\tINTEGER a FOO\n}' >"$c/ints.desc"
expect_error "corrupt descriptor" "ints.desc: byte 12: descriptor: unknown word 'FOO'" "$c/ints"

fresh
printf '{\tSTRING s\n}' >"$c/ints.desc"
expect_error "STRING without size" "ints.desc: byte 11: descriptor: STRING needs a size" "$c/ints"

fresh
truncate -s -8 "$c/allseg_segment_0"
expect_error "short inner segment" "allseg_segment_0: byte 24: segment 0 holds 3 of 4 records but segment 1 follows" "$c/allseg"

fresh
printf '\001\000\000\000\000\000\000\000\000\000\000\000' >"$c/px.shadow"
px_rec=$(cli "$c/px" 2>&1 | head -1)
if [ "$px_rec" = "$(head -1 "$w/px.py")" ]; then ok "a POSIX store ignores a stray .shadow (it updates in place)"; else bad "POSIX shadow: $px_rec"; fi
printf '{\tINTEGER px_0\n\tTYPE POSIXSHD\n}' >"$c/px.desc"
expect_error "misaligned shadow entry" "px.shadow: byte 0: shadow position 1 is not a multiple of the record size 4" "$c/px"

expect_error "missing stream" "no descriptor for .*nosuch" "$c/nosuch"

# ================================================================ 6. ranged reads
# Updates first: xtrdb writes records 0, 2 and 5 (5 twice, the last one wins)
# and lists in the same session, so the .shadow holds them as the reader applies them.
cp -a "$w/out" "$w/rng"
printf 'storage rng\nopen mix\nread 1\nwrite 0\nread 3\nwrite 2\nread 1\nwrite 5\nread 4\nwrite 5\nlist 100\nquit\n' | xtrdb "$w" >"$w/rng.xt"
if cmp_py same "$w/rng/mix" "$w/rng.xt" >"$w/rng.cmp" 2>&1; then ok "four updates (one record twice) read through both shadows equal xtrdb's session"; else bad "four updates" "$w/rng.cmp"; fi
cat >"$tmp/range.py" <<'EOF'
"""range.py MODDIR PATH...: read_records, iter_records and one source read out
of order (the index cursor going back) equal slices of the whole read, with
files read in pieces of 4 MiB and of 40 bytes (two index entries, one shadow entry)."""
import random
import sys

sys.path.insert(0, sys.argv[1])
import numpy as np
import retractor_artifacts as ra

fails, rnd = [], random.Random(25)


def check(p, what, got, whole, lo, hi):
    k = whole.kept
    if not (
        got.first == lo
        and got.kept == k
        and got.end == whole.end
        and got.records.tobytes() == whole.records[lo - k : hi - k].tobytes()
        and np.array_equal(got.nulls, whole.nulls[lo - k : hi - k])
    ):
        fails.append(f"{p} {what}: records {lo}..{hi - 1} differ from the whole read's (got {got.first}, {len(got.records)})")


def joined(w, parts):
    recs = np.concatenate([x.records for x in parts]) if parts else w.records[:0]
    nulls = np.concatenate([x.nulls for x in parts]) if parts else w.nulls[:0]
    return ra.Stream(w.descriptor, recs, nulls, parts[0].first if parts else w.end, [], w.kept, w.end)


for piece in (1 << 22, 40):
    ra._CHUNK = piece
    for p in sys.argv[2:]:
        w = ra.open_stream(p)
        k, e = w.kept, w.end
        if (k, e) != (w.first, w.first + len(w.records)) or e <= k:
            fails.append(f"{p}: whole read first {w.first}, {len(w.records)} records, kept {k}, end {e}")
            continue
        cases = [(0, 0), (0, 3), (k, 1), (k + 1, 2), (e - 1, 5), (e, 2), (e + 10, None), (0, None)]
        cases += [(rnd.randrange(e + 2), rnd.choice([None, rnd.randrange(e + 2)])) for _ in range(16)]
        for s, c in cases:
            lo = min(max(s, k), e)
            check(p, f"read_records({s}, {c})", ra.read_records(p, s, c), w, lo, e if c is None else min(e, lo + c))
        src = ra._Source(p)
        for s, c in rnd.sample(cases, len(cases)):
            lo = min(max(s, k), e)
            check(p, f"read({s}, {c}) out of order", src.read(s, c), w, lo, e if c is None else min(e, lo + c))
        for n in (1, 2, 7):
            parts = list(ra.iter_records(p, chunk=n))
            if any(len(x.records) > n for x in parts):
                fails.append(f"{p}: iter_records(chunk={n}) gave a longer piece")
            check(p, f"iter_records(chunk={n})", joined(w, parts), w, k, e)
        check(p, "iter_records(chunk=3, start, count=4)", joined(w, list(ra.iter_records(p, 3, k + 1, 4))), w, k + 1, min(e, k + 5))
for x in fails[:8]:
    print("   ", x)
if len(fails) > 8:
    print(f"    ... {len(fails) - 8} more")
sys.exit(1 if fails else 0)
EOF
ranged="$w/rng/mix $w3/t $w2/out/acopy.old0 $w2/out/kept.old1 $w2/out/arr"
for s in $streams; do ranged="$ranged $w/out/$s"; done
# shellcheck disable=SC2086  # one path per word
if "$PY" "$tmp/range.py" "$here/../python" $ranged >"$tmp/range.out" 2>&1; then
  ok "ranged reads equal whole reads ($(echo $ranged | wc -w) streams: segments, archives, shadows, a BINFILE; files in pieces)"
else
  bad "ranged reads" "$tmp/range.out"
fi

# ================================================================ 7. a 10 GiB data file
# mix's real records, then a hole up to 10 GiB (no blocks on disk). Its .meta
# covers the real records only, as after a writer killed between its data and
# index flushes: the reader takes the rest as non-NULL, and xtrdb (which opens
# stores writable) extends the index's last run over them. Printing 3 records
# must read 3 records: peak RSS under 200 MB and the records equal xtrdb's,
# with the index short and after xtrdb extended it; a ranged read at the end of
# the file too. Each run is under a 2 GiB data cap (ulimit -d: a reader loading
# the whole file fails at once instead of exhausting a CI machine) and a 120 s
# timeout.
big=$tmp/big
mkdir -p "$big/out"
cp "$w/out/mix" "$w/out/mix.desc" "$w/out/mix.meta" "$big/out/"
rec=$("$PY" -c 'import sys; sys.path.insert(0, sys.argv[1]); import retractor_artifacts as ra; print(ra.read_descriptor(sys.argv[2]).record_size)' "$here/../python" "$big/out/mix.desc")
size=$((((10 << 30) + rec - 1) / rec * rec))
avail=$(df -Pk "$tmp" | awk 'NR == 2 { print $4 }')
# capped NAME ARGS...: the interpreter on ARGS; output in $big/NAME.out, "peak_KiB seconds" in $big/NAME.rss.
capped() {
  local name=$1
  shift
  (ulimit -d $((2 << 20)) && OPENBLAS_NUM_THREADS=1 exec timeout 120 /usr/bin/time -f '%M %e' -o "$big/$name.rss" "$PY" "$@") \
    >"$big/$name.out" 2>"$big/$name.err"
}
# small_run STATUS NAME: the run NAME exited 0 within 200 MB and 30 s.
small_run() {
  local kib secs
  read -r kib secs < <(tail -1 "$big/$2.rss" 2>/dev/null)
  if [ "$1" = 0 ] && [ "${kib:-999999999}" -lt 204800 ] && awk -v s="${secs:-999}" 'BEGIN { exit !(s < 30) }'; then
    return 0
  fi
  echo "    exit $1, peak RSS ${kib:-?} KiB, ${secs:-?} s (wanted: 0, under 204800 KiB and 30 s)"
  tail -n 3 "$big/$2.err"
  return 1
}
peak() { echo "$(cut -d' ' -f1 "$big/$1.rss") KiB peak, $(cut -d' ' -f2 "$big/$1.rss") s"; }
if [ ! -x /usr/bin/time ]; then
  bad "10 GiB file: no /usr/bin/time (apt-get install time)"
elif [ "${avail:-0}" -lt 65536 ]; then
  echo "SKIP 10 GiB sparse file: ${avail:-?} KiB free in $tmp (64 MiB wanted for the real records and the runs)"
elif ! truncate -s "$size" "$big/out/mix" 2>"$big/trunc.err" || [ "$(du -k "$big/out/mix" | cut -f1)" -gt 1024 ]; then
  echo "SKIP 10 GiB sparse file: the file system of $tmp makes no sparse 10 GiB file $(head -1 "$big/trunc.err")"
else
  capped short "$MOD" "$big/out/mix" 3
  st=$?
  printf 'storage out\nopen mix\nlist 3\nquit\n' | xtrdb "$big" >"$big/mix.xt"
  if small_run $st short && cmp_py cli "$big/short.out" "$big/mix.xt" >"$big/short.cmp" 2>&1 && [ "$(wc -l <"$big/short.out")" = 3 ]; then
    ok "3 records of a 10 GiB data file, its index short: $(peak short), equal xtrdb's"
  else
    bad "3 records of a 10 GiB data file (index short)" "$big/short.cmp"
  fi
  capped long "$MOD" "$big/out/mix" 3
  st=$?
  if small_run $st long && cmp_py cli "$big/long.out" "$big/mix.xt" >"$big/long.cmp" 2>&1 && [ "$(wc -l <"$big/long.out")" = 3 ]; then
    ok "3 records of a 10 GiB data file, its index over it all (after xtrdb): $(peak long), equal xtrdb's"
  else
    bad "3 records of a 10 GiB data file (index over it all)" "$big/long.cmp"
  fi
  printf '%s\n' 'import sys' 'sys.path.insert(0, sys.argv[1])' 'import retractor_artifacts as ra' \
    's = ra.read_records(sys.argv[2], int(sys.argv[3]) - 3, 10)' \
    'print(s.first, len(s.records), s.end, int(s.records.view("u1").any()), int(s.nulls.any()))' >"$big/end.py"
  capped end "$big/end.py" "$here/../python" "$big/out/mix" $((size / rec))
  st=$?
  if small_run $st end && [ "$(cat "$big/end.out")" = "$((size / rec - 3)) 3 $((size / rec)) 0 0" ]; then
    ok "read_records at the end of the 10 GiB file: its last 3 records (zeros, not NULL), $(peak end)"
  else
    bad "read_records at the end of the 10 GiB file: $(cat "$big/end.out")"
  fi
fi
rm -rf "$big"

finish
