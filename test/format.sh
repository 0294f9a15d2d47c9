#!/usr/bin/env bash
# The tree is formatted with the checked-in .clang-format (skipped without clang-format).
set -uo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "clang-format not installed: skipped"; exit 77; }
if git ls-files '*.cpp' '*.hpp' '*.h' | xargs clang-format --dry-run --Werror 2>&1 | grep -m 20 'warning'; then
  echo "format: the files above differ from .clang-format (run clang-format -i on them)"
  exit 1
fi
echo "format: every C++ file follows .clang-format"
