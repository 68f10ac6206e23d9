"""The power-limit optimizer (seed README loop), selectors, callbacks, zeus_cost and the profiler."""

from __future__ import annotations

import json
import time

import pytest

from conftest import a100s
from zeus_native.optimizer.power_limit import Done

SEED_LOOP = '''
from zeus_native.monitor import ZeusMonitor
from zeus_native.optimizer import GlobalPowerLimitOptimizer

monitor = ZeusMonitor(gpu_indices=[0,1,2,3])
plo = GlobalPowerLimitOptimizer(monitor)

plo.on_epoch_begin()

for x, y in train_dataloader:
    plo.on_step_begin()
    # Learn from x and y!
    plo.on_step_end()

plo.on_epoch_end()
'''


def test_seed_power_limit_loop_runs_unchanged_and_picks_the_zeus_cost_optimum(sim):
    sim.start(a100s(4))
    loads = [sim.load(g, 1.0) for g in range(4)]

    def train_dataloader_of(steps):
        for step in range(steps):
            sim.advance(0.05)  # one training step's worth of simulated time under full load
            yield step, step

    # 13 limits (400 W down to 100 W by 25 W), 1 wait step, 10 + 40 steps each.
    scope = {"train_dataloader": train_dataloader_of(1 + 13 * 50 + 5)}
    exec(SEED_LOOP, scope)
    plo, monitor = scope["plo"], scope["monitor"]
    assert isinstance(plo.state, Done)
    rows = plo.measurements
    assert [m.power_limit for m in rows] == list(range(400, 99, -25))  # W, as the original's
    assert plo.power_limits == list(range(400_000, 99_999, -25_000))  # mW, as the original's
    assert plo.pl_step == 25_000 and plo.warmup_steps == 10 and plo.profile_steps == 40
    # ZeusCost(eta 0.5, world size 4), computed here from the measurements.
    max_power = max(m.power_limit for m in rows) * 4
    cost = {m.power_limit: 0.5 * m.energy + 0.5 * max_power * m.time for m in rows}
    assert plo.optimal_power_limit == min(cost, key=cost.get) * 1000  # mW, as the original's
    assert plo.state == Done(optimal_power_limit=plo.optimal_power_limit)
    assert plo.current_power_limit == plo.optimal_power_limit
    for g in range(4):
        assert monitor.gpus.get_power_management_limit(g) == plo.optimal_power_limit
    assert "ZeusCost" in plo.report() or "zeus-cost" in plo.report()
    plo.close()
    for g in range(4):  # the limit in force before the optimizer comes back
        assert monitor.gpus.get_power_management_limit(g) == 400_000
    for load in loads:
        sim.unload(load)


def test_optimizer_bad_arguments_and_saved_profile(sim, tmp_path):
    sim.start(a100s(1))
    from zeus_native.monitor import ZeusMonitor
    from zeus_native.optimizer.power_limit import Energy, GlobalPowerLimitOptimizer

    monitor = ZeusMonitor()
    with pytest.raises(ValueError, match="profile_steps"):
        GlobalPowerLimitOptimizer(monitor, profile_steps=0)
    with pytest.raises(ValueError, match="pl_step"):
        GlobalPowerLimitOptimizer(monitor, pl_step=0)
    path = tmp_path / "profile.json"
    rows = [{"power_limit": 300, "energy": 50.0, "time": 1.0}, {"power_limit": 200, "energy": 40.0, "time": 1.5}]
    path.write_text(json.dumps({"measurements": rows}))
    plo = GlobalPowerLimitOptimizer(monitor, optimum_selector=Energy(), profile_path=path)
    assert isinstance(plo.state, Done)
    assert plo.optimal_power_limit == min(rows, key=lambda r: r["energy"])["power_limit"] * 1000
    plo.close()


