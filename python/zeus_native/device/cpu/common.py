"""CPU (RAPL) exceptions (the original's zeus.device.cpu.common and rapl)."""

from __future__ import annotations

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
