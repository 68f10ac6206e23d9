"""The original Zeus's agent skill file (skills/measuring-energy/SKILL.md, copied
verbatim into python/tests/original/, see the README there): its four Python
blocks type-check under mypy --strict and pyright's strict mode against
zeus_native, and run on the simulator, each in its own Python process, with
what they print and compute checked against the simulator's ground truth.

The blocks are found as the original's own test finds them (tests/test_skill_
examples.py: every ```python fence). Each is changed in two ways only, as the
original's examples are in test_original_examples.py:

1. rewrite_imports(): `zeus` becomes `zeus_native` in import statements (the
   only change for type-checking);
2. for the run, the changes this machine forces, each listed with its reason in
   RUN_CHANGES: the blocks' placeholder workloads (`def run_workload() -> None:
   ...`) become a stand-in that takes a known time while the test holds a load
   on the simulated GPUs, and the profiling block's durations are cut from
   minutes to seconds.

The sandbox's hardware is given through the environment, not the text: the
simulated GPUs (ZEUS_SIMULATE=1), a RAPL powercap tree (ZEUS_POWERCAP_ROOT) and a
Jetson sysfs tree (ZEUS_JETSON_SYSFS_ROOT) with idle stand-in values. A runner
executes each block as __main__ (runpy) and writes the values it computes but
does not print (a power timeline, the sweep reports) for the checks.
"""

from __future__ import annotations

import ast
import ctypes
import hashlib
import json
import math
import os
import re
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import ENERGY_PERIOD_S, Simulator, wait_for
from test_original_examples import Change, SimGpuStatus, fake_rapl_packages, rewrite_imports, substitute
from test_typing import _mypy, _pyright

SKILL = Path(__file__).parent / "original" / "skills" / "measuring-energy" / "SKILL.md"
SKILL_SHA256 = "f57ed360ae5d78407e7dbdb2f0aed84669c27778d4015e623fe120d339276b86"

# The four blocks, in order, by the import each opens with.
FIRST_IMPORTS = {"ZeusMonitor": "from zeus.monitor import ZeusMonitor",
                 "PowerMonitor": "from zeus.monitor import PowerMonitor",
                 "profile": "from zeus.monitor import ZeusMonitor\nfrom zeus.profile import measure, profile_parameters",
                 "device": "from zeus.device import get_gpus, get_cpus, get_soc"}
BLOCKS = tuple(FIRST_IMPORTS)


def python_blocks() -> list[str]:
    """Every ```python block of the skill file, as the original's test finds them."""
    return re.findall(r"```python\n(.*?)```", SKILL.read_text(encoding="utf-8"), flags=re.DOTALL)


def block(name: str) -> str:
    return python_blocks()[BLOCKS.index(name)]


def test_the_skill_file_is_the_pinned_original_with_four_python_blocks():
    digest = hashlib.sha256(SKILL.read_bytes()).hexdigest()
    assert digest == SKILL_SHA256, f"{SKILL} changed (sha256 {digest}): it is the original's file, verbatim"
    blocks = python_blocks()
    assert len(blocks) == len(BLOCKS), blocks
    for name, text in zip(BLOCKS, blocks):
        assert text.startswith(FIRST_IMPORTS[name] + "\n"), (name, text)


# --- type-checking ---------------------------------------------------------------------

STRICT_PYRIGHT = '{"typeCheckingMode": "strict"}\n'


@pytest.mark.parametrize("name", BLOCKS)
@pytest.mark.parametrize("checker", [_mypy, _pyright], ids=["mypy-strict", "pyright-strict"])
def test_block_type_checks_strictly(checker, name, tmp_path):
    """0 errors, with only the imports changed: mypy --strict (test_typing's _mypy) and
    pyright in strict mode (its pyrightconfig.json in the folder it runs in)."""
    source = rewrite_imports(block(name))
    assert "zeus_native" in source and not re.search(r"\bzeus\.", source), source
    example = tmp_path / f"skill_{name.lower()}.py"
    example.write_text(source)
    (tmp_path / "pyrightconfig.json").write_text(STRICT_PYRIGHT)
    code, output = checker(example, tmp_path)
    assert code == 0, f"{output}\n--- {example.name}:\n{source}"
    assert not re.search(r"\b[1-9]\d* errors?\b", output), output


def test_pyright_strict_mode_is_on_in_the_check(tmp_path):
    """The strict configuration reaches pyright: a missing parameter annotation, which
    its basic mode accepts, is an error in the folder the checks run in."""
    example = tmp_path / "untyped.py"
    example.write_text("def f(x):\n    return x\n")
    (tmp_path / "pyrightconfig.json").write_text(STRICT_PYRIGHT)
    code, output = _pyright(example, tmp_path)
    assert code != 0 and "untyped.py:1" in output, output


