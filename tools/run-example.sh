#!/usr/bin/env bash
# Sets the project up, then runs the bundled example: prints its plan, runs
# it offline over examples/*.txt and shows two of the streams it stored.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh >/dev/null
cd examples
rm -rf out && mkdir out
../build/tools/xretractor -c sensors.rql
../build/tools/xretractor sensors.rql --no-clock -m 40
printf 'storage out\nopen joined\nsize\nlist 5\nopen smooth\nsize\nlist 5\nquit\n' | ../build/tools/xtrdb noprompt
