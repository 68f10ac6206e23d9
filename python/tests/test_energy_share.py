"""ZeusMonitor(attribute_to=...): this process's share of each GPU's window energy,
on the simulator, against its per-process ground truth. This process and
other, real processes (children that open the same simulator) put load on GPU
0; the GPU has no leakage and a known idle power, so a process's truth is its
dynamic energy exactly (sim/src/processes.h)."""

from __future__ import annotations

import ctypes
import math
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import SIM_LIBRARY

IDLE_W, MAX_DYNAMIC_W = 50.0, 300.0
SAMPLE_PERIOD_S = 1 / 6  # the simulator's per-process utilization samples (docs/simulator.md)


def shared_gpu(clock: str = "virtual") -> dict:
    return {"clock": clock, "gpus": [{"model": "A100-SXM4-40GB", "power": {
        "idle_w": IDLE_W, "max_dynamic_w": MAX_DYNAMIC_W, "leakage_w_per_c": 0, "clock_exponent": 2.5},
        "thermal": {"throttle_c": 300}, "counters": {"power_noise_w": 0}}]}


def load(sim, utilization: float, pid: int = 0) -> int:
    """A load on GPU 0 of process `pid` (0: this one)."""
    load_id = ctypes.c_int()
    sim._call("zeusSimProcessLoadBegin", ctypes.c_uint(0), ctypes.c_double(utilization), ctypes.c_int(pid),
              ctypes.c_double(1.0), ctypes.byref(load_id))
    return load_id.value


def process_truth(sim, pid: int) -> float:
    """Ground-truth energy (J) process `pid` drew on GPU 0 so far."""
    j = ctypes.c_double()
    sim._call("zeusSimProcessEnergy", ctypes.c_uint(0), ctypes.c_int(pid), ctypes.byref(j))
    return j.value


class Neighbour:
    """Another process, a child of this one, that keeps GPU 0 `utilization`
    busy for `seconds` of the simulator's virtual clock (moving it), then
    waits until close() (so that /proc still shows it as this one's child)."""

    def __init__(self, utilization: float, seconds: float) -> None:
        code = textwrap.dedent(f"""
            import ctypes, os, sys
            lib = ctypes.CDLL({str(SIM_LIBRARY)!r})
            assert lib.zeusSimOpen() == 0
            load = ctypes.c_int()
            assert lib.zeusSimProcessLoadBegin(0, ctypes.c_double({utilization}), 0, ctypes.c_double(1.0),
                                               ctypes.byref(load)) == 0
            assert lib.zeusSimAdvance(ctypes.c_double({seconds})) == 0
            assert lib.zeusSimLoadEnd(load) == 0
            print(os.getpid(), flush=True)
            sys.stdin.read()
            assert lib.zeusSimClose() == 0
        """)
        self.process = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()  # type: ignore[union-attr]
        assert line, "the neighbour process failed (its error is above)"
        self.pid = int(line)

    def close(self) -> None:
        self.process.communicate("", timeout=60)
        assert self.process.returncode == 0


def neighbour(utilization: float, seconds: float) -> int:
    """A Neighbour that has ended; its PID."""
    process = Neighbour(utilization, seconds)
    process.close()
    return process.pid


def assert_adds_up(m, share) -> None:
    """Share + others + remainder = the GPU's window energy, in whole mJ exactly."""
    mj = [round(x * 1000) for x in (share.energy, share.others, share.idle, share.no_process, share.gpu_energy)]
    assert mj[0] + mj[1] + mj[2] + mj[3] == mj[4], mj
    assert abs(share.gpu_energy - m.gpu_energy[0]) <= 0.0005
    assert math.isclose(share.others, sum(j for pid, j in share.processes.items() if pid not in share.pids))


