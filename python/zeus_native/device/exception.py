"""Base device exceptions (the original's zeus.device.exception)."""

from __future__ import annotations

from zeus_native.exception import ZeusBaseError


class ZeusBaseGPUError(ZeusBaseError):
    """Base of GPU errors."""


class ZeusBaseCPUError(ZeusBaseError):
    """Base of CPU errors."""


class ZeusBaseSoCError(ZeusBaseError):
    """Base of SoC errors."""


class ZeusdError(ZeusBaseGPUError):
    """An error reported by or about the zeusd daemon."""
