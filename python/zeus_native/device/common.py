"""What the device modules share (the original's zeus.device.common): the
SYS_ADMIN check and the deprecated camelCase aliases of the device methods."""

from __future__ import annotations

import abc
import functools
import warnings
from typing import Any, Callable, Dict


@functools.lru_cache(maxsize=1)
def has_sys_admin() -> bool:
    """Whether this process has the SYS_ADMIN capability (needed to change GPU settings)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("CapEff"):
                    return bool(int(line.split()[1], 16) & (1 << 21))
    except OSError:
        pass
    return False


def deprecated_alias(old_name: str) -> Callable[[Callable], Callable]:
    """Mark a snake_case method to get the camelCase alias `old_name` (with
    DeprecatedAliasABCMeta as the class's metaclass), which warns once and calls it."""

    def decorator(func: Callable) -> Callable:
        func._deprecated_alias = old_name  # type: ignore[attr-defined]
        return func

    return decorator


def _deprecated_method(old_name: str, new_name: str) -> Callable:
    warned = [False]

    def deprecated_method(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not warned[0]:
            warnings.warn(
                f"'{old_name}' is deprecated and will be removed in a future version. Use '{new_name}' instead.",
                DeprecationWarning,
                stacklevel=2,
            )
            warned[0] = True
        return getattr(self, new_name)(*args, **kwargs)

    deprecated_method.__name__ = old_name
    deprecated_method.__doc__ = f"Deprecated alias of {new_name} (warns once)."
    return deprecated_method


class DeprecatedAliasABCMeta(abc.ABCMeta):
    """ABCMeta that adds the camelCase alias of every method marked with deprecated_alias."""

    def __new__(mcs, name: str, bases: tuple, namespace: Dict[str, Any]) -> "DeprecatedAliasABCMeta":
        """Create the class and its deprecated aliases."""
        cls = super().__new__(mcs, name, bases, namespace)
        add_deprecated_aliases(cls)
        return cls


def add_deprecated_aliases(cls: Any, aliases: Dict[str, str] | None = None) -> None:
    """Give `cls` the camelCase aliases of its marked methods, or of `aliases` ({new: old})."""
    pairs = dict(aliases or {})
    for attr_name in dir(cls):
        if attr_name.startswith("_") or attr_name in pairs:
            continue
        old = getattr(getattr(cls, attr_name, None), "_deprecated_alias", None)
        if old is not None:
            pairs[attr_name] = old
    for new_name, old_name in pairs.items():
        setattr(cls, old_name, _deprecated_method(old_name, new_name))


# snake_case -> camelCase, the original's aliases of the GPU, CPU and SoC methods.
GPU_ALIASES = {
    "get_name": "getName",
    "get_power_management_limit_constraints": "getPowerManagementLimitConstraints",
    "set_power_management_limit": "setPowerManagementLimit",
    "reset_power_management_limit": "resetPowerManagementLimit",
    "set_persistence_mode": "setPersistenceMode",
    "get_supported_memory_clocks": "getSupportedMemoryClocks",
    "set_memory_locked_clocks": "setMemoryLockedClocks",
    "reset_memory_locked_clocks": "resetMemoryLockedClocks",
    "get_supported_graphics_clocks": "getSupportedGraphicsClocks",
    "set_gpu_locked_clocks": "setGpuLockedClocks",
    "reset_gpu_locked_clocks": "resetGpuLockedClocks",
    "get_average_power_usage": "getAveragePowerUsage",
    "get_instant_power_usage": "getInstantPowerUsage",
    "get_average_memory_power_usage": "getAverageMemoryPowerUsage",
    "supports_get_total_energy_consumption": "supportsGetTotalEnergyConsumption",
    "get_total_energy_consumption": "getTotalEnergyConsumption",
    "get_gpu_temperature": "getGpuTemperature",
}
CPU_ALIASES = {
    "get_total_energy_consumption": "getTotalEnergyConsumption",
    "supports_get_dram_energy_consumption": "supportsGetDramEnergyConsumption",
}
SOC_ALIASES = {
    "get_available_metrics": "getAvailableMetrics",
    "get_total_energy_consumption": "getTotalEnergyConsumption",
    "begin_window": "beginWindow",
    "end_window": "endWindow",
}
