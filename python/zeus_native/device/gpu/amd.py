"""AMD GPUs (the original's zeus.device.gpu.amd), through the native AMD SMI backend."""

from __future__ import annotations

from typing import Any, Sequence

from zeus_native.device import _sets
from zeus_native.device.gpu._backends import BackendMeta, open_set
from zeus_native.device.gpu.common import GPUs, _DeviceSetGPU


def amdsmi_is_available() -> bool:
    """Whether AMD SMI opened at least one GPU."""
    gpus = _sets.gpus()
    return gpus.init_error is None and gpus.backend_info["backend"] in AMDGPUs.backends


class AMDGPU(_DeviceSetGPU):
    """One AMD GPU (the original's AMDGPU), through the native AMD SMI backend."""


class AMDGPUs(GPUs, metaclass=BackendMeta):
    """The process's AMD GPUs: AMDGPUs() is get_gpus() when they are AMD's."""

    backends = ("amdsmi",)

    def __new__(cls, ensure_homogeneous: bool = False) -> Any:
        """The process's GPU set (ZeusGPUInitError when it is not AMD's)."""
        return open_set(cls, ensure_homogeneous)

    def __init__(self, ensure_homogeneous: bool = False) -> None:
        """See __new__."""

    @property
    def gpus(self) -> Sequence[AMDGPU]:
        """One AMDGPU per visible GPU."""
        return [AMDGPU(i) for i in range(len(_sets.gpus()))]
