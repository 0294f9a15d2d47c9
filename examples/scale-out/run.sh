#!/usr/bin/env bash
# Two edge engines and one aggregator, wired through a three-node NATS cluster
# (MQTT, JetStream R3) on this machine, exactly as they would be across
# machines. Mid-run one broker node is killed; the aggregator must still
# compute from every record the edges produced. Prints what it computed and
# the count of records lost (exit 1 if any was).
#
#   examples/scale-out/run.sh            # after tools/setup.sh (BUILD_DIR=build)
#   RECORDS=300 KILL_AFTER=8 examples/scale-out/run.sh
#   ROUNDS=10 LOAD=2 RECORDS=40 KILL_AFTER=2 examples/scale-out/run.sh   # meson test scale-out
#
# ROUNDS runs back to back on one cluster: round r kills node (r-1)%3+1, which
# the engines list first (so every client is on it), and starts it again for
# the next round. LOAD busy loops run beside them, as on a loaded CI machine.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=$(cd "${BUILD_DIR:-$ROOT/build}" && pwd)
BIN=$BUILD/tools
RECORDS=${RECORDS:-150}      # records each edge produces (10 per second)
KILL_AFTER=${KILL_AFTER:-6}  # seconds into the edges' run before a node is killed
ROUNDS=${ROUNDS:-1}
LOAD=${LOAD:-0}
# The edges' [mqtt] drain_s: an edge whose run ends while its client moves to
# another node waits this long for it (a fail-over on a busy machine takes seconds).
DRAIN_S=${DRAIN_S:-60}
W=$(mktemp -d /tmp/rdb-scale-out.XXXXXX)
CLUSTER="$HERE/nats-cluster.sh"
PIDS=()  # the engines and busy loops this script started

cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  "$CLUSTER" stop "$W/nats" >/dev/null 2>&1 || true
  [ -n "${KEEP:-}" ] && echo "kept $W" || rm -rf "$W"
}
trap cleanup EXIT

for ((i = 0; i < LOAD; i++)); do
  yes >/dev/null &
  PIDS+=($!)
done
[ "$LOAD" -gt 0 ] && echo "load: $LOAD busy loops"

# A free range of 12 ports for the cluster.
for _ in 1 2 3 4 5; do
  BASE=$((20000 + RANDOM % 20000))
  if hosts=$("$CLUSTER" start "$W/nats" "$BASE" 2>"$W/nats.err"); then break; fi
  hosts=""
  "$CLUSTER" stop "$W/nats" >/dev/null 2>&1 || true
done
[ -n "$hosts" ] || { cat "$W/nats.err"; echo "the NATS cluster did not start"; exit 1; }
IFS=, read -r -a NODE <<<"$hosts"
echo "NATS cluster (MQTT on every node): $hosts"

seq 1 1000 >"$W/edge1.txt"                                                       # edge 1: a counter
awk 'BEGIN { for (i = 0; i < 1000; i++) print (i * 7) % 100 }' >"$W/edge2.txt"  # edge 2: a saw-tooth

start() {  # dir name query [args]: an engine in its own directory, with its own lock and socket
  local d=$1 n=$2 q=$3
  shift 3
  (cd "$d" && TMPDIR=$d exec "$BIN/xretractor" "$q" -k -v --name "$n" "$@" >"$d/out" 2>"$d/err") &
  PIDS+=($!)
  LAST=$!
}
detail() { TMPDIR=$1 "$BIN/xqry" -x "$2" -t "$3" 2>/dev/null | awk -v k="$4" '$1 == k":" {print $2}'; }
waitfor() {  # seconds condition...
  local end=$((SECONDS + $1))
  shift
  until "$@"; do
    [ $SECONDS -lt $end ] || return 1
    sleep 0.2
  done
}
gone() { for p in "$@"; do ! kill -0 "$p" 2>/dev/null || return 1; done; }
list() { printf 'open %s\nlist %s\nquit\n' "$2" "$3" | (cd "$1" && TMPDIR=$1 "$BIN/xtrdb" -n) | grep '^{' | tr -d '{}'; }
count() { (cd "$1" && stat -c %s "$2") | awk -v r="$3" '{print int($1 / r)}'; }

