#!/usr/bin/env bash
# README command (2): set up, build with warnings as errors, and run every
# test; then build again with AddressSanitizer + UndefinedBehaviorSanitizer
# and run every test there too.
#
# Each step prints "== [mm:ss] STEP" (time since the start), and the run ends
# with how long each step took. What waits on the network (PyTorch, the pinned
# PyPI packages, the clean Debian roots) runs in the background from the
# start, and the sanitizer and fuzzer trees compile in the background on
# idle CPU only while the first tree's tests run. Each background job
# is waited for where its result is first needed, and its log (build-ci/) is
# shown then; one that failed fails the run there, with its whole log.
# ZEUS_CI_OVERLAP=0 runs every step in order in the foreground instead.
set -euo pipefail
cd "$(dirname "$0")/.."

logs=build-ci
rm -rf "$logs" && mkdir -p "$logs"
begin=$SECONDS
clock() { printf '%02d:%02d' $(($1 / 60)) $(($1 % 60)); }
say() { echo "== [$(clock $((SECONDS - begin)))] $*"; }

# The foreground steps, and the table of their durations printed at the end.
durations=()
current="" current_start=0
finish_step() {
  [ -z "$current" ] || durations+=("$(clock $((SECONDS - current_start)))  $current")
  current=""
}
step() {
  finish_step
  reap_finished
  current="$1" current_start=$SECONDS
  say "$1"
}

