"""Where a server that a test started on port 0 listens: the address in the
"listening on HOST:PORT" line it prints (zeusd's log, the standard error of
`zeus bso-server`, `zeus perseus-server` and `zeus exporter`). A port picked
beforehand (bound, closed, handed to the server) can be taken by another
process in between; port 0 cannot.

Standard library only: the scripts under tests/ that run on Debian's python3
import it too (tests/http_server/every_server_test.py and others)."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path
from typing import Any, NamedTuple


class Listening(NamedTuple):
    host: str  # as printed: "127.0.0.1", "[::1]"
    port: int

    @property
    def ip(self) -> str:
        """What a socket connects to: "127.0.0.1", "::1"."""
        return self.host[1:-1] if self.host.startswith("[") else self.host

    @property
    def host_port(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"


def parse_listening_line(line: str, marker: str = "listening on ") -> Listening | None:
    """HOST:PORT right after `marker` in `line` (an IPv4 address, a name or a
    bracketed IPv6 address); None when the line has none."""
    found = re.search(re.escape(marker) + r"(\[[^\]\s]+\]|[^\s:\[\]/]+):(\d{1,5})(?!\d)", line)
    return Listening(found.group(1), int(found.group(2))) if found else None


def _program(process: subprocess.Popen[Any]) -> str:
    args = process.args
    return str(args[0] if isinstance(args, (list, tuple)) else args)


def wait_for_listening(output: Path | str, process: subprocess.Popen[Any], marker: str = "listening on ",
                       timeout: float = 30.0, start: int = 0) -> Listening:
    """Waits until the file `output`, which `process` writes, has a whole line
    with `marker` and HOST:PORT after it, and returns that address. `start`:
    the byte to read from, so that a log earlier runs appended to does not
    answer. Fails (AssertionError) with the output when the process exits
    first, when it printed port 0 (it did not say which port it bound), or
    when `timeout` seconds pass."""
    output = Path(output)
    deadline = time.monotonic() + timeout
    while True:
        exited = process.poll() is not None  # before reading: a line written just before exiting still counts
        try:
            with open(output, "rb") as f:
                f.seek(start)
                text = f.read().decode(errors="replace")
        except FileNotFoundError:
            text = ""
        for line in text.splitlines(keepends=True):
            if not line.endswith("\n"):
                break  # still being written
            address = parse_listening_line(line, marker)
            if address is not None:
                assert address.port != 0, f"the server printed port 0 instead of the port it bound: {line!r}"
                return address
        if exited:
            raise AssertionError(f"{_program(process)} exited ({process.returncode}) before it printed "
                                 f"'{marker}HOST:PORT'; {output} holds:\n{text}")
        if time.monotonic() > deadline:
            raise AssertionError(f"no '{marker}HOST:PORT' line from {_program(process)} in {timeout:g} s; "
                                 f"{output} holds:\n{text}")
        time.sleep(0.01)
