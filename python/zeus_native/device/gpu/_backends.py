"""The vendor classes over this process's native GPU set (internal): NVIDIAGPUs()
and AMDGPUs() are the set when its backend is theirs, and isinstance says which."""

from __future__ import annotations

from typing import Any

from zeus_native import _core
from zeus_native.device.common import DeprecatedAliasABCMeta
from zeus_native.device.gpu.common import GPUs, ZeusGPUInitError


class BackendMeta(DeprecatedAliasABCMeta):
    """isinstance(gpus, NVIDIAGPUs) holds for the native set whose backend is NVIDIA's."""

    backends: tuple = ()

    def __instancecheck__(cls, obj: Any) -> bool:
        if isinstance(obj, _core.GPUs):
            return not cls.backends or obj.backend_info["backend"] in cls.backends
        return super().__instancecheck__(obj)


def open_set(cls: type, ensure_homogeneous: bool) -> Any:
    """The process's GPU set, checked to be `cls`'s vendor."""
    from zeus_native.device.gpu import get_gpus

    gpus = get_gpus(ensure_homogeneous)
    if not isinstance(gpus, cls):
        raise ZeusGPUInitError(
            f"{cls.__name__} asked for, but this process's GPUs are reached through "
            f"{gpus.backend_info['backend']!r}; use get_gpus(), which opens whichever vendor's GPUs are present")
    return gpus


GPUs.register(_core.GPUs)
