#!/usr/bin/env bash
# Runs every conformance query offline slot by slot (--block 1, serial, no
# window fusion: the reference) and then in blocks of several sizes, fused,
# serially and on the TBB flow graph (--parallel: independent pipelines side by
# side from the first block), on the JIT and on the VM, and requires
# byte-identical artifacts (.meta compared after its 8-byte creation time).
# Queries that read /dev/urandom are skipped (their input differs between runs).
set -u
xr=$1
cases=${2:-${RDB_SHARED_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/shared}/conformance/cases}
[ -d "$cases" ] || { echo "serial_parallel: no cases at $cases"; echo "0 passed, 1 failed"; exit 1; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export TMPDIR=$work  # the instance lock is this test's own: another engine on the machine cannot refuse a run
pass=0 fail=0 skip=0
while IFS= read -r q; do
  dir=$(dirname "$q"); name=$(basename "$q")
  if grep -q '/dev/' "$q" || grep -qi 'ROTATION' "$q"; then skip=$((skip+1)); continue; fi
  "$xr" -c "$q" >/dev/null 2>&1 || { skip=$((skip+1)); continue; }
  diffs=0
  for mode in 1 2 3 4 5; do
    case $mode in
      1) args="--threads 1 --block 1 --no-fuse" ;;
      2) args="--threads 2 --parallel" ;;
      3) args="--threads 1 --block 7" ;;
      4) args="--threads 2 --block 3 --interpret --parallel" ;;
      5) args="--threads 1 --block 64 --no-fuse" ;;
    esac
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
    done < <(find "$work/1" -type f ! -name "rc*" ! -name "err*" ! -name "*.lock")
  done
  if [ "$diffs" = 0 ]; then pass=$((pass+1)); else echo "FAIL $q"; fail=$((fail+1)); fi
done < <(find "$cases" -name '*.rql' | sort)
echo "skipped $skip queries (device input, rotation, or not compiling)"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
