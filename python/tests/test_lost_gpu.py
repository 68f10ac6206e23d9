"""A GPU lost during a window, and the edge estimate's bound, on the simulator:
nothing may read as a silent 0.0."""

from __future__ import annotations

import ctypes
import math
import time

import pytest

from conftest import a100s, energy_bound
from zeus_native.optimizer.power_limit import Done


def lose(sim, gpu: int, lost: bool = True) -> None:
    sim._call("zeusSimInjectFault", ctypes.c_uint(gpu), b"lost", ctypes.c_double(1.0 if lost else 0.0))


def test_lost_counter_gpu_is_nan_named_and_warned(sim):
    sim.start(a100s(2))
    from zeus_native.monitor import ZeusMonitor

    loads = [sim.load(g, 0.8) for g in range(2)]
    monitor = ZeusMonitor(gpu_indices=[0, 1])
    before = sim.truth(0)
    monitor.begin_window("step")
    sim.advance(1.0)
    lose(sim, 1)
    sim.advance(1.0)
    with pytest.warns(UserWarning, match=r"GPU 1 was lost during window 'step'.*NaN.*: GPU 1 .*lost"):
        m = monitor.end_window("step")
    truth = sim.truth(0) - before
    assert set(m.gpu_energy) == {0, 1} and all(isinstance(v, float) for v in m.gpu_energy.values())
    assert math.isnan(m.gpu_energy[1])
    assert abs(m.gpu_energy[0] - truth) <= energy_bound(sim, 0)
    assert m.lost_gpus == [1]
    assert m.provenance["gpu"][1]["lost"] is True and m.provenance["gpu"][0]["lost"] is False
    assert any(w.startswith("GPU 1: ") and "lost" in w for w in m.warnings), m.warnings
    assert m.total_energy == m.gpu_energy[0]  # the lost GPU is left out, not summed as NaN or 0
    assert not m.trustworthy
    lose(sim, 1, False)
    for load in loads:
        sim.unload(load)


def test_lost_pre_volta_gpu_is_nan_and_the_others_are_measured(sim):
    # No energy counter: power integrated in real time, so the real clock.
    sim.start({"clock": "real", "gpus": [{"model": "P100-PCIE-16GB", "count": 2}]})
    from zeus_native.monitor import PowerMonitor, ZeusMonitor

    load = sim.load(0, 0.7)
    monitor = ZeusMonitor(gpu_indices=[0, 1])
    power = PowerMonitor(gpu_indices=[0, 1], update_period=0.01)
    time.sleep(0.2)
    start = time.time()
    # The truth read just before and just after each edge: what GPU 0 drew
    # between the edges lies between `least` and `most`, however long a
    # loaded machine takes to run begin_window and end_window.
    before_begin = sim.truth(0)
    monitor.begin_window("pascal")
    after_begin = sim.truth(0)
    time.sleep(0.4)
    lose(sim, 1)
    time.sleep(0.4)  # well past the sampler's few tolerated failed reads
    with pytest.warns(UserWarning, match=r"GPU 1 was lost during window 'pascal'"):
        before_end = sim.truth(0)
        m = monitor.end_window("pascal")
        after_end = sim.truth(0)
    end = time.time()
    least, most = before_end - after_begin, after_end - before_begin
    assert math.isnan(m.gpu_energy[1]) and m.lost_gpus == [1]
    assert m.provenance["gpu"][0]["source"] == "integrated power"
    # 2% for integrating the 20 ms sensor, and one sensor period at each edge.
    slack = 0.02 * least + 2 * sim.true_power(0) * 0.02
    assert least - slack <= m.gpu_energy[0] <= most + slack, (m.gpu_energy, least, most)
    with pytest.warns(UserWarning, match=r"GPU 1 has no power readings over the whole interval"):
        energy = power.get_energy(start, end)
    assert math.isnan(energy[1]) and energy[0] > 0
    power.stop()
    lose(sim, 1, False)
    sim.unload(load)


def test_nan_in_a_made_measurement_marks_the_gpu_lost():
    from zeus_native.monitor import Measurement

    m = Measurement(time=1.0, gpu_energy={0: 5.0, 1: float("nan")})
    assert m.lost_gpus == [1] and math.isnan(m.gpu_energy[1]) and m.total_energy == 5.0


