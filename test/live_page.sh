#!/usr/bin/env bash
# xretractor --http: the real HTTP server and a real browser. curl checks the
# stream list and the Server-Sent Events; a python3 client holds 50, then 60
# SSE streams and 20 half-sent requests while the page, xqry and the engine
# must still answer, and one more live plot is refused with a 503. Headless
# Chromium loads the page against the running engine, the DOM must show the
# points that arrived, in every chart (an INTEGER and a RATIONAL stream), and
# a screenshot is kept: BUILD_DIR/meson-logs/live_page.png.
set -u
BUILD=$(cd "${1:?build dir}" && pwd)
B=$BUILD/tools
W=$(mktemp -d /tmp/rdb-page.XXXXXX)
export TMPDIR=$W
hold=
trap '[ -n "$hold" ] && kill "$hold" 2>/dev/null; "$B/xqry" -k >/dev/null 2>&1; rm -rf "$W"' EXIT
. "$(dirname "$0")/lib.sh"
port=$(free_port)
cd "$W" || exit 1
awk 'BEGIN { for (i = 0; i < 5000; i++) printf "%d\n", 50 + 40 * sin(i / 8) }' > s.txt
# m is RATIONAL (the mean of 4 INTEGERs): its values are fractions like 57/2.
printf "DECLARE v INTEGER STREAM s, 1/50 TEXTFILE 's.txt'\nSELECT s[0] * 2 STREAM d FROM s
SELECT * STREAM w FROM s @ (1, 4)\nSELECT * STREAM m FROM AVG(w)\n" > q.rql
# z: a STRING that is not UTF-8 (0xff 0xfe) and a NaN beside it (issue 42).
printf '"\xff\xfe" -1\n"ok" 4\n' > u.txt
printf "DECLARE t STRING[4], x DOUBLE STREAM u, 1/50 TEXTFILE 'u.txt'\nSELECT u[0], Sqrt(u[1]) STREAM z FROM u\n" >> q.rql
printf '[http]\nmax_clients = 60\n' > cfg.toml

check "a non-loopback address is refused" \
  '! "$B/xretractor" q.rql -k -m 2 --http 0.0.0.0:$port 2>err.txt && grep -q "not a loopback address" err.txt'
"$B/xretractor" -g cfg.toml q.rql -k --http "127.0.0.1:$port" > e.out 2> e.err &
for _ in $(seq 600); do curl -sf "127.0.0.1:$port/streams" > /dev/null && break; sleep 0.1; done
list=$(curl -sf "127.0.0.1:$port/streams")
check "/streams lists the plan's streams ($list)" 'grep -q "\"name\":\"s\"" <<<"$list" && grep -q "\"name\":\"d\"" <<<"$list"'
ev=$(timeout 30 curl -sN "127.0.0.1:$port/events?stream=d" | head -6)
check "/events streams records as Server-Sent Events" '[ "$(grep -c "^data: {" <<<"$ev")" -ge 3 ]'
check "each event has the record's index, slot time, values as numbers and their text" \
  'grep -q "\"n\":[0-9]*,\"t\":[0-9.]*,\"text\":\[\"[0-9]*\"\],\"values\":\[[0-9]*\]" <<<"$ev"'
n1=$(grep -o '"n":[0-9]*' <<<"$ev" | head -1 | cut -d: -f2) n2=$(grep -o '"n":[0-9]*' <<<"$ev" | sed -n 2p | cut -d: -f2)
check "consecutive records ($n1, $n2)" '[ -n "$n1" ] && [ "$n2" = $((n1 + 1)) ]'
ev=$(timeout 30 curl -sN "127.0.0.1:$port/events?stream=m" | grep -m 10 '/')
check "a RATIONAL value is a number for plotting, its exact fraction beside it ($(head -1 <<<"$ev"))" \
  'grep -qE "\"text\":\[\"-?[0-9]+/[0-9]+\"\],\"values\":\[-?[0-9]+\.[0-9]+\]" <<<"$ev"'
cat > strict.py <<'PY'
# The events of a file of SSE lines as strict JSON (UTF-8, no bare NaN): "z" alternates
# 0xff 0xfe with NaN and "ok" with 2.
import json, sys
def bare(c): raise ValueError(c)
ev = [json.loads(l[6:].decode("utf-8"), parse_constant=bare)
      for l in open(sys.argv[1], "rb").read().split(b"\n") if l.startswith(b"data: ")]
texts = {tuple(e["text"]) for e in ev}
print(len(ev), sorted(texts))
sys.exit(not (len(ev) >= 4 and texts == {("\ufffd\ufffd", "nan"), ("ok", "2")} and
              all(e["values"][0] is None and (e["values"][1] is None) == (e["text"][1] == "nan") for e in ev)))
