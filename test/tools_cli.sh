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

cd "$W" || exit 1
seq 1 100000 > src.txt
printf "DECLARE v INTEGER STREAM s, 1 TEXTFILE 'src.txt'\nSELECT s[0]*2 STREAM d FROM s\n" > q.rql
# Slow enough to be seen: slot by slot.
run() { TMPDIR=$W script -qefc "$B/xretractor q.rql -k -f -m 3000000 --block 1 $*" /dev/null; }
out=$(run 2>&1)
check "an offline run on a terminal shows its progress" 'grep -q "records/s" <<<"$out"'
check "the progress line has the ETA from -m" 'grep -q "of 3000000 ([0-9]*%).*ETA" <<<"$out"'
check "the line updates in place (carriage returns, one line)" '[ "$(tr -cd "\r" <<<"$out" | wc -c)" -ge 2 ]'
out=$(run --quiet 2>&1)
check "--quiet shows no progress" '! grep -q "records/s" <<<"$out"'
err=$(TMPDIR=$W "$B/xretractor" q.rql -k -f -m 3000000 --block 1 2>&1 >/dev/null </dev/null)
check "without a terminal nothing is printed" '[ -z "$err" ]'
finish
