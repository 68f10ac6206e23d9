#!/usr/bin/env bash
# README command (1): set up, build, and run the main job: measure the energy
# of a demo workload on every GPU (on the simulator when there is no GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
exec build/bin/zeus demo "$@"
