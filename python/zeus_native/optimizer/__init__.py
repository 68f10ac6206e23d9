"""Optimizers (the original's zeus.optimizer).

HFGlobalPowerLimitOptimizer is looked up on first use, so that importing this
package does not import Hugging Face transformers.
"""

from typing import TYPE_CHECKING, Any

from zeus_native.optimizer.power_limit import GlobalPowerLimitOptimizer

if TYPE_CHECKING:
    from zeus_native.optimizer.power_limit import HFGlobalPowerLimitOptimizer as HFGlobalPowerLimitOptimizer

__all__ = ["GlobalPowerLimitOptimizer", "HFGlobalPowerLimitOptimizer"]


def __getattr__(name: str) -> Any:
    if name == "HFGlobalPowerLimitOptimizer":
        from zeus_native.optimizer import power_limit

        return power_limit.HFGlobalPowerLimitOptimizer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
