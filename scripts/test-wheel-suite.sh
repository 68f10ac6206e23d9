#!/usr/bin/env bash
# Every test of python/tests/ against an installed release wheel, in a clean
# Debian 12 root (scripts/test-wheel.sh runs it):
#
#   scripts/test-wheel-suite.sh dist/zeus_native-*-cp311-cp311-*.whl
#   scripts/test-wheel-suite.sh --prefetch   only downloads the root and the
#                                            tests' packages (needs build/ and
#                                            scripts/build-wheel.sh --prefetch)
#
# The root holds Debian's python3, what the tests drive from outside the
# package (build/bin/zeus and zeusd with their Debian runtime libraries, and
# prometheus-pushgateway), and the tests' own PyPI packages (the original zeus,
# pytest...: scripts/setup-python.sh's pinned lists, downloaded here once and
# installed inside with --no-index). zeus_native comes only from the wheel:
# the sources of python/zeus_native are not copied in. A skipped test fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "test-wheel-suite: $*" >&2; exit 1; }
prefetch=0
if [ "${1:-}" = "--prefetch" ] && [ $# -eq 1 ]; then
  prefetch=1
else
  [ $# -eq 1 ] && [ -f "$1" ] || die "usage: test-wheel-suite.sh WHEEL (a cp311 wheel from scripts/build-wheel.sh) or --prefetch"
  wheel="$1"
fi
build="${ZEUS_BUILD_DIR:-build}"  # where the CLI and zeusd were built (scripts/build.sh)
for program in "$build/bin/zeus" "$build/bin/zeusd"; do
  [ -x "$program" ] || die "$program is not built (scripts/build.sh --werror --ci --target zeus_cli --target zeusd)"
done
pip_python=build-wheel/venv-audit/bin/python
[ -x "$pip_python" ] || die "no $pip_python (scripts/build-wheel.sh makes it)"

# The Debian packages of the shared libraries the CLI and zeusd load from the system.
packages=()
while read -r lib; do
  owner="$(dpkg -S "$lib" 2>/dev/null || dpkg -S "/usr$lib" 2>/dev/null || dpkg -S "${lib#/usr}" 2>/dev/null)" ||
    die "no Debian package owns $lib (needed by build/bin/zeus or zeusd)"
  packages+=("${owner%%:*}")
done < <(ldd "$build/bin/zeus" "$build/bin/zeusd" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' |
         grep -v "^$(cd "$build" && pwd)/" | sort -u)

# The tests' PyPI packages, pinned by scripts/setup-python.sh (one list, read from there).
# Only the two array assignments are read (each ends at the first line ending in ')').
lists="$(awk '/^(REQUIREMENTS|FRAMEWORKS)=\(/ {on = 1} on {print} on && /\)$/ {on = 0}' scripts/setup-python.sh)"
grep -qv '^\(REQUIREMENTS\|FRAMEWORKS\)=(\|^ \|^$' <<<"$lists" && die "cannot read the pinned lists of scripts/setup-python.sh"
eval "$lists"
deps=build-wheel/testdeps
mkdir -p "$deps/frameworks"
stamp="${REQUIREMENTS[*]} ${FRAMEWORKS[*]}"
if [ ! -f "$deps/.downloaded" ] || [ "$(cat "$deps/.downloaded")" != "$stamp" ]; then
  rm -f "$deps"/*.whl "$deps"/frameworks/*.whl
  "$pip_python" -m pip download --quiet --disable-pip-version-check --only-binary=:all: -d "$deps" "${REQUIREMENTS[@]}"
  "$pip_python" -m pip download --quiet --disable-pip-version-check --only-binary=:all: --no-deps \
    -d "$deps/frameworks" "${FRAMEWORKS[@]}"
  echo "$stamp" > "$deps/.downloaded"
fi

# nodejs: pyright (python/tests/test_typing.py) runs on it.
tarball="$(scripts/debian-root.sh bookworm python3 python3-venv prometheus-pushgateway nodejs "${packages[@]}")"
if [ "$prefetch" = 1 ]; then
  echo "test-wheel-suite: prefetched the root and the tests' packages"
  exit 0
fi
root="$PWD/build-wheel/roots/suite"
rm -rf "$root"
scripts/debian-root.sh --enter "$tarball" "$root" >/dev/null
mkdir -p "$root/src/python" "$root/wheels"
cp -r python/tests "$root/src/python/"
cp -r data "$root/src/"
mkdir -p "$root/src/docs" && cp docs/python.md "$root/src/docs/"  # the API walk's documented exceptions
mkdir -p "$root/src/build/bin" "$root/src/build/lib"
cp -a "$build/bin/zeus" "$build/bin/zeusd" "$root/src/build/bin/"
cp -a "$build"/lib/libzeus.so* "$build/lib/zeus-sim" "$root/src/build/lib/"
cp "$wheel" "$root/wheels/"
cp -r "$deps" "$root/wheels/deps"

# Every test but those that run real PyTorch or the real trackers
# (test_frameworks.py, test_distributed.py, test_original_examples.py,
# test_trackers.py): their cached environments (5.6 GB with PyTorch's) are
# not copied into the root; they run against this same cp311 wheel in the
# host's .venv (scripts/run-tests.sh installs the wheel there).
venv=/opt/suite
scripts/in-root.sh "$root" /usr/bin/python3 -m venv "$venv"
# The globs are expanded here, on the root's copy, as paths inside it.
inside() { (cd "$root" && for f in "${1#/}"/*.whl; do echo "/$f"; done); }
mapfile -t test_wheels < <(inside /wheels/deps)
mapfile -t framework_wheels < <(inside /wheels/deps/frameworks)
scripts/in-root.sh "$root" "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-index --no-deps \
  "${test_wheels[@]}" "/wheels/$(basename "$wheel")"
scripts/in-root.sh "$root" "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-index --no-deps \
  --target "$venv/frameworks" "${framework_wheels[@]}"
echo "${FRAMEWORKS[*]}" > "$root$venv/frameworks/.installed"

report="$root/tmp-report.txt"
set +e
scripts/in-root.sh "$root" /bin/sh -c "cd /src && $venv/bin/python -c 'import zeus_native, sys; \
assert zeus_native.__file__.startswith(\"$venv/\"), zeus_native.__file__' && \
timeout 900 $venv/bin/python -m pytest -q -rs -p no:cacheprovider --ignore=python/tests/test_frameworks.py \
--ignore=python/tests/test_distributed.py --ignore=python/tests/test_original_examples.py \
--ignore=python/tests/test_trackers.py python/tests" \
  | tee "$report"
status=${PIPESTATUS[0]}
set -e
[ "$status" -eq 0 ] || die "python/tests failed against the installed wheel (exit $status)"
if grep -q "skipped" "$report"; then
  die "some of python/tests were skipped in the root (see above): every test must run against the wheel"
fi
echo "test-wheel-suite: every test of python/tests passed against $(basename "$wheel")"
