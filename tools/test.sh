#!/usr/bin/env bash
# Sets the project up (Debian packages, build) and runs every test:
# unit tests, engine tests, CLI error cases and the conformance gate; then the
# unit, engine and CLI-error tests again on an ASan+UBSan build
# (RDB_SANITIZE=0 skips that stage). Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh || { echo "0 passed, 1 failed"; exit 1; }
BUILD=${BUILD_DIR:-build}
meson test -C "$BUILD" --print-errorlogs --num-processes 2
rc=$?

# meson's own summaries are above; count both runs in the plain form.
count() {  # BUILD_DIR -> "ok bad"
  local log="$1/meson-logs/testlog.json" ok=0 bad=0
  if [ -f "$log" ]; then
    ok=$(grep -c '"result": "OK"' "$log" || true)
    bad=$(grep -c -E '"result": "(FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS)"' "$log" || true)
  fi
  echo "$ok $bad"
}
read -r ok bad < <(count "$BUILD")

if [ "${RDB_SANITIZE:-1}" != 0 ]; then
  SAN=${SAN_BUILD_DIR:-build-asan}
  echo "== ASan+UBSan: unit, engine (both halves) and CLI-error tests =="
  if [ ! -f "$SAN/build.ninja" ]; then
    meson setup "$SAN" --buildtype=plain -Doptimization=1 -Dsanitize=address,undefined -Db_lundef=false >/dev/null ||
      { echo "sanitizer build: setup failed"; bad=$((bad + 1)); }
  fi
  if [ -f "$SAN/build.ninja" ] &&
     ninja -C "$SAN" test/unit_tests test/engine_tests tools/xretractor tools/xqry >"$SAN-build.log" 2>&1; then
    # LLVM keeps its global state until exit: leak reports come from there, not from us.
    # The JIT/VM differential runs its full 10,000 programs in the release build; 2,000 here.
    # One process at a time: side by side under ASan, the DEVICE TIMEOUT test missed its pauses.
    RDB_DIFF_PROGRAMS=${RDB_DIFF_PROGRAMS:-2000} ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:halt_on_error=1 \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:suppressions=$PWD/test/sanitizers/ubsan.supp \
      meson test -C "$SAN" --no-rebuild --print-errorlogs --num-processes 1 --timeout-multiplier 3 \
        unit engine engine-oracles cli-errors
    src=$?
    [ $src -ne 0 ] && rc=$src
    read -r sok sbad < <(count "$SAN")
    ok=$((ok + sok)); bad=$((bad + sbad))
  else
    echo "sanitizer build failed:"; tail -40 "$SAN-build.log"
    bad=$((bad + 1)); rc=1
  fi
fi
echo "$ok passed, $bad failed"
exit $rc
