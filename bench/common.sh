# Sourced by the bench scripts: the build they measure and a private work
# directory. Sets ROOT, SHARED, B (build), XR (xretractor) and W (work dir,
# removed on exit; also TMPDIR, so the engine's instance lock is its own).
# $1: the work directory's name prefix.
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
SHARED=${RDB_SHARED_DIR:-$ROOT/../shared}
B=${RDB_BENCH_BUILD:-$ROOT/build-bench}  # a release build configured with -Dbench=true
[ -f "$B/build.ninja" ] || meson setup "$B" --buildtype=release -Dbench=true >/dev/null
ninja -C "$B" >/dev/null
XR=$B/tools/xretractor
W=$(mktemp -d "/tmp/$1.XXXXXX")
trap 'rm -rf "$W"' EXIT
export TMPDIR=$W
# Every run compiles its code (a bench that wants the code cache names one).
export RDB_JIT_CACHE=off
