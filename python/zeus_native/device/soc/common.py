"""SoC exceptions (the original's zeus.device.soc)."""

from __future__ import annotations

from zeus_native.device.exception import ZeusBaseSoCError


class ZeusSoCInitError(ZeusBaseSoCError):
    """No SoC energy source could be opened."""


class ZeusJetsonInitError(ZeusSoCInitError):
    """A Jetson was found but its rails could not be opened."""


class ZeusAppleInitError(ZeusSoCInitError):
    """Apple silicon monitoring is not available (not built in zeus_native)."""
