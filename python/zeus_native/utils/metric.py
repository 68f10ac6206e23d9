"""Metrics (the original's zeus.utils.metric)."""

from __future__ import annotations


def zeus_cost(energy: float, time: float, eta_knob: float, max_power: float) -> float:
    """Zeus's energy-time cost: eta * energy + (1 - eta) * max_power * time.

    eta_knob in [0, 1] weighs energy (J) against time (s) at `max_power` (W).
    """
    if not 0.0 <= eta_knob <= 1.0:
        raise ValueError(f"eta_knob must be between 0 and 1, got {eta_knob}; 0.5 weighs energy and time equally")
    return eta_knob * energy + (1 - eta_knob) * max_power * time
