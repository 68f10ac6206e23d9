"""Shared plumbing for the interop tests that drive a real `zeusd` with the
original Zeus's own Python client (PyPI `zeus` 0.16.0, installed into .venv/
by scripts/setup-python.sh).

Each test script is run by ctest as
    python <script> <zeusd binary> <simulator libnvidia-ml.so.1>
with LD_LIBRARY_PATH pointing at the simulator's directory, so that pynvml (and
the original's device layer) in this process load the simulator as
`libnvidia-ml.so.1`. The daemon and this process share one simulator state
file (ZEUS_SIM_STATE), so what the daemon changes is read back here through
NVIDIA's own bindings, independently of the daemon.
"""
from __future__ import annotations

import atexit
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "python" / "tests"))
from server_listening import wait_for_listening  # noqa: E402

# Variables of the environment this runs in must not steer the client.
for _name in ("ZEUSD_SOCK_PATH", "ZEUSD_HOST_PORT", "ZEUSD_TOKEN", "ZEUS_SIM_CONFIG", "CUDA_VISIBLE_DEVICES"):
    os.environ.pop(_name, None)

if len(sys.argv) < 3:
    sys.exit(f"usage: {sys.argv[0]} <zeusd> <libnvidia-ml.so.1 of the simulator>")
ZEUSD = os.path.abspath(sys.argv[1])
SIM_LIBRARY = os.path.abspath(sys.argv[2])

# One scratch directory per test process; the simulator state of this process
# is fixed before pynvml is first initialised (the library reads it then).
WORK = Path(tempfile.mkdtemp(prefix="zeusd-interop-"))
atexit.register(shutil.rmtree, WORK, True)
SIM_STATE = WORK / "sim-state"
os.environ["ZEUS_SIM_STATE"] = str(SIM_STATE)

# Counters of the fake RAPL zones at daemon start, and their range.
PACKAGE_START_UJ = 5_000_000
DRAM_START_UJ = 700_000
RANGE_UJ = 262_143_328_850


def check(condition: bool, message: str = "") -> None:
    """assert that also works under python -O."""
    if not condition:
        raise AssertionError(message)


def wait_until(predicate, timeout: float = 10.0, interval: float = 0.02, what: str = "condition"):
    """Polls `predicate` until it returns a truthy value; returns that value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


def expect_raises(exc_type, fn, *args, contains: str | None = None, **kwargs):
    """Calls fn and checks that it raises exc_type (with `contains` in its text)."""
    try:
        fn(*args, **kwargs)
    except exc_type as e:
        if contains is not None:
            check(contains in str(e), f"{exc_type.__name__} without {contains!r}: {e}")
        return e
    raise AssertionError(f"{getattr(fn, '__name__', fn)} did not raise {exc_type.__name__}")


class FakePowercap:
    """A powercap tree laid out like /sys/class/powercap with one package
    (intel-rapl:0, package-0) and its DRAM subzone (intel-rapl:0:0)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.package = root / "intel-rapl:0"
        self.dram = self.package / "intel-rapl:0:0"
        self._lock = threading.Lock()
        self.energy = {self.package: PACKAGE_START_UJ, self.dram: DRAM_START_UJ}
        for zone, name in ((self.package, "package-0"), (self.dram, "dram")):
            zone.mkdir(parents=True)
            self._write(zone / "name", name + "\n")
            self._write(zone / "max_energy_range_uj", f"{RANGE_UJ}\n")
            self._write(zone / "energy_uj", f"{self.energy[zone]}\n")

    @staticmethod
    def _write(path: Path, text: str) -> None:
        # Atomically, so the daemon's sampler never sees a half-written value.
        temp = path.with_name(path.name + ".tmp")
        temp.write_text(text)
        os.chmod(temp, 0o644)
        os.replace(temp, path)

    def bump(self, zone: Path, delta_uj: int) -> int:
        with self._lock:
            self.energy[zone] = (self.energy[zone] + delta_uj) % (RANGE_UJ + 1)
            self._write(zone / "energy_uj", f"{self.energy[zone]}\n")
            return self.energy[zone]


class PowerDriver:
    """Plays a constant RAPL power on the fake tree from a thread."""

    def __init__(self, powercap: FakePowercap, package_w: float, dram_w: float, period_s: float = 0.01) -> None:
        self._powercap = powercap
        self._rates = {powercap.package: package_w, powercap.dram: dram_w}
        self._period = period_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        last = time.monotonic()
        while not self._stop.wait(self._period):
            now = time.monotonic()
            for zone, watts in self._rates.items():
                self._powercap.bump(zone, int(watts * (now - last) * 1e6))
            last = now

    def __enter__(self) -> PowerDriver:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


