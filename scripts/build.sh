#!/usr/bin/env bash
# Configures and builds Zeus. Usage: scripts/build.sh [--sanitize] [--werror] [--build-dir DIR]
# Default build dir: build/ (build-asan/ with --sanitize). Binaries land in
# <dir>/bin, libraries in <dir>/lib.
set -euo pipefail
cd "$(dirname "$0")/.."

sanitize=OFF
werror=OFF
dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --sanitize) sanitize=ON ;;
    --werror) werror=ON ;;
    --build-dir) dir="$2"; shift ;;
    *) echo "build.sh: unknown option '$1' (use --sanitize, --werror, --build-dir DIR)" >&2; exit 2 ;;
  esac
  shift
done
if [ -z "$dir" ]; then
  if [ "$sanitize" = ON ]; then dir=build-asan; else dir=build; fi
fi

generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
build_type=RelWithDebInfo
if [ "$sanitize" = ON ]; then build_type=Debug; fi

cmake -S . -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE="$build_type" \
  -DZEUS_WERROR="$werror" -DZEUS_SANITIZE="$sanitize" >/dev/null
cmake --build "$dir" --parallel "$(nproc)"
