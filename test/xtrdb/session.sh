#!/usr/bin/env bash
# xtrdb on the bundled example's artifacts: one session through the commands
# that read a store (help, open, desc, size, list, rlist, hex, getpos, meta)
# compared with session.expected. Usage: session.sh XRETRACTOR XTRDB
set -uo pipefail
XR=$1 XT=$2
HERE=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d /tmp/rdb-xtrdb.XXXXXX)
trap 'rm -rf "$W"' EXIT
export TMPDIR=$W
cp "$HERE/../../examples/sensors.rql" "$HERE"/../../examples/sensor_*.txt "$W/"
cd "$W" && mkdir out
"$XR" sensors.rql --no-clock -m 40 >/dev/null 2>&1 || { echo "xretractor failed"; exit 1; }
printf '%s\n' help "storage out" "open joined" desc descc size "list 3" "rlist 2" hex "list 1" dec "getpos 2" \
  meta "open smooth" desc size "list 2" quit | "$XT" noprompt > session.out 2>&1
if diff -u "$HERE/session.expected" session.out; then
  echo "xtrdb session: as expected"
else
  echo "xtrdb session: differs from session.expected (above)"
  exit 1
fi