def test_the_optimizer_logs_what_the_original_logs(sim, tmp_path, caplog):
    """The original's logger (zeus.optimizer.power_limit, here zeus_native.optimizer.power_limit)
    and INFO messages: the start, each state change, an epoch that interrupts a warm-up, the
    chosen limit and the saved profile."""
    import logging

    sim.start(a100s(1))
    load = sim.load(0, 1.0)
    from zeus_native.monitor import ZeusMonitor
    from zeus_native.optimizer.power_limit import GlobalPowerLimitOptimizer

    path = tmp_path / "profile.json"
    caplog.set_level(logging.INFO, logger="zeus_native.optimizer.power_limit")
    plo = GlobalPowerLimitOptimizer(ZeusMonitor(gpu_indices=[0]), wait_steps=1, warmup_steps=2, profile_steps=3,
                                    pl_step=100, profile_path=path)
    limits = [mw // 1000 for mw in plo.power_limits]
    interrupted = False
    for _ in range(200):
        if isinstance(plo.state, Done):
            break
        plo.on_step_begin()
        sim.advance(0.05)
        if not interrupted and type(plo.state).__name__ == "Warmup":
            plo.on_epoch_end()  # the first warm-up is cut short; the limit is tried again
            interrupted = True
    assert isinstance(plo.state, Done)
    optimal = plo.optimal_power_limit // 1000
    sim.unload(load)

    expected = [f"JIT Profiling enabled. Profile will be saved to '{path}'.", "Will wait 1 step(s) before profiling.",
                "Set power limit to the maximum before starting.", f"Setting power limit to {max(limits)} W.",
                f"Starting warmup for power limit {limits[0]} W.", f"Setting power limit to {limits[0]} W.",
                f"Warmup phase for {limits[0]} W interrupted by the end of a training epoch.",
                f"Setting power limit to {max(limits)} W."]
    for limit in limits:
        expected += [f"Starting warmup for power limit {limit} W.", f"Setting power limit to {limit} W.",
                     f"Starting actual profiling for power limit {limit} W.",
                     f"Finished profiling for power limit {limit} W."]
    expected += [f"Optimal power limit is {optimal} W.", f"Setting power limit to {optimal} W.",
                 f"JIT profiling results saved to '{path}'."]
    logged = [r.getMessage() for r in caplog.records if r.name == "zeus_native.optimizer.power_limit"]
    assert logged == expected
    plo.close()


def test_selectors_follow_their_formulas():
    from zeus_native.optimizer.power_limit import Energy, MaxSlowdownConstraint, Time, ZeusCost
    from zeus_native.utils.metric import zeus_cost

    rows = [(300, 90.0, 1.0), (250, 70.0, 1.2), (200, 60.0, 1.6)]
    assert Energy().select(rows) == min(rows, key=lambda r: r[1])[0]
    assert Time().select(rows) == min(rows, key=lambda r: r[2])[0]
    for eta in (0.0, 0.5, 1.0):
        costs = {w: zeus_cost(e, t, eta, 300 * 2) for w, e, t in rows}
        assert ZeusCost(eta, world_size=2).select(rows) == min(costs, key=costs.get)
    allowed = [w for w, _, t in rows if t <= 1.25 * rows[0][2]]
    assert MaxSlowdownConstraint(1.25).select(rows) == min(allowed)
    with pytest.raises(ValueError, match="eta_knob"):
        ZeusCost(1.5)
    with pytest.raises(ValueError, match="factor"):
        MaxSlowdownConstraint(0.5)


def test_callback_set_forwards_every_hook():
    from zeus_native.callback import Callback, CallbackSet

    calls = []

    class Recorder(Callback):
        def __getattribute__(self, name):
            if name.startswith("on_"):
                return lambda *a: calls.append((name, a))
            return object.__getattribute__(self, name)

    hooks = ["on_train_begin", "on_train_end", "on_epoch_begin", "on_epoch_end", "on_step_begin", "on_step_end"]
    s = CallbackSet([Recorder(), Recorder()])
    for h in hooks:
        getattr(s, h)()
    s.on_evaluate(0.5)
    s.on_instruction_begin("fwd")
    s.on_instruction_end("fwd")
    assert len(calls) == 2 * (len(hooks) + 3)
    Callback().on_step_begin()  # the base does nothing


def test_hf_optimizer_needs_transformers_only_when_used():
    import importlib.util

    import inspect

    from zeus_native.optimizer import GlobalPowerLimitOptimizer, HFGlobalPowerLimitOptimizer

    hf = inspect.signature(HFGlobalPowerLimitOptimizer).parameters
    plain = inspect.signature(GlobalPowerLimitOptimizer).parameters
    assert [(p.name, p.default) for p in hf.values()] == [(p.name, p.default) for p in plain.values()]

    if importlib.util.find_spec("transformers") is None:
        with pytest.raises(ImportError, match="pip install transformers"):
            HFGlobalPowerLimitOptimizer(None)


def test_profile_measure_and_sweep_reports(sim):
    sim.start(a100s(1))
    load = sim.load(0, 1.0)
    from zeus_native.monitor import ZeusMonitor
    from zeus_native.profile import measure, profile_parameters, sweep_cooldown_duration, sweep_measurement_duration

    monitor = ZeusMonitor()
    iterations = []

    def step():
        iterations.append(1)
        sim.advance(0.01)

    before = sim.truth(0)
    result = measure(step, monitor, measurement_duration=0.5, cooldown_duration=0.0,
                     num_warmup_iterations=2, num_calibration_iterations=5)
    assert result.iterations >= 1 and result.total_energy > 0
    assert result.energy_per_iter == pytest.approx(result.total_energy / result.iterations)
    assert result.total_energy <= sim.truth(0) - before
    report = sweep_measurement_duration(step, monitor, [0.2, 0.4], cooldown_duration=0.0, num_trials=2,
                                        num_warmup_trials=1, num_warmup_iterations=1, num_calibration_iterations=3)
    lines = str(report).splitlines()
    assert len(lines) == 3 and all(("[VALID]" in l) or ("[INVALID]" in l) for l in lines[1:])
    assert [e.measurement_duration for e in report.entries] == [0.2, 0.4]
    cool = sweep_cooldown_duration(step, monitor, [0.0], measurement_duration=0.2, num_trials=1,
                                   num_warmup_trials=0, num_warmup_iterations=1, num_calibration_iterations=3)
    assert cool.sweep_param[0] == "cooldown_duration"
    m, c = profile_parameters(step, monitor, [0.2], [0.0], num_trials=1, num_warmup_trials=0,
                              num_warmup_iterations=1, num_calibration_iterations=3)
    assert str(m).splitlines()[0] and str(c).splitlines()[0]
    sim.unload(load)


def test_optimizer_windows_sync_with_the_monitors_framework(sim, monkeypatch):
    import sys
    import types

    sim.start(a100s(1))
    synced = []
    torch = types.ModuleType("torch")
    torch.cuda = types.SimpleNamespace(synchronize=synced.append, is_available=lambda: True)
    monkeypatch.setitem(sys.modules, "torch", torch)
    from zeus_native.monitor import ZeusMonitor
    from zeus_native.optimizer import GlobalPowerLimitOptimizer

    monitor = ZeusMonitor(sync_execution_with="torch")
    plo = GlobalPowerLimitOptimizer(monitor, wait_steps=0, warmup_steps=0, profile_steps=2, pl_step=300)
    for _ in range(8):
        plo.on_step_begin()
        sim.advance(0.2)
        plo.on_step_end()
    assert isinstance(plo.state, Done) and len(plo.measurements) == 2  # 400 W and 100 W
    assert synced and set(synced) == {0}  # each profiling window's edges waited for torch
    plo.close()


def test_carbon_aware_selector_prices_energy_by_the_grids_intensity_now():
    from zeus_native.monitor.carbon import ConstantCarbonIntensity
    from zeus_native.optimizer.power_limit import CarbonAware, ZeusCost

    rows = [(300, 90.0, 1.0), (250, 70.0, 1.2), (200, 60.0, 1.6)]
    max_power = 300 * 2  # the highest profiled limit times the world size

    def expected(eta, ratio):
        # eta * E * (I_now / I_ref) + (1 - eta) * max_power * T, computed here from the rows.
        costs = {w: eta * e * ratio + (1 - eta) * max_power * t for w, e, t in rows}
        return min(costs, key=costs.get)

    for eta in (0.2, 0.5, 0.8):
        # At the reference intensity it is ZeusCost exactly.
        same = CarbonAware(ConstantCarbonIntensity(400.0), eta_knob=eta, reference_g_per_kwh=400.0, world_size=2)
        assert same.select(rows) == ZeusCost(eta, world_size=2).select(rows)
        for now, reference in ((800.0, 400.0), (100.0, 400.0), (400.0, 40.0)):
            selector = CarbonAware(ConstantCarbonIntensity(now), eta_knob=eta, reference_g_per_kwh=reference,
                                   world_size=2)
            assert selector.select(rows) == expected(eta, now / reference), (eta, now, reference)
    # A dirtier grid never chooses a higher limit than a cleaner one.
    dirty = CarbonAware(ConstantCarbonIntensity(900.0), reference_g_per_kwh=300.0, world_size=2).select(rows)
    clean = CarbonAware(ConstantCarbonIntensity(100.0), reference_g_per_kwh=300.0, world_size=2).select(rows)
    assert dirty <= clean
    # Without a reference the first intensity is the reference: ZeusCost's choice.
    assert CarbonAware(ConstantCarbonIntensity(700.0), world_size=2).select(rows) == ZeusCost(0.5, world_size=2).select(rows)

    with pytest.raises(ValueError, match="eta"):
        CarbonAware(ConstantCarbonIntensity(400.0), eta_knob=1.5)
    with pytest.raises(ValueError, match="Threshold"):
        CarbonAware(ConstantCarbonIntensity(400.0), threshold=-0.1)
    with pytest.raises(ValueError, match="reference_g_per_kwh"):
        CarbonAware(ConstantCarbonIntensity(400.0), reference_g_per_kwh=0.0)


def test_short_epochs_are_a_warning_and_training_continues_at_the_maximum(sim):
    """8-step epochs cannot hold a limit's 1 + 10 + 40 steps: the optimizer warns
    (naming the fix), settles on the maximum limit and every later epoch runs (issue 22)."""
    import warnings

    from zeus_native.monitor import ZeusMonitor
    from zeus_native.optimizer import GlobalPowerLimitOptimizer

    sim.start(a100s(1))
    monitor = ZeusMonitor()
    plo = GlobalPowerLimitOptimizer(monitor)
    maximum_mw = monitor.gpus.get_power_management_limit_constraints(0)[1]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _epoch in range(5):
            plo.on_epoch_begin()
            for _step in range(8):
                plo.on_step_begin()
                sim.advance(0.05)
                plo.on_step_end()
            plo.on_epoch_end()
    messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert len(messages) == 1 and "training continues at the maximum limit" in messages[0], messages
    assert "warmup_steps" in messages[0]  # the fix
    assert isinstance(plo.state, Done)
    assert monitor.gpus.get_power_management_limit(0) == maximum_mw
    plo.close()


def _fake_torch(monkeypatch, cuda_available: bool):
    import sys
    import types

    torch = types.ModuleType("torch")
    torch.__version__ = "0.0+cpu"

    def synchronize(device=None):
        raise RuntimeError("Found no NVIDIA driver on your system.")

    torch.cuda = types.SimpleNamespace(synchronize=synchronize, is_available=lambda: cuda_available)
    monkeypatch.setitem(sys.modules, "torch", torch)


def test_cpu_only_torch_chosen_explicitly_is_a_clear_error_at_construction(sim, monkeypatch):
    from zeus_native.monitor import ZeusMonitor

    sim.start(a100s(1))
    _fake_torch(monkeypatch, cuda_available=False)
    with pytest.raises(RuntimeError, match=r"cannot reach a CUDA GPU.*CPU-only build.*install a CUDA build"):
        ZeusMonitor(sync_execution_with="torch")
    # The default: a PyTorch without a GPU has queued nothing there, so windows do not wait.
    monitor = ZeusMonitor()
    monitor.begin_window("w")
    sim.advance(1.0)
    assert monitor.end_window("w").time > 0


def test_cpu_only_torch_default_lets_the_optimizer_train_without_errors(sim, monkeypatch):
    import warnings

    from zeus_native.monitor import ZeusMonitor
    from zeus_native.optimizer import GlobalPowerLimitOptimizer

    sim.start(a100s(1))
    _fake_torch(monkeypatch, cuda_available=False)
    plo = GlobalPowerLimitOptimizer(ZeusMonitor(), wait_steps=0, warmup_steps=0, profile_steps=2, pl_step=300)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an "Exception ignored" would not be a warning, so also:
        for _ in range(8):
            plo.on_step_begin()
            sim.advance(0.2)
            plo.on_step_end()
    assert isinstance(plo.state, Done) and len(plo.measurements) == 2
    plo.close()


def test_a_failing_sync_in_the_optimizers_window_is_raised_not_swallowed(sim, monkeypatch):
    from zeus_native.monitor import ZeusMonitor
    from zeus_native.optimizer import GlobalPowerLimitOptimizer

    sim.start(a100s(1))
    _fake_torch(monkeypatch, cuda_available=True)  # claims a GPU, then fails to sync: the monitor's windows raise
    monitor = ZeusMonitor(sync_execution_with="torch")
    with pytest.raises(RuntimeError, match="Found no NVIDIA driver"):
        monitor.begin_window("mine")
    plo = GlobalPowerLimitOptimizer(monitor, wait_steps=0, warmup_steps=0, profile_steps=2, pl_step=300)
    with pytest.raises(RuntimeError, match="Found no NVIDIA driver"):
        for _ in range(4):
            plo.on_step_begin()
            sim.advance(0.2)
    plo.close()


def test_a_user_written_optimum_selector_chooses_the_limit(sim):
    """The original's abstract OptimumSelector, subclassed by the user, drives the native optimizer."""
    from zeus_native.monitor import ZeusMonitor
    from zeus_native.optimizer import GlobalPowerLimitOptimizer
    from zeus_native.optimizer.power_limit import OptimumSelector, PowerLimitMeasurement

    seen = []

    class SecondHighest(OptimumSelector):
        def select(self, measurements):
            seen.append(list(measurements))
            return sorted(m.power_limit for m in measurements)[-2]

    sim.start(a100s(1))
    monitor = ZeusMonitor()
    plo = GlobalPowerLimitOptimizer(monitor, SecondHighest(), wait_steps=0, warmup_steps=0, profile_steps=2,
                                    pl_step=150)
    for _ in range(12):
        plo.on_step_begin()
        sim.advance(0.2)
    assert isinstance(plo.state, Done) and plo.optimal_power_limit == 250_000  # 400, 250, 100 W profiled
    assert all(isinstance(m, PowerLimitMeasurement) for m in seen[0]) and len(seen[0]) == 3
    assert monitor.gpus.get_power_management_limit(0) == 250_000
    plo.close()


def test_warmup_settle_duration_replaces_the_warmup_count_with_a_duration(sim):
    """The original's rule: the trial's warm-up runs int(settle / calibrated iteration time)
    iterations instead of num_warmup_iterations (calibration keeps the count)."""
    sim.start(a100s(1))
    from zeus_native.monitor import ZeusMonitor
    from zeus_native.profile import measure

    monitor = ZeusMonitor()
    calls = []

    def step():
        calls.append(1)
        time.sleep(0.005)  # the calibration times the real clock
        sim.advance(0.005)

    def warmup_calls(settle):
        calls.clear()
        result = measure(step, monitor, measurement_duration=0.1, cooldown_duration=0.0, num_warmup_iterations=2,
                         num_calibration_iterations=10, warmup_settle_duration=settle)
        return len(calls) - 2 - 10 - result.iterations  # calibration: 2 warm-up + 10 timed

    assert warmup_calls(None) == 2
    assert warmup_calls(0.0) == 0
    assert warmup_calls(0.3) >= 20  # ~0.3 s of 5 ms iterations, not the 2 of num_warmup_iterations
    with pytest.raises(ValueError, match="warmup_settle_duration must be non-negative"):
        measure(step, monitor, 0.1, 0.0, warmup_settle_duration=-1.0)


def test_profile_logs_the_originals_progress_lines(sim, caplog):
    """The original's INFO lines (logger zeus.profile, here zeus_native.profile): measure's
    calibration; profile_parameters' calibration, each sweep's phases and trials, and
    each sweep's report (its str())."""
    import logging
    import re

    sim.start(a100s(1))
    from zeus_native.monitor import ZeusMonitor
    from zeus_native.profile import measure, profile_parameters

    monitor = ZeusMonitor()
    caplog.set_level(logging.INFO, logger="zeus_native.profile")

    def step():
        sim.advance(0.01)

    def logged() -> list[str]:
        lines = [r.getMessage() for r in caplog.records if r.name == "zeus_native.profile"]
        caplog.clear()
        return lines

    calibrated = r"Calibrated iteration duration: \d+\.\d{3} ms"
    measure(step, monitor, measurement_duration=0.1, cooldown_duration=0.0, num_warmup_iterations=1,
            num_calibration_iterations=3)
    (line,) = logged()
    assert re.fullmatch(calibrated, line), line
    measured, cooled = profile_parameters(step, monitor, [0.2, 0.4], [0.0], num_trials=2, num_warmup_trials=1,
                                          num_warmup_iterations=1, num_calibration_iterations=3)
    lines = logged()
    assert re.fullmatch(calibrated, lines[0]), lines
    trials = ["Trial 1/2 done", "Trial 2/2 done"]
    assert lines[1:] == [
        "Sweeping measurement_duration (cooldown fixed at 0.0 s)", "Running 1 warmup trial(s)", "Warmup trial 1/1 done",
        "Starting measurement_duration=0.2 s  [2 trials]", *trials,
        "Starting measurement_duration=0.4 s  [2 trials]", *trials,
        "Sweeping cooldown_duration (measurement fixed at 0.4 s)", "Starting cooldown_duration=0.0 s  [2 trials]",
        *trials, str(measured), str(cooled)], lines