# --- the runs ----------------------------------------------------------------------------

PLACEHOLDER = "def run_workload() -> None: ..."
STAND_IN_WORKLOAD = "from skill_stand_in import run_workload"
WORKLOAD_WHY = ("the block's placeholder workload: the stand-in sleeps WORKLOAD_S while the test holds a load on "
                "the simulated GPUs (this machine has none to run work on)")

RUN_CHANGES = {
    "ZeusMonitor": [Change(PLACEHOLDER, STAND_IN_WORKLOAD, WORKLOAD_WHY)],
    "PowerMonitor": [Change(PLACEHOLDER, STAND_IN_WORKLOAD, WORKLOAD_WHY)],
    "profile": [
        Change("def one_iteration() -> None: ...", "from skill_stand_in import one_iteration",
               "the block's placeholder iteration: the stand-in sleeps ITERATION_S (as above)"),
        Change("profile_parameters(one_iteration, monitor)",
               "profile_parameters(one_iteration, monitor, [0.2, 0.4], [0.0, 0.1], num_trials=2, "
               "num_warmup_trials=1)",
               "short run: the default search ranges (1-10 s each, 10 trials per value) take about 50 minutes"),
        Change("measurement_duration=5.0, cooldown_duration=10.0", "measurement_duration=1.0, cooldown_duration=0.5",
               "short run: 1.5 s instead of 15 s"),
    ],
    "device": [],
}
SWEPT_MEASUREMENTS, SWEPT_COOLDOWNS = [0.2, 0.4], [0.0, 0.1]
WORKLOAD_S = 1.0
ITERATION_S = 0.01

STAND_IN = f'''
import time

WORKLOAD_S = {WORKLOAD_S}
ITERATION_S = {ITERATION_S}


def run_workload() -> None:
    time.sleep(WORKLOAD_S)


def one_iteration() -> None:
    time.sleep(ITERATION_S)
'''

# Runs the block as __main__ and writes what it computed (the globals named on the
# command line, as JSON: dataclasses and objects as their fields).
RUNNER = '''
import dataclasses, json, runpy, sys

def plain(value):
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value

found = runpy.run_path(sys.argv[1], run_name="__main__")
with open(sys.argv[2], "w") as out:
    json.dump({name: plain(found[name]) for name in sys.argv[3:]}, out)
'''

# Two A100s with a power that depends on the load only (no temperature leakage)
# and readings without noise, so that a window's energy is power x time.
CONFIG = {"clock": "real", "gpus": [{"model": "A100-SXM4-40GB", "count": 2, "initial_energy_mj": 0,
                                     "power": {"leakage_w_per_c": 0.0}, "counters": {"power_noise_w": 0.0}}]}
POWER_PERIOD_S = 0.1  # the A100's power sensor refresh period (docs/simulator.md)
LOADS = (0.5, 1.0)  # GPU 0 and GPU 1: different powers, so the two cannot be swapped unseen


def test_run_changes_are_only_the_listed_ones():
    """Every changed line of a block is one of its listed changes (the rest is the original's)."""
    for name in BLOCKS:
        original = rewrite_imports(block(name))
        changed = substitute(original, RUN_CHANGES[name])
        allowed = {change.new for change in RUN_CHANGES[name]}
        for before, after in zip(original.splitlines(), changed.splitlines(), strict=True):
            assert before == after or any(a in after for a in allowed), (name, before, after)


class Run:
    """One block's process: its stdout and the globals it computed."""

    def __init__(self, stdout: str, values: dict, started: float, ended: float) -> None:
        self.stdout, self.values, self.started, self.ended = stdout, values, started, ended

    def printed(self) -> list[str]:
        return self.stdout.splitlines()


def run_block(name: str, tmp_path: Path, values: tuple[str, ...] = (), env: dict[str, str] | None = None) -> Run:
    script = tmp_path / f"skill_{name.lower()}.py"
    script.write_text(substitute(rewrite_imports(block(name)), RUN_CHANGES[name]))
    (tmp_path / "skill_stand_in.py").write_text(STAND_IN)
    (tmp_path / "runner.py").write_text(RUNNER)
    out = tmp_path / "values.json"
    started = time.time()
    done = subprocess.run([sys.executable, str(tmp_path / "runner.py"), str(script), str(out), *values],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(tmp_path), **(env or {})})
    ended = time.time()
    assert done.returncode == 0, f"exit code {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    assert "Traceback" not in done.stderr, done.stderr
    print(done.stdout[-3000:], done.stderr[-3000:], sep="\n")  # shown for a failed assert after this
    return Run(done.stdout, json.loads(out.read_text()), started, ended)


