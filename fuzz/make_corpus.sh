#!/usr/bin/env bash
# Creates a fresh seed corpus for one fuzz target, from real files:
#   fuzz_compile  every .rql file under the conformance cases, examples/ and
#                 test/golden/, one file per distinct content
#   fuzz_desc     every .desc of the conformance cases and of a short run of
#                 examples/sensors.rql, plus profile/retention variants
#   fuzz_store    the .desc + .meta + data triples of that run (fuzz_store.cpp
#                 format), with variants, and the cases' declared sources
#   fuzz_source   examples/*.txt and the cases' .txt data behind layout bytes
#   fuzz_config   TOML files: the docs' examples, every key, the cases' form
#   fuzz_wire     IPC streams written by fuzz_seeds (frames of ipc/wire.cpp)
#   fuzz_json     the records of fuzz/regressions/fuzz_json (invalid UTF-8, NaN, NULL)
# Usage: fuzz/make_corpus.sh OUT_DIR [TARGET]     (TARGET: fuzz_compile)
#   RQL_CONFORMANCE_CASES overrides the cases directory
#   (default: <repo>/../shared/conformance/cases, as laid out on /work).
#   RDB_XRETRACTOR: the engine for the sensors run (default: build-fuzz/tools/
#   xretractor, else build/tools/xretractor); RDB_FUZZ_SEEDS: the fuzz_seeds
#   program (default: build-fuzz/fuzz/fuzz_seeds).
# OUT_DIR is removed and recreated; it belongs under the fuzz build dir
# (tools/fuzz.sh uses build-fuzz/fuzz/seeds-TARGET) and is never committed.
set -euo pipefail
out=${1:?usage: make_corpus.sh OUT_DIR [TARGET]}
target=${2:-fuzz_compile}
repo=$(cd "$(dirname "$0")/.." && pwd)
cases=${RQL_CONFORMANCE_CASES:-$(dirname "$repo")/shared/conformance/cases}

case "$(cd "$(dirname "$out")" 2>/dev/null && pwd)/" in
  "$repo"/fuzz/*|"$repo"/examples/*|"$repo"/test/*) echo "make_corpus.sh: refusing to write seeds into the source tree: $out" >&2; exit 2 ;;
esac

rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)

# A short offline run of examples/sensors.rql in a scratch directory: its
# stored streams (.desc, .meta, data) are real artifacts. Prints the directory.
sensors_run() {
  local xr=${RDB_XRETRACTOR:-}
  if [ -z "$xr" ]; then
    for c in "$repo/build-fuzz/tools/xretractor" "$repo/build/tools/xretractor"; do
      [ -x "$c" ] && { xr=$c; break; }
    done
  fi
  if [ -z "$xr" ] || [ ! -x "$xr" ]; then
    echo "make_corpus.sh: note: no xretractor built, no sensors artifacts" >&2
    return 1
  fi
  local run
  run=$(mktemp -d "${TMPDIR:-/tmp}/rdb-seeds-XXXXXX")
  cp "$repo"/examples/sensors.rql "$repo"/examples/*.txt "$run/"
  mkdir "$run/out"
  if ! (cd "$run" && TMPDIR=$run timeout 60 "$xr" sensors.rql --no-clock -m 40 >/dev/null 2>&1); then
    echo "make_corpus.sh: note: the sensors run failed, no artifacts" >&2
    rm -rf "$run"
    return 1
  fi
  echo "$run"
}

# fuzz_store input: DESC %%META%% META %%DATA%% DATA (a missing file: no marker).
triple() {  # triple OUT DESC_TEXT_FILE META_FILE DATA_FILE [EXTRA_DESC_LINE]
  local o=$1 desc=$2 meta=$3 data=$4 extra=${5:-}
  {
    if [ -n "$extra" ]; then sed '$ s/}$//' "$desc"; printf '\t%s\n}' "$extra"; else cat "$desc"; fi
    if [ -f "$meta" ]; then printf '%%%%META%%%%'; cat "$meta"; fi
    if [ -f "$data" ]; then printf '%%%%DATA%%%%'; cat "$data"; fi
  } > "$o"
}

# fuzz_source input: layout byte, two bytes per field, then the file.
layout() {  # layout OUT FILE FLAGS TYPE COUNT [TYPE COUNT]...
  local o=$1 f=$2 hdr
  shift 2
  hdr=$(printf '\\x%02x' "$@")
  { printf "$hdr"; cat "$f"; } > "$o"
}

case "$target" in
fuzz_compile) ;;
fuzz_desc|fuzz_store)
  run=$(sensors_run) || run=""
  descs=()
  if [ -n "$run" ]; then
    while IFS= read -r -d '' f; do descs+=("$f"); done < <(find "$run/out" -name '*.desc' -print0 | sort -z)
  fi
  [ ! -d "$cases" ] || while IFS= read -r -d '' f; do descs+=("$f"); done < <(find "$cases" -name '*.desc' -print0 | sort -z)
  k=0
  for d in "${descs[@]}"; do
    b=${d%.desc}
    k=$((k + 1))
    if [ "$target" = fuzz_desc ]; then
      cp "$d" "$out/desc-$k.desc"
      for extra in "TYPE POSIXSHD" "RETENTION 3 2" "RETMEMORY 4" "REF \"data.txt\"" "STRING s[8]"; do
        k=$((k + 1))
        { sed '$ s/}$//' "$d"; printf '\t%s\n}' "$extra"; } > "$out/desc-$k.desc"
      done
    else
      data=$b
      [ -f "$data" ] || data=$(dirname "$d")/$(sed -n 's/.*REF "\([^"]*\)".*/\1/p' "$d" | head -1)
      triple "$out/store-$k.bin" "$d" "$b.meta" "$data"
      for extra in "TYPE POSIX" "TYPE POSIXSHD" "TYPE DIRECT" "TYPE MEMORY" "RETENTION 3 2" "RETMEMORY 4" "TYPE TEXTSOURCE"; do
        k=$((k + 1))
        triple "$out/store-$k.bin" "$d" "$b.meta" "$data" "$extra"
      done
    fi
  done
  [ -z "$run" ] || rm -rf "$run"
  echo "make_corpus.sh: wrote $(ls "$out" | wc -l) $target seeds into $out"
  exit 0 ;;
