"""Optimizers (the original's zeus.optimizer)."""

from zeus_native.optimizer.power_limit import GlobalPowerLimitOptimizer, HFGlobalPowerLimitOptimizer

__all__ = ["GlobalPowerLimitOptimizer", "HFGlobalPowerLimitOptimizer"]
