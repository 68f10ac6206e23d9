"""The power-limit optimizer (the original's zeus.optimizer.power_limit).

Unlike the original, the power limits in force before the optimizer was
created come back when it is closed, garbage-collected or the interpreter
exits, and warmup_steps=0 works (docs/python.md).
"""

from __future__ import annotations

import abc
import atexit
import logging
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any, List, Optional, Tuple, Union

from zeus_native import _core
from zeus_native.callback import Callback
from zeus_native.monitor.energy import ZeusMonitor
from zeus_native.utils.framework import is_distributed

try:  # the original's states are pydantic (v1 API) models
    from zeus_native.utils.pydantic_v1 import BaseModel, NonNegativeInt, PositiveFloat, PositiveInt
except ImportError:  # without pydantic: the same fields, checks and methods
    from zeus_native.optimizer._models import BaseModel, NonNegativeInt, PositiveFloat, PositiveInt  # type: ignore[assignment]


class OptimumSelector(abc.ABC):
    """Chooses a power limit from profiled measurements (the original's abstract base).

    Subclass it and implement select(measurements) -> W to use your own rule
    with GlobalPowerLimitOptimizer; Energy, Time, ZeusCost, MaxSlowdownConstraint
    and CarbonAware are native.
    """

    @abc.abstractmethod
    def select(self, measurements: List[PowerLimitMeasurement]) -> int:
        """The chosen power limit (W) from one PowerLimitMeasurement per profiled limit."""

    def __getattr__(self, name: str) -> Any:
        # A selector written in Python: the native optimizer asks _python_select.
        if name == "_native":
            return _core.python_selector(self)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _python_select(self, rows: List[Tuple[int, float, float]]) -> int:
        return int(self.select([PowerLimitMeasurement(power_limit=w, energy=j, time=t) for w, j, t in rows]))


class _NativeSelector(OptimumSelector):
    _native: _core.Selector

    def select(self, measurements: List[Any]) -> int:
        """The chosen power limit (W) from PowerLimitMeasurement-like objects
        (power_limit W, energy J, time s) or (power_limit, energy, time) tuples."""
        rows = [
            (m.power_limit, m.energy, m.time) if hasattr(m, "power_limit") else tuple(m) for m in measurements
        ]
        return self._native.select(rows, 1)


class Energy(_NativeSelector):
    """The limit with the least energy."""

    def __init__(self) -> None:
        """Create the selector."""
        self._native = _core.energy_selector()


class Time(_NativeSelector):
    """The limit with the least time."""

    def __init__(self) -> None:
        """Create the selector."""
        self._native = _core.time_selector()


class ZeusCost(_NativeSelector):
    """argmin eta*energy + (1-eta)*max_power*world_size*time (zeus_cost)."""

    def __init__(self, eta_knob: float, world_size: int = 1) -> None:
        """eta_knob in [0, 1]; world_size >= 1 (ValueError otherwise)."""
        if not 0.0 <= eta_knob <= 1.0:
            raise ValueError(f"eta_knob must be between 0 and 1, got {eta_knob}")
        if world_size < 1:
            raise ValueError(f"world_size must be at least 1, got {world_size}")
        self.eta_knob = eta_knob
        self.world_size = world_size
        self._native = _core.zeus_cost_selector(eta_knob, world_size)


class MaxSlowdownConstraint(_NativeSelector):
    """The lowest limit whose time is at most factor x the time at the maximum limit."""

    def __init__(self, factor: float) -> None:
        """factor >= 1 (ValueError otherwise)."""
        if factor < 1:
            raise ValueError(f"factor must be at least 1, got {factor}")
        self.factor = factor
        self._native = _core.max_slowdown_selector(factor)


