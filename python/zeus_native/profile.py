"""Thermally stable energy profiling (the original's zeus.profile).

The workload is any Python callable (one iteration per call). str() of the
reports is the original's format.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from zeus_native import _core
from zeus_native.monitor.energy import ZeusMonitor

TrialResult = _core.TrialResult
SweepResult = _core.SweepResult
SweepReport = _core.SweepReport


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
    """Calibrate the iteration time, then run one trial with the given durations (s)."""
    if warmup_settle_duration is not None and warmup_settle_duration < 0:
        raise ValueError(f"warmup_settle_duration must be non-negative, got {warmup_settle_duration}")
    return _core.measure(
        target_function, zeus_monitor, measurement_duration, cooldown_duration,
        num_warmup_iterations, num_calibration_iterations,
    )


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
    return _core.profile_measurement_duration(
        target_function, zeus_monitor, _range(measurement_duration_search_range), cooldown_duration, num_trials,
        num_warmup_trials, trial_stddev_threshold, num_warmup_iterations, num_calibration_iterations,
        iteration_duration,
    )


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
    return _core.profile_cooldown_duration(
        target_function, zeus_monitor, _range(cooldown_duration_search_range), measurement_duration, num_trials,
        num_warmup_trials, trial_stddev_threshold, num_warmup_iterations, num_calibration_iterations,
        iteration_duration,
    )


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
    return _core.profile_parameters(
        target_function, zeus_monitor, _range(measurement_duration_search_range),
        _range(cooldown_duration_search_range), num_trials, num_warmup_trials, trial_stddev_threshold,
        num_warmup_iterations, num_calibration_iterations,
    )
