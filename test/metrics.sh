#!/usr/bin/env bash
# /metrics scraped with curl from a running engine: per-stream records and
# NULL records (checked against each other and against xqry), slot lateness
# as a histogram, IPC subscribers, JIT time, memory; ad hoc streams come and
# go; a non-loopback address is refused unless asked.
set -u
B=$(cd "${1:?build dir}" && pwd)/tools
W=$(mktemp -d /tmp/rdb-metrics.XXXXXX)
export TMPDIR=$W
trap '"$B/xqry" -k >/dev/null 2>&1; kill $(jobs -p) 2>/dev/null; rm -rf "$W"' EXIT
. "$(dirname "$0")/lib.sh"
port=$(free_port)
cd "$W" || exit 1
seq 1 100000 > s.txt
# d is NULL for every even value: a division by zero.
printf "DECLARE v INTEGER STREAM s, 1/50 TEXTFILE 's.txt'\nSELECT s[0] / (s[0] - 2 * (s[0] / 2)) STREAM d FROM s\n" > q.rql

check "a non-loopback address is refused" \
  '! "$B/xretractor" q.rql -k -m 2 --metrics 0.0.0.0:$port 2>err.txt && grep -q "not a loopback address" err.txt'
printf '[metrics]\nlisten = "127.0.0.1:%s"\n' "$port" > m.toml
"$B/xretractor" q.rql -k -g m.toml > e.out 2> e.err &
val() { awk -v k="$1" '$1 == k {print $2}' <<<"$m"; }
num() { local v; v=$(val "$1"); echo "${v%.*}"; }  # a sample as a whole number
# Scrapes /metrics into $m until CONDITION holds, for up to 60 s: a busy
# machine makes the engine slow to start and its page slow to change, not wrong.
scrape_until() {
  local end=$((SECONDS + 60))
  until m=$(curl -sf -m 10 "127.0.0.1:$port/metrics") && eval "$1"; do
    [ $SECONDS -lt $end ] || return 1
    sleep 0.1
  done
}
scrape_until '[ "$(num "retractor_stream_records{stream=\"d\"}")" -ge 20 ] 2>/dev/null &&
  [ "$(num retractor_slot_lateness_seconds_count)" -ge 20 ] 2>/dev/null'
check "served from metrics.listen of the TOML file" '[ -n "$m" ]'
rec=$(val 'retractor_stream_records{stream="d"}') nul=$(val 'retractor_stream_null_records_total{stream="d"}')
check "records of d are counted ($rec)" '[ "${rec%.*}" -ge 20 ]'
check "half of d is NULL ($nul of $rec)" '[ $(( ${rec%.*} / 2 )) = "${nul%.*}" ] || [ $(( (${rec%.*} + 1) / 2 )) = "${nul%.*}" ]'
check "no NULL records in s" '[ "$(val '"'"'retractor_stream_null_records_total{stream="s"}'"'"')" = 0 ]'
cnt=$(val retractor_slot_lateness_seconds_count) inf=$(val 'retractor_slot_lateness_seconds_bucket{le="+Inf"}')
check "slot lateness is a histogram ($cnt slots)" '[ "${cnt:-0}" -ge 20 ] && [ "$cnt" = "$inf" ]'
check "JIT compile time is there" 'awk "BEGIN {exit !($(val retractor_jit_compile_seconds_total) > 0)}"'
check "resident memory is there" 'awk "BEGIN {exit !($(val retractor_resident_memory_bytes) > 1000000)}"'
# The page follows the engine's count at most 250 ms late (in engine time):
# a scrape lies between xqry's counts taken before and after it, at most 20
# records (at 50 a second) behind the one before. A busy machine may delay
# the engine's update of the page, so samples are taken until one is that close;
# the page is never ahead of the engine in any of them.
xqry_count() { "$B/xqry" -y | awk '$0 ~ /name: d$/ {on=1; next} on && $1 == "count:" {print $2; exit}'; }
ahead=0 close=0 end=$((SECONDS + 60))
while [ $close = 0 ] && [ $SECONDS -lt $end ]; do
  n1=$(xqry_count) m=$(curl -sf -m 10 "127.0.0.1:$port/metrics") r=$(num 'retractor_stream_records{stream="d"}') n2=$(xqry_count)
  if [ -n "$n1" ] && [ -n "$r" ] && [ -n "$n2" ]; then
    [ "$r" -le "$n2" ] || ahead=$((ahead + 1))
    [ "$r" -le "$n2" ] && [ $((n1 - r)) -le 20 ] && close=1
  fi
  [ $close = 1 ] || sleep 0.1
done
check "records agree with xqry ($n1 <= $r + 20, $r <= $n2 in every sample; $ahead ahead)" '[ "$close" = 1 ] && [ "$ahead" = 0 ]'
"$B/xqry" -s d > sub.out 2>&1 &
"$B/xqry" -a "SELECT s[0] * 3 STREAM w FROM s" > /dev/null
scrape_until '[ "$(num "retractor_ipc{what=\"subscribers\"}")" = 1 ] && grep -q "retractor_stream_records{stream=\"w\"}" <<<"$m"'
check "one subscriber" '[ "$(val '"'"'retractor_ipc{what="subscribers"}'"'"')" = 1 ]'
check "the ad hoc stream has its metrics" 'grep -q "retractor_stream_records{stream=\"w\"}" <<<"$m"'
"$B/xqry" --remove w > /dev/null
scrape_until '! grep -q "stream=\"w\"" <<<"$m"'
check "a removed stream leaves /metrics" '! grep -q "stream=\"w\"" <<<"$m"'
check "the page is in the Prometheus text format (HELP and TYPE lines)" \
  'grep -q "^# TYPE retractor_slot_lateness_seconds histogram" <<<"$m" && grep -q "^# HELP retractor_stream_records " <<<"$m"'
check "a port in use is a clear error" \
  '! "$B/xretractor" q.rql -k -m 2 --name other --metrics 127.0.0.1:$port 2>err2.txt && grep -q "cannot listen" err2.txt'
finish
