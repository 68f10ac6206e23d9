"""GPU temperature timelines (the original's zeus.monitor.temperature), one native thread."""

from __future__ import annotations

import dataclasses
from typing import Dict, List, Optional, Tuple

from zeus_native import _core, _exit
from zeus_native.device import _sets
from zeus_native.monitor.power import _gpu_indices


@dataclasses.dataclass
class TemperatureSample:
    """One temperature reading (the original's TemperatureSample): Unix time, GPU index, °C."""

    timestamp: float
    gpu_index: int
    temperature_c: int


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
        _exit.track(self, "sampler", _core.TemperatureTimelines.stop)

    def stop(self) -> None:
        """Stop and join the sampling thread (queries keep working). Idempotent."""
        super().stop()

    def get_temperature_timeline(
        self,
        gpu_index: Optional[int] = None,
        start_time: Optional[float] = None,
        end_time: Optional[float] = None,
    ) -> Dict[int, List[Tuple[float, int]]]:
        """{gpu: [(time, °C), ...]} within [start_time, end_time]."""
        return super().get_temperature_timeline(gpu_index, start_time, end_time)

    def get_temperature(self, time: Optional[float] = None) -> Optional[Dict[int, int]]:
        """{gpu: °C} in force at `time` (default: latest), or None before any sample."""
        return super().get_temperature(time)
