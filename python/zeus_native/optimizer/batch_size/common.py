"""The job specification and wire models (the original's zeus.optimizer.batch_size.common).

The original's is a pydantic (v1) model; this one checks the same fields with
the same rules without needing pydantic, and offers the `dict()`/`json()` it
was used through. Errors are ValueError (pydantic's ValidationError is one).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Optional

# The server's limits (src/bso/router.cpp): it answers 422 past them.
MAX_ID_CHARACTERS = 400
MAX_GPU_MODEL_CHARACTERS = 400


def _check_length(field: str, value: str, most: int, model: str = "JobSpec") -> None:
    if len(value) > most:
        raise ValueError(f"{model} {field}: ensure this value has at most {most} characters (it has {len(value)})")


_FIELDS: dict[str, Any] = {
    "job_id": None,
    "job_id_prefix": ...,
    "batch_sizes": ...,
    "default_batch_size": ...,
    "eta_knob": 0.5,
    "beta_knob": 2.0,
    "target_metric": 0.50,
    "higher_is_better_metric": True,
    "max_epochs": 100,
    "num_pruning_rounds": 2,
    "window_size": 0,
    "mab_prior_mean": 0.0,
    "mab_prior_precision": 0.0,
    "mab_num_explorations": 2,
    "mab_seed": None,
}


class JobSpec:
    """What a recurring job is: its batch sizes, the default one, its target and the optimizer's knobs.

        JobSpec(job_id_prefix="mnist", batch_sizes=[32, 64, 256], default_batch_size=64,
                target_metric=0.9, max_epochs=10)

    job_id: optional, must start with job_id_prefix (the server makes one when None;
    multi-GPU jobs whose every rank registers need one). batch_sizes are sorted.
    """

    job_id: Optional[str]
    job_id_prefix: str
    batch_sizes: list[int]
    default_batch_size: int
    eta_knob: float
    beta_knob: Optional[float]
    target_metric: float
    higher_is_better_metric: bool
    max_epochs: int
    num_pruning_rounds: int
    window_size: int
    mab_prior_mean: float
    mab_prior_precision: float
    mab_num_explorations: int
    mab_seed: Optional[int]

    def __init__(self, **fields: Any) -> None:
        """Check every field as the original's validators do (ValueError naming the field)."""
        unknown = set(fields) - set(_FIELDS)
        if unknown:
            raise ValueError(f"JobSpec has no field(s) {sorted(unknown)}; fields: {list(_FIELDS)}")
        for name, default in _FIELDS.items():
            if name not in fields and default is ...:
                raise ValueError(f"JobSpec {name}: field required")
            setattr(self, name, fields.get(name, default))
        if not isinstance(self.batch_sizes, (list, tuple)) or not self.batch_sizes:
            raise ValueError(f"JobSpec batch_sizes: Batch Sizes = {self.batch_sizes!r} is empty")
        self.batch_sizes = sorted(int(b) for b in self.batch_sizes)
        twice = next((a for a, b in zip(self.batch_sizes, self.batch_sizes[1:]) if a == b), None)
        if twice is not None:
            raise ValueError(f"JobSpec batch_sizes: batch size {twice} is listed more than once; list each batch size once")
        if self.job_id is not None:
            _check_length("job_id", str(self.job_id), MAX_ID_CHARACTERS)
        # The server makes a job's id from the prefix, "-" and 8 hex digits.
        _check_length("job_id_prefix", str(self.job_id_prefix), MAX_ID_CHARACTERS - 9)
        self.default_batch_size = int(self.default_batch_size)
        if self.default_batch_size <= 0:
            raise ValueError("JobSpec default_batch_size: ensure this value is greater than 0")
        self.eta_knob = float(self.eta_knob)
        if not 0.0 <= self.eta_knob <= 1.0:
            raise ValueError("JobSpec eta_knob: eta_knob should be in range [0,1]")
        if self.beta_knob is not None:
            self.beta_knob = float(self.beta_knob)
            if not self.beta_knob > 0:
                raise ValueError(
                    f"JobSpec beta_knob: Invalid beta_knob({self.beta_knob}). To disable early stop, "
                    "set beta_knob = None to disable or positive value."
                )
        self.target_metric = float(self.target_metric)
        self.higher_is_better_metric = bool(self.higher_is_better_metric)
        self.max_epochs = int(self.max_epochs)
        if self.max_epochs <= 0:
            raise ValueError("JobSpec max_epochs: ensure this value is greater than 0")
        self.num_pruning_rounds = int(self.num_pruning_rounds)
        if self.num_pruning_rounds < 1:  # the server's rule (the original accepts 0, a job that never runs a trial)
            raise ValueError("JobSpec num_pruning_rounds: ensure this value is greater than 0 "
                             "(a job with no pruning round never runs a trial)")
        self.window_size = int(self.window_size)
        self.mab_prior_mean = float(self.mab_prior_mean)
        self.mab_prior_precision = float(self.mab_prior_precision)
        self.mab_num_explorations = int(self.mab_num_explorations)
        if self.mab_num_explorations < 0:
            raise ValueError("JobSpec mab_num_explorations: ensure this value is greater than or equal to 0")
        if self.mab_seed is not None:
            self.mab_seed = int(self.mab_seed)
            if self.mab_seed < 0:
                raise ValueError("JobSpec mab_seed: a seed must be a non-negative integer (numpy's rule)")
        if self.default_batch_size not in self.batch_sizes:
            raise ValueError(f"JobSpec: Default BS({self.default_batch_size}) not in batch_sizes({self.batch_sizes}).")
        if self.job_id is not None and not str(self.job_id).startswith(self.job_id_prefix):
            raise ValueError(f"JobSpec: Job_id({self.job_id}) does not start with prefix({self.job_id_prefix}).")

    def dict(self) -> dict[str, Any]:
        """The fields as a dict (pydantic's .dict())."""
        return {name: getattr(self, name) for name in _FIELDS}

    def json(self) -> str:
        """The fields as JSON (pydantic's .json())."""
        return json.dumps(self.dict())

    def __eq__(self, other: object) -> bool:
        """Equal fields."""
        return isinstance(other, JobSpec) and self.dict() == other.dict()

    def __repr__(self) -> str:
        """JobSpec(field=value, ...)."""
        return "JobSpec(" + ", ".join(f"{k}={v!r}" for k, v in self.dict().items()) + ")"


