"""A window's share of each GPU's energy for this process (ZeusMonitor(attribute_to=...)).

On a GPU shared with other processes (a notebook, a shared node) a window's
GPU energy is split among the processes the driver saw on the GPU during the
window, by their SM utilization over it, plus a remainder (the idle draw when
its power is known, energy while no process ran); docs/attribution.md.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import operator
import os
from typing import Any, Dict, Iterable, List, Optional, Tuple, Union

from zeus_native import _core

#: What ZeusMonitor's attribute_to accepts.
AttributeTo = Union[str, int, Iterable[int], None]

#: The largest PID the driver can report (its PIDs are 32-bit).
_MAX_PID = 2**32 - 1

#: How often the driver's process data is read while a window is open (s).
POLL_PERIOD_S = 1.0


@dataclasses.dataclass(frozen=True)
class EnergyShare:
    """One GPU's window energy, split: the share of the processes asked for
    (`energy`), the other processes' (`others`) and the `remainder`, which add
    up to `gpu_energy` exactly (whole millijoules, J here).

    method says how the share was obtained, as the exporter's `attribution`
    label: "exclusive" (the processes asked for were alone on the GPU: the
    whole energy less the idle estimate, exact), "utilization" (shared: in
    proportion to the driver's per-process SM utilization over the window),
    "equal_split" (shared, no utilization samples: equal parts), or None when
    none of them was seen on the GPU (energy 0) or the driver gives no process
    data (energy NaN; `warnings` says why).
    """

    gpu_energy: float  # J: the window's GPU energy (the Measurement's, to the mJ)
    energy: float  # J: the share of the processes asked for; NaN when unknown
    method: Optional[str]
    pids: List[int]  # the processes asked for that were seen on the GPU
    others: float  # J: every other process's share
    idle: float  # J: the idle estimate (idle_power × time) nobody was charged with
    no_process: float  # J: energy above idle while no process was on the GPU
    processes: Dict[int, float]  # J by PID: every process seen on the GPU, the ones asked for included
    idle_power: Optional[float]  # W, as given; None: the idle draw is split with the rest
    warnings: List[str] = dataclasses.field(default_factory=list)

    @property
    def remainder(self) -> float:
        """The energy nobody was charged with (J): idle + no_process."""
        return self.idle + self.no_process

    @classmethod
    def _from_native(cls, d: Dict[str, Any]) -> "EnergyShare":
        return cls(gpu_energy=d["gpu_energy"], energy=d["energy"] if d["known"] else math.nan, method=d["method"],
                   pids=list(d["pids"]), others=d["others"], idle=d["idle"], no_process=d["no_process"],
                   processes=dict(d["processes"]), idle_power=d["idle_power"], warnings=list(d["warnings"]))


def _target(attribute_to: AttributeTo) -> Tuple[str, List[int]]:
    """(kind, pids) for the native WindowShares from ZeusMonitor's attribute_to."""
    if isinstance(attribute_to, str):
        if attribute_to not in ("process", "process_tree"):
            raise ValueError(f'attribute_to must be "process", "process_tree", a PID or a list of PIDs, '
                             f"not {attribute_to!r}")
        return attribute_to, [os.getpid()]
    if isinstance(attribute_to, bool):
        raise TypeError("attribute_to must be \"process\", \"process_tree\", a PID or a list of PIDs, not a bool")
    if isinstance(attribute_to, (bytes, bytearray)):  # iterable of ints, but no list of PIDs
        raise TypeError(f'attribute_to must be "process", "process_tree", a PID or a list of PIDs, '
                        f"not {attribute_to!r}")
    if hasattr(attribute_to, "__index__"):  # an int, numpy's included
        return "process", [_pid(attribute_to)]
    try:
        pids = [_pid(p) for p in attribute_to]  # type: ignore[union-attr]
    except TypeError:
        raise TypeError(f'attribute_to must be "process", "process_tree", a PID or a list of PIDs, '
                        f"not {attribute_to!r}") from None
    if not pids:
        raise ValueError("attribute_to is an empty list of PIDs: give at least one, or \"process\"")
    return "pids", pids


def _pid(value: Any) -> int:
    if isinstance(value, bool):
        raise TypeError(f"a PID must be an int, not {value!r}")
    pid = operator.index(value)
    if not 0 < pid <= _MAX_PID:
        raise ValueError(f"PID {pid} is not a process id: give a positive PID (os.getpid() for this process)")
    return pid


def _idle_powers(idle_power: Union[float, Dict[int, float], None], gpu_indices: List[int]) -> Dict[int, float]:
    """{GPU index: W} from ZeusMonitor's idle_power (one number for every GPU, or per GPU)."""
    if idle_power is None:
        return {}
    if isinstance(idle_power, dict):
        given = {_gpu_index(gpu): value for gpu, value in idle_power.items()}
        unknown = sorted(set(given) - set(gpu_indices))
        if unknown:
            raise ValueError(f"idle_power names GPU {unknown[0]}, which the monitor does not measure "
                             f"(gpu_indices={gpu_indices})")
    else:
        given = {gpu: idle_power for gpu in gpu_indices}
    return {gpu: _watts(gpu, value) for gpu, value in given.items()}


def _gpu_index(gpu: Any) -> int:
    """A GPU index of idle_power's dict: an int (numpy's too), not text or a bool."""
    try:
        if isinstance(gpu, bool):
            raise TypeError
        return operator.index(gpu)
    except TypeError:
        raise TypeError(f"idle_power names GPU {gpu!r}: give {{GPU index: W}} with int indices, "
                        f"e.g. {{0: 60.0}}") from None


def _watts(gpu: int, value: Any) -> float:
    """One GPU's idle power: a finite number of W >= 0 (text and bools are refused, not converted)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"idle_power of GPU {gpu} is {value!r}: give the GPU's idle draw in W as a number, or None")
    watts = float(value)
    if not (math.isfinite(watts) and watts >= 0):
        raise ValueError(f"idle_power of GPU {gpu} is {watts!r}: give the GPU's idle draw in W (>= 0), or None")
    return watts


def _open(gpus: Any, gpu_indices: List[int], attribute_to: AttributeTo, idle_power: Union[float, Dict[int, float], None],
          idle_policy: str) -> Any:
    """The native WindowShares for a ZeusMonitor's arguments."""
    if idle_policy not in ("unattributed", "allocation"):
        raise ValueError(f'idle_policy must be "unattributed" or "allocation", not {idle_policy!r}')
    kind, pids = _target(attribute_to)
    return _core.WindowShares(gpus, gpu_indices, kind, pids, idle_policy, _idle_powers(idle_power, gpu_indices),
                              POLL_PERIOD_S)
