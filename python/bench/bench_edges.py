"""Window edges, synchronous vs sampled, side by side in one run:

1. cost of one begin_window + end_window pair (and of the pair with its
   result's total_energy read) for 1, 8 and 64 simulated H100s at
   20 µs per NVML call (the H100 preset's default) and at 360 µs (the Pascal
   preset's, docs/simulator.md "Driver latency"), through
   the C++ API (the binding's benchmark hook), through Python, and the original
   Zeus 0.16.0 on the same simulated GPUs (pynvml pointed at the simulator);
2. the same pair over 8 GPUs with 2 CPU packages and their DRAM zones in a
   powercap tree on tmpfs (ZEUS_POWERCAP_ROOT): a synchronous edge reads each
   zone's energy_uj, a sampled one takes the watcher's latest readings;
3. accuracy against the simulator's ground truth for 0.1, 1 and 10 s windows,
   steady load and load steps 0-100 ms before each edge, both modes measuring the
   very same windows.

    .venv/bin/python python/bench/bench_edges.py [--quick]

Each cost cell: median over ROUNDS rounds of the per-round median pair time, and
the range (lowest-highest round median). Results go to docs/benchmarks.md.
"""

from __future__ import annotations

import ctypes
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROUNDS = 3
PAIRS = 4000
# A round of pairs that read every GPU at each edge lasts about this long.
READING_ROUND_US = 2_000_000


