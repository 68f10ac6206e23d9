"""The original's zeus.optimizer.pipeline_frequency.common: the models the Perseus client and
server exchange as JSON (the same fields, constraints and schema), the routes, and the files
the server dumps. Needs pydantic (its v1 API, from either major version), as the original.

zeus_native's own client and `zeus perseus-server` are native and do not import this; it is
here for code written against the original's models (reading a server's dumps, say).
"""

from __future__ import annotations

import asyncio
import csv
import os
from datetime import datetime
from typing import Dict, List, Optional, Tuple

from zeus_native.utils.pydantic_v1 import BaseModel, Field, validator

GET_SERVER_INFO_URL = "/info"
REGISTER_JOB_URL = "/register_job"
REGISTER_RANK_URL = "/register_rank/{job_id}"
GET_FREQUENCY_SCHEDULE_URL = "/schedule/{job_id}"
REPORT_PROFILING_RESULT_URL = "/result/{job_id}"


class JobInfo(BaseModel):
    """A training job as rank 0 registers it: parallel degrees (their product is the world
    size), and optional metadata appended to the id the server gives it. job_id is sent empty."""

    job_id: str = ""
    pp_degree: int = Field(ge=1)
    dp_degree: int = Field(ge=1)
    tp_degree: int = Field(ge=1)
    world_size: int = Field(ge=1)
    job_metadata: Optional[str] = None

    @validator("job_id")
    def _check_empty_job_id(cls, job_id):
        assert not job_id
        return job_id

    @validator("world_size")
    def _check_world_size(cls, world_size, values):
        """The product of the PP, DP and TP degrees is the world size (checked when all three are
        valid: a bad degree is reported as itself, where the original raised KeyError)."""
        degrees = [values.get(name) for name in ("pp_degree", "dp_degree", "tp_degree")]
        if None not in degrees:
            assert degrees[0] * degrees[1] * degrees[2] == world_size
        return world_size

    def set_job_id(self, scheduler_name: str):
        """The server's id: `%F-%H-%M-%S+dp{dp}+pp{pp}+tp{tp}+{scheduler}[+{metadata}]` (local time)."""
        parts = [datetime.now().strftime("%F-%H-%M-%S"), f"dp{self.dp_degree}", f"pp{self.pp_degree}",
                 f"tp{self.tp_degree}", scheduler_name]
        self.job_id = "+".join(parts)
        if self.job_metadata:
            self.job_id += f"+{self.job_metadata}"


class RankInfo(BaseModel):
    """What each rank registers: its global and parallel ranks, and its GPU's SM clocks (MHz)."""

    rank: int = Field(ge=0)
    dp_rank: int = Field(ge=0)
    pp_rank: int = Field(ge=0)
    tp_rank: int = Field(ge=0)
    available_frequencies: List[int]


class FrequencySchedule(BaseModel):
    """One rank's (instruction, MHz) sequence for one iteration."""

    rank: int = Field(ge=0)
    frequencies: List[Tuple[str, int]]


class ProfilingResult(BaseModel):
    """A rank's measurements of one schedule: each iteration's time (s) and energy (J), and per
    instruction the time and energy of each of its runs in each iteration."""

    rank: int = Field(ge=0)
    iter_time: List[float]
    iter_energy: List[float]
    time_breakdown: Dict[str, List[List[float]]] = {}
    energy_breakdown: Dict[str, List[List[float]]] = {}


class OfflineProfilingResult(BaseModel):
    """A rank's offline profile: per frequency (MHz), the average forward and backward time (s)
    and energy (J)."""

    rank: int = Field(ge=0)
    dp_rank: int = Field(ge=0)
    pp_rank: int = Field(ge=0)
    tp_rank: int = Field(ge=0)
    forward_time: Dict[int, float]
    forward_energy: Dict[int, float]
    backward_time: Dict[int, float]
    backward_energy: Dict[int, float]


class InstructionProfilingResult(BaseModel):
    """Every rank's offline profile (a JSON list)."""

    __root__: List[OfflineProfilingResult]

    def to_csv(self, filepath: str) -> None:
        """Write `rank,dp_rank,pp_rank,tp_rank,stage,instruction,frequency,time,energy` rows (stage is
        pp_rank; instruction forward or backward), what `zeus perseus solve` reads."""
        if not filepath.endswith(".csv"):
            raise ValueError("Filepath does not end with '.csv'")
        with open(filepath, "w", newline="") as f:
            out = csv.writer(f, lineterminator="\n")
            out.writerow(["rank", "dp_rank", "pp_rank", "tp_rank", "stage", "instruction", "frequency", "time",
                          "energy"])
            for res in self.__root__:
                prefix = (res.rank, res.dp_rank, res.pp_rank, res.tp_rank, res.pp_rank)
                for instruction, times, energies in (("forward", res.forward_time, res.forward_energy),
                                                     ("backward", res.backward_time, res.backward_energy)):
                    for freq in times:
                        out.writerow([*prefix, instruction, freq, times[freq], energies[freq]])


class _ProfilingResultList(BaseModel):
    __root__: List[ProfilingResult]


class _FrequencyScheduleList(BaseModel):
    __root__: List[FrequencySchedule]


class _RankInfoList(BaseModel):
    __root__: List[RankInfo]


async def _write(directory: str, name: str, text: str) -> None:
    def write() -> None:
        os.makedirs(directory, exist_ok=True)
        with open(f"{directory}/{name}", "w") as f:
            f.write(text)

    await asyncio.get_running_loop().run_in_executor(None, write)


async def save_prof(data: List[ProfilingResult], directory: str, schedule_num: int) -> None:
    """Write `{directory}/{schedule_num}.prof.json`."""
    await _write(directory, f"{schedule_num}.prof.json", _ProfilingResultList(__root__=data).json())


def load_prof(directory: str, schedule_num: int) -> List[ProfilingResult]:
    """Read `{directory}/{schedule_num}.prof.json`."""
    return _ProfilingResultList.parse_file(f"{directory}/{schedule_num}.prof.json").__root__


async def save_sched(data: List[FrequencySchedule], directory: str, schedule_num: int) -> None:
    """Write `{directory}/{schedule_num}.sched.json`."""
    await _write(directory, f"{schedule_num}.sched.json", _FrequencyScheduleList(__root__=data).json())


def load_sched(directory: str, schedule_num: int) -> List[FrequencySchedule]:
    """Read `{directory}/{schedule_num}.sched.json`."""
    return _FrequencyScheduleList.parse_file(f"{directory}/{schedule_num}.sched.json").__root__


async def save_ranks(data: List[RankInfo], directory: str) -> None:
    """Write `{directory}/ranks.json`."""
    await _write(directory, "ranks.json", _RankInfoList(__root__=data).json())


def load_ranks(directory: str) -> List[RankInfo]:
    """Read `{directory}/ranks.json`."""
    return _RankInfoList.parse_file(f"{directory}/ranks.json").__root__
