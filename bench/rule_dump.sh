#!/usr/bin/env bash
# A RULE that fires often, run by hand (never a timed test):
#   bench/rule_dump.sh [RUNS]      (each plan RUNS times, default 5; medians)
# The plan of issue 42: a FIR filter and a slow average over a 1 kHz source
# of 400000 random records, their difference `diff`, and
# `RULE big ON diff WHEN diff[0] > 2500 DO DUMP -2 TO 1`, offline for 20000
# slots (-f -m 20001). The same plan without the rule is the baseline: the
# difference of the wall times over the firings is what a firing costs the
# slot thread. Firings are counted in the stored `diff` (RATIONAL records).
# CPU = user + system. Wall far above CPU means the run waited (on the disk).
set -euo pipefail
source "$(dirname "$0")/common.sh" rdb-rule-dump
RUNS=${1:-5}
cd "$W"
python3 - <<'EOPY'
import random
r = random.Random(42)
with open('s.txt', 'w') as f:
    f.write(''.join(f'{r.randint(-3000, 3000)} {r.randint(0, 99)}\n' for _ in range(400000)))
with open('c.txt', 'w') as f:
    f.write(''.join(' '.join(str(r.randint(-5, 5)) for _ in range(8)) + '\n' for _ in range(20)))
plan = """STORAGE 'out'
DECLARE v INTEGER, k INTEGER STREAM s, 1/1000 TEXTFILE 's.txt'
DECLARE c INTEGER[8] STREAM cf, 1 TEXTFILE 'c.txt'
SELECT s[0] STREAM x FROM s VOLATILE
SELECT * STREAM xw FROM x@(1,8) VOLATILE
SELECT xw[_]*cf[_] STREAM xc FROM xw+cf VOLATILE
SELECT to_integer(xc[0]) STREAM fir FROM SUMC(xc)
SELECT AVG(s[0] : 180), MAX(s[1] : 50) STREAM slow FROM s
SELECT to_integer(slow[0]) STREAM slowi FROM slow VOLATILE
SELECT * STREAM mix FROM fir # slowi
SELECT fir[0] - slow[0] STREAM diff FROM fir + slow
"""
open('norule.rql', 'w').write(plan)
open('rule.rql', 'w').write(plan + "RULE big ON diff WHEN diff[0] > 2500 DO DUMP -2 TO 1\n")
EOPY
# run PLAN -> one line "WALL CPU" appended to PLAN.times
run() {
  rm -rf out && mkdir out
  /usr/bin/time -f "%e %U %S" -o t.txt "$XR" "$1.rql" -f -m 20001 -k -r >"$1.out" 2>"$1.err" ||
    { cat "$1.err"; exit 1; }
  awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }' t.txt >>"$1.times"
}
for _ in $(seq "$RUNS"); do run norule; run rule; done  # interleaved: both see the same disk
FIRINGS=$(python3 -c "
import struct
n = 0
for num, den in struct.iter_unpack('<ii', open('out/diff', 'rb').read()):
    if den < 0: num, den = -num, -den
    n += den != 0 and num > 2500 * den
print(n)")
[ -s out/diff_big_dump.tmp ] || { echo "the rule wrote no dump"; exit 1; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
RW=$(cut -d' ' -f1 rule.times | median); RC=$(cut -d' ' -f2 rule.times | median)
NW=$(cut -d' ' -f1 norule.times | median); NC=$(cut -d' ' -f2 norule.times | median)
MACHINE="$(nproc) cores, $(uname -m), $(date -u +%Y-%m-%d)" awk -v f="$FIRINGS" -v rw="$RW" -v rc="$RC" -v nw="$NW" -v nc="$NC" -v runs="$RUNS" 'BEGIN {
  printf "Machine: %s; medians of %d runs each\n\n", ENVIRON["MACHINE"], runs
  printf "| plan | firings | wall | CPU | firings per second (wall) | a firing on the slot thread (wall over the baseline) |\n|---|---|---|---|---|---|\n"
  printf "| without the rule | | %.2f s | %.2f s | | |\n", nw, nc
  printf "| RULE big ... DO DUMP -2 TO 1 | %d | %.2f s | %.2f s | %.0f | %.1f us |\n", f, rw, rc, (rw > 0 ? f / rw : 0), (f > 0 ? (rw - nw) / f * 1e6 : 0) }'
