"""Ranks of a torch.distributed job aggregate, as the original's all_reduce does:
profile.measure and GlobalPowerLimitOptimizer sum every rank's energy and take
the slowest rank's time, so every rank sees the same numbers (and settles on the
same limit). Real PyTorch (scripts/setup-frameworks.sh), 2 and 4 gloo ranks on
the CPU, one simulated GPU per rank (ZeusMonitor(gpu_indices=[rank])).

Expected energy from the simulator: idle GPUs draw a constant true power, so the
job's energy over a window of time T is the sum over ranks of P_rank × T (within
the counters' edge error, a few percent for windows of seconds)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap

import pytest

from conftest import a100s
from test_frameworks import frameworks  # noqa: F401 (the fixture)

PRELUDE = """
import ctypes, json, os, sys, time
import torch.distributed as dist
import zeus_native

rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
dist.init_process_group("gloo", rank=rank, world_size=world)
sim = ctypes.CDLL(os.path.join(os.path.dirname(zeus_native.__file__), "zeus-sim", "libnvidia-ml.so.1"))


def true_power(gpu):
    w = ctypes.c_double()
    assert sim.zeusSimTruePower(ctypes.c_uint(gpu), ctypes.byref(w)) == 0
    return w.value


def gathered(value):
    out = [None] * world
    dist.all_gather_object(out, value)
    return out


def report(**values):
    print("RESULT " + json.dumps(values), flush=True)
"""

MEASURE = """
from zeus_native.monitor import ZeusMonitor
from zeus_native.profile import measure

monitor = ZeusMonitor(gpu_indices=[rank])
trial = measure(lambda: time.sleep(0.01), monitor, measurement_duration=2.0, cooldown_duration=0.0,
                num_warmup_iterations=1, num_calibration_iterations=5)
report(energy=trial.total_energy, time=trial.total_time, powers=gathered(true_power(rank)),
       local_times=gathered(trial.total_time))
dist.destroy_process_group()
"""

OPTIMIZE = """
from zeus_native.monitor import ZeusMonitor
from zeus_native.optimizer import GlobalPowerLimitOptimizer

monitor = ZeusMonitor(gpu_indices=[rank])
plo = GlobalPowerLimitOptimizer(monitor, wait_steps=0, warmup_steps=0, profile_steps=10, pl_step=150)
for _ in range(200):
    if type(plo.state).__name__ == "Done":
        break
    plo.on_step_begin()
    time.sleep(0.25)
    plo.on_step_end()
assert type(plo.state).__name__ == "Done", plo.state
report(measurements=[(m.power_limit, m.energy, m.time) for m in plo.measurements],
       optimal=plo.state.optimal_power_limit, powers=gathered(true_power(rank)))
plo.close()
dist.destroy_process_group()
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_ranks(frameworks_dir: str, tmp_path, body: str, world: int) -> list[dict]:
    script = tmp_path / "rank.py"
    script.write_text(PRELUDE + textwrap.dedent(body))
    port = _free_port()
    procs = []
    for rank in range(world):
        env = dict(os.environ, PYTHONPATH=frameworks_dir, RANK=str(rank), WORLD_SIZE=str(world),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        procs.append(subprocess.Popen([sys.executable, str(script)], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True, cwd=tmp_path))
    results = []
    for rank, proc in enumerate(procs):
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, f"rank {rank}: exit code {proc.returncode}\n{out}\n{err[-3000:]}"
        line = next(line for line in out.splitlines() if line.startswith("RESULT "))
        results.append(json.loads(line[len("RESULT "):]))
    return results


@pytest.mark.parametrize("world", [2, 4])
def test_profile_measure_sums_energy_over_ranks(frameworks, sim, tmp_path, world):  # noqa: F811
    sim.start(a100s(world, clock="real"))
    results = run_ranks(frameworks, tmp_path, MEASURE, world)
    energies = {r["energy"] for r in results}
    times = {r["time"] for r in results}
    assert len(energies) == 1 and len(times) == 1, f"ranks disagree: {results}"
    slowest = max(results[0]["local_times"])
    assert results[0]["time"] == pytest.approx(slowest)
    expected = sum(results[0]["powers"]) * results[0]["time"]
    assert results[0]["energy"] == pytest.approx(expected, rel=0.15), (results[0], expected)


@pytest.mark.parametrize("world", [2, 4])
def test_power_limit_optimizer_profiles_the_whole_job(frameworks, sim, tmp_path, world):  # noqa: F811
    sim.start(a100s(world, clock="real"))
    results = run_ranks(frameworks, tmp_path, OPTIMIZE, world)
    assert all(r["measurements"] == results[0]["measurements"] for r in results), f"ranks disagree: {results}"
    assert len({r["optimal"] for r in results}) == 1
    total_power = sum(results[0]["powers"])  # idle: the same at every limit
    for limit, energy, seconds in results[0]["measurements"]:
        assert energy == pytest.approx(total_power * seconds, rel=0.15), (limit, energy, seconds, total_power)


PROFILE_PARAMETERS = """
import logging
from zeus_native.monitor import ZeusMonitor
from zeus_native.profile import profile_parameters

logged = []
handler = logging.Handler()
handler.emit = lambda record: logged.append(record.getMessage())
logger = logging.getLogger("zeus_native.profile")
logger.addHandler(handler)
logger.setLevel(logging.INFO)

monitor = ZeusMonitor(gpu_indices=[rank])
measured, cooled = profile_parameters(lambda: time.sleep(0.01), monitor, [0.2], [0.0], num_trials=2,
                                      num_warmup_trials=0, num_warmup_iterations=1, num_calibration_iterations=5)
report(reports=[str(measured), str(cooled)], logged=logged)
dist.destroy_process_group()
"""


def test_profile_parameters_agree_over_ranks_and_rank_0_logs(frameworks, sim, tmp_path):  # noqa: F811
    """The original's distributed profiling: every rank gets the same (combined) reports,
    and only rank 0 logs progress and the reports."""
    sim.start(a100s(2, clock="real"))
    first, second = run_ranks(frameworks, tmp_path, PROFILE_PARAMETERS, 2)
    assert first["reports"] == second["reports"], (first, second)
    assert second["logged"] == [], second
    assert first["logged"][-2:] == first["reports"], first
    assert "Starting measurement_duration=0.2 s  [2 trials]" in first["logged"], first
