"""Bad device indices get the original's exception classes with a message
naming the index, the valid ones and the fix, before any device is read; the
monitor CLI prints them as one line, not a traceback."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import a100s


@pytest.mark.parametrize("bad", [7, 2, -1])
def test_every_monitor_rejects_an_unknown_gpu_index(sim, bad):
    sim.start(a100s(2))
    from zeus_native.device.gpu import ZeusGPUInvalidArgError
    from zeus_native.monitor import PowerMonitor, TemperatureMonitor, ZeusMonitor

    pattern = rf"GPU index {bad} is out of range: 2 GPU\(s\) are visible \(use an index from 0 to 1"
    for make in (ZeusMonitor, PowerMonitor, TemperatureMonitor):
        with pytest.raises(ZeusGPUInvalidArgError, match=pattern):
            make(gpu_indices=[0, bad])


def test_a_gpu_index_must_be_an_integer(sim):
    sim.start(a100s(1))
    from zeus_native.device.gpu import ZeusGPUInvalidArgError
    from zeus_native.monitor import PowerMonitor, ZeusMonitor

    with pytest.raises(ZeusGPUInvalidArgError, match=r"GPU index '0' is not an integer"):
        ZeusMonitor(gpu_indices=["0"])
    with pytest.raises(ZeusGPUInvalidArgError, match=r"GPU index 0.5 is not an integer"):
        PowerMonitor(gpu_indices=[0.5])
    import numpy

    assert ZeusMonitor(gpu_indices=[numpy.int64(0)]).gpu_indices == [0]  # any integer type


def test_cpu_indices_without_rapl_name_the_reason(sim):
    sim.start(a100s(1))  # the fixture points RAPL at a missing powercap tree
    from zeus_native.device.cpu import ZeusCPUInitError
    from zeus_native.monitor import ZeusMonitor

    with pytest.raises(ZeusCPUInitError, match=r"CPU indices \[0\] were given but no CPU package can be read.*"
                                               r"leave cpu_indices unset"):
        ZeusMonitor(cpu_indices=[0])
    assert ZeusMonitor(cpu_indices=[]).cpu_indices == []


def test_an_unknown_cpu_package_is_not_found(sim, tmp_path, monkeypatch):
    zone = tmp_path / "powercap" / "intel-rapl:0"
    zone.mkdir(parents=True)
    (zone / "name").write_text("package-0\n")
    (zone / "energy_uj").write_text("1000000\n")
    (zone / "max_energy_range_uj").write_text("262143328850\n")
    monkeypatch.setenv("ZEUS_POWERCAP_ROOT", str(tmp_path / "powercap"))
    sim.start(a100s(1))
    from zeus_native.device.cpu import ZeusCPUNotFoundError
    from zeus_native.monitor import ZeusMonitor

    with pytest.raises(ZeusCPUNotFoundError, match=r"CPU index 3 is out of range: 1 CPU package\(s\) found"):
        ZeusMonitor(cpu_indices=[3])
    assert ZeusMonitor(cpu_indices=[0]).cpu_indices == [0]


@pytest.mark.parametrize("command", ["energy", "power"])
def test_the_monitor_cli_prints_one_line_and_exits_2(sim, command):
    sim.start(a100s(2))
    done = subprocess.run([sys.executable, "-m", "zeus_native.monitor", command, "--gpu-indices", "7", "--format",
                           "json"], capture_output=True, text=True, env=dict(os.environ), timeout=60)
    assert done.returncode == 2
    assert done.stdout == ""  # nothing on the document's stream
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("python -m zeus_native.monitor: error: GPU index 7 is out of range")
    assert "0 to 1" in done.stderr
