"""A training run's energy in Weights & Biases: metrics per window (each window
kind on its own step axis, "<prefix>/<window>/step"), the run's totals in the
summary too, and each window's provenance in the summary
("<prefix>/<window>/provenance"). Works offline (WANDB_MODE=offline).

    from zeus_native.integrations.wandb import WandbEnergyLogger

    with WandbEnergyLogger(project="my-project") as energy:   # wandb.run, or wandb.init(...)
        for epoch in range(3):
            with energy.window("epoch", step=epoch):
                train_one_epoch()

wandb is imported when a tracker is made; without it that is a warning and
nothing is logged (the program runs on).
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Set

from zeus_native.integrations._energy import RUN_WINDOW, EnergyLogger, EnergyRecord, import_tracker, make_record


class WandbTracker:
    """Logs EnergyRecords to a W&B run: `run`, else wandb.run (the Hugging Face
    WandbCallback's, your wandb.init's), else wandb.init(**init_options), which
    close() finishes (exit code 1 after an exception)."""

    name = "W&B"

    def __init__(self, run: Any = None, **init_options: Any) -> None:
        """Import wandb (a warning, not an error, when it is not installed)."""
        self.run = run
        self._given_run = run
        self.init_options = init_options
        self._owned = False
        self._defined: Set[str] = set()
        self._wandb = import_tracker("wandb", self.name)

    @property
    def available(self) -> bool:
        """Whether wandb could be imported."""
        return self._wandb is not None

    def start(self) -> None:
        """Find (or init) the run to log to."""
        if self._wandb is None or self.run is not None:
            return
        if self._wandb.run is not None:
            self.run = self._wandb.run
        else:
            self.run = self._wandb.init(**self.init_options)
            self._owned = True

    def log(self, record: EnergyRecord) -> None:
        """The record's metrics on its window's step axis, and its provenance in the summary."""
        if self._wandb is None:
            return
        self.start()
        base = f"{record.prefix}/{record.window}/"
        if record.window not in self._defined:
            self.run.define_metric(base + "step")
            self.run.define_metric(base + "*", step_metric=base + "step")
            self._defined.add(record.window)
        data = dict(record.metrics)
        if record.step is not None:
            data[base + "step"] = record.step
        self.run.log(data)
        self.run.summary[base + "provenance"] = record.provenance
        if record.window == RUN_WINDOW:
            self.run.summary.update(record.metrics)

    def close(self, interrupted: bool) -> None:
        """Finish the run if start() began it; the next start() finds its run anew."""
        owned, self._owned, run, self.run = self._owned, False, self.run, self._given_run
        self._defined.clear()
        if owned and run is not None:
            run.finish(exit_code=1 if interrupted else 0)


class WandbEnergyLogger(EnergyLogger):
    """An EnergyLogger to W&B: `run` or wandb.init's keyword arguments (project,
    dir, mode...) as WandbTracker's; devices, providers and prefix as EnergyLogger's."""

    def __init__(self, run: Any = None, *, gpu_indices: Optional[List[int]] = None,
                 cpu_indices: Optional[List[int]] = None, carbon_intensity: Any = None,
                 electricity_price: Any = None, monitor: Any = None, prefix: str = "energy",
                 **init_options: Any) -> None:
        """Open the devices and import wandb (each a warning when it fails)."""
        self.tracker = WandbTracker(run, **init_options)
        super().__init__(self.tracker, gpu_indices=gpu_indices, cpu_indices=cpu_indices,
                         carbon_intensity=carbon_intensity, electricity_price=electricity_price, monitor=monitor,
                         prefix=prefix)


def log_energy(result: Any, window: str = "window", step: Optional[int] = None, *, run: Any = None,
               prefix: str = "energy", extra: Sequence[Any] = ()) -> Optional[EnergyRecord]:
    """Log a window you measured yourself (a ZeusMonitor Measurement, a
    CarbonEmissionMeasurement or an EnergyCostMeasurement; carbon or cost results
    of the same span in `extra`) to wandb.run (or `run`). A tracker that fails is
    a warning; returns the record."""
    record = make_record(result, window, step, prefix, extra)
    tracker = WandbTracker(run)
    EnergyLogger._guarded(tracker, "log", lambda: tracker.log(record))
    return record
