#!/usr/bin/env bash
# Every input the fuzzer (or a review) found must now end in a clean error or
# a plan: an exit status of 0, 1, 4 or 71 within 20 s, never a signal.
set -u
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
