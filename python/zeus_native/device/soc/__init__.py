"""The board's system-on-chip (the original's zeus.device.soc)."""

from __future__ import annotations

from zeus_native import _core
from zeus_native.device import _sets
from zeus_native.device.soc.common import *  # noqa: F403
from zeus_native.device.soc.common import ZeusSoCInitError

SoC = _core.SoC


def get_soc() -> _core.SoC:
    """The SoC (NVIDIA Jetson rails); ZeusSoCInitError with the reason when there is none."""
    soc = _sets.soc()
    if soc.init_error is not None:
        raise ZeusSoCInitError(soc.init_error)
    return soc
