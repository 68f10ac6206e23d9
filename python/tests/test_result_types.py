"""The result types are real dataclasses, keys are any hashable, user providers work (issue 22 §2)."""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import math
import pickle
import subprocess
import sys

import pytest

from conftest import a100s, energy_bound
from test_carbon import sim_unix


def _window(sim, key="w", seconds=2.0):
    from zeus_native.monitor import ZeusMonitor

    monitor = ZeusMonitor(gpu_indices=[0, 1])
    load = sim.load(0, 0.8)
    t0 = [sim.truth(g) for g in range(2)]
    monitor.begin_window(key)
    sim.advance(seconds)
    m = monitor.end_window(key)
    t1 = [sim.truth(g) for g in range(2)]
    sim.unload(load)
    return monitor, m, [b - a for a, b in zip(t0, t1)]


def test_measurement_is_a_dataclass_that_pickles_copies_and_compares(sim):
    from zeus_native.monitor import Measurement

    sim.start(a100s(2))
    _monitor, m, truth = _window(sim)
    assert dataclasses.is_dataclass(m) and isinstance(m, Measurement)
    assert [f.name for f in dataclasses.fields(Measurement)][:5] == [
        "time", "gpu_energy", "cpu_energy", "dram_energy", "soc_energy"]  # the original's, in its order
    for g in range(2):
        assert abs(m.gpu_energy[g] - truth[g]) <= energy_bound(sim, g)
    assert m.total_energy == pytest.approx(sum(m.gpu_energy.values()))
    as_dict = dataclasses.asdict(m)
    assert as_dict["time"] == m.time and as_dict["gpu_energy"] == m.gpu_energy
    assert list(as_dict) == ["time", "gpu_energy", "cpu_energy", "dram_energy", "soc_energy"]  # the original's
    assert m.provenance["gpu"][0]["source"] == "hardware counter"
    for clone in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m), copy.copy(m)):
        assert clone == m and clone is not m
        assert clone.to_json() == m.to_json() and clone.to_csv() == m.to_csv()  # provenance survives
        assert clone.warnings == m.warnings
    assert Measurement(1.5, {0: 10.0}) == Measurement(1.5, {0: 10.0})
    assert Measurement(1.5, {0: 10.0}) != Measurement(1.5, {0: 11.0})
    lost = Measurement(1.0, {0: float("nan"), 1: 5.0})
    assert lost.lost_gpus == [0] and lost.total_energy == 5.0 and math.isnan(lost.gpu_energy[0])


def test_window_keys_are_any_hashable_as_in_the_original(sim):
    from zeus_native.monitor import ZeusMonitor

    sim.start(a100s(1))
    monitor = ZeusMonitor(gpu_indices=[0])
    for key in (123, ("epoch", 3), 1.5):
        monitor.begin_window(key)
    sim.advance(1.0)
    assert monitor.end_window(("epoch", 3)).time == pytest.approx(1.0, abs=1e-3)
    assert monitor.end_window(123).time == pytest.approx(1.0, abs=1e-3)
    with pytest.raises(ValueError):
        monitor.end_window("123")  # the int key and the str key are different windows
    assert monitor.end_window(1.5).time > 0
    with pytest.raises(TypeError):
        monitor.begin_window(["a list"])


def test_profile_results_are_constructible_dataclasses():
    from zeus_native.profile import SweepReport, SweepResult, TrialResult

    trial = TrialResult(2.0, 0.1, 20.0, 1.0, 10, 40.0, 45.0)
    entry = SweepResult(1.0, 5.0, [trial], 2.0, 0.0, 40.0, 45.0, 1.0, 20.0, True)
    report = SweepReport(("measurement_duration", [1.0]), ("cooldown_duration", 5.0), [entry])
    for value in (trial, entry, report):
        assert dataclasses.is_dataclass(value)
        assert pickle.loads(pickle.dumps(value)) == value == copy.deepcopy(value)
    assert dataclasses.asdict(report)["entries"][0]["trials"][0]["iterations"] == 10
    # The original's formats (zeus.profile.SweepResult.__str__ / SweepReport.__str__).
    assert str(entry) == ("measurement=1.0 s  cooldown=5.0 s  mean=2.0000 J  std=0.0000 J  "
                          "temp_before=40.0 \u00b0C  temp_after=45.0 \u00b0C  [VALID]")
    assert str(report).splitlines() == [
        "Sweep measurement_duration (fixed cooldown_duration=5.0 s):",
        "  measurement_duration=1.0 s  mean=2.0000 J  std=0.0000 J  temp_before=40.0 \u00b0C  "
        "temp_after=45.0 \u00b0C  [VALID]"]


def _user_provider(intensity_at):
    """A user's own provider: the original's abstract CarbonIntensityProvider, subclassed."""
    from zeus_native.monitor.carbon import CarbonIntensityProvider

    class MyGrid(CarbonIntensityProvider):
        def get_current_carbon_intensity(self) -> float:
            raise AssertionError("the window's hours come from get_recent_carbon_intensity")

        def get_recent_carbon_intensity(self):
            return dict(intensity_at)

        @property
        def update_period(self):
            return dt.timedelta(hours=1)

        @property
        def history_length(self):
            return len(intensity_at)

    return MyGrid()


