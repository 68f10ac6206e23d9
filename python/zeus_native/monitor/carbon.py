"""Carbon emission of energy windows (the original's zeus.monitor.carbon).

    provider = ElectricityMapsClient(zone="DE")               # token from ELECTRICITYMAPS_API_TOKEN
    monitor = CarbonEmissionMonitor(provider, gpu_indices=[0])
    monitor.begin_window("train")
    ...
    m = monitor.end_window("train")   # m.gpu_carbon_emission {index: gCO2eq}, m.provenance

Each window's energy is split into the UTC hours it spans, each hour times that
hour's intensity. Every result carries the provider, the zone, each hour's
intensity with its timestamp and estimated flag, and whether a fallback was
used. When the provider cannot answer, the energy is still there and the
emission is None (never 0); provenance["unavailable_reason"] says why.
"""

from __future__ import annotations

import abc
import enum
from datetime import datetime, timedelta, timezone

import dataclasses
from typing import Any, Dict, List, Optional, Tuple

from zeus_native import _core
from zeus_native.exception import ZeusBaseError
from zeus_native.monitor._charged_windows import ChargedResult, ChargedWindows
from zeus_native.monitor.energy import Measurement
from zeus_native.utils.framework import DEFAULT_SYNC



@dataclasses.dataclass
class CarbonEmissionMeasurement(ChargedResult):
    """A window's energy (J) and carbon emission (gCO2eq), the original's fields first.

    An emission is None when the intensity is unavailable (provenance says why).
    Beyond the original: total_carbon_emission, provenance (provider, zone, unit,
    each UTC hour's intensity and flags, warnings) and measurement (the window's
    energy Measurement).
    """

    time: float
    gpu_energy: Dict[int, float]
    gpu_carbon_emission: Optional[Dict[int, float]]
    cpu_energy: Optional[Dict[int, float]] = None
    cpu_carbon_emission: Optional[Dict[int, float]] = None
    dram_energy: Optional[Dict[int, float]] = None
    dram_carbon_emission: Optional[Dict[int, float]] = None
    total_carbon_emission: Optional[float] = None
    provenance: Optional[Dict[str, Any]] = None
    measurement: Optional[Measurement] = None

    _kind = "carbon_emission"


_ELECTRICITY_MAPS = "https://api.electricitymap.org"


class ZeusCarbonIntensityHTTPError(ZeusBaseError):
    """The carbon-intensity provider could not be reached or refused the request."""


class ZeusCarbonIntensityNotFoundError(ZeusBaseError):
    """The provider's answer had no carbon intensity in it."""


def _opened(factory, *args):
    """A native provider; a bad argument or configuration (missing token, bad file) is a ValueError."""
    try:
        return factory(*args)
    except RuntimeError as e:
        raise ValueError(str(e)) from e


def _utc(unix: float) -> datetime:
    return datetime.fromtimestamp(unix, tz=timezone.utc)


class CarbonIntensityProvider(abc.ABC):
    """Where intensities come from; `provider` and `zone` name it in every result."""

    _native: _core.CarbonIntensitySource

    @property
    def provider(self) -> str:
        """The provider's name ("ElectricityMaps", "OpenEI", "constant", "file PATH")."""
        return self._native.provider

    @property
    def zone(self) -> str:
        """The zone, location or tariff the values are for, as given (never guessed)."""
        return self._native.zone

    def get_current_carbon_intensity(self) -> float:
        """The intensity of the current UTC hour (gCO2eq/kWh)."""
        hour = datetime.now(timezone.utc).replace(minute=0, second=0, microsecond=0)
        for when, value, _, _ in self._intensities([hour.timestamp()]):
            if when == hour.timestamp():
                return value
        raise ZeusCarbonIntensityNotFoundError(f"{self.provider} has no intensity for {hour.isoformat()}")

    def get_recent_carbon_intensity(self) -> dict[datetime, float]:
        """Every hourly intensity the provider has (gCO2eq/kWh by UTC hour)."""
        return {_utc(when): value for when, value, _, _ in self._intensities([])}

    def _intensities(self, hours: list[float]):
        try:
            return self._native.intensities(hours)
        except RuntimeError as e:
            raise ZeusCarbonIntensityHTTPError(str(e)) from e

    update_period = timedelta(hours=1)
    history_length = 24

    def __getattr__(self, name: str) -> Any:
        # A provider written in Python (the original's abstract base,
        # subclassed by the user): the native side asks _python_intensities.
        if name == "_native":
            return _core.CarbonIntensitySource.from_python(self)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _python_intensities(self, hours: List[float]) -> List[Tuple[float, float]]:
        """(Unix hour, gCO2eq/kWh) pairs from a Python subclass's own methods: its
        get_recent_carbon_intensity when it has one, else its current value for this hour."""
        cls = type(self)
        rows: Dict[float, float] = {}
        if cls.get_recent_carbon_intensity is not CarbonIntensityProvider.get_recent_carbon_intensity:
            for when, value in self.get_recent_carbon_intensity().items():
                if when.tzinfo is None:
                    raise ValueError(f"{cls.__name__}.get_recent_carbon_intensity returned the naive datetime "
                                     f"{when}; return timezone-aware (UTC) datetimes")
                rows[when.timestamp()] = float(value)
        elif cls.get_current_carbon_intensity is not CarbonIntensityProvider.get_current_carbon_intensity:
            hour = datetime.now(timezone.utc).replace(minute=0, second=0, microsecond=0).timestamp()
            rows.setdefault(hour, float(self.get_current_carbon_intensity()))
        if not rows and cls.get_recent_carbon_intensity is CarbonIntensityProvider.get_recent_carbon_intensity \
                and cls.get_current_carbon_intensity is CarbonIntensityProvider.get_current_carbon_intensity:
            raise NotImplementedError(f"{cls.__name__} implements neither get_current_carbon_intensity nor "
                                      "get_recent_carbon_intensity; implement them (the original's abstract methods)")
        return sorted(rows.items())