def sim_status(sim: Simulator, gpu: int) -> SimGpuStatus:
    status = SimGpuStatus(size=ctypes.sizeof(SimGpuStatus))
    assert sim.lib.zeusSimGetGpuStatus(ctypes.c_uint(gpu), ctypes.byref(status)) == 0
    return status


def sensors_show_the_load(sim: Simulator) -> bool:
    """Whether every GPU's power reading is its (loaded) true power and its energy counter
    has refreshed since the load began: the sensors lag the truth by up to a period."""
    statuses = [sim_status(sim, gpu) for gpu in range(len(LOADS))]
    return all(s.instant_power_reading_w == pytest.approx(s.true_power_w, abs=0.01) and s.energy_counter_mj > 0
               for s in statuses)


@pytest.fixture
def loaded(sim: Simulator):
    """The two simulated GPUs, each under its load of LOADS for the whole test, with
    their sensors showing it."""
    sim.start(CONFIG)
    loads = [sim.load(gpu, utilization) for gpu, utilization in enumerate(LOADS)]
    wait_for(lambda: sensors_show_the_load(sim), "the simulated GPUs' sensors to show their load")
    yield sim
    for load in loads:
        sim.unload(load)


def powers(sim: Simulator) -> dict[int, float]:
    power = {gpu: sim.true_power(gpu) for gpu in range(len(LOADS))}
    assert power[0] < power[1], power  # the loads make them differ
    return power


def edge_bound(watts: float) -> float:
    """How far a window's counter energy may be from power x time (conftest.energy_bound)."""
    return 2 * watts * ENERGY_PERIOD_S + 0.002


def test_zeus_monitor_block(loaded, tmp_path):
    """One window over the workload on GPUs 0 and 1: the printed time and energies, and
    each GPU's energy is its true power over the window's time; the total is their sum."""
    power = powers(loaded)
    run = run_block("ZeusMonitor", tmp_path, values=("result",))
    first, second = run.printed()
    seconds, total = (float(x) for x in re.fullmatch(r"(\S+) s, (\S+) J", first).groups())
    gpu_energy = ast.literal_eval(second)
    result = run.values["result"]
    assert seconds == result["time"] and gpu_energy == {int(k): v for k, v in result["gpu_energy"].items()}
    assert 0 < seconds <= run.ended - run.started, (seconds, run.ended - run.started)
    assert set(gpu_energy) == {0, 1}, gpu_energy
    for gpu, joules in gpu_energy.items():
        assert abs(joules - power[gpu] * seconds) <= edge_bound(power[gpu]), (gpu, joules, power[gpu], seconds)
    assert total == pytest.approx(sum(gpu_energy.values()))


def test_power_monitor_block(loaded, tmp_path):
    """get_power() prints GPU 0's true power; every sample of the device_instant timeline
    is that power, at increasing time.time() stamps within the process's life (less a
    sensor period)."""
    power = powers(loaded)
    run = run_block("PowerMonitor", tmp_path, values=("timeline",))
    (printed,) = run.printed()
    latest = ast.literal_eval(printed)
    assert set(latest) == {0} and latest[0] == pytest.approx(power[0], abs=0.01), (latest, power)
    samples = run.values["timeline"]["0"]
    assert samples and set(run.values["timeline"]) == {"0"}, run.values
    stamps = [t for t, _ in samples]
    # A reading is dated when the sensor refreshed it: up to one sensor period before it was polled.
    assert stamps == sorted(stamps), stamps
    assert run.started - POWER_PERIOD_S <= stamps[0] and stamps[-1] <= run.ended, (stamps, run.started, run.ended)
    assert all(w == pytest.approx(power[0], abs=0.01) for _, w in samples), (samples, power)


