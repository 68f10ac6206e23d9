"""Energy windows (the original's zeus.monitor.energy)."""

from __future__ import annotations

import dataclasses
import logging
import math
import os
from functools import cached_property
from pathlib import Path
from typing import Any, Callable, Dict, Hashable, List, Optional

from zeus_native import _core, _exit
from zeus_native.device import _sets
from zeus_native.device._indices import check_cpu_indices, check_gpu_indices
from zeus_native.device.cpu.common import ZeusCPUNoPermissionError
from zeus_native.device.gpu.common import ZeusGPUNoPermissionError
from zeus_native.monitor import attribution as _attribution
from zeus_native.monitor.attribution import AttributeTo, EnergyShare
from zeus_native.utils.framework import DEFAULT_SYNC, sync_function

logger = logging.getLogger(__name__)


@dataclasses.dataclass
class Measurement:
    """What one energy window measured (the original's Measurement), in J and s.

    The original's fields first (time, gpu_energy, cpu_energy, dram_energy,
    soc_energy; soc_energy is {metric: J} here), then what this package adds:
    start_time (Unix s), provenance (how each value was obtained: {"gpu": {index:
    {"source", "warnings", "lost", "edge_error_bound_j"}}, "cpu", "dram", "soc"}),
    window_warnings (about the window as a whole) and attribution (with
    ZeusMonitor(attribute_to=...): {index: EnergyShare}, the share of each GPU's
    energy of the processes asked for; {} otherwise). A plain dataclass:
    asdict, pickle, copy and == work; built by hand, provenance says
    "hardware counter" (NaN marks a device lost).
    """

    time: float
    gpu_energy: Dict[int, float]
    cpu_energy: Optional[Dict[int, float]] = None
    dram_energy: Optional[Dict[int, float]] = None
    soc_energy: Optional[Dict[str, float]] = None
    # This package's additions: outside ==, repr and dataclasses.asdict/fields
    # (removed from the dataclass's fields below), so that a Measurement built
    # from the original's five fields equals a measured one with the same values.
    start_time: Optional[float] = dataclasses.field(default=None, repr=False, compare=False)
    provenance: Optional[Dict[str, Dict[Any, Dict[str, Any]]]] = dataclasses.field(
        default=None, repr=False, compare=False)
    window_warnings: List[str] = dataclasses.field(default_factory=list, repr=False, compare=False)
    attribution: Dict[int, EnergyShare] = dataclasses.field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Fill in provenance from the values when it is not given."""
        if self.provenance is None:
            self.provenance = self._native().provenance

    @classmethod
    def _from_native(cls, native: Any) -> "Measurement":
        """A Measurement whose fields are read from `native` (a _core.Measurement), each when first accessed."""
        m = _new_object(cls)
        m._pending = native
        return m

    def _fill_field(self, name: str) -> Any:
        """The field `name`, read from the native result on its first access (the instance's own value first)."""
        fields = self.__dict__
        native = fields.get("_pending")
        if native is None:
            raise AttributeError(f"this Measurement's field {name!r} was deleted")
        return fields.setdefault(name, _NATIVE_READERS[name](native))

    def _fill(self) -> None:
        """Read every field not yet read from the native result, and let go of it."""
        for name in _NATIVE_READERS:
            self._fill_field(name)
        self.__dict__.pop("_pending", None)

    def __getstate__(self) -> Dict[str, Any]:
        """The fields (pickle, copy), read from the native result first if they were not yet."""
        if "_pending" in self.__dict__:
            self._fill()
        return dict(self.__dict__)

    def _native(self) -> Any:
        return _core.Measurement(float(self.time), dict(self.gpu_energy), self.cpu_energy, self.dram_energy,
                                 self.soc_energy, self.start_time, self.provenance, list(self.window_warnings))

    @cached_property
    def total_energy(self) -> float:
        """GPU energy summed (J), as the original's; GPUs lost during the window are left out."""
        fields = self.__dict__
        if "gpu_energy" not in fields and "_pending" in fields:
            return fields["_pending"].total_energy  # the same sum, without building gpu_energy
        return sum(v for v in self.gpu_energy.values() if not math.isnan(v))

    @property
    def lost_gpus(self) -> List[int]:
        """GPUs that stopped answering during the window: NaN in gpu_energy, out of total_energy."""
        gpus = (self.provenance or {}).get("gpu", {})
        return sorted(i for i, v in self.gpu_energy.items() if math.isnan(v) or gpus.get(i, {}).get("lost"))

    @property
    def warnings(self) -> List[str]:
        """Everything that makes a value less trustworthy, one line each (empty when none)."""
        lines = list(self.window_warnings)
        for kind, label in (("gpu", "GPU"), ("cpu", "CPU"), ("dram", "DRAM")):
            for index, entry in sorted((self.provenance or {}).get(kind, {}).items()):
                lines += [f"{label} {index}: {w}" for w in entry.get("warnings", [])]
        return lines

    @property
    def trustworthy(self) -> bool:
        """True when no value carries a warning."""
        return not self.warnings

    def to_json(self, command: str = "energy", one_line: bool = False) -> str:
        """The bytes `zeus energy --format json` writes for this window (one_line: the JSON Lines summary record)."""
        return self._native().to_json(command, one_line)

    def to_csv(self) -> str:
        """The bytes `zeus energy --format csv` writes: a header and one row per device."""
        return self._native().to_csv()

    def to_table(self, command: str = "energy") -> str:
        """The table `zeus energy` prints (time, energy and average power per device, warnings)."""
        return self._native().to_table(command)


_new_object = object.__new__
_NO_DEFAULT = object()
# Each field of a Measurement end_window returned, from its native result.
_NATIVE_READERS = {
    "time": lambda n: n.time,
    "gpu_energy": lambda n: n.gpu_energy,
    "cpu_energy": lambda n: n.cpu_energy,
    "dram_energy": lambda n: n.dram_energy,
    "soc_energy": lambda n: n.soc_energy,
    "start_time": lambda n: n.start_time,
    "provenance": lambda n: n.provenance,
    "window_warnings": lambda n: list(n.window_warnings),
    "attribution": lambda n: {},  # set by end_window when the monitor attributes
}


class _ReadOnFirstAccess:
    """A Measurement field of a result end_window returned: read from the native
    result the first time it is accessed, then an ordinary instance attribute
    (the instance's own value comes first). On the class, the field's default,
    as a dataclass's."""

    __slots__ = ("name", "default")

    def __init__(self, name: str, default: Any) -> None:
        self.name = name
        self.default = default

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            if self.default is _NO_DEFAULT:
                raise AttributeError(self.name)
            return self.default
        return obj._fill_field(self.name)


for _field in dataclasses.fields(Measurement):
    setattr(Measurement, _field.name, _ReadOnFirstAccess(
        _field.name, _NO_DEFAULT if _field.default is dataclasses.MISSING else _field.default))
del _field
# The original's fields only, for dataclasses.fields/asdict/astuple (the
# constructor, pickle and copy keep the additions).
for _extra in ("start_time", "provenance", "window_warnings", "attribution"):
    del Measurement.__dataclass_fields__[_extra]  # type: ignore[attr-defined]
del _extra


@dataclasses.dataclass
class MeasurementState:
    """Where an open window began (the original's MeasurementState): start time (s) and counters (J)."""

    time: float
    gpu_energy: Dict[int, float]
    cpu_energy: Optional[Dict[int, float]] = None
    dram_energy: Optional[Dict[int, float]] = None
    soc_energy: Optional[Dict[str, float]] = None

    @cached_property
    def total_energy(self) -> float:
        """GPU energy summed (J)."""
        return sum(self.gpu_energy.values())


def _rapl_needs_root(cpu_indices: Any) -> RuntimeError:
    """The original's RuntimeError for CPU indices a user without the privilege asked for."""
    return RuntimeError(
        f"Root privilege is required to read RAPL metrics (the CPU energy counters of cpu_indices={list(cpu_indices)}); "
        "run as root, or read them through the zeusd daemon (set ZEUSD_SOCK_PATH), or disable CPU measurement "
        "by passing cpu_indices=[] to ZeusMonitor (python -m zeus_native.show_env says which file is unreadable)"
    )


def _open_log(log_file: str | Path) -> str:
    path = os.fspath(log_file)
    try:
        directory = os.path.dirname(path)
        if directory:
            os.makedirs(directory, exist_ok=True)
        # Replaced, as the original's ZeusMonitor does (open(log_file, "w")); the
        # native monitor then writes the header into the empty file.
        with open(path, "w"):
            pass
    except OSError as e:
        raise type(e)(
            e.errno,
            f"cannot write the log file {path!r} ({e.strerror}); pass a log_file in a writable directory, or None",
        ) from e
    return path


class ZeusMonitor(_core.EnergyMonitor):
    """Measure the GPU, CPU and SoC energy of named windows of your program.

        monitor = ZeusMonitor(gpu_indices=[0, 1])
        monitor.begin_window("step")
        ...
        measurement = monitor.end_window("step")   # .time (s), .gpu_energy {index: J}

    Windows may nest and overlap and be used from several threads; device reads
    release the GIL. GPU indices are CUDA indices (positions in
    CUDA_VISIBLE_DEVICES); CPU indices are RAPL packages. sync_execution_with is
    "torch", "jax" or "cupy" (imported now; an explicit choice that is not
    installed is an error here; the default "torch" without PyTorch means no sync).

    wait_for_counter_refresh (not in the original): at each window edge, wait
    for the energy counters' next two refreshes (about 0.2 s) and take the
    edge from them, instead of estimating it from the last refresh and one
    power reading (each value's provenance "edge_error_bound_j" says how far
    that estimate can be off).

    window_edges (not in the original): "sampled" (the default) takes each
    edge from a watcher thread's latest sample (read just after each counter
    refresh) plus power × the time since, so an edge never waits for the
    driver, whatever the number of GPUs; CPU packages (RAPL) and a SoC are
    read by the same thread every few milliseconds and extrapolated likewise,
    with a bound from the package's power ceiling. "synchronous" reads every
    GPU's energy counter at each window edge, as the original does
    (docs/monitoring.md, "Window edges").

    attribute_to (not in the original): on a GPU shared with other processes,
    each window's Measurement.attribution also says which part of each GPU's
    energy was this process's ("process"), this process's and its
    descendants' ("process_tree"), one PID's or a list of PIDs': {index:
    EnergyShare}, with how it was obtained ("exclusive", "utilization",
    "equal_split"), the other processes' part and the remainder, adding up to
    the GPU's window energy. idle_power (W, one for every GPU or {index: W})
    is the GPUs' idle draw, kept out of the shares in the remainder
    (idle_policy="unattributed") or shared equally by the processes on the GPU
    ("allocation"); without it the idle draw is split with the rest
    (docs/attribution.md, "A window's share").
    """

    def __init__(
        self,
        gpu_indices: list[int] | None = None,
        cpu_indices: list[int] | None = None,
        approx_instant_energy: bool = False,
        log_file: str | Path | None = None,
        sync_execution_with: str = DEFAULT_SYNC,
        wait_for_counter_refresh: bool = False,
        window_edges: str = "sampled",
        attribute_to: AttributeTo = None,
        idle_power: float | Dict[int, float] | None = None,
        idle_policy: str = "unattributed",
    ) -> None:
        """Open the devices and check every argument (see the class docstring)."""
        if window_edges not in ("synchronous", "sampled"):
            raise ValueError(f'window_edges must be "synchronous" or "sampled", not {window_edges!r}')
        if attribute_to is None and (idle_power is not None or idle_policy != "unattributed"):
            raise ValueError("idle_power and idle_policy apply to the energy shares: pass attribute_to "
                             '(e.g. attribute_to="process") with them, or leave them out')
        sync = sync_function(sync_execution_with)
        gpus = _sets.gpus()
        cpus = _sets.cpus()
        if cpus.init_error is not None:
            if cpus.init_error_code == "no permission" and cpu_indices:
                raise _rapl_needs_root(cpu_indices) from ZeusCPUNoPermissionError(cpus.init_error)
            cpus_arg = None
        else:
            cpus_arg = cpus
        soc = _sets.soc()
        soc_arg = soc if soc.init_error is None else None
        if gpus.init_error is not None and gpu_indices:
            from zeus_native.device.gpu.common import ZeusGPUInitError

            raise ZeusGPUInitError(gpus.init_error)
        gpu_indices = None if gpu_indices is None else check_gpu_indices(gpus, gpu_indices)
        cpu_indices = None if cpu_indices is None else check_cpu_indices(cpus, cpu_indices)
        path = _open_log(log_file) if log_file is not None else None
        try:
            super().__init__(
                gpus,
                cpus_arg,
                soc_arg,
                None if gpu_indices is None else [int(i) for i in gpu_indices],
                None if cpu_indices is None else [int(i) for i in cpu_indices],
                bool(approx_instant_energy),
                path,
                sync,
                bool(wait_for_counter_refresh),
                str(window_edges),
            )
        except (ZeusGPUNoPermissionError, ZeusCPUNoPermissionError) as e:
            # The packages were listed but their counters are root's (CVE-2020-8694).
            if cpu_indices and any(cpus.get_zone_path(i) in str(e) for i in cpu_indices):
                raise _rapl_needs_root(cpu_indices) from e
            raise
        self.gpus = gpus
        self.cpus = cpus
        self.soc = soc
        self.soc_is_present = soc_arg is not None
        self.sync_with = str(sync_execution_with)
        self.approx_instant_energy = bool(approx_instant_energy)
        self.log_file = path
        self.wait_for_counter_refresh = bool(wait_for_counter_refresh)
        self.window_edges = str(window_edges)
        _exit.track(self, "energy", _core.EnergyMonitor._stop_threads)
        self.attribute_to = attribute_to
        self._shares: Any = None
        if attribute_to is not None:
            self._shares = _attribution._open(gpus, list(self.gpu_indices), attribute_to, idle_power, idle_policy)
            _exit.track(self._shares, "energy", _core.WindowShares._stop_thread)

    def begin_window(self, key: Hashable, sync_execution: bool = True, restart: bool = False) -> None:
        """Begin the window `key` (any hashable, as in the original); ValueError when it is already open
        (restart=True begins it again)."""
        names = self.__dict__.get("_window_names")
        if type(key) is str and not names:
            name = key
        else:
            if names is None:
                names = self.__dict__["_window_names"] = _WindowNames()
            name = names.begin(key, self._open_window_names)
        try:
            _native_begin(self, name, sync_execution, restart)
        except ValueError as e:
            if names is not None and name not in self._open_window_names():
                names.end(name)
            raise _about_key(e, name, key) from None
        if self._shares is not None:
            self._shares.begin(name)

    @property
    def open_windows(self) -> List[Hashable]:
        """The keys of the windows now open."""
        names = self.__dict__.get("_window_names")
        return [names.key(name) if names else name for name in self._open_window_names()]

    def _open_window_names(self) -> List[str]:
        """The native names of the windows now open (what the log file calls them)."""
        return _native_open_windows.__get__(self)

    def reset_windows(self) -> List[Hashable]:
        """Drop every open window (their measurements are lost); returns their keys."""
        names = self.__dict__.pop("_window_names", None)
        if self._shares is not None:
            self._shares.reset()
        keys = [names.key(name) if names else name for name in super().reset_windows()]
        if keys:
            logger.info("ZeusMonitor reset dropped active windows: %s", keys)
        else:
            logger.info("ZeusMonitor reset with no active windows to drop.")
        return keys

    def end_window(self, key: Hashable, sync_execution: bool = True, cancel: bool = False) -> Measurement:
        """End the window `key` and return its Measurement; ValueError when it is not open."""
        names = self.__dict__.get("_window_names")
        name = key if type(key) is str and not names else (names or _WindowNames()).lookup(key, self._open_window_names)
        m = _new_object(Measurement)
        # Fields are read from the native result when first accessed (Measurement._fill_field);
        # the original's warnings came from the native end_window.
        try:
            native = _native_end(self, name, sync_execution, cancel)
        except ValueError as e:
            raise _about_key(e, name, key) from None
        if names:
            names.end(name)
        m._pending = native
        if self._shares is not None:
            if cancel:
                self._shares.cancel(name)
            else:
                split = self._shares.end(name, native)
                m.attribution = {gpu: EnergyShare._from_native(d) for gpu, d in split.items()}
        if cancel and m.cpu_energy is None:
            m.cpu_energy = {}  # the original's cancelled window: {cpu: 0.0} per CPU index, {} without any
        return m


_native_begin = _core.EnergyMonitor.begin_window
_native_end = _core.EnergyMonitor.end_window
_native_open_windows = _core.EnergyMonitor.open_windows


def _about_key(error: ValueError, name: str, key: Hashable) -> ValueError:
    """`error` naming the window as the user keyed it (the original's '{key}'), not by a native name
    that had to differ from str(key)."""
    if name is key or name == str(key):
        return error
    return type(error)(str(error).replace(f"'{name}'", f"'{key}'"))


class _WindowNames:
    """The native names of windows keyed by anything but a str, or by a str whose name was taken.

    The original keys windows by any hashable and writes str(key) in its messages and log file
    ("('epoch', 3)", "123"); the native monitor keys them by text. A window's native name is
    str(key), unless an open window of another key already has that name (123 and "123"): then
    "str(key)#2", "#3", ... Only names that are not the key itself are recorded here.
    `open_names` gives the native names of the open windows; it is called only when a name
    could be taken."""

    def __init__(self) -> None:
        self._keys: Dict[str, Hashable] = {}  # native name -> key
        self._names: Dict[Hashable, str] = {}  # key -> native name

    def __bool__(self) -> bool:
        return bool(self._names)

    def key(self, name: str) -> Hashable:
        return self._keys.get(name, name)

    def begin(self, key: Hashable, open_names: Callable[[], List[str]]) -> str:
        """The name for `key`'s new window (recorded), or its open window's (refused or restarted)."""
        name = self.lookup(key, open_names)
        if name is not key:
            self._keys[name] = key
            self._names[key] = name
        return name

    def lookup(self, key: Hashable, open_names: Callable[[], List[str]]) -> str:
        """The name of `key`'s open window; for a key without one, a name no open window has."""
        name = self._names.get(key)
        if name is not None:
            return name
        natural = key if type(key) is str else _natural_name(key)
        if type(key) is str and natural not in self._keys:
            return natural  # str windows not recorded are their own names
        taken = set(open_names()) | self._keys.keys()
        name, n = natural, 1
        while name in taken:
            n += 1
            name = f"{natural}#{n}"
        return name

    def end(self, name: str) -> None:
        key = self._keys.pop(name, _MISSING)
        if key is not _MISSING:
            del self._names[key]


_MISSING = object()


def _natural_name(key: Hashable) -> str:
    hash(key)  # TypeError for an unhashable key, as the original's dict raises
    return str(key)
