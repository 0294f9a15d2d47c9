#!/usr/bin/env bash
# The tree is formatted with the checked-in .clang-format (skipped without clang-format).
set -uo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "clang-format not installed: skipped"; exit 77; }
# Collected first: clang-format exits non-zero on a difference, and under
# pipefail that status must not hide the listing.
diffs=$(git ls-files '*.cpp' '*.hpp' '*.h' | xargs clang-format --dry-run 2>&1 | grep -E 'violations\]$' | cut -d: -f1 | sort -u)
if [ -n "$diffs" ]; then
  echo "$diffs"
  echo "format: the files above differ from .clang-format (run clang-format -i on them)"
  exit 1
fi
echo "format: every C++ file follows .clang-format"
