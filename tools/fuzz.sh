#!/usr/bin/env bash
# Builds a libFuzzer target (build-fuzz/, clang-19, no JIT) if needed and
# runs it for a bounded time or number of runs.
#
# Targets (FUZZ_TARGET=..., default fuzz_compile):
#   fuzz_compile  RQL text: parse + compile + dumps
#   fuzz_desc     .desc descriptor text (storage/descriptor.cpp)
#   fuzz_store    .desc + .meta + data opened as xtrdb and the engine do (storage/store.cpp, meta_index.cpp)
#   fuzz_wire     IPC byte streams: FrameReader and the tree text (ipc/wire.cpp)
#   fuzz_config   the TOML configuration file (tools/config.cpp)
#   fuzz_source   TEXTFILE sources under a few layouts (storage/source.cpp)
#   fuzz_json     record bytes through the JSON writers: PUBLISH, xqry -j, /events (storage/json_text.cpp)
#
#   tools/fuzz.sh                      # 60 s
#   tools/fuzz.sh -max_total_time=600  # 10 min
#   tools/fuzz.sh -runs=1000000        # 1M executions
#   tools/fuzz.sh -runs=1000000 -jobs=1
#   tools/fuzz.sh FILE_OR_DIR...       # replay inputs, e.g. tools/fuzz.sh fuzz/regressions
#   FUZZ_TARGET=fuzz_store tools/fuzz.sh -runs=1000000 -jobs=1
#   FUZZ_TARGET=fuzz_store tools/fuzz.sh fuzz/regressions/fuzz_store
#
# Any other -flag is passed to libFuzzer as is. Every run (and replay) uses
# -rss_limit_mb=2048 -timeout=10 unless given otherwise, so an input that
# compiles for more than 10 s or grows past 2 GiB is a finding. Crash, leak,
# timeout and OOM reproducers go to fuzz/crashes/ (gitignored); minimise one with
#   build-fuzz/fuzz/fuzz_compile -minimize_crash=1 -runs=100000 fuzz/crashes/crash-...
# and commit the result as fuzz/regressions/<short-name>.rql (the other
# targets: fuzz/regressions/<target>/<short-name>, replayed by the meson test
# fuzz-replay-<target>). The working corpus lives in build-fuzz/fuzz/corpus
# (other targets: corpus-<target>; kept between runs, and compacted with
# -merge=1 past 20000 files); the seed corpus build-fuzz/fuzz/seeds
# (seeds-<target>) is recreated by fuzz/make_corpus.sh. libFuzzer counts the
# start-up replay of both towards -runs. The dictionary is fuzz/rql.dict
# (fuzz/<name>.dict for fuzz_<name>, when there is one).
# Environment: BUILD_DIR (default build-fuzz), FUZZ_TARGET (default fuzz_compile).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
BUILD=${BUILD_DIR:-build-fuzz}
TARGET=${FUZZ_TARGET:-fuzz_compile}

if [ ! -f "$BUILD/build.ninja" ]; then
  CC=${CC:-clang-19} CXX=${CXX:-clang++-19} \
    meson setup "$BUILD" -Dfuzz=true -Djit=false --buildtype=debugoptimized
elif ! grep -q "fuzz_compile" "$BUILD/build.ninja"; then
  meson configure "$BUILD" -Dfuzz=true
fi
# The seeds of fuzz_desc and fuzz_store come from a run of the engine, those
# of fuzz_wire from fuzz_seeds.
extra=()
case "$TARGET" in
  fuzz_desc|fuzz_store) extra=(tools/xretractor) ;;
  fuzz_wire) extra=(fuzz/fuzz_seeds) ;;
esac
ninja -C "$BUILD" "fuzz/$TARGET" "${extra[@]}"
bin="$BUILD/fuzz/$TARGET"

# Defaults first: a later -rss_limit_mb= or -timeout= on the command line wins.
defaults=(-rss_limit_mb=2048 -timeout=10)
limit=() args=() inputs=() jobs=""
for a in "$@"; do
  case "$a" in
    -runs=*|-max_total_time=*) limit+=("$a") ;;
    -jobs=*|-workers=*) jobs=1; args+=("$a") ;;
    -*) args+=("$a") ;;
    *) inputs+=("$a") ;;
  esac
done

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

