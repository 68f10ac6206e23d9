#!/usr/bin/env bash
# Installs what Zeus needs on Debian 12, from Debian's own packages only.
# Safe to run again: it installs only what is missing.
#
#   scripts/setup.sh          everything README command (2) builds and tests with
#   scripts/setup.sh --demo   only what README command (1) builds: the CLI and
#                             the simulator (scripts/run-demo.sh)
set -euo pipefail

# The CLI (with zeusd's client, the exporter and the batch-size optimizer's
# server, which links SOCI and libpq) and the GPU simulator.
DEMO_PACKAGES=(
  build-essential cmake ninja-build
  libfmt-dev nlohmann-json3-dev libcli11-dev
  libboost-dev libcurl4-openssl-dev libssl-dev libtomlplusplus-dev
  libsoci-dev libsqlite3-dev libpq-dev
)
# The tests, benchmarks, packages and the Python package on top of those.
TEST_PACKAGES=(
  pkg-config git
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-venv python3-dev
  clang libclang-rt-14-dev
  openmpi-bin libopenmpi-dev
  # Real servers the metrics tests start on loopback ports (docs/metrics.md),
  # and the node exporter the metrics benchmark compares against.
  prometheus prometheus-pushgateway prometheus-node-exporter
  # The servers the batch-size optimizer's database tests start.
  postgresql sqlite3
  # Faster rebuilds, and the install tests of the wheel, the .deb packages and
  # the images: clean Debian roots (mmdebstrap), OCI images built without a
  # container runtime (buildah), package checks, systemd-analyze for the units.
  ccache mmdebstrap buildah lintian dpkg-dev fakeroot patchelf systemd curl file
  # The kubelet's PodResources v1 API (gRPC) that maps GPUs to pods
  # (docs/attribution.md), and the fake kubelet its tests serve.
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  # A real single-node Slurm the SPANK plugin's tests start (docs/slurm.md).
  slurmctld slurmd slurm-client munge libslurm-dev
  # The registry the image test pushes to and pulls from (tests/packaging/registry_test.sh).
  docker-registry
  # A wall clock past 2262 for the measurement commands' times (tests/cli/measure_commands_test.cpp).
  faketime
  # The layout check of changed lines (scripts/check-format.sh).
  clang-format
  # pyright (the Python stubs test, scripts/setup-python.sh) runs on node.
  nodejs
  # The documentation site opened in a real browser (scripts/check-docs-browser.py).
  chromium
)

case "${1:-}" in
  "") PACKAGES=("${DEMO_PACKAGES[@]}" "${TEST_PACKAGES[@]}") ;;
  --demo) PACKAGES=("${DEMO_PACKAGES[@]}") ;;
  *) echo "setup: unknown option '$1' (use --demo for README command (1)'s packages only, or nothing for all)" >&2; exit 2 ;;
esac

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
