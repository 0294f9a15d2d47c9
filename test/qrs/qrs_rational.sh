#!/usr/bin/env bash
# The QRS detector of record 205 (rec205-detect.rql, reducer stages RATIONAL)
# run for 20,000 samples with every stream stored, on the JIT and on the VM:
# every stored RATIONAL is valid and mwi, mwi_thr, detect_out follow float64.
# usage: qrs_rational.sh XRETRACTOR   (the shared data: RDB_SHARED_DIR, default ../shared)
set -u
xr=$1
here=$(cd "$(dirname "$0")" && pwd)
rec=${RDB_SHARED_DIR:-$here/../../../shared}/bench-data/rec205
[ -f "$rec/205.dat" ] || { echo "no $rec/205.dat (set RDB_SHARED_DIR)"; echo "0 passed, 1 failed"; exit 1; }
w=$(mktemp -d /tmp/rdb_qrs.XXXXXX)
trap 'rm -rf "$w"' EXIT
cd "$w" || exit 1
python3 "$here/mit212.py" "$rec/205.dat" rec205
cp "$rec/bp_coef.txt" "$rec/d_coef.txt" .
{ echo "STORAGE 'out'"; sed -e 's/ VOLATILE$//' "$rec/rec205-detect.rql"; } > det.rql
pass=0 fail=0
for mode in "" "--interpret"; do
  rm -rf out && mkdir out
  # -v reports the values each stream had to round; the averages of squares do.
  if TMPDIR=$w "$xr" det.rql --no-clock -k -v -m 20000 $mode >run.out 2>run.err &&
     grep -q "^rounded: mwi_thr [0-9]* values" run.out &&
     python3 "$here/check_qrs.py" out rec205 bp_coef.txt d_coef.txt --show 3; then
    pass=$((pass + 1))
  else
    echo "FAIL mode '${mode:-jit}'"; cat run.err; fail=$((fail + 1))
  fi
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