def test_edge_estimate_carries_its_error_bound(sim):
    sim.start(a100s(1, clock="real"))
    from zeus_native.monitor import ZeusMonitor

    load = sim.load(0, 1.0)
    time.sleep(0.3)
    monitor = ZeusMonitor(gpu_indices=[0])
    begin = [sim.truth(0)]
    monitor.begin_window("w")
    begin.append(sim.truth(0))
    time.sleep(0.3)
    sim.unload(load)  # a step just before the end: the estimate may use the loaded power
    time.sleep(0.02)
    end = [sim.truth(0)]
    m = monitor.end_window("w")
    end.append(sim.truth(0))
    bound = m.provenance["gpu"][0]["edge_error_bound_j"]
    assert isinstance(bound, float) and bound > 0
    # Within the bound of the spans the truths read around each edge allow
    # (and the counter's 1 mJ resolution at each edge).
    assert end[0] - begin[1] - bound - 0.002 <= m.gpu_energy[0] <= end[1] - begin[0] + bound + 0.002
    waiting = ZeusMonitor(gpu_indices=[0], wait_for_counter_refresh=True)
    waiting.begin_window("w")
    time.sleep(0.1)
    assert waiting.end_window("w").provenance["gpu"][0]["edge_error_bound_j"] is None


def test_power_limit_optimizer_discards_a_window_with_a_lost_gpu(sim):
    # The library's fix reaches Python: the 375 W window, in which GPU 1 is
    # lost, is no measurement (its total would lack GPU 1's energy), and the
    # error is the original's ZeusGPULostError.
    sim.start(a100s(2))
    from zeus_native.monitor import ZeusMonitor
    from zeus_native.device.gpu.common import ZeusGPULostError
    from zeus_native.optimizer import GlobalPowerLimitOptimizer

    loads = [sim.load(g, 1.0) for g in range(2)]
    monitor = ZeusMonitor(gpu_indices=[0, 1])
    monitor.gpus.set_power_management_limit(0, 300_000)
    plo = GlobalPowerLimitOptimizer(monitor, wait_steps=1, warmup_steps=1, profile_steps=3)
    # 400 W is set on call 2, its window covers calls 3-5 (closed on call 6, which sets
    # 375 W); 375 W's window opens on call 7 and closes on call 10.
    for _ in range(8):
        plo.on_step_begin()
        sim.advance(0.05)
    assert [m.power_limit for m in plo.measurements] == [400]
    lose(sim, 1)
    sim.advance(0.05)
    plo.on_step_begin()  # call 9, inside the window
    sim.advance(0.05)
    with pytest.raises(ZeusGPULostError, match=r"GPU 1 was lost while 375 W was profiled.*400 W"):
        plo.on_step_begin()
    assert [m.power_limit for m in plo.measurements] == [400]
    assert isinstance(plo.state, Done) and plo.optimal_power_limit == 400_000
    assert monitor.gpus.get_power_management_limit(0) == 400_000
    assert any("375 W" in w and "GPU 1" in w for w in plo._native.warnings), plo._native.warnings
    with pytest.raises(RuntimeError, match=r"GPU 1"):
        plo.close()  # GPU 1 cannot take its limit back; GPU 0 does
    assert monitor.gpus.get_power_management_limit(0) == 300_000
    lose(sim, 1, False)
    for load in loads:
        sim.unload(load)


def test_monitor_power_cli_warns_once_when_a_gpu_is_lost_and_back(sim):
    """`python -m zeus_native.monitor power` prints `zeus power`'s warnings on standard error:
    once when GPU 1's readings stop (its cells then empty), once when they come back."""
    import csv
    import signal
    import subprocess
    import sys

    sim.start(a100s(2, clock="real"))
    proc = subprocess.Popen([sys.executable, "-m", "zeus_native.monitor", "power", "--update-period", "0.1",
                             "--format", "csv"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    header = next(csv.reader([proc.stdout.readline()]))
    gpu1 = header.index("GPU 1 power (W)")

    def rows(n: int) -> list:
        return [next(csv.reader([proc.stdout.readline()])) for _ in range(n)]

    assert all(r[gpu1] for r in rows(3))
    lose(sim, 1)
    lost_rows = rows(15)
    lose(sim, 1, lost=False)
    back_rows = rows(15)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert lost_rows[-1][gpu1] == "" and back_rows[-1][gpu1] != ""
    lines = err.splitlines()
    prefix = "python -m zeus_native.monitor: warning: "
    assert [l for l in lines if "no power reading" in l] == [
        prefix + "GPU 1: no power reading since its last sample (lost?); shown as unavailable until it answers again"]
    assert [l for l in lines if "readings are back" in l] == [prefix + "GPU 1: power readings are back"]