@pytest.mark.parametrize("sharing", ["concurrent", "time_sliced"])
def test_a_shared_gpu_gives_this_process_its_share_within_the_documented_bound(sim, sharing):
    sim.start(shared_gpu())
    sim._call("zeusSimSetSharing", ctypes.c_uint(0), sharing.encode())
    from zeus_native.monitor import ZeusMonitor

    monitor = ZeusMonitor(gpu_indices=[0], attribute_to="process", idle_power=IDLE_W)
    mine = load(sim, 0.6)
    sim.advance(1.05)  # the edges fall inside the driver's sample periods
    before = process_truth(sim, os.getpid())
    monitor.begin_window("cell")
    sim.advance(0.4)
    other = neighbour(0.3, 10.0)
    sim.advance(1.0)
    m = monitor.end_window("cell")
    truth = process_truth(sim, os.getpid()) - before
    share = m.attribution[0]
    assert share.method == "utilization"
    assert share.pids == [os.getpid()]
    assert set(share.processes) == {os.getpid(), other}
    # docs/attribution.md: within the active energy of one sample period at
    # each edge (at most 0.9 of the GPU's dynamic power here) plus 1 %.
    bound = 2 * SAMPLE_PERIOD_S * 0.9 * MAX_DYNAMIC_W + 0.01 * truth
    assert abs(share.energy - truth) <= bound, (share.energy, truth)
    assert abs(share.processes[other] - process_truth(sim, other)) <= bound
    # The rest is visible: the neighbour's part and the idle draw.
    assert share.idle == pytest.approx(IDLE_W * m.time, abs=0.001)
    assert share.remainder == share.idle + share.no_process
    assert_adds_up(m, share)
    sim.unload(mine)


def test_a_process_alone_on_the_gpu_gets_its_exact_energy_labelled_exclusive(sim):
    sim.start(shared_gpu())
    from zeus_native.monitor import ZeusMonitor

    monitor = ZeusMonitor(gpu_indices=[0], attribute_to="process", idle_power={0: IDLE_W})
    mine = load(sim, 0.7)
    before = process_truth(sim, os.getpid())
    monitor.begin_window("cell")
    sim.advance(5.0)
    m = monitor.end_window("cell")
    share = m.attribution[0]
    assert share.method == "exclusive"
    assert round(share.energy * 1000) == round(share.gpu_energy * 1000) - round(IDLE_W * m.time * 1000)
    # The counter's two edges, 1 mJ each (no edge estimate on the virtual clock).
    assert abs(share.energy - (process_truth(sim, os.getpid()) - before)) <= 0.002
    assert share.others == 0 and share.warnings == []
    assert_adds_up(m, share)
    sim.unload(mine)


@pytest.mark.parametrize("edges", ["synchronous", "sampled"])
def test_both_window_edge_modes_split_the_window_they_measured(sim, edges):
    sim.start(shared_gpu(clock="real"))
    from zeus_native.monitor import ZeusMonitor

    monitor = ZeusMonitor(gpu_indices=[0], attribute_to="process", window_edges=edges)
    mine = load(sim, 0.5)
    monitor.begin_window("w")
    import time

    time.sleep(0.5)
    m = monitor.end_window("w")
    share = m.attribution[0]
    # Without an idle power nothing is told apart from this process's energy.
    assert share.method == "exclusive" and share.idle_power is None
    assert share.energy == share.gpu_energy > 0
    assert_adds_up(m, share)
    sim.unload(mine)


def test_a_process_tree_counts_the_children_and_process_does_not(sim):
    sim.start(shared_gpu())
    from zeus_native.monitor import ZeusMonitor

    alone = ZeusMonitor(gpu_indices=[0], attribute_to="process", idle_power=IDLE_W)
    tree = ZeusMonitor(gpu_indices=[0], attribute_to="process_tree", idle_power=IDLE_W)
    for monitor in (alone, tree):
        monitor.begin_window("w")
    child = Neighbour(0.5, 4.0)  # a child of this process, alone on the GPU
    just_me, with_children = alone.end_window("w").attribution[0], tree.end_window("w").attribution[0]
    child.close()
    assert just_me.energy == 0 and just_me.method is None and just_me.pids == []
    assert just_me.warnings and "PID namespace" in just_me.warnings[0]
    assert with_children.pids == [child.pid] and with_children.method == "exclusive"
    assert abs(with_children.energy - process_truth(sim, child.pid)) <= 0.002


def test_given_pids_and_cancelled_windows(sim):
    sim.start(shared_gpu())
    from zeus_native.monitor import ZeusMonitor

    monitor = ZeusMonitor(gpu_indices=[0], attribute_to=[4_000_001], idle_power=IDLE_W)
    theirs = load(sim, 0.4, pid=4_000_001)
    monitor.begin_window("w")
    sim.advance(2.0)
    assert monitor.end_window("w", cancel=True).attribution == {}
    monitor.begin_window("w")
    sim.advance(2.0)
    share = monitor.end_window("w").attribution[0]
    assert share.pids == [4_000_001] and share.method == "exclusive"
    assert share.energy == pytest.approx(MAX_DYNAMIC_W * 0.4 * 2.0, abs=0.002)
    sim.unload(theirs)


