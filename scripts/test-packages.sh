#!/usr/bin/env bash
# The deployment tests (docs/deploy.md), in README command (2): builds the
# Debian packages from the build tree, installs them into a clean Debian 12
# root and tries them there, validates the Kubernetes manifests, builds the
# container images and runs each one. Needs root; the clean root is cached.
#
#   scripts/test-packages.sh              the tests
#   scripts/test-packages.sh --prefetch   only makes the clean roots they start
#                                         from (CI runs it while the C++ tree compiles)
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  "") ;;
  --prefetch)
    # The roots of tests/packaging/install_test.sh and of scripts/build-images.sh's base image.
    scripts/debian-root.sh bookworm systemd >/dev/null
    scripts/debian-root.sh bookworm >/dev/null
    echo "test-packages: prefetched the clean Debian 12 roots"
    exit 0 ;;
  *) echo "test-packages: unknown option '$1' (use --prefetch, or nothing)" >&2; exit 2 ;;
esac
started=$(date +%s)
scripts/build-packages.sh
tests/packaging/install_test.sh
command="$(tests/packaging/kubernetes_test.sh | tail -1)"
# Builds the images, pushes them to a registry on loopback, pulls them back
# into an empty storage and runs them (tests/packaging/images_test.sh).
tests/packaging/registry_test.sh "$command"
echo "test-packages: OK in $(( $(date +%s) - started )) s"