# Background jobs: each in a session of its own, so that a failed run stops
# all of its processes (pip, mmdebstrap, ninja), not only the first.
declare -A pids=()
# --idle: only CPU that the foreground leaves idle. nice alone does not do
# that here: a new session is a new scheduler autogroup, and autogroups share
# the CPU equally whatever their processes' nice values, so the job also
# lowers its autogroup's weight (/proc/self/autogroup, where the kernel has it).
background() {  # [--idle] NAME COMMAND [ARG...]
  local idle=0
  if [ "$1" = --idle ]; then idle=1; shift; fi
  local name="$1"; shift
  if [ "${ZEUS_CI_OVERLAP:-1}" = 0 ]; then
    step "$name"
    "$@"
    return
  fi
  say "$name: started in the background ($logs/$name.log)"
  # shellcheck disable=SC2016  # expanded by the inner shell
  setsid --wait bash -c '
    if [ "$2" = 1 ]; then
      echo 19 >/proc/self/autogroup 2>/dev/null || true
      renice -n 19 -p $$ >/dev/null
    fi
    start=$SECONDS; "${@:3}"; status=$?; echo $((SECONDS - start)) >"$1"; exit $status' \
    job "$logs/$name.seconds" "$idle" "$@" >"$logs/$name.log" 2>&1 </dev/null &
  pids[$name]=$!
}
wait_for() {  # NAME: waits for a background job; shows its log; its failure ends the run
  local name="$1" status=0
  [ -n "${pids[$name]:-}" ] || return 0
  wait "${pids[$name]}" || status=$?
  unset "pids[$name]"
  local log="$logs/$name.log"
  if [ "$status" -ne 0 ]; then
    say "FAILED: $name (in the background, exit status $status); its log:"
    cat "$log"
    say "FAILED: $name (in the background, exit status $status; log above and in $log)"
    current=""  # not the foreground step's failure
    exit 1
  fi
  local seconds lines
  seconds="$(cat "$logs/$name.seconds")"
  durations+=("$(clock "$seconds")  $name (in the background)")
  lines="$(wc -l <"$log")"
  say "$name: done in the background in $(clock "$seconds")"
  if [ "$lines" -le 40 ]; then
    sed 's/^/  | /' "$log"
  else
    echo "  | ... ($lines lines; all of them in $log)"
    tail -n 20 "$log" | sed 's/^/  | /'
  fi
}
reap_finished() {  # a background job that has ended is reported now, a failure at once
  local name
  for name in "${!pids[@]}"; do
    kill -0 "${pids[$name]}" 2>/dev/null || wait_for "$name"
  done
}
on_exit() {
  local status=$? pid
  [ "$status" -eq 0 ] || [ -z "$current" ] || say "FAILED: $current (exit status $status)"
  for pid in "${pids[@]}"; do kill -- "-$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap on_exit EXIT
trap 'exit 130' INT TERM

jobs="$(nproc)"
tags="${ZEUS_WHEEL_TAGS:-cp39 cp311 abi3}"
export FUZZ_CFLAGS="${FUZZ_CFLAGS:--O0 -g1}"  # the fuzzer's library builds faster at -O0 (docs/fuzzing.md)

step "Debian packages (scripts/setup.sh)"
scripts/setup.sh
# Before CMake configures: the interop tests are added only where .venv exists.
[ -x .venv/bin/python ] || /usr/bin/python3 -m venv .venv
background python-packages scripts/setup-python.sh --deps-only
# torch+transformers for python/tests/test_frameworks.py, cached outside the clone (5.6 GB), what
# only the original's examples import (python/tests/test_original_examples.py, 0.4 GB), and
# mlflow, wandb and Lightning for python/tests/test_trackers.py (0.9 GB).
background pytorch scripts/setup-frameworks.sh --examples
background trackers scripts/setup-trackers.sh
background clean-roots bash -c \
  'scripts/build-wheel.sh --prefetch && scripts/test-wheel.sh --prefetch && scripts/test-packages.sh --prefetch'

step "layout of the lines the last commit changed (.clang-format)"
scripts/check-format.sh
step "build (warnings are errors)"
scripts/build.sh --werror --ci
# The sanitizer tree (no benchmarks) and the fuzzer's, on the CPU the tests leave idle.
background --idle sanitizer-builds bash -c \
  'scripts/build.sh --werror --sanitize --ci && scripts/fuzz.sh --build-only'
wait_for clean-roots
# The root of the wheel suite holds the Debian packages that build/bin/zeus loads.
background wheel-suite-root scripts/test-wheel-suite.sh --prefetch

# The release wheels (warnings are errors in the extension's own sources too):
# .venv installs the cp311 one, so every Python test runs what users install,
# and libzeus is compiled once for Python, not twice. scripts/test-wheel.sh
# below reuses them (docs/python.md).
step "release wheels $tags (scripts/build-wheel.sh)"
ZEUS_WHEEL_TAGS="$tags" scripts/build-wheel.sh
wait_for python-packages
step "zeus_native from the cp311 wheel into .venv (scripts/setup-python.sh)"
ZEUS_NATIVE_WHEEL="$(ls dist/zeus_native-*-cp311-cp311-*.whl)" scripts/setup-python.sh

step "documentation site (scripts/build-docs.sh: mkdocs --strict, user pages' budget), opened in Chromium"
scripts/build-docs.sh
.venv/bin/python scripts/check-docs-browser.py   # screenshots in build/docs-screenshots/

step "tests"
ctest --test-dir build --output-on-failure --parallel "$jobs" --timeout 300
wait_for pytorch
wait_for trackers
step "Python package tests (zeus_native, pytest)"
# Any non-zero status fails the run, including 5 (no test collected).
timeout 1800 .venv/bin/python -m pytest -q -p no:cacheprovider --durations=15 python/tests
step "documentation examples on the simulator (scripts/check-docs-examples.py)"
ZEUS_DOCS_FRAMEWORKS="$(scripts/setup-frameworks.sh):$(scripts/setup-trackers.sh)" timeout 900 .venv/bin/python scripts/check-docs-examples.py
step "Debian packages from build/, clean-root install, images, Kubernetes (scripts/test-packages.sh)"
scripts/test-packages.sh  # docs/deploy.md
wait_for wheel-suite-root
step "release wheels: checked, then run in clean Debian 11/12 roots (scripts/test-wheel.sh)"
ZEUS_WHEEL_TAGS="$tags" scripts/test-wheel.sh  # docs/python.md

wait_for sanitizer-builds
step "tests under AddressSanitizer + UndefinedBehaviorSanitizer"
# Two tests per core: nothing else runs by now, and most tests wait on real
# time (windows, servers, child processes) for much of theirs (1445 tests:
# 456 s at one per core, 323 s at two, on 2 cores).
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure --parallel "$((jobs * 2))" --timeout 600

step "fuzz zeusd request parsing and routing (libFuzzer, bounded)"
# A bounded smoke run, not a campaign (docs/fuzzing.md).
scripts/fuzz.sh "${ZEUS_FUZZ_SECONDS:-30}"
finish_step

say "all passed; time per step:"
printf '  %s\n' "${durations[@]}"
