#!/usr/bin/env bash
# Runs `xretractor -c` on every test/errors/*.rql. The first line of each file
# says what must happen:   # expect: EXIT LINE:COL message fragment
# Checks the exit status, that nothing is printed on stdout, and that stderr
# holds "FILE:LINE:COL: error: ...fragment...". An optional second line
# `# args: ...` gives more options (e.g. --strict for a warning).
set -u
xr=$1
dir=$2
pass=0 fail=0
for f in "$dir"/*.rql; do
  spec=$(head -1 "$f" | sed -n 's/^# expect: //p')
  want_rc=${spec%% *}; rest=${spec#* }
  want_pos=${rest%% *}; want_msg=${rest#* }
  args=$(sed -n '2s/^# args: //p' "$f")
  # shellcheck disable=SC2086 # the options split as written
  out=$(cd "$dir" && "$xr" -c "$(basename "$f")" $args 2>/tmp/cli_err.$$); rc=$?
  err=$(cat /tmp/cli_err.$$)
  name=$(basename "$f")
  if [ "$rc" != "$want_rc" ]; then
    echo "FAIL $name: exit $rc, expected $want_rc; stderr: $err"; fail=$((fail+1)); continue
  fi
  if [ -n "$out" ]; then echo "FAIL $name: printed a plan on stdout"; fail=$((fail+1)); continue; fi
  if ! grep -qF -- "$name:$want_pos: error: " <<<"$err"; then
    echo "FAIL $name: expected '$name:$want_pos: error:' in: $err"; fail=$((fail+1)); continue
  fi
  if ! grep -qF -- "$want_msg" <<<"$err"; then
    echo "FAIL $name: expected message '$want_msg' in: $err"; fail=$((fail+1)); continue
  fi
  pass=$((pass+1))
done
rm -f /tmp/cli_err.$$
echo "$pass passed, $fail failed"
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
