#!/usr/bin/env bash
# Installs the build tree into a scratch prefix, builds a separate project
# against it with find_package(zeus), and runs it on the installed simulator.
set -euo pipefail
build_dir="$1"
source_dir="$(cd "$(dirname "$0")" && pwd)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

cmake --install "$build_dir" --prefix "$scratch/prefix" >/dev/null
test -x "$scratch/prefix/bin/zeus"
test -x "$scratch/prefix/bin/zeus-sim"
# The units name the programs and defaults files under the prefix they were installed to.
grep -qx "ExecStart=$scratch/prefix/sbin/zeusd serve \$ZEUSD_ARGS" "$scratch/prefix/lib/systemd/system/zeusd.service"
grep -qx "ExecStart=$scratch/prefix/bin/zeus exporter \$ZEUS_EXPORTER_ARGS" "$scratch/prefix/lib/systemd/system/zeus-exporter.service"
grep -qx "EnvironmentFile=-$scratch/prefix/etc/default/zeusd" "$scratch/prefix/lib/systemd/system/zeusd.service"
test -f "$scratch/prefix/etc/default/zeusd"
grep -q "cxx_std_20" "$scratch/prefix/lib/cmake/zeus/"*.cmake || grep -rq "cxx_std_20" "$scratch/prefix/lib"*/cmake/zeus/
cmake -S "$source_dir/consumer" -B "$scratch/consumer" -DCMAKE_PREFIX_PATH="$scratch/prefix" >/dev/null
cmake --build "$scratch/consumer" >/dev/null
# The installed zeus finds the installed simulator next to libzeus.
env -u CUDA_VISIBLE_DEVICES -u ZEUS_SIM_CONFIG -u ZEUS_SIM_LIBRARY ZEUS_SIMULATE=1 \
  ZEUS_SIM_STATE="$scratch/state" LD_LIBRARY_PATH="$scratch/prefix/lib" "$scratch/consumer/consumer" | tee "$scratch/out"
grep -q "GPU 1 NVIDIA A100-SXM4-40GB" "$scratch/out"
env -u CUDA_VISIBLE_DEVICES -u ZEUS_SIM_CONFIG ZEUS_SIM_STATE="$scratch/state" \
  "$scratch/prefix/bin/zeus" show-env --simulate --format json | grep -q '"simulated": true'
echo "install test: OK"
