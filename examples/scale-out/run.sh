#!/usr/bin/env bash
# Two edge engines and one aggregator, wired through a three-node NATS cluster
# (MQTT, JetStream R3) on this machine, exactly as they would be across
# machines. Mid-run one broker node is killed; the aggregator must still
# compute from every record the edges produced. Prints what it computed and
# the count of records lost (exit 1 if any was).
#
#   examples/scale-out/run.sh            # after tools/setup.sh (BUILD_DIR=build)
#   RECORDS=300 KILL_AFTER=8 examples/scale-out/run.sh
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=$(cd "${BUILD_DIR:-$ROOT/build}" && pwd)
BIN=$BUILD/tools
RECORDS=${RECORDS:-150}      # records each edge produces (10 per second)
KILL_AFTER=${KILL_AFTER:-6}  # seconds into the edges' run before node 1 is killed
W=$(mktemp -d /tmp/rdb-scale-out.XXXXXX)
CLUSTER="$HERE/nats-cluster.sh"

cleanup() {
  for n in edge1 edge2 aggr; do TMPDIR=$W/$n "$BIN/xqry" -x "$n" -k >/dev/null 2>&1 || true; done
  sleep 0.5
  pkill -f "$W/" 2>/dev/null || true
  "$CLUSTER" stop "$W/nats" >/dev/null 2>&1 || true
  [ -n "${KEEP:-}" ] && echo "kept $W" || rm -rf "$W"
}
trap cleanup EXIT

# A free range of 12 ports for the cluster.
for _ in 1 2 3 4 5; do
  BASE=$((20000 + RANDOM % 20000))
  if hosts=$("$CLUSTER" start "$W/nats" "$BASE" 2>"$W/nats.err"); then break; fi
  hosts=""
  "$CLUSTER" stop "$W/nats" >/dev/null 2>&1 || true
done
[ -n "$hosts" ] || { cat "$W/nats.err"; echo "the NATS cluster did not start"; exit 1; }
URL="mqtt://$hosts"
echo "NATS cluster (MQTT on every node): $hosts"

mkdir -p "$W/edge1" "$W/edge2" "$W/aggr"
seq 1 1000 > "$W/edge1/edge1.txt"                     # edge 1: a counter
awk 'BEGIN { for (i = 0; i < 1000; i++) print (i * 7) % 100 }' > "$W/edge2/edge2.txt"  # edge 2: a saw-tooth
for k in 1 2; do
  cat > "$W/edge$k/edge$k.rql" <<EOQ
DECLARE v INTEGER STREAM s, 1/10 TEXTFILE 'edge$k.txt'
SELECT s[0] STREAM e$k FROM s PUBLISH '$URL/edge/e$k'
EOQ
done
# The aggregator reads both edges. TIMEOUT: how long a slot waits for an
# edge's record (a broker fail-over takes seconds); records come in their
# index order, duplicates dropped.
cat > "$W/aggr/aggr.rql" <<EOQ
DECLARE e1_0 INTEGER STREAM e1, 1/10 MQTT '$URL/edge/e1' TIMEOUT 20
DECLARE e2_0 INTEGER STREAM e2, 1/10 MQTT '$URL/edge/e2' TIMEOUT 20
SELECT * STREAM both FROM e1 + e2
SELECT both[0] + both[1] STREAM total FROM both
SELECT MAX(total[0] : 10) STREAM peak FROM total
SELECT * STREAM mixed FROM e1 # e2
EOQ

start() {  # name query [args]: an engine in its own directory, with its own lock and socket
  local n=$1 q=$2
  shift 2
  (cd "$W/$n" && TMPDIR=$W/$n exec "$BIN/xretractor" "$q" -k -v --name "$n" "$@" >"$W/$n/out" 2>"$W/$n/err") &
}
detail() { TMPDIR=$W/$1 "$BIN/xqry" -x "$1" -t "$2" 2>/dev/null | awk -v k="$3" '$1 == k":" {print $2}'; }
waitfor() {  # seconds condition...
  local end=$((SECONDS + $1))
  shift
  until "$@"; do
    [ $SECONDS -lt $end ] || return 1
    sleep 0.2
  done
}
subscribed() { [ "$(detail aggr e1 connected)" = 1 ] && [ "$(detail aggr e2 connected)" = 1 ]; }

