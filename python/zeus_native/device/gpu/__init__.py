"""GPUs (the original's zeus.device.gpu)."""

from __future__ import annotations

from zeus_native import _core
from zeus_native.device import _sets
from zeus_native.device.gpu.common import *  # noqa: F403
from zeus_native.device.gpu.common import ZeusGPUHeterogeneousError, ZeusGPUInitError

GPUs = _core.GPUs


def get_gpus(ensure_homogeneous: bool = False) -> _core.GPUs:
    """The visible GPUs (NVML, AMD SMI or the simulator with ZEUS_SIMULATE=1).

    Raises ZeusGPUInitError, with the reason and the fix, when none can be opened.
    With ensure_homogeneous=True, raises ZeusGPUHeterogeneousError when the GPUs
    are not all the same model (checked on every call, unlike the original).
    """
    gpus = _sets.gpus()
    if gpus.init_error is not None:
        raise ZeusGPUInitError(gpus.init_error)
    if ensure_homogeneous:
        names = {gpus.get_name(i) for i in range(len(gpus))}
        if len(names) > 1:
            raise ZeusGPUHeterogeneousError(
                f"the GPUs are not all the same model ({', '.join(sorted(names))}); "
                "select one model with CUDA_VISIBLE_DEVICES"
            )
    return gpus
