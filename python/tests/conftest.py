"""Fixtures: a fresh GPU simulator per test (own config and state file), reached
through zeus_native exactly as users reach it (ZEUS_SIMULATE=1), and its
control API (ground truth, virtual clock, load) through ctypes on the same
library the package ships."""

from __future__ import annotations

import ctypes
import gc
import json
import os
import time
from pathlib import Path

import pytest

import zeus_native
from zeus_native.device import _sets

SIM_LIBRARY = Path(zeus_native.__file__).parent / "zeus-sim" / "libnvidia-ml.so.1"


class Simulator:
    """The simulator's control API (sim/include/zeus_sim/zeus_sim.h)."""

    def __init__(self, directory: Path, port: int | None = None) -> None:
        self.dir = directory
        self.lib = ctypes.CDLL(str(SIM_LIBRARY))
        self.lib.zeusSimLastError.restype = ctypes.c_char_p
        self._open = False

    def _call(self, name: str, *args) -> None:
        status = getattr(self.lib, name)(*args)
        assert status == 0, f"{name}: {self.lib.zeusSimLastError().decode()}"

    def start(self, config: dict) -> "Simulator":
        path = self.dir / "sim.json"
        path.write_text(json.dumps(config))
        os.environ["ZEUS_SIM_CONFIG"] = str(path)
        self._call("zeusSimOpen")
        self._open = True
        return self

    def close(self) -> None:
        if self._open:
            self._call("zeusSimClose")
            self._open = False

    def truth(self, gpu: int) -> float:
        """Ground-truth energy of `gpu` (J)."""
        j = ctypes.c_double()
        self._call("zeusSimGroundTruthEnergy", ctypes.c_uint(gpu), ctypes.byref(j))
        return j.value

    def true_power(self, gpu: int) -> float:
        w = ctypes.c_double()
        self._call("zeusSimTruePower", ctypes.c_uint(gpu), ctypes.byref(w))
        return w.value

    def temperature(self, gpu: int) -> float:
        c = ctypes.c_double()
        self._call("zeusSimTemperature", ctypes.c_uint(gpu), ctypes.byref(c))
        return c.value

    def advance(self, seconds: float) -> None:
        """Move the virtual clock."""
        self._call("zeusSimAdvance", ctypes.c_double(seconds))

    def load(self, gpu: int, utilization: float) -> int:
        load_id = ctypes.c_int()
        self._call("zeusSimLoadBegin", ctypes.c_uint(gpu), ctypes.c_double(utilization), ctypes.byref(load_id))
        return load_id.value

    def unload(self, load_id: int) -> None:
        self._call("zeusSimLoadEnd", ctypes.c_int(load_id))


@pytest.fixture
def sim(tmp_path, monkeypatch):
    """A simulator with no GPU configured yet: call sim.start(config)."""
    monkeypatch.setenv("ZEUS_SIMULATE", "1")
    monkeypatch.setenv("ZEUS_SIM_STATE", str(tmp_path / "state"))
    monkeypatch.setenv("ZEUS_POWERCAP_ROOT", str(tmp_path / "no-powercap"))
    for name in ("CUDA_VISIBLE_DEVICES", "ZEUSD_SOCK_PATH", "ZEUSD_HOST_PORT", "ZEUS_JETSON_SYSFS_ROOT",
                 "ZEUS_SIM_LIBRARY"):
        monkeypatch.delenv(name, raising=False)
    _sets.reset()
    simulator = Simulator(tmp_path)
    yield simulator
    # Close everything that holds the simulator open, so the next test starts
    # a fresh session with its own configuration.
    gc.collect()
    _sets.reset()
    gc.collect()
    simulator.close()
    os.environ.pop("ZEUS_SIM_CONFIG", None)


def a100s(count: int, clock: str = "virtual") -> dict:
    """A simulator configuration with `count` A100s."""
    return {"clock": clock, "gpus": [{"model": "A100-SXM4-40GB", "count": count}]}


ENERGY_PERIOD_S = 0.1  # the simulator's energy counter refresh period (docs/simulator.md)


