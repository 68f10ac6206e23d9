"""Behaviour the original's examples, docs and users rely on, run on zeus_native:
the original's utils modules, construction without credentials, the power-limit
states as pydantic models, Measurement equality over the original's fields,
PowerMonitor.get_energy over a partly covered interval, and messages that name
Python spellings rather than the CLI's or C++'s."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import time

import pytest

from conftest import JsonServer, a100s

ORIGINAL_FIELDS = ["time", "gpu_energy", "cpu_energy", "dram_energy", "soc_energy"]


def test_measurement_equality_and_asdict_cover_the_originals_fields_only(sim):
    sim.start(a100s(1))
    from zeus_native.monitor import Measurement, ZeusMonitor

    monitor = ZeusMonitor(gpu_indices=[0])
    monitor.begin_window("w")
    sim.advance(1.0)
    measured = monitor.end_window("w")
    rebuilt = Measurement(**{name: getattr(measured, name) for name in ORIGINAL_FIELDS})
    assert rebuilt == measured and measured == rebuilt
    assert list(dataclasses.asdict(measured)) == ORIGINAL_FIELDS
    assert [f.name for f in dataclasses.fields(Measurement)] == ORIGINAL_FIELDS
    assert measured.start_time is not None and measured.provenance  # the additions are kept
    other = Measurement(time=1.0, gpu_energy={0: 2.0}, start_time=5.0, window_warnings=["late"])
    assert other == Measurement(time=1.0, gpu_energy={0: 2.0}) and other.window_warnings == ["late"]
    assert other != Measurement(time=1.0, gpu_energy={0: 3.0})


def test_a_cancelled_window_has_the_originals_empty_cpu_energy(sim):
    sim.start(a100s(1))
    from zeus_native.monitor import ZeusMonitor

    monitor = ZeusMonitor(gpu_indices=[0])
    monitor.begin_window("w")
    cancelled = monitor.end_window("w", cancel=True)
    assert cancelled.cpu_energy == {} and cancelled.gpu_energy == {0: 0.0}


POWER_LIMIT_STATES = """
import json, sys
from zeus_native.optimizer.power_limit import Done, PowerLimitMeasurement, Profiling, Ready, Warmup

ready = Ready(next_power_limit=300000, steps=2)
out = {"str": str(ready), "dict": ready.dict(), "json": json.loads(ready.json()),
       "copy": ready.copy().dict(), "eq": ready == Ready(next_power_limit=300000, steps=2),
       "measurement": PowerLimitMeasurement(power_limit=300, energy=1.5, time=0.5).dict()}
refused = []
for make in (lambda: Done(optimal_power_limit=-5), lambda: Warmup(current_power_limit=0, steps=1),
             lambda: Profiling(current_power_limit=100, steps=-1),
             lambda: PowerLimitMeasurement(power_limit=300, energy=-1.0, time=0.5)):
    try:
        make()
    except ValueError as e:  # pydantic's ValidationError is a ValueError
        refused.append(type(e).__name__)
