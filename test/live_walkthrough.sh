#!/usr/bin/env bash
# Runs the walk-through of docs/live.md as written, in a temporary directory,
# with the build's programs on PATH; every line must succeed. Then checks what
# it left: the dump of the alarm, and the stream list after the reset.
set -u
B=$(cd "${1:?build dir}" && pwd); DOC=$(cd "$(dirname "$0")/.." && pwd)/docs/live.md
W=$(mktemp -d /tmp/rdb-walk.XXXXXX)
trap 'TMPDIR=$W "$B/tools/xqry" -k >/dev/null 2>&1; rm -rf "$W"' EXIT
awk '/<!-- walkthrough -->/ {on=1; next} on && /^```sh/ {inblock=1; next} inblock && /^```/ {exit} inblock' "$DOC" \
  > "$W/walk.sh"
pass=0 fail=0
check() { if eval "$2"; then echo "PASS $1"; pass=$((pass+1)); else echo "FAIL $1"; fail=$((fail+1)); fi; }
check "the walk-through block was found" '[ -s "$W/walk.sh" ]'
(cd "$W" && export TMPDIR=$W PATH=$B/tools:$PATH && timeout 60 bash -e walk.sh > walk.out 2> walk.err)
rc=$?
check "every line of the walk-through succeeded (exit $rc)" '[ $rc = 0 ]'
[ $rc = 0 ] || { cat "$W/walk.err"; tail -5 "$W/engine.log" 2>/dev/null; }
check "the alarm wrote whole INTEGER records" '[ $(( $(stat -c %s "$W/scaled_hot_dump.tmp" 2>/dev/null || echo 1) % 4 )) = 0 ]'
# The one stream list (xqry -d) is printed after the reset.
names=$(awk -F'|' '/^\|/ {gsub(/ /, "", $2); print $2}' "$W/walk.out" | tr '\n' ' ')
check "after the reset the streams are temp scaled diff ($names)" '[ "$names" = "temp scaled diff " ]'
# diff = scaled - temp = temp: the two records after the list are consecutive.
diffs=$(awk '/^\|/ {seen=1; next} seen && n < 2 {print $1; n++}' "$W/walk.out" | tr -d '\r' | tr '\n' ' ')
check "the records of diff follow temp ($diffs)" '[ "$(echo $diffs | awk "NF == 2 {print \$2 - \$1}")" = 1 ]'
# The replay: records 0..4 of scaled, in order, at their slot times.
replay=$(grep -A5 '^n,t,' "$W/walk.out" | tail -5 | cut -d, -f1,2 | tr -d '\r' | tr '\n' ' ')
check "the replay starts at record 0 ($replay)" '[ "$replay" = "0,1/10 1,1/5 2,3/10 3,2/5 4,1/2 " ]'
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