fuzz_source)
  k=0
  txts=("$repo"/examples/*.txt)
  [ ! -d "$cases" ] || while IFS= read -r -d '' f; do txts+=("$f"); done < <(find "$cases" -name '*.txt' -size -64k -print0 | sort -z)
  for f in "${txts[@]}"; do
    # INTEGER, BYTE (sensor_a); FLOAT (sensor_b); INTEGER[3]; DOUBLE, STRING[16]; one-shot BYTE UINT FLOAT RATIONAL
    layout "$out/src-$((k += 1)).bin" "$f" 1 1 0 0 0
    layout "$out/src-$((k += 1)).bin" "$f" 0 3 0
    layout "$out/src-$((k += 1)).bin" "$f" 0 1 2
    layout "$out/src-$((k += 1)).bin" "$f" 1 4 0 6 15
    layout "$out/src-$((k += 1)).bin" "$f" 7 0 0 2 0 3 1 5 0
  done
  echo "make_corpus.sh: wrote $(ls "$out" | wc -l) $target seeds into $out"
  exit 0 ;;
fuzz_config)
  printf '[ipc]\nmax_clients = 128\nclient_idle_timeout_ms = 5000\n' > "$out/live.toml"
  printf '[storage]\ndir = "%s"\n' /tmp/rdb-storage > "$out/storage.toml"
  cat > "$out/all.toml" <<'TOML'
# Every key tools/config.cpp reads, at its default.
[storage]
dir = "out/"

[ipc]
queue_buffer_seconds = 10
min_queue_elements = 100
max_clients = 128
client_idle_timeout_ms = 5000
client_response_max_fails = 300

[timing]
server_startup_wait_s = 30
server_startup_poll_ms = 100
query_no_data_timeout_ms = 10000

[paths]
lock_dir = "/tmp"

[limits]
history_memory_mib = 1024
TOML
  printf 'ipc = { max_clients = 2, min_queue_elements = 1 }\nlimits.history_memory_mib = 1\n' > "$out/inline.toml"
  echo "make_corpus.sh: wrote $(ls "$out" | wc -l) $target seeds into $out"
  exit 0 ;;
fuzz_wire)
  gen=${RDB_FUZZ_SEEDS:-$repo/build-fuzz/fuzz/fuzz_seeds}
  if [ -x "$gen" ]; then "$gen" "$out"; else echo "make_corpus.sh: note: $gen not built, no wire seeds" >&2; fi
  exit 0 ;;
fuzz_json)
  cp "$repo"/fuzz/regressions/fuzz_json/* "$out/"
  echo "make_corpus.sh: wrote $(ls "$out" | wc -l) $target seeds into $out"
  exit 0 ;;
*) echo "make_corpus.sh: unknown target $target" >&2; exit 2 ;;
esac

n=0
for dir in "$cases" "$repo/examples" "$repo/test/golden"; do
  if [ ! -d "$dir" ]; then
    echo "make_corpus.sh: note: $dir not found, skipped" >&2
    continue
  fi
  while IFS= read -r -d '' f; do
    # Name by content hash (many cases are all called query.rql); equal files collapse.
    h=$(sha1sum "$f" | cut -c1-16)
    cp "$f" "$out/$(basename "$f" .rql)-$h.rql"
    n=$((n + 1))
  done < <(find "$dir" -type f -name '*.rql' -print0 | sort -z)
done
echo "make_corpus.sh: copied $n .rql files ($(ls "$out" | wc -l) distinct) into $out"