def test_a_user_written_carbon_intensity_provider_prices_windows(sim):
    from zeus_native.monitor import CarbonEmissionMeasurement, CarbonEmissionMonitor

    sim.start(a100s(1))
    if 3600 - sim_unix(sim) % 3600 < 120:  # the window must fit in one hour
        sim.advance(3600 - sim_unix(sim) % 3600 + 1)
    now = sim_unix(sim)
    hour = int(now // 3600) * 3600
    table = {dt.datetime.fromtimestamp(hour + k * 3600, tz=dt.timezone.utc): 100.0 + k for k in range(-3, 3)}
    monitor = CarbonEmissionMonitor(_user_provider(table), gpu_indices=[0])
    load = sim.load(0, 0.7)
    t0 = sim.truth(0)
    monitor.begin_window("train")
    sim.advance(min(60.0, hour + 3600 - now - 1))  # inside the current hour
    m = monitor.end_window("train")
    energy = sim.truth(0) - t0
    sim.unload(load)
    assert isinstance(m, CarbonEmissionMeasurement) and dataclasses.is_dataclass(m)
    assert m.provenance["provider"] == "python MyGrid"
    assert m.gpu_carbon_emission is not None, (m.provenance["unavailable_reason"], m.provenance["warnings"])
    bound = energy_bound(sim, 0) * 100.0 / 3.6e6
    assert m.gpu_carbon_emission[0] == pytest.approx(energy * 100.0 / 3.6e6, abs=bound)
    assert pickle.loads(pickle.dumps(m)) == m and dataclasses.asdict(m)["gpu_energy"] == m.gpu_energy


def test_a_user_provider_that_raises_is_a_clear_error_not_a_crash(sim):
    from zeus_native.monitor import CarbonEmissionMonitor
    from zeus_native.monitor.carbon import CarbonIntensityProvider

    class Broken(CarbonIntensityProvider):
        def get_current_carbon_intensity(self) -> float:
            raise ConnectionError("grid API down")

        def get_recent_carbon_intensity(self):
            raise ConnectionError("grid API down")

    sim.start(a100s(1))
    monitor = CarbonEmissionMonitor(Broken(), gpu_indices=[0])
    monitor.begin_window("w")
    sim.advance(1.0)
    m = monitor.end_window("w")
    assert m.gpu_carbon_emission is None
    assert "grid API down" in " ".join(m.warnings) + str(m.provenance), m.provenance


def test_hf_optimizer_is_a_class_and_importing_the_module_does_not_import_transformers():
    code = ("import sys, zeus_native.optimizer.power_limit, zeus_native.optimizer; "
            "assert 'transformers' not in sys.modules, 'imported transformers'; "
            "from zeus_native.optimizer.power_limit import HFGlobalPowerLimitOptimizer as H; "
            "assert isinstance(H, type) and H.__name__ == 'HFGlobalPowerLimitOptimizer'")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def test_power_log_energy_and_average_power_follow_the_trapezoid_rule(tmp_path):
    """zeus.utils.metric.energy / avg_power over a power log, computed here by hand."""
    from zeus_native.utils.metric import avg_power, energy

    log = tmp_path / "power.csv"
    # 0-2 s at 100 W, then a ramp to 300 W at 4 s; the last line is the log's summary.
    log.write_text("Time,Power\n"
                   "2024-01-01 00:00:00.000000,100000\n"
                   "2024-01-01 00:00:02.000000,100000\n"
                   "2024-01-01 00:00:04.000000,300000\n"
                   "summary,0\n")
    assert energy(log) == pytest.approx(2 * 100 + 2 * 200)
    assert energy(log, start=2.0) == pytest.approx(400.0)
    assert energy(log, start=-2.0) == pytest.approx(400.0)  # from the end, as the original
    assert avg_power(log) == pytest.approx(600 / 4)
    assert avg_power(log, end=2.0) == pytest.approx(100.0)
    with pytest.raises(ValueError, match="At least 2 points"):
        energy(log, start=3.0)


def test_openei_search_json_and_time_info():
    from zeus_native.monitor.price import OpenEIClient, get_time_info

    data = {"items": [{"label": "a", "rates": 1}, {"label": "b", "rates": 2, "sub": {"label": "b"}}]}
    client = OpenEIClient.__new__(OpenEIClient)
    assert client.search_json(data, "label", "b", "rates") == [2, None]
    month, day_type, hour = get_time_info()
    assert day_type in ("Weekday", "Weekend") and 0 <= hour < 24 and month.isalpha()


def test_batch_size_wire_models_check_like_the_original():
    from zeus_native.optimizer.batch_size.common import (
        CreatedJob, GpuConfig, JobParams, JobSpecFromClient, ReportResponse, TrainingResult, TrialId)

    spec = dict(job_id_prefix="mnist", batch_sizes=[64, 32], default_batch_size=32)
    with pytest.raises(ValueError, match="job_id: field required"):
        JobParams(**spec)
    job = CreatedJob(job_id="mnist-1", max_power=300.0, number_of_gpus=2, gpu_model="A100", **spec)
    assert job.batch_sizes == [32, 64] and job.dict()["gpu_model"] == "A100"
    with pytest.raises(ValueError, match="max_power"):
        JobSpecFromClient(max_power=0, number_of_gpus=1, gpu_model="A100", **spec)
    with pytest.raises(ValueError, match="number_of_gpus"):
        GpuConfig(300.0, 0, "A100")
    result = TrainingResult("mnist-1", 32, 1, time=2.0, energy=5.0, metric=0.9, current_epoch=3)
    assert isinstance(result, TrialId) and dataclasses.asdict(result)["energy"] == 5.0
    assert ReportResponse(stop_train=True, converged=False, message="m").stop_train
