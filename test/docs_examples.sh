#!/usr/bin/env bash
# Every ```rql block of the given docs must compile: `xretractor -c` exits 0.
set -u
xr=$1; shift
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for doc in "$@"; do
  awk -v dir="$tmp" -v tag="$(basename "$doc" .md)" '/^```rql$/ {n++; f=dir "/" tag n ".rql"; on=1; next} /^```$/ {on=0} on {print > f}' "$doc"
done
pass=0 fail=0
for f in "$tmp"/*.rql; do
  if "$xr" -c "$f" >/dev/null 2>"$tmp/err"; then pass=$((pass+1)); else
    echo "FAIL $(basename "$f"):"; cat "$f"; cat "$tmp/err"; fail=$((fail+1)); fi
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
