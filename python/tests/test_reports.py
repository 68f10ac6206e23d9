"""The measurement report shared with the zeus CLI: Measurement.to_json/to_csv/
to_table, and `python -m zeus_native.monitor power|energy --format json|csv`
(one document on stdout, messages on stderr), against the simulator's ground
truth."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import a100s, energy_bound

ZEUS_CLI = Path(__file__).resolve().parents[2] / "build" / "bin" / "zeus"


def _energy_window(sim, seconds: float, utilization: float = 0.6):
    from zeus_native.monitor import ZeusMonitor

    monitor = ZeusMonitor(gpu_indices=[0, 1])
    loads = [sim.load(g, utilization) for g in range(2)]
    monitor.begin_window("w", sync_execution=False)
    before = [sim.truth(g) for g in range(2)]
    sim.advance(seconds)
    after = [sim.truth(g) for g in range(2)]
    m = monitor.end_window("w", sync_execution=False)
    for load in loads:
        sim.unload(load)
    return m, [a - b for a, b in zip(after, before)]


def test_a_start_time_past_2262_is_written_as_it_is(sim):
    """Measurement(start_time=...) for a time past April 2262, where 64-bit nanoseconds since
    the epoch overflow (it was written as 1715): the JSON report says 2300. (CPython itself
    cannot read such a clock, so the time is given, not measured.)"""
    import datetime as dt

    sim.start(a100s(1))
    from zeus_native.monitor import Measurement

    start = dt.datetime(2300, 1, 1, tzinfo=dt.timezone.utc).timestamp() + 0.25
    doc = json.loads(Measurement(time=1.0, gpu_energy={0: 2.0}, start_time=start).to_json())
    assert doc["start_time"] == "2300-01-01T00:00:00.250Z"


def test_measurement_to_json_carries_the_window_against_ground_truth(sim):
    sim.start(a100s(2))
    m, truth = _energy_window(sim, 2.0)
    doc = json.loads(m.to_json())
    assert doc["command"] == "energy" and doc["simulated"] is True and doc["interrupted"] is False
    assert doc["time_s"] == pytest.approx(2.0, abs=1e-6) and doc["time_s"] == m.time
    assert [d["device"] for d in doc["devices"]] == ["GPU 0", "GPU 1"]
    for g, d in enumerate(doc["devices"]):
        assert d["index"] == g and d["kind"] == "gpu" and d["name"] == "NVIDIA A100-SXM4-40GB"
        assert d["energy_j"] == m.gpu_energy[g]
        assert abs(d["energy_j"] - truth[g]) <= energy_bound(sim, g), (g, d["energy_j"], truth[g])
        assert d["average_power_w"] == pytest.approx(d["energy_j"] / doc["time_s"])
        assert d["source"] == "energy_counter" and d["lost"] is False
    assert doc["total_energy_j"] == pytest.approx(m.total_energy)
    # one line, for JSON Lines, as `zeus power` ends its stream
    line = m.to_json(command="power", one_line=True)
    assert line.endswith("\n") and line.count("\n") == 1
    summary = json.loads(line)
    assert summary["type"] == "summary" and summary["command"] == "power"
    assert summary["devices"] == doc["devices"]


def test_measurement_to_csv_and_table_say_the_same(sim):
    sim.start(a100s(2))
    m, truth = _energy_window(sim, 1.5)
    rows = list(csv.DictReader(io.StringIO(m.to_csv())))
    assert [r["device"] for r in rows] == ["GPU 0", "GPU 1"]
    for g, r in enumerate(rows):
        assert float(r["energy_j"]) == pytest.approx(m.gpu_energy[g], abs=1e-6)
        assert abs(float(r["energy_j"]) - truth[g]) <= energy_bound(sim, g)
        assert float(r["time_s"]) == pytest.approx(m.time, abs=1e-6)
        assert r["simulated"] == "true" and r["source"] == "energy_counter"
    table = m.to_table()
    assert "Time:     1.500 s" in table
    assert f"{m.gpu_energy[0]:.3f}" in table and f"{m.total_energy:.3f}" in table


def test_a_constructed_measurement_renders_too(sim):
    sim.start(a100s(1))
    from zeus_native.monitor import Measurement

    m = Measurement(2.0, {0: 10.0}, None, None, None)
    doc = json.loads(m.to_json())
    assert doc["devices"][0]["energy_j"] == 10.0 and doc["devices"][0]["average_power_w"] == 5.0
    assert doc["total_energy_j"] == 10.0


@pytest.mark.skipif(not ZEUS_CLI.exists(), reason="the zeus CLI is not built in build/")
def test_the_documents_have_the_cli_s_shape(sim, tmp_path):
    """Same implementation: the CLI's keys in the CLI's order, the same devices and CSV header."""
    sim.start(a100s(2))
    m, _ = _energy_window(sim, 1.0)
    env = dict(os.environ)
    cli = subprocess.run([str(ZEUS_CLI), "energy", "--duration", "0.2", "--format", "json"], capture_output=True,
                         text=True, env=env, timeout=60)
    assert cli.returncode == 0, cli.stderr
    cli_doc, doc = json.loads(cli.stdout), json.loads(m.to_json())
    assert list(doc) == list(cli_doc)
    assert [list(d) for d in doc["devices"]] == [list(d) for d in cli_doc["devices"]]
    assert [(d["device"], d["name"]) for d in doc["devices"]] == [(d["device"], d["name"]) for d in cli_doc["devices"]]
    cli_csv = subprocess.run([str(ZEUS_CLI), "energy", "--duration", "0.2", "--format", "csv"], capture_output=True,
                             text=True, env=env, timeout=60)
    assert cli_csv.returncode == 0, cli_csv.stderr
    assert m.to_csv().splitlines()[0] == cli_csv.stdout.splitlines()[0]


def _start(args):
    return subprocess.Popen([sys.executable, "-m", "zeus_native.monitor", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ))


def test_monitor_energy_json_under_sigint_is_one_document(sim):
    sim.start(a100s(2, clock="real"))
    loads = [sim.load(g, 0.5) for g in range(2)]
    t0 = time.monotonic()
    before_start = [sim.truth(g) for g in range(2)]
    proc = _start(["energy", "--format", "json"])
    assert "Monitoring GPU [0, 1]" in proc.stderr.readline()  # printed once the window is open
    t_open = time.monotonic()
    after_open = [sim.truth(g) for g in range(2)]
    time.sleep(1.0)
    before_signal = [sim.truth(g) for g in range(2)]
    t_signal = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    t_end = time.monotonic()
    after_end = [sim.truth(g) for g in range(2)]
    assert proc.returncode == 0, err
    doc = json.loads(out)  # the whole of stdout is one JSON document
    assert doc["command"] == "energy" and doc["simulated"] is True
    assert t_signal - t_open <= doc["time_s"] <= t_end - t0
    for g, d in enumerate(doc["devices"]):
        bound = energy_bound(sim, g)
        assert before_signal[g] - after_open[g] - bound <= d["energy_j"] <= after_end[g] - before_start[g] + bound
    for load in loads:
        sim.unload(load)


def _read_lines(proc, count, timeout=30.0):
    lines, deadline = [], time.monotonic() + timeout
    while len(lines) < count and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
    return lines


def test_monitor_power_json_lines_under_sigint(sim):
    sim.start(a100s(2, clock="real"))
    before_start = [sim.truth(g) for g in range(2)]
    proc = _start(["power", "--update-period", "0.2", "--format", "json"])
    first = _read_lines(proc, 3)
    true_power = [sim.true_power(g) for g in range(2)]
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    after_end = [sim.truth(g) for g in range(2)]
    assert proc.returncode == 0, err
    records = [json.loads(line) for line in ("".join(first) + out).splitlines() if line.strip()]
    assert len(records) >= 4, (out, err)
    readings, summary = records[:-1], records[-1]
    assert all(r["type"] == "power" for r in readings)
    elapsed = [r["elapsed_s"] for r in readings]
    assert elapsed == sorted(elapsed) and elapsed[0] >= 0.2
    for r in readings:
        assert set(r["power_w"]) == {"GPU 0", "GPU 1"}
        for g in range(2):  # idle GPUs: the sensor reads the true power within its noise
            assert r["power_w"][f"GPU {g}"] == pytest.approx(true_power[g], rel=0.1)
    assert summary["type"] == "summary" and summary["command"] == "power"
    assert summary["time_s"] >= elapsed[-1]
    for g, d in enumerate(summary["devices"]):
        assert 0 < d["energy_j"] <= after_end[g] - before_start[g] + energy_bound(sim, g)
        assert d["average_power_w"] == pytest.approx(true_power[g], rel=0.1)
    assert "Monitoring power usage of GPUs [0, 1]" in err


def test_monitor_power_csv_keeps_the_totals_on_stderr(sim):
    sim.start(a100s(1, clock="real"))
    proc = _start(["power", "--update-period", "0.2", "--format", "csv"])
    first = _read_lines(proc, 3)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    rows = list(csv.reader(io.StringIO("".join(first) + out)))
    assert rows[0] == ["timestamp", "elapsed_s", "GPU 0 power (W)"]
    assert len(rows) >= 3 and all(len(r) == 3 and float(r[2]) > 0 for r in rows[1:])
    true_power = sim.true_power(0)
    assert all(float(r[2]) == pytest.approx(true_power, rel=0.1) for r in rows[1:])
    assert "Total" in err and "energy counter" in err


def test_monitor_rejects_an_unknown_format(sim):
    sim.start(a100s(1))
    done = subprocess.run([sys.executable, "-m", "zeus_native.monitor", "energy", "--format", "yaml"],
                          capture_output=True, text=True, env=dict(os.environ), timeout=60)
    assert done.returncode == 2 and "invalid choice: 'yaml'" in done.stderr and done.stdout == ""
