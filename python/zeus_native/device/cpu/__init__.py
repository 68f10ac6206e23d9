"""CPU packages with RAPL energy counters (the original's zeus.device.cpu)."""

from __future__ import annotations

import os
from typing import Any, List, Union

from zeus_native import _core
from zeus_native.device import _sets
from zeus_native.device.common import CPU_ALIASES, add_deprecated_aliases
from zeus_native.device.cpu.common import *  # noqa: F403
from zeus_native.device.cpu.common import (
    CPU,
    CPUs,
    CpuDramMeasurement,
    ZeusCPUInitError,
    ZeusCPUNoPermissionError,
)
from zeus_native.device.cpu.rapl import RAPLCPU, RAPLCPUs, rapl_is_available  # noqa: F401

_native_total = _core.CPUs.get_total_energy_consumption
_native_dram = _core.CPUs.supports_get_dram_energy_consumption


def _total(self: Any, index: int) -> CpuDramMeasurement:
    """Package `index`'s energy counters since the set was opened (mJ), as a CpuDramMeasurement."""
    cpu_mj, dram_mj = _native_total(self, index)
    return CpuDramMeasurement(cpu_mj, dram_mj)


def _supports_dram(self: Any, index: int) -> bool:
    """Whether package `index`'s DRAM energy can be read."""
    return bool(_native_dram(self, index))


def _cpu_objects(self: Any) -> List[CPU]:
    """One RAPLCPU per package, as the original's CPUs.cpus."""
    return [RAPLCPU(i) for i in range(len(self))]


# The native set is the process's CPUs object: the original's argument names,
# result type, `cpus` and deprecated camelCase aliases.
_core.CPUs.get_total_energy_consumption = _total
_core.CPUs.supports_get_dram_energy_consumption = _supports_dram
_core.CPUs.cpus = property(_cpu_objects)
add_deprecated_aliases(_core.CPUs, CPU_ALIASES)
CPUs.register(_core.CPUs)


def get_current_cpu_index(pid: Union[int, str] = "current") -> int:
    """The CPU package (socket) process `pid` ("current": this one) runs on now.

    Pin the process (taskset) for this to stay true while you measure.
    """
    if pid == "current":
        pid = os.getpid()
    try:
        with open(f"/proc/{pid}/stat") as stat_file:
            # The command name (field 2) may hold spaces: count from after its ')'.
            core = int(stat_file.read().rsplit(")", 1)[1].split()[36])
        with open(f"/sys/devices/system/cpu/cpu{core}/topology/physical_package_id") as package:
            return int(package.read().strip())
    except (OSError, ValueError, IndexError) as e:
        raise ZeusCPUInitError(f"Cannot tell which CPU package process {pid} runs on ({e}); "
                               "pass the CPU index yourself") from e


def get_cpus() -> CPUs:
    """The CPU packages (RAPL powercap, or zeusd with ZEUSD_SOCK_PATH/ZEUSD_HOST_PORT).

    Raises ZeusCPUNoPermissionError when the counters exist but cannot be read,
    ZeusCPUInitError when there are none; both say how to fix it.
    """
    cpus = _sets.cpus()
    if cpus.init_error is not None:
        if cpus.init_error_code == "no permission":
            raise ZeusCPUNoPermissionError(cpus.init_error)
        raise ZeusCPUInitError(cpus.init_error)
    return cpus  # type: ignore[return-value]  (the native set, registered as a CPUs)