def test_without_attribute_to_there_is_no_attribution(sim):
    sim.start(shared_gpu())
    from zeus_native.monitor import Measurement, ZeusMonitor

    monitor = ZeusMonitor(gpu_indices=[0])
    monitor.begin_window("w")
    sim.advance(1.0)
    m = monitor.end_window("w")
    assert m.attribution == {}
    assert "attribution" not in [f.name for f in __import__("dataclasses").fields(Measurement)]
    assert Measurement(time=1.0, gpu_energy={0: 1.0}).attribution == {}


@pytest.mark.parametrize("kwargs, error, text", [
    ({"attribute_to": "thread"}, ValueError, '"process", "process_tree"'),
    ({"attribute_to": []}, ValueError, "empty list"),
    ({"attribute_to": [0]}, ValueError, "PID 0 is not a process id"),
    ({"attribute_to": [1.5]}, TypeError, "a PID or a list of PIDs"),
    ({"attribute_to": True}, TypeError, "not a bool"),
    # No PID is this large (the driver's are 32-bit), and bytes are no list of PIDs.
    ({"attribute_to": 2**32}, ValueError, "PID 4294967296 is not a process id"),
    ({"attribute_to": [1, 2**64]}, ValueError, "PID 18446744073709551616 is not a process id"),
    ({"attribute_to": b"process"}, TypeError, "not b'process'"),
    # Watts are a number: not text, not a bool.
    ({"attribute_to": "process", "idle_power": "60"}, TypeError, "idle_power of GPU 0 is '60'"),
    ({"attribute_to": "process", "idle_power": True}, TypeError, "idle_power of GPU 0 is True"),
    ({"attribute_to": "process", "idle_power": {0: "x"}}, TypeError, "idle_power of GPU 0 is 'x'"),
    ({"attribute_to": "process", "idle_power": {"0": 60.0}}, TypeError, "idle_power names GPU '0'"),
    ({"idle_power": 50.0}, ValueError, "pass attribute_to"),
    ({"attribute_to": "process", "idle_power": -1.0}, ValueError, "idle draw in W"),
    ({"attribute_to": "process", "idle_power": {3: 50.0}}, ValueError, "names GPU 3"),
    ({"attribute_to": "process", "idle_policy": "mine"}, ValueError, '"unattributed" or "allocation"'),
])
def test_bad_arguments_name_the_problem_and_the_fix(sim, kwargs, error, text):
    sim.start(shared_gpu())
    from zeus_native.monitor import ZeusMonitor

    with pytest.raises(error, match=None) as raised:
        ZeusMonitor(gpu_indices=[0], **kwargs)
    assert text in str(raised.value)


def test_pids_and_gpu_indices_may_be_any_integer_type(sim):
    """numpy's integers (anything with __index__) are PIDs and GPU indices as ints are."""
    sim.start(shared_gpu())
    from zeus_native.monitor import ZeusMonitor

    class Index:
        def __init__(self, value: int) -> None:
            self.value = value

        def __index__(self) -> int:
            return self.value

    ZeusMonitor(gpu_indices=[0], attribute_to=Index(os.getpid()), idle_power={Index(0): 50.0})
    ZeusMonitor(gpu_indices=[0], attribute_to=[Index(os.getpid())])


def test_a_gpu_lost_in_the_window_has_an_unknown_share_never_a_silent_zero(sim):
    sim.start(shared_gpu())
    from zeus_native.monitor import ZeusMonitor

    monitor = ZeusMonitor(gpu_indices=[0], attribute_to="process")
    mine = load(sim, 0.5)
    monitor.begin_window("w")
    sim.advance(1.0)
    sim._call("zeusSimInjectFault", ctypes.c_uint(0), b"lost", ctypes.c_double(1.0))
    with pytest.warns(UserWarning, match="lost"):
        m = monitor.end_window("w")
        share = m.attribution[0]
    assert math.isnan(share.energy) and share.method is None
    assert "lost" in share.warnings[0]
    sim._call("zeusSimInjectFault", ctypes.c_uint(0), b"lost", ctypes.c_double(0.0))
    sim.unload(mine)
