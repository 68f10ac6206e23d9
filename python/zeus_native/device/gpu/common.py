"""GPUs (the original's zeus.device.gpu.common): the GPU and GPUs interfaces, and one exception per NVML error."""

from __future__ import annotations

import abc
from typing import List, NoReturn, Optional, Sequence, Tuple

from zeus_native.device import _sets
from zeus_native.device.common import GPU_ALIASES, DeprecatedAliasABCMeta, add_deprecated_aliases
from zeus_native.device.exception import ZeusBaseGPUError


class ZeusGPUInitError(ZeusBaseGPUError):
    """NVML/driver error: uninitialized."""


class ZeusGPUInvalidArgError(ZeusBaseGPUError):
    """NVML/driver error: invalid argument."""


class ZeusGPUNotSupportedError(ZeusBaseGPUError):
    """NVML/driver error: not supported."""


class ZeusGPUNoPermissionError(ZeusBaseGPUError):
    """NVML/driver error: no permission."""


class ZeusGPUAlreadyInitializedError(ZeusBaseGPUError):
    """NVML/driver error: already initialized."""


class ZeusGPUNotFoundError(ZeusBaseGPUError):
    """NVML/driver error: not found."""


class ZeusGPUInsufficientSizeError(ZeusBaseGPUError):
    """NVML/driver error: insufficient size."""


class ZeusGPUInsufficientPowerError(ZeusBaseGPUError):
    """NVML/driver error: insufficient power."""


class ZeusGPUDriverNotLoadedError(ZeusBaseGPUError):
    """NVML/driver error: driver not loaded."""


class ZeusGPUTimeoutError(ZeusBaseGPUError):
    """NVML/driver error: timeout."""


class ZeusGPUIRQError(ZeusBaseGPUError):
    """NVML/driver error: interrupt issue."""


class ZeusGPULibraryNotFoundError(ZeusBaseGPUError):
    """NVML/driver error: library not found."""


class ZeusGPUFunctionNotFoundError(ZeusBaseGPUError):
    """NVML/driver error: function not found."""


class ZeusGPUCorruptedInfoROMError(ZeusBaseGPUError):
    """NVML/driver error: corrupted infoROM."""


class ZeusGPULostError(ZeusBaseGPUError):
    """NVML/driver error: GPU is lost."""


class ZeusGPUResetRequiredError(ZeusBaseGPUError):
    """NVML/driver error: reset required."""


class ZeusGPUOperatingSystemError(ZeusBaseGPUError):
    """NVML/driver error: operating system error."""


class ZeusGPULibRMVersionMismatchError(ZeusBaseGPUError):
    """NVML/driver error: library/driver version mismatch."""


class ZeusGPUMemoryError(ZeusBaseGPUError):
    """NVML/driver error: out of memory."""


class ZeusGPUUnknownError(ZeusBaseGPUError):
    """NVML/driver error: unknown error."""


class ZeusGPUHeterogeneousError(ZeusBaseGPUError):
    """The monitored GPUs are not all the same model."""


# Native error code -> class.
GPU_ERRORS: dict[str, type[ZeusBaseGPUError]] = {

    'uninitialized': ZeusGPUInitError,

    'invalid argument': ZeusGPUInvalidArgError,

    'not supported': ZeusGPUNotSupportedError,

    'no permission': ZeusGPUNoPermissionError,

    'already initialized': ZeusGPUAlreadyInitializedError,

    'not found': ZeusGPUNotFoundError,

    'insufficient size': ZeusGPUInsufficientSizeError,

    'insufficient power': ZeusGPUInsufficientPowerError,

    'driver not loaded': ZeusGPUDriverNotLoadedError,

    'timeout': ZeusGPUTimeoutError,

    'interrupt issue': ZeusGPUIRQError,

    'library not found': ZeusGPULibraryNotFoundError,

    'function not found': ZeusGPUFunctionNotFoundError,

    'corrupted infoROM': ZeusGPUCorruptedInfoROMError,

    'GPU is lost': ZeusGPULostError,

    'reset required': ZeusGPUResetRequiredError,

    'operating system error': ZeusGPUOperatingSystemError,

    'library/driver version mismatch': ZeusGPULibRMVersionMismatchError,

    'out of memory': ZeusGPUMemoryError,

    'unknown error': ZeusGPUUnknownError,

    'invalid configuration': ZeusGPUInitError,
    'unavailable': ZeusGPUInitError,
    'no data': ZeusGPUNotSupportedError,
}

