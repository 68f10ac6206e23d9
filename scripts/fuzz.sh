#!/usr/bin/env bash
# Builds and runs the libFuzzer target over zeusd's request parsing and
# routing for a bounded time. Usage: scripts/fuzz.sh [SECONDS]   (default 60)
#                                    scripts/fuzz.sh --build-only (CI builds it while other tests run)
#
# Needs clang with libFuzzer (Debian: clang-14 and libclang-rt-14-dev, which
# scripts/setup.sh installs). Builds in build-fuzz/ with ASan + UBSan and
# coverage instrumentation; only the fuzz target and what it links are built.
# The committed seeds (fuzz/corpus/zeusd_request/) are read, never written:
# new inputs go to build-fuzz/corpus/zeusd_request/, crashes to
# build-fuzz/artifacts/. Exit status 0 only when the run found nothing.
# Reproduce a crash: build-fuzz/bin/zeusd_request_fuzz build-fuzz/artifacts/crash-...
#
# zeusd logs on stdout, which the run closes (-close_fd_mask=1) to keep the output readable.
# Environment: JOBS (build parallelism, default 2), CXX/CC (default clang++/clang),
# FUZZ_CFLAGS (optimization and debug flags, default -O1 -g1; CI uses -O0 to build faster),
# FUZZ_ARGS (extra libFuzzer flags).
set -euo pipefail
cd "$(dirname "$0")/.."

build_only=0
if [ "${1:-}" = "--build-only" ]; then build_only=1; shift; fi
seconds="${1:-60}"
case "$seconds" in
  ''|*[!0-9]*) echo "fuzz.sh: SECONDS must be a whole number, got '$seconds'" >&2; exit 2 ;;
esac
dir=build-fuzz
cxx="${CXX:-clang++}"
cc="${CC:-clang}"
if ! command -v "$cxx" >/dev/null 2>&1; then
  echo "fuzz.sh: $cxx not found; install clang and libclang-rt-dev (scripts/setup.sh does)" >&2
  exit 2
fi

# shellcheck source=scripts/ccache-env.sh
. scripts/ccache-env.sh
generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
# -O1 with asserts and line tables: the usual libFuzzer trade-off, and much
# cheaper to compile than -O2 with full debug info on Beast's templates.
cmake -S . -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="${FUZZ_CFLAGS:--O1 -g1}" -DCMAKE_C_FLAGS_RELWITHDEBINFO="${FUZZ_CFLAGS:--O1 -g1}" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_C_COMPILER="$cc" \
  -DZEUS_FUZZ=ON -DZEUS_BUILD_TESTS=OFF -DZEUS_BUILD_BENCHMARKS=OFF "${ZEUS_CCACHE_DEFINES[@]}" >/dev/null
cmake --build "$dir" --target zeusd_request_fuzz -j "${JOBS:-2}"
[ "$build_only" = 0 ] || exit 0

corpus="$dir/corpus/zeusd_request"
artifacts="$dir/artifacts"
mkdir -p "$corpus" "$artifacts"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# shellcheck disable=SC2086
"$dir/bin/zeusd_request_fuzz" \
  -max_total_time="$seconds" \
  -dict=fuzz/zeusd_request.dict \
  -max_len=16384 \
  -timeout=10 \
  -rss_limit_mb=2048 \
  -print_final_stats=1 \
  -close_fd_mask=1 \
  -artifact_prefix="$artifacts/" \
  ${FUZZ_ARGS:-} \
  "$corpus" fuzz/corpus/zeusd_request
