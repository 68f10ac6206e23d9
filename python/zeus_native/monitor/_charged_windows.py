"""What CarbonEmissionMonitor and EnergyCostMonitor share: a ZeusMonitor and
the native monitor that charges each UTC hour of its windows (internal)."""

from __future__ import annotations

from zeus_native.monitor.energy import ZeusMonitor


class ChargedWindows:
    """A ZeusMonitor and a native hourly-charging monitor over it."""

    def __init__(self, native_type, provider, gpu_indices, cpu_indices, sync_execution_with, fallback,
                 max_gap_hours, poll_interval) -> None:
        """Open the devices (as ZeusMonitor) and the hourly split's background thread."""
        self.zeus_monitor = ZeusMonitor(gpu_indices, cpu_indices, sync_execution_with=sync_execution_with)
        self._native = native_type(self.zeus_monitor, provider._native, float(poll_interval), fallback,
                                   int(max_gap_hours))

    @property
    def gpu_indices(self) -> list[int]:
        """Monitored GPU indices (CUDA indices)."""
        return self.zeus_monitor.gpu_indices

    def begin_window(self, key: str, sync_execution: bool = True) -> None:
        """Begins `key`; ValueError when it is already open."""
        self._native.begin_window(key, sync_execution)

    def end_window(self, key: str, sync_execution: bool = True):
        """Ends `key` and returns its energy with its emission or cost; ValueError when it is not open."""
        return self._native.end_window(key, sync_execution)