round() {  # r: one run of the edges and the aggregator with node k killed mid-run; LOST counts a lossy round
  local r=$1 R=$W/r$1 t0=$SECONDS
  local k=$(((r - 1) % 3 + 1))
  local url="mqtt://${NODE[k - 1]}" n e1 e2 a
  for n in 1 2 3; do [ "$n" = "$k" ] || url+=",${NODE[n - 1]}"; done
  mkdir -p "$R/edge1" "$R/edge2" "$R/aggr"
  for n in 1 2; do
    cp "$W/edge$n.txt" "$R/edge$n/"
    printf '[mqtt]\ndrain_s = %s\n' "$DRAIN_S" >"$R/edge$n/edge.toml"
    cat >"$R/edge$n/edge$n.rql" <<EOQ
DECLARE v INTEGER STREAM s, 1/10 TEXTFILE 'edge$n.txt'
SELECT s[0] STREAM e$n FROM s PUBLISH '$url/edge/r$r/e$n'
EOQ
  done
  # The aggregator reads both edges. TIMEOUT: how long a slot waits for an
  # edge's record (a broker fail-over takes seconds); records come in their
  # index order, duplicates dropped.
  cat >"$R/aggr/aggr.rql" <<EOQ
DECLARE e1_0 INTEGER STREAM e1, 1/10 MQTT '$url/edge/r$r/e1' TIMEOUT 20
DECLARE e2_0 INTEGER STREAM e2, 1/10 MQTT '$url/edge/r$r/e2' TIMEOUT 20
SELECT * STREAM both FROM e1 + e2
SELECT both[0] + both[1] STREAM total FROM both
SELECT MAX(total[0] : 10) STREAM peak FROM total
SELECT * STREAM mixed FROM e1 # e2
EOQ
  subscribed() { [ "$(detail "$R/aggr" aggr$r e1 connected)" = 1 ] && [ "$(detail "$R/aggr" aggr$r e2 connected)" = 1 ]; }
  start "$R/aggr" "aggr$r" aggr.rql
  a=$LAST
  waitfor 30 subscribed || { cat "$R/aggr/err"; echo "the aggregator did not subscribe"; return 1; }
  [ "$ROUNDS" -gt 1 ] || echo "aggregator subscribed to edge/r$r/e1 and edge/r$r/e2"
  start "$R/edge1" "edge1r$r" edge1.rql -g edge.toml -m $((RECORDS + 1))
  e1=$LAST
  start "$R/edge2" "edge2r$r" edge2.rql -g edge.toml -m $((RECORDS + 1))
  e2=$LAST
  sleep "$KILL_AFTER"
  [ "$ROUNDS" -gt 1 ] || echo "killing NATS node $k (every client is connected to it: the first address of the list)"
  "$CLUSTER" kill "$W/nats" "$k" >/dev/null
  waitfor $((RECORDS / 10 + DRAIN_S + 30)) gone "$e1" "$e2" || { echo "the edges did not finish"; return 1; }
  # The next round needs all three nodes: node k starts again while the aggregator finishes.
  local restart=
  if [ "$r" -lt "$ROUNDS" ]; then
    "$CLUSTER" restart "$W/nats" "$k" >"$W/restart.log" 2>&1 &
    restart=$!
  fi
  local produced1=$(($(stat -c %s "$R/edge1/e1") / 4)) produced2=$(($(stat -c %s "$R/edge2/e2") / 4))
  if [ "$ROUNDS" -gt 1 ]; then
    printf 'round %d/%d: node %d killed;' "$r" "$ROUNDS" "$k"
    grep -h '^publish:' "$R/edge1/out" "$R/edge2/out" | sed 's/^publish: \(e[12]\) \([0-9]*\) acknowledged, \([0-9]*\) dropped, \([0-9]*\) still queued/ \1 \2 acknowledged \3 dropped \4 queued;/' | tr -d '\n'
  else
    echo "edges finished: edge1 produced $produced1 records, edge2 $produced2"
    grep -h '^publish:' "$R/edge1/out" "$R/edge2/out" | sed 's/^/  /'
  fi
  # A slot computes from the records before its own read, so once the stored
  # pairs hold the edges' last but one, the aggregator has read the last
  # records; the slot after waits TIMEOUT for one more (serving no client),
  # and a stop ends that wait and stores the last pair. From the file, then.
  local last1 last2
  last1=$(sed -n "$((produced1 - 1))p" "$W/edge1.txt") last2=$(sed -n "$((produced2 - 1))p" "$W/edge2.txt")
  taken() {
    python3 -c 'import struct, sys
d = open(sys.argv[1], "rb").read()
sys.exit(0 if struct.pack("<ii", int(sys.argv[2]), int(sys.argv[3])) in d else 1)' \
      "$R/aggr/both" "$last1" "$last2" 2>/dev/null
  }
  waitfor 30 taken || echo "the aggregator did not take every record in time"
  kill -TERM "$a"
  waitfor 15 gone "$a" || true
  if [ "$ROUNDS" -eq 1 ]; then
    grep -hE '^(device|mqtt):' "$R/aggr/out" | sed -E 's/^(device|mqtt):/  aggregator/'
  fi

  # What the aggregator computed, against what the edges stored.
  list "$R/edge1" e1 "$produced1" | awk '{sub(/.*:/, "", $1); print $1}' >"$R/e1.txt"
  list "$R/edge2" e2 "$produced2" | awk '{sub(/.*:/, "", $1); print $1}' >"$R/e2.txt"
  list "$R/aggr" both "$(count "$R/aggr" both 8)" >"$R/both.txt"
  list "$R/aggr" total "$(count "$R/aggr" total 4)" >"$R/total.txt"
  python3 - "$R" "$ROUNDS" "$((SECONDS - t0))" <<'EOPY' || LOST=$((LOST + 1))
import sys
w, rounds, secs = sys.argv[1], int(sys.argv[2]), sys.argv[3]
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
if rounds > 1:
    print(" aggregator combined %d of %d pairs; lost %d (%s s)" % (len(got), len(want), lost, secs))
else:
    print("aggregator both = e1 + e2 (first 5):", got[:5])
    print("aggregator total = both[0] + both[1] (first 5 with data):", [t for t in total if t is not None][:5])
    print("records the edges produced: %d + %d; the aggregator combined %d pairs" % (len(e1), len(e2), len(got)))
    print("records lost across the broker-node kill: %d" % lost)
sys.exit(1 if lost or len(got) < len(want) else 0)
EOPY
  if [ -n "$restart" ] && ! wait "$restart"; then
    cat "$W/restart.log"
    echo "node $k did not start again"
    return 1
  fi
}

LOST=0  # rounds that lost a record
T0=$SECONDS
for ((r = 1; r <= ROUNDS; r++)); do round "$r"; done
if [ "$ROUNDS" -gt 1 ]; then
  echo "rounds without a lost record: $((ROUNDS - LOST)) of $ROUNDS ($((SECONDS - T0)) s, load $LOAD)"
fi
[ "$LOST" -eq 0 ]
