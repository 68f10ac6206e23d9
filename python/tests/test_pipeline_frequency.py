"""Perseus's client (zeus_native.optimizer.pipeline_frequency) against
`zeus perseus-server` on the simulator: the original's callbacks lock each
instruction's clock from the served schedule and the clock is restored."""

from __future__ import annotations

import ctypes
import json
import subprocess
from pathlib import Path

import pytest

from conftest import a100s
from server_listening import wait_for_listening

ZEUS_CLI = Path(__file__).resolve().parents[2] / "build" / "bin" / "zeus"
SCHEDULE = [["forward", 1410], ["forward", 1200], ["backward", 1200], ["backward", 1005]]


def clock(sim, gpu: int) -> float:
    mhz = ctypes.c_double()
    sim._call("zeusSimClockMhz", ctypes.c_uint(gpu), ctypes.byref(mhz))
    return mhz.value


@pytest.fixture
def server(tmp_path):
    if not ZEUS_CLI.exists():
        pytest.skip("build/bin/zeus is not built")
    (tmp_path / "solution.json").write_text(json.dumps([SCHEDULE]))
    log = tmp_path / "perseus-server.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([str(ZEUS_CLI), "perseus-server", "--listen", "127.0.0.1:0", "--no-dump",
                                 "--solution", str(tmp_path / "solution.json")], stderr=out)
    try:
        listening = wait_for_listening(log, proc, "zeus perseus-server: listening on ")
    except AssertionError:
        proc.kill()
        proc.wait()
        raise
    yield listening.url
    proc.terminate()
    proc.wait(timeout=30)


def test_schedule_clocks_are_locked_and_restored(sim, server):
    sim.start(a100s(1))
    from zeus_native.optimizer.pipeline_frequency import PipelineFrequencyOptimizer

    idle = clock(sim, 0)
    pfo = PipelineFrequencyOptimizer(rank=0, dp_rank=0, pp_rank=0, tp_rank=0, device_id=0, dp_degree=1,
                                     pp_degree=1, tp_degree=1, world_size=1, server_url=server, job_metadata="py")
    assert pfo.job_id.endswith("+dp1+pp1+tp1+PointSolution+py")
    assert pfo.freq_schedule == [tuple(item) for item in SCHEDULE]
    for _ in range(2):
        pfo.on_step_begin()
        for name, freq in SCHEDULE:
            pfo.on_instruction_begin(name)
            assert clock(sim, 0) == freq  # an idle simulated GPU runs at its locked minimum
            pfo.on_instruction_end(name)
        pfo.on_step_end()
    # 1410 is the maximum the controller starts at: per step 1200 and 1005, then 1410 again in step 2.
    assert pfo._native.frequency_changes == 2 + 3
    with pytest.raises(RuntimeError, match="expected instruction is forward, not backward"):
        pfo.on_instruction_begin("backward")
    pfo.on_instruction_begin("forward")
    with pytest.raises(RuntimeError, match="more frequencies than expected"):
        pfo.on_step_end()
    pfo.close()
    assert clock(sim, 0) == idle


def test_bad_arguments_and_unreachable_server(sim):
    sim.start(a100s(1))
    from zeus_native.optimizer.pipeline_frequency import PipelineFrequencyOptimizer

    with pytest.raises(ValueError, match="world_size must be at least 1"):
        PipelineFrequencyOptimizer(0, 0, 0, 0, 0, 1, 1, 1, 0, "http://127.0.0.1:9")
    with pytest.raises(RuntimeError):
        PipelineFrequencyOptimizer(0, 0, 0, 0, 0, 1, 1, 1, 1, "http://127.0.0.1:9")


def test_frequency_controller_locks_in_its_own_process_and_restores(sim):
    """The original's FrequencyController: each frequency sent is locked by its process; end()
    returns the clocks to the driver."""
    from conftest import wait_for
    from zeus_native.optimizer.pipeline_frequency.frequency_controller import FrequencyController

    sim.start(a100s(1))
    idle = clock(sim, 0)
    controller = FrequencyController(device_id=0)
    for mhz in (1200, 1005):
        controller.set_frequency(mhz)
        wait_for(lambda: clock(sim, 0) == mhz, f"the controller to lock {mhz} MHz")
    controller.set_frequency(0)  # nothing
    controller.end()
    controller._proc.join(timeout=30)
    assert controller._proc.exitcode == 0
    assert clock(sim, 0) == idle
