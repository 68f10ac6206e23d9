"""zeus_native.integrations: a training run's energy (carbon, cost) logged to
trackers with its provenance.

In this process, over the simulator's virtual clock and a recording tracker:
what a window logs against ground truth (carbon and cost from the logged
joules and the provider's rate), Ctrl-C inside the loop, a device or tracker
that is unavailable or fails (warnings, the loop runs on).

The same entry points against the real trackers are in test_trackers.py.
"""

from __future__ import annotations

import json
import sys
import warnings

import pytest

from conftest import a100s, energy_bound

class Recorder:
    """A tracker that keeps what it is given."""

    name = "recorder"

    def __init__(self) -> None:
        self.records = []
        self.events = []

    def start(self) -> None:
        self.events.append("start")

    def log(self, record) -> None:
        self.records.append(record)

    def close(self, interrupted: bool) -> None:
        self.events.append(("close", interrupted))


def by_window(recorder: Recorder) -> dict:
    return {(r.window, r.step): r for r in recorder.records}


# ---------------------------------------------------------------- in process


def test_windows_and_total_against_ground_truth_with_carbon_and_cost(sim):
    from zeus_native.integrations import EnergyLogger
    from zeus_native.monitor.carbon import ConstantCarbonIntensity
    from zeus_native.monitor.price import ConstantPrice

    sim.start(a100s(2))
    recorder = Recorder()
    g_per_kwh, per_kwh = 420.0, 0.25
    logger = EnergyLogger(recorder, gpu_indices=[0, 1], carbon_intensity=ConstantCarbonIntensity(g_per_kwh, "DE"),
                          electricity_price=ConstantPrice(per_kwh, "EUR"))
    truth = {"run": [sim.truth(0), sim.truth(1)]}
    with logger:
        for epoch, utilization in enumerate((0.9, 0.3)):
            before = [sim.truth(0), sim.truth(1)]
            with logger.window("epoch", step=epoch):
                load = sim.load(0, utilization)
                sim.advance(20.0)
                sim.unload(load)
            truth[epoch] = [sim.truth(g) - b for g, b in enumerate(before)]
    truth["run"] = [sim.truth(g) - b for g, b in enumerate(truth["run"])]

    records = by_window(recorder)
    assert set(records) == {("epoch", 0), ("epoch", 1), ("run", None)}
    assert recorder.events == ["start", ("close", False)]
    for key, window in ((0, ("epoch", 0)), (1, ("epoch", 1)), ("run", ("run", None))):
        record = records[window]
        base = f"energy/{record.window}/"
        m = record.metrics
        for gpu in (0, 1):
            assert abs(m[f"{base}gpu{gpu}_j"] - truth[key][gpu]) <= energy_bound(sim, gpu), (key, m)
        assert m[f"{base}gpu_total_j"] == pytest.approx(m[f"{base}gpu0_j"] + m[f"{base}gpu1_j"], rel=1e-12)
        assert m[f"{base}total_j"] == pytest.approx(m[f"{base}gpu_total_j"], rel=1e-12)  # no RAPL here
        assert m[f"{base}avg_power_w"] == pytest.approx(m[f"{base}total_j"] / m[f"{base}time_s"], rel=1e-12)
        # Carbon and cost: the logged joules at the provider's rate (one UTC hour, one rate).
        kwh = m[f"{base}total_j"] / 3.6e6
        assert m[f"{base}carbon_gco2eq"] == pytest.approx(kwh * g_per_kwh, rel=1e-6)
        assert m[f"{base}cost"] == pytest.approx(kwh * per_kwh, rel=1e-6)
        assert m[f"{base}gpu0_gco2eq"] == pytest.approx(m[f"{base}gpu0_j"] / 3.6e6 * g_per_kwh, rel=1e-6)
        assert record.provenance["carbon"]["provider"] == "constant" and record.provenance["carbon"]["zone"] == "DE"
        assert record.provenance["cost"]["unit"].startswith("EUR")
        assert record.provenance["devices"]["gpu"]["0"]["source"]
        assert record.provenance["interrupted"] is False
    assert records[("epoch", 0)].metrics["energy/epoch/time_s"] == pytest.approx(20.0, abs=0.01)
    assert records[("run", None)].metrics["energy/run/time_s"] >= 40.0


def test_ctrl_c_inside_the_loop_logs_the_epoch_cut_short_and_the_total(sim):
    from zeus_native.integrations import EnergyLogger

    sim.start(a100s(1))
    recorder = Recorder()
    start = sim.truth(0)
    with pytest.raises(KeyboardInterrupt):
        with EnergyLogger(recorder, gpu_indices=[0]) as energy:
            for epoch in range(3):
                with energy.window("epoch", step=epoch):
                    sim.advance(5.0)
                    if epoch == 1:
                        raise KeyboardInterrupt
    records = by_window(recorder)
    assert set(records) == {("epoch", 0), ("epoch", 1), ("run", None)}
    assert [records[("epoch", e)].interrupted for e in (0, 1)] == [False, True]
    assert records[("epoch", 1)].provenance["interrupted"] is True
    total = records[("run", None)]
    assert total.interrupted and total.provenance["interrupted"] is True
    assert abs(total.metrics["energy/run/gpu0_j"] - (sim.truth(0) - start)) <= energy_bound(sim, 0)
    assert recorder.events == ["start", ("close", True)]