__all__ = ['ZeusGPUInitError', 'ZeusGPUInvalidArgError', 'ZeusGPUNotSupportedError', 'ZeusGPUNoPermissionError', 'ZeusGPUAlreadyInitializedError', 'ZeusGPUNotFoundError', 'ZeusGPUInsufficientSizeError', 'ZeusGPUInsufficientPowerError', 'ZeusGPUDriverNotLoadedError', 'ZeusGPUTimeoutError', 'ZeusGPUIRQError', 'ZeusGPULibraryNotFoundError', 'ZeusGPUFunctionNotFoundError', 'ZeusGPUCorruptedInfoROMError', 'ZeusGPULostError', 'ZeusGPUResetRequiredError', 'ZeusGPUOperatingSystemError', 'ZeusGPULibRMVersionMismatchError', 'ZeusGPUMemoryError', 'ZeusGPUUnknownError', 'ZeusGPUHeterogeneousError']


class GPU(abc.ABC, metaclass=DeprecatedAliasABCMeta):
    """One GPU (the original's abstract GPU): NVIDIAGPU and AMDGPU implement it
    over this process's device set; units are the original's (mW, mJ, MHz, °C)."""

    def __init__(self, gpu_index: int) -> None:
        """The GPU at `gpu_index` (a CUDA index)."""
        self.gpu_index = gpu_index

    @property
    @abc.abstractmethod
    def supports_nonblocking_setters(self) -> bool:
        """Whether the setters can return before the change is made (block=False)."""

    @abc.abstractmethod
    def get_name(self) -> str:
        """The GPU's model name."""

    @abc.abstractmethod
    def get_power_management_limit_constraints(self) -> Tuple[int, int]:
        """(min, max) power limit (mW)."""

    @abc.abstractmethod
    def get_power_management_limit(self) -> int:
        """The power limit now (mW)."""

    @abc.abstractmethod
    def set_power_management_limit(self, power_limit_mw: int, block: bool = True) -> None:
        """Set the power limit (mW)."""

    @abc.abstractmethod
    def reset_power_management_limit(self, block: bool = True) -> None:
        """Put back the default power limit."""

    @abc.abstractmethod
    def set_persistence_mode(self, enabled: bool, block: bool = True) -> None:
        """Turn persistence mode on or off."""

    @abc.abstractmethod
    def get_persistence_mode(self) -> bool:
        """Whether persistence mode is on."""

    @abc.abstractmethod
    def get_supported_memory_clocks(self) -> List[int]:
        """Memory clocks it supports (MHz)."""

    @abc.abstractmethod
    def set_memory_locked_clocks(self, min_clock_mhz: int, max_clock_mhz: int, block: bool = True) -> None:
        """Lock the memory clock range (MHz)."""

    @abc.abstractmethod
    def reset_memory_locked_clocks(self, block: bool = True) -> None:
        """Unlock the memory clocks."""

    @abc.abstractmethod
    def get_supported_graphics_clocks(self, memory_clock_mhz: Optional[int] = None) -> List[int]:
        """Graphics clocks it supports at a memory clock (MHz)."""

    @abc.abstractmethod
    def set_gpu_locked_clocks(self, min_clock_mhz: int, max_clock_mhz: int, block: bool = True) -> None:
        """Lock the graphics clock range (MHz)."""

    @abc.abstractmethod
    def reset_gpu_locked_clocks(self, block: bool = True) -> None:
        """Unlock the graphics clocks."""

    @abc.abstractmethod
    def get_average_power_usage(self) -> int:
        """Average power over the last second (mW)."""

    @abc.abstractmethod
    def get_instant_power_usage(self) -> int:
        """Instant power (mW)."""

    @abc.abstractmethod
    def get_average_memory_power_usage(self) -> int:
        """Average memory power (mW)."""

    @abc.abstractmethod
    def supports_get_total_energy_consumption(self) -> bool:
        """Whether it has an energy counter."""

    @abc.abstractmethod
    def get_total_energy_consumption(self) -> int:
        """Its energy counter (mJ)."""

    @abc.abstractmethod
    def get_gpu_temperature(self) -> int:
        """Its temperature (°C)."""


