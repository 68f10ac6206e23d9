"""A real zeusd (the repository's build/bin/zeusd, or ZEUS_TEST_ZEUSD) for the Python tests:
serving the test's simulator on a Unix socket, or on TCP."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Optional, Sequence

import pytest

from conftest import SIM_LIBRARY
from server_listening import wait_for_listening

ZEUSD = Path(os.environ.get("ZEUS_TEST_ZEUSD", Path(__file__).resolve().parents[2] / "build" / "bin" / "zeusd"))


def require_zeusd() -> None:
    if not ZEUSD.exists():
        pytest.skip(f"{ZEUSD} is not built (scripts/build.sh builds it; or set ZEUS_TEST_ZEUSD)")


class Daemon:
    """zeusd serving the test's simulator on a Unix socket `sock`, or without
    one on TCP: first on port 0 (the port its "listening on" line names),
    after a restart on that same port, as a real restart. `args`: more
    `zeusd serve` options (--enable, --signing-key-path)."""

    def __init__(self, directory: Path, sock: Optional[Path] = None, args: Sequence[str] = ()) -> None:
        self.dir, self.port, self.sock, self.args = directory, 0, sock, list(args)
        directory.mkdir(exist_ok=True)
        self.start()

    @property
    def log_text(self) -> str:
        return (self.dir / "zeusd.log").read_text()

    def start(self) -> None:
        env = dict(os.environ, ZEUS_SIM_LIBRARY=str(SIM_LIBRARY), RUST_LOG="info")
        for name in ("ZEUSD_SOCK_PATH", "ZEUSD_HOST_PORT", "ZEUSD_TOKEN"):
            env.pop(name, None)
        where = (["--mode", "tcp", "--tcp-bind-address", f"127.0.0.1:{self.port}"] if self.sock is None
                 else ["--socket-path", str(self.sock)])
        self.log = open(self.dir / "zeusd.log", "ab")
        start = self.log.tell()
        self.proc = subprocess.Popen([str(ZEUSD), "serve", "--num-workers", "2", *where, *self.args], env=env,
                                     stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        if self.sock is None:
            try:
                self.port = wait_for_listening(self.dir / "zeusd.log", self.proc, " zeusd: listening on ", 20,
                                               start).port
            except AssertionError as e:
                self.stop()
                pytest.fail(str(e))
            return
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                with socket.socket(socket.AF_UNIX) as s:
                    s.connect(str(self.sock))
                return
            except OSError:
                time.sleep(0.02)
        pytest.fail(f"zeusd did not start: {self.log_text}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=15)
        self.log.close()
