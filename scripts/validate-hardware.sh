#!/usr/bin/env bash
# Measures what a real NVIDIA GPU's driver does and records it in
# docs/hardware.md: NVML latency per call the monitors make, the energy
# counter's refresh period, counter energy against integrated power over 10
# windows of 1-10 s, and a power limit set and put back through the device
# layer and through zeusd (everything changed is restored). On a machine
# without a GPU it runs the same checks on the simulator, so that the script
# cannot rot, and writes build/hardware-simulated.md instead.
#
#   scripts/validate-hardware.sh [--quick] [--simulate] [--no-build] [--build-dir DIR] [--output FILE]
#
# --quick: fewer calls and 0.3-1 s windows (CI). --simulate: the simulator even
# where a GPU is present. --output: where the Markdown goes (default as above).
set -euo pipefail
cd "$(dirname "$0")/.."

quick=() simulate=0 build=1 dir=build output=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=(--quick) ;;
    --simulate) simulate=1 ;;
    --no-build) build=0 ;;
    --build-dir) dir="$2"; shift ;;
    --output) output="$2"; shift ;;
    *) echo "validate-hardware: unknown option '$1' (use --quick, --simulate, --no-build, --build-dir DIR, --output FILE)" >&2; exit 2 ;;
  esac
  shift
done

if [ "$simulate" = 0 ] && ! { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; }; then
  echo "validate-hardware: no NVIDIA GPU answers nvidia-smi -L; running on the simulator" >&2
  simulate=1
fi

if [ "$build" = 1 ]; then
  scripts/setup.sh >/dev/null
  scripts/build.sh --build-dir "$dir" --target zeus_hardware_check --target zeusd --target zeus_cli \
    --target zeus_sim_nvml --target zeus-sim
fi
for program in zeus_hardware_check zeusd zeus; do
  [ -x "$dir/bin/$program" ] || { echo "validate-hardware: $dir/bin/$program is missing (drop --no-build or build it)" >&2; exit 2; }
done

scratch="$(mktemp -d)"
load_pid=""
cleanup() {
  if [ -n "$load_pid" ]; then kill "$load_pid" 2>/dev/null || true; wait "$load_pid" 2>/dev/null || true; fi
  rm -rf "$scratch"
}
trap cleanup EXIT