class _DeviceSetGPU(GPU):
    """A GPU of this process's device set (native NVML, AMD SMI, zeusd or the simulator)."""

    @property
    def supports_nonblocking_setters(self) -> bool:
        """False: every setter returns once the change is made."""
        return False

    def get_name(self) -> str:
        """The GPU's model name."""
        return _sets.gpus().get_name(self.gpu_index)

    def get_power_management_limit_constraints(self) -> Tuple[int, int]:
        """(min, max) power limit (mW)."""
        return _sets.gpus().get_power_management_limit_constraints(self.gpu_index)

    def get_power_management_limit(self) -> int:
        """The power limit now (mW)."""
        return _sets.gpus().get_power_management_limit(self.gpu_index)

    def set_power_management_limit(self, power_limit_mw: int, block: bool = True) -> None:
        """Set the power limit (mW)."""
        return _sets.gpus().set_power_management_limit(self.gpu_index, power_limit_mw, block)

    def reset_power_management_limit(self, block: bool = True) -> None:
        """Put back the default power limit."""
        return _sets.gpus().reset_power_management_limit(self.gpu_index, block)

    def set_persistence_mode(self, enabled: bool, block: bool = True) -> None:
        """Turn persistence mode on or off."""
        return _sets.gpus().set_persistence_mode(self.gpu_index, enabled, block)

    def get_persistence_mode(self) -> bool:
        """Whether persistence mode is on."""
        return _sets.gpus().get_persistence_mode(self.gpu_index)

    def get_supported_memory_clocks(self) -> List[int]:
        """Memory clocks it supports (MHz)."""
        return _sets.gpus().get_supported_memory_clocks(self.gpu_index)

    def set_memory_locked_clocks(self, min_clock_mhz: int, max_clock_mhz: int, block: bool = True) -> None:
        """Lock the memory clock range (MHz)."""
        return _sets.gpus().set_memory_locked_clocks(self.gpu_index, min_clock_mhz, max_clock_mhz, block)

    def reset_memory_locked_clocks(self, block: bool = True) -> None:
        """Unlock the memory clocks."""
        return _sets.gpus().reset_memory_locked_clocks(self.gpu_index, block)

    def get_supported_graphics_clocks(self, memory_clock_mhz: Optional[int] = None) -> List[int]:
        """Graphics clocks it supports at a memory clock (MHz)."""
        return _sets.gpus().get_supported_graphics_clocks(self.gpu_index, memory_clock_mhz)

    def set_gpu_locked_clocks(self, min_clock_mhz: int, max_clock_mhz: int, block: bool = True) -> None:
        """Lock the graphics clock range (MHz)."""
        return _sets.gpus().set_gpu_locked_clocks(self.gpu_index, min_clock_mhz, max_clock_mhz, block)

    def reset_gpu_locked_clocks(self, block: bool = True) -> None:
        """Unlock the graphics clocks."""
        return _sets.gpus().reset_gpu_locked_clocks(self.gpu_index, block)

    def get_average_power_usage(self) -> int:
        """Average power over the last second (mW)."""
        return _sets.gpus().get_average_power_usage(self.gpu_index)

    def get_instant_power_usage(self) -> int:
        """Instant power (mW)."""
        return _sets.gpus().get_instant_power_usage(self.gpu_index)

    def get_average_memory_power_usage(self) -> int:
        """Average memory power (mW)."""
        return _sets.gpus().get_average_memory_power_usage(self.gpu_index)

    def supports_get_total_energy_consumption(self) -> bool:
        """Whether it has an energy counter."""
        return _sets.gpus().supports_get_total_energy_consumption(self.gpu_index)

    def get_total_energy_consumption(self) -> int:
        """Its energy counter (mJ)."""
        return _sets.gpus().get_total_energy_consumption(self.gpu_index)

    def get_gpu_temperature(self) -> int:
        """Its temperature (°C)."""
        return _sets.gpus().get_gpu_temperature(self.gpu_index)


