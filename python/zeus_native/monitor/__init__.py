"""Monitors (the original's zeus.monitor): ZeusMonitor, PowerMonitor, TemperatureMonitor."""

from zeus_native.monitor.energy import Measurement, ZeusMonitor
from zeus_native.monitor.power import PowerDomain, PowerMonitor
from zeus_native.monitor.temperature import TemperatureMonitor

__all__ = ["ZeusMonitor", "Measurement", "PowerMonitor", "PowerDomain", "TemperatureMonitor"]
