"""The original Zeus (0.16.0 from PyPI, unchanged) against the simulator: one
simulated GPU of every preset, through zeus.device, ZeusMonitor, PowerMonitor
and TemperatureMonitor (issue 16 item 6).

Expected values come from the simulator itself (its preset catalogue and
ground truth, read through the zeusSim* control API of the same library), not
from constants. Usage: zeus_original_test.py SCRATCH_DIR (the library is found
through LD_LIBRARY_PATH, as NVML is); it runs itself once per preset.
"""
import ctypes
import json
import os
import subprocess
import sys
import time


class PresetInfo(ctypes.Structure):
    _fields_ = [
        ("size", ctypes.c_uint),
        ("key", ctypes.c_char * 32),
        ("name", ctypes.c_char * 96),
        ("trace_names", ctypes.c_char * 64),
        ("limit_min_w", ctypes.c_double),
        ("limit_max_w", ctypes.c_double),
        ("limit_default_w", ctypes.c_double),
        ("energy_counter_supported", ctypes.c_int),
    ]


def presets(sim):
    out = []
    for i in range(sim.zeusSimPresetCount()):
        info = PresetInfo()
        info.size = ctypes.sizeof(PresetInfo)
        assert sim.zeusSimPresetInfo(i, ctypes.byref(info)) == 0, sim.zeusSimLastError()
        out.append(info)
    return out


def check_one(scratch: str, key: str) -> int:
    """One process per preset: the original's PowerMonitor wants identical GPUs."""
    sim = ctypes.CDLL("libnvidia-ml.so.1")
    sim.zeusSimLastError.restype = ctypes.c_char_p
    p = next(p for p in presets(sim) if p.key.decode() == key)
    # Real clock (the monitors are threads sampling wall time); a short thermal
    # time constant so the temperature visibly rises under load.
    config = {"clock": "real", "gpus": [{"model": key, "count": 2, "thermal": {"time_constant_s": 1.0}}]}
    path = os.path.join(scratch, key + ".json")
    with open(path, "w") as f:
        json.dump(config, f)
    os.environ["ZEUS_SIM_CONFIG"] = path
    os.environ["ZEUS_SIM_STATE"] = os.path.join(scratch, key + ".state")
    os.environ.pop("CUDA_VISIBLE_DEVICES", None)

    import zeus.device
    from zeus.monitor import PowerMonitor, ZeusMonitor
    from zeus.monitor.temperature import TemperatureMonitor

    assert sim.zeusSimOpen() == 0, sim.zeusSimLastError()
    gpus = zeus.device.get_gpus()
    failures = []

    def check(ok, what):
        if not ok:
            failures.append(f"{key}: {what}")

    check(len(gpus) == 2, f"{len(gpus)} GPUs")
    indices = [0, 1]
    for i in indices:
        check(gpus.get_name(i) == p.name.decode(), f"name {gpus.get_name(i)!r}")
        lo, hi = gpus.get_power_management_limit_constraints(i)
        check((lo, hi) == (round(p.limit_min_w * 1000), round(p.limit_max_w * 1000)), f"limits {lo}-{hi} mW")
        check(gpus.supports_get_total_energy_consumption(i) == bool(p.energy_counter_supported), "energy counter support")
        # Grace Hopper is told apart through nvmlDeviceGetC2cModeInfoV.
        check(bool(gpus.gpus[i]._is_grace_hopper) == (key == "GH200"), "Grace Hopper detection")
        check(gpus.get_instant_power_usage(i) > 0, "instant power")

    temperature = TemperatureMonitor(gpu_indices=indices, update_period=0.1)
    power = PowerMonitor(gpu_indices=indices, update_period=0.1)
    monitor = ZeusMonitor(gpu_indices=indices, cpu_indices=[])
    truth = ctypes.c_double()

    def ground_truth():
        out = []
        for i in indices:
            assert sim.zeusSimGroundTruthEnergy(i, ctypes.byref(truth)) == 0
            out.append(truth.value)
        return out

    loads = []
    for i in indices:
        load = ctypes.c_int()
        assert sim.zeusSimLoadBegin(i, ctypes.c_double(1.0), ctypes.byref(load)) == 0, sim.zeusSimLastError()
        loads.append(load.value)
    time.sleep(0.3)
    before = ground_truth()
    monitor.begin_window("busy", sync_execution=False)
    time.sleep(2.0)
    measured = monitor.end_window("busy", sync_execution=False)
    after = ground_truth()
    for load in loads:
        sim.zeusSimLoadEnd(load)
    time.sleep(0.2)
    temps = temperature.get_temperature_timeline()
    powers = power.get_all_power_timelines()
    temperature.stop()
    power.stop()

    for i in indices:
        true_j = after[i] - before[i]
        got = measured.gpu_energy.get(i)
        # The counter (or Zeus's own integration of power on pre-Volta GPUs)
        # against the ground truth read around the window: within 10 %.
        check(got is not None and abs(got - true_j) <= 0.1 * true_j, f"ZeusMonitor {got} J vs ground truth {true_j:.1f} J")
        series = temps.get(i, [])
        check(len(series) >= 3, f"TemperatureMonitor recorded {len(series)} samples")
        if series:
            check(series[-1][1] > series[0][1], f"temperature did not rise under load: {series[0]} .. {series[-1]}")
        samples = sum(len(by_gpu.get(i, [])) for by_gpu in powers.values())
        check(samples >= 2, f"PowerMonitor recorded {samples} samples")
    sim.zeusSimClose()
    for f in failures:
        print("FAILED:", f)
    return 1 if failures else 0


def main(scratch: str) -> int:
    sim = ctypes.CDLL("libnvidia-ml.so.1")
    keys = [p.key.decode() for p in presets(sim)]
    failed = []

    def start(key):
        return subprocess.Popen([sys.executable, __file__, scratch, key], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)

    # Two at a time: each holds its GPUs under load for 2 s of wall time, and
    # the original's PowerMonitor gives its helper processes only 10 s to
    # start (Python imports), which a loaded machine can miss: such a start
    # timeout (the original's, before anything is measured) is retried once.
    for first in range(0, len(keys), 2):
        batch = {k: start(k) for k in keys[first:first + 2]}
        for k, proc in batch.items():
            out, _ = proc.communicate(timeout=300)
            if proc.returncode != 0 and "failed to start within" in out and "FAILED:" not in out:
                retry = start(k)
                out, _ = retry.communicate(timeout=300)
                proc = retry
            if proc.returncode != 0:
                failed.append(k)
                print(out)
    if failed:
        print("original Zeus failed on:", ", ".join(failed))
        return 1
    print(f"original Zeus (zeus.device, ZeusMonitor, PowerMonitor, TemperatureMonitor) on {len(keys)} presets: OK")
    return 0


if __name__ == "__main__":
    sys.exit(check_one(sys.argv[1], sys.argv[2]) if len(sys.argv) > 2 else main(sys.argv[1]))
