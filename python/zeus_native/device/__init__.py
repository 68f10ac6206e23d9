"""Devices (the original's zeus.device): get_gpus(), get_cpus(), get_soc()."""

from zeus_native.device.cpu import get_cpus
from zeus_native.device.gpu import get_gpus
from zeus_native.device.soc import get_soc

__all__ = ["get_gpus", "get_cpus", "get_soc"]
