"""The power-limit optimizer (the original's zeus.optimizer.power_limit).

Unlike the original, the power limits in force before the optimizer was
created come back when it is closed, garbage-collected or the interpreter
exits, and warmup_steps=0 works (docs/python.md).
"""

from __future__ import annotations

import atexit
import weakref
from pathlib import Path
from typing import Any

from zeus_native import _core
from zeus_native.callback import Callback
from zeus_native.monitor.energy import ZeusMonitor


class OptimumSelector:
    """Chooses a power limit (W) from profiled measurements."""

    _native: _core.Selector

    def select(self, measurements: list[Any]) -> int:
        """The chosen power limit (W) from PowerLimitMeasurement-like objects
        (power_limit W, energy J, time s) or (power_limit, energy, time) tuples."""
        rows = [
            (m.power_limit, m.energy, m.time) if hasattr(m, "power_limit") else tuple(m) for m in measurements
        ]
        return self._native.select(rows, 1)


class Energy(OptimumSelector):
    """The limit with the least energy."""

    def __init__(self) -> None:
        """Create the selector."""
        self._native = _core.energy_selector()


class Time(OptimumSelector):
    """The limit with the least time."""

    def __init__(self) -> None:
        """Create the selector."""
        self._native = _core.time_selector()


class ZeusCost(OptimumSelector):
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


class MaxSlowdownConstraint(OptimumSelector):
    """The lowest limit whose time is at most factor x the time at the maximum limit."""

    def __init__(self, factor: float) -> None:
        """factor >= 1 (ValueError otherwise)."""
        if factor < 1:
            raise ValueError(f"factor must be at least 1, got {factor}")
        self.factor = factor
        self._native = _core.max_slowdown_selector(factor)


class CarbonAware(OptimumSelector):
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
    """

    def __init__(
        self,
        monitor: ZeusMonitor,
        optimum_selector: OptimumSelector | None = None,
        wait_steps: int = 1,
        warmup_steps: int = 10,
        profile_steps: int = 40,
        pl_step: int = 25,
        profile_path: str | Path | None = None,
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

    def on_step_begin(self) -> None:
        """Drive profiling (may change the power limit)."""
        self._native.on_step_begin()

    def on_epoch_end(self) -> None:
        """Cancel an unfinished warm-up or window; it is retried next epoch."""
        self._native.on_epoch_end()

    def close(self) -> None:
        """Put back the limits in force before the optimizer was created. Idempotent."""
        self._native.close()

    @property
    def state(self) -> str:
        """'Ready', 'Warmup', 'Profiling' or 'Done'."""
        return self._native.state

    @property
    def optimal_power_limit(self) -> int | None:
        """The chosen limit (W) once done, else None."""
        return self._native.optimal_power_limit

    @property
    def measurements(self) -> list[tuple[int, float, float]]:
        """(power_limit W, energy J, time s) per profiled limit, in profiling order."""
        return self._native.measurements

    def report(self) -> str:
        """The profile table and each selector's choice (same text as `zeus power-limit report`)."""
        return self._native.report()


def HFGlobalPowerLimitOptimizer(  # noqa: N802 (a class in the original)
    monitor: ZeusMonitor,
    optimum_selector: OptimumSelector | None = None,
    wait_steps: int = 1,
    warmup_steps: int = 10,
    profile_steps: int = 40,
    pl_step: int = 25,
    profile_path: str | Path | None = None,
):
    """GlobalPowerLimitOptimizer as a Hugging Face TrainerCallback (imports transformers only now).

    Same arguments as GlobalPowerLimitOptimizer; pass the result in Trainer(callbacks=[...]).
    """
    try:
        from transformers import TrainerCallback  # type: ignore
    except ImportError as e:
        raise ImportError(
            "HFGlobalPowerLimitOptimizer needs Hugging Face transformers (pip install transformers); "
            "use GlobalPowerLimitOptimizer with your own loop otherwise"
        ) from e

    class _HFGlobalPowerLimitOptimizer(TrainerCallback):
        def __init__(self) -> None:
            self.optimizer = GlobalPowerLimitOptimizer(
                monitor, optimum_selector, wait_steps, warmup_steps, profile_steps, pl_step, profile_path
            )

        def on_epoch_end(self, args, state, control, model=None, **kw) -> None:
            self.optimizer.on_epoch_end()

        def on_step_begin(self, args, state, control, model=None, **kw) -> None:
            self.optimizer.on_step_begin()

    return _HFGlobalPowerLimitOptimizer()
