#!/usr/bin/env bash
# xretractor with a TOML configuration (-g): -g in compile mode, the history
# budget (an invalid value warns and keeps 1024), sources.timeout_s (a hard
# configuration error, exit 4), run.checkpoint_s and run.resume, storage.default_retention (written to the
# descriptors of DEFAULT/DIRECT streams without RETENTION, substrates too).
# Usage: config_cli.sh XRETRACTOR
set -u
XR=$1
W=$(mktemp -d /tmp/rdb-config.XXXXXX)
trap 'rm -rf "$W"' EXIT
export TMPDIR=$W XDG_CONFIG_HOME=$W/xdg HOME=$W
cd "$W" || exit 1
fail=0 pass=0
check() {  # check NAME CONDITION...
  local name=$1; shift
  if "$@"; then pass=$((pass + 1)); else echo "FAIL $name"; fail=$((fail + 1)); fi
}
printf '1\n2\n3\n4\n5\n6\n7\n8\n' > s.txt
cat > q.rql <<'Q'
STORAGE 'out'
DECLARE a INTEGER STREAM s, 1 TEXTFILE 's.txt'
SELECT s[0] STREAM x FROM s
SELECT s[0] STREAM own FROM s RETENTION 5 2
SELECT s[0] STREAM mem FROM s STORAGE MEMORY
SELECT * STREAM sum FROM (s > 1) + s
Q
cat > wide.rql <<'Q'
DECLARE a INTEGER[16384] STREAM s, 1 TEXTFILE 's.txt'
SELECT * STREAM q FROM s > 100
Q
mkdir out

# -g in compile mode: accepted, and its settings apply to the compilation.
printf '[limits]\nhistory_memory_mib = 1\n' > small.toml
"$XR" -c -g small.toml q.rql > plan.out 2> err.out; rc=$?
check "-c -g accepted" [ "$rc" = 0 ]
check "-c -g prints the plan" grep -q 'x(1/1)' plan.out
"$XR" -c -g small.toml wide.rql > /dev/null 2> err.out; rc=$?
check "-c -g applies the history budget (exit $rc)" [ "$rc" = 71 ]
check "the refusal names the stream" grep -q "history of stream 's' (read by 'q')" err.out
"$XR" -c --config=small.toml wide.rql > /dev/null 2>&1; rc=$?
check "-c --config=FILE (exit $rc)" [ "$rc" = 71 ]

# An invalid budget is a warning; the default 1024 MiB applies.
for bad in 0 -3; do
  printf '[limits]\nhistory_memory_mib = %s\n' "$bad" > bad.toml
  "$XR" -c -g bad.toml wide.rql > plan.out 2> err.out; rc=$?
  check "history_memory_mib = $bad compiles (exit $rc)" [ "$rc" = 0 ]
  check "history_memory_mib = $bad warns" grep -q 'warning: configuration bad.toml: limits.history_memory_mib .*using 1024' err.out
done

# sources.timeout_s: a number of seconds from 0 to 86400, else exit 4.
for bad in -1 86401 '"soon"' true; do
  printf '[sources]\ntimeout_s = %s\n' "$bad" > t.toml
  for mode in compile run; do
    if [ $mode = compile ]; then "$XR" -c -g t.toml q.rql > /dev/null 2> err.out; rc=$?
    else "$XR" -g t.toml q.rql --no-clock -m 2 > /dev/null 2> err.out; rc=$?; fi
    check "timeout_s = $bad $mode exits 4 (got $rc)" [ "$rc" = 4 ]
    check "timeout_s = $bad $mode message" grep -q '^Configuration error: sources.timeout_s ' err.out
  done
done
printf '[sources]\ntimeout_s = 0.01\n' > t.toml
"$XR" -c -g t.toml q.rql > /dev/null 2>&1; rc=$?
check "timeout_s = 0.01 accepted (exit $rc)" [ "$rc" = 0 ]
# The user's layer is checked too.
mkdir -p xdg/retractor && printf '[sources]\ntimeout_s = -2\n' > xdg/retractor/retractor.toml
"$XR" -c q.rql > /dev/null 2> err.out; rc=$?
check "timeout_s in the XDG layer exits 4 (got $rc)" [ "$rc" = 4 ]
rm -r xdg

# storage.default_retention reaches DEFAULT streams and substrates, not explicit RETENTION or MEMORY.
printf '[storage]\ndefault_retention = [3, 2]\n' > ret.toml
"$XR" -g ret.toml q.rql --no-clock -m 8 > /dev/null 2> err.out; rc=$?
check "run with default_retention (exit $rc)" [ "$rc" = 0 ]
check "x gets RETENTION 3 2" grep -q 'RETENTION 3 2' out/x.desc
# 8 records in segments of 3, 2 kept: segment 0 is gone.
check "x is segmented" bash -c '[ -f out/x_segment_1 ] && [ -f out/x_segment_2 ] && [ ! -e out/x_segment_0 ] && [ ! -e out/x ]'

check "own keeps RETENTION 5 2" grep -q 'RETENTION 5 2' out/own.desc
check "mem has no RETENTION" bash -c '! grep -q "RETENTION " out/mem.desc'
check "the substrate gets RETENTION 3 2" grep -q 'RETENTION 3 2' out/STREAM_TIMEMOVE_1_s.desc
check "the source has no RETENTION" bash -c '! grep -q "RETENTION " out/s.desc'
printf '[storage]\ndefault_retention = [0, 2]\n' > ret.toml
"$XR" -c -g ret.toml q.rql > /dev/null 2> err.out; rc=$?
check "default_retention = [0, 2] compiles (exit $rc)" [ "$rc" = 0 ]
check "default_retention = [0, 2] warns" grep -q 'warning: configuration ret.toml: storage.default_retention .*ignored' err.out

# [run] checkpoint_s and resume: a run without checkpoints leaves none; by
# default the stop writes one, and resume = true goes on from it.
rm -rf out && mkdir out
printf '[run]\ncheckpoint_s = 0\n' > run.toml
"$XR" -g run.toml q.rql --no-clock -m 8 -k > /dev/null 2> err.out; rc=$?
check "checkpoint_s = 0: run (exit $rc), no checkpoint" bash -c "[ $rc = 0 ] && [ ! -e out/.retractor.checkpoint ]"
"$XR" q.rql --no-clock -m 4 -k > /dev/null 2> err.out; rc=$?
check "default: the stop writes a checkpoint (exit $rc)" bash -c "[ $rc = 0 ] && [ -s out/.retractor.checkpoint ]"
printf '[run]\nresume = true\ncheckpoint_s = 0.5\n' > run.toml
"$XR" -g run.toml q.rql --no-clock -m 8 -k -r > run.out 2> err.out; rc=$?
check "resume = true goes on from slot 3 (exit $rc)" grep -q '^resumed q.rql at slot 3 ' run.out
printf '[run]\ncheckpoint_s = -1\nresume = 3\n' > run.toml
"$XR" -c -g run.toml q.rql > /dev/null 2> err.out; rc=$?
check "checkpoint_s = -1 warns (exit $rc)" grep -q 'run.checkpoint_s must be from 0 to 86400 seconds, got -1; ignored' err.out
check "resume = 3 warns" grep -q 'run.resume must be true or false' err.out

# An explicit file that is missing is a hard error.
"$XR" -c -g missing.toml q.rql > /dev/null 2>&1; rc=$?
check "missing -g file exits 4 (got $rc)" [ "$rc" = 4 ]

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
