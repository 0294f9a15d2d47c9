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
for _ in $(seq 50); do curl -sf "127.0.0.1:$port/metrics" > /dev/null && break; sleep 0.1; done
sleep 1
m=$(curl -sf "127.0.0.1:$port/metrics")
val() { awk -v k="$1" '$1 == k {print $2}' <<<"$m"; }
check "served from metrics.listen of the TOML file" '[ -n "$m" ]'
rec=$(val 'retractor_stream_records{stream="d"}') nul=$(val 'retractor_stream_null_records_total{stream="d"}')
check "records of d are counted ($rec)" '[ "${rec%.*}" -ge 20 ]'
check "half of d is NULL ($nul of $rec)" '[ $(( ${rec%.*} / 2 )) = "${nul%.*}" ] || [ $(( (${rec%.*} + 1) / 2 )) = "${nul%.*}" ]'
check "no NULL records in s" '[ "$(val '"'"'retractor_stream_null_records_total{stream="s"}'"'"')" = 0 ]'
cnt=$(val retractor_slot_lateness_seconds_count) inf=$(val 'retractor_slot_lateness_seconds_bucket{le="+Inf"}')
check "slot lateness is a histogram ($cnt slots)" '[ "${cnt:-0}" -ge 20 ] && [ "$cnt" = "$inf" ]'
check "JIT compile time is there" 'awk "BEGIN {exit !($(val retractor_jit_compile_seconds_total) > 0)}"'
check "resident memory is there" 'awk "BEGIN {exit !($(val retractor_resident_memory_bytes) > 1000000)}"'
n=$("$B/xqry" -y | awk '$0 ~ /name: d$/ {on=1; next} on && $1 == "count:" {print $2; exit}')
check "records agree with xqry ($rec vs $n, sampled 250 ms apart at most)" '[ $(( n - ${rec%.*} )) -le 20 ] && [ $(( n - ${rec%.*} )) -ge 0 ]'
"$B/xqry" -s d > sub.out 2>&1 &
"$B/xqry" -a "SELECT s[0] * 3 STREAM w FROM s" > /dev/null
sleep 1
m=$(curl -sf "127.0.0.1:$port/metrics")
check "one subscriber" '[ "$(val '"'"'retractor_ipc{what="subscribers"}'"'"')" = 1 ]'
check "the ad hoc stream has its metrics" 'grep -q "retractor_stream_records{stream=\"w\"}" <<<"$m"'
"$B/xqry" --remove w > /dev/null
sleep 1
m=$(curl -sf "127.0.0.1:$port/metrics")
check "a removed stream leaves /metrics" '! grep -q "stream=\"w\"" <<<"$m"'
check "the page is in the Prometheus text format (HELP and TYPE lines)" \
  'grep -q "^# TYPE retractor_slot_lateness_seconds histogram" <<<"$m" && grep -q "^# HELP retractor_stream_records " <<<"$m"'
check "a port in use is a clear error" \
  '! "$B/xretractor" q.rql -k -m 2 --name other --metrics 127.0.0.1:$port 2>err2.txt && grep -q "cannot listen" err2.txt'
finish