start aggr aggr.rql
waitfor 30 subscribed || { cat "$W/aggr/err"; echo "the aggregator did not subscribe"; exit 1; }
echo "aggregator subscribed to edge/e1 and edge/e2"
start edge1 edge1.rql -m $((RECORDS + 1))
start edge2 edge2.rql -m $((RECORDS + 1))
sleep "$KILL_AFTER"
echo "killing NATS node 1 (every client is connected to it: the first address of the list)"
"$CLUSTER" kill "$W/nats" 1 >/dev/null
wait_edges() { ! pgrep -f "edge1.rql" >/dev/null && ! pgrep -f "edge2.rql" >/dev/null; }
waitfor $((RECORDS / 10 + 60)) wait_edges || { echo "the edges did not finish"; exit 1; }
produced1=$(($(stat -c %s "$W/edge1/e1") / 4))
produced2=$(($(stat -c %s "$W/edge2/e2") / 4))
echo "edges finished: edge1 produced $produced1 records, edge2 $produced2"
grep -h '^publish:' "$W/edge1/out" "$W/edge2/out" | sed 's/^/  /'
taken() {
  local r1 r2
  r1=$(detail aggr e1 reads) r2=$(detail aggr e2 reads)
  [ "${r1:-0}" -ge "$produced1" ] && [ "${r2:-0}" -ge "$produced2" ]
}
waitfor 60 taken || echo "the aggregator did not take every record in time"
for s in e1 e2; do
  echo "  aggregator $s: reads $(detail aggr $s reads), misses $(detail aggr $s misses)," \
       "duplicates or late dropped $(detail aggr $s dropped)"
done
TMPDIR=$W/aggr "$BIN/xqry" -x aggr -k >/dev/null
sleep 1

# What the aggregator computed, against what the edges stored.
list() { printf 'open %s\nlist %s\nquit\n' "$2" "$3" | (cd "$W/$1" && "$BIN/xtrdb" -n) | grep '^{' | tr -d '{}'; }
count() { (cd "$W/$1" && stat -c %s "$2") | awk -v r="$3" '{print int($1 / r)}'; }
list edge1 e1 "$produced1" | awk '{sub(/.*:/, "", $1); print $1}' > "$W/e1.txt"
list edge2 e2 "$produced2" | awk '{sub(/.*:/, "", $1); print $1}' > "$W/e2.txt"
list aggr both "$(count aggr both 8)" > "$W/both.txt"
list aggr total "$(count aggr total 4)" > "$W/total.txt"
python3 - "$W" <<'EOPY'
import sys
w = sys.argv[1]
e1 = [int(x) for x in open(w + "/e1.txt")]
e2 = [int(x) for x in open(w + "/e2.txt")]
def fields(line):
    return [None if v.split(":", 1)[1] == "null" else int(v.split(":", 1)[1]) for v in line.split()]
both = [fields(l) for l in open(w + "/both.txt")]
total = [fields(l)[0] for l in open(w + "/total.txt")]
# The aggregator's records that carry edge data, in order.
got = [(a, b) for a, b in both if a is not None or b is not None]
want = list(zip(e1, e2))
lost = sum(1 for k in range(len(want)) if k >= len(got) or got[k] != want[k])
print("aggregator both = e1 + e2 (first 5):", got[:5])
print("aggregator total = both[0] + both[1] (first 5 with data):", [t for t in total if t is not None][:5])
print("records the edges produced: %d + %d; the aggregator combined %d pairs" % (len(e1), len(e2), len(got)))
print("records lost across the broker-node kill: %d" % lost)
sys.exit(1 if lost or len(got) < len(want) else 0)
EOPY
