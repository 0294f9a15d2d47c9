#!/usr/bin/env bash
# The programs as a new user meets them: --help lists every run option in its
# group, --version names the build, and an offline run on a terminal shows one
# progress line (under `script`, a real pty), none with --quiet or without a terminal.
set -u
B=$(cd "${1:?build dir}" && pwd)/tools
W=$(mktemp -d /tmp/rdb-cli.XXXXXX)
trap 'rm -rf "$W"' EXIT
. "$(dirname "$0")/lib.sh"

help=$("$B/xretractor" --help 2>&1)
for opt in -m --no-clock --until-eof --interpret --threads -k -r --name -x -s -v --config --block --jit-tier \
           --allow-adhoc-system --onlycompile --build-info --version; do
  check "xretractor --help lists $opt" 'grep -q -- "$opt" <<<"$help"'
done
for group in Compile Run Instance Output; do
  check "xretractor --help has the $group group" 'grep -q "^$group" <<<"$help"'
done
check "xretractor -c -h keeps the compile options" '"$B/xretractor" -c -h 2>&1 | grep -q -- "--dot"'
for p in xretractor xqry xtrdb; do
  check "$p --version names the version and the build" \
        '"$B/$p" --version | grep -q "^$p (retractor) [0-9]" && "$B/$p" --version | grep -q "^build: buildtype=.* jit=.* sanitize="'
done

# xqry --from N takes a record index, 0 to 2^63-1, digits only. Anything else is
# one line naming the option and the range, exit 22, before any engine is asked
# (none serves here: an accepted value gets as far as the connection, exit 10).
mkdir -p "$W/noengine"
for v in -1 9223372036854775808 18446744073709551615 abc 1e3 +5 ' 5' 0x10 ''; do
  err=$(TMPDIR=$W/noengine "$B/xqry" -s s --from "$v" 2>&1 >/dev/null); rc=$?
  check "xqry --from '$v' is refused: exit 22, one line naming --from and the range" \
        '[ $rc = 22 ] && [ "$(wc -l <<<"$err")" = 1 ] && grep -q -- "^xqry: --from: .* from 0 to 9223372036854775807 " <<<"$err"'
done
err=$(TMPDIR=$W/noengine "$B/xqry" -s s --from 2>&1 >/dev/null); rc=$?
check "xqry --from without a value: exit 22, one line" '[ $rc = 22 ] && [ "$(wc -l <<<"$err")" = 1 ]'
for v in 0 99999999 9223372036854775807; do
  TMPDIR=$W/noengine "$B/xqry" -s s --from "$v" >/dev/null 2>&1; rc=$?
  check "xqry --from $v is accepted (exit 10: no engine serves)" '[ $rc = 10 ]'
done

cd "$W" || exit 1
seq 1 100000 > src.txt
printf "DECLARE v INTEGER STREAM s, 1 TEXTFILE 'src.txt'\nSELECT s[0]*2 STREAM d FROM s\n" > q.rql
# Slow enough to be seen: slot by slot, well past the line's first update
# (a quarter second; 3 M slots ran in about that).
run() { TMPDIR=$W script -qefc "$B/xretractor q.rql -k -f -m 20000000 --block 1 $*" /dev/null; }
out=$(run 2>&1)
check "an offline run on a terminal shows its progress" 'grep -q "records/s" <<<"$out"'
check "the progress line has the ETA from -m" 'grep -q "of 20000000 ([0-9]*%).*ETA" <<<"$out"'
check "the line updates in place (carriage returns, one line)" '[ "$(tr -cd "\r" <<<"$out" | wc -c)" -ge 2 ]'
out=$(run --quiet 2>&1)
check "--quiet shows no progress" '! grep -q "records/s" <<<"$out"'
rm -f d d.desc d.meta d.shadow  # else the run says it removes the earlier run's records of d
err=$(TMPDIR=$W "$B/xretractor" q.rql -k -f -m 3000000 --block 1 2>&1 >/dev/null </dev/null)
check "without a terminal nothing is printed" '[ -z "$err" ]'

# RDB_PERF_MAP: the JIT's functions in perf's map of the process, by name.
if "$B/xretractor" --version | grep -q "jit=on"; then
  printf "DECLARE v INTEGER STREAM s, 1 TEXTFILE 'src.txt'\nSELECT s[0]*2 STREAM a FROM s VOLATILE\nSELECT a[0]+1 STREAM b FROM a\n" > chain.rql
  pid=$(TMPDIR=$W RDB_PERF_MAP=1 sh -c 'echo $$; exec "$0" chain.rql -f -m 1000 --no-clock --jit-tier optimised >/dev/null 2>&1' "$B/xretractor")
  check "RDB_PERF_MAP writes /tmp/perf-PID.map naming the plan's functions" \
    'grep -Eq "^[0-9a-f]+ [0-9a-f]+ plan_[0-9]+$" /tmp/perf-$pid.map'
  rm -f "/tmp/perf-$pid.map"
fi
finish
