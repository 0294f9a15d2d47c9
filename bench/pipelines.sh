#!/usr/bin/env bash
# Many independent pipelines in one plan, run by hand (never a timed test):
#   bench/pipelines.sh [N]      (N pipelines, default 1000, against 10)
# Each pipeline: a BINFILE source, an @(1,10) window, its AVG, a join with one
# shared stream. Reports the start (one record), the close, and the cost of a
# pipeline record in the run loop from the difference of two run lengths.
set -euo pipefail
source "$(dirname "$0")/common.sh" rdb-pipelines
N=${1:-1000}
cd "$W"
python3 - "$N" <<'EOPY'
import struct, sys
n_many = int(sys.argv[1])
open('shared.txt', 'w').write(''.join(f'{i}\n' for i in range(10)))
def plan(name, n, data):
    with open(name, 'w') as q:
        q.write("STORAGE 'out'\nDECLARE k INTEGER STREAM K, 1 FILE 'shared.txt'\n")
        for i in range(n):
            q.write(f"DECLARE v INTEGER STREAM s{i}, 1 BINFILE '{data}{i}.bin' ONESHOT\n"
                    f"SELECT * STREAM w{i} FROM s{i}@(1,10) VOLATILE\n"
                    f"SELECT w{i}[0] STREAM m{i} FROM AVG(w{i}) VOLATILE\n"
                    f"SELECT m{i}[0]+K[0] STREAM o{i} FROM m{i}+K\n")
def data(name, i, records):
    open(name, 'wb').write(struct.pack(f'<{records}i', *[(j * 7 + i) % 1000 for j in range(records)]))
plan('few.rql', 10, 'f'); plan('many.rql', n_many, 'm')
for i in range(10): data(f'f{i}.bin', i, 1000000)
for i in range(n_many): data(f'm{i}.bin', i, 20000)
EOPY
# run PLAN SLOTS -> LOOP (the run loop's wall seconds, from -v: one thread,
# so its CPU), CLOSE and WALL. The run loop leaves out the start and the
# close, and the optimised JIT tier compiled on another thread meanwhile
# (CPU that a short run never spends). The second run of a plan finds the
# first's files.
run() {
  /usr/bin/time -f "%e" -o t.txt "$XR" "$1" --no-clock -m "$2" --threads 1 -v >run.out 2>run.err ||
    { cat run.err; exit 1; }
  read -r WALL < t.txt
  read -r LOOP CLOSE < <(sed -n 's/^processed [0-9]* slots in \([0-9.]*\) s (close \([0-9.]*\) s)$/\1 \2/p' run.out)
}
mkdir out
run many.rql 1; run many.rql 1; START=$WALL
# The same start with the JIT's code cache: filled by the first run, used by the second.
RDB_JIT_CACHE=$W/jc run many.rql 1; RDB_JIT_CACHE=$W/jc run many.rql 1; WARM=$WALL
grep -q 'from the cache' run.out
run many.rql 2000; M1=$LOOP; run many.rql 20000; M2=$LOOP; MC=$CLOSE
run few.rql 100000; F1=$LOOP; run few.rql 1000000; F2=$LOOP; FC=$CLOSE
MACHINE="$(nproc) cores, $(uname -m), $(date -u +%Y-%m-%d)" awk -v n="$N" -v s="$START" -v warm="$WARM" -v m1="$M1" -v m2="$M2" -v f1="$F1" -v f2="$F2" -v mc="$MC" -v fc="$FC" 'BEGIN {
  many = (m2 - m1) / (18000 * n) * 1e6; few = (f2 - f1) / (900000 * 10) * 1e6
  printf "Machine: %s; one run\n\n", ENVIRON["MACHINE"]
  printf "| plan | start (wall, files of an earlier run there) | run loop a pipeline record | close (fsync of every file) |\n|---|---|---|---|\n"
  printf "| %d pipelines | %.2f s | %.3f us | %.2f s |\n| 10 pipelines | | %.3f us | %.2f s |\n\n", n, s, many, mc, few, fc
  printf "Start of %d pipelines with the code of an earlier run in the JIT code cache: %.2f s\n", n, warm
  printf "%d pipelines cost %.1fx a record of 10 in the run loop (target: at most 2x)\n", n, (few > 0 ? many / few : 0) }'