class Zeusd:
    """A real `zeusd serve` process over the simulator and a fake powercap tree.

    `tcp=False`: a Unix socket under this test's scratch directory; `tcp=True`:
    127.0.0.1 port 0, the port its "listening on" line names. `auth=True` writes a signing key and passes
    --signing-key-path; `token()` issues tokens with `zeusd token issue`.
    """

    def __init__(self, name: str, *, tcp: bool = False, auth: bool = False, extra: list[str] | None = None,
                 sim_state: Path | None = None) -> None:
        self.name = name
        self.dir = WORK / name
        self.dir.mkdir()
        self.tcp = tcp
        self.powercap = FakePowercap(self.dir / "powercap")
        self.sim_state = sim_state or SIM_STATE
        self.socket_path = str(self.dir / "zeusd.sock")
        self.port = None
        self.key_path = None
        if auth:
            self.key_path = str(self.dir / "signing.key")
            with open(self.key_path, "wb") as f:
                f.write(os.urandom(32))
            os.chmod(self.key_path, 0o600)
        self.extra = list(extra or [])
        self.log_path = self.dir / "zeusd.log"
        self.proc: subprocess.Popen | None = None
        self._start()
        atexit.register(self.stop)

    # Where the original client finds it.
    @property
    def endpoint(self) -> str:
        return f"127.0.0.1:{self.port}" if self.tcp else self.socket_path

    def client_env(self, token: str | None = None) -> dict[str, str]:
        """The variables that point the original client at this daemon."""
        env = {"ZEUSD_HOST_PORT": self.endpoint} if self.tcp else {"ZEUSD_SOCK_PATH": self.socket_path}
        if token is not None:
            env["ZEUSD_TOKEN"] = token
        return env

    def _start(self) -> None:
        args = [ZEUSD, "serve", "--num-workers", "2"]
        if self.tcp:
            args += ["--mode", "tcp", "--tcp-bind-address", "127.0.0.1:0"]
        else:
            args += ["--socket-path", self.socket_path]
        if self.key_path:
            args += ["--signing-key-path", self.key_path]
        args += self.extra
        env = dict(os.environ)
        env.update({
            "ZEUS_SIMULATE": "1",
            "ZEUS_SIM_LIBRARY": SIM_LIBRARY,
            "ZEUS_SIM_STATE": str(self.sim_state),
            "ZEUS_POWERCAP_ROOT": str(self.powercap.root),
            "RUST_LOG": "debug",
        })
        for name in ("ZEUSD_SOCK_PATH", "ZEUSD_HOST_PORT", "ZEUSD_TOKEN", "LD_LIBRARY_PATH"):
            env.pop(name, None)
        with open(self.log_path, "ab") as log:
            start = log.tell()
            self.proc = subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL)
        if self.tcp:
            self.port = wait_for_listening(self.log_path, self.proc, " zeusd: listening on ", timeout=20,
                                           start=start).port
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and self.proc.poll() is None:
            if self._answers():
                return
            time.sleep(0.02)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        raise AssertionError(f"zeusd {self.name} did not start; its log:\n{self.log()}")

    def _answers(self) -> bool:
        try:
            if self.tcp:
                s = socket.create_connection(("127.0.0.1", self.port), timeout=1)
            else:
                if not os.path.exists(self.socket_path):
                    return False
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.settimeout(1)
                s.connect(self.socket_path)
            s.close()
            return True
        except OSError:
            return False

    def token(self, scope: str, user: str = "alice", expires: str = "1h") -> str:
        out = subprocess.run([ZEUSD, "token", "issue", "--signing-key-path", self.key_path, "--user", user,
                              "--scope", scope, "--expires", expires],
                             check=True, capture_output=True, text=True)
        return out.stdout.strip()

    def signing_key(self) -> bytes:
        with open(self.key_path, "rb") as f:
            return f.read()

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def stop(self) -> int | None:
        """SIGTERM (the daemon puts every recorded GPU change back) and wait."""
        if self.proc is None or self.proc.poll() is not None:
            return None if self.proc is None else self.proc.returncode
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"zeusd {self.name} ignored SIGTERM; its log:\n{self.log()}")


def run_python(code: str, env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess:
    """Runs `code` in a fresh interpreter of this venv (another client process)."""
    full_env = dict(os.environ)
    full_env.update(env)
    return subprocess.run([sys.executable, "-c", code], env=full_env, capture_output=True, text=True,
                          timeout=timeout)


def main(body) -> None:
    """Runs a test body; on failure prints the daemons' logs' tails."""
    started = time.monotonic()
    try:
        body()
    except BaseException:
        for log in sorted(WORK.glob("*/zeusd.log")):
            text = log.read_text(errors="replace")
            print(f"---- {log.parent.name}/zeusd.log (last 60 lines) ----", file=sys.stderr)
            print("\n".join(text.splitlines()[-60:]), file=sys.stderr)
        raise
    print(f"{os.path.basename(sys.argv[0])}: OK ({time.monotonic() - started:.1f} s)")
