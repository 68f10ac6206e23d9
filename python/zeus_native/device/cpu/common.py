"""CPU packages (the original's zeus.device.cpu.common): CPU, CPUs, CpuDramMeasurement and the CPU errors."""

from __future__ import annotations

import abc
import dataclasses
from typing import Optional, Sequence, Union

from zeus_native.device import _sets
from zeus_native.device.common import CPU_ALIASES, DeprecatedAliasABCMeta, add_deprecated_aliases
from zeus_native.device.exception import ZeusBaseCPUError


class ZeusCPUInitError(ZeusBaseCPUError):
    """No CPU energy source could be opened."""


class ZeusCPUNoPermissionError(ZeusBaseCPUError):
    """RAPL counters exist but this process may not read them."""


class ZeusCPUNotFoundError(ZeusBaseCPUError):
    """No such CPU package."""


class ZeusRAPLNotSupportedError(ZeusBaseCPUError):
    """This machine has no RAPL zone for the request."""


class ZeusRAPLFileInitError(ZeusBaseCPUError):
    """A RAPL zone lacks a file it needs."""


class ZeusRAPLPermissionError(ZeusBaseCPUError):
    """A RAPL file cannot be read."""


@dataclasses.dataclass
class CpuDramMeasurement:
    """A package's energy counter readings (the original's): cpu_mj, and dram_mj or None (mJ)."""

    cpu_mj: float
    dram_mj: Optional[float] = None

    def __sub__(self, other: "CpuDramMeasurement") -> "CpuDramMeasurement":
        """The difference of two readings (a DRAM value missing on one side counts as 0)."""
        dram_mj: Optional[float] = None
        if self.dram_mj is not None or other.dram_mj is not None:
            dram_mj = (self.dram_mj or 0.0) - (other.dram_mj or 0.0)
        return CpuDramMeasurement(self.cpu_mj - other.cpu_mj, dram_mj)

    def __truediv__(self, other: Union[int, float]) -> "CpuDramMeasurement":
        """Both readings divided by a number (ZeroDivisionError for 0)."""
        if not isinstance(other, (int, float)):
            return NotImplemented
        if other == 0:
            raise ZeroDivisionError("Division by zero is not allowed")
        return CpuDramMeasurement(self.cpu_mj / other, None if self.dram_mj is None else self.dram_mj / other)


class CPU(abc.ABC, metaclass=DeprecatedAliasABCMeta):
    """One CPU package (the original's abstract CPU); RAPLCPU implements it."""

    def __init__(self, cpu_index: int) -> None:
        """The package at `cpu_index`."""
        self.cpu_index = cpu_index

    @abc.abstractmethod
    def get_total_energy_consumption(self) -> CpuDramMeasurement:
        """The package's (and its DRAM's) energy counters (mJ)."""

    @abc.abstractmethod
    def supports_get_dram_energy_consumption(self) -> bool:
        """Whether its DRAM energy can be read."""


class _DeviceSetCPU(CPU):
    """A package of this process's CPU set (RAPL powercap, or zeusd)."""

    def get_total_energy_consumption(self) -> CpuDramMeasurement:
        """The package's (and its DRAM's) energy counters (mJ)."""
        return _sets.cpus().get_total_energy_consumption(self.cpu_index)

    def supports_get_dram_energy_consumption(self) -> bool:
        """Whether its DRAM energy can be read."""
        return bool(_sets.cpus().supports_get_dram_energy_consumption(self.cpu_index))


class CPUs(abc.ABC, metaclass=DeprecatedAliasABCMeta):
    """The CPU packages (the original's abstract CPUs). get_cpus() returns this
    process's set (a native object registered as a CPUs)."""

    @abc.abstractmethod
    def __init__(self) -> None:
        """Open the packages."""

    @property
    @abc.abstractmethod
    def cpus(self) -> Sequence[CPU]:
        """One CPU object per package."""

    @abc.abstractmethod
    def get_total_energy_consumption(self, index: int) -> CpuDramMeasurement:
        """Package `index`'s energy counters (mJ)."""

    @abc.abstractmethod
    def supports_get_dram_energy_consumption(self, index: int) -> bool:
        """Whether package `index`'s DRAM energy can be read."""

    @abc.abstractmethod
    def __len__(self) -> int:
        """How many packages."""


class EmptyCPUs(CPUs):
    """No CPU packages (the original's EmptyCPUs): per-package calls raise ZeusCPUNotFoundError."""

    def __init__(self) -> None:
        """Nothing to open."""

    @property
    def cpus(self) -> Sequence[CPU]:
        """None."""
        return []

    def get_total_energy_consumption(self, index: int) -> CpuDramMeasurement:
        """No package: ZeusCPUNotFoundError."""
        raise ZeusCPUNotFoundError(f"CPU index {index} is out of range: there are no CPU packages")

    def supports_get_dram_energy_consumption(self, index: int) -> bool:
        """No package: ZeusCPUNotFoundError."""
        raise ZeusCPUNotFoundError(f"CPU index {index} is out of range: there are no CPU packages")

    def __len__(self) -> int:
        """0."""
        return 0


for _cls in (CPU, CPUs):
    add_deprecated_aliases(_cls, CPU_ALIASES)
