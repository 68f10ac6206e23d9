"""Overhead of one begin_window + end_window pair: the C++ API, the zeus_native
binding and the original Zeus 0.16.0, on the same simulated GPUs in one run,
plus how much of each pair is device reads, and import + ZeusMonitor() time.

    LD_LIBRARY_PATH=<zeus_native>/zeus-sim .venv/bin/python python/bench/bench_windows.py

Results go to docs/benchmarks.md (median of per-pair times).
"""

from __future__ import annotations

import ctypes
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

PAIRS = 20000
ORIGINAL_PAIRS = 5000


def _median_pair_ns(monitor, count: int) -> float:
    samples = []
    clock = time.perf_counter_ns
    for _ in range(count):
        t0 = clock()
        monitor.begin_window("bench", sync_execution=False)
        monitor.end_window("bench", sync_execution=False)
        samples.append(clock() - t0)
    return statistics.median(samples)


def _median_original_read_ns(count: int, n: int) -> float:
    import pynvml

    handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(n)]
    samples = []
    for _ in range(count):
        t0 = time.perf_counter_ns()
        for h in handles:
            pynvml.nvmlDeviceGetTotalEnergyConsumption(h)
        samples.append(time.perf_counter_ns() - t0)
    return statistics.median(samples)


def run_case(model: str, count: int) -> dict:
    """One configuration, in this (fresh) process."""
    warnings.simplefilter("ignore")
    from zeus.monitor import ZeusMonitor as Original  # the original, through pynvml

    from zeus_native.monitor import ZeusMonitor

    native = ZeusMonitor()
    assert len(native.gpu_indices) == count
    cpp = native._native_window_pairs(PAIRS)
    binding = _median_pair_ns(native, PAIRS)
    reads = native._native_device_reads(PAIRS)
    original = Original(gpu_indices=list(range(count)))
    orig = _median_pair_ns(original, ORIGINAL_PAIRS)
    orig_reads = _median_original_read_ns(ORIGINAL_PAIRS, count)
    return {"model": model, "gpus": count, "cpp_ns": cpp, "binding_ns": binding, "reads_ns": 2 * reads,
            "original_ns": orig, "original_reads_ns": 2 * orig_reads}


def import_and_construct_ms(env: dict, runs: int = 7) -> float:
    code = ("import time; t = time.perf_counter(); from zeus_native.monitor import ZeusMonitor; "
            "ZeusMonitor(); print(time.perf_counter() - t)")
    times = [float(subprocess.check_output([sys.executable, "-c", code], env=env, text=True)) for _ in range(runs)]
    return statistics.median(times) * 1000


def main() -> int:
    import zeus_native

    sim_dir = Path(zeus_native.__file__).parent / "zeus-sim"
    if len(sys.argv) > 1 and sys.argv[1] == "--case":
        print(json.dumps(run_case(sys.argv[2], int(sys.argv[3]))))
        return 0
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for model, count in (("A100-SXM4-40GB", 2), ("H100-SXM5-80GB", 8)):
            config = Path(tmp) / f"{model}-{count}.json"
            config.write_text(json.dumps({"gpus": [{"model": model, "count": count, "driver_latency_us": {"default": 0}}]}))
            env = dict(os.environ, ZEUS_SIMULATE="1", ZEUS_SIM_CONFIG=str(config),
                       ZEUS_SIM_STATE=str(Path(tmp) / f"{model}-{count}.state"), LD_LIBRARY_PATH=str(sim_dir))
            env.pop("CUDA_VISIBLE_DEVICES", None)
            out = subprocess.check_output([sys.executable, __file__, "--case", model, str(count)], env=env, text=True)
            row = json.loads(out.splitlines()[-1])
            if count == 2:
                row["import_ms"] = import_and_construct_ms(env)
            rows.append(row)
    print("| GPUs | C++ API | binding | added | original | original / binding | device reads (C++ / pynvml) |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['gpus']} x {r['model']} | {r['cpp_ns'] / 1000:.2f} µs | {r['binding_ns'] / 1000:.2f} µs | "
              f"{(r['binding_ns'] - r['cpp_ns']) / 1000:+.2f} µs | {r['original_ns'] / 1000:.2f} µs | "
              f"{r['original_ns'] / r['binding_ns']:.1f}x | {r['reads_ns'] / 1000:.2f} µs / "
              f"{r['original_reads_ns'] / 1000:.2f} µs |")
    print(f"\nimport zeus_native.monitor + ZeusMonitor() (2 simulated GPUs): {rows[0]['import_ms']:.1f} ms median")
    return 0


if __name__ == "__main__":
    sys.exit(main())
