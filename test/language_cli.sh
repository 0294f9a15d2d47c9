#!/usr/bin/env bash
# The language's command-line side: grouping warnings (`-c` prints them
# located and succeeds; `--strict` makes them errors, exit 71, when compiling
# and when starting a run) and what DEFAULT VOLATILE leaves on disk.
set -u
xr=$1
tmp=$(mktemp -d); trap '[ -n "${KEEP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"' EXIT
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
# A one-number RETENTION on a file store (plans written for the reference):
# a located warning, the run keeps every record, the .desc has RETMEMORY and
# TYPE as the reference writes them; --strict refuses it.
printf '1\n2\n3\n4\n5\n6\n7\n8\n9\n' > r.txt
cat > r.rql <<'Q'
DECLARE a INTEGER STREAM rs, 1 TEXTFILE 'r.txt' ONESHOT
SELECT rs[0] * 10 STREAM q FROM rs RETENTION 4
SELECT rs[0] STREAM p FROM rs RETENTION 4 STORAGE POSIXSHD
Q
"$xr" -f -r -u r.rql >out 2>err; rc=$?
check "RETENTION n on a file store runs with a located warning" '[ $rc = 0 ] && grep -qF "r.rql:2:1: warning: RETENTION 4 of stream '"'"'q'"'"' has no segment count: on a file store (STORAGE DEFAULT) the file keeps every record and the in-memory history follows the plan'"'"'s demand; write RETENTION 4 <segments> for a bounded file" err && grep -qF "r.rql:3:1: warning: RETENTION 4 of stream '"'"'p'"'"'" err'
check "the file keeps every record" '[ "$(stat -c %s q)" = 36 ] && [ "$(stat -c %s p)" = 36 ]'
check "its .desc: RETMEMORY and TYPE" '[ "$(tr -s "\t\n" "  " < q.desc)" = "{ INTEGER q_0 RETMEMORY 1 TYPE DEFAULT }" ] && [ "$(tr -s "\t\n" "  " < p.desc)" = "{ INTEGER p_0 RETMEMORY 1 TYPE POSIXSHD }" ]'
"$xr" -c --strict r.rql >out 2>err; rc=$?
check "--strict refuses RETENTION n on a file store" '[ $rc = 71 ] && grep -qF "r.rql:2:1: error: RETENTION 4" err'
# A TEXTFILE value outside its field's type is NULL, counted and logged (the
# first 10, then every 1000th), never a clamped value.
{ echo "7 2147483648"; for _ in $(seq 2499); do echo "1 99999999999"; done; } > big.txt
cat > big.rql <<'Q'
DECLARE a INTEGER, b INTEGER STREAM bs, 1 TEXTFILE 'big.txt' ONESHOT
SELECT bs[0], bs[1] STREAM o FROM bs
Q
rm -f o o.*
"$xr" -f -u -v big.rql >out 2>err; rc=$?
check "out-of-range text values: the run goes on" '[ $rc = 0 ]'
check "the first is logged with file, byte and record" 'grep -qF "warning: TEXTFILE source big.txt at byte 2 (record 0, element 1): '"'"'2147483648'"'"' is out of the range of INTEGER; stored NULL (1 so far)" err'
check "10 logged, then every 1000th" '[ "$(grep -c "is out of the range of INTEGER" err)" = 12 ] && grep -qF "(2000 so far)" err'
check "-v counts them" 'grep -qF "source: bs 2500 values out of range, stored NULL" out'
printf 'open o\nlist 1\nquit\n' | "${xr%/*}/xtrdb" noprompt >list 2>&1
check "the stored value is NULL, not 2147483647" 'grep -qF "o_1:null" list && ! grep -q 2147483647 list'
# The JIT counts the RATIONAL roundings the VM counts: none for a NULL result.
printf '1 3 5 0 715827883 1073741789\n' > n.txt
cat > n.rql <<'Q'
DECLARE a INTEGER, b INTEGER, c INTEGER, d INTEGER, e INTEGER, f INTEGER STREAM ns, 1 TEXTFILE 'n.txt'
SELECT (SUMC(ns[0] : 1) / r[1]) * ((SUMC(ns[2] : 1) / r[3]) - (SUMC(ns[4] : 1) / r[5])) STREAM r FROM ns
Q
rm -f r r.*; "$xr" n.rql -f -m 3 -v >jit.out 2>&1
rm -f r r.*; "$xr" n.rql -f -m 3 -v --interpret >vm.out 2>&1
check "JIT and VM count the same roundings (none for NULL results)" '! grep -q "^rounded:" jit.out && ! grep -q "^rounded:" vm.out'
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