seconds=90
[ ${#quick[@]} -gt 0 ] && seconds=15
if [ "$simulate" = 1 ]; then
  export ZEUS_SIMULATE=1 ZEUS_SIM_STATE="$scratch/sim.state"
  unset ZEUS_SIM_CONFIG
  # A steady load on every simulated GPU for the windows to measure.
  "$dir/bin/zeus-sim" burn --gpu all --seconds "$seconds" >/dev/null &
  load_pid=$!
  [ -n "$output" ] || output="$dir/hardware-simulated.md"
else
  # The demo's CUDA load keeps the GPU busy while the windows are measured.
  "$dir/bin/zeus" demo --seconds "$seconds" >/dev/null 2>&1 &
  load_pid=$!
  [ -n "$output" ] || output=docs/hardware.md
fi
sleep 2

"$dir/bin/zeus_hardware_check" "${quick[@]}" --zeusd "$dir/bin/zeusd" > "$scratch/report.json"

python3 - "$scratch/report.json" "$output" <<'EOF'
import datetime
import json
import sys

report = json.load(open(sys.argv[1]))
gpu, driver = report["gpu"], report["driver"]
kind = "simulated" if driver["simulated"] else "real"
lines = [
    f"## {gpu['name']} ({kind}), driver {driver['driver_version']}, "
    f"{datetime.date.today().isoformat()}",
    "",
    f"{gpu['count']} GPU(s) visible, GPU {gpu['index']} measured; NVML {driver['nvml_version']} from "
    f"`{driver['library']}`; {'quick run' if report['quick'] else 'full run'} of `scripts/validate-hardware.sh`.",
    "",
    "| NVML call | median µs | p90 µs | min µs | max µs | calls |",
    "|---|---|---|---|---|---|",
]
for call, d in sorted(report["call_latency_us"].items()):
    if "error" in d:
        lines.append(f"| {call} | {d['error']} | | | | |")
    else:
        lines.append(f"| {call} | {d['median']:.1f} | {d['p90']:.1f} | {d['min']:.1f} | {d['max']:.1f} | {d['n']} |")
refresh = report["energy_counter_refresh_ms"]
lines += ["", "Energy counter refresh: " + (refresh["error"] if "error" in refresh else
          f"median {refresh['median']:.1f} ms (range {refresh['min']:.1f}-{refresh['max']:.1f}, {refresh['n']} intervals)."),
          "", "| window s | counter J | integrated power J | counter / power |", "|---|---|---|---|"]
windows = report["counter_vs_integrated_power"]
if isinstance(windows, dict):
    lines.append(f"| {windows.get('error')} | | | |")
else:
    for w in windows:
        if "integrated_power_j" in w:
            lines.append(f"| {w['seconds']:g} | {w['counter_j']:.2f} | {w['integrated_power_j']:.2f} | {w['counter_over_power']:.4f} |")
        else:
            lines.append(f"| {w['seconds']:g} | {w['counter_j']:.2f} | {w.get('integrated_power_error')} | |")
modes = report["window_modes"]
lines += ["", "Window modes, the same windows measured by both (`WindowEdges`):", ""]
if "error" in modes:
    lines.append(f"error: {modes['error']}")
else:
    lines += ["| window s | synchronous J (bound) | sampled J (bound) | sampled - synchronous J |", "|---|---|---|---|"]
    for w in modes["windows"]:
        lines.append(f"| {w['seconds']:g} | {w['synchronous_j']:.3f} (±{w['synchronous_bound_j']:.3f}) | "
                     f"{w['sampled_j']:.3f} (±{w['sampled_bound_j']:.3f}) | {w['sampled_j'] - w['synchronous_j']:+.3f} |")
    lines += ["", "Begin + end pair: " + ", ".join(f"{k} {v:.2f} µs" for k, v in modes["pair_us"].items()) + "."]
lines.append("")
for key, title in (("power_limit_direct", "through the device layer"), ("power_limit_through_zeusd", "through zeusd")):
    p = report[key]
    if "original_mw" in p:
        lines.append(f"Power limit {title}: {p['original_mw'] / 1000:g} W -> {p['target_mw'] / 1000:g} W "
                     f"(read back {p.get('read_back_mw', 0) / 1000:g} W, set in {p.get('set_us', 0):.0f} µs) -> "
                     f"{p.get('after_restore_mw', 0) / 1000:g} W; restored: {'yes' if p.get('restored') else 'NO'}"
                     + "".join(f"; {k}: {p[k]}" for k in ("set_error", "restore_error") if k in p) + ".")
    else:
        lines.append(f"Power limit {title}: {p.get('error') or p.get('skipped')}.")
section = "\n".join(lines) + "\n"

path = sys.argv[2]
header = ("# Validation on real hardware\n\nWritten by `scripts/validate-hardware.sh` on machines with a real GPU, newest "
          "first; the simulator's default driver latencies (docs/simulator.md) come from here once a GPU of that "
          "generation has been measured.\n\n")
try:
    old = open(path).read()
except FileNotFoundError:
    old = ""
body = old[len(header):] if old.startswith(header) else ""
if driver["simulated"]:
    body = ""  # a simulated report stands alone
open(path, "w").write(header + section + ("\n" + body if body else ""))
print(f"validate-hardware: wrote {path}")
EOF

# Every check must have produced a number (or a reason), and every limit must be back.
python3 - "$scratch/report.json" <<'EOF'
import json
import sys

report = json.load(open(sys.argv[1]))
problems = [f"{call}: {d['error']}" for call, d in report["call_latency_us"].items() if "error" in d]
if "error" in report["energy_counter_refresh_ms"]:
    problems.append("counter refresh: " + report["energy_counter_refresh_ms"]["error"])
windows = report["counter_vs_integrated_power"]
if isinstance(windows, dict):
    problems.append("counter vs power: " + windows["error"])
for key in ("power_limit_direct", "power_limit_through_zeusd"):
    if report[key].get("restored") is False:
        problems.append(f"{key}: the power limit was not restored")
    if "error" in report[key]:
        problems.append(f"{key}: {report[key]['error']}")
if report["driver"]["simulated"]:
    # On the simulator the truth is known (docs/simulator.md): the default A100
    # costs 20 µs per call, refreshes its counter every 100 ms, and its counter
    # and its instant-power sensor both follow the same ground truth.
    for call, d in report["call_latency_us"].items():
        if "median" in d and d["median"] < 20.0:
            problems.append(f"{call}: median {d['median']:.1f} µs is below the simulated driver's 20 µs")
    refresh = report["energy_counter_refresh_ms"]
    if "median" in refresh and not 90.0 <= refresh["median"] <= 110.0:
        problems.append(f"counter refresh median {refresh['median']:.1f} ms, the simulator's period is 100 ms")
    for w in windows if isinstance(windows, list) else []:
        ratio = w.get("counter_over_power")
        if ratio is None or not 0.98 <= ratio <= 1.02:
            problems.append(f"{w['seconds']} s window: counter / integrated power = {ratio}, beyond 2 %")
if problems:
    print("validate-hardware: " + "\n  ".join(["checks that failed:"] + problems), file=sys.stderr)
    sys.exit(1)
EOF
