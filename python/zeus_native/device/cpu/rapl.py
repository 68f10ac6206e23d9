"""RAPL CPU packages (the original's zeus.device.cpu.rapl), through the native powercap reader."""

from __future__ import annotations

import os
import threading
from typing import Any, Optional, Sequence

from zeus_native import _core, _exit
from zeus_native.device import _sets
from zeus_native.device.cpu.common import (  # noqa: F401 (the original defines these here)
    CPUs,
    CpuDramMeasurement,
    ZeusCPUNoPermissionError,
    ZeusRAPLFileInitError,
    ZeusRAPLNotSupportedError,
    ZeusRAPLPermissionError,
    _DeviceSetCPU,
)


RAPL_DIR = "/sys/class/powercap/intel-rapl"
CONTAINER_RAPL_DIR = "/zeus_sys/class/powercap/intel-rapl"
# The most a RAPL counter advances in 0.1 s at 1000 W (µJ), as the original's.
RAPL_COUNTER_MAX_INCREASE = 1000 * 1e6 * 0.1


class RaplWraparoundTracker:
    """Counts the wraparounds of one RAPL energy_uj file (the original's tracker).

    A native thread reads the file often enough to see every wrap at up to
    1000 W (the original spawns a polling process); it is joined by `_stop()`
    or at interpreter exit.
    """

    def __init__(self, rapl_file_path: str, max_energy_uj: float) -> None:
        """Start watching `rapl_file_path` (µJ, wrapping past `max_energy_uj`); ValueError for a missing file."""
        if not os.path.exists(rapl_file_path):
            raise ValueError(f"{rapl_file_path} is not a valid file path")
        self._native = _core.CounterWrapTracker(str(rapl_file_path), float(max_energy_uj))
        _exit.track(self, "device", RaplWraparoundTracker._stop)

    def _stop(self) -> None:
        """Join the reading thread (idempotent)."""
        self._native.stop()

    def get_num_wraparounds(self) -> int:
        """Wraparounds seen since the tracker started."""
        return int(self._native.wraps)


def _read_number(path: str, what: str) -> float:
    try:
        with open(path) as f:
            return float(f.read().strip())
    except FileNotFoundError as err:
        raise ZeusRAPLFileInitError(f"Error reading package {what}: {path} does not exist") from err


class RAPLFile:
    """One RAPL zone's energy counter (the original's RAPLFile): `name`, `last_energy` (µJ at
    construction), `max_energy_range_uj`, and `read()` in mJ corrected for wraparounds."""

    def __init__(self, path: str) -> None:
        """Open the zone directory `path` (ZeusRAPLFileInitError for a missing file,
        ZeusCPUNoPermissionError when energy_uj cannot be read)."""
        self.path = path
        self.energy_uj_path = os.path.join(path, "energy_uj")
        try:
            with open(os.path.join(path, "name")) as name_file:
                self.name: str = name_file.read().strip()
        except FileNotFoundError as err:
            raise ZeusRAPLFileInitError("Error reading package name") from err
        try:
            self.last_energy = _read_number(self.energy_uj_path, "energy")
        except PermissionError as err:
            raise ZeusCPUNoPermissionError(
                f"Can't read {self.energy_uj_path}: permission denied; RAPL requires root privileges, "
                "or run zeusd and set ZEUSD_SOCK_PATH (docs/zeusd-client.md)."
            ) from err
        self.max_energy_range_uj = _read_number(os.path.join(path, "max_energy_range_uj"), "max energy range")
        self._wraparound_tracker: Optional[RaplWraparoundTracker] = None
        self._wraparound_tracker_init_lock = threading.Lock()

    @property
    def wraparound_tracker(self) -> RaplWraparoundTracker:
        """The zone's RaplWraparoundTracker, started on first use."""
        if self._wraparound_tracker is None:
            with self._wraparound_tracker_init_lock:
                if self._wraparound_tracker is None:
                    self._wraparound_tracker = RaplWraparoundTracker(self.energy_uj_path, self.max_energy_range_uj)
        return self._wraparound_tracker

    def __str__(self) -> str:
        """The zone's paths, name and readings."""
        return (f"RAPLFile(Path: {self.path}\nEnergy_uj_path: {self.energy_uj_path}\nName: {self.name}"
                f"\nLast_energy: {self.last_energy}\nMax_energy: {self.max_energy_range_uj})")

    def read(self) -> float:
        """The counter now plus its wraparounds since the tracker started, in mJ."""
        tracker = self.wraparound_tracker
        with open(self.energy_uj_path) as energy_file:
            energy_uj = float(energy_file.read().strip())
        return (energy_uj + tracker.get_num_wraparounds() * self.max_energy_range_uj) / 1000.0


