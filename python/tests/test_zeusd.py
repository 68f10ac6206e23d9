"""With ZEUSD_SOCK_PATH set, zeus_native changes GPU settings through a real zeusd
(the repository's build/bin/zeusd over the same simulator state)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from conftest import SIM_LIBRARY, a100s

ZEUSD = Path(os.environ.get("ZEUS_TEST_ZEUSD", Path(__file__).resolve().parents[2] / "build" / "bin" / "zeusd"))


@pytest.fixture
def zeusd(sim, tmp_path, monkeypatch):
    if not ZEUSD.exists():
        pytest.skip(f"{ZEUSD} is not built (scripts/build.sh builds it; or set ZEUS_TEST_ZEUSD)")
    sim.start(a100s(2))
    sock = tmp_path / "zeusd.sock"
    env = dict(os.environ, ZEUS_SIM_LIBRARY=str(SIM_LIBRARY))
    for name in ("ZEUSD_SOCK_PATH", "ZEUSD_HOST_PORT", "ZEUSD_TOKEN"):
        env.pop(name, None)
    log = open(tmp_path / "zeusd.log", "wb")
    proc = subprocess.Popen([str(ZEUSD), "serve", "--num-workers", "1", "--socket-path", str(sock),
                             "--enable", "gpu-control,gpu-read"], env=env,
                            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.connect(str(sock))
            break
        except OSError:
            time.sleep(0.02)
    assert proc.poll() is None, (tmp_path / "zeusd.log").read_text()
    monkeypatch.setenv("ZEUSD_SOCK_PATH", str(sock))
    proc.log_path = tmp_path / "zeusd.log"
    yield proc
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=15)
    log.close()


def test_gpu_settings_go_through_zeusd(zeusd, sim):
    from zeus_native.device import get_gpus
    from zeus_native.monitor import ZeusMonitor

    gpus = get_gpus()
    assert gpus.backend_info["zeusd_endpoint"] == "unix:" + os.environ["ZEUSD_SOCK_PATH"]
    gpus.set_power_management_limit(1, 200_000)
    assert gpus.get_power_management_limit(1) == 200_000  # read locally, from the shared simulator state
    monitor = ZeusMonitor()
    monitor.begin_window("w")
    sim.advance(0.5)
    assert monitor.end_window("w").gpu_energy[1] > 0  # readings stay local
    gpus.reset_power_management_limit(1)
    log = zeusd.log_path.read_text()
    assert "POST /gpu/set_power_limit?gpu_ids=1&power_limit_mw=200000" in log  # the daemon did it
    assert log.count("POST /gpu/set_power_limit?gpu_ids=1") == 2  # and the reset (to the default limit)
