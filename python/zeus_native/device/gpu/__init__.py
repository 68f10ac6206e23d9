"""GPUs (the original's zeus.device.gpu): get_gpus() and the GPU classes."""

from __future__ import annotations

from typing import Any, List

from zeus_native import _core
from zeus_native.device import _sets
from zeus_native.device.common import (  # noqa: F401 (re-exported, as the original's zeus.device.gpu does)
    GPU_ALIASES,
    DeprecatedAliasABCMeta,
    add_deprecated_aliases,
    deprecated_alias,
)
from zeus_native.device.exception import ZeusBaseGPUError  # noqa: F401
from zeus_native.device.gpu.amd import AMDGPU, AMDGPUs, amdsmi_is_available
from zeus_native.device.gpu.common import *  # noqa: F403
from zeus_native.device.gpu.common import EmptyGPUs, GPU, GPUs, ZeusGPUHeterogeneousError, ZeusGPUInitError  # noqa: F401
from zeus_native.device.gpu.nvidia import NVIDIAGPU, NVIDIAGPUs, nvml_is_available


def _gpu_objects(self: Any) -> List[GPU]:
    """One GPU object per visible GPU (NVIDIAGPU or AMDGPU), as the original's GPUs.gpus."""
    cls = AMDGPU if isinstance(self, AMDGPUs) else NVIDIAGPU
    return [cls(i) for i in range(len(self))]


# The native set is the process's GPUs object: give it the original's `gpus`
# and the deprecated camelCase aliases.
_core.GPUs.gpus = property(_gpu_objects)
add_deprecated_aliases(_core.GPUs, GPU_ALIASES)


def get_gpus(ensure_homogeneous: bool = False) -> GPUs:
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
                f"The GPUs are not all the same model ({', '.join(sorted(names))}); "
                "select one model with CUDA_VISIBLE_DEVICES"
            )
    return gpus  # type: ignore[return-value]  (the native set, registered as a GPUs)


