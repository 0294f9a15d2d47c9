#!/usr/bin/env bash
# Conformance gate: runs the shared conformance suite against this build and
# fails only when a step listed in expected-pass.txt fails (or an override is
# missing its WHY). Usage: conformance/run-gate.sh BUILD_DIR [extra run.sh args]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../build}" && pwd)
shift || true
shared=${RDB_SHARED_DIR:-$here/../../shared}
runner=$shared/conformance/run.sh
if [ ! -f "$runner" ]; then
  echo "conformance: $runner not found (set RDB_SHARED_DIR to the shared/ folder)" >&2
  exit 1
fi
exec bash "$runner" --bin "$build/tools" --expect "$here/expected-pass.txt" \
  --overrides "$here/overrides" --timeout 60 "$@"
