"""The original's backend internals that its users reach (issue 22 §2): RAPLFile and
RaplWraparoundTracker over fake powercap files, the Jetson rail readers over a fake
sysfs tree, the amdsmi stand-in, zeus.metric's monitoring loops, and OpenEI's raw
rate table from a fake OpenEI server."""

from __future__ import annotations

import json
import os
import queue
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from conftest import a100s, wait_for


def write_atomically(path: Path, text: str) -> None:
    """Replace a counter file the way sysfs shows one: never half written."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text)
    os.replace(partial, path)


def fake_zone(root: Path, name: str, energy_uj: int, max_uj: int) -> Path:
    root.mkdir(parents=True)
    (root / "name").write_text(name + "\n")
    (root / "energy_uj").write_text(f"{energy_uj}\n")
    (root / "max_energy_range_uj").write_text(f"{max_uj}\n")
    return root


# A 10 J counter: the native thread reads it every 5 ms (half a wrap at 1000 W),
# and each step below is a power the tracker finds plausible.
RANGE_UJ = 10_000_000


def test_rapl_wraparound_tracker_counts_each_wrap(tmp_path):
    from zeus_native.device.cpu.rapl import RaplWraparoundTracker

    counter = fake_zone(tmp_path / "intel-rapl:0", "package-0", 1_000_000, RANGE_UJ) / "energy_uj"
    tracker = RaplWraparoundTracker(str(counter), RANGE_UJ)
    assert tracker.get_num_wraparounds() == 0
    # Read twice per wrap at 1000 W: half of (range + 1) µJ / 1000 W.
    assert tracker._native.period_s == pytest.approx((RANGE_UJ + 1) * 1e-6 / 1000 / 2, rel=1e-3)
    for wrap in range(1, 4):
        write_atomically(counter, "9000000\n")
        time.sleep(0.3)  # the thread (every 5 ms) sees the top before the wrap, even on a loaded machine
        write_atomically(counter, "500000\n")  # past the range: 1.5 J later, wrapped
        wait_for(lambda: tracker.get_num_wraparounds() >= wrap, f"wrap {wrap}")
        time.sleep(0.1)
        assert tracker.get_num_wraparounds() == wrap  # each wrap counted once, rises are not wraps
    tracker._stop()
    tracker._stop()  # idempotent, as at exit
    write_atomically(counter, "9000000\n")
    write_atomically(counter, "100\n")
    time.sleep(0.05)
    assert tracker.get_num_wraparounds() == 3  # stopped: no thread reads any more
    with pytest.raises(ValueError, match="is not a valid file path"):
        RaplWraparoundTracker(str(tmp_path / "missing" / "energy_uj"), RANGE_UJ)


def test_rapl_file_reads_mj_corrected_for_wraps(tmp_path):
    from zeus_native.device.cpu.rapl import RAPLFile, ZeusRAPLFileInitError

    zone = fake_zone(tmp_path / "intel-rapl:0", "package-0", 1_000_000, RANGE_UJ)
    f = RAPLFile(str(zone))
    assert (f.path, f.energy_uj_path, f.name) == (str(zone), str(zone / "energy_uj"), "package-0")
    assert f.last_energy == 1_000_000.0 and f.max_energy_range_uj == float(RANGE_UJ)
    assert f.read() == pytest.approx(1_000_000 / 1000)  # mJ
    write_atomically(zone / "energy_uj", "9000000\n")
    time.sleep(0.3)
    write_atomically(zone / "energy_uj", "2500000\n")
    wait_for(lambda: f.wraparound_tracker.get_num_wraparounds() == 1, "the wrap")
    assert f.read() == pytest.approx((2_500_000 + RANGE_UJ) / 1000)  # the original's formula
    assert "Name: package-0" in str(f)
    f.wraparound_tracker._stop()

    (tmp_path / "no-max").mkdir()
    (tmp_path / "no-max" / "name").write_text("dram\n")
    (tmp_path / "no-max" / "energy_uj").write_text("5\n")
    with pytest.raises(ZeusRAPLFileInitError, match="max energy range"):
        RAPLFile(str(tmp_path / "no-max"))
    with pytest.raises(ZeusRAPLFileInitError, match="name"):
        RAPLFile(str(tmp_path / "nowhere"))


def test_jetson_rail_readers_over_a_fake_sysfs_tree(tmp_path):
    from zeus_native.device.soc.jetson import (Command, DeviceMap, DirectPower, PowerMeasurementStrategy,
                                               VoltageCurrentProduct, check_file)

    hwmon = tmp_path / "1-0040" / "hwmon" / "hwmon3"
    hwmon.mkdir(parents=True)
    (hwmon / "in1_label").write_text("VDD_CPU_GPU_CV\n")
    (hwmon / "power1_input").write_text("4321\n")  # mW
    (hwmon / "in2_input").write_text("5080\n")      # mV
    (hwmon / "curr2_input").write_text("812\n")     # mA
    assert check_file(hwmon / "power1_input")
    assert not check_file(hwmon) and not check_file(hwmon / "power9_input")

    direct = DirectPower(hwmon / "power1_input")
    product = VoltageCurrentProduct(hwmon / "in2_input", hwmon / "curr2_input")
    assert direct.measure_power() == 4321.0
    assert product.measure_power() == pytest.approx(5080 * 812 / 1000)
    (hwmon / "power1_input").write_text("1000\n")  # read at every call, not cached
    assert direct.measure_power() == 1000.0
    rails: DeviceMap = {"gpu_power_mw": direct, "total_power_mw": product}
    assert all(isinstance(s, PowerMeasurementStrategy) for s in rails.values())
    with pytest.raises(TypeError):
        PowerMeasurementStrategy()  # abstract, as the original's
    assert [c.value for c in Command] == ["read", "stop"]


def test_amdsmi_stand_in_names_the_fix():
    import zeus_native.device.gpu.amd as amd

    try:
        import amdsmi  # noqa: F401
    except Exception:  # noqa: BLE001
        pass
    else:
        pytest.skip("AMD's amdsmi is installed here: zeus_native.device.gpu.amd.amdsmi is that module")
    assert isinstance(amd.amdsmi, amd.MockAMDSMI)
    with pytest.raises(RuntimeError, match=r"amdsmi\.amdsmi_init cannot be called: install ROCm's amdsmi"):
        amd.amdsmi.amdsmi_init()
    with pytest.raises(AttributeError):
        amd.no_such_name


def test_metric_monitoring_loops_push_until_stopped(sim, pushgateway):
    from zeus_native.metric import MonitoringProcessState, energy_monitoring_loop, power_monitoring_loop

    sim.start(a100s(1, clock="real"))
    loops = {
        "energy": (energy_monitoring_loop, ("train", [], [0], 0.05, pushgateway.url, "loops"),
                   "energy_monitor_gpu_energy_joules_total"),
        "power": (power_monitoring_loop, ("serve", [0], 0.05, pushgateway.url, "loops"),
                  "power_monitor_gpu_power_watts"),
    }
    for loop, args, metric in loops.values():
        stop: "queue.Queue[str]" = queue.Queue()
        worker = threading.Thread(target=loop, args=(args[0], stop, *args[1:]))
        state = MonitoringProcessState(queue=stop, proc=worker)
        worker.start()
        [(_, value)] = wait_for(lambda: pushgateway.find(metric, job="loops", window=args[0], index="0"),
                                  f"{metric} at the gateway")
        assert value > 0
        assert worker.is_alive()  # runs until told
        state.queue.put("stop")
        state.proc.join(timeout=10)
        assert not worker.is_alive()


RATE = {
    "label": "5cd0a1b2",
    "utility": "Fake Edison",
    "energyratestructure": [[{"rate": 0.11, "unit": "kWh"}], [{"rate": 0.25, "adj": 0.01, "unit": "kWh"}]],
    "energyweekdayschedule": [[0] * 8 + [1] * 12 + [0] * 4 for _ in range(12)],
    "energyweekendschedule": [[0] * 24 for _ in range(12)],
}


class FakeOpenEI(BaseHTTPRequestHandler):
    answers: dict = {}
    queries: list = []

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        query = parse_qs(urlparse(self.path).query)
        FakeOpenEI.queries.append(query)
        status, body = FakeOpenEI.answers[query["sector"][0]]
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(json.dumps(body).encode())

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def openei():
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeOpenEI)
    thread = threading.Thread(target=server.serve_forever)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    thread.join()
    server.server_close()


def test_openei_raw_rate_table_as_the_original_returns_it(openei):
    from zeus_native.monitor.price import (ConstantPrice, OpenEIClient, ZeusElectricityPriceHTTPError,
                                           ZeusElectricityPriceNotFoundError)

    no_weekend = {k: v for k, v in RATE.items() if k != "energyweekendschedule"}
    FakeOpenEI.answers = {
        "Residential": (200, {"items": [{"label": "other", "energyratestructure": []}, RATE]}),
        "Commercial": (200, {"items": [dict(no_weekend, label="partial")]}),
        "Industrial": (503, {"error": "down for maintenance"}),
    }

    def client(label: str, sector: str) -> OpenEIClient:
        return OpenEIClient((42.28, -83.74), label, sector, 5, api_key="k3y", base_url=openei)

    prices = client("5cd0a1b2", "Residential").get_current_electricity_prices()
    assert prices == {"energy_rate_structure": RATE["energyratestructure"],
                      "energy_weekday_schedule": RATE["energyweekdayschedule"],
                      "energy_weekend_schedule": RATE["energyweekendschedule"]}
    query = FakeOpenEI.queries[-1]
    assert {k: query[k][0] for k in ("api_key", "lat", "lon", "radius", "detail")} == {
        "api_key": "k3y", "lat": "42.28", "lon": "-83.74", "radius": "5", "detail": "full"}
    with pytest.raises(ZeusElectricityPriceNotFoundError, match="no rate with that label"):
        client("nope", "Residential").get_current_electricity_prices()
    with pytest.raises(ZeusElectricityPriceNotFoundError, match="partial.*energyweekendschedule"):
        client("partial", "Commercial").get_current_electricity_prices()
    with pytest.raises(ZeusElectricityPriceHTTPError, match="503.*down for maintenance"):
        client("5cd0a1b2", "Industrial").get_current_electricity_prices()

    flat = ConstantPrice(0.3, "USD").get_current_electricity_prices()
    assert flat["energy_rate_structure"] == [[{"rate": 0.3}]]
    assert flat["energy_weekday_schedule"] == flat["energy_weekend_schedule"] == [[0] * 24] * 12
