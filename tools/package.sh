#!/usr/bin/env bash
# Builds a Debian package of the programs: retractor_<version>_<arch>.deb in
# OUT (default: the build directory). Inside: the three programs, a man page
# per program made from its --help (help2man), the docs, the example sensors,
# the live page's files, /etc/retractor/plan.rql and a systemd unit running it.
#   tools/package.sh [OUT]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${BUILD_DIR:-$ROOT/build}" && pwd)
OUT=$(mkdir -p "${1:-$BUILD}" && cd "${1:-$BUILD}" && pwd)
VERSION=$(sed -n "s/^ *version: '\(.*\)',$/\1/p" "$ROOT/meson.build" | head -1)
ARCH=$(dpkg --print-architecture)
STAGE=$(mktemp -d /tmp/rdb-deb.XXXXXX)
trap 'rm -rf "$STAGE" "$STAGE.inst"' EXIT

ninja -C "$BUILD" tools/xretractor tools/xqry tools/xtrdb >/dev/null
# meson install drops the build tree's RPATH; the programs go to /usr/bin.
meson install -C "$BUILD" --no-rebuild --destdir "$STAGE.inst" >/dev/null
install -d "$STAGE/usr/bin" "$STAGE/usr/share/man/man1" "$STAGE/usr/share/doc/retractor" \
  "$STAGE/usr/share/retractor/examples" "$STAGE/usr/share/retractor/web/node_modules/uplot/dist" \
  "$STAGE/etc/retractor" "$STAGE/lib/systemd/system" "$STAGE/DEBIAN"
for p in xretractor xqry xtrdb; do
  install -m 0755 "$(find "$STAGE.inst" -type f -name "$p" | head -1)" "$STAGE/usr/bin/$p"
  # Run by its name (PATH), so the page shows "xtrdb", not the staging path.
  PATH="$STAGE/usr/bin:$PATH" help2man --no-info --version-string="$VERSION" --name="$(case $p in
      xretractor) echo "run RQL stream queries over regular time series";;
      xqry) echo "query a running xretractor: streams, live records, ad hoc statements";;
      xtrdb) echo "inspect the stored streams of retractor";; esac)" \
    "$p" | gzip -9n > "$STAGE/usr/share/man/man1/$p.1.gz"
done
install -m 0644 "$ROOT/README.md" "$ROOT"/docs/*.md "$STAGE/usr/share/doc/retractor/"
install -m 0644 "$ROOT"/examples/*.txt "$ROOT"/examples/*.rql "$STAGE/usr/share/retractor/examples/"
install -m 0644 "$ROOT/web/index.html" "$STAGE/usr/share/retractor/web/"
if [ -d "$BUILD/web/node_modules/uplot/dist" ]; then
  install -m 0644 "$BUILD"/web/node_modules/uplot/dist/uPlot.iife.min.js "$BUILD"/web/node_modules/uplot/dist/uPlot.min.css \
    "$STAGE/usr/share/retractor/web/node_modules/uplot/dist/"
fi
install -m 0644 "$ROOT/tools/package/plan.rql" "$STAGE/etc/retractor/plan.rql"
install -m 0644 "$ROOT/tools/package/retractor.service" "$STAGE/lib/systemd/system/retractor.service"
echo /etc/retractor/plan.rql > "$STAGE/DEBIAN/conffiles"

# Depends: the packages that hold the shared libraries the programs load.
deps=$(for p in "$STAGE"/usr/bin/*; do ldd "$p" | awk '$3 ~ /^\// {print $3}'; done | sort -u |
  while read -r lib; do dpkg -S "$(readlink -f "$lib")" 2>/dev/null || dpkg -S "$lib" 2>/dev/null; done |
  cut -d: -f1 | sort -u | while read -r pkg; do
    echo "$pkg (>= $(dpkg-query -W -f='${Version}' "$pkg"))"; done | paste -sd, | sed 's/,/, /g')
cat > "$STAGE/DEBIAN/control" <<EOC
Package: retractor
Version: $VERSION
Architecture: $ARCH
Maintainer: retractor developers <retractor@localhost>
Section: database
Priority: optional
Depends: $deps
Description: stream engine for regular time series (RQL)
 Streams with a fixed rational interval, combined by a small algebra in RQL
 queries, compiled into a plan and run slot by slot; every stream is stored.
 Programs: xretractor (the engine), xqry (its client), xtrdb (the stored data).
EOC
DEB="$OUT/retractor_${VERSION}_${ARCH}.deb"
dpkg-deb --build --root-owner-group "$STAGE" "$DEB" >/dev/null
echo "$DEB"
