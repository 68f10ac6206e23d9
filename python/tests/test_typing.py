"""The package's types check (issue 22 §1): mypy and pyright accept a typed usage
file and report every error planted in another, against the installed
zeus_native (its py.typed modules and the extension's _core.pyi stubs)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent / "typing"
OK = HERE / "usage_ok.py"
ERRORS = HERE / "usage_errors.py"


def _tool(name: str) -> str:
    path = Path(sys.executable).parent / name
    if not path.exists():
        pytest.fail(f"{path} is missing: scripts/setup-python.sh installs mypy and pyright into .venv")
    return str(path)


def _mypy(file: Path, tmp_path: Path) -> tuple[int, str]:
    run = subprocess.run(
        [_tool("mypy"), "--python-executable", sys.executable, "--cache-dir", str(tmp_path / "mypy-cache"),
         "--strict", "--no-error-summary", "--show-error-codes", str(file)],
        capture_output=True, text=True, timeout=600)
    return run.returncode, run.stdout + run.stderr


def _pyright(file: Path, tmp_path: Path) -> tuple[int, str]:
    if shutil.which("node") is None:
        pytest.fail("node is missing: scripts/setup.sh installs Debian's nodejs, which pyright runs on")
    run = subprocess.run([_tool("pyright"), "--pythonpath", sys.executable, str(file)], capture_output=True,
                         text=True, timeout=600, cwd=tmp_path)
    return run.returncode, run.stdout + run.stderr


def _planted_lines() -> set[int]:
    return {n for n, line in enumerate(ERRORS.read_text().splitlines(), 1) if "# error:" in line}


def _reported_lines(output: str, file: Path) -> set[int]:
    # mypy: "path:LINE: error: ..."; pyright: "path:LINE:COL - error: ..."
    pattern = re.compile(re.escape(file.name) + r":(\d+)(?::\d+)?(?::| -) error")
    return {int(m.group(1)) for m in pattern.finditer(output)}


@pytest.mark.parametrize("checker", [_mypy, _pyright], ids=["mypy", "pyright"])
def test_typed_usage_passes(checker, tmp_path):
    code, output = checker(OK, tmp_path)
    assert code == 0, output


@pytest.mark.parametrize("checker", [_mypy, _pyright], ids=["mypy", "pyright"])
def test_planted_errors_are_each_reported(checker, tmp_path):
    code, output = checker(ERRORS, tmp_path)
    assert code != 0, output
    assert _reported_lines(output, ERRORS) == _planted_lines(), output
