#!/usr/bin/env bash
# README command (1): set up, build, and run the main job: measure the energy
# of a demo workload on every GPU (on the simulator when there is no GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
# Only the packages the demo's targets need (no test frameworks, servers,
# clang or image tools: those are README command (2)'s).
scripts/setup.sh --demo
# Only what the demo runs: the CLI, the simulator's NVML and its workload
# program, configured without the tests and benchmarks. The flags are CI's
# (-Werror, line tables only), so README command (2) reuses these objects.
scripts/build.sh --werror --ci --no-tests --target zeus_cli --target zeus_sim_nvml --target zeus-sim
exec build/bin/zeus demo "$@"