class ElectricityMapsClient(CarbonIntensityProvider):
    """ElectricityMaps (v3): `location` (lat, lon) as the original, or `zone`.

    The token comes from `token` or ELECTRICITYMAPS_API_TOKEN. `base_url` points
    elsewhere (a local replay server in tests). Nothing is guessed: use
    `locate_by_ip()` explicitly to get a location from the IP address, and the
    zone then says so.
    """

    def __init__(
        self,
        location: tuple[float, float] | None = None,
        estimate: bool = False,
        emission_factor_type: str = "direct",
        *,
        zone: str | None = None,
        token: str | None = None,
        base_url: str = _ELECTRICITY_MAPS,
        location_source: str = "given",
    ) -> None:
        lat, lon = (None, None) if location is None else (float(location[0]), float(location[1]))
        self.location = location
        self.estimate = bool(estimate)
        self.emission_factor_type = emission_factor_type
        self._native = _opened(
            _core.CarbonIntensitySource.electricity_maps,
            zone, lat, lon, location_source, self.estimate, emission_factor_type, base_url, token,
        )

    def get_current_carbon_intensity(self) -> float:
        """GET /v3/carbon-intensity/latest: the latest intensity (gCO2eq/kWh)."""
        try:
            return self._native.latest()[1]
        except RuntimeError as e:
            raise ZeusCarbonIntensityHTTPError(str(e)) from e

    def get_recent_carbon_intensity(self) -> dict[datetime, float]:
        """GET /v3/carbon-intensity/history: the last 24 hours (gCO2eq/kWh by UTC hour)."""
        try:
            return {_utc(when): value for when, value, _, _ in self._native.history()}
        except RuntimeError as e:
            raise ZeusCarbonIntensityHTTPError(str(e)) from e


# The original's spelling.
ElectrictyMapsClient = ElectricityMapsClient


def locate_by_ip(base_url: str = "https://ipinfo.io") -> tuple[tuple[float, float], str]:
    """((lat, lon), how it was found) from IP geolocation, only when you ask for it."""
    lat, lon, source = _core.locate_by_ip(base_url)
    return (lat, lon), source


class ConstantCarbonIntensity(CarbonIntensityProvider):
    """One intensity (gCO2eq/kWh) for every hour, for offline use; `zone` is what you say it is for."""

    def __init__(self, g_per_kwh: float, zone: str = "") -> None:
        self._native = _opened(_core.CarbonIntensitySource.constant, float(g_per_kwh), zone)


class CarbonIntensityFile(CarbonIntensityProvider):
    """A time series from a CSV (datetime,carbon_intensity[,is_estimated][,zone]) or a saved ElectricityMaps answer."""

    def __init__(self, path: str) -> None:
        self._native = _opened(_core.CarbonIntensitySource.from_file, str(path))


class Op(enum.Enum):
    """The original's messages to its CarbonEmissionMonitor polling process (kept for code that names
    them; the native monitor polls in a thread and takes no messages)."""

    BEGIN = 0
    END = 1
    NEXTITER = 2


class CarbonEmissionMonitor(ChargedWindows):
    """Energy windows with their carbon emission (gCO2eq), as the original's CarbonEmissionMonitor.

    end_window returns a CarbonEmissionMeasurement. fallback_intensity: used,
    flagged and warned about, for hours the provider has no value for; None
    (the default) leaves the emission unavailable instead.
    """

    def __init__(
        self,
        carbon_intensity_provider: CarbonIntensityProvider,
        gpu_indices: list[int] | None = None,
        cpu_indices: list[int] | None = None,
        sync_execution_with: str = DEFAULT_SYNC,
        *,
        fallback_intensity: float | None = None,
        max_gap_hours: int = 2,
        poll_interval: float = 30.0,
    ) -> None:
        """Open the devices (as ZeusMonitor) and the hourly split's background thread."""
        super().__init__(_core.CarbonEmissionWindows, carbon_intensity_provider, gpu_indices, cpu_indices,
                         sync_execution_with, fallback_intensity, max_gap_hours, poll_interval)
        self.carbon_intensity_provider = carbon_intensity_provider

    def _result_type(self) -> Any:
        return CarbonEmissionMeasurement
