"""Power timelines (the original's zeus.monitor.power), sampled by one native thread."""

from __future__ import annotations

import dataclasses
import enum
from typing import Dict, List, Optional, Tuple, Union

from zeus_native import _core, _exit
from zeus_native.device import _sets
from zeus_native.device._indices import check_gpu_indices
from zeus_native.device.gpu.common import ZeusGPUNotSupportedError


class PowerDomain(enum.Enum):
    """Which power reading: instant, 1-second average, or memory average."""

    DEVICE_INSTANT = "device_instant"
    DEVICE_AVERAGE = "device_average"
    MEMORY_AVERAGE = "memory_average"


@dataclasses.dataclass
class PowerSample:
    """One power reading (the original's PowerSample): Unix time, GPU index, mW."""

    timestamp: float
    gpu_index: int
    power_mw: float


def infer_counter_update_period(gpu_indicies: List[int]) -> float:
    """How often to poll these GPUs' power (s): half the shortest interval between
    changes of their readings, at most 0.1 s (the original's rule; its argument name)."""
    gpus = _sets.gpus()
    indices = _gpu_indices(list(gpu_indicies), gpus)
    return _core.infer_counter_update_period(gpus, indices)


def _domain(value: PowerDomain | str) -> str:
    return PowerDomain(value).value if not isinstance(value, PowerDomain) else value.value


def _gpu_indices(gpu_indices: list[int] | None, gpus: _core.GPUs) -> list[int]:
    if gpu_indices is not None and len(gpu_indices) == 0:
        raise ValueError("`gpu_indices` must be either `None` or non-empty; pass None for every GPU")
    if gpus.init_error is not None:
        from zeus_native.device.gpu.common import ZeusGPUInitError

        raise ZeusGPUInitError(gpus.init_error)
    return [] if gpu_indices is None else check_gpu_indices(gpus, gpu_indices)


class PowerMonitor(_core.PowerTimelines):
    """Samples GPU power in a background thread (not a process) and answers
    questions about any interval: timelines, energy, power at a time.

    Timestamps are Unix seconds (time.time()), watts and joules as floats.
    """

    def __init__(
        self,
        gpu_indices: list[int] | None = None,
        update_period: float | None = None,
        max_samples_per_gpu: int | None = None,
        power_domains: list[PowerDomain | str] | None = None,
    ) -> None:
        """Start sampling; update_period None infers it from the sensors."""
        gpus = _sets.gpus()
        indices = _gpu_indices(gpu_indices, gpus)
        if power_domains is not None and len(power_domains) == 0:
            raise ValueError("`power_domains` must be either `None` or non-empty; pass None for every supported one")
        if max_samples_per_gpu is not None and max_samples_per_gpu <= 0:
            raise ValueError(f"max_samples_per_gpu must be positive or None, got {max_samples_per_gpu}")
        if update_period is not None and not update_period > 0:
            raise ValueError(f"update_period must be a positive number of seconds, or None to infer it; "
                             f"got {update_period}")
        domains = [] if power_domains is None else list(dict.fromkeys(_domain(d) for d in power_domains))
        try:
            super().__init__(gpus, indices, update_period, max_samples_per_gpu or 0, domains)
        except ZeusGPUNotSupportedError as e:
            if not domains:
                raise
            # A requested domain this GPU does not have: the caller's choice (the original's ValueError).
            raise ValueError(f"{e}; ask only for the power_domains every monitored GPU supports "
                             "(python -m zeus_native.show_env lists them)") from e
        _exit.track(self, "sampler", _core.PowerTimelines.stop)

    def _default_domain(self) -> str:
        for d in ("device_instant", "device_average"):
            if d in self.power_domains:
                return d
        raise ValueError("neither device_instant nor device_average is monitored; pass power_domain explicitly")

    def stop(self) -> None:
        """Stop and join the sampling thread (queries keep working). Idempotent."""
        super().stop()

    def get_power_timeline(
        self,
        power_domain: Union[PowerDomain, str],
        gpu_index: Optional[int] = None,
        start_time: Optional[float] = None,
        end_time: Optional[float] = None,
    ) -> Dict[int, List[Tuple[float, float]]]:
        """{gpu: [(time, W), ...]} of one domain within [start_time, end_time]."""
        return super().get_power_timeline(_domain(power_domain), gpu_index, start_time, end_time)

    def get_all_power_timelines(
        self,
        gpu_index: Optional[int] = None,
        start_time: Optional[float] = None,
        end_time: Optional[float] = None,
    ) -> Dict[str, Dict[int, List[Tuple[float, float]]]]:
        """{domain: {gpu: [(time, W), ...]}} within [start_time, end_time]."""
        return super().get_all_power_timelines(gpu_index, start_time, end_time)

    def get_energy(
        self, start_time: float, end_time: float, power_domain: Union[PowerDomain, str, None] = None
    ) -> Optional[Dict[int, float]]:
        """{gpu: J} over what the readings cover of [start_time, end_time] (as the original: an interval
        that starts before the monitor does counts from its first reading); None before any reading,
        ValueError when no reading falls in the interval."""
        d = self._default_domain() if power_domain is None else _domain(power_domain)
        return super().get_energy(start_time, end_time, d)

    def get_power(
        self, time: Optional[float] = None, power_domain: Union[PowerDomain, str] = PowerDomain.DEVICE_INSTANT
    ) -> Optional[Dict[int, float]]:
        """{gpu: W} in force at `time` (default: latest), or None before any sample."""
        d = _domain(power_domain)
        if d not in self.power_domains:
            raise ValueError(f"Power domain {d} is not monitored; add it to power_domains")
        return super().get_power(time, d)
