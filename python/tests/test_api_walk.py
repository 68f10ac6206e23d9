"""The original Zeus's public API, walked against zeus_native.

api_walk.py compares every module of the original's package tree and its public
class, function, method, property and
dataclass field of the original (installed in .venv) with zeus_native: names,
parameter names, order and defaults. A gap fails this test unless it is one of
docs/python.md's API exceptions (with the reason it cannot exist here) or in
api_walk_gaps.txt, the list of gaps not closed yet, which may only shrink: a
gap that is fixed must leave the list too.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import api_walk

KNOWN = Path(__file__).with_name("api_walk_gaps.txt")


def known_gaps() -> set[str]:
    return {line.strip() for line in KNOWN.read_text().splitlines() if line.strip() and not line.startswith("#")}


@pytest.fixture(scope="module")
def walk_output() -> dict:
    """The walk's gaps and totals, from a process of its own (it stubs the original's missing imports)."""
    pytest.importorskip("zeus", reason="the original Zeus is installed in .venv by scripts/setup-python.sh")
    run = subprocess.run([sys.executable, str(Path(api_walk.__file__)), "--json"], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@pytest.fixture(scope="module")
def walked(walk_output) -> list:
    return [api_walk.Gap(*line.split(": ", 1)) for line in walk_output["gaps"]]


def test_no_new_gap_against_the_original(walked):
    patterns = api_walk.documented_exceptions()
    assert patterns, "docs/python.md lists no API exceptions: its '## API exceptions' section is missing"
    open_gaps = {str(g) for g in walked if not api_walk.excepted(g, patterns)}
    new = sorted(open_gaps - known_gaps())
    assert new == [], "new gaps against the original's API:\n" + "\n".join(new)


def test_closed_gaps_leave_the_known_list(walked):
    closed = sorted(known_gaps() - {str(g) for g in walked})
    assert closed == [], f"fixed, remove from {KNOWN.name}:\n" + "\n".join(closed)


def test_exceptions_each_say_why():
    text = api_walk.EXCEPTIONS_DOC.read_text().split("## API exceptions", 1)[1].split("\n## ", 1)[0]
    for line in text.splitlines():
        if line.startswith("- `"):
            assert ":" in line.split("`", 2)[2], f"an exception without its reason: {line}"


def test_every_module_of_the_original_is_walked_or_excepted(walked):
    """The walk's modules are the installed distribution's (its RECORD), and only the excepted are skipped."""
    from importlib import metadata

    recorded = set()
    for file in metadata.files("zeus") or []:
        parts = list(file.with_suffix("").parts) if file.suffix == ".py" else []
        if parts and parts[0] == "zeus":
            recorded.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    assert api_walk.original_modules() == sorted(recorded)
    skipped = {g.name for g in walked if g.problem == api_walk.NOT_WALKED}
    patterns = api_walk.documented_exceptions()
    assert skipped == {m for m in recorded if api_walk.excepted(api_walk.Gap(m, ""), patterns)}
    assert "zeus.utils.zeusd" not in skipped and "zeus.optimizer.pipeline_frequency.common" not in skipped


def test_the_documented_totals_are_the_walks(walk_output):
    """docs/python.md states the walk's totals; they are checked here, not typed from a run."""
    t = walk_output["totals"]
    text = api_walk.EXCEPTIONS_DOC.read_text().split("## API exceptions", 1)[1].split("\n## ", 1)[0]
    claim = re.search(r"(\d+) of (\d+) in-scope names[^.]*?(\d+) of the original's (\d+) modules", text, flags=re.S)
    assert claim, "docs/python.md's API exceptions do not state 'N of N in-scope names ... M of the original's M modules'"
    stated = tuple(int(n) for n in claim.groups())
    actual = (t["compatible"], t["in_scope"], t["modules_walked"], t["modules"])
    assert stated == actual, f"docs/python.md states {stated}, the walk finds {actual}: write the walk's numbers"