PY
timeout 30 curl -sN "127.0.0.1:$port/events?stream=z" | grep -a -m 4 "^data: " > z.ev
check "a STRING that is not UTF-8 is U+FFFD in strict JSON, NaN its text beside a null value ($(python3 strict.py z.ev 2>&1 | tail -1))" \
  'python3 strict.py z.ev > /dev/null 2>&1'
check "and the engine serves on" 'curl -sf "127.0.0.1:$port/streams" | grep -q "\"name\":\"z\""'
check "an unknown stream is 404" '[ "$(curl -s -o /dev/null -w "%{http_code}" "127.0.0.1:$port/events?stream=nope")" = 404 ]'
check "the page and uPlot are served" \
  'curl -sf "127.0.0.1:$port/" | grep -q "uPlot" && curl -sf "127.0.0.1:$port/uplot/uPlot.iife.min.js" > /dev/null'

# Many clients. The holder keeps 20 half-sent request lines open (one more
# whenever the server closes one) and 50 SSE streams; on go2 it opens 10 more
# (http.max_clients = 60); on stop it waits for the first half-sent requests
# to be closed and reports. Every wait is bounded, and generous: a busy
# machine is slow, not wrong.
cat > hold.py <<'PY'
import os, selectors, socket, sys, time
port, nsse, nhalf, nextra = map(int, sys.argv[1:5])
sel, half_life, connect_s = selectors.DefaultSelector(), [], []
class Conn:
    def __init__(s, kind):
        s.kind, s.head, s.events, s.tail = kind, b"", 0, b""
        t = time.monotonic()
        s.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.opened = time.monotonic(); connect_s.append(s.opened - t)
        s.sock.sendall(b"GET /streams HT" if kind == "half" else
                       b"GET /events?stream=d HTTP/1.1\r\nHost: t\r\n\r\n")
        s.sock.setblocking(False)
        sel.register(s.sock, selectors.EVENT_READ, s)
    def code(s):
        return s.head.split(b" ")[1].decode() if s.head.count(b"\r\n") else "-"
    def close(s):
        sel.unregister(s.sock); s.sock.close()
def service(seconds, done=lambda: False):
    end = time.monotonic() + seconds
    while time.monotonic() < end and not done():
        for key, _ in sel.select(0.05):
            c = key.data
            try: data = c.sock.recv(65536)
            except BlockingIOError: continue
            except OSError: data = b""
            if not data:
                c.close()
                if c.kind == "half":
                    half_life.append(time.monotonic() - c.opened); Conn("half")
                else: c.kind = "closed"
                continue
            if len(c.head) < 64: c.head += data[:64]
            c.events += (c.tail + data).count(b"data: {"); c.tail = data[-6:]
def live(cs): return [c for c in cs if c.kind == "sse" and c.code() == "200" and c.events > 0]
def report(name, text):
    open(name + ".tmp", "w").write(text + "\n"); os.rename(name + ".tmp", name)
halfs = [Conn("half") for _ in range(nhalf)]
sse = [Conn("sse") for _ in range(nsse)]
service(60, lambda: len(live(sse)) == nsse)
codes = sorted(set(c.code() for c in sse))
report("ready1", "live=%d codes=%s" % (len(live(sse)), ",".join(codes)))
service(60, lambda: os.path.exists("go2"))
extra, end = [], time.monotonic() + 30
while len(extra) < nextra and time.monotonic() < end:
    c = Conn("sse"); service(5, lambda: c.code() != "-" or c.kind != "sse")
    if c.code() == "200": extra.append(c)
    else: c.close() if c.kind == "sse" else None; time.sleep(0.1)
sse += extra
service(30, lambda: len(live(sse)) == nsse + nextra)
before = {id(c): c.events for c in sse}
report("ready2", "live=%d" % len(live(sse)))
service(60, lambda: os.path.exists("stop"))
receiving = lambda: sum(1 for c in live(sse) if c.events > before[id(c)])
# Past the read timeout of the first half-sent requests, and every client's next records.
service(30, lambda: len(half_life) >= nhalf and receiving() == nsse + nextra)
receiving = receiving()
report("report", "receiving=%d closed_half=%d max_half_life=%.1f max_connect=%.2f" %
       (receiving, len(half_life), max(half_life) if half_life else 99, max(connect_s)))
