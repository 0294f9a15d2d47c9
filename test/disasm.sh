#!/usr/bin/env bash
# `xretractor -c --disasm` prints each stream's bytecode: opcode names of the
# instruction table with their operands (functions by name, conversions).
set -u
xr=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/q.rql" <<'RQL'
DECLARE a INTEGER, b FLOAT STREAM src, 0.1 FILE 'src.dat'
SELECT src[0] * 2 + src[1], Sqrt(src[1]), sin(src[0]), to_string(src[0]) STREAM calc FROM src
RQL
out=$(cd "$dir" && "$xr" -c --disasm q.rql 2>&1); rc=$?
fail=0
[ "$rc" = 0 ] || { echo "FAIL: exit $rc: $out"; fail=1; }
for want in "stream calc:" "LOAD_I32" "e0" "CONST_I32" "MUL_I32" "CVT_I32_F32" "ADD_F32" "STORE_F32" \
            "MATH_F32" "fn=Sqrt" "CVT_I32_F64" "MATHD_F64" "fn=sin" "CVT_I32_STR" "explicit" "STORE_STR"; do
  grep -qF -- "$want" <<<"$out" || { echo "FAIL: '$want' missing in:"; echo "$out"; fail=1; }
done
if [ "$fail" = 0 ]; then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; fi
exit $fail
