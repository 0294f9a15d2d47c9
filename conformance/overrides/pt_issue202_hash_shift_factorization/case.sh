#!/usr/bin/env bash
# Conformance case pt_issue202_hash_shift_factorization
# Converted from michalwidera/retractordb test/IntegrationTest_parallel/issue202_hash_shift_factorization/CMakeLists.txt by tools/peer2case.py; do not edit by hand.
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

# --- pt_issue202_hash_shift_factorization-matched
step_1() {
  cd "$CASE_ROOT/IntegrationTest_parallel/issue202_hash_shift_factorization" || return 1
  (
    # reference runs this with: bash -c
set -e ;
    "$XRETRACTOR" matched.rql -c > matched.out ;
    grep -F 'matched(1/15)' matched.out ;
    grep -F ':- PUSH_STREAM(STREAM_HASH_A_B)' matched.out ;
    grep -F ':- STREAM_TIMEMOVE(3)' matched.out ;
    grep -F 'STREAM_HASH_A_B(1/15)' matched.out ;
    if grep -F 'STREAM_TIMEMOVE_2_A(' matched.out ; then exit 1 ; fi ;
    if grep -F 'STREAM_TIMEMOVE_1_B(' matched.out ; then exit 1 ; fi
  )
}

# --- pt_issue202_hash_shift_factorization-unmatched
step_2() {
  cd "$CASE_ROOT/IntegrationTest_parallel/issue202_hash_shift_factorization" || return 1
  (
    # reference runs this with: bash -c
set -e ;
    "$XRETRACTOR" unmatched.rql -c > unmatched.out ;
    grep -F 'unmatched(1/15)' unmatched.out ;
    grep -F ':- PUSH_STREAM(STREAM_TIMEMOVE_1_A)' unmatched.out ;
    grep -F ':- PUSH_STREAM(STREAM_TIMEMOVE_1_B)' unmatched.out ;
    grep -F 'STREAM_TIMEMOVE_1_A(1/10)' unmatched.out ;
    grep -F 'STREAM_TIMEMOVE_1_B(1/5)' unmatched.out ;
    if grep -F 'STREAM_HASH_A_B(' unmatched.out ; then exit 1 ; fi
  )
}

# --- pt_issue202_hash_shift_factorization-zero
step_3() {
  cd "$CASE_ROOT/IntegrationTest_parallel/issue202_hash_shift_factorization" || return 1
  (
    # reference runs this with: bash -c
set -e ;
    "$XRETRACTOR" zero.rql -c > zero.out ;
    grep -F 'zero(1/20)' zero.out ;
    grep -F ':- PUSH_STREAM(STREAM_HASH_A_B)' zero.out ;
    grep -F 'STREAM_HASH_A_B(1/20)' zero.out ;
    if grep -F 'STREAM_TIMEMOVE(' zero.out ; then exit 1 ; fi
  )
}

rdb_list() {
  cat <<'RDB_STEPS'
pt_issue202_hash_shift_factorization-matched|step_1||xretractor|||
pt_issue202_hash_shift_factorization-unmatched|step_2||xretractor|||
pt_issue202_hash_shift_factorization-zero|step_3||xretractor|||
RDB_STEPS
}

rdb_function() {
  case "$1" in
    pt_issue202_hash_shift_factorization-matched) echo step_1 ;;
    pt_issue202_hash_shift_factorization-unmatched) echo step_2 ;;
    pt_issue202_hash_shift_factorization-zero) echo step_3 ;;
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
