"""AMD GPUs (the original's zeus.device.gpu.amd), through the native AMD SMI backend."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from zeus_native.device import _sets
from zeus_native.device.gpu._backends import BackendMeta, open_set
from zeus_native.device.gpu.common import GPUs, _DeviceSetGPU


class MockAMDSMI:
    """What `amdsmi` is when AMD's Python package cannot be imported (as in the original)."""

    def __getattr__(self, name: str) -> Any:
        """RuntimeError: nothing here may call amdsmi without it."""
        raise RuntimeError(
            f"amdsmi is not available and amdsmi.{name} cannot be called: install ROCm's amdsmi package. "
            "zeus_native itself reads AMD GPUs through its native AMD SMI backend (get_gpus(), AMDGPUs())."
        )


if TYPE_CHECKING:
    amdsmi: Any  # AMD's module or a MockAMDSMI (type checkers see no module __getattr__, so typos stay errors)
else:

    def __getattr__(name: str) -> Any:
        """`amdsmi`: AMD's module, imported on first use (importing zeus_native stays fast), or a MockAMDSMI."""
        if name != "amdsmi":
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        import contextlib

        try:
            with contextlib.redirect_stdout(None):  # amdsmi prints when libamd_smi.so is missing
                import amdsmi as module
        except Exception:  # noqa: BLE001 (OSError, AttributeError, KeyError as well as ImportError, as the original)
            module = MockAMDSMI()
        globals()["amdsmi"] = module
        return module


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
