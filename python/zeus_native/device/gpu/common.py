"""GPU exceptions (the original's zeus.device.gpu.common), one per NVML error."""

from __future__ import annotations

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
