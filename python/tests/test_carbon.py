"""CarbonEmissionMonitor and EnergyCostMonitor on the simulator's virtual clock:
a window across a UTC hour boundary, charged per hour, against ground truth."""

from __future__ import annotations

import ctypes
import json
from pathlib import Path

import pytest

from conftest import JsonServer, a100s, energy_bound

DATA = Path(__file__).resolve().parents[2] / "data" / "carbon"


def sim_unix(sim) -> float:
    us = ctypes.c_longlong()
    sim._call("zeusSimUnixTimeUs", ctypes.byref(us))
    return us.value / 1e6


def iso(unix: float) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(unix, tz=dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_window_across_an_hour_is_ground_truth_per_hour_times_each_hours_intensity(sim, tmp_path):
    from zeus_native.monitor import CarbonEmissionMonitor
    from zeus_native.monitor.carbon import CarbonIntensityFile

    sim.start(a100s(1))
    # The first hour boundary at least 5 minutes ahead: the window begins 5
    # minutes before it, which must not be in the past (it was in the last 5
    # minutes of every hour).
    boundary = (int(sim_unix(sim) + 300) // 3600 + 1) * 3600
    # Two recorded intensities of data/carbon/, for the hours either side.
    recorded = [e["carbonIntensity"] for e in json.loads((DATA / "carbon_history_file1.json").read_text())["history"]]
    before, after = recorded[0], recorded[1]
    path = tmp_path / "intensity.csv"
    path.write_text(f"datetime,carbon_intensity,zone\n{iso(boundary - 3600)},{before},US-MIDW-MISO\n"
                    f"{iso(boundary)},{after},US-MIDW-MISO\n")

    monitor = CarbonEmissionMonitor(CarbonIntensityFile(str(path)), gpu_indices=[0])
    load = sim.load(0, 0.9)
    sim.advance(boundary - 300 - sim_unix(sim))
    t0 = sim.truth(0)
    monitor.begin_window("cross")
    sim.advance(boundary - sim_unix(sim))
    t1 = sim.truth(0)
    monitor._native.poll()  # the reading at the boundary, as the background thread takes it
    sim.unload(load)
    load = sim.load(0, 0.2)
    sim.advance(600)
    t2 = sim.truth(0)
    m = monitor.end_window("cross")
    sim.unload(load)

    expected = ((t1 - t0) * before + (t2 - t1) * after) / 3.6e6
    bound = 2 * energy_bound(sim, 0) * max(before, after) / 3.6e6
    assert m.gpu_carbon_emission[0] == pytest.approx(expected, abs=bound + 1e-3 * expected)
    assert m.gpu_energy[0] == pytest.approx(t2 - t0, rel=1e-3)
    assert m.time == pytest.approx(900, abs=1e-3)
    p = m.provenance
    assert p["provider"] == f"file {path}"
    assert p["zone"] == "US-MIDW-MISO"
    assert p["unit"] == "gCO2eq"
    assert [h["hour"] for h in p["hours"]] == [boundary - 3600, boundary]
    assert [h["per_kwh"] for h in p["hours"]] == [before, after]
    assert not p["fallback_used"] and p["available"]
    assert m.total_carbon_emission == pytest.approx(m.gpu_carbon_emission[0])


def test_unreachable_provider_keeps_energy_and_gives_none_not_zero(sim):
    from zeus_native.monitor import CarbonEmissionMonitor
    from zeus_native.monitor.carbon import ElectricityMapsClient

    sim.start(a100s(1))
    provider = ElectricityMapsClient(zone="DE", token="t", base_url="http://127.0.0.1:9")
    monitor = CarbonEmissionMonitor(provider, gpu_indices=[0])
    load = sim.load(0, 0.5)
    monitor.begin_window("w")
    sim.advance(5)
    m = monitor.end_window("w")
    sim.unload(load)
    assert m.gpu_energy[0] > 0
    assert m.gpu_carbon_emission is None
    assert m.total_carbon_emission is None
    assert not m.provenance["available"]
    assert "127.0.0.1:9" in m.provenance["unavailable_reason"]

    fallback = CarbonEmissionMonitor(provider, gpu_indices=[0], fallback_intensity=300.0)
    fallback.begin_window("w")
    sim.advance(5)
    f = fallback.end_window("w")
    assert f.provenance["fallback_used"]
    assert f.gpu_carbon_emission[0] == pytest.approx(f.gpu_energy[0] * 300 / 3.6e6)
    assert any("fallback 300" in w for w in f.warnings)


def test_bad_inputs_are_value_errors_naming_the_fix(tmp_path, monkeypatch):
    from zeus_native.monitor.carbon import CarbonIntensityFile, ElectricityMapsClient, ElectrictyMapsClient
    from zeus_native.monitor.price import OpenEIClient

    assert ElectrictyMapsClient is ElectricityMapsClient  # the original's spelling
    monkeypatch.delenv("ELECTRICITYMAPS_API_TOKEN", raising=False)
    # Made without a token, as the original's client; a request that fails names the variable.
    from zeus_native.monitor.carbon import ZeusCarbonIntensityHTTPError

    with JsonServer(401, {"error": "Invalid auth-token"}) as api:  # the API's answer without a valid token
        tokenless = ElectricityMapsClient((42.28, -83.74), base_url=api.url)
        with pytest.raises(ZeusCarbonIntensityHTTPError, match="Invalid auth-token.*ELECTRICITYMAPS_API_TOKEN"):
            tokenless.get_current_carbon_intensity()
    monkeypatch.delenv("OPENEI_API_KEY", raising=False)
    with pytest.raises(ValueError, match="OPENEI_API_KEY"):
        OpenEIClient((42.28, -83.74), label="x")
    bad = tmp_path / "bad.csv"
    bad.write_text("datetime,carbon_intensity\n2026-11-25T03:00:00Z,lots\n")
    with pytest.raises(ValueError, match="line 2"):
        CarbonIntensityFile(str(bad))


def test_cost_of_a_window_at_a_constant_price(sim):
    from zeus_native.monitor import EnergyCostMonitor
    from zeus_native.monitor.price import ConstantPrice

    sim.start(a100s(1))
    monitor = EnergyCostMonitor(ConstantPrice(0.25, "EUR"), gpu_indices=[0])
    load = sim.load(0, 1.0)
    monitor.begin_window("w")
    sim.advance(60)
    m = monitor.end_window("w")
    sim.unload(load)
    assert m.gpu_energy_cost[0] == pytest.approx(m.gpu_energy[0] / 3.6e6 * 0.25)
    assert m.provenance["unit"] == "EUR"
    assert m.provenance["provider"] == "constant"
