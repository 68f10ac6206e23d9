"""Electricity cost of energy windows (the original's zeus.monitor.price).

    provider = OpenEIClient((42.28, -83.74), label="...")       # key from OPENEI_API_KEY
    monitor = EnergyCostMonitor(provider)
    monitor.begin_window("train"); ...; m = monitor.end_window("train")   # m.gpu_energy_cost

As CarbonEmissionMonitor: each UTC hour charged at its rate, provenance with
every number, None (never 0) when the price is unavailable.
"""

from __future__ import annotations

import abc
import dataclasses
import enum
import json
from datetime import datetime
from typing import Any, Dict, List, Optional, Tuple

from zeus_native import _core
from zeus_native.exception import ZeusBaseError
from zeus_native.monitor.carbon import _opened
from zeus_native.monitor.energy import Measurement
from zeus_native.monitor._charged_windows import ChargedResult, ChargedWindows
from zeus_native.utils.framework import DEFAULT_SYNC



@dataclasses.dataclass
class EnergyCostMeasurement(ChargedResult):
    """A window's energy (J) and electricity cost, the original's fields first.

    A cost is None when the price is unavailable (provenance says why). Beyond
    the original: total_energy_cost, provenance (provider, zone, unit, each UTC
    hour's price and flags, warnings) and measurement (the window's energy
    Measurement).
    """

    time: float
    gpu_energy: Dict[int, float]
    gpu_energy_cost: Optional[Dict[int, float]]
    cpu_energy: Optional[Dict[int, float]] = None
    cpu_energy_cost: Optional[Dict[int, float]] = None
    dram_energy: Optional[Dict[int, float]] = None
    dram_energy_cost: Optional[Dict[int, float]] = None
    total_energy_cost: Optional[float] = None
    provenance: Optional[Dict[str, Any]] = None
    measurement: Optional[Measurement] = None

    _kind = "energy_cost"


def get_time_info() -> Tuple[str, str, int]:
    """(month name, "Weekend" or "Weekday", hour) now, local time (the original's helper)."""
    now = datetime.now()
    return now.strftime("%B"), "Weekend" if now.weekday() >= 5 else "Weekday", now.hour


class ZeusElectricityPriceHTTPError(ZeusBaseError):
    """The price provider could not be reached or refused the request."""


class ZeusElectricityPriceNotFoundError(ZeusBaseError):
    """The provider's answer had no usable rate in it."""


class ElectricityPriceProvider(abc.ABC):
    """Where prices come from; `provider`, `zone` and `currency` name it in every result."""

    _native: _core.ElectricityPriceSource

    @property
    def provider(self) -> str:
        """The provider's name ("ElectricityMaps", "OpenEI", "constant", "file PATH")."""
        return self._native.provider

    @property
    def zone(self) -> str:
        """The zone, location or tariff the values are for, as given (never guessed)."""
        return self._native.zone

    @property
    def currency(self) -> str:
        """The currency of the prices ("USD" for OpenEI; "" when not given)."""
        return self._native.currency

    def get_current_electricity_prices(self) -> Dict[str, list]:
        """The rates in OpenEI's shape (the original's abstract method): energy_rate_structure
        (per period, tiers of {"rate": $/kWh, ...}), energy_weekday_schedule and
        energy_weekend_schedule (12 months × 24 hours of period indices). OpenEIClient and
        ConstantPrice have them; a time-of-use file is priced hour by hour instead."""
        raise NotImplementedError(
            f"{type(self).__name__} has no OpenEI-shaped rate table; EnergyCostMonitor prices its windows directly"
        )


