"""SoCs (the original's zeus.device.soc.common): SoC, SoCMeasurement, EmptySoC and the SoC errors."""

from __future__ import annotations

import abc
import dataclasses
from typing import Any, Set

from zeus_native.device.common import SOC_ALIASES, DeprecatedAliasABCMeta, add_deprecated_aliases
from zeus_native.device.exception import ZeusBaseSoCError


class ZeusSoCInitError(ZeusBaseSoCError):
    """No SoC energy source could be opened."""


class ZeusAppleInitError(ZeusSoCInitError):
    """Apple silicon monitoring is not available (not built in zeus_native)."""


@dataclasses.dataclass
class SoCMeasurement(abc.ABC, metaclass=DeprecatedAliasABCMeta):
    """A SoC's energy readings (the original's abstract SoCMeasurement; mJ): JetsonMeasurement."""

    @abc.abstractmethod
    def __sub__(self, other: Any) -> "SoCMeasurement":
        """Field-by-field difference."""

    @abc.abstractmethod
    def zero_all_fields(self) -> None:
        """Set every present field to 0."""


class SoC(abc.ABC, metaclass=DeprecatedAliasABCMeta):
    """A system-on-chip (the original's abstract SoC): Jetson implements it."""

    @abc.abstractmethod
    def get_available_metrics(self) -> Set[str]:
        """The metrics it measures."""

    @abc.abstractmethod
    def get_total_energy_consumption(self) -> SoCMeasurement:
        """Energy since it was opened (mJ)."""

    @abc.abstractmethod
    def begin_window(self, key: str, restart: bool = False) -> None:
        """Begin the window `key` (restart: begin it again if open)."""

    @abc.abstractmethod
    def end_window(self, key: str) -> SoCMeasurement:
        """End the window `key` and return its energy (mJ)."""


class EmptySoC(SoC):
    """No SoC (the original's EmptySoC): windows and readings raise ValueError."""

    def __init__(self) -> None:
        """Nothing to open."""

    def get_available_metrics(self) -> Set[str]:
        """None."""
        return set()

    def get_total_energy_consumption(self) -> SoCMeasurement:
        """No SoC: ValueError."""
        raise ValueError("No SoC is available.")

    def begin_window(self, key: str, restart: bool = False) -> None:
        """No SoC: ValueError."""
        raise ValueError("No SoC is available.")

    def end_window(self, key: str) -> SoCMeasurement:
        """No SoC: ValueError."""
        raise ValueError("No SoC is available.")


add_deprecated_aliases(SoC, SOC_ALIASES)
add_deprecated_aliases(SoCMeasurement, {"zero_all_fields": "zeroAllFields"})
