"""server_listening.py, which the tests that start our servers on port 0 use:
the address is read from the line as the server writes it, and a server that
never says where it listens fails the test with its output."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from server_listening import Listening, parse_listening_line, wait_for_listening


def test_parses_the_address_after_the_marker():
    assert parse_listening_line("zeus bso-server: listening on 127.0.0.1:43210 with the SQLite database") == \
        Listening("127.0.0.1", 43210)
    v6 = parse_listening_line("2026-01-01T00:00:00.000000Z INFO zeusd: listening on [::1]:5\n")
    assert v6 == Listening("[::1]", 5) and v6.ip == "::1" and v6.url == "http://[::1]:5"
    assert parse_listening_line("zeus exporter: serving http://0.0.0.0:9466/metrics (1 GPU(s))",
                                "serving http://") == Listening("0.0.0.0", 9466)
    for line in ("zeusd: listening on /run/zeusd/zeusd.sock (mode 666)", "listening on 127.0.0.1:",
                 "listening on 127.0.0.1:123456", "serving http://127.0.0.1:80/metrics"):
        assert parse_listening_line(line) is None, line


def _run(script: str, output: Path) -> subprocess.Popen[bytes]:
    with open(output, "ab") as out:
        return subprocess.Popen([sys.executable, "-c", script], stdout=out)


def _stopped(process: subprocess.Popen[bytes]) -> None:
    process.kill()
    process.wait()


def test_returns_the_address_once_the_whole_line_is_written(tmp_path):
    output = tmp_path / "server.log"
    output.write_text("x: listening on 127.0.0.1:1111\n")  # an earlier run's
    start = output.stat().st_size
    process = _run("import sys, time\n"
                   "sys.stdout.write('x: listening on 127.0.0.1:22'); sys.stdout.flush(); time.sleep(0.3)\n"
                   "print('22 with more', flush=True); time.sleep(30)", output)
    try:
        assert wait_for_listening(output, process, start=start) == Listening("127.0.0.1", 2222)
    finally:
        _stopped(process)


def test_a_server_that_exits_first_fails_with_its_output(tmp_path):
    output = tmp_path / "server.log"
    process = _run("print('cannot listen: address in use'); raise SystemExit(2)", output)
    with pytest.raises(AssertionError, match=r"exited \(2\) before it printed 'listening on HOST:PORT'"
                                             r"(.|\n)*cannot listen: address in use"):
        wait_for_listening(output, process)


def test_port_zero_and_silence_are_failures(tmp_path):
    output = tmp_path / "zero.log"
    process = _run("import time; print('listening on 127.0.0.1:0', flush=True); time.sleep(30)", output)
    try:
        with pytest.raises(AssertionError, match="printed port 0"):
            wait_for_listening(output, process)
    finally:
        _stopped(process)
    output = tmp_path / "silent.log"
    process = _run("import time; print('still starting', flush=True); time.sleep(30)", output)
    try:
        with pytest.raises(AssertionError, match=r"no 'listening on HOST:PORT' line(.|\n)*still starting"):
            wait_for_listening(output, process, timeout=0.5)
    finally:
        _stopped(process)
