"""The board's system-on-chip (the original's zeus.device.soc)."""

from __future__ import annotations

from zeus_native.device.soc.common import *  # noqa: F403
from zeus_native.device.soc.common import SoC, ZeusSoCInitError
from zeus_native.device.soc.jetson import Jetson, ZeusJetsonInitError, jetson_is_available  # noqa: F401


def get_soc() -> SoC:
    """The SoC (NVIDIA Jetson rails) as a Jetson; ZeusSoCInitError with the reason when there is none."""
    if not jetson_is_available():
        from zeus_native.device import _sets

        raise ZeusSoCInitError(_sets.soc().init_error)
    return Jetson()