class GPUs(abc.ABC, metaclass=DeprecatedAliasABCMeta):
    """The visible GPUs (the original's abstract GPUs). get_gpus() returns this
    process's set (a native object registered as a GPUs); `gpus` lists its GPU objects."""

    @abc.abstractmethod
    def __init__(self, ensure_homogeneous: bool = False) -> None:
        """Open the GPUs (ZeusGPUHeterogeneousError when ensure_homogeneous and they differ)."""

    @property
    @abc.abstractmethod
    def gpus(self) -> Sequence[GPU]:
        """One GPU object per visible GPU."""

    @abc.abstractmethod
    def __len__(self) -> int:
        """How many GPUs are visible."""

    @abc.abstractmethod
    def get_name(self, gpu_index: int) -> str:
        """The GPU's model name."""

    @abc.abstractmethod
    def get_power_management_limit_constraints(self, gpu_index: int) -> Tuple[int, int]:
        """(min, max) power limit (mW)."""

    @abc.abstractmethod
    def get_power_management_limit(self, gpu_index: int) -> int:
        """The power limit now (mW)."""

    @abc.abstractmethod
    def set_power_management_limit(self, gpu_index: int, power_limit_mw: int, block: bool = True) -> None:
        """Set the power limit (mW)."""

    @abc.abstractmethod
    def reset_power_management_limit(self, gpu_index: int, block: bool = True) -> None:
        """Put back the default power limit."""

    @abc.abstractmethod
    def set_persistence_mode(self, gpu_index: int, enabled: bool, block: bool = True) -> None:
        """Turn persistence mode on or off."""

    @abc.abstractmethod
    def get_persistence_mode(self, gpu_index: int) -> bool:
        """Whether persistence mode is on."""

    @abc.abstractmethod
    def get_supported_memory_clocks(self, gpu_index: int) -> List[int]:
        """Memory clocks it supports (MHz)."""

    @abc.abstractmethod
    def set_memory_locked_clocks(self, gpu_index: int, min_clock_mhz: int, max_clock_mhz: int, block: bool = True) -> None:
        """Lock the memory clock range (MHz)."""

    @abc.abstractmethod
    def reset_memory_locked_clocks(self, gpu_index: int, block: bool = True) -> None:
        """Unlock the memory clocks."""

    @abc.abstractmethod
    def get_supported_graphics_clocks(self, gpu_index: int, memory_clock_mhz: Optional[int] = None) -> List[int]:
        """Graphics clocks it supports at a memory clock (MHz)."""

    @abc.abstractmethod
    def set_gpu_locked_clocks(self, gpu_index: int, min_clock_mhz: int, max_clock_mhz: int, block: bool = True) -> None:
        """Lock the graphics clock range (MHz)."""

    @abc.abstractmethod
    def reset_gpu_locked_clocks(self, gpu_index: int, block: bool = True) -> None:
        """Unlock the graphics clocks."""

    @abc.abstractmethod
    def get_average_power_usage(self, gpu_index: int) -> int:
        """Average power over the last second (mW)."""

    @abc.abstractmethod
    def get_instant_power_usage(self, gpu_index: int) -> int:
        """Instant power (mW)."""

    @abc.abstractmethod
    def get_average_memory_power_usage(self, gpu_index: int) -> int:
        """Average memory power (mW)."""

    @abc.abstractmethod
    def supports_get_total_energy_consumption(self, gpu_index: int) -> bool:
        """Whether it has an energy counter."""

    @abc.abstractmethod
    def get_total_energy_consumption(self, gpu_index: int) -> int:
        """Its energy counter (mJ)."""

    @abc.abstractmethod
    def get_gpu_temperature(self, gpu_index: int) -> int:
        """Its temperature (°C)."""


