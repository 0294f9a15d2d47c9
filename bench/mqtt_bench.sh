#!/usr/bin/env bash
# MQTT throughput on loopback with a real mosquitto: how many messages per
# second one engine ingests from a topic, and how many records per second a
# PUBLISH sink hands to the broker (QoS 1, acknowledged). Prints one line each.
#   bench/mqtt_bench.sh [BUILD_DIR] [MESSAGES]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$(cd "${1:-$ROOT/build}" && pwd)/tools
N=${2:-100000}
W=$(mktemp -d /tmp/rdb-mqtt-bench.XXXXXX)
PORT=$((30000 + RANDOM % 20000))
trap 'TMPDIR=$W "$BIN/xqry" -k >/dev/null 2>&1 || true; kill $(jobs -p) 2>/dev/null || true; rm -rf "$W"' EXIT
printf 'listener %d 127.0.0.1\nallow_anonymous true\nmax_queued_messages 10000000\nmax_inflight_messages 1000\n' "$PORT" > "$W/m.conf"
mosquitto -c "$W/m.conf" > "$W/broker.log" 2>&1 &
sleep 0.5
now() { date +%s.%N; }

# 1. Ingest: four publishers at once, the engine's `received` counter until it has them all.
cd "$W"
printf "DECLARE v INTEGER STREAM m, 1/1000 MQTT 'mqtt://127.0.0.1:%d/in'\nSELECT m[0] STREAM r FROM m VOLATILE\n" "$PORT" > in.rql
TMPDIR=$W "$BIN/xretractor" in.rql -k > in.out 2> in.err &
got() { TMPDIR=$W "$BIN/xqry" -t m 2>/dev/null | awk '$1 == "'"$1"':" {print $2}'; }
for _ in $(seq 100); do [ "$(got connected)" = 1 ] && break; sleep 0.1; done
seq 1 $((N / 4)) > lines
t0=$(now)
for _ in 1 2 3 4; do mosquitto_pub -p "$PORT" -t in -q 1 -l < lines & done
until [ "$(got received)" -ge "$N" ] 2>/dev/null; do sleep 0.02; done
t1=$(now)
echo "ingest: $N messages (QoS 1, 4 publishers) received by one engine in $(echo "$t1 - $t0" | bc) s:" \
     "$(echo "$N / ($t1 - $t0)" | bc) messages/s"
TMPDIR=$W "$BIN/xqry" -k > /dev/null; wait %2 2>/dev/null || true

# 2. Sink: an offline run over N records, each published; the subscriber counts them.
seq 1 "$N" > src.txt
printf "DECLARE v INTEGER STREAM s, 1 TEXTFILE 'src.txt'\nSELECT s[0] STREAM p FROM s PUBLISH 'mqtt://127.0.0.1:%d/out'\n" "$PORT" > out.rql
mosquitto_sub -p "$PORT" -t out -q 1 -C "$N" > sub.out &
sub=$!
sleep 0.3
t0=$(now)
TMPDIR=$W "$BIN/xretractor" out.rql -k -f -m "$((N + 1))" -v > out.out 2> out.err
wait $sub
t1=$(now)
echo "publish: $N records published (QoS 1) and received by a subscriber in $(echo "$t1 - $t0" | bc) s:" \
     "$(echo "$N / ($t1 - $t0)" | bc) records/s; $(grep '^publish:' out.out)"
