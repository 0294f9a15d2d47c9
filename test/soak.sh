#!/usr/bin/env bash
# Soak test of the live engine (loopback only, bounded in time and count):
#   test/soak.sh BUILD_DIR [SECONDS]      (default 120)
# 10 clients subscribe (every third replaying from an earlier record with
# --from) and leave again while ad hoc queries, sources
# (DECLARE) and rules (RULE ... DO DUMP) are added and removed. Afterwards: every client saw an unbroken run of records whose
# values match the stored artifact, the engine's open file descriptors are
# back to their baseline and its memory near it, and every artifact holds
# whole records. Prints the figures and "N passed, N failed".
set -u
B=$(cd "${1:?build dir}" && pwd); SECS=${2:-120}
XR=$B/tools/xretractor; XQ=$B/tools/xqry
W=$(mktemp -d /tmp/rdb-soak.XXXXXX)
export TMPDIR=$W
cleanup() { "$XQ" -k >/dev/null 2>&1; sleep 0.5; kill -9 "${EP:-0}" 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT
cd "$W"; mkdir out
seq 1 1000000 > src.txt
cat > soak.rql <<'Q'
STORAGE 'out'
DECLARE v INTEGER STREAM src, 1/50 TEXTFILE 'src.txt'
SELECT src[0] STREAM seq FROM src
SELECT seq[0] * 3, seq[0] - 7 STREAM mix FROM seq
Q
"$XR" soak.rql -k > engine.log 2>&1 & EP=$!
# Waits are generous (a busy machine is slow, not wrong): the socket, then a
# running plan (100 records of seq stored) before the baseline is taken.
for _ in $(seq 600); do [ -S "$W/xretractor_service.sock" ] && break; sleep 0.1; done
for _ in $(seq 600); do [ "$(stat -c %s out/seq 2>/dev/null || echo 0)" -ge 400 ] && break; sleep 0.1; done
sleep 1
rss() { awk '/VmRSS/ {print $2}' "/proc/$EP/status"; }
fds() { ls "/proc/$EP/fd" | wc -l; }
RSS0=$(rss); FD0=$(fds)
pass=0 fail=0
ok() { echo "PASS $1"; pass=$((pass+1)); }
bad() { echo "FAIL $1"; fail=$((fail+1)); }

end=$((SECONDS + SECS)); clients=0 adhoc=0 removed=0
declare -a CP
while [ $SECONDS -lt $end ]; do
  for i in $(seq 0 9); do   # keep 10 clients busy; each takes 20..120 records and leaves
    if [ -z "${CP[$i]:-}" ] || ! kill -0 "${CP[$i]}" 2>/dev/null; then
      clients=$((clients+1))
      if [ $((clients % 3)) = 0 ]; then   # every third one replays from an earlier record first
        "$XQ" -s seq --from $((RANDOM % 200)) -m $((50 + RANDOM % 300)) > "c$clients.out" 2>/dev/null & CP[$i]=$!
      else
        "$XQ" -s seq -m $((20 + RANDOM % 100)) > "c$clients.out" 2>/dev/null & CP[$i]=$!
      fi
    fi
  done
  adhoc=$((adhoc+1))
  "$XQ" -a "SELECT seq[0] + $adhoc STREAM a$adhoc FROM seq" >/dev/null 2>&1 || bad "ad hoc a$adhoc refused"
  # A source and an alarm come and go with it.
  "$XQ" -a "DECLARE w INTEGER STREAM d$adhoc, 1/25 TEXTFILE 'src.txt'" >/dev/null 2>&1 || bad "ad hoc d$adhoc refused"
  "$XQ" -a "RULE r$adhoc ON a$adhoc WHEN a$adhoc[0] > 0 DO DUMP -1 TO 1" >/dev/null 2>&1 || bad "rule r$adhoc refused"
  if [ $adhoc -gt 3 ]; then
    k=$((adhoc-3))
    "$XQ" --remove "r$k" >/dev/null 2>&1 || bad "remove rule r$k"
    "$XQ" --remove "d$k" >/dev/null 2>&1 || bad "remove source d$k"
    "$XQ" --remove "a$k" >/dev/null 2>&1 && removed=$((removed+1)) || bad "remove a$k"
  fi
  sleep 1
done
wait "${CP[@]}" 2>/dev/null
for k in $(seq $((adhoc > 3 ? adhoc - 2 : 1)) $adhoc); do   # the last ad hoc queries go too
  "$XQ" --remove "r$k" >/dev/null 2>&1
  "$XQ" --remove "d$k" >/dev/null 2>&1
  "$XQ" --remove "a$k" >/dev/null 2>&1 && removed=$((removed+1))
done
# The engine closes the last clients' connections and the JIT worker lets go
# of its last units in its own time: wait (up to a minute) for the baseline.
for _ in $(seq 600); do
  RSS1=$(rss); FD1=$(fds)
  [ "$FD1" -le "$FD0" ] && [ $((RSS1 - RSS0)) -lt 16384 ] && break
  sleep 0.1
done
"$XQ" -k >/dev/null 2>&1
wait "$EP"; rc=$?
[ "$rc" = 0 ] && ok "engine stopped cleanly" || bad "engine exit status $rc"

# every client: consecutive values, present in the stored artifact
od -An -v -td4 -w4 out/seq | awk '{print $1}' > seq.txt
first=$(head -1 seq.txt); last=$(tail -1 seq.txt)
lost=0 checked=0
for f in c*.out; do
  n=$(awk 'NF {print $1}' "$f" | awk -v first="$first" -v last="$last" '
      { if ($1 < first || $1 > last) bad++; if (NR > 1 && $1 != prev + 1) gap++; prev = $1 }
      END { print (gap + bad) + 0 }')
  lost=$((lost + n)); checked=$((checked+1))
done
[ "$lost" = 0 ] && ok "$checked subscriptions: no record lost, values match out/seq" || bad "$lost gaps or foreign values in $checked subscriptions"
# the artifact itself is an unbroken sequence of whole records
gaps=$(awk 'NR > 1 && $1 != prev + 1 {g++} {prev = $1} END {print g + 0}' seq.txt)
[ "$gaps" = 0 ] && [ $(( $(stat -c %s out/seq) % 4 )) = 0 ] && ok "out/seq: $(wc -l < seq.txt) whole records, no gap" || bad "out/seq broken"
[ $(( $(stat -c %s out/mix) % 8 )) = 0 ] && ok "out/mix: whole records" || bad "out/mix partial"
for a in out/a*; do
  case "$a" in *.desc|*.meta|*.shadow) continue ;; esac
  [ $(( $(stat -c %s "$a") % 4 )) = 0 ] || bad "$a partial"
done
ok "ad hoc artifacts: whole records"
[ "$FD1" -le "$FD0" ] && ok "open descriptors back to baseline ($FD0 -> $FD1)" || bad "descriptors $FD0 -> $FD1"
[ $((RSS1 - RSS0)) -lt 16384 ] && ok "memory near baseline ($RSS0 KiB -> $RSS1 KiB)" || bad "memory $RSS0 KiB -> $RSS1 KiB"
echo "figures: $SECS s, $clients client sessions, $adhoc ad hoc queries added, $removed removed, $checked subscriptions checked"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