class EmptyGPUs(GPUs):
    """No GPUs (the original's EmptyGPUs): every per-GPU call raises ZeusGPUInvalidArgError."""

    def __init__(self, ensure_homogeneous: bool = False) -> None:
        """No GPUs to open."""

    @property
    def gpus(self) -> Sequence[GPU]:
        """None."""
        return []

    def __len__(self) -> int:
        """0."""
        return 0

    def _none(self, gpu_index: int) -> NoReturn:
        raise ZeusGPUInvalidArgError(f"GPU index {gpu_index} is out of range: there are no GPUs")

    def get_name(self, gpu_index: int) -> str:
        """No GPU: ZeusGPUInvalidArgError."""
        self._none(gpu_index)

    def get_power_management_limit_constraints(self, gpu_index: int) -> Tuple[int, int]:
        """No GPU: ZeusGPUInvalidArgError."""
        self._none(gpu_index)

    def get_power_management_limit(self, gpu_index: int) -> int:
        """No GPU: ZeusGPUInvalidArgError."""
        self._none(gpu_index)

    def set_power_management_limit(self, gpu_index: int, power_limit_mw: int, block: bool = True) -> None:
        """No GPU: ZeusGPUInvalidArgError."""
        self._none(gpu_index)

    def reset_power_management_limit(self, gpu_index: int, block: bool = True) -> None:
        """No GPU: ZeusGPUInvalidArgError."""
        self._none(gpu_index)

    def set_persistence_mode(self, gpu_index: int, enabled: bool, block: bool = True) -> None:
        """No GPU: ZeusGPUInvalidArgError."""
        self._none(gpu_index)

    def get_persistence_mode(self, gpu_index: int) -> bool:
        """No GPU: ZeusGPUInvalidArgError."""
        self._none(gpu_index)

    def get_supported_memory_clocks(self, gpu_index: int) -> List[int]:
        """No GPU: ZeusGPUInvalidArgError."""
        self._none(gpu_index)

    def set_memory_locked_clocks(self, gpu_index: int, min_clock_mhz: int, max_clock_mhz: int, block: bool = True) -> None:
        """No GPU: ZeusGPUInvalidArgError."""
        self._none(gpu_index)

    def reset_memory_locked_clocks(self, gpu_index: int, block: bool = True) -> None:
        """No GPU: ZeusGPUInvalidArgError."""
        self._none(gpu_index)

    def get_supported_graphics_clocks(self, gpu_index: int, memory_clock_mhz: Optional[int] = None) -> List[int]:
        """No GPU: ZeusGPUInvalidArgError."""
        self._none(gpu_index)

    def set_gpu_locked_clocks(self, gpu_index: int, min_clock_mhz: int, max_clock_mhz: int, block: bool = True) -> None:
        """No GPU: ZeusGPUInvalidArgError."""
        self._none(gpu_index)

    def reset_gpu_locked_clocks(self, gpu_index: int, block: bool = True) -> None:
        """No GPU: ZeusGPUInvalidArgError."""
        self._none(gpu_index)

    def get_average_power_usage(self, gpu_index: int) -> int:
        """No GPU: ZeusGPUInvalidArgError."""
        self._none(gpu_index)

    def get_instant_power_usage(self, gpu_index: int) -> int:
        """No GPU: ZeusGPUInvalidArgError."""
        self._none(gpu_index)

    def get_average_memory_power_usage(self, gpu_index: int) -> int:
        """No GPU: ZeusGPUInvalidArgError."""
        self._none(gpu_index)

    def supports_get_total_energy_consumption(self, gpu_index: int) -> bool:
        """No GPU: ZeusGPUInvalidArgError."""
        self._none(gpu_index)

    def get_total_energy_consumption(self, gpu_index: int) -> int:
        """No GPU: ZeusGPUInvalidArgError."""
        self._none(gpu_index)

    def get_gpu_temperature(self, gpu_index: int) -> int:
        """No GPU: ZeusGPUInvalidArgError."""
        self._none(gpu_index)


for _cls in (GPU, GPUs):
    add_deprecated_aliases(_cls, GPU_ALIASES)
