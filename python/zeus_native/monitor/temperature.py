"""GPU temperature timelines (the original's zeus.monitor.temperature), one native thread."""

from __future__ import annotations

from zeus_native import _core
from zeus_native.device import _sets
from zeus_native.monitor.power import _gpu_indices, _live


class TemperatureMonitor(_core.TemperatureTimelines):
    """Samples GPU temperature (°C) every update_period seconds in a background thread."""

    def __init__(
        self,
        gpu_indices: list[int] | None = None,
        update_period: float = 1.0,
        max_samples_per_gpu: int | None = None,
    ) -> None:
        """Start sampling."""
        gpus = _sets.gpus()
        indices = _gpu_indices(gpu_indices, gpus)
        if update_period <= 0:
            raise ValueError(f"update_period must be positive, got {update_period}")
        super().__init__(gpus, indices, float(update_period), max_samples_per_gpu or 0)
        _live.add(self)
