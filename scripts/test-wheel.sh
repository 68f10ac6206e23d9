#!/usr/bin/env bash
# Tests of the release wheels (scripts/build-wheel.sh; docs/python.md), for
# README command (2):
#
#   scripts/test-wheel.sh [--no-suite]
#   scripts/test-wheel.sh --prefetch   only makes the clean roots of part 2
#                                      (CI runs it while the C++ tree compiles)
#
# 1. Every wheel: dependencies only glibc's and libgcc_s, glibc symbols up to
#    2.31, no libstdc++ versions, under 5 MB, the simulator inside
#    (scripts/wheel-check.py, which first shows it rejects a bad wheel), and
#    `auditwheel show` agreeing on manylinux_2_31 or older.
#    The sdist is unpacked and configured (CMake) as `pip install` would.
# 2. Installed with `pip install --no-index` into clean Debian roots (no
#    compiler, no -dev package, no libcurl): the drop-in checks of
#    tests/wheel/dropin_checks.py on the simulator, import time included:
#      Debian 11 (glibc 2.31) + its Python 3.9 with the cp39 wheel,
#      Debian 12 + its Python 3.11 with the cp311 wheel,
#      Debian 12 + CPython 3.12 and 3.13 (pyenv's, copied in) with the abi3 wheel.
# 3. Every test of python/tests/ against the wheel installed in a clean Debian
#    12 root, with what those tests drive from outside the package: the CLI and
#    zeusd of build/ (and their Debian runtime libraries), Prometheus'
#    Pushgateway, the original zeus and pytest (downloaded here, installed
#    inside with --no-index). --no-suite skips this part.
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "test-wheel: $*" >&2; exit 1; }
suite=1
prefetch=0
case "${1:-}" in
  "") ;;
  --no-suite) suite=0 ;;
  --prefetch) prefetch=1 ;;
  *) die "unknown option '$1' (use --no-suite, --prefetch, or nothing)" ;;
esac

# The clean roots of part 2: Debian 11 and Debian 12 with their Python.
DEBIAN11=(bullseye python3 python3-venv)
DEBIAN12=(bookworm python3 python3-venv)
if [ "$prefetch" = 1 ]; then
  scripts/debian-root.sh "${DEBIAN11[@]}" >/dev/null
  scripts/debian-root.sh "${DEBIAN12[@]}" >/dev/null
  echo "test-wheel: prefetched the clean Debian 11 and 12 roots"
  exit 0
fi

scripts/build-wheel.sh
audit=build-wheel/venv-audit/bin/python
roots="$PWD/build-wheel/roots"
mkdir -p "$roots"
begin=$SECONDS

echo "== wheel checks: dependencies, symbol versions, size (and that the checks can fail)"
"$audit" scripts/wheel-check.py --self-test
"$audit" scripts/wheel-check.py dist/zeus_native-*.whl
for wheel in dist/zeus_native-*.whl; do
  shown="$("$audit" -m auditwheel show "$wheel" | tr -s '\n ' '  ')"  # its paragraphs are wrapped
  minor="$(grep -o 'platform tag: "manylinux_2_[0-9]*_x86_64"' <<<"$shown" | head -1 | sed 's/.*manylinux_2_\([0-9]*\)_.*/\1/')"
  [ -n "$minor" ] && [ "$minor" -le 31 ] || die "auditwheel does not place $wheel at manylinux_2_31 or older: $shown"
  echo "$(basename "$wheel"): manylinux_2_$minor, $(stat -c %s "$wheel") bytes"
done

echo "== the sdist holds sources only (no build trees, no wheels, no venv)"
sdist="$(ls dist/zeus_native-*.tar.gz)"
stray="$(tar -tzf "$sdist" | awk -F/ '$2 ~ /^(build|build-.*|dist|\.venv)$/ || /__pycache__|\.log$/' | head -5)"
[ -z "$stray" ] || die "the sdist carries build outputs (pyproject.toml's sdist.exclude): $stray"
sdist_bytes="$(stat -c %s "$sdist")"
[ "$sdist_bytes" -le $((10 * 1024 * 1024)) ] || die "the sdist is $sdist_bytes bytes (over 10 MiB): something that is not a source went in"
echo "$(basename "$sdist"): $sdist_bytes bytes"

