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

# rec205Inputs: into the work directory, record 205 ten times over (rec205,
# 6,500,000 samples; rec205once the record once), its coefficient files, the
# streaming hand loop (./stream, the yardstick) and the detector's two plans
# storing into out/: int.rql (INTEGER stages) and rat.rql (RATIONAL, its
# detect_out stored). Sets R and N.
rec205Inputs() {
  R=$SHARED/bench-data/rec205
  "$B/bench/mit212" "$R/205.dat" rec205once 2>/dev/null
  for _ in 1 2 3 4 5 6 7 8 9 10; do cat rec205once; done > rec205
  cp "$R/bp_coef.txt" "$R/d_coef.txt" "$R/rec205.desc" .
  g++ -O3 -march=native -o stream "$R/qrs_stream.cpp"
  { echo "STORAGE 'out'"; cat "$R/rec205-detect-int.rql"; } > int.rql
  { echo "STORAGE 'out'"; sed '/STREAM detect_out/ s/ VOLATILE$//' "$R/rec205-detect.rql"; } > rat.rql
  N=6500000
}
