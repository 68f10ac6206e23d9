"""Maps a native error (code, text, family) to the original Zeus's exception class."""

from __future__ import annotations


import re


def sentence(text: str) -> str:
    """The message as the original's read: a capital first letter ("Measurement window 'x'
    does not exist"), unless it starts with a name (sync_execution_with=..., nvmlInit)."""
    first = re.match(r"[a-z]+(?=[\s,:;.]|$)", text)
    return text[0].upper() + text[1:] if first else text


def native_error(code: str, text: str, family: str) -> Exception:
    """The exception instance the native core raises for an error (internal)."""
    text = sentence(text)
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
