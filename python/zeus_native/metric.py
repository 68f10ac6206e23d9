"""Energy and power metrics pushed to a Prometheus Pushgateway (the original's zeus.metric).

    from zeus_native.metric import EnergyHistogram

    histogram = EnergyHistogram(cpu_indices=[], gpu_indices=[0], pushgateway_url="localhost:9091", job="train")
    histogram.begin_window("step")
    ...
    histogram.end_window("step")   # observes J per device and pushes

Background work runs in native threads, not processes. A Pushgateway that
cannot be reached is a UserWarning naming the URL and the error, never an
exception out of your training loop; the values are kept and the next push
carries them. See docs/metrics.md for what differs from the original.
"""

from __future__ import annotations

import abc
import dataclasses
import time
from typing import Any, Sequence

from zeus_native import _core, _exit
from zeus_native.device import _sets
from zeus_native.device._indices import check_gpu_indices
from zeus_native.utils.framework import DEFAULT_SYNC, sync_function

def _devices(gpu_indices: Sequence[int], cpu_indices: Sequence[int]):
    gpus = _sets.gpus()
    if gpus.init_error is not None and gpu_indices:
        from zeus_native.device.gpu.common import ZeusGPUInitError

        raise ZeusGPUInitError(gpus.init_error)
    cpus = _sets.cpus()
    if cpus.init_error is not None and cpu_indices:
        from zeus_native.device.cpu.common import ZeusCPUInitError, ZeusCPUNoPermissionError

        error = ZeusCPUNoPermissionError if cpus.init_error_code == "no permission" else ZeusCPUInitError
        raise error(cpus.init_error)
    check_gpu_indices(gpus, gpu_indices)  # the same error as ZeusMonitor's for an unknown index
    return gpus, (cpus if cpus.init_error is None else None)


def _url(pushgateway_url: str | None, prometheus_url: str | None) -> str:
    # The original's docs call the argument prometheus_url; its code, pushgateway_url. Both work here.
    if pushgateway_url is None and prometheus_url is None:
        raise TypeError("missing the Pushgateway URL: pass pushgateway_url='http://host:9091'")
    if pushgateway_url is not None and prometheus_url is not None:
        raise TypeError("pass the Pushgateway URL once, as pushgateway_url (prometheus_url is its alias)")
    return str(pushgateway_url if pushgateway_url is not None else prometheus_url)


@dataclasses.dataclass
class MonitoringProcessState:
    """A window's stop queue and worker (the original's; the native metrics keep threads instead)."""

    queue: Any
    proc: Any


class Metric(abc.ABC):
    """What every metric does: named windows, begun and ended."""

    @abc.abstractmethod
    def begin_window(self, name: str, sync_execution: bool = True) -> None:
        """Begin the window `name` (after the GPUs' queued work when sync_execution)."""

    @abc.abstractmethod
    def end_window(self, name: str, sync_execution: bool = True) -> None:
        """End the window `name` and push."""


class _Pushed(Metric):
    _native: _core.EnergyHistogram | _core.EnergyCumulativeCounter | _core.PowerGauge

    def _sync(self, sync_execution: bool) -> None:
        # As the original: wait for the framework's queued GPU work (PyTorch when installed).
        if sync_execution and self._sync_fn is not None:
            self._sync_fn(list(self.gpu_indices))

    def begin_window(self, name: str, sync_execution: bool = False) -> None:
        """Begin the window `name`. ValueError when it is already open."""
        self._sync(sync_execution)
        self._native.begin_window(str(name), False)

    def end_window(self, name: str, sync_execution: bool = False) -> None:
        """End the window `name` and push. ValueError when it is not open."""
        self._sync(sync_execution)
        self._native.end_window(str(name), False)

    def close(self) -> None:
        """End every open window (each pushes its last values); the metric cannot be used after."""
        self._native.close()

    def _arguments(self, cpu_indices, gpu_indices, pushgateway_url, prometheus_url, job):
        """Keeps the arguments as the original's attributes; opens the devices: (gpus, cpus or None)."""
        if cpu_indices is not None:
            self.cpu_indices = list(cpu_indices)
        self.gpu_indices = list(gpu_indices)
        self.pushgateway_url = _url(pushgateway_url, prometheus_url)
        self.job = job
        return _devices(self.gpu_indices, cpu_indices or [])

    def _native_arguments(self, with_cpus: bool = True) -> list:
        """The index lists as _core takes them: [cpu_indices,] gpu_indices."""
        head = [[int(i) for i in self.cpu_indices]] if with_cpus else []
        return head + [[int(i) for i in self.gpu_indices]]

    def _register(self) -> None:
        self._sync_fn = sync_function(DEFAULT_SYNC)
        # Window threads never outlive the interpreter: each ends, pushes its last values and is joined.
        _exit.track(self, "metric", _Pushed.close)


