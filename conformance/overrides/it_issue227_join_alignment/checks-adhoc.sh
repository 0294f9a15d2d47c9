#!/usr/bin/env bash
# Ad hoc queries attached to a running plan keep the logical index of their
# source.
#
# The engine runs query.rql for 45 cycles (no -k: it ends by itself).  While it
# runs, xqry -a adds, after the given pauses:
#   0.6 s  late        = SELECT * FROM win
#          an ad hoc DECLARE, which is accepted (and the same name again refused)
#          while the engine keeps running
#   0.4 s  late_pair   = late+win          0.4 s  late_window = late@(3,3)
#   0.2 s  late_sub    = late-0.2          0.2 s  late_hash   = late#win
#   0.2 s  late_left   = late_hash&0.1     0.2 s  late_right  = late_hash%0.1
# Every result is non-empty and its INTEGER records (fields f1 f2 ...) obey:
#   late_pair   6 fields, f1 != 0, f1..f3 equal f4..f6                (>= 1 record)
#   late_window 3 fields, all != 0, f1 = f2 + 3 = f3 + 2               (>= 1)
#   late_sub    3 fields, f1 != 0, f1 = f2 + 1 = f3 + 2, f1 grows by 2 (>= 2)
#   late_hash   3 fields, same shape, f1 grows by 0 or 1 and both occur (>= 3)
#   late_left, late_right: same shape, f1 grows by exactly 1          (>= 2)
. "${CONFORMANCE_LIB:?}/server.sh" || exit 1
. "$CONFORMANCE_LIB/check.sh" || exit 1
set -e

rm -rf temp
mkdir -p temp

engine_start query.rql -m 45

sleep 0.6
"$XQRY" -a 'SELECT * STREAM late FROM win'

rc=0
reply=$("$XQRY" -a "DECLARE a INTEGER STREAM adhoc_src, 0.1 FILE 'datafile1.txt'" 2>&1) || rc=$?
[ $rc -eq 0 ] || fail "an ad hoc DECLARE was refused: $reply"
"$XQRY" -d | grep -q '^| *adhoc_src *|' || fail "the ad hoc DECLARE is not in the stream list"
rc=0
reply=$("$XQRY" -a "DECLARE a INTEGER STREAM adhoc_src, 0.1 FILE 'datafile1.txt'" 2>&1) || rc=$?
[ $rc -ne 0 ] || fail "a second DECLARE of the same name was accepted"

sleep 0.4
"$XQRY" -a 'SELECT * STREAM late_pair FROM late+win'
sleep 0.4
"$XQRY" -a 'SELECT * STREAM late_window FROM late@(3,3)'
sleep 0.2
"$XQRY" -a 'SELECT * STREAM late_sub FROM late-0.2'
sleep 0.2
"$XQRY" -a 'SELECT * STREAM late_hash FROM late#win'
sleep 0.2
"$XQRY" -a 'SELECT * STREAM late_left FROM late_hash&0.1'
sleep 0.2
"$XQRY" -a 'SELECT * STREAM late_right FROM late_hash%0.1'

engine_wait

# rows STREAM FIELDS AWK-PROGRAM: the awk program sees one record per line and
# sets bad=1 for a record that breaks the rule; END decides on the whole stream
rows() {
  local stream=temp/$1 width=$(($2 * 4))
  [ -s "$stream" ] || fail "$1 holds no records"
  od -An -v -w"$width" -td4 "$stream" | awk "$3" && return 0
  od -An -v -w"$width" -td4 "$stream"
  fail "$1 was computed from the wrong logical index"
}

rows late_pair 6 '
  NF != 6 || $1 == 0 || $1 != $4 || $2 != $5 || $3 != $6 { bad = 1 }
  END { exit (bad || NR < 1) }'

rows late_window 3 '
  NF != 3 || $1 == 0 || $2 == 0 || $3 == 0 || $1 != $2 + 3 || $1 != $3 + 2 { bad = 1 }
  END { exit (bad || NR < 1) }'

rows late_sub 3 '
  NF != 3 || $1 == 0 || $1 != $2 + 1 || $2 != $3 + 1 { bad = 1 }
  NR > 1 && $1 != last + 2 { bad = 1 }
  { last = $1 }
  END { exit (bad || NR < 2) }'

rows late_hash 3 '
  NF != 3 || $1 == 0 || $1 != $2 + 1 || $2 != $3 + 1 { bad = 1 }
  NR > 1 { step = $1 - last; if (step == 0) same = 1; else if (step == 1) next_one = 1; else bad = 1 }
  { last = $1 }
  END { exit (bad || NR < 3 || !same || !next_one) }'

for stream in late_left late_right; do
  rows "$stream" 3 '
    NF != 3 || $1 == 0 || $1 != $2 + 1 || $2 != $3 + 1 { bad = 1 }
    NR > 1 && $1 != last + 1 { bad = 1 }
    { last = $1 }
    END { exit (bad || NR < 2) }'
done
echo "ad hoc OK"
