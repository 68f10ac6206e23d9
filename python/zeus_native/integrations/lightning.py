"""The energy of a PyTorch Lightning fit, per training epoch and in total,
logged to MLflow and/or W&B.

    from zeus_native.integrations.lightning import LightningEnergyCallback
    from zeus_native.integrations.wandb import WandbTracker

    trainer = lightning.pytorch.Trainer(callbacks=[LightningEnergyCallback(WandbTracker())])
    trainer.fit(model, loader)

An exception in the fit (Ctrl-C included) reaches on_exception: the epoch cut
short and the run's total are logged then, marked interrupted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from zeus_native.integrations._energy import EnergyLogger, Tracker

EPOCH_WINDOW = "epoch"


def _callback_class() -> type:
    """LightningEnergyCallback, a subclass of lightning.pytorch.Callback, made on first use."""
    try:
        from lightning.pytorch import Callback  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        try:
            from pytorch_lightning import Callback  # type: ignore[import-not-found, unused-ignore, no-redef]
        except ImportError:
            Callback = object  # noqa: N806
    available = Callback is not object

    class LightningEnergyCallback(Callback):  # type: ignore[valid-type,misc,unused-ignore]
        """Logs each training epoch's energy (step: trainer.current_epoch) and the
        fit's total to `trackers`; `options` are EnergyLogger's (gpu_indices,
        carbon_intensity...). Only global rank 0 measures and logs; give it every
        GPU of the node in gpu_indices to count the other ranks' GPUs there."""

        def __init__(self, *trackers: Tracker, **options: Any) -> None:
            """Open the devices (a warning when they cannot be opened); ImportError without Lightning."""
            if not available:
                raise ImportError("LightningEnergyCallback needs PyTorch Lightning (pip install lightning); "
                                  "use zeus_native.integrations.EnergyLogger with your own loop otherwise")
            self.logger = EnergyLogger(*trackers, **options)
            self._active = False

        def on_train_start(self, trainer: Any, pl_module: Any) -> None:
            """Begin the run's window (on global rank 0 only)."""
            self._active = bool(getattr(trainer, "is_global_zero", True))
            if self._active:
                self.logger.close(interrupted=True)  # a fit before this one left open (never, normally)
                self.logger.start()

        def on_train_epoch_start(self, trainer: Any, pl_module: Any) -> None:
            """Begin the epoch's window."""
            if self._active:
                self.logger.begin_window(EPOCH_WINDOW, step=int(trainer.current_epoch))

        def on_train_epoch_end(self, trainer: Any, pl_module: Any) -> None:
            """End and log the epoch's window."""
            if self._active:
                self.logger.end_window(EPOCH_WINDOW)

        def on_train_end(self, trainer: Any, pl_module: Any) -> None:
            """End and log the run's window."""
            if self._active:
                self.logger.close()
                self._active = False

        def on_exception(self, trainer: Any, pl_module: Any, exception: BaseException) -> None:
            """The fit stopped on `exception` (Ctrl-C too): log what was measured, marked interrupted."""
            if self._active:
                self.logger.close(interrupted=True)
                self._active = False

    LightningEnergyCallback.__module__ = __name__
    return LightningEnergyCallback


if TYPE_CHECKING:
    class LightningEnergyCallback:
        """Logs a Lightning fit's energy per epoch and in total (a Callback subclass at run time)."""

        logger: EnergyLogger

        def __init__(self, *trackers: Tracker, **options: Any) -> None: ...


def __getattr__(name: str) -> Any:
    # Lightning is imported when LightningEnergyCallback is first used, never by importing this module.
    if name == "LightningEnergyCallback":
        cls = _callback_class()
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
