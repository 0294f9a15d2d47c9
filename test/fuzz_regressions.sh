#!/usr/bin/env bash
# Every input the fuzzer (or a review) found must now end in a clean error or
# a plan: an exit status of 0, 1, 4 or 71 within 20 s, never a signal.
#   fuzz_regressions.sh XRETRACTOR DIR                # DIR/*.rql through xretractor -c
#   fuzz_regressions.sh --storagemap XTRDB DIR        # DIR/<case>/s{,.desc,.meta}: xtrdb -s s
# The second form replays damaged stream files (found in review of the .meta
# readers): the storage map must be drawn (exit 0) within 20 s and 2 GiB.
set -u
if [ "${1:-}" = --storagemap ]; then
  xtrdb=$2; dir=$3
  pass=0 fail=0
  asan=0
  if ldd "$xtrdb" 2>/dev/null | grep -q libasan; then asan=1; fi  # ASan reserves more address space
  for c in "$dir"/*/; do
    (cd "$c" && { [ "$asan" = 1 ] || ulimit -v 2097152; } && timeout 20 "$xtrdb" -s s) >/dev/null 2>&1; rc=$?
    if [ "$rc" = 0 ]; then pass=$((pass+1)); else echo "FAIL $(basename "$c"): exit status $rc"; fail=$((fail+1)); fi
  done
  echo "$pass passed, $fail failed"
  [ "$fail" = 0 ] && [ "$pass" -gt 0 ]
  exit
fi
xr=$1; dir=$2
pass=0 fail=0
for f in "$dir"/*.rql; do
  timeout 20 "$xr" -c "$f" >/dev/null 2>&1; rc=$?
  case $rc in
    0|1|4|71) pass=$((pass+1)) ;;
    *) echo "FAIL $(basename "$f"): exit status $rc"; fail=$((fail+1)) ;;
  esac
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
