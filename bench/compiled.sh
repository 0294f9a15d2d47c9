#!/usr/bin/env bash
# Compiled execution against the yardstick, run by hand (never a timed test):
#   bench/compiled.sh
# 1. the Pan-Tompkins detector of ../shared/bench-data/rec205 with INTEGER
#    stages (rec205-detect-int.rql) on the record ten times over (6.5 M
#    samples) on the JIT (with its chains, and --no-chains), on the VM, as the
#    streaming hand loop qrs_stream.cpp
#    (the yardstick) and as the whole-array loop qrs_fused.cpp (both g++ -O3
#    -march=native); the engine's detect_out must be the loops' output from
#    sample 236 on, byte for byte;
# 2. the same detector with RATIONAL stages (rec205-detect.rql), the record once,
#    and its rounding alone (bench/rounding.cpp) against the methods tried;
# 3. two independent pipelines, --threads 1 against --threads 2;
# 4. slot lateness of the bundled example plan clocked at 10 kHz on one core.
# Every ratio in the output comes from this one run. CPU = user + system.
set -euo pipefail
source "$(dirname "$0")/common.sh" rdb-compiled

fresh() { rm -rf out; mkdir out; }
# detect_out is the hand loops' records from 236 on (nearly all of the run's), byte for byte.
sameAsLoops() {
  local n; n=$(stat -c %s out/detect_out)
  [ "$n" -gt $((N * 12 * 9 / 10)) ] || { echo "detect_out holds $n bytes"; exit 1; }
  cmp -n "$n" -i $((236 * 12)):0 stream.bin out/detect_out
}

cd "$W"
rec205Inputs
g++ -O3 -march=native -o fused "$R/qrs_fused.cpp"

cpu stream ./stream rec205 bp_coef.txt d_coef.txt stream.bin; S_CPU=$CPU; S_WALL=$WALL; S_SYS=$SYS
cpu fused ./fused rec205 bp_coef.txt d_coef.txt fused.bin; F_CPU=$CPU
cmp stream.bin fused.bin
fresh; cpu int-vm "$XR" int.rql --no-clock -m $N --threads 1 --interpret; IV_CPU=$CPU
cp out/detect_out vm.bin
fresh; cpu int-jit "$XR" int.rql --no-clock -m $N --threads 1 -v; IJ_CPU=$CPU; IJ_WALL=$WALL; IJ_KB=$KB; IJ_SYS=$SYS
cmp out/detect_out vm.bin
sameAsLoops
JIT_LINE=$(grep '^JIT:' "$W/int-jit.out" | tr '\n' ' ' || true)
# The same run twice with a code cache: the second takes its code, both
# tiers', from it (a whole run fills it: a short one never tiers up).
fresh; "$XR" int.rql --no-clock -m $N --threads 1 --jit-cache "$W/jc" >/dev/null
fresh; cpu int-warm "$XR" int.rql --no-clock -m $N --threads 1 -v --jit-cache "$W/jc"; IC_CPU=$CPU
grep -q 'from the cache' "$W/int-warm.out"
cmp out/detect_out vm.bin
CHAINS=$(grep -c '^chain:' "$W/int-jit.out" || true)
fresh; cpu int-steps "$XR" int.rql --no-clock -m $N --threads 1 -v --no-chains; IS_CPU=$CPU
cmp out/detect_out vm.bin
# The plan stores its two substrates (STREAM_ADD_...) by default; in memory
# (SUBSTRAT 'memory') the run writes what the hand loop writes.
{ echo "SUBSTRAT 'memory'"; cat int.rql; } > intmem.rql
fresh; cpu int-mem "$XR" intmem.rql --no-clock -m $N --threads 1; IM_CPU=$CPU; IM_SYS=$SYS
sameAsLoops
IJ_LOOP=$(sed -n 's/^processed [0-9]* slots in \([0-9.]*\) s.*/\1/p' "$W/int-jit.out")
IS_LOOP=$(sed -n 's/^processed [0-9]* slots in \([0-9.]*\) s.*/\1/p' "$W/int-steps.out")
cp rec205once rec205  # the RATIONAL detector on the record once
fresh; cpu rat-vm "$XR" rat.rql --no-clock -m 650000 --threads 1 --interpret; RV_CPU=$CPU
cp out/detect_out vm.bin
fresh; cpu rat-jit "$XR" rat.rql --no-clock -m 650000 --threads 1; RJ_CPU=$CPU
cmp out/detect_out vm.bin

