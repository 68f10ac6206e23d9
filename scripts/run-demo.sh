#!/usr/bin/env bash
# README command (1): set up, build, and run the main job: measure the energy
# of a demo workload on every GPU (on the simulator when there is no GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# Only what the demo runs: the CLI, the simulator's NVML and its workload
# program (the tests and benchmarks are README command (2)'s).
scripts/build.sh --target zeus_cli --target zeus_sim_nvml --target zeus-sim
exec build/bin/zeus demo "$@"
