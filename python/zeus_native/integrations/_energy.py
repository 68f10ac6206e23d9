"""What every tracker integration shares: energy windows measured by a
ZeusMonitor (with their carbon emission and electricity cost when a provider is
given), flattened into metrics and a provenance record, handed to trackers.

Nothing here may break the program it measures: a device that cannot be opened
and a tracker that cannot be reached are warnings, and the windows still open
when the program stops (an exception, Ctrl-C) are ended and logged.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
import re
import warnings
from contextlib import contextmanager
from typing import Any, Dict, Iterator, List, Optional, Protocol, Sequence

import zeus_native
from zeus_native import _core, _exit
from zeus_native.monitor.carbon import CarbonEmissionMeasurement, CarbonIntensityProvider
from zeus_native.monitor.energy import Measurement, ZeusMonitor
from zeus_native.monitor.price import ElectricityPriceProvider, EnergyCostMeasurement

# The window that spans the whole run (start() to close()).
RUN_WINDOW = "run"
# Our windows' names in a monitor the user shares with us: never one of theirs.
_WINDOW_PREFIX = "zeus_native.integrations:"


@dataclasses.dataclass
class EnergyRecord:
    """One ended window as the trackers get it.

    metrics: {name: value}, names "<prefix>/<window>/<quantity>" (for example
    "energy/epoch/gpu0_j"); provenance: how the values were obtained (JSON-able:
    each device's source and warnings, the carbon and price providers with each
    hour's rate, whether the window was cut short by an exception).
    """

    window: str
    step: Optional[int]
    metrics: Dict[str, float]
    provenance: Dict[str, Any]
    interrupted: bool = False
    prefix: str = "energy"


def make_record(result: Any, window: str, step: Optional[int] = None, prefix: str = "energy",
                extra: Sequence[Any] = (), interrupted: bool = False) -> EnergyRecord:
    """The EnergyRecord of a result (Measurement, CarbonEmissionMeasurement or
    EnergyCostMeasurement) and the carbon or cost results of the same span in `extra`."""
    return EnergyRecord(window, step, energy_metrics(result, window, prefix, extra),
                        energy_provenance(result, window, step, extra, interrupted), interrupted, prefix)


class Tracker(Protocol):
    """Where records go (MLflowTracker, WandbTracker). Its methods may raise:
    EnergyLogger turns every failure into a warning."""

    name: str

    def start(self) -> None:
        """Attach to (or open) the tracker's run."""

    def log(self, record: EnergyRecord) -> None:
        """Log one ended window."""

    def close(self, interrupted: bool) -> None:
        """Finish what start() opened (a run it created itself)."""


def _quantity_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)


def energy_metrics(result: Any, window: str, prefix: str = "energy",
                   extra: Sequence[Any] = ()) -> Dict[str, float]:
    """The metrics of one window's result: a Measurement, a CarbonEmissionMeasurement
    or an EnergyCostMeasurement, plus the carbon or cost results in `extra` (of the
    same span). Values a device could not give (a lost GPU's NaN, an unavailable
    emission) are left out, never logged as 0.

    Quantities: time_s, total_j (GPUs, CPU packages and DRAM), gpu_total_j,
    gpu<i>_j, cpu<i>_j, dram<i>_j, soc_<metric>_j, avg_power_w; with carbon:
    carbon_gco2eq and <device><i>_gco2eq; with a price: cost and <device><i>_cost
    (the currency is in the provenance).
    """
    base = f"{prefix}/{window}/"
    measurement = _measurement_of(result)
    out: Dict[str, float] = {}

    def put(name: str, value: Optional[float]) -> None:
        if value is not None and math.isfinite(value):
            out[base + name] = float(value)

    put("time_s", measurement.time)
    total = 0.0
    for kind, values in (("gpu", measurement.gpu_energy), ("cpu", measurement.cpu_energy),
                         ("dram", measurement.dram_energy)):
        for index, joules in sorted((values or {}).items()):
            put(f"{kind}{index}_j", joules)
            if math.isfinite(joules):
                total += joules
    for metric, joules in sorted((measurement.soc_energy or {}).items()):
        put(f"soc_{_quantity_name(str(metric))}_j", joules)
    put("total_j", total)
    put("gpu_total_j", measurement.total_energy)
    if measurement.time > 0:
        put("avg_power_w", total / measurement.time)
    for charged in [result, *extra]:
        if isinstance(charged, CarbonEmissionMeasurement):
            _put_charged(put, charged, "carbon_emission", "gco2eq", "carbon_gco2eq")
        elif isinstance(charged, EnergyCostMeasurement):
            _put_charged(put, charged, "energy_cost", "cost", "cost")
    return out


def _put_charged(put: Any, charged: Any, kind: str, suffix: str, total_name: str) -> None:
    for device in ("gpu", "cpu", "dram"):
        for index, amount in sorted((getattr(charged, f"{device}_{kind}") or {}).items()):
            put(f"{device}{index}_{suffix}", amount)
    put(total_name, getattr(charged, f"total_{kind}"))