def rapl_is_available() -> bool:
    """Whether at least one RAPL package can be read (ZEUS_POWERCAP_ROOT, or zeusd)."""
    return _sets.cpus().init_error is None


class RAPLCPU(_DeviceSetCPU):
    """One RAPL package (the original's RAPLCPU), read from the set's powercap zone."""

    def __init__(self, cpu_index: int, rapl_dir: Optional[str] = None) -> None:
        """The package at `cpu_index`; `rapl_dir` (the original's zone directory) defaults to the set's."""
        super().__init__(cpu_index)
        self.rapl_dir = rapl_dir if rapl_dir is not None else _sets.cpus().get_zone_path(cpu_index)


class ZeusdRAPLCPU(RAPLCPU):
    """A RAPL package read through zeusd (the original's ZeusdRAPLCPU): with `client` (a
    ZeusdClient, ours or the original's) from that daemon, package `cpu_index` of its
    /discover, once require_capabilities found cpu-read and the package there; without, from the
    process's set (which reads through zeusd when ZEUSD_SOCK_PATH / ZEUSD_HOST_PORT is set)."""

    def __init__(self, cpu_index: int, client: Any = None) -> None:
        """The package at `cpu_index`; `client`: a ZeusdClient, or None for the process's set."""
        _DeviceSetCPU.__init__(self, cpu_index)
        self.rapl_dir = ""
        self._client = client
        if client is not None:
            from zeus_native.utils.zeusd import require_capabilities

            require_capabilities(client, read_cpu=True, cpu_ids=[cpu_index])
            self.dram_available = client.dram_available[client.cpu_ids.index(cpu_index)]

    def get_total_energy_consumption(self) -> CpuDramMeasurement:
        """The package's (and its DRAM's) energy counters (mJ)."""
        if self._client is None:
            return super().get_total_energy_consumption()
        from zeus_native.device.exception import ZeusdError

        entry = self._client.get_cpu_energy([self.cpu_index], cpu=True, dram=True)[self.cpu_index]
        if entry.cpu_energy_uj is None:
            raise ZeusdError(f"CPU {self.cpu_index}: the daemon answered no package energy (cpu_energy_uj null)")
        if entry.dram_energy_uj is None and self.dram_available:
            raise ZeusdError(f"CPU {self.cpu_index}: the daemon lists DRAM energy as available but answered none")
        dram_mj = None if entry.dram_energy_uj is None else entry.dram_energy_uj / 1000
        return CpuDramMeasurement(cpu_mj=entry.cpu_energy_uj / 1000, dram_mj=dram_mj)

    def supports_get_dram_energy_consumption(self) -> bool:
        """Whether its DRAM energy can be read."""
        if self._client is None:
            return super().supports_get_dram_energy_consumption()
        return bool(self.dram_available)


class RAPLCPUs(CPUs):
    """The process's RAPL packages: RAPLCPUs() is get_cpus()."""

    def __new__(cls) -> Any:
        """The process's CPU set (ZeusCPUInitError or ZeusCPUNoPermissionError when none can be read)."""
        from zeus_native.device.cpu import get_cpus

        return get_cpus()

    def __init__(self) -> None:
        """See __new__."""

    @property
    def cpus(self) -> Sequence[RAPLCPU]:
        """One RAPLCPU per package."""
        return [RAPLCPU(i) for i in range(len(_sets.cpus()))]
