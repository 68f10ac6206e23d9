#!/usr/bin/env bash
# README command (2): set up, build with warnings as errors, and run every
# test; then build again with AddressSanitizer + UndefinedBehaviorSanitizer
# and run every test there too.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# The release wheels (warnings are errors in the extension's own sources too),
# built first: .venv installs the cp311 one, so every Python test runs what
# users install, and libzeus is compiled once for Python, not twice.
# scripts/test-wheel.sh below reuses them (docs/python.md).
ZEUS_WHEEL_TAGS="${ZEUS_WHEEL_TAGS:-cp39 cp311 abi3}" scripts/build-wheel.sh
ZEUS_NATIVE_WHEEL="$(ls dist/zeus_native-*-cp311-cp311-*.whl)" scripts/setup-python.sh
scripts/setup-frameworks.sh >/dev/null  # torch+transformers for python/tests/test_frameworks.py, cached outside the clone

jobs="$(nproc)"
echo "== layout of the lines the last commit changed (.clang-format)"
scripts/check-format.sh
echo "== build (warnings are errors)"
scripts/build.sh --werror --ci
echo "== tests"
ctest --test-dir build --output-on-failure --parallel "$jobs" --timeout 300
echo "== Python package tests (zeus_native, pytest)"
# Any non-zero status fails the run, including 5 (no test collected).
timeout 900 .venv/bin/python -m pytest -q -p no:cacheprovider python/tests
scripts/test-packages.sh  # Debian packages from build/, clean-root install, images, Kubernetes (docs/deploy.md)
ZEUS_WHEEL_TAGS="${ZEUS_WHEEL_TAGS:-cp39 cp311 abi3}" scripts/test-wheel.sh  # release wheels: built, checked, then run in clean Debian 11/12 roots (docs/python.md)

echo "== build with AddressSanitizer + UndefinedBehaviorSanitizer"
scripts/build.sh --werror --sanitize --ci
echo "== tests under sanitizers"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure --parallel "$jobs" --timeout 600

echo "== fuzz zeusd request parsing and routing (libFuzzer, bounded)"
# -O0: the instrumented library builds faster; a bounded smoke run, not a campaign (docs/fuzzing.md).
FUZZ_CFLAGS="${FUZZ_CFLAGS:--O0 -g1}" scripts/fuzz.sh "${ZEUS_FUZZ_SECONDS:-30}"
