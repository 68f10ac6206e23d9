"""PowerStreamingClient (the original's zeus.monitor.power_streaming) against several zeusd
instances at once: two over TCP, one over a Unix socket, all on one simulator, plus a
reconnect after a daemon restarts and the original's errors."""

from __future__ import annotations

import os
import socket
import subprocess
import time

import pytest

from conftest import a100s, wait_for
from zeusd_daemon import Daemon, require_zeusd

POWER_NOISE_W = 0.5  # the simulator's instant-power noise σ (docs/simulator.md)


@pytest.fixture
def fleet(sim, tmp_path, monkeypatch):
    """Three zeusd on one simulator (2 GPUs) and a fake RAPL package: TCP, TCP, Unix socket."""
    require_zeusd()
    zone = tmp_path / "powercap" / "intel-rapl:0"
    zone.mkdir(parents=True)
    (zone / "name").write_text("package-0\n")
    (zone / "energy_uj").write_text("1000000\n")  # never advances: 0 W
    (zone / "max_energy_range_uj").write_text("262143328850\n")
    monkeypatch.setenv("ZEUS_POWERCAP_ROOT", str(zone.parent))
    sim.start(a100s(2, clock="real"))
    daemons = [Daemon(tmp_path / "a"), Daemon(tmp_path / "b"), Daemon(tmp_path / "c", sock=tmp_path / "c.sock")]
    yield daemons
    for d in daemons:
        d.stop()


def test_streams_several_daemons_at_once(fleet, sim):
    from zeus_native.monitor.power_streaming import CpuPowerReading, PowerStreamingClient
    from zeus_native.utils.zeusd import ZeusdConfig

    a, b, c = fleet
    client = PowerStreamingClient([ZeusdConfig.tcp("127.0.0.1", a.port, cpu_indices=[]),
                                   ZeusdConfig.tcp("127.0.0.1", b.port, gpu_indices=[1], cpu_indices=[0]),
                                   ZeusdConfig.uds(str(c.sock), cpu_indices=[])], reconnect_delay_s=0.2)
    keys = {f"127.0.0.1:{a.port}", f"127.0.0.1:{b.port}", str(c.sock)}
    assert set(client.clock_offsets) == keys
    assert all(abs(o) < 0.5 for o in client.clock_offsets.values())  # one machine, one clock
    expected = {f"127.0.0.1:{a.port}": ({0, 1}, set()), f"127.0.0.1:{b.port}": ({1}, {0}), str(c.sock): ({0, 1}, set())}

    def complete():
        readings = client.get_power()
        return readings if {k: (set(r.gpu_power_w), set(r.cpu_power_w)) for k, r in readings.items()} == expected \
            else None

    readings = wait_for(complete, "every daemon's GPUs and CPUs")
    now = time.time()
    for key, r in readings.items():
        assert abs(r.timestamp_s - now) < 3.0, key
        for g, watts in r.gpu_power_w.items():
            assert abs(watts - sim.true_power(g)) <= 6 * POWER_NOISE_W, (key, g, watts, sim.true_power(g))
    assert readings[f"127.0.0.1:{b.port}"].cpu_power_w == {0: CpuPowerReading(cpu_w=0.0, dram_w=None)}

    snapshots = []
    for snapshot in client:  # a snapshot per update, until stop()
        snapshots.append(snapshot)
        if len(snapshots) == 3:
            client.stop()
    assert len(snapshots) == 3 and all(set(s) == keys for s in snapshots)
    client.stop()  # idempotent


def test_reconnects_after_a_daemon_restarts(fleet):
    from zeus_native.monitor.power_streaming import PowerStreamingClient
    from zeus_native.utils.zeusd import ZeusdConfig

    a = fleet[0]
    key = f"127.0.0.1:{a.port}"
    client = PowerStreamingClient([ZeusdConfig.tcp("127.0.0.1", a.port, cpu_indices=[])], reconnect_delay_s=0.2)
    wait_for(lambda: key in client.get_power(), "the first reading")
    a.stop()
    time.sleep(0.5)
    restarted = time.time()
    a.start()
    wait_for(lambda: client.get_power()[key].timestamp_s > restarted, "a reading after the restart")
    client.stop()


def test_the_originals_errors(fleet):
    from zeus_native.monitor.power_streaming import PowerStreamingClient
    from zeus_native.utils.zeusd import ZeusdConfig, ZeusdConnectionError

    a = fleet[0]
    with pytest.raises(ValueError, match="Duplicate server endpoints"):
        PowerStreamingClient([ZeusdConfig.tcp("127.0.0.1", a.port), ZeusdConfig.tcp("127.0.0.1", a.port)])
    with pytest.raises(ValueError, match=r"GPU indices \[7\] requested for 127.0.0.1:\d+ but only \[0,1\]"):
        PowerStreamingClient([ZeusdConfig.tcp("127.0.0.1", a.port, gpu_indices=[0, 7])])
    with socket.socket() as held:  # bound and never listening: refused, and no other process can take it
        held.bind(("127.0.0.1", 0))
        nobody = held.getsockname()[1]
        with pytest.raises(ZeusdConnectionError, match=f"127.0.0.1:{nobody}"):
            PowerStreamingClient([ZeusdConfig.tcp("127.0.0.1", nobody)])


def test_the_interpreter_exits_cleanly_while_streaming(fleet, tmp_path):
    """The stream threads are joined by zeus_native's atexit hook: exit code 0, none left after it."""
    import sys

    a = fleet[0]
    script = tmp_path / "streaming_at_exit.py"
    script.write_text(f"""
import atexit, os, sys, time

def threads_left():
    left = len(os.listdir("/proc/self/task")) - 1
    if left:
        print(f"{{left}} thread(s) left after the atexit hooks", file=sys.stderr)
        os._exit(3)

atexit.register(threads_left)
from zeus_native.monitor.power_streaming import PowerStreamingClient
from zeus_native.utils.zeusd import ZeusdConfig
client = PowerStreamingClient([ZeusdConfig.tcp("127.0.0.1", {a.port}, cpu_indices=[])])
while not client.get_power():
    time.sleep(0.02)
""")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
