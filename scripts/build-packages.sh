#!/usr/bin/env bash
# Builds the Debian packages (Debian 12) into dist/: zeus, zeusd,
# zeus-exporter, libzeus, libzeus-dev and zeus-native-slurm (docs/deploy.md).
#
#   scripts/build-packages.sh [--build-dir DIR]
#
# Packages come from an existing build tree (default build/, the CI's
# `scripts/build.sh --werror --ci` tree: RelWithDebInfo -O2 -g1), stripped by
# CPack: only the packaged targets are built if they are missing, nothing is
# compiled a third time. Then lintian must report no error.
set -euo pipefail
cd "$(dirname "$0")/.."

dir=build
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) dir="$2"; shift ;;
    *) echo "build-packages.sh: unknown option '$1' (use --build-dir DIR)" >&2; exit 2 ;;
  esac
  shift
done
for tool in cpack dpkg-shlibdeps dpkg-deb fakeroot lintian; do
  command -v "$tool" >/dev/null 2>&1 || { echo "build-packages.sh: $tool is missing (scripts/setup.sh installs it)" >&2; exit 2; }
done

# The packaged targets (a no-op where the full build already ran). Configuring
# again also writes the tree's CPackConfig.cmake if it predates packaging.
targets=(zeus_lib zeus_cli zeusd zeus-sim zeus_sim_nvml)
# The Slurm SPANK plugin is built (and packaged) where Slurm's spank.h is.
[ -f /usr/include/slurm/spank.h ] && targets+=(zeus_slurm)
build_args=()
for t in "${targets[@]}"; do build_args+=(--target "$t"); done
if [ "$dir" = build ]; then
  scripts/build.sh --werror --ci "${build_args[@]}"
else
  scripts/build.sh --werror --ci --build-dir "$dir" "${build_args[@]}"
fi

rm -rf dist "$dir/_packages"
mkdir -p dist
cpack --config "$dir/CPackConfig.cmake" -B "$dir/_packages" >"$dir/_packages.log" 2>&1 \
  || { cat "$dir/_packages.log" >&2; echo "build-packages.sh: cpack failed" >&2; exit 1; }
mv "$dir"/_packages/*.deb dist/
rm -rf "$dir/_packages"

# lintian: no errors (warnings are listed). Tags that do not apply to a
# package built outside Debian's archive are suppressed in packaging/debian/lintian.
lintian_out="$(lintian --profile debian --suppress-tags-from-file packaging/debian/lintian-suppressions dist/*.deb 2>&1 || true)"
[ -n "$lintian_out" ] && echo "$lintian_out"
if echo "$lintian_out" | grep -q '^E: '; then
  echo "build-packages.sh: lintian reported errors" >&2
  exit 1
fi
ls -l dist/*.deb
total=$(du -cb dist/*.deb | tail -1 | cut -f1)
echo "build-packages.sh: $(ls dist/*.deb | wc -l) packages, $total bytes in all"
