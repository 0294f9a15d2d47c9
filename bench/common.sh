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

# cpu LABEL CMD... : CPU (user + system), system and wall seconds, peak RSS, into CPU / SYS / WALL / KB
cpu() {
  local label=$1; shift
  /usr/bin/time -f "%U %S %e %M" -o "$W/t.txt" "$@" >"$W/$label.out" 2>"$W/$label.err" || {
    echo "benchmark $label failed:"; cat "$W/$label.err"; exit 1; }
  read -r CPU_USER SYS WALL KB < "$W/t.txt"
  CPU=$(awk -v u="$CPU_USER" -v s="$SYS" 'BEGIN { printf "%.2f", u + s }')
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }'; }