def _measurement_of(result: Any) -> Measurement:
    if isinstance(result, Measurement):
        return result
    measurement = getattr(result, "measurement", None)
    if isinstance(measurement, Measurement):
        return measurement
    raise TypeError(f"expected a Measurement, CarbonEmissionMeasurement or EnergyCostMeasurement, "
                    f"not {type(result).__name__}")


def energy_provenance(result: Any, window: str, step: Optional[int] = None, extra: Sequence[Any] = (),
                      interrupted: bool = False) -> Dict[str, Any]:
    """How `result`'s values were obtained, as JSON-able data (see EnergyRecord)."""
    measurement = _measurement_of(result)
    devices = {kind: {str(index): entry for index, entry in sorted(entries.items())}
               for kind, entries in (measurement.provenance or {}).items() if entries}
    record: Dict[str, Any] = {
        "measured_by": f"zeus_native {zeus_native.__version__}",
        "window": window,
        "step": step,
        "start_time": measurement.start_time,
        "time_s": measurement.time,
        "interrupted": interrupted,
        "devices": devices,
        "lost_gpus": measurement.lost_gpus,
        "warnings": measurement.warnings,
    }
    for charged in [result, *extra]:
        if isinstance(charged, CarbonEmissionMeasurement):
            record["carbon"] = charged.provenance
        elif isinstance(charged, EnergyCostMeasurement):
            record["cost"] = charged.provenance
    plain: Dict[str, Any] = json.loads(json.dumps(record, default=str))  # JSON types only (str keys)
    return plain


def compact_provenance(provenance: Dict[str, Any], limit: int) -> str:
    """`provenance` as JSON of at most `limit` characters: when too long, each provider's
    per-hour list is replaced by its length, then each device's details by its index,
    then all but the window's essentials are left out ("truncated": true)."""
    text = json.dumps(provenance, sort_keys=True, separators=(",", ":"))
    if len(text) <= limit:
        return text
    shorter = json.loads(text)
    for key in ("carbon", "cost"):
        if isinstance(shorter.get(key), dict) and "hours" in shorter[key]:
            shorter[key]["hours_count"] = len(shorter[key].pop("hours"))
    shorter["truncated"] = True
    text = json.dumps(shorter, sort_keys=True, separators=(",", ":"))
    if len(text) <= limit:
        return text
    shorter["devices"] = {kind: sorted(entries) for kind, entries in shorter.get("devices", {}).items()}
    text = json.dumps(shorter, sort_keys=True, separators=(",", ":"))
    if len(text) <= limit:
        return text
    essentials = ("measured_by", "window", "step", "interrupted", "time_s")
    return json.dumps({**{key: shorter.get(key) for key in essentials}, "truncated": True}, sort_keys=True)


class _ChargedMeter:
    """A carbon or cost monitor over a ZeusMonitor that is shared with the other meters."""

    def __init__(self, native_type: Any, result_type: Any, monitor: ZeusMonitor, provider: Any) -> None:
        self._native = native_type(monitor, provider._native, 30.0, None, 2)
        self._result_type = result_type
        _exit.track(self, "carbon", _stop_charged_meter)

    def begin(self, name: str) -> None:
        self._native.begin_window(name)

    def end(self, name: str) -> Any:
        return self._result_type._from_native(self._native.end_window(name))


def _stop_charged_meter(meter: Any) -> None:
    meter._native._stop_threads()  # joins the hourly thread at interpreter exit


class _EnergyMeter:
    def __init__(self, monitor: ZeusMonitor) -> None:
        self._monitor = monitor

    def begin(self, name: str) -> None:
        self._monitor.begin_window(name)

    def end(self, name: str) -> Any:
        return self._monitor.end_window(name)


def _warn(message: str) -> None:
    warnings.warn(message, RuntimeWarning, stacklevel=3)


