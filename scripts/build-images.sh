#!/usr/bin/env bash
# Builds the OCI images of zeusd, zeus exporter and zeus bso-server from
# packaging/containers/*.Containerfile with `buildah bud --isolation=chroot`,
# installing the Debian packages in dist/ (scripts/build-packages.sh).
#
#   scripts/build-images.sh [--base IMAGE] [--push REGISTRY/PREFIX [--tls-verify=false]]
#
# --base: the BASE build argument. Default: an image imported from the clean
# Debian 12 root that scripts/debian-root.sh makes (mmdebstrap minbase, Debian's
# archive only), so that nothing is pulled from a registry; the published
# images use the Containerfiles' default, debian:12-slim.
# Images: localhost/zeus-native/{zeusd,zeus-exporter,zeus-bso-server}:VERSION.
# --push: then pushes each to REGISTRY/PREFIX/NAME:VERSION (e.g.
# registry.example.com/zeus-native), where the Kubernetes manifests rendered by
# scripts/render-manifests.sh --image-prefix REGISTRY/PREFIX pull them from.
# --tls-verify=false: for a registry served over plain HTTP (a test's, on loopback).
set -euo pipefail
cd "$(dirname "$0")/.."

base="" push="" tls_verify=true
while [ $# -gt 0 ]; do
  case "$1" in
    --base) base="${2:?--base needs an image}"; shift ;;
    --push) push="${2:?--push needs REGISTRY/PREFIX, e.g. registry.example.com/zeus-native}"; shift ;;
    --tls-verify=false) tls_verify=false ;;
    *) echo "build-images.sh: unknown option '$1' (use --base IMAGE, --push REGISTRY/PREFIX, --tls-verify=false)" >&2; exit 2 ;;
  esac
  shift
done
case "$push" in
  ""|*/*) ;;
  *) echo "build-images.sh: --push '$push' names no registry: give REGISTRY/PREFIX (e.g. registry.example.com/zeus-native)" >&2; exit 2 ;;
esac
command -v buildah >/dev/null 2>&1 || { echo "build-images.sh: buildah is missing (scripts/setup.sh installs it)" >&2; exit 2; }
ls dist/zeus_*.deb >/dev/null 2>&1 || scripts/build-packages.sh
version="$(dpkg-deb -f "$(ls dist/zeus_*.deb | head -1)" Version)"

if [ -z "$base" ]; then
  tarball="$(scripts/debian-root.sh bookworm)"
  base="localhost/zeus-native/debian-12-minbase:$(sha256sum "$tarball" | cut -c1-12)"
  if ! buildah inspect --type image "$base" >/dev/null 2>&1; then
    # As debian:12-slim: no documentation but the copyright files, and dpkg
    # told to keep it that way for what the Containerfiles install.
    rootfs="$(mktemp -d)"
    tar -xf "$tarball" -C "$rootfs" --exclude='./usr/share/man/*' --exclude='./usr/share/info/*' \
      --exclude='./usr/share/locale/*' --exclude='./usr/share/doc/*'
    tar -xf "$tarball" -C "$rootfs" --wildcards './usr/share/doc/*/copyright' 2>/dev/null || true
    cat >"$rootfs/etc/dpkg/dpkg.cfg.d/zeus-slim" <<'CFG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
CFG
    ctr="$(buildah from scratch)"
    buildah add --quiet "$ctr" "$rootfs" / >/dev/null
    rm -rf "$rootfs"
    buildah config --cmd /bin/bash "$ctr"
    buildah commit --quiet --rm "$ctr" "$base" >/dev/null
  fi
  echo "build-images: base $base $(buildah images --format '{{.Size}}' "$base")"
fi

context="$(mktemp -d)"
trap 'rm -rf "$context"' EXIT
mkdir "$context/debs"
cp dist/libzeus_*.deb dist/zeus_*.deb dist/zeusd_*.deb "$context/debs/"
for name in zeusd zeus-exporter zeus-bso-server; do
  image="localhost/zeus-native/$name:$version"
  echo "== build-images: $image (BASE=$base)"
  # The previous build of this tag would stay behind, untagged, run after run.
  buildah rmi "$image" >/dev/null 2>&1 || true
  buildah bud --quiet --isolation=chroot --layers=false --build-arg "BASE=$base" \
    -f "packaging/containers/$name.Containerfile" -t "$image" "$context" >/dev/null
  echo "build-images: $image $(buildah images --format '{{.Size}}' "$image")"
done
if [ -n "$push" ]; then
  for name in zeusd zeus-exporter zeus-bso-server; do
    target="${push%/}/$name:$version"
    buildah push --quiet --tls-verify="$tls_verify" "localhost/zeus-native/$name:$version" "docker://$target" >/dev/null
    echo "build-images: pushed $target"
  done
fi
