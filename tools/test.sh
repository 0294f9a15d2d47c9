#!/usr/bin/env bash
# Sets the project up (Debian packages, build) and runs every test:
# unit tests, CLI error cases and the conformance gate. Ends with
# "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh || { echo "0 passed, 1 failed"; exit 1; }
BUILD=${BUILD_DIR:-build}
meson test -C "$BUILD" --print-errorlogs --num-processes 2
rc=$?
# meson's own summary is above; repeat it in the plain form.
log="$BUILD/meson-logs/testlog.json"
if [ -f "$log" ]; then
  ok=$(grep -c '"result": "OK"' "$log" || true)
  bad=$(grep -c -E '"result": "(FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS)"' "$log" || true)
  echo "$ok passed, $bad failed"
fi
exit $rc
