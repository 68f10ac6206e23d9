"""NVIDIA GPUs (the original's zeus.device.gpu.nvidia), through the native NVML backend."""

from __future__ import annotations

from typing import Any, Sequence

from zeus_native.device import _sets
from zeus_native.device.gpu._backends import BackendMeta, open_set
from zeus_native.device.gpu.common import GPUs, _DeviceSetGPU


def nvml_is_available() -> bool:
    """Whether NVML (or the simulator with ZEUS_SIMULATE=1) opened at least one GPU."""
    gpus = _sets.gpus()
    return gpus.init_error is None and gpus.backend_info["backend"] in NVIDIAGPUs.backends


class NVIDIAGPU(_DeviceSetGPU):
    """One NVIDIA GPU (the original's NVIDIAGPU), through the native NVML backend."""


class ZeusdNVIDIAGPU(NVIDIAGPU):
    """An NVIDIA GPU whose settings go through zeusd (the original's ZeusdNVIDIAGPU). The native
    set routes settings through zeusd when ZEUSD_SOCK_PATH / ZEUSD_HOST_PORT is set; `client`
    is kept as an attribute for code that reads it."""

    def __init__(self, gpu_index: int, client: Any = None) -> None:
        """The GPU at `gpu_index`; `client`: the original's ZeusdClient, if any."""
        super().__init__(gpu_index)
        self._client = client


class NVIDIAGPUs(GPUs, metaclass=BackendMeta):
    """The process's NVIDIA GPUs: NVIDIAGPUs() is get_gpus() when they are NVIDIA's."""

    backends = ("nvml", "simulator", "zeusd")

    def __new__(cls, ensure_homogeneous: bool = False) -> Any:
        """The process's GPU set (ZeusGPUInitError when it is not NVIDIA's)."""
        return open_set(cls, ensure_homogeneous)

    def __init__(self, ensure_homogeneous: bool = False) -> None:
        """See __new__."""

    @property
    def gpus(self) -> Sequence[NVIDIAGPU]:
        """One NVIDIAGPU per visible GPU."""
        return [NVIDIAGPU(i) for i in range(len(_sets.gpus()))]
