#!/usr/bin/env bash
# SUMC/AVG as exact sums rounded once (docs/rql.md "Numerics"), run by hand
# (never a timed test):  bench/exact_folds.sh
# 1. rec205-detect.rql (RATIONAL from its first reducer on) on the record ten
#    times over (6.5 M samples), JIT and VM, against its INTEGER twin
#    rec205-detect-int.rql on the JIT and the streaming hand loop qrs_stream.cpp;
# 2. AVG(x : W) over a RATIONAL x with unrelated denominators, W = 4 against
#    W = 10,000: CPU per record.
# Every ratio comes from this one run. CPU = user + system.
set -euo pipefail
source "$(dirname "$0")/common.sh" rdb-exact

fresh() { rm -rf out; mkdir out; }

cd "$W"
rec205Inputs

cpu stream ./stream rec205 bp_coef.txt d_coef.txt stream.bin; S_CPU=$CPU
fresh; cpu int-jit "$XR" int.rql --no-clock -m $N --threads 1; I_CPU=$CPU
fresh; cpu rat-jit "$XR" rat.rql --no-clock -m $N --threads 1 -v; RJ_CPU=$CPU; RJ_KB=$KB
cp out/detect_out jit.bin
fresh; cpu rat-vm "$XR" rat.rql --no-clock -m $N --threads 1 --interpret; RV_CPU=$CPU
cmp out/detect_out jit.bin
ROUNDED=$(grep '^rounded: mwi_thr' "$W/rat-jit.out" || true)

echo "Machine: $(nproc) cores, $(uname -m); $(date -u +%Y-%m-%d); one run"
echo
echo "| 6,500,000 samples, --threads 1 | CPU | against rec205-detect-int.rql (JIT) | speed against qrs_stream.cpp |"
echo "|---|---|---|---|"
echo "| qrs_stream.cpp (streaming hand loop, INTEGER) | $S_CPU s | | 1 |"
echo "| rec205-detect-int.rql, JIT | $I_CPU s | 1 | $(ratio "$S_CPU" "$I_CPU") |"
echo "| rec205-detect.rql (RATIONAL), JIT | $RJ_CPU s | $(ratio "$RJ_CPU" "$I_CPU")x the CPU | $(ratio "$S_CPU" "$RJ_CPU") |"
echo "| rec205-detect.rql (RATIONAL), VM (--interpret) | $RV_CPU s | $(ratio "$RV_CPU" "$I_CPU")x the CPU | $(ratio "$S_CPU" "$RV_CPU") |"
echo
echo "JIT/VM speed on the RATIONAL detector: $(ratio "$RV_CPU" "$RJ_CPU"); detect_out byte-identical on both; peak RSS $RJ_KB KiB; $ROUNDED."

# 2. AVG(x : W) over RATIONALs with unrelated denominators.
RECS=1000000
awk -v n=$((RECS + 10000)) 'BEGIN { srand(43); for (i = 0; i < n; i++) printf "%d %d\n", int(rand() * 2000000) - 1000000, 1 + int(rand() * 2000000000) }' > pq.txt
echo
echo "| AVG(x : W), x RATIONAL with unrelated denominators, $RECS records | CPU | ns a record |"
echo "|---|---|---|"
for w in 4 10000; do
  cat > avg$w.rql <<EOF
STORAGE 'out'
DECLARE p INTEGER, q INTEGER STREAM s, 1 TEXTFILE 'pq.txt'
SELECT SUMC(p : 1) / q STREAM x FROM s VOLATILE
SELECT AVG(x[0] : $w) STREAM a FROM x
EOF
  fresh; cpu avg$w "$XR" avg$w.rql --no-clock -m $((RECS + w)) --threads 1
  eval "A$w=$CPU"
  echo "| W = $w | $CPU s | $(awk -v c="$CPU" -v n=$RECS 'BEGIN { printf "%.0f", c / n * 1e9 }') |"
done
echo
echo "W = 10,000 against W = 4: $(ratio "$A10000" "$A4")x the CPU (both include parsing the text source)."
