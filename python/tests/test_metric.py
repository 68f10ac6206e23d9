"""zeus_native.metric (the original's zeus.metric) pushing to the real
Pushgateway (Debian's prometheus-pushgateway on a loopback port), read back
from its /metrics and compared with the simulator's ground truth."""

from __future__ import annotations

import bisect
import time
import warnings

import pytest

from conftest import Pushgateway, a100s, energy_bound, require_pushgateway, wait_for

POWER_NOISE_W = 0.5  # the simulator's instant-power noise σ (docs/simulator.md)

# The original's documented example (docs use the keyword prometheus_url),
# with `zeus` changed to `zeus_native` in the import and nothing else.
ORIGINAL_EXAMPLE = '''
from zeus_native.metric import EnergyHistogram

histogram_metric = EnergyHistogram(
    cpu_indices=[],
    gpu_indices=[0, 1],
    prometheus_url=PUSHGATEWAY,
    job="training_energy_histogram",
)

for epoch in range(2):
    histogram_metric.begin_window(f"epoch_{epoch}_energy")
    for step in range(3):
        histogram_metric.begin_window("step_energy")
        train_one_step()
        histogram_metric.end_window("step_energy")
    histogram_metric.end_window(f"epoch_{epoch}_energy")
'''


def closed_port() -> str:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def test_histogram_buckets_and_counts_match_the_windows_measured(sim, pushgateway):
    sim.start(a100s(2))
    loads = [sim.load(0, 1.0), sim.load(1, 0.3)]
    from zeus_native.metric import EnergyHistogram
    from zeus_native.monitor import ZeusMonitor

    histogram = EnergyHistogram(cpu_indices=[], gpu_indices=[0, 1], pushgateway_url=pushgateway.url, job="hist")
    buckets = [50.0, 100.0, 200.0, 500.0, 1000.0]  # the original's GPU default
    assert histogram.gpu_bucket_range == buckets
    # The same windows measured by a ZeusMonitor at the same (virtual) instants.
    reference = ZeusMonitor(gpu_indices=[0, 1])
    measured: dict[int, list[float]] = {0: [], 1: []}
    # GPU 0's window energies: one under 50 J, one in each bucket, one over 1000 J.
    targets = [25.0, 75.0, 150.0, 350.0, 750.0, 1500.0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for target in targets:
            before = [sim.truth(g) for g in (0, 1)]
            reference.begin_window("ref")
            histogram.begin_window("step")
            sim.advance(target / sim.true_power(0))
            histogram.end_window("step")
            m = reference.end_window("ref")
            for g in (0, 1):
                truth = sim.truth(g) - before[g]
                assert abs(m.gpu_energy[g] - truth) <= energy_bound(sim, g), (g, m.gpu_energy[g], truth)
                measured[g].append(m.gpu_energy[g])
    for load in loads:
        sim.unload(load)

    for g in (0, 1):
        series = {"job": "hist", "window": "step", "index": str(g)}
        got = {float(labels["le"]): value
               for labels, value in pushgateway.find("energy_monitor_gpu_energy_joules_bucket", **series)}
        expected = {bound: float(sum(1 for j in measured[g] if j <= bound)) for bound in buckets}
        expected[float("inf")] = float(len(targets))
        assert got == expected, g
        [(_, count)] = pushgateway.find("energy_monitor_gpu_energy_joules_count", **series)
        assert count == len(targets)
        [(_, total)] = pushgateway.find("energy_monitor_gpu_energy_joules_sum", **series)
        assert total == pytest.approx(sum(measured[g]), rel=1e-9)
    # GPU 0's windows were chosen to fill every bucket once, +Inf included.
    per_bucket = [bisect.bisect_left(buckets, j) for j in measured[0]]
    assert per_bucket == list(range(len(buckets) + 1)), measured[0]
    # No CPU selected: no CPU or DRAM histogram, as in the original.
    assert not pushgateway.find("energy_monitor_cpu_energy_joules_count")
    assert not pushgateway.find("energy_monitor_dram_energy_joules_count")
    texts = [str(w.message) for w in caught]
    assert any("GPU 0 energy" in t and "exceeds the maximum bucket value of 1000" in t for t in texts), texts
    assert any("GPU 0 energy" in t and "below the minimum bucket value of 50" in t for t in texts), texts
    assert not any("push" in t for t in texts), texts
    # The warning points at the user's line, not into zeus_native.
    assert all(w.filename == __file__ for w in caught), {w.filename for w in caught}


def test_the_original_example_runs_by_changing_the_import(sim, pushgateway):
    sim.start(a100s(2))
    load = sim.load(0, 0.5)
    steps = []

    def train_one_step():
        before = sim.truth(0)
        sim.advance(0.5)
        steps.append(sim.truth(0) - before)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the small steps are below the lowest bucket
        exec(ORIGINAL_EXAMPLE, {"PUSHGATEWAY": pushgateway.url, "train_one_step": train_one_step})
    sim.unload(load)
    series = {"job": "training_energy_histogram", "index": "0"}
    [(_, count)] = pushgateway.find("energy_monitor_gpu_energy_joules_count", window="step_energy", **series)
    assert count == len(steps) == 6
    [(_, step_sum)] = pushgateway.find("energy_monitor_gpu_energy_joules_sum", window="step_energy", **series)
    assert step_sum == pytest.approx(sum(steps), abs=len(steps) * energy_bound(sim, 0))
    for epoch in range(2):
        [(_, total)] = pushgateway.find("energy_monitor_gpu_energy_joules_sum", window=f"epoch_{epoch}_energy",
                                        **series)
        truth = sum(steps[3 * epoch:3 * epoch + 3])
        assert total == pytest.approx(truth, abs=energy_bound(sim, 0))


def test_cumulative_counter_pushes_the_energy_of_the_whole_window(sim, pushgateway):
    sim.start(a100s(2))
    loads = [sim.load(0, 0.9), sim.load(1, 0.4)]
    from zeus_native.metric import EnergyCumulativeCounter
    from zeus_native.monitor import ZeusMonitor

    # One period longer than the test: the window's energy is counted and
    # pushed exactly once, when it ends, over the same instants as a ZeusMonitor window.
    counter = EnergyCumulativeCounter(cpu_indices=[], gpu_indices=[0, 1], update_period=3600,
                                      pushgateway_url=pushgateway.url, job="counter")
    reference = ZeusMonitor(gpu_indices=[0, 1])
    before = [sim.truth(g) for g in (0, 1)]
    reference.begin_window("ref")
    counter.begin_window("epoch")
    with pytest.raises(ValueError, match="'epoch' already exists"):
        counter.begin_window("epoch")
    for _ in range(5):
        sim.advance(0.7)
    counter.end_window("epoch")
    m = reference.end_window("ref")
    with pytest.raises(ValueError, match="No active EnergyCumulativeCounter window found for 'epoch'"):
        counter.end_window("epoch")
    for g in (0, 1):
        [(_, pushed)] = pushgateway.find("energy_monitor_gpu_energy_joules_total", job="counter", window="epoch",
                                         index=str(g))
        assert pushed == pytest.approx(m.gpu_energy[g], rel=1e-9)
        truth = sim.truth(g) - before[g]
        assert abs(pushed - truth) <= energy_bound(sim, g), (g, pushed, truth)

    # A short period: pushed while the window is open, never going down.
    fast = EnergyCumulativeCounter([], [0], 0.05, pushgateway.url, "fast")
    start = sim.truth(0)
    fast.begin_window("run")
    sim.advance(1.0)

    def pushed_value():
        found = pushgateway.find("energy_monitor_gpu_energy_joules_total", job="fast", window="run", index="0")
        return found[0][1] if found and found[0][1] > 0 else None

    mid = wait_for(pushed_value, "a push of the open window")
    sim.advance(1.0)
    fast.end_window("run")
    final = pushed_value()
    assert mid <= final <= sim.truth(0) - start + energy_bound(sim, 0)
    for load in loads:
        sim.unload(load)


def test_power_gauge_pushes_the_latest_power(sim, pushgateway):
    sim.start(a100s(2))
    loads = [sim.load(0, 1.0), sim.load(1, 0.2)]
    sim.advance(2.0)  # past the power sensors' averaging: readings are the steady power
    from zeus_native.metric import PowerGauge

    gauge = PowerGauge(gpu_indices=[0, 1], update_period=0.05, pushgateway_url=pushgateway.url, job="gauge")
    gauge.begin_window("serve")
    with pytest.raises(ValueError, match="PowerGauge metric 'serve' already exists"):
        gauge.begin_window("serve")
    for g in (0, 1):
        [(_, watts)] = wait_for(
            lambda g=g: pushgateway.find("power_monitor_gpu_power_watts", job="gauge", window="serve", index=str(g)),
            f"GPU {g}'s power at the gateway")
        assert abs(watts - sim.true_power(g)) <= 6 * POWER_NOISE_W, (g, watts, sim.true_power(g))
    assert sim.true_power(0) > sim.true_power(1) + 12 * POWER_NOISE_W  # the two loads are told apart
    gauge.end_window("serve")
    for load in loads:
        sim.unload(load)


def test_an_unreachable_gateway_is_a_warning_and_training_continues(sim):
    sim.start(a100s(1))
    from zeus_native.metric import EnergyCumulativeCounter, EnergyHistogram, PowerGauge

    url = closed_port()
    histogram = EnergyHistogram([], [0], url, "down", gpu_bucket_range=[1e9])
    counter = EnergyCumulativeCounter([], [0], 0.05, url, "down")
    gauge = PowerGauge([0], 0.05, url, "down")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        counter.begin_window("epoch")
        gauge.begin_window("epoch")
        for _ in range(3):  # the training loop runs on
            histogram.begin_window("step")
            sim.advance(0.2)
            histogram.end_window("step")
        time.sleep(0.2)
        counter.end_window("epoch")
        gauge.end_window("epoch")
    texts = [str(w.message) for w in caught if "push" in str(w.message)]
    assert texts, [str(w.message) for w in caught]
    for text in texts:
        assert url in text and "could not reach the Pushgateway" in text, text
        assert "the next push carries" in text, text
    # One warning per failure streak and object, not one per push.
    assert len(texts) <= 3, texts
    assert all(issubclass(w.category, UserWarning) for w in caught)


def test_a_gateway_that_comes_up_late_receives_every_window(sim, tmp_path):
    require_pushgateway()
    sim.start(a100s(1))
    load = sim.load(0, 0.5)
    from zeus_native.metric import EnergyHistogram

    url = closed_port()
    histogram = EnergyHistogram([], [0], url, "late")
    steps = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):  # the gateway is down: kept, warned once
            before = sim.truth(0)
            histogram.begin_window("step")
            sim.advance(0.6)
            histogram.end_window("step")
            steps.append(sim.truth(0) - before)
        gateway = Pushgateway(tmp_path / "late", port=int(url.rsplit(":", 1)[1]))
        try:
            before = sim.truth(0)
            histogram.begin_window("step")
            sim.advance(0.6)
            histogram.end_window("step")
            steps.append(sim.truth(0) - before)
            [(_, count)] = gateway.find("energy_monitor_gpu_energy_joules_count", job="late", window="step")
            [(_, total)] = gateway.find("energy_monitor_gpu_energy_joules_sum", job="late", window="step")
        finally:
            gateway.stop()
    sim.unload(load)
    assert count == 3
    assert total == pytest.approx(sum(steps), abs=len(steps) * energy_bound(sim, 0))
    texts = [str(w.message) for w in caught]
    assert sum("could not reach the Pushgateway" in t for t in texts) == 1, texts
    assert sum(f"pushing metrics to {url}/metrics/job/late works again" in t for t in texts) == 1, texts


