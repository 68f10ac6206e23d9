"""Planted type errors: mypy and pyright must report each marked line (test_typing.py).

A checker that passes this file does not read the package's types at all.
"""

from __future__ import annotations

from zeus_native.monitor import PowerMonitor, ZeusMonitor
from zeus_native.optimizer import GlobalPowerLimitOptimizer
from zeus_native.utils.zeusd import ZeusdClient, ZeusdConfig, require_capabilities

monitor = ZeusMonitor(gpu_indices="0")  # error: gpu_indices
monitor.begin_window(window="x")  # error: unknown keyword
m = monitor.end_window("step")
name: str = m.time  # error: float is not str
client = ZeusdClient(ZeusdConfig.uds("/run/zeusd/zeusd.sock"))
require_capabilities(client, True)  # error: keyword-only
watts: str = client.get_gpu_power().power_mw  # error: Dict[int, int] is not str
power = PowerMonitor(update_period="fast")  # error: update_period
plo = GlobalPowerLimitOptimizer(monitor, warmup_steps="ten")  # error: warmup_steps
limit: str = plo.optimal_power_limit  # error: int | None is not str
shared = ZeusMonitor(attribute_to=1.5)  # error: attribute_to
method: int = shared.end_window("cell").attribution[0].method  # error: str | None is not int
