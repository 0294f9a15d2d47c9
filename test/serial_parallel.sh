#!/usr/bin/env bash
# Runs every conformance query offline slot by slot (--block 1, serial, no
# window fusion: the reference) and then in blocks of several sizes, fused,
# serially and on the TBB flow graph (--parallel: independent pipelines side by
# side from the first block), on the JIT and on the VM, and requires
# byte-identical artifacts (.meta compared after its 8-byte creation time).
# Queries that read /dev/urandom are skipped (their input differs between runs).
# The project's own cases (test/parallel/) run after the conformance ones, and
# again with --until-eof (sources that run out inside a parallel block).
set -u
xr=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")  # absolute: the runs change directory
cases=${2:-${RDB_SHARED_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/shared}/conformance/cases}
own=$(cd "$(dirname "$0")" && pwd)/parallel
[ -d "$cases" ] || { echo "serial_parallel: no cases at $cases"; echo "0 passed, 1 failed"; exit 1; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export TMPDIR=$work  # the instance lock is this test's own: another engine on the machine cannot refuse a run
pass=0 fail=0 skip=0

# check QUERY ARGS...: runs QUERY with each ARGS (the first is the reference)
# and counts the case passed when every run's artifacts equal the first's.
check() {
  local q=$1; shift
  local dir name diffs=0 mode=0 args
  dir=$(dirname "$q"); name=$(basename "$q")
  for args in "$@"; do
    mode=$((mode+1))
    rm -rf "$work/$mode"; mkdir -p "$work/$mode"; cp -r "$dir/." "$work/$mode/"; chmod -R u+w "$work/$mode"
    # shellcheck disable=SC2086
    (cd "$work/$mode" && timeout 60 "$xr" "$name" --no-clock -m 200 $args >/dev/null 2>"$work/err$mode")
    echo $? > "$work/rc$mode"
    [ "$mode" = 1 ] && continue
    if ! cmp -s "$work/rc1" "$work/rc$mode"; then
      echo "  $args: exit status differs ($(cat "$work/rc1") vs $(cat "$work/rc$mode"))"; diffs=$((diffs+1)); continue
    fi
    while IFS= read -r f; do
      rel=${f#"$work/1/"}
      other="$work/$mode/$rel"
      if [[ "$f" == *.meta ]]; then
        cmp -s <(tail -c +9 "$f") <(tail -c +9 "$other") || { echo "  $args differs: $rel"; diffs=$((diffs+1)); }
      else
        cmp -s "$f" "$other" || { echo "  $args differs: $rel"; diffs=$((diffs+1)); }
      fi
      # A checkpoint names the run's options (some runs here have --no-fuse): test/resume_kill.py checks what it holds.
    done < <(find "$work/1" -type f ! -name "rc*" ! -name "err*" ! -name "*.lock" ! -name ".retractor.checkpoint*")
  done
  if [ "$diffs" = 0 ]; then pass=$((pass+1)); else echo "FAIL $q $*"; fail=$((fail+1)); fi
}

while IFS= read -r q; do
  if grep -q '/dev/' "$q" || grep -qi 'ROTATION' "$q"; then skip=$((skip+1)); continue; fi
  "$xr" -c "$q" >/dev/null 2>&1 || { skip=$((skip+1)); continue; }
  check "$q" "--threads 1 --block 1 --no-fuse" "--threads 2 --parallel" "--threads 1 --block 7" \
    "--threads 2 --block 3 --interpret --parallel" "--threads 1 --block 64 --no-fuse"
done < <(find "$cases" "$own" -name '*.rql' | sort)
while IFS= read -r q; do
  check "$q" "--threads 1 --block 1 --until-eof" "--threads 2 --parallel --until-eof" \
    "--threads 2 --parallel --block 7 --until-eof" "--threads 2 --parallel --interpret --until-eof"
done < <(find "$own" -name '*.rql' | sort)
echo "skipped $skip queries (device input, rotation, or not compiling)"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