def test_bad_input_names_the_problem_and_the_fix(sim, pushgateway):
    sim.start(a100s(2))
    from zeus_native.metric import EnergyCumulativeCounter, EnergyHistogram, PowerGauge
    from zeus_native.monitor import ZeusMonitor

    for url in ("http://", "ftp://127.0.0.1:9091", "http://127.0.0.1:notaport"):
        with pytest.raises(ValueError, match="malformed") as e:
            EnergyHistogram([], [0], url, "job")
        assert url in str(e.value) and "http://HOST:PORT" in str(e.value)
        with pytest.raises(ValueError, match="malformed"):
            EnergyCumulativeCounter([], [0], 1, url, "job")
        with pytest.raises(ValueError, match="malformed"):
            PowerGauge([0], 1, url, "job")
    # An unknown GPU index: what the original's ZeusMonitor (inside its metrics) raises.
    with pytest.raises(Exception) as monitor_error:
        ZeusMonitor(gpu_indices=[7])
    for make in (lambda: EnergyHistogram([], [7], pushgateway.url, "job"),
                 lambda: EnergyCumulativeCounter([], [7], 1, pushgateway.url, "job"),
                 lambda: PowerGauge([7], 1, pushgateway.url, "job")):
        with pytest.raises(type(monitor_error.value), match="GPU index 7 is out of range") as e:
            make()
        assert "0 to 1" in str(e.value) and "CUDA_VISIBLE_DEVICES" in str(e.value)
    with pytest.raises(ValueError, match="GPU bucket range cannot be empty.*defaults"):
        EnergyHistogram([], [0], pushgateway.url, "job", gpu_bucket_range=[])
    with pytest.raises(ValueError, match="strictly ascending"):
        EnergyHistogram([], [0], pushgateway.url, "job", gpu_bucket_range=[100.0, 50.0])
    with pytest.raises(ValueError, match="update_period 0 s is not positive"):
        PowerGauge([0], 0, pushgateway.url, "job")
    with pytest.raises(ValueError, match="job name is empty"):
        PowerGauge([0], 1, pushgateway.url, "")
    with pytest.raises(TypeError, match="pushgateway_url"):
        PowerGauge([0], 1, job="job")
    histogram = EnergyHistogram([], [0], pushgateway.url, "job")
    with pytest.raises(ValueError, match="No active EnergyHistogram window found for 'never'"):
        histogram.end_window("never")
    # Nothing was pushed by the objects that were refused.
    assert not pushgateway.find("energy_monitor_gpu_energy_joules_count", job="job")


