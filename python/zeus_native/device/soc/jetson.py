"""NVIDIA Jetson (the original's zeus.device.soc.jetson), over the native rail sampler."""

from __future__ import annotations

import abc
import dataclasses
import enum
from pathlib import Path
from typing import Dict, Optional, Set, TypedDict

from zeus_native.device import _sets
from zeus_native.device.soc.common import SoC, SoCMeasurement, ZeusSoCInitError


class ZeusJetsonInitError(ZeusSoCInitError):
    """A Jetson was found but its rails could not be opened."""


def check_file(path: Path) -> bool:
    """Whether `path` exists and is a file."""
    return path.exists() and path.is_file()


class PowerMeasurementStrategy(abc.ABC):
    """How one Jetson rail's power is read from sysfs (the original's strategy classes)."""

    @abc.abstractmethod
    def measure_power(self) -> float:
        """The rail's power now, in mW."""


class DirectPower(PowerMeasurementStrategy):
    """A rail with a power file (INA3221 `power<N>_input` / `in_power<N>_input`, mW)."""

    def __init__(self, power_path: Path) -> None:
        """Read power from `power_path`."""
        self.power_path: Path = Path(power_path)

    def measure_power(self) -> float:
        """The power file's value (mW)."""
        return float(self.power_path.read_text().strip())


class VoltageCurrentProduct(PowerMeasurementStrategy):
    """A rail with voltage (mV) and current (mA) files only: power is their product."""

    def __init__(self, voltage_path: Path, current_path: Path) -> None:
        """Read voltage from `voltage_path` and current from `current_path`."""
        self.voltage_path: Path = Path(voltage_path)
        self.current_path: Path = Path(current_path)

    def measure_power(self) -> float:
        """mV × mA / 1000 (mW)."""
        voltage = float(self.voltage_path.read_text().strip())
        current = float(self.current_path.read_text().strip())
        return (voltage * current) / 1000


class DeviceMap(TypedDict, total=False):
    """Each measured rail's strategy: cpu_power_mw, gpu_power_mw, total_power_mw."""

    cpu_power_mw: PowerMeasurementStrategy
    gpu_power_mw: PowerMeasurementStrategy
    total_power_mw: PowerMeasurementStrategy


class Command(enum.Enum):
    """The original's messages to its polling process (kept for code that names them; the
    native rail sampler is a thread that takes no messages)."""

    READ = "read"
    STOP = "stop"


def jetson_is_available() -> bool:
    """Whether this machine's Jetson rails can be read (ZEUS_JETSON_SYSFS_ROOT for a mounted /sys)."""
    return _sets.soc().init_error is None


@dataclasses.dataclass
class JetsonMeasurement(SoCMeasurement):
    """A Jetson's energy (the original's JetsonMeasurement): CPU, GPU and total rails (mJ), None when absent."""

    cpu_energy_mj: Optional[float] = None
    gpu_energy_mj: Optional[float] = None
    total_energy_mj: Optional[float] = None

    def __sub__(self, other: "JetsonMeasurement") -> "JetsonMeasurement":
        """Field-by-field difference (TypeError for anything but a JetsonMeasurement)."""
        if not isinstance(other, JetsonMeasurement):
            raise TypeError("Subtraction is only supported between JetsonMeasurement instances.")
        result = JetsonMeasurement()
        for field in dataclasses.fields(self):
            a, b = getattr(self, field.name), getattr(other, field.name)
            if a is not None and b is not None:
                setattr(result, field.name, a - b)
        return result

    def zero_all_fields(self) -> None:
        """Set every present field to 0."""
        for field in dataclasses.fields(self):
            if getattr(self, field.name) is not None:
                setattr(self, field.name, 0.0)


class Jetson(SoC):
    """The Jetson's energy (the original's Jetson): readings and named windows, in mJ."""

    def __init__(self) -> None:
        """Open the rails; ZeusJetsonInitError with the reason when they cannot be read."""
        soc = _sets.soc()
        if soc.init_error is not None:
            raise ZeusJetsonInitError(soc.init_error)
        self._soc = soc
        self.measurement_states: Dict[str, JetsonMeasurement] = {}

    def get_available_metrics(self) -> Set[str]:
        """Metrics measured: subset of {"cpu", "gpu", "total"}."""
        return set(self._soc.get_available_metrics())

    def get_total_energy_consumption(self, timeout: float = 15.0) -> JetsonMeasurement:
        """Energy per metric since the rails were opened (mJ). `timeout` is the original's wait
        for its sampling process; the native sampler answers at once, so it is unused."""
        mj = self._soc.get_total_energy_consumption()
        return JetsonMeasurement(mj.get("cpu"), mj.get("gpu"), mj.get("total"))

    def begin_window(self, key: str, restart: bool = False) -> None:
        """Begin the window `key`; ValueError when open (unless restart)."""
        if key in self.measurement_states and not restart:
            raise ValueError(f"Measurement window '{key}' already exists; end it first, or pass restart=True")
        self.measurement_states[key] = self.get_total_energy_consumption()

    def end_window(self, key: str) -> JetsonMeasurement:
        """End the window `key` and return its energy (mJ); ValueError when it is not open."""
        if key not in self.measurement_states:
            raise ValueError(f"Measurement window '{key}' does not exist; begin it first")
        begin = self.measurement_states.pop(key)
        return self.get_total_energy_consumption() - begin
