"""A training run's energy (with its carbon emission and electricity cost when
configured) logged to experiment trackers, with its provenance.

    from zeus_native.integrations.mlflow import MLflowEnergyLogger

    with MLflowEnergyLogger() as energy:           # the run's total when the block ends
        for epoch in range(3):
            with energy.window("epoch", step=epoch):
                train_one_epoch()

Trackers: zeus_native.integrations.mlflow (MLflowTracker) and
zeus_native.integrations.wandb (WandbTracker); callbacks for the Hugging Face
Trainer (zeus_native.integrations.hf) and PyTorch Lightning
(zeus_native.integrations.lightning). mlflow, wandb, transformers and lightning
are imported only by the module that needs each.
"""

from zeus_native.integrations._energy import (
    RUN_WINDOW,
    EnergyLogger,
    EnergyRecord,
    Tracker,
    energy_metrics,
    energy_provenance,
    make_record,
)

__all__ = ["EnergyLogger", "EnergyRecord", "Tracker", "energy_metrics", "energy_provenance", "make_record",
           "RUN_WINDOW"]