class CarbonAware(_NativeSelector):
    """Beyond the original: ZeusCost with energy priced by how dirty the grid is now.

    cost = eta_knob * energy * (I_now / I_ref) + (1 - eta_knob) * max_power * world_size * time,
    so a dirtier hour moves the choice towards less energy, a cleaner one towards less time;
    at I_now = I_ref it is ZeusCost(eta_knob) exactly. I_now comes from
    `carbon_intensity_provider` (a zeus_native.monitor.carbon provider) each time the limit is
    chosen; GlobalPowerLimitOptimizer chooses again, at most once a minute, when the intensity
    moved by more than `threshold` (relative) since. reference_g_per_kwh None: the intensity at
    the first choice. With several ranks, give every rank the same provider source
    (docs/carbon-and-cost.md).
    """

    def __init__(
        self,
        carbon_intensity_provider,
        eta_knob: float = 0.5,
        threshold: float = 0.1,
        reference_g_per_kwh: float | None = None,
        world_size: int | None = None,
    ) -> None:
        """ValueError for eta_knob outside [0, 1], a negative threshold, a reference that is not positive."""
        self.carbon_intensity_provider = carbon_intensity_provider
        self.eta_knob = eta_knob
        self.threshold = threshold
        self.reference_g_per_kwh = reference_g_per_kwh
        self.world_size = world_size
        self._native = _core.carbon_aware_selector(
            carbon_intensity_provider._native, float(eta_knob), float(threshold),
            None if reference_g_per_kwh is None else float(reference_g_per_kwh), world_size,
        )


class Ready(BaseModel):
    """Waiting: `steps` more on_step_begin calls before `next_power_limit` (mW) is set (the original's Ready)."""

    next_power_limit: PositiveInt
    steps: NonNegativeInt  # 0 with warmup_steps=0 (the original's PositiveInt)


class Warmup(BaseModel):
    """Warming up at `current_power_limit` (mW) for `steps` more steps (the original's Warmup)."""

    current_power_limit: PositiveInt
    steps: NonNegativeInt


class Profiling(BaseModel):
    """Measuring `current_power_limit` (mW) for `steps` more steps (the original's Profiling)."""

    current_power_limit: PositiveInt
    steps: NonNegativeInt


class Done(BaseModel):
    """Profiling is over; `optimal_power_limit` (mW) is set (the original's Done)."""

    optimal_power_limit: PositiveInt


class PowerLimitMeasurement(BaseModel):
    """One profiled limit (the original's): power_limit (W), energy (J) and time (s) of its window."""

    power_limit: PositiveInt
    energy: PositiveFloat
    time: PositiveFloat


_STATES = {"Warmup": Warmup, "Profiling": Profiling}

# The original's logger and messages (zeus.optimizer.power_limit), under this package's name.
logger = logging.getLogger(__name__)


def _distributed() -> bool:
    try:
        return is_distributed()
    except RuntimeError:  # no framework (the original raises): one process
        return False


_live: "weakref.WeakSet" = weakref.WeakSet()


@atexit.register
def _restore_all() -> None:
    for optimizer in list(_live):
        optimizer.close()


