"""A training run's energy in MLflow: metrics per window and for the whole run,
and a run tag per window with the measurement's provenance (JSON).

    from zeus_native.integrations.mlflow import MLflowEnergyLogger

    with MLflowEnergyLogger() as energy:             # the active run, or a new one
        for epoch in range(3):
            with energy.window("epoch", step=epoch):   # energy/epoch/* at step epoch
                train_one_epoch()
    # energy/run/*: the totals; tag zeus.energy.provenance.<window>

mlflow is imported when a tracker is made; without it that is a warning and
nothing is logged (the program runs on).
"""

from __future__ import annotations

import time
from typing import Any, List, Optional, Sequence

from zeus_native.integrations._energy import (
    EnergyLogger,
    EnergyRecord,
    compact_provenance,
    import_tracker,
    make_record,
)

# A run tag per window: "zeus.energy.provenance.epoch", "zeus.energy.provenance.run".
PROVENANCE_TAG = "zeus.energy.provenance"
_DEFAULT_TAG_LIMIT = 5000  # MLflow's smallest tag-value limit across its versions


class MLflowTracker:
    """Logs EnergyRecords to an MLflow run.

    run_id: that run; otherwise the active run (mlflow.start_run, the Hugging Face
    MLflowCallback's), otherwise a new run that close() ends (FINISHED, or
    KILLED after an exception). tracking_uri: a tracking server or store other
    than MLflow's current one (the run is then made there with MlflowClient, in
    `experiment_name` or the default experiment).
    """

    name = "MLflow"

    def __init__(self, run_id: Optional[str] = None, tracking_uri: Optional[str] = None,
                 experiment_name: Optional[str] = None) -> None:
        """Import mlflow (a warning, not an error, when it is not installed)."""
        self.run_id = run_id
        self._given_run_id = run_id
        self.tracking_uri = tracking_uri
        self.experiment_name = experiment_name
        self._owned: Optional[str] = None  # "fluent" or "client" when we started the run
        self._client: Any = None
        self._mlflow = import_tracker("mlflow", self.name)

    @property
    def available(self) -> bool:
        """Whether mlflow could be imported."""
        return self._mlflow is not None

    def start(self) -> None:
        """Find (or start) the run to log to."""
        if self._mlflow is None or self._client is not None:
            return
        from mlflow.tracking import MlflowClient  # type: ignore[import-not-found, unused-ignore]

        mlflow = self._mlflow
        client = MlflowClient(tracking_uri=self.tracking_uri)
        if self.run_id is None:
            self.run_id, self._owned = self._run_to_log_to(mlflow, client)
        self._client = client

    def _run_to_log_to(self, mlflow: Any, client: Any) -> Any:
        """(run id, "fluent" or "client" when this tracker started the run, else None)."""
        active = mlflow.active_run() if self.tracking_uri is None else None
        if active is not None:
            return active.info.run_id, None
        if self.tracking_uri is None:
            if self.experiment_name is not None:
                mlflow.set_experiment(self.experiment_name)
            return mlflow.start_run().info.run_id, "fluent"
        experiment_id = "0"
        if self.experiment_name is not None:
            found = client.get_experiment_by_name(self.experiment_name)
            experiment_id = found.experiment_id if found is not None else client.create_experiment(self.experiment_name)
        return client.create_run(experiment_id).info.run_id, "client"

    def log(self, record: EnergyRecord) -> None:
        """The record's metrics (at its step, 0 without one) and its provenance tag, in one request."""
        if self._mlflow is None:
            return
        self.start()
        from mlflow.entities import Metric, RunTag  # type: ignore[import-not-found, unused-ignore]

        now = int(time.time() * 1000)
        step = record.step if record.step is not None else 0
        metrics = [Metric(key, value, now, step) for key, value in record.metrics.items()]
        tag = RunTag(f"{PROVENANCE_TAG}.{record.window}", compact_provenance(record.provenance, self._tag_limit()))
        self._client.log_batch(self.run_id, metrics=metrics, tags=[tag])

    def close(self, interrupted: bool) -> None:
        """End the run if start() began it; the next start() finds its run anew."""
        owned, self._owned, client, self._client = self._owned, None, self._client, None
        run_id, self.run_id = self.run_id, self._given_run_id
        if owned is None:
            return
        status = "KILLED" if interrupted else "FINISHED"
        active = self._mlflow.active_run()
        if owned == "fluent" and active is not None and active.info.run_id == run_id:
            self._mlflow.end_run(status)
        else:
            client.set_terminated(run_id, status)

    @staticmethod
    def _tag_limit() -> int:
        try:
            from mlflow.utils.validation import MAX_TAG_VAL_LENGTH  # type: ignore[import-not-found, unused-ignore]
        except ImportError:
            return _DEFAULT_TAG_LIMIT
        return int(MAX_TAG_VAL_LENGTH)


class MLflowEnergyLogger(EnergyLogger):
    """An EnergyLogger to MLflow (MLflowTracker's run_id, tracking_uri and
    experiment_name; EnergyLogger's devices, providers and prefix)."""

    def __init__(self, run_id: Optional[str] = None, tracking_uri: Optional[str] = None,
                 experiment_name: Optional[str] = None, *, gpu_indices: Optional[List[int]] = None,
                 cpu_indices: Optional[List[int]] = None, **options: Any) -> None:
        """Open the devices and import mlflow (each a warning when it fails)."""
        self.tracker = MLflowTracker(run_id, tracking_uri, experiment_name)
        super().__init__(self.tracker, gpu_indices=gpu_indices, cpu_indices=cpu_indices, **options)


def log_energy(result: Any, window: str = "window", step: Optional[int] = None, *, run_id: Optional[str] = None,
               tracking_uri: Optional[str] = None, prefix: str = "energy",
               extra: Sequence[Any] = ()) -> Optional[EnergyRecord]:
    """Log a window you measured yourself (a ZeusMonitor Measurement, a
    CarbonEmissionMeasurement or an EnergyCostMeasurement; carbon or cost results
    of the same span in `extra`) to the active MLflow run (or `run_id`), as
    "<prefix>/<window>/*" at `step`, with its provenance tag. A tracker that
    fails is a warning; returns the record."""
    record = make_record(result, window, step, prefix, extra)
    tracker = MLflowTracker(run_id, tracking_uri)
    EnergyLogger._guarded(tracker, "log", lambda: tracker.log(record))
    return record
