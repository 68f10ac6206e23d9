"""Maps a native error (code, text, family) to the original Zeus's exception class."""

from __future__ import annotations


def native_error(code: str, text: str, family: str) -> Exception:
    """The exception instance the native core raises for an error (internal)."""
    from zeus_native.device import exception as base
    from zeus_native.device.cpu import common as cpu
    from zeus_native.device.gpu import common as gpu
    from zeus_native.device.soc import common as soc

    if family == "value" and code in ("invalid state", "not found", "invalid argument", "no data"):
        return ValueError(text)
    if family in ("gpu", "value"):
        return gpu.GPU_ERRORS.get(code, gpu.ZeusGPUUnknownError)(text)
    if family == "cpu":
        if code == "no permission":
            return cpu.ZeusCPUNoPermissionError(text)
        if code == "not found":
            return cpu.ZeusCPUNotFoundError(text)
        return cpu.ZeusCPUInitError(text)
    if family == "soc":
        return soc.ZeusSoCInitError(text)
    del base
    return RuntimeError(text)
