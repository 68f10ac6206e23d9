"""What CarbonEmissionMonitor and EnergyCostMonitor share: a ZeusMonitor and
the native monitor that charges each UTC hour of its windows (internal)."""

from __future__ import annotations

from zeus_native import _exit
from typing import Any, Dict, Hashable, List, Optional

from zeus_native.monitor.energy import Measurement, ZeusMonitor, _about_key, _WindowNames


class ChargedResult:
    """What a carbon and a cost measurement share: built from the native result, whose
    per-device amounts are named gpu_<kind>, cpu_<kind>, dram_<kind> and total_<kind>."""

    _kind = ""
    provenance: Optional[Dict[str, Any]]

    @property
    def warnings(self) -> List[str]:
        """What makes the amounts less trustworthy, one line each."""
        return list((self.provenance or {}).get("warnings", []))

    @classmethod
    def _from_native(cls, x: Any) -> Any:
        m = Measurement._from_native(x.measurement)
        k = cls._kind
        return cls(m.time, m.gpu_energy, getattr(x, f"gpu_{k}"), m.cpu_energy, getattr(x, f"cpu_{k}"),  # type: ignore[call-arg]
                   m.dram_energy, getattr(x, f"dram_{k}"), getattr(x, f"total_{k}"), x.provenance, m)


class ChargedWindows:
    """A ZeusMonitor and a native hourly-charging monitor over it."""

    def __init__(self, native_type, provider, gpu_indices, cpu_indices, sync_execution_with, fallback,
                 max_gap_hours, poll_interval) -> None:
        """Open the devices (as ZeusMonitor) and the hourly split's background thread."""
        self.zeus_monitor = ZeusMonitor(gpu_indices, cpu_indices, sync_execution_with=sync_execution_with)
        self._native = native_type(self.zeus_monitor, provider._native, float(poll_interval), fallback,
                                   int(max_gap_hours))
        # Window keys as ZeusMonitor names them (str(key)), and the native names now open.
        self._names = _WindowNames()
        self._open: set[str] = set()
        _exit.track(self, "carbon", lambda windows: windows._native._stop_threads())

    @property
    def gpu_indices(self) -> list[int]:
        """Monitored GPU indices (CUDA indices)."""
        return self.zeus_monitor.gpu_indices

    def begin_window(self, key: Hashable, sync_execution: bool = True) -> None:
        """Begins `key` (any hashable); ValueError when it is already open."""
        name = self._names.begin(key, lambda: list(self._open))
        try:
            self._native.begin_window(name, sync_execution)
        except ValueError as e:
            if name not in self._open:
                self._names.end(name)
            raise _about_key(e, name, key) from None
        self._open.add(name)

    def end_window(self, key: Hashable, sync_execution: bool = True) -> Any:
        """Ends `key` and returns its energy with its emission or cost; ValueError when it is not open."""
        name = self._names.lookup(key, lambda: list(self._open))
        try:
            result = self._native.end_window(name, sync_execution)
        except ValueError as e:
            raise _about_key(e, name, key) from None
        self._open.discard(name)
        self._names.end(name)
        return self._result_type()._from_native(result)

    def _result_type(self) -> Any:
        raise NotImplementedError
