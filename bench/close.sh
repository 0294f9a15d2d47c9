#!/usr/bin/env bash
# The close of a plan of many stored streams, run by hand (never a timed test):
#   bench/close.sh [N]      (N computed streams, default 5000)
# One TEXTFILE source and N streams `SELECT src[0]+i`, each stored (data,
# .shadow, .meta, .desc). Reports the close of an offline run (-f -m 100, -v), the
# wall time from SIGTERM to the exit of a clocked run, and, with strace
# installed, the sync calls of an offline run.
set -euo pipefail
source "$(dirname "$0")/common.sh" rdb-close
N=${1:-5000}
cd "$W"
python3 - "$N" <<'EOPY'
import sys
n = int(sys.argv[1])
open('f.txt', 'w').write(''.join(f'{i}\n' for i in range(100)))
with open('close.rql', 'w') as q:
    q.write("STORAGE 'out'\nDECLARE a INTEGER STREAM src, 1/100 TEXTFILE 'f.txt'\n")
    for i in range(1, n + 1):
        q.write(f"SELECT src[0]+{i} STREAM s{i} FROM src\n")
EOPY
mkdir out
# The close seconds of a -v report (FILE), and the syncs it counts (when it says).
close_of() { sed -n 's/^processed [0-9]* slots in [0-9.]* s (close \([0-9.]*\) s)$/\1/p' "$1"; }
syncs_of() { sed -n 's/^closed [0-9]* streams with \([0-9]*\) syncs.*/\1/p' "$1"; }
"$XR" close.rql --no-clock -m 100 -k -v >off.out 2>off.err || { cat off.err; exit 1; }
OFF=$(close_of off.out); OFF_SYNCS=$(syncs_of off.out)
# Clocked: SIGTERM once the last stream has stored a record, then the wall time to the exit.
rm -rf out && mkdir out
"$XR" close.rql -k -v >clk.out 2>clk.err &
PID=$!
for _ in $(seq 1200); do [ -s "out/s$N" ] && break; sleep 0.1; done
[ -s "out/s$N" ] || { kill -KILL $PID; cat clk.err; echo "the clocked run never stored s$N"; exit 1; }
T0=$(date +%s.%N); kill -TERM $PID; wait $PID || { cat clk.err; exit 1; }; T1=$(date +%s.%N)
CLK=$(close_of clk.out)
SYNCS=
if command -v strace >/dev/null; then
  strace -f -c -e trace=fsync,fdatasync,syncfs -o strace.txt "$XR" close.rql --no-clock -m 100 -k >/dev/null 2>&1
  SYNCS=$(awk '$NF ~ /^(fsync|fdatasync|syncfs)$/ { n += $4 } END { print n + 0 }' strace.txt)
fi
MACHINE="$(nproc) cores, $(uname -m), $(uname -r), $(date -u +%Y-%m-%d)"
echo "Machine: $MACHINE; one run; storage on $(df --output=fstype out | tail -1)"
echo
echo "| plan | offline close (-v) | clocked: SIGTERM to exit (close by -v) | sync calls of a run (strace) | syncs of the close (-v) |"
echo "|---|---|---|---|---|"
awk -v n="$N" -v off="$OFF" -v t0="$T0" -v t1="$T1" -v clk="$CLK" -v s="${SYNCS:-no strace}" -v c="${OFF_SYNCS:-not reported}" \
  'BEGIN { printf "| %d streams | %s s | %.2f s (%s s) | %s | %s |\n", n, off, t1 - t0, clk, s, c }'
