"""The energy of a Hugging Face Trainer run, per epoch and in total, logged to
MLflow and/or W&B.

    from zeus_native.integrations.hf import HFEnergyCallback
    from zeus_native.integrations.mlflow import MLflowTracker

    trainer = Trainer(..., callbacks=[HFEnergyCallback(MLflowTracker())])
    trainer.train()

The Trainer calls no callback when training stops on an exception (Ctrl-C):
the run's total and the epoch cut short are then logged when the interpreter
exits, before mlflow and wandb close their runs.
"""

from __future__ import annotations

import atexit
from typing import TYPE_CHECKING, Any

from zeus_native.integrations._energy import EnergyLogger, Tracker

EPOCH_WINDOW = "epoch"


def _callback_class() -> type:
    """HFEnergyCallback, a subclass of transformers' TrainerCallback, made on first use."""
    try:
        from transformers import TrainerCallback  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        TrainerCallback = object  # noqa: N806
        available = False
    else:
        available = True

    class HFEnergyCallback(TrainerCallback):  # type: ignore[valid-type,misc,unused-ignore]
        """Logs each epoch's energy (step: the epoch's index) and the run's total to
        `trackers`; `options` are EnergyLogger's (gpu_indices, carbon_intensity...).
        Only the main process (rank 0) measures and logs; give it every GPU of the
        node in gpu_indices to count the other ranks' GPUs there."""

        def __init__(self, *trackers: Tracker, **options: Any) -> None:
            """Open the devices (a warning when they cannot be opened); ImportError without transformers."""
            if not available:
                raise ImportError("HFEnergyCallback needs Hugging Face transformers (pip install transformers); "
                                  "use zeus_native.integrations.EnergyLogger with your own loop otherwise")
            self.logger = EnergyLogger(*trackers, **options)
            self._epoch = 0
            self._active = False

        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            """Begin the run's window (on the main process only)."""
            self._active = bool(getattr(state, "is_world_process_zero", True))
            if self._active:
                # A train() before this one that stopped on an exception the program caught.
                atexit.unregister(self._close_interrupted)
                self.logger.close(interrupted=True)
                self._epoch = 0
                self.logger.start()
                atexit.register(self._close_interrupted)

        def on_epoch_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            """Begin the epoch's window."""
            if self._active:
                self.logger.begin_window(EPOCH_WINDOW, step=self._epoch)

        def on_epoch_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            """End and log the epoch's window."""
            if self._active:
                self.logger.end_window(EPOCH_WINDOW)
                self._epoch += 1

        def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            """End and log the run's window."""
            if self._active:
                atexit.unregister(self._close_interrupted)
                self.logger.close()
                self._active = False

        def _close_interrupted(self) -> None:
            # Training stopped on an exception: the Trainer never called on_train_end.
            self.logger.close(interrupted=True)

    HFEnergyCallback.__module__ = __name__
    return HFEnergyCallback


if TYPE_CHECKING:
    class HFEnergyCallback:
        """Logs a Trainer run's energy per epoch and in total (a TrainerCallback subclass at run time)."""

        logger: EnergyLogger

        def __init__(self, *trackers: Tracker, **options: Any) -> None: ...


def __getattr__(name: str) -> Any:
    # transformers is imported when HFEnergyCallback is first used, never by importing this module.
    if name == "HFEnergyCallback":
        cls = _callback_class()
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
