#!/usr/bin/env bash
# zeusd load benchmark: builds zeusd, the GPU simulator and bench/zeusd_load
# in Release (build-load/), then runs zeusd_load RUNS times (default 3). Each
# run starts a real zeusd on a temporary Unix socket and on a loopback TCP
# port, over the simulator and a generated powercap tree, and drives
# GET /cpu/get_cumulative_energy?cpu=true&dram=true and GET /gpu/get_power
# with 32 keep-alive connections, 200,000 requests per route (time-capped).
# Target (issue 5): >= 20,000 req/s, p99 < 5 ms, no errors; zeusd_load --check
# makes a miss the exit status.
#
# Usage: scripts/bench-zeusd.sh [zeusd_load options...]
#   e.g. scripts/bench-zeusd.sh --num-workers 2 --requests 100000 --check
# Environment: RUNS (default 3), JOBS (build parallelism, default 2), BUILD_DIR (default build-load).
set -euo pipefail
cd "$(dirname "$0")/.."

dir="${BUILD_DIR:-build-load}"
generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
cmake -S . -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DZEUS_BUILD_TESTS=OFF -DZEUS_BUILD_BENCHMARKS=ON >/dev/null
cmake --build "$dir" --target zeusd_load -j "${JOBS:-2}"

echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(lscpu | sed -n 's/^Model name:[[:space:]]*//p'), $(nproc) CPUs"
status=0
for run in $(seq 1 "${RUNS:-3}"); do
  echo "# run $run"
  "$dir/bin/zeusd_load" --zeusd "$dir/bin/zeusd" "$@" || status=$?
done
exit "$status"