def test_cumulative_counter_pushes_cpu_and_dram_series_at_zero(sim, pushgateway, tmp_path, monkeypatch):
    """An idle package (its counters do not move) still has its series, at 0 J, as the original's
    prometheus Counter once a window ends."""
    zone = tmp_path / "powercap" / "intel-rapl:0"
    (zone / "intel-rapl:0:0").mkdir(parents=True)
    (zone / "name").write_text("package-0\n")
    (zone / "energy_uj").write_text("1000000\n")
    (zone / "max_energy_range_uj").write_text("262143328850\n")
    (zone / "intel-rapl:0:0" / "name").write_text("dram\n")
    (zone / "intel-rapl:0:0" / "energy_uj").write_text("5000000\n")
    (zone / "intel-rapl:0:0" / "max_energy_range_uj").write_text("262143328850\n")
    monkeypatch.setenv("ZEUS_POWERCAP_ROOT", str(tmp_path / "powercap"))
    sim.start(a100s(1))
    from zeus_native.metric import EnergyCumulativeCounter

    counter = EnergyCumulativeCounter(cpu_indices=[0], gpu_indices=[0], update_period=3600,
                                      pushgateway_url=pushgateway.url, job="idle")
    counter.begin_window("w")
    sim.advance(0.5)
    counter.end_window("w")
    for family in ("energy_monitor_cpu_energy_joules_total", "energy_monitor_dram_energy_joules_total"):
        assert [v for _, v in pushgateway.find(family, job="idle", window="w", index="0")] == [0.0], family


def test_each_test_gateway_starts_empty(tmp_path):
    """A push to one test gateway is not served by the next: Debian's pushgateway
    otherwise persists to one machine-wide file and loads it at start."""
    import urllib.request

    require_pushgateway()
    first = Pushgateway(tmp_path / "first")
    try:
        request = urllib.request.Request(first.url + "/metrics/job/left_behind", data=b"left_behind_total 1\n",
                                         method="PUT")
        with urllib.request.urlopen(request, timeout=5) as reply:
            assert reply.status == 200
        assert first.find("left_behind_total", job="left_behind")
    finally:
        first.stop()
    second = Pushgateway(tmp_path / "second")
    try:
        assert not second.find("left_behind_total", job="left_behind")
    finally:
        second.stop()
