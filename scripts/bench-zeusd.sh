#!/usr/bin/env bash
# zeusd load benchmark: builds zeusd, the GPU simulator and bench/zeusd_load
# in Release (build-load/), then runs zeusd_load RUNS times (default 3). Each
# run starts a real zeusd on a temporary Unix socket and on a loopback TCP
# port, over the simulator and a generated powercap tree, and drives
# GET /cpu/get_cumulative_energy?cpu=true&dram=true and GET /gpu/get_power
# with 32 keep-alive connections, 200,000 requests per route (time-capped).
# Both daemons see the simulator's two A100s with no simulated driver latency
# (zeusd_load --driver-latency-us 0, its default): the daemons' own cost.
# Target (issue 5): >= 20,000 req/s, p99 < 5 ms, no errors; zeusd_load --check
# makes a miss the exit status.
#
# Side by side with the original (issue 17): with ORIGINAL_ZEUSD (or
# --original PATH as the first argument) naming the Rust daemon of crate
# zeusd 0.5.0 (`cargo install zeusd --version 0.5.0 --root DIR` puts it in
# DIR/bin/zeusd), one zeusd_load run does RUNS rounds of ours then the
# original on each transport (A B A B), also on the GPU control route
# (POST /gpu/set_persistence_mode to the value the GPU has), and ends with a
# table of medians. Without it (or when the path does not exist) the
# comparison is skipped with a message.
#
# Usage: scripts/bench-zeusd.sh [--original PATH] [zeusd_load options...]
#   e.g. scripts/bench-zeusd.sh --num-workers 2 --requests 100000 --check
#        ORIGINAL_ZEUSD=/opt/rust-zeusd/bin/zeusd RUNS=5 scripts/bench-zeusd.sh
# Environment: RUNS (default 3), JOBS (build parallelism, default 2), BUILD_DIR (default build-load),
#              ORIGINAL_ZEUSD (the original daemon; unset: ours only).
set -euo pipefail
cd "$(dirname "$0")/.."

dir="${BUILD_DIR:-build-load}"
generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
cmake -S . -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DZEUS_BUILD_TESTS=OFF -DZEUS_BUILD_BENCHMARKS=ON >/dev/null
cmake --build "$dir" --target zeusd_load -j "${JOBS:-2}"

original="${ORIGINAL_ZEUSD:-}"
if [[ "${1:-}" == "--original" ]]; then
  original="${2:?--original needs the path of the original zeusd}"
  shift 2
fi

echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(lscpu | sed -n 's/^Model name:[[:space:]]*//p'), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
status=0
if [[ -n "$original" ]]; then
  if [[ -x "$original" ]]; then
    echo "# side by side with the original: $original ($("$original" --version 2>/dev/null || echo 'version unknown'))"
    "$dir/bin/zeusd_load" --zeusd "$dir/bin/zeusd" --original "$original" --rounds "${RUNS:-3}" \
      --routes cpu_energy,gpu_power,gpu_control "$@" || status=$?
    echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
    exit "$status"
  fi
  echo "# no original zeusd at $original: skipping the side-by-side comparison (install it with" \
    "cargo install zeusd --version 0.5.0 --root DIR and set ORIGINAL_ZEUSD=DIR/bin/zeusd)"
fi

for run in $(seq 1 "${RUNS:-3}"); do
  echo "# run $run"
  "$dir/bin/zeusd_load" --zeusd "$dir/bin/zeusd" "$@" || status=$?
done
exit "$status"