def _reading_pairs(count: int, latency_us: int) -> int:
    """Pairs per round for a mode that reads each GPU at each edge."""
    return max(20, min(PAIRS, READING_ROUND_US // (2 * count * max(latency_us, 1))))


def _pair_times(monitor, count: int) -> tuple[float, float, float]:
    """Median ns of the pair, of begin alone, and of end alone."""
    pairs, begins, ends = [], [], []
    clock = time.perf_counter_ns
    for _ in range(count):
        t0 = clock()
        monitor.begin_window("bench", sync_execution=False)
        t1 = clock()
        monitor.end_window("bench", sync_execution=False)
        t2 = clock()
        pairs.append(t2 - t0)
        begins.append(t1 - t0)
        ends.append(t2 - t1)
    return statistics.median(pairs), statistics.median(begins), statistics.median(ends)


def _pair_and_total_times(monitor, count: int) -> float:
    """Median ns of a pair whose result's total_energy is read: what a caller of the window pays."""
    times = []
    clock = time.perf_counter_ns
    for _ in range(count):
        t0 = clock()
        monitor.begin_window("bench", sync_execution=False)
        monitor.end_window("bench", sync_execution=False).total_energy
        times.append(clock() - t0)
    return statistics.median(times)


def run_cost_case(count: int, latency_us: int) -> dict:
    warnings.simplefilter("ignore")
    from zeus.monitor import ZeusMonitor as Original

    from zeus_native.monitor import ZeusMonitor

    row: dict = {"gpus": count}
    for mode in ("synchronous", "sampled"):
        monitor = ZeusMonitor(window_edges=mode)
        assert len(monitor.gpu_indices) == count
        monitor.begin_window("warm-up", sync_execution=False)
        pairs = PAIRS if mode == "sampled" else _reading_pairs(count, latency_us)
        cpp, py, begin, end, total = [], [], [], [], []
        for _ in range(ROUNDS):
            cpp.append(monitor._native_window_pairs(pairs))
            p, b, e = _pair_times(monitor, pairs)
            py.append(p)
            begin.append(b)
            end.append(e)
            total.append(_pair_and_total_times(monitor, pairs))
        row[mode] = {"cpp": cpp, "python": py, "begin": begin, "end": end, "total": total}
        monitor._stop_threads()
    default = ZeusMonitor()
    assert default.window_edges == "sampled"
    default._stop_threads()
    original = Original(gpu_indices=list(range(count)))
    pairs = _reading_pairs(count, latency_us)
    row["original"] = [_pair_times(original, pairs)[0] for _ in range(ROUNDS)]
    row["original_total"] = [_pair_and_total_times(original, pairs) for _ in range(ROUNDS)]
    return row


def run_packages_case() -> dict:
    from zeus_native.monitor import ZeusMonitor

    row: dict = {}
    for mode in ("synchronous", "sampled"):
        monitor = ZeusMonitor(cpu_indices=[0, 1], window_edges=mode)
        assert len(monitor.gpu_indices) == 8 and monitor.cpu_indices == [0, 1]
        monitor.begin_window("warm-up", sync_execution=False)
        pairs = PAIRS if mode == "sampled" else _reading_pairs(8, 20)
        cpp, py = [], []
        for _ in range(ROUNDS):
            cpp.append(monitor._native_window_pairs(pairs))
            py.append(_pair_times(monitor, pairs)[0])
        row[mode] = {"cpp": cpp, "python": py}
        monitor._stop_threads()
    return row


def _powercap_tree(root: Path) -> Path:
    """Two packages, each with a DRAM zone, as the kernel lays them out."""
    for n in range(2):
        zone = root / f"intel-rapl:{n}"
        dram = zone / f"intel-rapl:{n}:0"
        dram.mkdir(parents=True)
        (zone / "name").write_text(f"package-{n}\n")
        (zone / "energy_uj").write_text("1000000\n")
        (zone / "max_energy_range_uj").write_text("262143328850\n")
        (dram / "name").write_text("dram\n")
        (dram / "energy_uj").write_text("500000\n")
        (dram / "max_energy_range_uj").write_text("65712999613\n")
    return root


def _sim():
    import zeus_native

    lib = ctypes.CDLL(str(Path(zeus_native.__file__).parent / "zeus-sim" / "libnvidia-ml.so.1"))
    lib.zeusSimGroundTruthEnergy.argtypes = [ctypes.c_uint, ctypes.POINTER(ctypes.c_double)]
    lib.zeusSimLoadBegin.argtypes = [ctypes.c_uint, ctypes.c_double, ctypes.POINTER(ctypes.c_int)]
    lib.zeusSimLoadEnd.argtypes = [ctypes.c_int]
    return lib


def run_accuracy_case(lengths: list[float], steps_ms: list[int]) -> list[dict]:
    """Both modes measure the same windows on GPU 0; the truth is read right
    before and after each edge (the midpoint is the reference, the half-spread
    its own uncertainty)."""
    warnings.simplefilter("ignore")
    from zeus_native.monitor import ZeusMonitor

    sim = _sim()

    def truth() -> float:
        j = ctypes.c_double()
        assert sim.zeusSimGroundTruthEnergy(0, ctypes.byref(j)) == 0
        return j.value

    def load(u: float) -> int:
        lid = ctypes.c_int()
        assert sim.zeusSimLoadBegin(0, u, ctypes.byref(lid)) == 0
        return lid.value

    monitors = {m: ZeusMonitor(gpu_indices=[0], window_edges=m) for m in ("synchronous", "sampled")}
    for m in monitors.values():
        m.begin_window("warm-up", sync_execution=False)
    rows = []
    current = load(0.3)
    time.sleep(0.5)
    for length in lengths:
        for step in [None] + steps_ms:
            # A step from 30% to 100% utilization `step` ms before the begin edge,
            # and back to 30% `step` ms before the end edge (None: steady 60%).
            sim.zeusSimLoadEnd(current)
            current = load(0.6 if step is None else 0.3)
            time.sleep(0.35)
            if step is not None:
                sim.zeusSimLoadEnd(current)
                current = load(1.0)
                time.sleep(step / 1000)
            b0 = truth()
            for m in monitors.values():
                m.begin_window("w", sync_execution=False)
            b1 = truth()
            time.sleep(length)
            if step is not None:
                sim.zeusSimLoadEnd(current)
                current = load(0.3)
                time.sleep(step / 1000)
            e0 = truth()
            got = {k: m.end_window("w", sync_execution=False) for k, m in monitors.items()}
            e1 = truth()
            reference = ((e0 - b1) + (e1 - b0)) / 2
            row = {"length": length, "step_ms": step, "truth_j": reference, "truth_spread_j": ((e1 - b0) - (e0 - b1)) / 2}
            for k, m in got.items():
                row[k] = {"error_j": m.gpu_energy[0] - reference,
                          "bound_j": m.provenance["gpu"][0]["edge_error_bound_j"]}
            rows.append(row)
    sim.zeusSimLoadEnd(current)
    return rows


def _env(tmp: Path, count: int, latency_us: int) -> dict:
    import zeus_native

    sim_dir = Path(zeus_native.__file__).parent / "zeus-sim"
    gpu = {"model": "H100-SXM5-80GB", "count": count, "driver_latency_us": {"default": latency_us}}
    config = tmp / f"{count}-{latency_us}.json"
    config.write_text(json.dumps({"gpus": [gpu]}))
    env = dict(os.environ, ZEUS_SIMULATE="1", ZEUS_SIM_CONFIG=str(config),
               ZEUS_SIM_STATE=str(tmp / f"{count}-{latency_us}.state"), LD_LIBRARY_PATH=str(sim_dir))
    env.pop("CUDA_VISIBLE_DEVICES", None)
    return env


def _cell(values: list[float]) -> str:
    return f"{statistics.median(values) / 1000:.2f} ({min(values) / 1000:.2f}–{max(values) / 1000:.2f})"


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--cost":
        print(json.dumps(run_cost_case(int(sys.argv[2]), int(sys.argv[3]))))
        return 0
    if len(sys.argv) > 1 and sys.argv[1] == "--packages":
        print(json.dumps(run_packages_case()))
        return 0
    if len(sys.argv) > 1 and sys.argv[1] == "--accuracy":
        print(json.dumps(run_accuracy_case(json.loads(sys.argv[2]), json.loads(sys.argv[3]))))
        return 0
    quick = "--quick" in sys.argv
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        print("\n| GPUs | driver latency | mode | C++ pair µs | Python pair µs | Python begin / end µs | "
              "original 0.16.0 pair µs | original / Python | Python pair + total_energy µs | "
              "original pair + total_energy µs | original / Python |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for latency in (20, 360):
            for count in (1, 8, 64):
                out = subprocess.check_output([sys.executable, __file__, "--cost", str(count), str(latency)],
                                              env=_env(tmp, count, latency), text=True)
                row = json.loads(out.splitlines()[-1])
                lat = f"{latency} µs"
                for mode in ("synchronous", "sampled"):
                    r = row[mode]
                    ratio = statistics.median(row["original"]) / statistics.median(r["python"])
                    total_ratio = statistics.median(row["original_total"]) / statistics.median(r["total"])
                    print(f"| {count} | {lat} | {mode} | {_cell(r['cpp'])} | {_cell(r['python'])} | "
                          f"{statistics.median(r['begin']) / 1000:.2f} / {statistics.median(r['end']) / 1000:.2f} | "
                          f"{_cell(row['original'])} | {ratio:.0f}× | {_cell(r['total'])} | "
                          f"{_cell(row['original_total'])} | {total_ratio:.0f}× |")
        with tempfile.TemporaryDirectory(dir="/dev/shm" if Path("/dev/shm").is_dir() else None) as shm:
            env = dict(_env(tmp, 8, 20), ZEUS_POWERCAP_ROOT=str(_powercap_tree(Path(shm) / "powercap")))
            row = json.loads(subprocess.check_output([sys.executable, __file__, "--packages"], env=env,
                                                     text=True).splitlines()[-1])
        print("\n8 GPUs (20 µs) and 2 CPU packages with DRAM, powercap on tmpfs:\n")
        print("| mode | C++ pair µs | Python pair µs |")
        print("|---|---|---|")
        for mode in ("synchronous", "sampled"):
            print(f"| {mode} | {_cell(row[mode]['cpp'])} | {_cell(row[mode]['python'])} |")
        lengths = [0.1, 1.0] if quick else [0.1, 1.0, 10.0]
        steps = [0, 10, 50, 100]
        out = subprocess.check_output([sys.executable, __file__, "--accuracy", json.dumps(lengths), json.dumps(steps)],
                                      env=_env(tmp, 1, 20), text=True)
        rows = json.loads(out.splitlines()[-1])
        print("\n| window | load | truth J | synchronous error J (bound) | sampled error J (bound) |")
        print("|---|---|---|---|---|")
        for r in rows:
            load = "steady 60%" if r["step_ms"] is None else f"step {r['step_ms']} ms before each edge"
            cells = []
            for k in ("synchronous", "sampled"):
                b = r[k]["bound_j"]
                cells.append(f"{r[k]['error_j']:+.4f} (±{b:.3f})" if b is not None else f"{r[k]['error_j']:+.4f}")
            print(f"| {r['length']:g} s | {load} | {r['truth_j']:.3f} ± {r['truth_spread_j']:.4f} | {cells[0]} | {cells[1]} |")
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end, {time.strftime('%H:%M UTC', time.gmtime())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
