"""Power timelines (the original's zeus.monitor.power), sampled by one native thread."""

from __future__ import annotations

import atexit
import enum
import weakref

from zeus_native import _core
from zeus_native.device import _sets
from zeus_native.device._indices import check_gpu_indices


class PowerDomain(enum.Enum):
    """Which power reading: instant, 1-second average, or memory average."""

    DEVICE_INSTANT = "device_instant"
    DEVICE_AVERAGE = "device_average"
    MEMORY_AVERAGE = "memory_average"


_live: "weakref.WeakSet" = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    # Nothing the package starts survives the interpreter: join every sampler.
    for monitor in list(_live):
        monitor.stop()


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
        domains = [] if power_domains is None else list(dict.fromkeys(_domain(d) for d in power_domains))
        super().__init__(gpus, indices, update_period, max_samples_per_gpu or 0, domains)
        _live.add(self)

    def _default_domain(self) -> str:
        for d in ("device_instant", "device_average"):
            if d in self.power_domains:
                return d
        raise ValueError("neither device_instant nor device_average is monitored; pass power_domain explicitly")

    def get_power_timeline(self, power_domain, gpu_index=None, start_time=None, end_time=None):
        """{gpu: [(time, W), ...]} of one domain within [start_time, end_time]."""
        return super().get_power_timeline(_domain(power_domain), gpu_index, start_time, end_time)

    def get_energy(self, start_time: float, end_time: float, power_domain=None) -> dict[int, float]:
        """{gpu: J} over [start_time, end_time]; ValueError when the timeline does not cover it."""
        d = self._default_domain() if power_domain is None else _domain(power_domain)
        return super().get_energy(start_time, end_time, d)

    def get_power(self, time: float | None = None, power_domain=PowerDomain.DEVICE_INSTANT):
        """{gpu: W} in force at `time` (default: latest), or None before any sample."""
        d = _domain(power_domain)
        if d not in self.power_domains:
            raise ValueError(f"power domain {d} is not monitored; add it to power_domains")
        return super().get_power(time, d)