class EnergyHistogram(_Pushed):
    """Energy of a repeated code range per GPU, CPU package and DRAM, as the
    histograms energy_monitor_{gpu,cpu,dram}_energy_joules{window, index},
    pushed at every end_window. GPU histograms exist when gpu_indices is not
    empty, CPU ones when cpu_indices is not, DRAM ones when a selected CPU
    package has DRAM. ValueError for an empty bucket range."""

    def __init__(
        self,
        cpu_indices: list,
        gpu_indices: list,
        pushgateway_url: str | None = None,
        job: str | None = None,
        gpu_bucket_range: Sequence[float] = [50.0, 100.0, 200.0, 500.0, 1000.0],
        cpu_bucket_range: Sequence[float] = [10.0, 50.0, 100.0, 500.0, 1000.0],
        dram_bucket_range: Sequence[float] = [5.0, 10.0, 20.0, 50.0, 150.0],
        *,
        prometheus_url: str | None = None,
    ) -> None:
        """Check every argument and open the devices; nothing is pushed until the first end_window."""
        gpus, cpus = self._arguments(cpu_indices, gpu_indices, pushgateway_url, prometheus_url, job)
        self.gpu_bucket_range = gpu_bucket_range
        self.cpu_bucket_range = cpu_bucket_range
        self.dram_bucket_range = dram_bucket_range
        self._native = _core.EnergyHistogram(
            gpus, cpus, *self._native_arguments(), self.pushgateway_url, str(job or ""),
            [float(b) for b in gpu_bucket_range], [float(b) for b in cpu_bucket_range],
            [float(b) for b in dram_bucket_range],
        )
        self.max_gpu_bucket, self.min_gpu_bucket = max(gpu_bucket_range), min(gpu_bucket_range)
        self.max_cpu_bucket, self.min_cpu_bucket = max(cpu_bucket_range), min(cpu_bucket_range)
        self.max_dram_bucket, self.min_dram_bucket = max(dram_bucket_range), min(dram_bucket_range)
        self._register()

    def begin_window(self, name: str, sync_execution: bool = True) -> None:
        """Begin the window `name`. ValueError when it is already open."""
        self._sync(sync_execution)
        self._native.begin_window(str(name), False)

    def end_window(self, name: str, sync_execution: bool = True) -> None:
        """Observe each device's joules since begin_window (a UserWarning for a value outside
        the buckets) and push. ValueError when the window is not open."""
        self._sync(sync_execution)
        self._native.end_window(str(name), False)


class EnergyCumulativeCounter(_Pushed):
    """Energy drawn while a window is open, as the counters
    energy_monitor_{gpu,cpu,dram}_energy_joules_total{window, index}, advanced
    and pushed every `update_period` seconds by a thread per window, and once
    more at end_window with the energy up to then."""

    def __init__(
        self,
        cpu_indices: list,
        gpu_indices: list,
        update_period: int | float,
        pushgateway_url: str | None = None,
        job: str | None = None,
        *,
        prometheus_url: str | None = None,
    ) -> None:
        """Check every argument and open the devices (ValueError for a period that is not positive)."""
        gpus, cpus = self._arguments(cpu_indices, gpu_indices, pushgateway_url, prometheus_url, job)
        self.update_period = update_period
        self._native = _core.EnergyCumulativeCounter(
            gpus, cpus, *self._native_arguments(), float(update_period), self.pushgateway_url, str(job or ""))
        self._register()


class PowerGauge(_Pushed):
    """GPU power as the gauge power_monitor_gpu_power_watts{window, index},
    set to the latest reading and pushed every `update_period` seconds while
    a window is open."""

    def __init__(
        self,
        gpu_indices: list,
        update_period: int | float,
        pushgateway_url: str | None = None,
        job: str | None = None,
        *,
        prometheus_url: str | None = None,
    ) -> None:
        """Check every argument and open the GPUs (ValueError for a period that is not positive)."""
        gpus, _ = self._arguments(None, gpu_indices, pushgateway_url, prometheus_url, job)
        self.update_period = update_period
        self._native = _core.PowerGauge(
            gpus, *self._native_arguments(False), float(update_period), self.pushgateway_url, str(job or ""))
        self._register()


def _until_stopped(metric: _Pushed, name: str, pipe: Any, update_period: float) -> None:
    # The native metric's thread pushes every update_period; here we only wait for the stop message.
    metric.begin_window(name, sync_execution=False)
    try:
        while pipe.empty():
            time.sleep(min(float(update_period), 0.1))
    finally:
        metric.end_window(name, sync_execution=False)
        metric.close()


def energy_monitoring_loop(
    name: str,
    pipe: Any,
    cpu_indices: list,
    gpu_indices: list,
    update_period: int,
    pushgateway_url: str,
    job: str,
) -> None:
    """Push the energy counters of window `name` every `update_period` seconds until `pipe` (a
    queue: multiprocessing's or queue.Queue) holds a message (the original's process body).
    The work is EnergyCumulativeCounter's; the last values are pushed when it stops."""
    counter = EnergyCumulativeCounter(cpu_indices, gpu_indices, update_period, pushgateway_url, job)
    _until_stopped(counter, name, pipe, update_period)


def power_monitoring_loop(
    name: str,
    pipe: Any,
    gpu_indices: list,
    update_period: int,
    pushgateway_url: str,
    job: str,
) -> None:
    """Push the GPUs' power gauges of window `name` every `update_period` seconds until `pipe`
    holds a message (the original's process body). The work is PowerGauge's."""
    gauge = PowerGauge(gpu_indices, update_period, pushgateway_url, job)
    _until_stopped(gauge, name, pipe, update_period)


__all__ = ["Metric", "EnergyHistogram", "EnergyCumulativeCounter", "PowerGauge", "MonitoringProcessState",
           "energy_monitoring_loop", "power_monitoring_loop"]
