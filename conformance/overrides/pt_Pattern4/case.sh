#!/usr/bin/env bash
# Conformance case pt_Pattern4
# Converted from michalwidera/retractordb test/IntegrationTest_parallel/Pattern4/CMakeLists.txt by tools/peer2case.py; do not edit by hand.
#
#   bash case.sh --list        one line per step: name|function|timeout|uses|requires|skip|flags
#   bash case.sh --run STEP    run one step; the exit status is the result
#
# Programs under test: $XRETRACTOR, $XTRDB, $XQRY (default: found on PATH).

CASE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${XRETRACTOR:=xretractor}" "${XTRDB:=xtrdb}" "${XQRY:=xqry}"
export XRETRACTOR XTRDB XQRY CASE_ROOT


# rdb_compare [--ignore-eol] EXPECTED ACTUAL
#   Portable stand-in for "cmake -E compare_files".  With --ignore-eol the files
#   are compared line by line, ignoring a CR before each LF and a missing final
#   newline (as cmake does); otherwise byte for byte.  Prints a unified diff on
#   mismatch and returns 1.
rdb_compare() {
  local eol=0
  if [ "${1:-}" = "--ignore-eol" ]; then eol=1; shift; fi
  local expected=$1 actual=$2
  if [ ! -f "$expected" ]; then echo "rdb_compare: expected file not found: $expected"; return 1; fi
  if [ ! -f "$actual" ]; then echo "rdb_compare: output file not found: $actual"; return 1; fi
  if [ "$eol" = 1 ]; then
    local a b rc
    a=$(mktemp "${TMPDIR:-/tmp}/rdb_cmp.XXXXXX") || return 1
    b=$(mktemp "${TMPDIR:-/tmp}/rdb_cmp.XXXXXX") || { rm -f "$a"; return 1; }
    awk '{ sub(/\r$/, ""); print }' "$expected" > "$a"
    awk '{ sub(/\r$/, ""); print }' "$actual" > "$b"
    if cmp -s "$a" "$b"; then rc=0; else
      echo "rdb_compare: $actual differs from $expected (line endings ignored)"
      diff -u -L "expected/$expected" -L "actual/$actual" "$a" "$b"
      rc=1
    fi
    rm -f "$a" "$b"
    return $rc
  fi
  if cmp -s "$expected" "$actual"; then return 0; fi
  echo "rdb_compare: $actual differs from $expected (exact comparison)"
  diff -u -L "expected/$expected" -L "actual/$actual" "$expected" "$actual"
  return 1
}

# rdb_copy_if_different SRC DST - stand-in for "cmake -E copy_if_different".
rdb_copy_if_different() {
  cmp -s "$1" "$2" 2>/dev/null || cp "$1" "$2"
}

# --- pt_Pattern4
step_1() {
  cd "$CASE_ROOT/IntegrationTest_parallel/Pattern4" || return 1
  (
    # reference runs this with: sh -c
set -e ;
    rc=0 ; "$XRETRACTOR" query-crc.rql -c > out.txt 2> err.txt || rc=$? ;
    cat err.txt ;
    test "$rc" = 71 ;
    test ! -s out.txt ;
    grep -F "query-crc.rql:5:12: error: unknown function 'Crc'" err.txt
  )
}

rdb_list() {
  cat <<'RDB_STEPS'
pt_Pattern4|step_1||xretractor|||
RDB_STEPS
}

rdb_function() {
  case "$1" in
    pt_Pattern4) echo step_1 ;;
    *) return 1 ;;
  esac
}

case "${1:-}" in
  --list) rdb_list ;;
  --run)
    fn=$(rdb_function "${2:-}") || { echo "case.sh: no such step: ${2:-}" >&2; exit 2; }
    "$fn"
    ;;
  *) echo "usage: bash case.sh --list | --run STEP" >&2; exit 2 ;;
esac