def test_a_logger_closed_and_started_again_logs_a_second_run(sim):
    """As a callback's after a train() that stopped on an exception the program caught."""
    from zeus_native.integrations import EnergyLogger

    sim.start(a100s(1))
    recorder = Recorder()
    logger = EnergyLogger(recorder, gpu_indices=[0])
    for seconds in (3.0, 7.0):
        with logger:
            with logger.window("epoch", step=0):
                sim.advance(seconds)
    runs = [r for r in recorder.records if r.window == "run"]
    assert [round(r.metrics["energy/run/time_s"]) for r in runs] == [3, 7]
    assert recorder.events == ["start", ("close", False)] * 2


def test_a_long_runs_provenance_fits_an_mlflow_tag():
    """A week of hourly rates does not fit MLflow's tag limit: the hours are counted, not listed."""
    from zeus_native.integrations._energy import compact_provenance

    hours = [{"hour": 3600.0 * h, "per_kwh": 400.0, "energy": 1e6, "amount": 111.1} for h in range(168)]
    provenance = {"window": "run", "devices": {"gpu": {"0": {"source": "hardware counter", "warnings": []}}},
                  "carbon": {"provider": "constant", "zone": "DE", "hours": hours}}
    assert len(json.dumps(provenance)) > 5000
    text = compact_provenance(provenance, 5000)
    assert len(text) <= 5000
    compact = json.loads(text)
    assert compact["carbon"]["hours_count"] == 168 and "hours" not in compact["carbon"] and compact["truncated"]
    assert compact["carbon"]["zone"] == "DE" and compact["devices"] == provenance["devices"]
    assert json.loads(compact_provenance({"window": "epoch"}, 5000)) == {"window": "epoch"}
    many_warnings = {"window": "run", "step": None, "warnings": ["counter reset"] * 1000}
    assert json.loads(compact_provenance(many_warnings, 200)) == {
        "measured_by": None, "window": "run", "step": None, "interrupted": None, "time_s": None, "truncated": True}


def test_an_unavailable_device_is_a_warning_and_the_loop_runs(sim):
    from zeus_native.integrations import EnergyLogger

    sim.start(a100s(1))
    recorder = Recorder()
    with pytest.warns(RuntimeWarning, match="energy is not measured.*program runs on"):
        logger = EnergyLogger(recorder, gpu_indices=[3])
    assert not logger.measuring
    with logger:
        logger.begin_window("epoch", step=0)
        sim.advance(1.0)
        assert logger.end_window("epoch") is None
    assert recorder.records == []
    assert recorder.events == ["start", ("close", False)]


def test_an_unavailable_tracker_is_a_warning_and_energy_is_still_measured(sim, monkeypatch):
    from zeus_native.integrations.mlflow import MLflowEnergyLogger
    from zeus_native.integrations.wandb import WandbEnergyLogger

    sim.start(a100s(1))
    monkeypatch.setitem(sys.modules, "mlflow", None)  # import mlflow raises ImportError
    monkeypatch.setitem(sys.modules, "wandb", None)
    for make, name in ((MLflowEnergyLogger, "mlflow"), (WandbEnergyLogger, "wandb")):
        with pytest.warns(RuntimeWarning, match=f"{name} cannot be imported.*pip install {name}"):
            logger = make(gpu_indices=[0])
        assert not logger.tracker.available
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # nothing more to warn about: the logger just logs nowhere
            with logger:
                logger.begin_window("epoch", step=0)
                sim.advance(2.0)
                record = logger.end_window("epoch")
        assert record is not None and record.metrics["energy/epoch/gpu0_j"] > 0


def test_a_failing_tracker_is_a_warning_and_the_others_still_get_the_record(sim):
    from zeus_native.integrations import EnergyLogger

    class Broken(Recorder):
        name = "broken"

        def log(self, record) -> None:
            raise ConnectionError("the tracking server is down")

    sim.start(a100s(1))
    broken, recorder = Broken(), Recorder()
    with pytest.warns(RuntimeWarning, match="broken log failed.*the tracking server is down"):
        with EnergyLogger(broken, recorder, gpu_indices=[0]) as energy:
            with energy.window("epoch", step=0):
                sim.advance(1.0)
    assert set(by_window(recorder)) == {("epoch", 0), ("run", None)}
