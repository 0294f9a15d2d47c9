#!/usr/bin/env bash
# The language's command-line side: grouping warnings (`-c` prints them
# located and succeeds; `--strict` makes them errors, exit 71, when compiling
# and when starting a run) and what DEFAULT VOLATILE leaves on disk.
set -u
xr=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp" && export TMPDIR=$tmp
printf '1 2 3\n' > s.txt
cat > q.rql <<'Q'
DECLARE a INTEGER, b INTEGER, c INTEGER STREAM s, 1 TEXTFILE 's.txt'
SELECT a - b + c STREAM t FROM s
Q
pass=0 fail=0
check() { if eval "$2"; then pass=$((pass+1)); else echo "FAIL $1"; fail=$((fail+1)); fi; }
"$xr" -c q.rql >out 2>err; rc=$?
check "-c exits 0 with a warning" '[ $rc = 0 ] && grep -qF "q.rql:2:10: warning: '"'"'a - b + c'"'"' groups as a - (b + c)" err && [ -s out ]'
"$xr" -c --strict q.rql >out 2>err; rc=$?
check "-c --strict exits 71" '[ $rc = 71 ] && grep -qF "q.rql:2:10: error: " err && [ ! -s out ]'
"$xr" --strict -f -r -u q.rql >out 2>err; rc=$?
check "a strict run refuses to start" '[ $rc = 71 ] && [ ! -e t ]'
"$xr" -f -r -u q.rql >out 2>err; rc=$?
check "a run starts with the warning" '[ $rc = 0 ] && grep -qF "warning:" err'
# DEFAULT VOLATILE: the volatile result and the substrates keep no data file;
# the PERSISTENT result and the explicitly stored one do.
cat > v.rql <<'Q'
DEFAULT VOLATILE
DECLARE a INTEGER, b INTEGER, c INTEGER STREAM s, 1 TEXTFILE 's.txt'
SELECT a * 2 STREAM scaled FROM s
SELECT * STREAM kept FROM (scaled > 1) + s PERSISTENT
SELECT * STREAM plain FROM s STORAGE DEFAULT
Q
printf '1 2 3\n4 5 6\n7 8 9\n' > s.txt
rm -f scaled* kept* plain* STREAM_*
"$xr" -f -r -u v.rql >out 2>err; rc=$?
check "DEFAULT VOLATILE runs" '[ $rc = 0 ]'
check "a volatile result has no data file" '[ ! -e scaled ] && [ -e scaled.desc ]'
check "a substrate under DEFAULT VOLATILE has no data file" '[ -e STREAM_TIMEMOVE_1_scaled.desc ] && [ ! -e STREAM_TIMEMOVE_1_scaled ]'
check "PERSISTENT and STORAGE DEFAULT results are stored" '[ -s kept ] && [ -s plain ]'
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