echo "Machine: $(nproc) cores, $(uname -m); $(date -u +%Y-%m-%d); one run"
echo
echo "| rec205-detect-int.rql, 6,500,000 samples, --threads 1 | CPU | speed against qrs_stream.cpp |"
echo "|---|---|---|"
echo "| qrs_stream.cpp (streaming hand loop) | $S_CPU s | 1 |"
echo "| qrs_fused.cpp (whole arrays) | $F_CPU s | $(ratio "$S_CPU" "$F_CPU") |"
echo "| engine, JIT | $IJ_CPU s | $(ratio "$S_CPU" "$IJ_CPU") (wall: $(ratio "$S_WALL" "$IJ_WALL")) |"
echo "| engine, JIT, its code from the code cache (a second run) | $IC_CPU s | $(ratio "$S_CPU" "$IC_CPU") |"
echo "| engine, JIT, each stream its own step (--no-chains) | $IS_CPU s | $(ratio "$S_CPU" "$IS_CPU") |"
echo "| engine, VM (--interpret) | $IV_CPU s | $(ratio "$S_CPU" "$IV_CPU") |"
echo
echo "JIT/VM speed: $(ratio "$IV_CPU" "$IJ_CPU"). detect_out was byte-identical to the loops' records 236.. and to the VM's (also with --no-chains). $JIT_LINE; peak RSS $IJ_KB KiB."
echo "Chains: $CHAINS; run loop $IJ_LOOP s with them, $IS_LOOP s stream by stream: $(ratio "$IS_LOOP" "$IJ_LOOP")x."
echo "System time: qrs_stream.cpp $S_SYS s, the engine's JIT run $IJ_SYS s; with its substrates in memory (SUBSTRAT 'memory') $IM_SYS s of $IM_CPU s CPU ($(ratio "$S_CPU" "$IM_CPU") of qrs_stream.cpp)."
echo
echo "| rec205-detect.rql (RATIONAL), 650,000 samples | CPU |"
echo "|---|---|"
echo "| engine, JIT | $RJ_CPU s |"
echo "| engine, VM (--interpret) | $RV_CPU s (JIT/VM speed $(ratio "$RV_CPU" "$RJ_CPU")) |"
echo
echo "The detector's rounding (bench/rounding: folds of 180 RATIONALs, the product's ratAdd against two methods tried):"
echo
"$B/bench/rounding" 8000 180
echo

# 3. two independent pipelines
"$B/bench/gen" 4000000 1 a.bin
"$B/bench/gen" 4000000 2 b.bin
cat > two.rql <<'EOF'
STORAGE 'out'
DECLARE a INTEGER STREAM A, 1 BINFILE 'a.bin' ONESHOT
DECLARE b INTEGER STREAM B, 1 BINFILE 'b.bin' ONESHOT
SELECT A[0] * 3 + 1, A[0] / 7 STREAM qa FROM A
SELECT * STREAM wa FROM qa@(1,24) VOLATILE
SELECT wa[0] * 2 - wa[23], wa[11] / 3 STREAM ra FROM wa
SELECT B[0] * 5 - 2, B[0] / 3 STREAM qb FROM B
SELECT * STREAM wb FROM qb@(1,24) VOLATILE
SELECT wb[0] * 2 - wb[23], wb[11] / 3 STREAM rb FROM wb
EOF
RATIOS=""
for run in 1 2 3 4 5; do  # the target holds in each run, not on average
  fresh; cpu two-1 "$XR" two.rql --no-clock --until-eof --threads 1 -v; T1_WALL=$WALL; T1_CPU=$CPU
  mkdir -p serial && cp out/ra out/rb serial/
  fresh; cpu two-2 "$XR" two.rql --no-clock --until-eof --threads 2 -v; T2_WALL=$WALL; T2_CPU=$CPU
  cmp out/ra serial/ra && cmp out/rb serial/rb
  RATIOS="$RATIOS $(ratio "$T1_WALL" "$T2_WALL")"