def import_tracker(module: str, tracker: str) -> Any:
    """The tracker's module, or None with a warning naming the fix when it cannot be imported."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        warnings.warn(f"zeus_native: {module} cannot be imported ({e}); energy is not logged to {tracker} "
                      f"(pip install {module})", RuntimeWarning, stacklevel=3)
        return None


class EnergyLogger:
    """Measures a training run's energy and logs it to trackers.

        with EnergyLogger(MLflowTracker(), WandbTracker()) as energy:
            for epoch in range(epochs):
                with energy.window("epoch", step=epoch):
                    train_one_epoch()

    The run's total is logged when the `with` block ends (close()), also on an
    exception or Ctrl-C; so is every window still open then, marked interrupted.
    gpu_indices, cpu_indices: which devices (ZeusMonitor's defaults: every GPU,
    every readable CPU package). carbon_intensity, electricity_price: providers
    from zeus_native.monitor.carbon / .price; each window then also gets its
    emission and cost. monitor: a ZeusMonitor of yours to measure with.

    A device that cannot be opened and a tracker that fails are warnings: the
    program runs on, and end_window returns None when nothing was measured.
    """

    def __init__(
        self,
        *trackers: Tracker,
        gpu_indices: Optional[List[int]] = None,
        cpu_indices: Optional[List[int]] = None,
        carbon_intensity: Optional[CarbonIntensityProvider] = None,
        electricity_price: Optional[ElectricityPriceProvider] = None,
        monitor: Optional[ZeusMonitor] = None,
        prefix: str = "energy",
    ) -> None:
        """Open the devices (a warning, not an error, when they cannot be opened)."""
        self.trackers: List[Tracker] = list(trackers)
        self.prefix = prefix
        self._meters: List[Any] = []
        self._open: Dict[str, Optional[int]] = {}  # window name -> step
        self._started = False
        self.monitor: Optional[ZeusMonitor] = None
        try:
            zeus_monitor = monitor if monitor is not None else ZeusMonitor(gpu_indices, cpu_indices)
            if carbon_intensity is not None:
                self._meters.append(_ChargedMeter(_core.CarbonEmissionWindows, CarbonEmissionMeasurement,
                                                  zeus_monitor, carbon_intensity))
            if electricity_price is not None:
                self._meters.append(_ChargedMeter(_core.EnergyCostWindows, EnergyCostMeasurement,
                                                  zeus_monitor, electricity_price))
            if not self._meters:
                self._meters.append(_EnergyMeter(zeus_monitor))
            self.monitor = zeus_monitor
        except Exception as e:  # noqa: BLE001 (never break the host program)
            self._meters = []
            _warn(f"zeus_native: energy is not measured ({type(e).__name__}: {e}); the program runs on")

    @property
    def measuring(self) -> bool:
        """Whether the devices opened (else every window is None)."""
        return bool(self._meters)

    def start(self) -> None:
        """Attach the trackers to their runs and begin the run's window."""
        if self._started:
            return
        self._started = True
        for tracker in self.trackers:
            self._guarded(tracker, "start", tracker.start)
        self.begin_window(RUN_WINDOW)

    def begin_window(self, window: str, step: Optional[int] = None) -> None:
        """Begin `window` (starting the run first if it is not yet). ValueError when it is open."""
        if window in self._open:
            raise ValueError(f"the energy window {window!r} is already open; end it first with end_window")
        if not self._started and window != RUN_WINDOW:
            self.start()
        self._open[window] = step
        for meter in self._meters:
            try:
                meter.begin(_WINDOW_PREFIX + window)
            except Exception as e:  # noqa: BLE001
                _warn(f"zeus_native: the energy window {window!r} could not begin ({e})")

    def end_window(self, window: str, step: Optional[int] = None,
                   interrupted: bool = False) -> Optional[EnergyRecord]:
        """End `window`, log it to every tracker (at `step`, else the one given to
        begin_window) and return its record; None when nothing was measured."""
        if window not in self._open:
            raise ValueError(f"the energy window {window!r} is not open; begin it first with begin_window")
        begun_step = self._open.pop(window)
        step = begun_step if step is None else step
        results = []
        for meter in self._meters:
            try:
                results.append(meter.end(_WINDOW_PREFIX + window))
            except Exception as e:  # noqa: BLE001
                _warn(f"zeus_native: the energy window {window!r} could not end ({e})")
                return None
        if not results:
            return None
        record = make_record(results[0], window, step, self.prefix, results[1:], interrupted)
        self.log(record)
        return record

    @contextmanager
    def window(self, window: str, step: Optional[int] = None) -> Iterator[None]:
        """begin_window/end_window around a block; an exception in it ends the window as interrupted."""
        self.begin_window(window, step)
        try:
            yield
        except BaseException:
            self.end_window(window, interrupted=True)
            raise
        self.end_window(window)

    def log(self, record: EnergyRecord) -> None:
        """Hand `record` to every tracker (a failing tracker is a warning)."""
        for tracker in self.trackers:
            self._guarded(tracker, "log", lambda: tracker.log(record))

    def close(self, interrupted: bool = False) -> Optional[EnergyRecord]:
        """End every open window (the run's last, with the totals), log them and
        finish the trackers' runs; returns the run's record. Idempotent."""
        if not self._started:
            return None
        self._started = False
        total = None
        for window in [w for w in self._open if w != RUN_WINDOW] + [RUN_WINDOW]:
            if window in self._open:
                record = self.end_window(window, interrupted=interrupted)
                total = record if window == RUN_WINDOW else total
        for tracker in self.trackers:
            self._guarded(tracker, "close", lambda: tracker.close(interrupted))
        return total

    def __enter__(self) -> "EnergyLogger":
        self.start()
        return self

    def __exit__(self, exc_type: Any, exc: Any, traceback: Any) -> None:
        self.close(interrupted=exc_type is not None)

    @staticmethod
    def _guarded(tracker: Tracker, what: str, call: Any) -> None:
        try:
            call()
        except Exception as e:  # noqa: BLE001 (a tracker never breaks the program)
            _warn(f"zeus_native: {getattr(tracker, 'name', type(tracker).__name__)} {what} failed, "
                  f"energy not logged there ({type(e).__name__}: {e})")
