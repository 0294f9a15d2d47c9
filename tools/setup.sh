#!/usr/bin/env bash
# Installs the Debian packages the project needs, then configures and builds it.
# Idempotent: safe to run again; skips apt-get when everything is present.
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=(build-essential pkg-config meson ninja-build re2c bison
      llvm-19-dev libtbb-dev libmimalloc-dev catch2 libcli11-dev libfmt-dev
      libtomlplusplus-dev nlohmann-json3-dev libgmp-dev zlib1g-dev libzstd-dev libedit-dev libffi-dev libxml2-dev
      graphviz python3 time clang-19 libclang-rt-19-dev clang-format
      libpaho-mqtt-dev mosquitto mosquitto-clients nats-server curl bc
      prometheus-cpp-dev libcpp-httplib-dev python3-numpy python3-matplotlib util-linux
      chromium help2man dpkg-dev)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

BUILD=${BUILD_DIR:-build}
if [ ! -f "$BUILD/build.ninja" ]; then
  meson setup "$BUILD" --buildtype=release ${MESON_ARGS:-}
fi
ninja -C "$BUILD"
# The live page's plotting library (xretractor --http), from the npm registry into the build tree.
if [ ! -f "$BUILD/web/node_modules/uplot/dist/uPlot.iife.min.js" ]; then
  command -v npm >/dev/null || DEBIAN_FRONTEND=noninteractive ${SUDO:-} apt-get install -y -qq --no-install-recommends npm
  npm install --prefix "$BUILD/web" --no-audit --no-fund --silent uplot@1.6 ||
    echo "warning: npm could not install uPlot; the live page (--http) will have no plots" >&2
fi

