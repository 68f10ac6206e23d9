#!/usr/bin/env bash
# Prints the Kubernetes manifests of packaging/kubernetes/ with their images
# taken from one registry prefix, ready for `kubectl apply -f -`:
#
#   scripts/render-manifests.sh --image-prefix REGISTRY/PREFIX [--tag VERSION] | kubectl apply -f -
#
# The manifests name their images zeus-native/NAME:VERSION; each becomes
# REGISTRY/PREFIX/NAME:VERSION (or :TAG with --tag), where
# `scripts/build-images.sh --push REGISTRY/PREFIX` put them. With kubectl's
# kustomize, packaging/kubernetes/kustomization.yaml's `images:` is the same
# one place (docs/deploy.md).
set -euo pipefail
cd "$(dirname "$0")/.."

prefix="" tag=""
while [ $# -gt 0 ]; do
  case "$1" in
    --image-prefix) prefix="${2:?--image-prefix needs REGISTRY/PREFIX}"; shift ;;
    --tag) tag="${2:?--tag needs a version}"; shift ;;
    *) echo "render-manifests.sh: unknown option '$1' (use --image-prefix REGISTRY/PREFIX, --tag VERSION)" >&2; exit 2 ;;
  esac
  shift
done
[ -n "$prefix" ] || { echo "render-manifests.sh: --image-prefix REGISTRY/PREFIX is required (e.g. registry.example.com/zeus-native)" >&2; exit 2; }
case "$prefix" in
  *[[:space:]\|\&\\]*) echo "render-manifests.sh: --image-prefix '$prefix' is not an image reference" >&2; exit 2 ;;
esac
prefix="${prefix%/}"
version_pattern='[^[:space:]"]*'
replacement="${tag:+:$tag}"
first=1
for manifest in packaging/kubernetes/[0-9a-z]*.yaml; do
  [ "$(basename "$manifest")" != kustomization.yaml ] || continue
  [ "$first" = 1 ] || echo "---"
  first=0
  if [ -n "$tag" ]; then
    sed -E "s|^([[:space:]]*image:[[:space:]]*)zeus-native/([a-z-]+):$version_pattern|\\1$prefix/\\2$replacement|" "$manifest"
  else
    sed -E "s|^([[:space:]]*image:[[:space:]]*)zeus-native/|\\1$prefix/|" "$manifest"
  fi
done