def test_profile_block(loaded, tmp_path):
    """measure(): the printed per-iteration figures are the trial's totals over its
    iterations, and the trial's energy is GPU 0's true power over its time. The sweeps:
    each holds the other duration at the maximum of its range, each entry's mean and
    standard deviation are those of its trials' energy per iteration, valid when the
    deviation is under the default threshold (0.01 J), and every trial's energy is power
    over its time."""
    power = powers(loaded)[0]
    temperature = loaded.temperature(0)
    run = run_block("profile", tmp_path, values=("trial", "measurement_report", "cooldown_report"))
    (printed,) = run.printed()
    per_iter, per_iter_time = (float(x) for x in re.fullmatch(r"(\S+) J/iter, (\S+) s/iter", printed).groups())
    trial = run.values["trial"]
    assert (per_iter, per_iter_time) == (trial["energy_per_iter"], trial["time_per_iter"])
    check_trial(trial, power, temperature)

    measured, cooled = run.values["measurement_report"], run.values["cooldown_report"]
    assert measured["sweep_param"] == ["measurement_duration", SWEPT_MEASUREMENTS], measured
    assert measured["fixed_param"] == ["cooldown_duration", max(SWEPT_COOLDOWNS)], measured
    assert cooled["sweep_param"] == ["cooldown_duration", SWEPT_COOLDOWNS], cooled
    assert cooled["fixed_param"] == ["measurement_duration", max(SWEPT_MEASUREMENTS)], cooled
    assert [e["measurement_duration"] for e in measured["entries"]] == SWEPT_MEASUREMENTS
    assert [e["cooldown_duration"] for e in cooled["entries"]] == SWEPT_COOLDOWNS
    for entry in measured["entries"] + cooled["entries"]:
        trials = entry["trials"]
        assert len(trials) == 2, entry
        for t in trials:
            check_trial(t, power, temperature)
        energies = [t["energy_per_iter"] for t in trials]
        assert entry["energy_mean"] == pytest.approx(statistics.mean(energies)), entry
        assert entry["energy_std"] == pytest.approx(statistics.stdev(energies)), entry
        assert entry["is_valid"] == (entry["energy_std"] < 0.01), entry
    # One calibrated iteration time for every trial: a measurement's iteration count
    # depends on its duration only, and twice the duration is at least twice the count.
    short, long = ([t["iterations"] for t in e["trials"]] for e in measured["entries"])
    assert len(set(short)) == 1 and len(set(long)) == 1 and long[0] >= 2 * short[0], (short, long)


def check_trial(trial: dict, power: float, temperature: float) -> None:
    iterations = trial["iterations"]
    assert iterations >= 1, trial
    assert trial["energy_per_iter"] == pytest.approx(trial["total_energy"] / iterations), trial
    assert trial["time_per_iter"] == pytest.approx(trial["total_time"] / iterations), trial
    assert abs(trial["total_energy"] - power * trial["total_time"]) <= edge_bound(power), (trial, power)
    # NVML reports whole degrees; the load heats the GPU only after the test's first reading.
    assert trial["temperature_before"] >= math.floor(temperature) - 1, (trial, temperature)
    assert trial["temperature_after"] >= trial["temperature_before"] - 1, trial


def sim_counter_mj(sim: Simulator, gpu: int) -> int:
    return sim_status(sim, gpu).energy_counter_mj


JETSON_RAIL_MW = 5000  # the stand-in Jetson's VDD_IN rail


def fake_jetson(sys_root: Path) -> Path:
    """A Jetson's /sys with one INA3221 rail (L4T 32's IIO layout, power in mW), the
    device linked from the driver's folder as the kernel does."""
    device = sys_root / "devices" / "platform" / "1-0040"
    rails = device / "iio:device0"
    rails.mkdir(parents=True)
    (rails / "rail_name_0").write_text("VDD_IN\n")
    (rails / "in_power0_input").write_text(f"{JETSON_RAIL_MW}\n")
    driver = sys_root / "bus" / "i2c" / "drivers" / "ina3221x"
    driver.mkdir(parents=True)
    (driver / "1-0040").symlink_to(device, target_is_directory=True)
    return sys_root


def test_device_block(loaded, tmp_path):
    """get_gpus: GPU 0's name, its instant power (mW) and its energy counter (mJ, between
    the simulator's counter before and after the run). get_cpus: the stand-in RAPL
    package's energy since the set was opened (zeus_native's CPU counters start there;
    the original's is the raw energy_uj counter): 0, as its counter stands still.
    get_soc: the stand-in Jetson's one rail (a total) integrated since it was opened:
    at most its power over the process's life; no CPU or GPU rail."""
    power = powers(loaded)[0]
    counter_before = sim_counter_mj(loaded, 0)
    env = {"ZEUS_POWERCAP_ROOT": str(fake_rapl_packages(tmp_path / "powercap", 1)),
           "ZEUS_JETSON_SYSFS_ROOT": str(fake_jetson(tmp_path / "jetson-sys"))}
    run = run_block("device", tmp_path, env=env)
    counter_after = sim_counter_mj(loaded, 0)
    name, instant_mw, energy_mj, cpu_mj, soc = run.printed()
    assert name == "NVIDIA A100-SXM4-40GB"
    assert float(instant_mw) == pytest.approx(power * 1000, abs=10), (instant_mw, power)
    assert counter_before <= float(energy_mj) <= counter_after, (energy_mj, counter_before, counter_after)
    assert float(cpu_mj) == 0.0
    fields = re.fullmatch(r"JetsonMeasurement\(cpu_energy_mj=None, gpu_energy_mj=None, total_energy_mj=(\S+)\)", soc)
    assert fields, soc
    assert 0 <= float(fields.group(1)) <= JETSON_RAIL_MW * (run.ended - run.started), soc