PY
wait_file() { for _ in $(seq 1200); do [ -s "$1" ] && return 0; sleep 0.1; done; return 1; }
timed() { curl -s -o "$2" -m 3 -w '%{http_code} %{time_total}' "127.0.0.1:$port$1"; }
prompt() { [ "${1%% *}" = "$2" ] && awk -v t="${1#* }" 'BEGIN { exit !(t < 1) }'; }
count_d() { curl -s -m 3 "127.0.0.1:$port/streams" | grep -o '"count":[0-9]*,"delta":"1/50","name":"d"' | grep -o '[0-9]*' | head -1; }
timeout 200 python3 hold.py "$port" 50 20 10 > hold.out 2>&1 &
hold=$!
wait_file ready1 || cat hold.out
check "50 SSE clients and 20 half-sent requests are held ($(cat ready1 2>/dev/null))" 'grep -q "^live=50 " ready1'
c1=$(count_d)
r=$(timed / page.out)
check "/ answers promptly meanwhile ($r)" 'prompt "$r" 200 && grep -q uPlot page.out'
r=$(timed /streams list.out)
check "/streams answers promptly meanwhile ($r)" 'prompt "$r" 200 && grep -q "\"name\":\"d\"" list.out'
t0=$(date +%s%N)
ev=$(timeout 3 curl -sN "127.0.0.1:$port/events?stream=d" | head -1)
ms=$((($(date +%s%N) - t0) / 1000000))
check "a new /events answers promptly meanwhile (${ms} ms)" 'grep -q "^data: {" <<<"$ev" && [ "$ms" -lt 1000 ]'
check "xqry -d answers meanwhile" 'timeout 5 "$B/xqry" -d > xqry.out 2>&1 && grep -q "^|d|" xqry.out'
for _ in $(seq 300); do c2=$(count_d); [ -n "$c1" ] && [ "${c2:-0}" -gt "$c1" ] && break; sleep 0.1; done
check "the engine keeps producing ($c1 then $c2 records of d)" '[ -n "$c1" ] && [ -n "$c2" ] && [ "$c2" -gt "$c1" ]'
touch go2
wait_file ready2
check "60 SSE clients (http.max_clients) are held ($(cat ready2 2>/dev/null))" 'grep -q "^live=60$" ready2'
r=$(timed "/events?stream=d" full.out)
check "one more /events is refused with a clear 503 ($r: $(head -c 120 full.out 2>/dev/null))" \
  '[ "${r%% *}" = 503 ] && grep -q "too many live plots" full.out && grep -q "http.max_clients" full.out'
r=$(timed / page.out)
check "/ still answers promptly at the maximum ($r)" 'prompt "$r" 200'
check "xqry -d still answers at the maximum" 'timeout 5 "$B/xqry" -d > /dev/null 2>&1'
touch stop
wait_file report
check "every held SSE client still receives records ($(cat report 2>/dev/null))" 'grep -q "^receiving=60 " report'
field() { grep -o "$1=[0-9.]*" report 2>/dev/null | cut -d= -f2; }
check "half-sent requests are closed after a short read timeout ($(field closed_half) closed, in at most $(field max_half_life) s)" \
  '[ "$(field closed_half)" -ge 20 ] && awk -v t="$(field max_half_life)" "BEGIN { exit !(t <= 3) }"'
check "a burst of connections is accepted at once (slowest connect $(field max_connect) s)" \
  'awk -v t="$(field max_connect)" "BEGIN { exit !(t < 0.5) }"'
wait "$hold" 2>/dev/null
hold=

CHROME=$(command -v chromium || command -v chromium-browser || true)
check "chromium is installed (tools/setup.sh)" '[ -n "$CHROME" ]'
if [ -n "$CHROME" ]; then
  flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
         --disable-component-update --disable-sync --user-data-dir="$W/chrome" --virtual-time-budget=8000)
  url="http://127.0.0.1:$port/?stream=s,d,m&stop_after=90"
  dom=$(timeout 90 "$CHROME" "${flags[@]}" --dump-dom "$url" 2>/dev/null)
  pts=$(grep -o 'id="points" data-count="[0-9]*"' <<<"$dom" | grep -o '[0-9]*"$' | tr -d '"')
  check "Chromium: the page received points from the engine (${pts:-0})" '[ "${pts:-0}" -ge 90 ]'
  check "Chromium: the page lists the streams" 'grep -q "s (1/50 s" <<<"$dom" && grep -q "m (1/50 s" <<<"$dom"'
  check "Chromium: uPlot drew a chart per chosen stream" '[ "$(grep -o "class=\"uplot" <<<"$dom" | wc -l)" -ge 3 ]'
  # data-points: the finite points in the chart's own data, so a value the
  # page could not turn into a number is not counted.
  for s in d m; do
    p=$(grep -o "id=\"plot-$s\"[^>]*data-points=\"[0-9]*\"" <<<"$dom" | grep -o '[0-9]*"$' | tr -d '"')
    check "Chromium: the chart of $s has points (${p:-none})" '[ "${p:-0}" -ge 10 ]'
  done
  mkdir -p "$BUILD/meson-logs"
  timeout 90 "$CHROME" "${flags[@]}" --window-size=1000,1200 --screenshot="$BUILD/meson-logs/live_page.png" "$url" \
    > /dev/null 2>&1
  check "a screenshot is kept: $BUILD/meson-logs/live_page.png" '[ -s "$BUILD/meson-logs/live_page.png" ]'
fi
finish