out["refused"] = refused
print(json.dumps(out))
"""


@pytest.mark.parametrize("pydantic", ["installed", "absent"])
def test_power_limit_states_are_validated_models(tmp_path, pydantic):
    script = tmp_path / "states.py"
    block = "import sys; sys.modules['pydantic'] = None\n" if pydantic == "absent" else ""
    script.write_text(block + POWER_LIMIT_STATES)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["str"] == "next_power_limit=300000 steps=2"
    assert out["dict"] == out["json"] == out["copy"] == {"next_power_limit": 300000, "steps": 2}
    assert out["eq"] is True
    assert out["measurement"] == {"power_limit": 300, "energy": 1.5, "time": 0.5}
    assert len(out["refused"]) == 4, out["refused"]
    if pydantic == "installed":
        assert set(out["refused"]) == {"ValidationError"}


def test_the_optimizer_state_is_a_pydantic_model(sim):
    sim.start(a100s(1))
    from zeus_native.monitor import ZeusMonitor
    from zeus_native.optimizer import GlobalPowerLimitOptimizer
    from zeus_native.utils.pydantic_v1 import BaseModel

    plo = GlobalPowerLimitOptimizer(ZeusMonitor(gpu_indices=[0]), wait_steps=1, warmup_steps=0, profile_steps=1,
                                    pl_step=150)
    assert isinstance(plo.state, BaseModel) and plo.state.dict()["steps"] >= 0
    plo.close()


def test_electricity_maps_client_constructs_without_a_token(monkeypatch):
    monkeypatch.delenv("ELECTRICITYMAPS_API_TOKEN", raising=False)
    from zeus_native.monitor.carbon import ElectrictyMapsClient

    client = ElectrictyMapsClient((42.28, -83.74), estimate=True)
    assert client.estimate is True and client.location == (42.28, -83.74)


def test_python_messages_name_python_spellings(sim):
    sim.start(a100s(1))
    from zeus_native._errors import PYTHON_SPELLINGS, python_spelling
    from zeus_native.monitor import PowerMonitor, ZeusMonitor

    monitor = ZeusMonitor(gpu_indices=[0])
    monitor.begin_window("twice")
    with pytest.raises(ValueError) as error:
        monitor.begin_window("twice")
    assert "restart=True" in str(error.value) and "restart = true" not in str(error.value)
    with pytest.raises(ValueError) as error:
        PowerMonitor(gpu_indices=[0], update_period=-1)
    assert "update_period" in str(error.value) and " ns" not in str(error.value)
    # The A100 has no memory power sensor: the caller's choice of domain is a ValueError.
    with pytest.raises(ValueError) as error:
        PowerMonitor(gpu_indices=[0], power_domains=["memory_average"])
    assert "power_domains" in str(error.value) and "::" not in str(error.value)
    for native, _ in PYTHON_SPELLINGS:
        assert native not in python_spelling(f"before {native} after")


def test_get_energy_integrates_what_the_readings_cover(sim):
    sim.start(a100s(1, clock="real"))
    from zeus_native.monitor import PowerMonitor

    start = time.time()  # before the monitor: the original's common pattern
    monitor = PowerMonitor(gpu_indices=[0], update_period=0.02)
    time.sleep(0.5)
    end = time.time()
    energy = monitor.get_energy(start, end)
    power = sim.true_power(0)  # idle: constant
    assert energy is not None and 0.5 * power * (end - start) < energy[0] <= 1.05 * power * (end - start)
    with pytest.raises(ValueError):  # nothing measured in it
        monitor.get_energy(start - 100.0, start - 50.0)
    monitor.stop()


def test_the_originals_utils_modules(monkeypatch, tmp_path):
    from zeus_native.utils.env import get_env

    monkeypatch.setenv("ZN_FLAG", "TRUE")
    monkeypatch.setenv("ZN_COUNT", "3")
    assert get_env("ZN_FLAG", bool) is True and get_env("ZN_COUNT", int) == 3
    assert get_env("ZN_MISSING", int, default=7) == 7
    with pytest.raises(ValueError, match="ZN_MISSING"):
        get_env("ZN_MISSING", int)
    monkeypatch.setenv("ZN_FLAG", "yes")
    with pytest.raises(ValueError, match="yes"):
        get_env("ZN_FLAG", bool)

    from zeus_native.utils.logging import FileAndConsole

    tee = FileAndConsole(tmp_path / "out.log")
    tee.write("hello\n")
    assert (tmp_path / "out.log").read_text() == "hello\n"

    import asyncio
    import logging

    from zeus_native.utils.async_utils import create_task

    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record)

    logger = logging.getLogger("zn-test")
    logger.addHandler(Keep())

    async def fails():
        raise RuntimeError("boom")

    async def main():
        task = create_task(fails(), logger)
        await asyncio.sleep(0.01)
        return task

    asyncio.run(main())
    assert records and records[0].exc_info[1].args == ("boom",)

    from zeus_native.utils import multiprocessing as zmp
    from zeus_native.utils.pydantic_v1 import BaseModel

    assert zmp._is_global_in_spawned_child() is False and issubclass(BaseModel, object)


def test_get_ip_lat_long_reads_the_services_loc(monkeypatch):
    from zeus_native.utils import lat_lon

    with JsonServer(200, {"loc": "42.2776,-83.7409"}) as ipinfo:
        monkeypatch.setattr(lat_lon, "IP_INFO_URL", f"{ipinfo.url}/json")
        assert lat_lon.get_ip_lat_long() == (42.2776, -83.7409)


def test_replay_zeus_monitor_replays_a_log_the_monitor_wrote(sim, tmp_path):
    sim.start(a100s(2))
    from zeus_native.monitor import ZeusMonitor
    from zeus_native.utils.testing import ReplayZeusMonitor

    log = tmp_path / "windows.csv"
    monitor = ZeusMonitor(gpu_indices=[0, 1], log_file=log)
    recorded = []
    for name in ("a", "b"):
        monitor.begin_window(name)
        sim.advance(0.5)
        recorded.append(monitor.end_window(name))
    del monitor
    replay = ReplayZeusMonitor(log_file=log)
    assert replay.gpu_indices == [0, 1]
    for name, original in zip(("a", "b"), recorded):
        replay.begin_window(name, sync_execution=False)
        again = replay.end_window(name, sync_execution=False)
        assert again.time == pytest.approx(original.time, abs=1e-3)
        assert again.gpu_energy == pytest.approx(original.gpu_energy, abs=1e-3)


NON_ROOT_CPU = """
from zeus_native.monitor import ZeusMonitor
try:
    ZeusMonitor(gpu_indices=[0], cpu_indices=[0])
