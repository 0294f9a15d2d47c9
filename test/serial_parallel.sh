#!/usr/bin/env bash
# Runs every conformance query twice, serially (--threads 1) and on the TBB
# flow graph (--threads 2), offline, and requires byte-identical artifacts
# (.meta compared after its 8-byte creation time). Queries that read
# /dev/urandom are skipped (their input differs between runs).
set -u
xr=$1
cases=${2:-${RDB_SHARED_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/shared}/conformance/cases}
[ -d "$cases" ] || { echo "serial_parallel: no cases at $cases"; echo "0 passed, 1 failed"; exit 1; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
pass=0 fail=0 skip=0
while IFS= read -r q; do
  dir=$(dirname "$q"); name=$(basename "$q")
  if grep -q '/dev/' "$q" || grep -qi 'ROTATION' "$q"; then skip=$((skip+1)); continue; fi
  "$xr" -c "$q" >/dev/null 2>&1 || { skip=$((skip+1)); continue; }
  for mode in 1 2; do
    rm -rf "$work/$mode"; mkdir -p "$work/$mode"; cp -r "$dir/." "$work/$mode/"; chmod -R u+w "$work/$mode"
    (cd "$work/$mode" && timeout 60 "$xr" "$name" --no-clock -m 60 --threads $mode >/dev/null 2>"$work/err$mode")
    echo $? > "$work/rc$mode"
  done
  if ! cmp -s "$work/rc1" "$work/rc2"; then
    echo "FAIL $q: exit status differs ($(cat "$work/rc1") vs $(cat "$work/rc2"))"; fail=$((fail+1)); continue
  fi
  diffs=0
  while IFS= read -r f; do
    rel=${f#"$work/1/"}
    other="$work/2/$rel"
    if [[ "$f" == *.meta ]]; then
      cmp -s <(tail -c +9 "$f") <(tail -c +9 "$other") || { echo "  differs: $rel"; diffs=$((diffs+1)); }
    else
      cmp -s "$f" "$other" || { echo "  differs: $rel"; diffs=$((diffs+1)); }
    fi
  done < <(find "$work/1" -type f ! -name "rc*" ! -name "err*")
  if [ "$diffs" = 0 ]; then pass=$((pass+1)); else echo "FAIL $q"; fail=$((fail+1)); fi
done < <(find "$cases" -name '*.rql' | sort)
echo "skipped $skip queries (device input, rotation, or not compiling)"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