done
SCHED=$(grep '^scheduler:' "$W/two-2.out" | sed 's/^scheduler: //')
PH1=$(grep '^processed' "$W/two-1.out" | sed 's/^processed [0-9]* slots //' || true)
PH2=$(grep '^processed' "$W/two-2.out" | sed 's/^processed [0-9]* slots //' || true)
# The machine's own ceiling for this work: each pipeline as its own engine
# process, alone and then both at once (own storage and service socket).
{ echo "STORAGE 'o1'"; grep -E "STREAM (A|qa|wa|ra)( |,)" two.rql; } > one1.rql
{ echo "STORAGE 'o2'"; grep -E "STREAM (B|qb|wb|rb)( |,)" two.rql; } > one2.rql
rm -rf o1 o2 && mkdir o1 o2 && mkdir -p t2
cpu one-alone "$XR" one1.rql --no-clock --until-eof --threads 1; ONE_WALL=$WALL
rm -rf o1 o2 && mkdir o1 o2
cpu two-procs bash -c "\"$XR\" one1.rql --no-clock --until-eof --threads 1 & TMPDIR=$W/t2 \"$XR\" one2.rql --no-clock --until-eof --threads 1; wait"
PROCS_WALL=$WALL
cmp o1/ra serial/ra && cmp o2/rb serial/rb
fresh; cpu two-d "$XR" two.rql --no-clock --until-eof; TD_WALL=$WALL; TD_CPU=$CPU
echo
echo "| two independent pipelines (4,000,000 records each), last of 5 runs | wall | CPU |"
echo "|---|---|---|"
echo "| --threads 1 | $T1_WALL s | $T1_CPU s |"
echo "| --threads 2 | $T2_WALL s | $T2_CPU s |"
echo "| default threads | $TD_WALL s | $TD_CPU s |"
echo
echo "--threads 2 / --threads 1 wall-clock speed in 5 runs:$RATIOS; outputs identical; scheduler: $SCHED"
echo "Run loop and close (-v): --threads 1 $PH1; --threads 2 $PH2."
echo "The machine's ceiling: one pipeline alone as its own process $ONE_WALL s, the two as two processes at once $PROCS_WALL s: $(ratio "$(awk -v a="$ONE_WALL" 'BEGIN { print 2 * a }')" "$PROCS_WALL")x for twice the work; the engine's --threads 2 run took $(ratio "$T2_WALL" "$PROCS_WALL") of the two processes' wall time."

# 4. clocked slot lateness, 10 kHz, one core
cp "$ROOT"/examples/*.txt .
sed -e 's/, 0.1 TEXTFILE/, 0.0001 TEXTFILE/; s/, 0.2 TEXTFILE/, 0.0002 TEXTFILE/' "$ROOT/examples/sensors.rql" > clocked.rql
echo
echo "| examples/sensors.rql at 10 kHz, taskset one core, 30,000 slots | lateness (deadline to the slot's last record) |"
echo "|---|---|"
CORE=${RDB_BENCH_CORE:-1}
for spin in 0 60; do
  fresh
  L=$(taskset -c "$CORE" "$XR" clocked.rql -m 30000 --threads 1 -v -k --spin-us "$spin" </dev/null | sed -n 's/^slot lateness over [0-9]* clocked slots (deadline to last record written): //p')
  echo "| engine, --spin-us $spin | $L |"
done
echo "| the machine's floor (bench/clock_floor: no work, spinning to each deadline) | $(taskset -c "$CORE" "$B/bench/clock_floor" 30000) |"
echo
echo "(core $CORE)"
