#!/usr/bin/env bash
# xtrdb over ROTATION archives: two engine sessions leave x.old0 and x.old1,
# each with the index and shadow of its session (x.meta.oldN, x.shadow.oldN).
# `xtrdb -s x` lists them by session; `open x.old0` reads that session's
# records with its own NULL bits and creates no file. A third session with x
# of another layout leaves x.old2: each archive reads with its own descriptor
# (x.desc.oldN), so sessions 0 and 2 both read as written.
# Usage: rotation.sh XRETRACTOR XTRDB
set -uo pipefail
XR=$1 XT=$2
W=$(mktemp -d /tmp/rdb-xtrdb-rot.XXXXXX)
trap 'rm -rf "$W"' EXIT
export TMPDIR=$W
cd "$W" || exit 1
printf '1 2\n3 NULL\n5 6\n7 8\n' > s.txt
cat > q.rql <<'Q'
STORAGE '.'
ROTATION 'rot.txt'
DECLARE a INTEGER, b INTEGER STREAM src, 1 TEXTFILE 's.txt'
SELECT src[0], src[1] STREAM x FROM src
Q
"$XR" q.rql --no-clock -m 4 >/dev/null 2>&1 && "$XR" q.rql --no-clock -m 3 >/dev/null 2>&1 || { echo "xretractor failed"; exit 1; }
fail=0
check() {  # check NAME CONDITION...
  local name=$1; shift
  if ! "$@"; then echo "FAIL $name"; fail=1; fi
}
ls x* > before.lst
"$XT" -s x > map.txt 2>&1
check "map lists session 1" grep -q '\[1\] x.old1' map.txt
check "map lists session 0" grep -q '\[0\] x.old0' map.txt
check "map lists the index of session 0" grep -q 'x.meta.old0' map.txt
check "map lists the shadow of session 0" grep -q 'x.shadow.old0' map.txt
printf '%s\n' "open x.old0" size "list 3" quit | "$XT" noprompt > open.txt 2>&1
check "session 0 has 3 records" grep -q '^3 Record(s)' open.txt
check "its index gives record 1 a NULL" grep -qF '{ x_0:3 x_1:null }' open.txt
check "record 2 is not NULL" grep -qF '{ x_0:5 x_1:6 }' open.txt
ls x* > after.lst
check "open creates no file" cmp -s before.lst after.lst
check "session 0 keeps its descriptor" grep -qs 'INTEGER x_1' x.desc.old0
# Session 2: x becomes INTEGER, DOUBLE, STRING[2] (14-byte records instead of 8).
sed 's/SELECT src\[0\], src\[1\] STREAM x/SELECT src[0], to_double(src[1]) \/ 2, '"'ab'"' STREAM x/' q.rql > q2.rql
"$XR" q2.rql --no-clock -m 3 >/dev/null 2>&1 || { echo "xretractor failed (session 2)"; exit 1; }
printf '%s\n' "open x.old0" size "list 3" "open x.old2" size "list 2" quit | "$XT" noprompt > layouts.txt 2>&1
check "session 0 still has 3 records" grep -q '^3 Record(s)' layouts.txt
check "session 0 reads as written" grep -qF '{ x_0:5 x_1:6 }' layouts.txt
check "session 2 reads with its own layout" grep -qF '{ x_0:3 x_1:null x_2:ab }' layouts.txt
check "session 2 has 2 records" grep -q '^2 Record(s)' layouts.txt
check "of 14 bytes" grep -q '^14 Byte(s) per record' layouts.txt
[ $fail = 0 ] && echo "xtrdb over rotation archives: as expected"
exit $fail