def energy_bound(sim: Simulator, gpu: int) -> float:
    """How far a window's counter energy may be from ground truth: one refresh
    period of the current true power at each edge, plus the 1 mJ resolution."""
    return 2 * sim.true_power(gpu) * ENERGY_PERIOD_S + 0.002


PUSHGATEWAY = Path("/usr/bin/prometheus-pushgateway")


def wait_ready(process, url: str, seconds: float, poll: float, answer_timeout: float) -> bool:
    """Whether `url` answered 200 (each try given `answer_timeout`) within `seconds` while `process` (a Popen) runs."""
    import urllib.request

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with urllib.request.urlopen(url, timeout=answer_timeout) as reply:
                if reply.status == 200:
                    return True
        except OSError:
            time.sleep(poll)
    return False


class Pushgateway:
    """Debian's prometheus-pushgateway on a free loopback port, in its own
    directory (as tests/metrics/prometheus_servers.cpp starts it for C++)."""

    def __init__(self, directory: Path, port: int | None = None) -> None:
        import socket
        import subprocess

        directory.mkdir()
        self.log_path = directory / "server.log"
        for _attempt in range(3 if port is None else 1):
            if port is None:
                with socket.socket() as s:
                    s.bind(("127.0.0.1", 0))
                    self.port = s.getsockname()[1]
            else:
                self.port = port  # a test that brings a gateway up late, where pushes went before
            self.url = f"http://127.0.0.1:{self.port}"
            with open(self.log_path, "ab") as log:
                # Memory only: Debian's default persistence file (/var/lib/prometheus/
                # pushgateway.data) is shared by every gateway on the machine, so one
                # test's pushes would be served to the next, and a stored invalid push
                # turns every later /metrics into HTTP 500.
                self.process = subprocess.Popen(
                    [str(PUSHGATEWAY), f"--web.listen-address=127.0.0.1:{self.port}", "--persistence.file="],
                    cwd=directory, stdout=log, stderr=subprocess.STDOUT)
            if wait_ready(self.process, self.url + "/-/ready", 30, 0.05, 1):
                return
            self.stop()  # exited (the port was taken in between) or never ready: another port
        pytest.fail(f"prometheus-pushgateway did not become ready; its log:\n{self.log_path.read_text()}")

    def samples(self) -> list[tuple[str, dict[str, str], float]]:
        """Every sample the gateway serves on /metrics: (name, labels, value)."""
        import re
        import urllib.request

        with urllib.request.urlopen(self.url + "/metrics", timeout=5) as reply:
            body = reply.read().decode()
        out = []
        for line in body.splitlines():
            if not line or line.startswith("#"):
                continue
            match = re.fullmatch(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)', line)
            assert match, f"malformed exposition line: {line!r}"
            labels = dict(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', match.group(2) or ""))
            out.append((match.group(1), labels, float(match.group(3))))
        return out

    def find(self, name: str, **labels: str) -> list[tuple[dict[str, str], float]]:
        """The samples named `name` whose labels include `labels`."""
        return [(l, v) for n, l, v in self.samples() if n == name and labels.items() <= l.items()]

    def stop(self) -> None:
        import subprocess

        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def require_pushgateway() -> None:
    """Skips the test (saying how to get it) where Debian's package is missing."""
    if not PUSHGATEWAY.exists():
        pytest.skip(f"{PUSHGATEWAY} is missing: scripts/setup.sh installs Debian's prometheus-pushgateway")


@pytest.fixture
def pushgateway(tmp_path):
    """A running Pushgateway on a free loopback port."""
    require_pushgateway()
    gateway = Pushgateway(tmp_path / "pushgateway")
    yield gateway
    gateway.stop()


def wait_for(predicate, what: str, timeout: float = 20.0):
    """Polls `predicate` until it returns something true; fails naming `what`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    pytest.fail(f"timed out after {timeout} s waiting for {what}")


class JsonServer:
    """A loopback HTTP server answering every GET with one JSON body and status
    (a stand-in for a web API), in a daemon thread; `url` is its base URL."""

    def __init__(self, status: int, payload: object) -> None:
        import http.server
        import threading

        body = json.dumps(payload).encode()

        class Answer(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.HTTPServer(("127.0.0.1", 0), Answer)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def __enter__(self) -> "JsonServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