except RuntimeError as e:
    print(type(e).__name__ + ": " + str(e))
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run the probe as another user")
def test_cpu_indices_without_the_privilege_is_the_originals_runtime_error(sim):
    import shutil
    import tempfile
    from pathlib import Path

    shared = Path(tempfile.mkdtemp(prefix="zn-nonroot-"))  # pytest's tmp_path is root's alone
    try:
        shared.chmod(0o755)
        zone = shared / "powercap" / "intel-rapl:0"
        zone.mkdir(parents=True)
        for path in (shared / "powercap", zone):
            path.chmod(0o755)
        for name, text, mode in (("name", "package-0\n", 0o644), ("max_energy_range_uj", "262143328850\n", 0o644),
                                 ("energy_uj", "1000000\n", 0o400)):  # energy_uj: root only, as the kernel makes it
            (zone / name).write_text(text)
            (zone / name).chmod(mode)
        config = shared / "sim.json"
        config.write_text(json.dumps(a100s(1)))
        config.chmod(0o644)
        (shared / "state").mkdir(mode=0o777)
        (shared / "state").chmod(0o777)
        script = shared / "probe.py"
        script.write_text(NON_ROOT_CPU)
        script.chmod(0o644)
        env = dict(os.environ, ZEUS_POWERCAP_ROOT=str(shared / "powercap"), HOME=str(shared),
                   ZEUS_SIM_CONFIG=str(config), ZEUS_SIM_STATE=str(shared / "state" / "sim"))
        run = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable,
                              str(script)], capture_output=True, text=True, env=env, timeout=60, cwd=shared)
    finally:
        shutil.rmtree(shared, ignore_errors=True)
    assert run.stdout.startswith("RuntimeError: Root privilege is required"), run.stdout + run.stderr
    assert "cpu_indices=[]" in run.stdout and "packaging/" not in run.stdout


def test_show_env_says_the_version_once(sim):
    sim.start(a100s(1))
    import zeus_native
    from zeus_native.show_env import report

    text = report()
    assert sum(zeus_native.__version__ in line for line in text.splitlines()) == 1, text[:400]


def test_non_str_window_keys_are_named_as_the_user_keyed_them(sim):
    sim.start(a100s(1))
    from zeus_native.monitor import ZeusMonitor

    monitor = ZeusMonitor(gpu_indices=[0])
    monitor.begin_window(123)
    with pytest.raises(ValueError) as error:
        monitor.begin_window(123)
    assert "'123'" in str(error.value) and "int:" not in str(error.value)
    with pytest.raises(ValueError) as error:
        monitor.end_window(("tuple", 1))
    assert "('tuple', 1)" in str(error.value) and "tuple:" not in str(error.value)
    monitor.begin_window(("epoch", 3))
    assert sorted(monitor.reset_windows(), key=repr) == sorted([123, ("epoch", 3)], key=repr)


def test_non_str_window_keys_read_as_the_original_writes_them(sim, tmp_path, caplog):
    """The original writes str(key) wherever a key shows ("123", "('epoch', 3)"): its messages,
    its log file and its logger. Windows of keys with the same str() (123 and "123") stay apart."""
    import logging

    sim.start(a100s(1))
    from zeus_native.monitor import ZeusMonitor
    from zeus_native.monitor.carbon import CarbonEmissionMonitor, ConstantCarbonIntensity

    log = tmp_path / "windows.csv"
    monitor = ZeusMonitor(gpu_indices=[0], log_file=log)
    monitor.begin_window(123)
    monitor.begin_window("123")
    monitor.begin_window(("epoch", 3))
    assert sorted(monitor.open_windows, key=repr) == sorted([123, "123", ("epoch", 3)], key=repr)
    sim.advance(1.0)
    for key in (("epoch", 3), "123", 123):
        assert monitor.end_window(key).time == pytest.approx(1.0)
    rows = log.read_text().splitlines()[1:]
    assert [row.split(",", 1)[1].rsplit(",", 2)[0] for row in rows] == ["('epoch', 3)", "123#2", "123"]
    with pytest.raises(ValueError, match=r"Measurement window '123' does not exist"):
        monitor.end_window(123)  # "123" is not open either: never another key's window
    monitor.begin_window("123")
    with pytest.raises(ValueError, match=r"'123' does not exist"):
        monitor.end_window(123)
    assert monitor.open_windows == ["123"]

    monitor.begin_window(("epoch", 4))
    with caplog.at_level(logging.INFO, logger="zeus_native.monitor.energy"):
        assert sorted(monitor.reset_windows(), key=repr) == sorted(["123", ("epoch", 4)], key=repr)
    assert "ZeusMonitor reset dropped active windows: [" in caplog.text
    assert "('epoch', 4)" in caplog.text and "tuple:" not in caplog.text

    carbon = CarbonEmissionMonitor(ConstantCarbonIntensity(100.0), gpu_indices=[0])
    carbon.begin_window(7)
    with pytest.raises(ValueError) as error:
        carbon.begin_window(7)
    assert "'7'" in str(error.value) and "int:" not in str(error.value)
    carbon.begin_window("7")
    sim.advance(1.0)
    assert carbon.end_window(7).time == pytest.approx(1.0)
    assert carbon.end_window("7").time == pytest.approx(1.0)
