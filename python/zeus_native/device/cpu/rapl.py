"""RAPL CPU packages (the original's zeus.device.cpu.rapl), through the native powercap reader."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from zeus_native.device import _sets
from zeus_native.device.cpu.common import (  # noqa: F401 (the original defines these here)
    CPUs,
    ZeusRAPLFileInitError,
    ZeusRAPLNotSupportedError,
    ZeusRAPLPermissionError,
    _DeviceSetCPU,
)


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
    """A RAPL package read through zeusd (the original's ZeusdRAPLCPU). The native set reads
    through zeusd when ZEUSD_SOCK_PATH / ZEUSD_HOST_PORT is set; `client` is kept as an attribute."""

    def __init__(self, cpu_index: int, client: Any = None) -> None:
        """The package at `cpu_index`; `client`: the original's ZeusdClient, if any."""
        _DeviceSetCPU.__init__(self, cpu_index)
        self.rapl_dir = ""
        self._client = client


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
