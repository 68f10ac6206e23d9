"""Typed use of zeus_native as the original's users write it: mypy and pyright must accept it.

Checked, never run, by test_typing.py (strict enough that a stub error in
_core.pyi or a wrong annotation in the package fails it).
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from zeus_native.monitor import EnergyShare, Measurement, PowerDomain, PowerMonitor, TemperatureMonitor, ZeusMonitor
from zeus_native.optimizer import GlobalPowerLimitOptimizer
from zeus_native.optimizer.power_limit import MaxSlowdownConstraint, ZeusCost
from zeus_native.utils.zeusd import CpuEnergyResult, GpuPowerSnapshot, ZeusdClient, ZeusdConfig, require_capabilities


def energy_of_a_window(monitor: ZeusMonitor) -> float:
    monitor.begin_window("step")
    m: Measurement = monitor.end_window("step")
    per_gpu: Dict[int, float] = m.gpu_energy
    return m.time + m.total_energy + sum(per_gpu.values())


def my_share(monitor: ZeusMonitor) -> Optional[str]:
    monitor.begin_window("cell")
    m = monitor.end_window("cell")
    shares: Dict[int, EnergyShare] = m.attribution
    if 0 not in shares:
        return None
    share = shares[0]
    joules: float = share.energy + share.others + share.remainder - share.gpu_energy
    pids: List[int] = share.pids
    del joules, pids
    return share.method


def power_now(monitor: PowerMonitor) -> Optional[Dict[int, float]]:
    monitor.get_power_timeline(PowerDomain.DEVICE_INSTANT)
    energy: Optional[Dict[int, float]] = monitor.get_energy(0.0, 1.0)
    del energy
    return monitor.get_power()


def temperature_now(monitor: TemperatureMonitor) -> None:
    monitor.get_temperature()


def optimize(monitor: ZeusMonitor, steps: int) -> Optional[int]:
    plo = GlobalPowerLimitOptimizer(monitor, optimum_selector=ZeusCost(eta_knob=0.5), warmup_steps=2)
    plo2 = GlobalPowerLimitOptimizer(monitor, MaxSlowdownConstraint(factor=1.1), profile_path="/tmp/p.json")
    del plo2
    for _ in range(steps):
        plo.on_step_begin()
        plo.on_step_end()
    plo.on_epoch_end()
    return plo.optimal_power_limit


def zeusd_power(config: Optional[ZeusdConfig]) -> Dict[int, int]:
    client = ZeusdClient(config)
    require_capabilities(client, read_gpu=True, read_cpu=True, gpu_ids=[0], cpu_ids=None)
    snapshot: GpuPowerSnapshot = client.get_gpu_power([0])
    limits: Dict[int, Tuple[int, int]] = client.get_power_limit_constraints()
    cpus: Dict[int, CpuEnergyResult] = client.get_cpu_energy(cpu=True, dram=False)
    client.set_power_limit(list(limits), min(low for low, _ in limits.values()), block=False)
    seconds: float = client.get_time()
    del cpus, seconds
    return snapshot.power_mw


def main() -> List[int]:
    monitor = ZeusMonitor(gpu_indices=[0], cpu_indices=None, approx_instant_energy=True, log_file=None,
                          sync_execution_with="torch")
    energy_of_a_window(monitor)
    my_share(ZeusMonitor(gpu_indices=[0], attribute_to="process", idle_power={0: 60.0}))
    my_share(ZeusMonitor(attribute_to=[1234, 5678], idle_power=60.0, idle_policy="allocation"))
    power_now(PowerMonitor(gpu_indices=[0], update_period=0.1, power_domains=[PowerDomain.DEVICE_INSTANT]))
    temperature_now(TemperatureMonitor(gpu_indices=[0], update_period=1.0))
    optimize(monitor, 10)
    zeusd_power(ZeusdConfig.uds("/run/zeusd/zeusd.sock", token=None))
    return monitor.gpu_indices
