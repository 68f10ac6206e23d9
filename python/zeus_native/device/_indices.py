"""Checks of the device indices a monitor is given, before any device is read:
the original's exception classes, with a message that names the bad index, the
valid ones and the fix (the original failed later, with a bare IndexError)."""

from __future__ import annotations

import operator


def _as_index(value, word: str, error: type) -> int:
    try:
        if isinstance(value, bool):
            raise TypeError
        return operator.index(value)
    except TypeError:
        raise error(f"{word} index {value!r} is not an integer (pass a list of int indices)") from None


def check_gpu_indices(gpus, indices) -> list[int]:
    """`indices` as ints; ZeusGPUInvalidArgError for one that is not a visible GPU."""
    from zeus_native.device.gpu.common import ZeusGPUInvalidArgError

    count = len(gpus)
    checked = [_as_index(i, "GPU", ZeusGPUInvalidArgError) for i in indices]
    for index in checked:
        if not 0 <= index < count:
            fix = (
                "no GPU is visible; run `python -m zeus_native.show_env`"
                if count == 0
                else f"use an index from 0 to {count - 1} (positions in CUDA_VISIBLE_DEVICES)"
            )
            raise ZeusGPUInvalidArgError(f"GPU index {index} is out of range: {count} GPU(s) are visible ({fix})")
    return checked


def check_cpu_indices(cpus, indices) -> list[int]:
    """`indices` as ints; ZeusCPUInitError when no CPU package can be read,
    ZeusCPUNotFoundError for an index that is not a package."""
    from zeus_native.device.cpu.common import ZeusCPUInitError, ZeusCPUNotFoundError

    checked = [_as_index(i, "CPU", ZeusCPUNotFoundError) for i in indices]
    if checked and cpus.init_error is not None:
        raise ZeusCPUInitError(
            f"CPU indices {checked} were given but no CPU package can be read: {cpus.init_error} "
            "(leave cpu_indices unset, or make RAPL readable: python -m zeus_native.show_env says how)"
        )
    for index in checked:
        if not 0 <= index < len(cpus):
            raise ZeusCPUNotFoundError(
                f"CPU index {index} is out of range: {len(cpus)} CPU package(s) found "
                "(use an index of an intel-rapl:N package zone; python -m zeus_native.show_env lists them)"
            )
    return checked
