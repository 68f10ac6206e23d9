#!/usr/bin/env bash
# Installs what Zeus needs to build and test on Debian 12, from Debian's own
# packages only. Safe to run again: it installs only what is missing.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libfmt-dev nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-venv python3-dev
  libboost-dev libcurl4-openssl-dev libssl-dev libtomlplusplus-dev
  clang libclang-rt-14-dev
  openmpi-bin libopenmpi-dev
  # Real servers the metrics tests start on loopback ports (docs/metrics.md),
  # and the node exporter the metrics benchmark compares against.
  prometheus prometheus-pushgateway prometheus-node-exporter
  # The batch-size optimizer's database layer (SOCI) and the servers its tests start.
  libsoci-dev libsqlite3-dev libpq-dev postgresql sqlite3
  # Faster rebuilds, and the install tests of the wheel, the .deb packages and
  # the images: clean Debian roots (mmdebstrap), OCI images built without a
  # container runtime (buildah), package checks, systemd-analyze for the units.
  ccache mmdebstrap buildah lintian dpkg-dev fakeroot patchelf systemd curl file
  # The layout check of changed lines (scripts/check-format.sh).
  clang-format
  # pyright (the Python stubs test, scripts/setup-python.sh) runs on node.
  nodejs
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all build dependencies are installed"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
  else
    echo "setup: missing packages: ${missing[*]}" >&2
    echo "setup: run this script as root (or install sudo) so it can install them" >&2
    exit 1
  fi
fi

echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
