#!/usr/bin/env bash
# Instructions per record (valgrind --tool=callgrind: counts, not seconds, so
# stable on shared machines) for the JIT, the VM and the hand-written loop.
# Each is run at N and 2N records; the difference divided by N removes
# start-up costs.   bench/callgrind.sh [N]   (default 200000)
set -euo pipefail
N=${1:-200000}
source "$(dirname "$0")/common.sh" rdb-cg
cd "$W"
mkdir -p out
ir() {  # total instructions of a command
  valgrind --tool=callgrind --callgrind-out-file="$W/cg.out" "$@" >/dev/null 2>"$W/vg.err"
  sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$W/vg.err" | tail -1
}
per() { awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { printf "%.0f", (b - a) / n }'; }
cat > arith.rql <<'Q'
STORAGE 'out'
DECLARE a INTEGER STREAM A, 1 BINFILE 'a.bin' ONESHOT
DECLARE b INTEGER STREAM B, 1 BINFILE 'b.bin' ONESHOT
SELECT A[0] * 3 + B[0], (A[0] - B[0]) * (A[0] + 7), A[0] / 3 - B[0] / 5 STREAM arith FROM A + B
Q
declare -A R
for n in "$N" "$((2 * N))"; do
  "$B/bench/gen" "$n" 1 a.bin; "$B/bench/gen" "$n" 2 b.bin
  R[jit$n]=$(ir "$XR" arith.rql --no-clock --until-eof --jit-tier optimised)
  R[quick$n]=$(ir "$XR" arith.rql --no-clock --until-eof --jit-tier quick)
  R[vm$n]=$(ir "$XR" arith.rql --no-clock --until-eof --interpret)
  R[hand$n]=$(ir "$B/bench/handloop" arith a.bin b.bin hand.bin)
done
echo "| arithmetic over A+B, instructions per record | JIT (optimised tier) | JIT (quick tier) | VM | hand loop |"
echo "|---|---|---|---|---|"
echo "| $N → $((2 * N)) records | $(per "${R[jit$N]}" "${R[jit$((2 * N))]}" "$N") | $(per "${R[quick$N]}" "${R[quick$((2 * N))]}" "$N") | $(per "${R[vm$N]}" "${R[vm$((2 * N))]}" "$N") | $(per "${R[hand$N]}" "${R[hand$((2 * N))]}" "$N") |"
