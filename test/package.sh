#!/usr/bin/env bash
# tools/package.sh's .deb, unpacked into a throwaway root (dpkg -x): its
# contents, its man pages, its systemd unit, and the example run from there.
set -u
BUILD=$(cd "${1:?build dir}" && pwd)
HERE=$(cd "$(dirname "$0")/.." && pwd)
W=$(mktemp -d /tmp/rdb-pkg.XXXXXX)
export TMPDIR=$W
trap 'rm -rf "$W"' EXIT
. "$(dirname "$0")/lib.sh"
deb=$(BUILD_DIR=$BUILD "$HERE/tools/package.sh" "$W/out" 2>"$W/pkg.err" | tail -1)
check "tools/package.sh built a .deb ($deb)" '[ -s "$deb" ]' || { cat "$W/pkg.err"; echo "$pass passed, $fail failed"; exit 1; }
R=$W/root
dpkg -x "$deb" "$R"
info=$(dpkg-deb -f "$deb" Package Version Depends)
check "control names the package, version and its libraries" \
  'grep -q "^Package: retractor" <<<"$info" && grep -q "^Version: [0-9]" <<<"$info" && grep -q "libpaho-mqtt" <<<"$info"'
for p in xretractor xqry xtrdb; do
  check "$p is in /usr/bin" '[ -x "$R/usr/bin/$p" ]'
  check "$p has a man page made from its --help" 'zcat "$R/usr/share/man/man1/$p.1.gz" | grep -q "^\.TH ${p^^} \"1\"" && ! zcat "$R/usr/share/man/man1/$p.1.gz" | grep -q rdb-deb'
  check "$p carries no build-tree RPATH" '! readelf -d "$R/usr/bin/$p" | grep -q "$BUILD"'
done
check "the xretractor man page lists the run options" 'zcat "$R/usr/share/man/man1/xretractor.1.gz" | grep -q "no\\\\-clock"'
check "the systemd unit runs /etc/retractor/plan.rql" \
  'grep -q "^ExecStart=/usr/bin/xretractor /etc/retractor/plan.rql" "$R/lib/systemd/system/retractor.service"'
check "plan.rql is a conffile" 'dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles | grep -q "^/etc/retractor/plan.rql$"'
check "the service's plan compiles" '"$R/usr/bin/xretractor" -c "$R/etc/retractor/plan.rql" > "$W/plan.txt" 2>&1'
check "the docs are there" '[ -s "$R/usr/share/doc/retractor/README.md" ] && [ -s "$R/usr/share/doc/retractor/connectors.md" ]'
# The example, run with the unpacked programs.
mkdir -p "$W/ex/out" && cp "$R"/usr/share/retractor/examples/* "$W/ex/"
(cd "$W/ex" && "$R/usr/bin/xretractor" sensors.rql --no-clock -m 40 > run.out 2>&1)
check "the example runs from the unpacked root" '[ $? = 0 ] && [ -s "$W/ex/out/joined" ]'
list=$(cd "$W/ex" && printf 'storage out\nopen joined\nlist 3\nquit\n' | "$R/usr/bin/xtrdb" noprompt 2>&1)
check "its xtrdb reads what was stored" 'grep -q "{ joined_0:" <<<"$list"'
check "the live page's files are packaged" \
  '[ -s "$R/usr/share/retractor/web/index.html" ] && [ -s "$R/usr/share/retractor/web/node_modules/uplot/dist/uPlot.iife.min.js" ]'
finish