class JobParams(JobSpec):
    """A job's parameters with its id given (the original's JobParams; JobSpec leaves job_id optional)."""

    def __init__(self, **fields: Any) -> None:
        """As JobSpec, and job_id is required (ValueError)."""
        if fields.get("job_id") is None:
            raise ValueError("JobParams job_id: field required")
        super().__init__(**fields)


@dataclasses.dataclass
class GpuConfig:
    """The GPUs a job trains on (the original's GpuConfig): max power (W), how many, the model."""

    max_power: float
    number_of_gpus: int
    gpu_model: str

    def __post_init__(self) -> None:
        """The original's checks (ValueError)."""
        if not self.max_power > 0:
            raise ValueError("GpuConfig max_power: ensure this value is greater than 0")
        if not self.number_of_gpus > 0:
            raise ValueError("GpuConfig number_of_gpus: ensure this value is greater than 0")
        if not self.gpu_model:
            raise ValueError("GpuConfig gpu_model: the GPU model cannot be empty")
        _check_length("gpu_model", str(self.gpu_model), MAX_GPU_MODEL_CHARACTERS, "GpuConfig")


_GPU_FIELDS = ("max_power", "number_of_gpus", "gpu_model")


class JobSpecFromClient(JobSpec):
    """A JobSpec with its GpuConfig, as the client registers it (the original's JobSpecFromClient)."""

    def __init__(self, **fields: Any) -> None:
        """JobSpec's fields plus max_power, number_of_gpus and gpu_model (ValueError for a bad one)."""
        gpu = GpuConfig(**{k: fields.pop(k) for k in _GPU_FIELDS if k in fields})
        super().__init__(**fields)
        self.max_power, self.number_of_gpus, self.gpu_model = gpu.max_power, gpu.number_of_gpus, gpu.gpu_model

    def dict(self) -> dict[str, Any]:
        """The fields as a dict (pydantic's .dict())."""
        return {**super().dict(), **{k: getattr(self, k) for k in _GPU_FIELDS}}


class CreatedJob(JobParams):
    """A job the server created (the original's CreatedJob): JobParams with its GpuConfig."""

    def __init__(self, **fields: Any) -> None:
        """JobParams' fields plus max_power, number_of_gpus and gpu_model."""
        gpu = GpuConfig(**{k: fields.pop(k) for k in _GPU_FIELDS if k in fields})
        super().__init__(**fields)
        self.max_power, self.number_of_gpus, self.gpu_model = gpu.max_power, gpu.number_of_gpus, gpu.gpu_model

    def dict(self) -> dict[str, Any]:
        """The fields as a dict (pydantic's .dict())."""
        return {**super().dict(), **{k: getattr(self, k) for k in _GPU_FIELDS}}


@dataclasses.dataclass
class TrialId:
    """Which trial (the original's TrialId): the job, the batch size and the trial's number."""

    job_id: str
    batch_size: int
    trial_number: int


@dataclasses.dataclass
class TrainingResult(TrialId):
    """A trial's result as reported (the original's TrainingResult): s, J, the metric, the epoch."""

    time: float = 0.0
    energy: float = 0.0
    metric: float = 0.0
    current_epoch: int = 0


@dataclasses.dataclass
class ReportResponse:
    """The server's answer to a report (the original's ReportResponse)."""

    stop_train: bool
    converged: bool
    message: str
