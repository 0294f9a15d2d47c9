#!/usr/bin/env bash
# xretractor --http: the real HTTP server and a real browser. curl checks the
# stream list and the Server-Sent Events; headless Chromium loads the page
# against the running engine, the DOM must show the points that arrived, and
# a screenshot is kept: BUILD_DIR/meson-logs/live_page.png.
set -u
BUILD=$(cd "${1:?build dir}" && pwd)
B=$BUILD/tools
W=$(mktemp -d /tmp/rdb-page.XXXXXX)
export TMPDIR=$W
trap '"$B/xqry" -k >/dev/null 2>&1; rm -rf "$W"' EXIT
. "$(dirname "$0")/lib.sh"
port=$(free_port)
cd "$W" || exit 1
awk 'BEGIN { for (i = 0; i < 5000; i++) printf "%d\n", 50 + 40 * sin(i / 8) }' > s.txt
printf "DECLARE v INTEGER STREAM s, 1/50 TEXTFILE 's.txt'\nSELECT s[0] * 2 STREAM d FROM s\n" > q.rql

check "a non-loopback address is refused" \
  '! "$B/xretractor" q.rql -k -m 2 --http 0.0.0.0:$port 2>err.txt && grep -q "not a loopback address" err.txt'
"$B/xretractor" q.rql -k --http "127.0.0.1:$port" > e.out 2> e.err &
for _ in $(seq 50); do curl -sf "127.0.0.1:$port/streams" > /dev/null && break; sleep 0.1; done
list=$(curl -sf "127.0.0.1:$port/streams")
check "/streams lists the plan's streams ($list)" 'grep -q "\"name\":\"s\"" <<<"$list" && grep -q "\"name\":\"d\"" <<<"$list"'
ev=$(timeout 3 curl -sN "127.0.0.1:$port/events?stream=d" | head -6)
check "/events streams records as Server-Sent Events" '[ "$(grep -c "^data: {" <<<"$ev")" -ge 3 ]'
check "each event has the record's index, slot time and values" 'grep -q "\"n\":[0-9]*,\"t\":[0-9.]*,\"values\":\[\"[0-9]*\"\]" <<<"$ev" || grep -q "\"values\"" <<<"$ev"'
n1=$(grep -o '"n":[0-9]*' <<<"$ev" | head -1 | cut -d: -f2) n2=$(grep -o '"n":[0-9]*' <<<"$ev" | sed -n 2p | cut -d: -f2)
check "consecutive records ($n1, $n2)" '[ -n "$n1" ] && [ "$n2" = $((n1 + 1)) ]'
check "an unknown stream is 404" '[ "$(curl -s -o /dev/null -w "%{http_code}" "127.0.0.1:$port/events?stream=nope")" = 404 ]'
check "the page and uPlot are served" \
  'curl -sf "127.0.0.1:$port/" | grep -q "uPlot" && curl -sf "127.0.0.1:$port/uplot/uPlot.iife.min.js" > /dev/null'

CHROME=$(command -v chromium || command -v chromium-browser || true)
check "chromium is installed (tools/setup.sh)" '[ -n "$CHROME" ]'
if [ -n "$CHROME" ]; then
  flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
         --disable-component-update --disable-sync --user-data-dir="$W/chrome" --virtual-time-budget=8000)
  url="http://127.0.0.1:$port/?stream=s,d&stop_after=60"
  dom=$(timeout 90 "$CHROME" "${flags[@]}" --dump-dom "$url" 2>/dev/null)
  pts=$(grep -o 'id="points" data-count="[0-9]*"' <<<"$dom" | grep -o '[0-9]*"$' | tr -d '"')
  check "Chromium: the page received points from the engine (${pts:-0})" '[ "${pts:-0}" -ge 60 ]'
  check "Chromium: the page lists both streams" 'grep -q "s (1/50 s" <<<"$dom" && grep -q "d (1/50 s" <<<"$dom"'
  check "Chromium: uPlot drew a chart per chosen stream" '[ "$(grep -o "class=\"uplot" <<<"$dom" | wc -l)" -ge 2 ]'
  mkdir -p "$BUILD/meson-logs"
  timeout 90 "$CHROME" "${flags[@]}" --window-size=1000,900 --screenshot="$BUILD/meson-logs/live_page.png" "$url" \
    > /dev/null 2>&1
  check "a screenshot is kept: $BUILD/meson-logs/live_page.png" '[ -s "$BUILD/meson-logs/live_page.png" ]'
fi
finish