class OpenEIClient(ElectricityPriceProvider):
    """OpenEI utility rates: the rate with `label` near `location`, as the original.

    The API key comes from `api_key` or OPENEI_API_KEY (the original hard-coded one).
    The schedules are looked up by UTC hour like the original unless
    `utc_offset_hours` gives the utility's offset.
    """

    def __init__(
        self,
        location: tuple[float, float],
        label: str,
        sector: str = "Residential",
        radius: int = 0,
        *,
        api_key: str | None = None,
        utc_offset_hours: int = 0,
        base_url: str = "https://api.openei.org",
    ) -> None:
        self.lat, self.long = float(location[0]), float(location[1])
        self.label = label
        self.sector = sector
        self.radius = int(radius)
        self._base_url, self._api_key = base_url, api_key
        self._native = _opened(
            _core.ElectricityPriceSource.openei,
            self.lat, self.long, label, sector, self.radius, int(utc_offset_hours), base_url, api_key,
        )

    def search_json(self, data: Any, key_name: str, target_value: Any, return_value: str) -> List[Any]:
        """Every `return_value` (None when absent) of the dicts in nested JSON `data` whose
        `key_name` is `target_value` (the original's helper for OpenEI answers)."""
        results: List[Any] = []
        if isinstance(data, dict):
            for key, value in data.items():
                if key == key_name and value == target_value:
                    results.append(data.get(return_value))
                results.extend(self.search_json(value, key_name, target_value, return_value))
        elif isinstance(data, list):
            for item in data:
                results.extend(self.search_json(item, key_name, target_value, return_value))
        return results


    def get_current_electricity_prices(self) -> Dict[str, list]:
        """The rate labelled `label` near the location, fetched from OpenEI now, as the original returns
        it: {"energy_rate_structure", "energy_weekday_schedule", "energy_weekend_schedule"}.
        ZeusElectricityPriceHTTPError when OpenEI cannot be asked or refuses;
        ZeusElectricityPriceNotFoundError when no rate has the label or it lacks one of the three."""
        code, text = _core.openei_rate_json(self.lat, self.long, self.label, self.sector, self.radius,
                                            self._base_url, self._api_key)
        if code == "not found":
            raise ZeusElectricityPriceNotFoundError(text)
        if code:
            raise ZeusElectricityPriceHTTPError(f"Failed to retrieve current electricity price measurement: {text}")
        rate = json.loads(text)
        wanted = {"energy_rate_structure": "energyratestructure", "energy_weekday_schedule": "energyweekdayschedule",
                  "energy_weekend_schedule": "energyweekendschedule"}
        missing = [theirs for theirs in wanted.values() if rate.get(theirs) is None]
        if missing:
            raise ZeusElectricityPriceNotFoundError(
                f"No rates found for the label: {self.label} (OpenEI's rate has no {', '.join(missing)})")
        return {ours: rate[theirs] for ours, theirs in wanted.items()}


class ConstantPrice(ElectricityPriceProvider):
    """One price per kWh for every hour."""

    def __init__(self, per_kwh: float, currency: str = "") -> None:
        self.per_kwh = float(per_kwh)
        self._native = _opened(_core.ElectricityPriceSource.constant, self.per_kwh, currency)

    def get_current_electricity_prices(self) -> Dict[str, list]:
        """The price as an OpenEI rate table: one period at `per_kwh`, every hour of every month."""
        every_hour = [[0] * 24 for _ in range(12)]
        return {"energy_rate_structure": [[{"rate": self.per_kwh}]],
                "energy_weekday_schedule": every_hour, "energy_weekend_schedule": [list(m) for m in every_hour]}


class TimeOfUsePriceFile(ElectricityPriceProvider):
    """A time-of-use table: CSV days,start_hour,end_hour,price_per_kwh[,months]."""

    def __init__(self, path: str, currency: str = "", utc_offset_hours: int = 0) -> None:
        self._native = _opened(_core.ElectricityPriceSource.from_file, str(path), currency, int(utc_offset_hours))


class Op(enum.Enum):
    """The original's messages to its EnergyCostMonitor polling process (kept for code that names
    them; the native monitor polls in a thread and takes no messages)."""

    BEGIN = 0
    END = 1
    NEXTITER = 2


class EnergyCostMonitor(ChargedWindows):
    """Energy windows with their electricity cost, as the original's EnergyCostMonitor.

    end_window returns an EnergyCostMeasurement; fallback_price as CarbonEmissionMonitor's fallback_intensity.
    """

    def __init__(
        self,
        electricity_price_provider: ElectricityPriceProvider,
        gpu_indices: list[int] | None = None,
        cpu_indices: list[int] | None = None,
        sync_execution_with: str = DEFAULT_SYNC,
        *,
        fallback_price: float | None = None,
        max_gap_hours: int = 2,
        poll_interval: float = 30.0,
    ) -> None:
        """Open the devices (as ZeusMonitor) and the hourly split's background thread."""
        super().__init__(_core.EnergyCostWindows, electricity_price_provider, gpu_indices, cpu_indices,
                         sync_execution_with, fallback_price, max_gap_hours, poll_interval)
        self.electricity_price_provider = electricity_price_provider

    def _result_type(self) -> Any:
        return EnergyCostMeasurement
