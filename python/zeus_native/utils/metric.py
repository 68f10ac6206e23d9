"""Metrics (the original's zeus.utils.metric)."""

from __future__ import annotations

import csv
from datetime import datetime
from pathlib import Path
from typing import List, Optional, Tuple, Union


def zeus_cost(energy: float, time: float, eta_knob: float, max_power: float) -> float:
    """Zeus's energy-time cost: eta * energy + (1 - eta) * max_power * time.

    eta_knob in [0, 1] weighs energy (J) against time (s) at `max_power` (W).
    """
    if not 0.0 <= eta_knob <= 1.0:
        raise ValueError(f"eta_knob must be between 0 and 1, got {eta_knob}; 0.5 weighs energy and time equally")
    return eta_knob * energy + (1 - eta_knob) * max_power * time


def _power_log(logfile: Union[Path, str]) -> List[Tuple[float, float]]:
    """(Unix s, W) rows of a power log (CSV with "Time" and "Power" in mW; its last
    line, a summary, is left out as the original does)."""
    with open(logfile, newline="") as f:
        rows = list(csv.DictReader(f))[:-1]
    if not rows or "Time" not in rows[0] or "Power" not in rows[0]:
        raise ValueError(f"{logfile} is not a power log: it needs a header with Time and Power and at least two rows")
    return [(datetime.fromisoformat(r["Time"].strip()).timestamp(), float(r["Power"]) / 1000.0) for r in rows]


def _window(rows: List[Tuple[float, float]], start: Optional[float], end: Optional[float],
            wrap: bool) -> List[Tuple[float, float]]:
    first, last = rows[0][0], rows[-1][0]
    if start is not None:
        origin = last if wrap and start < 0.0 else first
        rows = [r for r in rows if r[0] >= origin + start]
    if end is not None:
        origin = last if wrap and end < 0.0 else first
        rows = [r for r in rows if r[0] <= origin + end]
    if len(rows) < 2:
        raise ValueError("At least 2 points are needed to compute area under curve: widen the window")
    return rows


def _area(rows: List[Tuple[float, float]]) -> float:
    return sum((t1 - t0) * (w0 + w1) / 2.0 for (t0, w0), (t1, w1) in zip(rows, rows[1:]))


def energy(logfile: Union[Path, str], start: Optional[float] = None, end: Optional[float] = None) -> float:
    """Energy (J) in a power log between `start` and `end` (s from its first row; negative:
    from its last row), by the trapezoid rule, as the original's."""
    return _area(_window(_power_log(logfile), start, end, wrap=True))


def avg_power(logfile: Union[Path, str], start: Optional[float] = None, end: Optional[float] = None) -> float:
    """Average power (W) in a power log between `start` and `end` (s from its first row)."""
    rows = _window(_power_log(logfile), start, end, wrap=False)
    return _area(rows) / (rows[-1][0] - rows[0][0])
