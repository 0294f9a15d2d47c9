#!/usr/bin/env bash
# Creates a fresh seed corpus for the fuzz targets: every .rql file under the
# conformance cases, examples/ and test/golden/, one file per distinct content.
# Usage: fuzz/make_corpus.sh OUT_DIR
#   RQL_CONFORMANCE_CASES overrides the cases directory
#   (default: <repo>/../shared/conformance/cases, as laid out on /work).
# OUT_DIR is removed and recreated; it belongs under the fuzz build dir
# (tools/fuzz.sh uses build-fuzz/fuzz/seeds) and is never committed.
set -euo pipefail
out=${1:?usage: make_corpus.sh OUT_DIR}
repo=$(cd "$(dirname "$0")/.." && pwd)
cases=${RQL_CONFORMANCE_CASES:-$(dirname "$repo")/shared/conformance/cases}

case "$(cd "$(dirname "$out")" 2>/dev/null && pwd)/" in
  "$repo"/fuzz/*|"$repo"/examples/*|"$repo"/test/*) echo "make_corpus.sh: refusing to write seeds into the source tree: $out" >&2; exit 2 ;;
esac

rm -rf "$out"
mkdir -p "$out"
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
