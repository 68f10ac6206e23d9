#!/usr/bin/env bash
# The deployment tests (docs/deploy.md), in README command (2): builds the
# Debian packages from the build tree, installs them into a clean Debian 12
# root and tries them there, validates the Kubernetes manifests, builds the
# container images and runs each one. Needs root; the clean root is cached.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
scripts/build-packages.sh
tests/packaging/install_test.sh
command="$(tests/packaging/kubernetes_test.sh | tail -1)"
scripts/build-images.sh
version="$(dpkg-deb -f "$(ls dist/zeus_*.deb | head -1)" Version)"
tests/packaging/images_test.sh "$version" "$command"
echo "test-packages: OK in $(( $(date +%s) - started )) s"
