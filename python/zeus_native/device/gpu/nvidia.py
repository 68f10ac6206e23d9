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
    """An NVIDIA GPU whose settings go through zeusd (the original's ZeusdNVIDIAGPU): with
    `client` (a ZeusdClient, ours or the original's) through that daemon, by the GPU's NVML index,
    once require_capabilities found gpu-read and gpu-control there; without, the process's set
    routes them (ZEUSD_SOCK_PATH / ZEUSD_HOST_PORT). Readings stay local either way."""

    def __init__(self, gpu_index: int, client: Any = None) -> None:
        """The GPU at `gpu_index`; `client`: a ZeusdClient, or None for the process's zeusd."""
        super().__init__(gpu_index)
        self._client = client
        if client is not None:
            from zeus_native.utils.zeusd import require_capabilities

            require_capabilities(client, read_gpu=True, control_gpu=True)
            self._daemon_ids = [_sets.gpus().get_physical_index(gpu_index)]

    @property
    def supports_nonblocking_setters(self) -> bool:
        """True with a client (the daemon may answer before the change is made)."""
        return self._client is not None

    def set_power_management_limit(self, power_limit_mw: int, block: bool = True) -> None:
        """Set the power limit (mW), unless it is that already."""
        if self._client is None:
            return super().set_power_management_limit(power_limit_mw, block)
        if self.get_power_management_limit() != power_limit_mw:
            self._client.set_power_limit(self._daemon_ids, power_limit_mw, block)

    def reset_power_management_limit(self, block: bool = True) -> None:
        """Put back the default power limit."""
        if self._client is None:
            return super().reset_power_management_limit(block)
        self.set_power_management_limit(_sets.gpus().get_power_management_default_limit(self.gpu_index), block)

    def set_persistence_mode(self, enabled: bool, block: bool = True) -> None:
        """Turn persistence mode on or off."""
        if self._client is None:
            return super().set_persistence_mode(enabled, block)
        self._client.set_persistence_mode(self._daemon_ids, enabled, block)

    def get_persistence_mode(self) -> bool:
        """Whether persistence mode is on (the daemon's answer, with a client)."""
        if self._client is None:
            return super().get_persistence_mode()
        return self._client.get_persistence_mode(self._daemon_ids)[self._daemon_ids[0]]

    def set_memory_locked_clocks(self, min_clock_mhz: int, max_clock_mhz: int, block: bool = True) -> None:
        """Lock the memory clock range (MHz)."""
        if self._client is None:
            return super().set_memory_locked_clocks(min_clock_mhz, max_clock_mhz, block)
        self._client.set_mem_locked_clocks(self._daemon_ids, min_clock_mhz, max_clock_mhz, block)

    def reset_memory_locked_clocks(self, block: bool = True) -> None:
        """Unlock the memory clocks."""
        if self._client is None:
            return super().reset_memory_locked_clocks(block)
        self._client.reset_mem_locked_clocks(self._daemon_ids, block)

    def set_gpu_locked_clocks(self, min_clock_mhz: int, max_clock_mhz: int, block: bool = True) -> None:
        """Lock the graphics clock range (MHz)."""
        if self._client is None:
            return super().set_gpu_locked_clocks(min_clock_mhz, max_clock_mhz, block)
        self._client.set_gpu_locked_clocks(self._daemon_ids, min_clock_mhz, max_clock_mhz, block)

    def reset_gpu_locked_clocks(self, block: bool = True) -> None:
        """Unlock the graphics clocks."""
        if self._client is None:
            return super().reset_gpu_locked_clocks(block)
        self._client.reset_gpu_locked_clocks(self._daemon_ids, block)


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
