#!/usr/bin/env bash
# Sets the project up and compiles the bundled example, printing its plan.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh >/dev/null
build/tools/xretractor -c examples/sensors.rql
