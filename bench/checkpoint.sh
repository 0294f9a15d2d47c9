#!/usr/bin/env bash
# Checkpoints and --resume, run by hand (never a timed test):
#   bench/checkpoint.sh [STREAMS]     (the resumed plan's streams, default 1000)
# 1. The integer detector of ../shared/bench-data/rec205 (6.5 M samples,
#    --threads 1) without checkpoints, with the default (every 10 s: within
#    this run only the one at its end) and every 0.05 s; -v gives each
#    checkpoint's time on the slot thread (stores' buffers written, indexes
#    flushed, the state serialised) and the background's (syncfs, the file
#    written, fsynced and renamed in).
# 2. A plan of STREAMS stored streams (a source, windows, sums and SELECTs)
#    run offline to its end, then started again with --resume (nothing left to
#    run: set-up, the checkpoint read, every store cut back and reopened, the
#    close) against a fresh start of the same plan with -m 1.
# Every number comes from this one run. CPU = user + system.
set -euo pipefail
source "$(dirname "$0")/common.sh" rdb-checkpoint
STREAMS=${1:-1000}
cd "$W"
rec205Inputs
fresh() { rm -rf out; mkdir out; }
stat_of() { sed -n 's/^checkpoints: \([0-9]*\) written, \([0-9.]*\) ms each on average, \([0-9.]*\) ms the longest, \([0-9]*\) bytes; [0-9]* made durable off the slot thread, \([0-9.]*\) ms each (\([0-9.]*\) ms of CPU)$/\1 \2 \3 \4 \5 \6/p' "$1"; }

fresh; cpu none "$XR" int.rql --no-clock -m $N --threads 1 -k -r --checkpoint 0; NONE=$CPU
cp out/detect_out ref.bin
fresh; cpu dflt "$XR" int.rql --no-clock -m $N --threads 1 -k -r -v; DFLT=$CPU
cmp out/detect_out ref.bin
read -r D_N D_AVG D_MAX D_BYTES D_DUR D_DCPU <<<"$(stat_of "$W/dflt.out")"
fresh; cpu often "$XR" int.rql --no-clock -m $N --threads 1 -k -r -v --checkpoint 0.05; OFTEN=$CPU
cmp out/detect_out ref.bin
read -r O_N O_AVG O_MAX O_BYTES O_DUR O_DCPU <<<"$(stat_of "$W/often.out")"
# The last checkpoint of the run again, resumed: the detector goes on from its end.
cpu resumed "$XR" int.rql --no-clock -m $N --threads 1 -k -r --resume; RES=$CPU
cmp out/detect_out ref.bin

python3 - "$STREAMS" <<'EOPY'
import sys
n = int(sys.argv[1])
open('f.txt', 'w').write(''.join(f'{i % 97} {i % 89}\n' for i in range(1000)))
with open('many.rql', 'w') as q:
    q.write("STORAGE 'many'\nDECLARE a INTEGER, b INTEGER STREAM src, 1/100 TEXTFILE 'f.txt'\n")
    for i in range(n):
        k = i % 4
        if k == 0: q.write(f"SELECT src[0] + {i} STREAM s{i} FROM src\n")
        elif k == 1: q.write(f"SELECT * STREAM w{i} FROM s{i-1} @ (1, {10 + i % 50})\n")
        elif k == 2: q.write(f"SELECT * STREAM m{i} FROM SUMC(w{i-1})\n")
        else: q.write(f"SELECT src[1] * {i} STREAM t{i} FROM src\n")
EOPY
mkdir many
"$XR" many.rql --no-clock -m 2000 -k -r >/dev/null 2>many.err || { cat many.err; exit 1; }
cpu many-resume "$XR" many.rql --no-clock -m 2000 -k -v --resume; MR_WALL=$WALL; MR_CPU=$CPU
grep -q '^resumed many.rql at slot 1999' "$W/many-resume.out" || { cat "$W/many-resume.out"; exit 1; }
rm -rf many && mkdir many
cpu many-fresh "$XR" many.rql --no-clock -m 1 -k -r; MF_WALL=$WALL; MF_CPU=$CPU

MACHINE="$(nproc) cores, $(uname -m), $(uname -r), $(date -u +%Y-%m-%d)"
echo "Machine: $MACHINE; one run; storage on $(df --output=fstype out | tail -1)"
echo
echo "| integer detector, 6.5 M samples | CPU | checkpoints | slot thread a checkpoint (mean / longest) | made durable (background, mean: wall / its CPU) | size |"
echo "|---|---|---|---|---|---|"
echo "| --checkpoint 0 | $NONE s | 0 | | | |"
echo "| default (10 s; this run: at its end) | $DFLT s | $D_N | $D_AVG / $D_MAX ms | $D_DUR / $D_DCPU ms | $D_BYTES B |"
echo "| --checkpoint 0.05 | $OFTEN s | $O_N | $O_AVG / $O_MAX ms | $O_DUR / $O_DCPU ms | $O_BYTES B |"
echo "| --resume of the finished run | $RES s | | | | |"
awk -v a="$O_AVG" -v b="$O_DCPU" -v often="$OFTEN" -v none="$NONE" -v n="$O_N" 'BEGIN {
  printf "\nA checkpoint every 10 s: %.3f ms of the slot thread and %.3f ms of the background thread'"'"'s CPU, %.4f%% of a core.\n", a, b, (a + b) / 10000 * 100
  c = (often - none) / n * 1000
  printf "Process CPU with and without (this one run, noisy): (%.2f - %.2f) s / %d checkpoints = %.2f ms each.\n", often, none, n, c }'
echo
echo "| plan of $STREAMS streams | wall | CPU |"
echo "|---|---|---|"
echo "| --resume (nothing left to run) | $MR_WALL s | $MR_CPU s |"
echo "| fresh start, -m 1 | $MF_WALL s | $MF_CPU s |"
