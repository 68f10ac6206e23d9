#!/usr/bin/env bash
# A clean Debian root for install tests: the wheel, the .deb packages and the
# container images are tried where nothing from the build machine is present.
#
#   scripts/debian-root.sh SUITE [PACKAGE...]      prints the path of a cached tarball
#   scripts/debian-root.sh --enter TARBALL DIR     unpacks it into DIR (which must not exist)
#
# SUITE is bullseye (Debian 11) or bookworm (Debian 12). The tarball is made by
# mmdebstrap (minbase variant, Debian's archive only, PACKAGEs added) once and
# kept in ${ZEUS_CACHE_DIR:-~/.cache/zeus-native}/roots, keyed by suite and
# packages, so CI reruns skip the ~2 minutes it takes. A tarball older than
# ZEUS_ROOT_MAX_AGE_DAYS (default 14) is made again so security updates arrive.
#
# Run commands inside an unpacked root with scripts/in-root.sh.
set -euo pipefail

die() { echo "debian-root: $*" >&2; exit 2; }

if [ "${1:-}" = "--enter" ]; then
  [ $# -eq 3 ] || die "usage: debian-root.sh --enter TARBALL DIR"
  tarball="$2" dir="$3"
  [ -f "$tarball" ] || die "no tarball at '$tarball' (make one with: scripts/debian-root.sh SUITE)"
  [ ! -e "$dir" ] || die "'$dir' already exists; give a new directory"
  mkdir -p "$dir"
  tar -xf "$tarball" -C "$dir"
  echo "$dir"
  exit 0
fi

[ $# -ge 1 ] || die "usage: debian-root.sh SUITE [PACKAGE...] (SUITE: bullseye or bookworm)"
suite="$1"; shift
case "$suite" in
  bullseye|bookworm) ;;
  *) die "unknown suite '$suite' (use bullseye for Debian 11 or bookworm for Debian 12)" ;;
esac
command -v mmdebstrap >/dev/null 2>&1 || die "mmdebstrap is missing (scripts/setup.sh installs it)"

cache="${ZEUS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/zeus-native}/roots"
mkdir -p "$cache"
packages="$(printf '%s\n' "$@" | sort -u | paste -sd, -)"
key="$(printf '%s|%s' "$suite" "$packages" | sha256sum | cut -c1-12)"
tarball="$cache/$suite-$key.tar"
max_age="${ZEUS_ROOT_MAX_AGE_DAYS:-14}"

if [ -f "$tarball" ] && [ -z "$(find "$tarball" -mtime +"$max_age" 2>/dev/null)" ]; then
  echo "$tarball"
  exit 0
fi

include=()
[ -n "$packages" ] && include=(--include="$packages")
# One builder at a time per tarball: parallel test scripts share the cache.
exec 9>"$tarball.lock"
flock 9
if [ ! -f "$tarball" ] || [ -n "$(find "$tarball" -mtime +"$max_age" 2>/dev/null)" ]; then
  echo "debian-root: making a $suite root${packages:+ with $packages} (about 2 minutes, kept in $cache)" >&2
  mmdebstrap --quiet --format=tar --variant=minbase "${include[@]}" "$suite" "$tarball.tmp" >&2
  mv "$tarball.tmp" "$tarball"
fi
echo "$tarball"
