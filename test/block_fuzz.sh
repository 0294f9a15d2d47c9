#!/usr/bin/env bash
# Differential fuzz of block execution: a fixed-seed sample of ~30 generated
# query sets (test/block_fuzz.py) run slot by slot (--threads 1 --block 1
# --no-fuse --no-chains, the reference) and in other combinations of --block, window
# fusion, --threads 1/2 and JIT/--interpret; every artifact must be
# byte-identical (.meta after its 8-byte creation time).
#   test/block_fuzz.sh XRETRACTOR [block_fuzz.py options: --seed S --cases N --modes M --keep DIR -v]
# Ends with "N passed, N failed"; exit status 1 when a case failed.
set -u
xr=${1:?usage: block_fuzz.sh XRETRACTOR [options]}
shift
command -v python3 >/dev/null || { echo "block_fuzz: python3 not found"; echo "0 passed, 1 failed"; exit 1; }
exec python3 "$(dirname "$0")/block_fuzz.py" "$xr" "$@"
