"""Monitors (the original's zeus.monitor): ZeusMonitor, PowerMonitor, TemperatureMonitor, carbon and cost."""

from zeus_native.monitor.carbon import CarbonEmissionMeasurement, CarbonEmissionMonitor
from zeus_native.monitor.attribution import EnergyShare
from zeus_native.monitor.energy import Measurement, ZeusMonitor
from zeus_native.monitor.power import PowerDomain, PowerMonitor
from zeus_native.monitor.price import EnergyCostMeasurement, EnergyCostMonitor
from zeus_native.monitor.temperature import TemperatureMonitor

__all__ = [
    "ZeusMonitor",
    "Measurement",
    "EnergyShare",
    "PowerMonitor",
    "PowerDomain",
    "TemperatureMonitor",
    "CarbonEmissionMonitor",
    "CarbonEmissionMeasurement",
    "EnergyCostMonitor",
    "EnergyCostMeasurement",
]
