"""Thermally stable energy profiling (the original's zeus.profile).

The workload is any Python callable (one iteration per call). str() of the
reports is the original's format. Progress (calibration, phases, each trial)
and each sweep's report are INFO lines of the logger "zeus_native.profile",
the original's messages, logged by rank 0 only in a distributed job.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any, Callable, List, Sequence, Tuple

from zeus_native import _core
from zeus_native.monitor.energy import ZeusMonitor
from zeus_native.utils.framework import running_ranks

logger = logging.getLogger(__name__)


def _log_progress(message: str) -> None:
    """One progress line of the native profiler (which calls it on rank 0 only)."""
    logger.info("%s", message)


def _log_report(report: "SweepReport") -> "SweepReport":
    """A finished sweep's report, as the original logs it (rank 0 only: the ranks the
    native profiler combines, running_ranks())."""
    ranks = running_ranks()
    if ranks is None or ranks[0] == 0:
        logger.info("%s", report)
    return report


@dataclasses.dataclass
class TrialResult:
    """One measurement trial (the original's TrialResult): J, s and °C."""

    energy_per_iter: float
    time_per_iter: float
    total_energy: float
    total_time: float
    iterations: int
    temperature_before: float
    temperature_after: float

    @classmethod
    def _from_native(cls, t: Any) -> "TrialResult":
        return cls(t.energy_per_iter, t.time_per_iter, t.total_energy, t.total_time, t.iterations,
                   t.temperature_before, t.temperature_after)


@dataclasses.dataclass
class SweepResult:
    """One swept value over its trials (the original's SweepResult); str() is its one-line summary."""

    measurement_duration: float
    cooldown_duration: float
    trials: List[TrialResult]
    energy_mean: float
    energy_std: float
    avg_temperature_before: float
    avg_temperature_after: float
    avg_total_time: float
    avg_total_energy: float
    is_valid: bool

    @classmethod
    def _from_native(cls, e: Any) -> "SweepResult":
        return cls(e.measurement_duration, e.cooldown_duration, [TrialResult._from_native(t) for t in e.trials],
                   e.energy_mean, e.energy_std, e.avg_temperature_before, e.avg_temperature_after,
                   e.avg_total_time, e.avg_total_energy, e.is_valid)

    def __str__(self) -> str:
        """One-line summary without per-trial details (the original's format)."""
        tag = "VALID" if self.is_valid else "INVALID"
        return (
            f"measurement={self.measurement_duration:.1f} s  "
            f"cooldown={self.cooldown_duration:.1f} s  "
            f"mean={self.energy_mean:.4f} J  "
            f"std={self.energy_std:.4f} J  "
            f"temp_before={self.avg_temperature_before:.1f} \u00b0C  "
            f"temp_after={self.avg_temperature_after:.1f} \u00b0C  "
            f"[{tag}]"
        )


@dataclasses.dataclass
class SweepReport:
    """A sweep (the original's SweepReport): (name, swept values), (name, fixed value), one entry per value."""

    sweep_param: Tuple[str, List[float]]
    fixed_param: Tuple[str, float]
    entries: List[SweepResult]

    @classmethod
    def _from_native(cls, r: Any) -> "SweepReport":
        name, values = r.sweep_param
        return cls((name, list(values)), tuple(r.fixed_param), [SweepResult._from_native(e) for e in r.entries])

    def __str__(self) -> str:
        """A header line and one line per swept value (the original's format)."""
        sweep_name, _ = self.sweep_param
        fixed_name, fixed_value = self.fixed_param
        prefixes = [f"{sweep_name}={getattr(e, sweep_name):.1f} s" for e in self.entries]
        width = max((len(p) for p in prefixes), default=0)
        lines = [f"Sweep {sweep_name} (fixed {fixed_name}={fixed_value:.1f} s):"]
        for prefix, e in zip(prefixes, self.entries):
            tag = "VALID" if e.is_valid else "INVALID"
            lines.append(
                f"  {prefix:<{width}}  "
                f"mean={e.energy_mean:.4f} J  "
                f"std={e.energy_std:.4f} J  "
                f"temp_before={e.avg_temperature_before:.1f} \u00b0C  "
                f"temp_after={e.avg_temperature_after:.1f} \u00b0C  "
                f"[{tag}]"
            )
        return "\n".join(lines)


def _range(values: Sequence[float] | None) -> list[float]:
    return [] if values is None else [float(v) for v in values]


def measure(
    target_function: Callable[[], Any],
    zeus_monitor: ZeusMonitor,
    measurement_duration: float,
    cooldown_duration: float,
    num_warmup_iterations: int = 10,
    num_calibration_iterations: int = 100,
    warmup_settle_duration: float | None = None,
) -> TrialResult:
    """Calibrate the iteration time, then run one trial with the given durations (s).

    warmup_settle_duration: run the workload this long (s) before the window instead of
    num_warmup_iterations times (int(settle / calibrated iteration time) iterations).
    In a torch.distributed job every rank must call it; energy is summed over the
    ranks and time is the slowest rank's, on every rank (the original's all_reduce)."""
    if warmup_settle_duration is not None and not warmup_settle_duration >= 0:
        raise ValueError(f"warmup_settle_duration must be non-negative, got {warmup_settle_duration}")
    return TrialResult._from_native(_core.measure(
        target_function, zeus_monitor, measurement_duration, cooldown_duration,
        num_warmup_iterations, num_calibration_iterations,
        None if warmup_settle_duration is None else float(warmup_settle_duration),
    ))


def profile_measurement_duration(
    target_function: Callable[[], Any],
    zeus_monitor: ZeusMonitor,
    measurement_duration_search_range: Sequence[float] | None = None,
    cooldown_duration: float = 10.0,
    num_trials: int = 10,
    num_warmup_trials: int = 2,
    trial_stddev_threshold: float = 0.01,
    num_warmup_iterations: int = 10,
    num_calibration_iterations: int = 100,
    iteration_duration: float | None = None,
) -> SweepReport:
    """Sweep measurement durations with the cool-down fixed."""
    return _log_report(SweepReport._from_native(_core.profile_measurement_duration(
        target_function, zeus_monitor, _range(measurement_duration_search_range), cooldown_duration, num_trials,
        num_warmup_trials, trial_stddev_threshold, num_warmup_iterations, num_calibration_iterations,
        iteration_duration,
    )))


def profile_cooldown_duration(
    target_function: Callable[[], Any],
    zeus_monitor: ZeusMonitor,
    cooldown_duration_search_range: Sequence[float] | None = None,
    measurement_duration: float = 10.0,
    num_trials: int = 10,
    num_warmup_trials: int = 2,
    trial_stddev_threshold: float = 0.01,
    num_warmup_iterations: int = 10,
    num_calibration_iterations: int = 100,
    iteration_duration: float | None = None,
) -> SweepReport:
    """Sweep cool-down durations with the measurement duration fixed."""
    return _log_report(SweepReport._from_native(_core.profile_cooldown_duration(
        target_function, zeus_monitor, _range(cooldown_duration_search_range), measurement_duration, num_trials,
        num_warmup_trials, trial_stddev_threshold, num_warmup_iterations, num_calibration_iterations,
        iteration_duration,
    )))


# The names used by the issue and some versions of the original.
sweep_measurement_duration = profile_measurement_duration
sweep_cooldown_duration = profile_cooldown_duration


def profile_parameters(
    target_function: Callable[[], Any],
    zeus_monitor: ZeusMonitor,
    measurement_duration_search_range: Sequence[float] | None = None,
    cooldown_duration_search_range: Sequence[float] | None = None,
    num_trials: int = 10,
    num_warmup_trials: int = 2,
    trial_stddev_threshold: float = 0.01,
    num_warmup_iterations: int = 10,
    num_calibration_iterations: int = 100,
) -> tuple[SweepReport, SweepReport]:
    """Sweep measurement durations, then cool-down durations; returns both reports."""
    measured, cooled = _core.profile_parameters(
        target_function, zeus_monitor, _range(measurement_duration_search_range),
        _range(cooldown_duration_search_range), num_trials, num_warmup_trials, trial_stddev_threshold,
        num_warmup_iterations, num_calibration_iterations,
    )
    return _log_report(SweepReport._from_native(measured)), _log_report(SweepReport._from_native(cooled))