if ((${#inputs[@]})); then
  # Replay mode: run each given file (or each file of a given directory) once.
  # RQL_FUZZ_VERBOSE=1 also prints the expected errors (SyntaxError etc.).
  files=()
  for i in "${inputs[@]}"; do
    if [ -d "$i" ]; then while IFS= read -r f; do files+=("$f"); done < <(find "$i" -maxdepth 1 -type f | sort)
    else files+=("$i"); fi
  done
  failed=0
  for f in "${files[@]}"; do
    if out=$("$bin" "${defaults[@]}" "${args[@]}" "$f" 2>&1); then
      echo "ok    $f"
      [ -z "${RQL_FUZZ_VERBOSE:-}${RDB_FUZZ_VERBOSE:-}" ] || grep -a "^==$TARGET==" <<<"$out" | sed 's/^/        /'
    else
      failed=$((failed + 1))
      echo "FAIL  $f: $(grep -aE "runtime error|ERROR: |SUMMARY|==$TARGET==" <<<"$out" | head -1)"
    fi
  done
  echo "fuzz.sh: replayed ${#files[@]} input(s), $failed failing"
  exit $((failed > 0))
fi
((${#limit[@]})) || limit=(-max_total_time=60)

if [ "$TARGET" = fuzz_compile ]; then
  seeds="$BUILD/fuzz/seeds" corpus="$BUILD/fuzz/corpus" dict="$root/fuzz/rql.dict"
else
  seeds="$BUILD/fuzz/seeds-$TARGET" corpus="$BUILD/fuzz/corpus-$TARGET" dict="$root/fuzz/${TARGET#fuzz_}.dict"
fi
dictarg=()
if [ -f "$dict" ]; then dictarg=(-dict="$dict"); fi
crashes="$root/fuzz/crashes"
fuzz/make_corpus.sh "$seeds" "$TARGET"
mkdir -p "$corpus" "$crashes"
# libFuzzer only adds to the corpus; every run first replays all of it (and
# those replays count towards -runs). Compact it once it has grown large.
if [ "$(find "$corpus" -type f | wc -l)" -gt 20000 ]; then
  rm -rf "$corpus.merge" && mkdir -p "$corpus.merge"
  if "$bin" -merge=1 "${defaults[@]}" "$corpus.merge" "$corpus" > "$BUILD/fuzz/merge.log" 2>&1; then
    rm -rf "$corpus" && mv "$corpus.merge" "$corpus"
    echo "fuzz.sh: corpus compacted to $(find "$corpus" -type f | wc -l) files"
  else
    rm -rf "$corpus.merge"
  fi
fi
log="$BUILD/fuzz/$TARGET.log"
rm -f "$log" "$BUILD"/fuzz/fuzz-*.log

# With -jobs=N libFuzzer runs N child processes, each with the limits below,
# and writes their output to fuzz-<i>.log in the current directory.
set +e
(
  cd "$BUILD/fuzz"
  "$root/$bin" "${dictarg[@]}" -artifact_prefix="$crashes/" \
      "${defaults[@]}" -print_final_stats=1 "${limit[@]}" "${args[@]}" \
      "$root/$corpus" "$root/$seeds"
) 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e

# Executions: "Done N runs" (single process) or the stat::number_of_executed_units lines.
# With -jobs the parent echoes each job's log as well, so count the job logs only.
logs=("$log")
if [ -n "$jobs" ] && compgen -G "$BUILD/fuzz/fuzz-*.log" > /dev/null; then logs=("$BUILD"/fuzz/fuzz-*.log); fi
total=0
for f in "${logs[@]}"; do
  [ -f "$f" ] || continue
  n=$(grep -ao 'stat::number_of_executed_units: *[0-9]*' "$f" | tail -1 | grep -o '[0-9]*$' || true)
  [ -n "$n" ] || n=$(grep -aoE 'Done [0-9]+ runs' "$f" | tail -1 | grep -oE '[0-9]+' || true)
  [ -n "$n" ] && total=$((total + n))
done
echo "fuzz.sh: executions: $total"
found=$(find "$crashes" -maxdepth 1 -type f ! -name '.gitignore' -newer "$seeds" 2>/dev/null | wc -l)
echo "fuzz.sh: new reproducers in fuzz/crashes/: $found"
exit "$status"
