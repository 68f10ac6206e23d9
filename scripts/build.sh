#!/usr/bin/env bash
# Configures and builds Zeus. Usage: scripts/build.sh [--sanitize] [--werror] [--ci] [--no-tests] [--build-dir DIR] [--target T]...
# --target: build only these targets (and what they need), not every test and benchmark.
# --no-tests: configure without the tests and benchmarks, so that GoogleTest and
# Google Benchmark need not be installed (README command (1), scripts/setup.sh --demo).
# The next run without it turns them back on in the same build dir.
# --ci: line tables only (-g1) instead of full debug info, and no benchmarks in
# the sanitizer build: CI needs readable stack traces, not a debugger, and
# full DWARF for Beast and GoogleTest templates costs minutes on 2 cores.
# Default build dir: build/ (build-asan/ with --sanitize). Binaries land in
# <dir>/bin, libraries in <dir>/lib.
set -euo pipefail
cd "$(dirname "$0")/.."

sanitize=OFF
werror=OFF
ci=OFF
tests=ON
dir=""
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --sanitize) sanitize=ON ;;
    --werror) werror=ON ;;
    --ci) ci=ON ;;
    --no-tests) tests=OFF ;;
    --build-dir) dir="$2"; shift ;;
    --target) targets+=(--target "$2"); shift ;;
    *) echo "build.sh: unknown option '$1' (use --sanitize, --werror, --ci, --no-tests, --build-dir DIR, --target T)" >&2; exit 2 ;;
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

# Explicit every time: CMake's cache would otherwise keep an earlier --no-tests.
benchmarks="$tests"
extra=()
if [ "$ci" = ON ]; then
  extra+=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
          -DCMAKE_CXX_FLAGS_DEBUG="-g1" -DCMAKE_C_FLAGS_DEBUG="-g1")
  if [ "$sanitize" = ON ]; then benchmarks=OFF; fi
fi
extra+=(-DZEUS_BUILD_TESTS="$tests" -DZEUS_BUILD_BENCHMARKS="$benchmarks")
# shellcheck source=scripts/ccache-env.sh
. scripts/ccache-env.sh
extra+=("${ZEUS_CCACHE_DEFINES[@]}")
cmake -S . -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE="$build_type" \
  -DZEUS_WERROR="$werror" -DZEUS_SANITIZE="$sanitize" "${extra[@]}" >/dev/null
cmake --build "$dir" --parallel "$(nproc)" "${targets[@]}"