echo "== the sdist configures (CMake) with the documented build dependencies"
sdist_dir="$(mktemp -d)"
tar -xzf dist/zeus_native-*.tar.gz -C "$sdist_dir"
sdist_python=build-wheel/venv-sdist/bin/python
cmake -S "$sdist_dir"/zeus_native-* -B "$sdist_dir/build" -G Ninja -DZEUS_BUILD_PYTHON=ON -DZEUS_BUILD_TESTS=OFF \
  -DZEUS_BUILD_BENCHMARKS=OFF -DPython_EXECUTABLE="$sdist_python" \
  -Dnanobind_DIR="$("$sdist_python" -m nanobind --cmake_dir)" >/dev/null ||
  die "the sdist does not configure: a source file is missing from pyproject.toml's sdist.include?"
rm -rf "$sdist_dir"

# A fresh copy of a cached clean root (SUITE PACKAGE...), unpacked under build-wheel/roots/NAME.
fresh_root() {
  local name="$1"; shift
  local tarball
  tarball="$(scripts/debian-root.sh "$@")"
  rm -rf "${roots:?}/$name"
  scripts/debian-root.sh --enter "$tarball" "$roots/$name" >/dev/null
  echo "$roots/$name"
}

# Installs WHEEL with pip --no-index into a new venv of PYTHON inside ROOT and
# runs the drop-in checks there (extra arguments go to them).
dropin() {
  local root="$1" python="$2" wheel="$3"; shift 3
  local venv="/opt/venv-$(basename "$python")"
  mkdir -p "$root/wheels"
  cp "$wheel" tests/wheel/dropin_checks.py "$root/wheels/"
  echo "== $(basename "$wheel") in $(basename "$root") with $python"
  scripts/in-root.sh "$root" "$python" -m venv "$venv"
  scripts/in-root.sh "$root" "$venv/bin/python" -m pip install --quiet --no-index --disable-pip-version-check \
    "/wheels/$(basename "$wheel")"
  scripts/in-root.sh "$root" "$venv/bin/python" /wheels/dropin_checks.py "$@"
}

# The wheel with TAGS, or nothing (and a message) where build-wheel.sh had no interpreter for it.
wheel_for() {
  local found
  found="$(ls dist/zeus_native-*-"$1"-*.whl 2>/dev/null | head -1)"
  [ -n "$found" ] || echo "test-wheel: SKIPPED the $1 wheel's tests: scripts/build-wheel.sh had no interpreter for it" >&2
  echo "$found"
}

wheel="$(wheel_for cp39-cp39)"
if [ -n "$wheel" ]; then
  root="$(fresh_root debian11 "${DEBIAN11[@]}")"
  dropin "$root" /usr/bin/python3 "$wheel" --expect-no-libcurl
fi

root="$(fresh_root debian12 "${DEBIAN12[@]}")"
wheel="$(wheel_for cp311-cp311)"
[ -n "$wheel" ] || die "no cp311 wheel: Debian 12's python3.11 should always be there"
dropin "$root" /usr/bin/python3 "$wheel" --expect-no-libcurl
# The abi3 wheel on newer interpreters: pyenv's builds need only glibc and libffi, which the root has.
for version in 3.12 3.13; do
  interpreter="$(ls -d /root/.pyenv/versions/"$version".* 2>/dev/null | tail -1)"
  if [ -z "$interpreter" ]; then
    echo "test-wheel: no CPython $version in /root/.pyenv/versions: the abi3 wheel is not tried on it" >&2
    continue
  fi
  mkdir -p "$root$(dirname "$interpreter")"
  tar -C / --exclude='*/test' --exclude='*/tests' --exclude='*/idlelib' --exclude='*/tkinter' -cf - \
    "${interpreter#/}" | tar -C "$root" -xf -
  wheel="$(wheel_for cp312-abi3)"
  [ -z "$wheel" ] || dropin "$root" "$interpreter/bin/python$version" "$wheel" --expect-no-libcurl
done

if [ "$suite" = 1 ]; then
  scripts/test-wheel-suite.sh "$(wheel_for cp311-cp311)"
fi
echo "test-wheel: all passed in $(( SECONDS - begin )) s after the build"
