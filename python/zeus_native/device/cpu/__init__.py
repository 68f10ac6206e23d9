"""CPU packages with RAPL energy counters (the original's zeus.device.cpu)."""

from __future__ import annotations

from zeus_native import _core
from zeus_native.device import _sets
from zeus_native.device.cpu.common import *  # noqa: F403
from zeus_native.device.cpu.common import ZeusCPUInitError, ZeusCPUNoPermissionError

CPUs = _core.CPUs


def get_cpus() -> _core.CPUs:
    """The CPU packages (RAPL powercap, or zeusd with ZEUSD_SOCK_PATH/ZEUSD_HOST_PORT).

    Raises ZeusCPUNoPermissionError when the counters exist but cannot be read,
    ZeusCPUInitError when there are none; both say how to fix it.
    """
    cpus = _sets.cpus()
    if cpus.init_error is not None:
        if cpus.init_error_code == "no permission":
            raise ZeusCPUNoPermissionError(cpus.init_error)
        raise ZeusCPUInitError(cpus.init_error)
    return cpus
