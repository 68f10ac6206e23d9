#!/usr/bin/env bash
# Checks that the C and C++ lines a change touches are laid out as
# .clang-format says (sim/ has its own). Only changed lines: the code older
# than the style file keeps its hand-made line breaks.
#
#   scripts/check-format.sh [BASE]      lines changed since BASE (default HEAD~1)
#   scripts/check-format.sh --fix BASE  rewrites those lines in place
set -euo pipefail
cd "$(dirname "$0")/.."

fix=0
if [ "${1:-}" = "--fix" ]; then fix=1; shift; fi
base="${1:-HEAD~1}"
if ! command -v clang-format-diff >/dev/null 2>&1; then
  echo "check-format: clang-format-diff is missing (scripts/setup.sh installs the clang-format package)" >&2
  exit 2
fi
if ! git rev-parse --verify --quiet "$base^{commit}" >/dev/null; then
  echo "check-format: no commit '$base' in this clone (a shallow clone has no parent); nothing to compare"
  exit 0
fi

files=(-- '*.c' '*.h' '*.cpp' '*.hpp')
if [ "$fix" = 1 ]; then
  git diff -U0 --no-color "$base" "${files[@]}" | clang-format-diff -p1 -i
  echo "check-format: lines changed since $base reformatted"
  exit 0
fi
report="$(git diff -U0 --no-color "$base" "${files[@]}" | clang-format-diff -p1 || true)"
if [ -n "$report" ]; then
  printf '%s\n' "$report"
  echo "check-format: the lines above, changed since $base, differ from .clang-format;" \
       "run scripts/check-format.sh --fix $base" >&2
  exit 1
fi
echo "check-format: lines changed since $base follow .clang-format"