class GlobalPowerLimitOptimizer(Callback):
    """Profiles every power limit during training and settles on the best one.

        plo = GlobalPowerLimitOptimizer(monitor)
        for epoch in ...:
            plo.on_epoch_begin()
            for batch in loader:
                plo.on_step_begin(); train(batch); plo.on_step_end()
            plo.on_epoch_end()

    Power limits are in mW as in the original (power_limits, current_power_limit,
    pl_step, the states' limits, optimal_power_limit); a PowerLimitMeasurement's
    power_limit is in W, as the original's.
    """

    def __init__(
        self,
        monitor: ZeusMonitor,
        optimum_selector: Optional[OptimumSelector] = None,
        wait_steps: int = 1,
        warmup_steps: int = 10,
        profile_steps: int = 40,
        pl_step: int = 25,
        profile_path: Union[str, Path, None] = None,
    ) -> None:
        """Set the monitored GPUs to the maximum limit (or a saved profile's optimum)."""
        if wait_steps < 0:
            raise ValueError(f"wait_steps must be non-negative, got {wait_steps}")
        if warmup_steps < 0:
            raise ValueError(f"warmup_steps must be non-negative, got {warmup_steps}")
        if profile_steps <= 0:
            raise ValueError(f"profile_steps must be positive, got {profile_steps}")
        if pl_step <= 0:
            raise ValueError(f"pl_step must be positive, got {pl_step}")
        self.monitor = monitor
        self.optimum_selector = optimum_selector or ZeusCost(eta_knob=0.5, world_size=len(monitor.gpu_indices))
        self.warmup_steps = warmup_steps
        self.profile_steps = profile_steps
        self.pl_step = pl_step * 1000  # mW, as the original keeps it
        self.profile_path = Path(profile_path) if isinstance(profile_path, str) else profile_path
        self._native = _core.PowerLimitOptimizer(
            monitor,
            self.optimum_selector._native,
            wait_steps,
            warmup_steps,
            profile_steps,
            float(pl_step),
            None if profile_path is None else str(profile_path),
        )
        _live.add(self)
        if len(monitor.gpu_indices) > 1 and _distributed():
            logger.warning(
                "Distributed training is enabled with %d GPUs monitored. "
                "For distributed training, it is recommended to monitor only one GPU per `ZeusMonitor` instance "
                "since `GlobalPowerLimitOptimizer` performs an all-reduce operation internally over all devices.",
                len(monitor.gpu_indices),
            )
        self._log_start(wait_steps)

    def on_step_begin(self) -> None:
        """Drive profiling (may change the power limit)."""
        if not logger.isEnabledFor(logging.INFO):
            self._native.on_step_begin()
            return
        before = self._native.state_detail
        self._native.on_step_begin()
        self._log_step(before, self._native.state_detail)

    def on_epoch_end(self) -> None:
        """Cancel an unfinished warm-up or window; it is retried next epoch. Epochs too short
        for one limit's warm-up and window (twice in a row) end profiling at the maximum
        limit with a UserWarning; training goes on."""
        if not logger.isEnabledFor(logging.INFO):
            self._native.on_epoch_end()
            return
        before = self._native.state_detail
        self._native.on_epoch_end()
        after = self._native.state_detail
        if before[0] in _STATES and after[0] == "Ready":
            logger.info("%s phase for %d W interrupted by the end of a training epoch.", before[0], before[1] // 1000)
            logger.info("Setting power limit to %d W.", max(self.power_limits) // 1000)
        else:
            self._log_step(before, after)

    def _log_start(self, wait_steps: int) -> None:
        """What the original logs when it is created."""
        name, limit_mw, _ = self._native.state_detail
        if name == "Done":
            logger.info("Loaded previous profiling results from '%s'.", str(self.profile_path))
            logger.info("Optimal power limit is %d W.", limit_mw // 1000)
            logger.info("Setting power limit to %d W.", limit_mw // 1000)
            return
        if self.profile_path is None:
            logger.info("JIT profiling enabled.")
        else:
            logger.info("JIT Profiling enabled. Profile will be saved to '%s'.", str(self.profile_path))
        logger.info("Will wait %d step(s) before profiling.", wait_steps)
        logger.info("Set power limit to the maximum before starting.")
        logger.info("Setting power limit to %d W.", max(self.power_limits) // 1000)

    def _log_step(self, before: Tuple[str, int, int], after: Tuple[str, int, int]) -> None:
        """The original's messages for the move from state `before` to `after` ((name, mW, steps))."""
        (was, was_mw, _), (now, now_mw, _) = before, after
        if (was, was_mw) == (now, now_mw):
            return
        if was == "Profiling":
            logger.info("Finished profiling for power limit %d W.", was_mw // 1000)
        if now in _STATES and (was, was_mw) != ("Warmup", now_mw):
            logger.info("Starting warmup for power limit %d W.", now_mw // 1000)
            logger.info("Setting power limit to %d W.", now_mw // 1000)
        if now == "Profiling":
            logger.info("Starting actual profiling for power limit %d W.", now_mw // 1000)
        elif now == "Done":
            logger.info("Optimal power limit is %d W.", now_mw // 1000)
            logger.info("Setting power limit to %d W.", now_mw // 1000)
            if self.profile_path is not None:
                logger.info("JIT profiling results saved to '%s'.", str(self.profile_path))

    def close(self) -> None:
        """Put back the limits in force before the optimizer was created. Idempotent."""
        self._native.close()

    @property
    def state(self) -> Union[Ready, Warmup, Profiling, Done]:
        """Where profiling is: a Ready, Warmup, Profiling or Done (limits in mW)."""
        name, limit_mw, steps = self._native.state_detail
        if name == "Done":
            return Done(optimal_power_limit=limit_mw)
        if name == "Ready":
            return Ready(next_power_limit=limit_mw, steps=steps)
        return _STATES[name](current_power_limit=limit_mw, steps=steps)

    @property
    def power_limits(self) -> List[int]:
        """The limits profiled, in mW, highest first."""
        return list(self._native.power_limits)

    @property
    def current_power_limit(self) -> int:
        """The limit now set on the monitored GPUs (mW; 0 without GPUs)."""
        indices = self.monitor.gpu_indices
        return int(self.monitor.gpus.get_power_management_limit(indices[0])) if indices else 0

    @property
    def optimal_power_limit(self) -> Optional[int]:
        """The chosen limit (mW, as the original's Done.optimal_power_limit) once done, else None."""
        watts = self._native.optimal_power_limit
        return None if watts is None else int(watts) * 1000

    @property
    def measurements(self) -> List[PowerLimitMeasurement]:
        """One PowerLimitMeasurement (power_limit W, energy J, time s) per profiled limit, in profiling order."""
        return [PowerLimitMeasurement(power_limit=w, energy=j, time=t) for w, j, t in self._native.measurements]

    def report(self) -> str:
        """The profile table and each selector's choice (same text as `zeus power-limit report`)."""
        return self._native.report()


def _hf_callback_class() -> type:
    """HFGlobalPowerLimitOptimizer, made on first use: a subclass of transformers'
    TrainerCallback when transformers is installed (imported only now), else a
    class whose construction says how to install it."""
    try:
        from transformers import TrainerCallback  # type: ignore[import-not-found]
    except ImportError:
        TrainerCallback = object  # noqa: N806 (the original's fallback too)
        available = False
    else:
        available = True

    class HFGlobalPowerLimitOptimizer(TrainerCallback):  # type: ignore[valid-type,misc]
        """GlobalPowerLimitOptimizer as a Hugging Face TrainerCallback (Trainer(callbacks=[...]));
        same arguments; the optimizer is its `optimizer` attribute."""

        def __init__(
            self,
            monitor: ZeusMonitor,
            optimum_selector: Optional[OptimumSelector] = None,
            wait_steps: int = 1,
            warmup_steps: int = 10,
            profile_steps: int = 40,
            pl_step: int = 25,
            profile_path: Union[str, Path, None] = None,
        ) -> None:
            """Create the GlobalPowerLimitOptimizer; ImportError naming the fix without transformers."""
            if not available:
                raise ImportError(
                    "HFGlobalPowerLimitOptimizer needs Hugging Face transformers (pip install transformers); "
                    "use GlobalPowerLimitOptimizer with your own loop otherwise"
                )
            self.optimizer = GlobalPowerLimitOptimizer(
                monitor=monitor, optimum_selector=optimum_selector, wait_steps=wait_steps,
                warmup_steps=warmup_steps, profile_steps=profile_steps, pl_step=pl_step, profile_path=profile_path,
            )

        def on_epoch_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            """Mark the end of a training epoch."""
            self.optimizer.on_epoch_end()

        def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            """Mark the beginning of a training step."""
            self.optimizer.on_step_begin()

    HFGlobalPowerLimitOptimizer.__module__ = __name__
    return HFGlobalPowerLimitOptimizer


if TYPE_CHECKING:
    class HFGlobalPowerLimitOptimizer:
        """GlobalPowerLimitOptimizer as a Hugging Face TrainerCallback (a TrainerCallback subclass at run time)."""

        optimizer: GlobalPowerLimitOptimizer

        def __init__(
            self,
            monitor: ZeusMonitor,
            optimum_selector: Optional[OptimumSelector] = None,
            wait_steps: int = 1,
            warmup_steps: int = 10,
            profile_steps: int = 40,
            pl_step: int = 25,
            profile_path: Union[str, Path, None] = None,
        ) -> None: ...

        def on_epoch_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None: ...

        def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None: ...


def __getattr__(name: str) -> Any:
    # transformers is imported when HFGlobalPowerLimitOptimizer is first used,
    # never by importing this module (PEP 562).
    if name == "HFGlobalPowerLimitOptimizer":
        cls = _hf_callback_class()
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
