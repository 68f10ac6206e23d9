"""zeus_native.optimizer.pipeline_frequency.common (the original's Perseus models): the same JSON
schema as the original's models (compared in a process that imports the original, its pandas and
aiofiles stubbed as the API walk does), the original's validation, the server's dump files and
the profile CSV."""

from __future__ import annotations

import asyncio
import csv
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

MODELS = ["JobInfo", "RankInfo", "FrequencySchedule", "ProfilingResult", "OfflineProfilingResult",
          "InstructionProfilingResult"]


def schemas(module: str) -> dict:
    """{model: its JSON schema} of `module`, imported in a process of its own."""
    script = textwrap.dedent(f"""
        import json, sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        import api_walk
        module = api_walk._import_original({module!r}) if {module!r}.startswith("zeus.") else \\
            __import__({module!r}, fromlist=["_"])
        print(json.dumps({{name: getattr(module, name).schema() for name in {MODELS!r}}}))
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def without_descriptions(schema):
    """The schema but for docstrings, at every depth."""
    if isinstance(schema, dict):
        return {k: without_descriptions(v) for k, v in schema.items() if k != "description"}
    if isinstance(schema, list):
        return [without_descriptions(v) for v in schema]
    return schema


def test_the_schemas_are_the_originals():
    pytest.importorskip("zeus", reason="the original Zeus is installed in .venv by scripts/setup-python.sh")
    theirs = schemas("zeus.optimizer.pipeline_frequency.common")
    ours = schemas("zeus_native.optimizer.pipeline_frequency.common")
    for name in MODELS:  # fields, types, constraints, defaults, required; docstrings aside
        assert without_descriptions(ours[name]) == without_descriptions(theirs[name]), name


def test_validation_and_job_id():
    pydantic = pytest.importorskip("zeus_native.utils.pydantic_v1")
    from zeus_native.optimizer.pipeline_frequency.common import JobInfo, RankInfo

    job = JobInfo(pp_degree=2, dp_degree=2, tp_degree=1, world_size=4, job_metadata="llama")
    job.set_job_id("PointSolution")
    assert re.fullmatch(r"\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d\+dp2\+pp2\+tp1\+PointSolution\+llama", job.job_id)
    for bad in (dict(world_size=3), dict(job_id="taken"), dict(pp_degree=0)):
        with pytest.raises(pydantic.ValidationError):
            JobInfo(**{**dict(pp_degree=2, dp_degree=2, tp_degree=1, world_size=4), **bad})
    with pytest.raises(pydantic.ValidationError):
        RankInfo(rank=-1, dp_rank=0, pp_rank=0, tp_rank=0, available_frequencies=[1410])


def test_dumps_round_trip(tmp_path):
    pytest.importorskip("zeus_native.utils.pydantic_v1")
    from zeus_native.optimizer.pipeline_frequency import common

    scheds = [common.FrequencySchedule(rank=0, frequencies=[("forward", 1410), ("backward", 1005)])]
    profs = [common.ProfilingResult(rank=0, iter_time=[1.5], iter_energy=[300.0],
                                    time_breakdown={"forward": [[0.5]]})]
    ranks = [common.RankInfo(rank=0, dp_rank=0, pp_rank=0, tp_rank=0, available_frequencies=[1410, 1005])]
    directory = str(tmp_path / "dump")
    asyncio.run(common.save_sched(scheds, directory, 3))
    asyncio.run(common.save_prof(profs, directory, 3))
    asyncio.run(common.save_ranks(ranks, directory))
    assert json.loads((tmp_path / "dump" / "3.sched.json").read_text()) == [
        {"rank": 0, "frequencies": [["forward", 1410], ["backward", 1005]]}]
    assert common.load_sched(directory, 3) == scheds
    assert common.load_prof(directory, 3) == profs
    assert common.load_ranks(directory) == ranks


def test_profile_csv(tmp_path):
    pytest.importorskip("zeus_native.utils.pydantic_v1")
    from zeus_native.optimizer.pipeline_frequency.common import InstructionProfilingResult, OfflineProfilingResult

    result = InstructionProfilingResult(__root__=[OfflineProfilingResult(
        rank=1, dp_rank=0, pp_rank=1, tp_rank=0, forward_time={1410: 0.25, 1005: 0.5},
        forward_energy={1410: 50.0, 1005: 40.0}, backward_time={1410: 0.75}, backward_energy={1410: 120.5})])
    with pytest.raises(ValueError, match="does not end with '.csv'"):
        result.to_csv(str(tmp_path / "profile.txt"))
    result.to_csv(str(tmp_path / "profile.csv"))
    with open(tmp_path / "profile.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert rows == [["rank", "dp_rank", "pp_rank", "tp_rank", "stage", "instruction", "frequency", "time", "energy"],
                    ["1", "0", "1", "0", "1", "forward", "1410", "0.25", "50.0"],
                    ["1", "0", "1", "0", "1", "forward", "1005", "0.5", "40.0"],
                    ["1", "0", "1", "0", "1", "backward", "1410", "0.75", "120.5"]]
