"""The batch-size optimizer client (the original's zeus.optimizer.batch_size.client).

A thin skin over the native client (zeus::bso::BatchSizeOptimizer): time and
GPU energy come from the ZeusMonitor's native EnergyMonitor, the HTTP calls
from the project's HTTP client, with the GIL released.
"""

from __future__ import annotations

import atexit
import weakref

from zeus_native import _core
from zeus_native.callback import Callback
from zeus_native.monitor.energy import ZeusMonitor
from zeus_native.optimizer.batch_size.common import JobSpec
from zeus_native.optimizer.batch_size.exceptions import (
    ZeusBSOBadOperationError,
    ZeusBSOConfigError,
    ZeusBSOOperationOrderError,
    ZeusBSORuntimError,
    ZeusBSOTrainFailError,
)

_live: "weakref.WeakSet" = weakref.WeakSet()


@atexit.register
def _end_all_trials() -> None:
    # The original's atexit hook: PATCH /trials, so a run that never
    # reported its end leaves a Failed trial rather than a Dispatched one.
    for client in list(_live):
        client._close()


class BatchSizeOptimizer(Callback):
    """Asks the batch-size optimizer server for this run's batch size and reports every epoch.

        bso = BatchSizeOptimizer(monitor, "http://127.0.0.1:8000", job)
        batch_size = bso.get_batch_size()
        bso.on_train_begin()
        for epoch in range(job.max_epochs):
            train_one_epoch(batch_size)
            bso.on_evaluate(validation_metric)   # ZeusBSOTrainFailError: relaunch
            if bso.training_finished:
                break

    The GPUs are those of `monitor`; the server gets GPU 0's maximum power limit
    (whole W) times their number, their count and GPU 0's name.
    """

    def __init__(self, monitor: ZeusMonitor, server_url: str, job: JobSpec, rank: int = 0) -> None:
        """Register the job with the server (an identical spec registered before is fine)."""
        if not isinstance(job, JobSpec):
            raise TypeError(f"job must be a JobSpec, got {type(job).__name__}")
        self.monitor = monitor
        self.server_url = server_url
        self.rank = rank
        if not monitor.gpu_indices:
            raise ZeusBSOConfigError("No GPUs detected.")
        try:
            self._native = _core.BatchSizeOptimizerClient(monitor, server_url, rank=rank, **job.dict())
        except RuntimeError as e:
            raise ZeusBSORuntimError(str(e)) from None
        fields = job.dict()
        fields["job_id"] = self._native.job_id
        fields["batch_sizes"] = list(self._native.batch_sizes)
        self.job = JobSpec(**fields)
        self.current_batch_size = 0
        _live.add(self)

    @property
    def training_finished(self) -> bool:
        """Whether the server stopped this run (target reached, early stop or max_epochs)."""
        return self._native.training_finished

    def get_batch_size(self) -> int:
        """This run's batch size (asked once; rank 0 only)."""
        if self.rank != 0:
            raise ZeusBSOBadOperationError("Only rank 0 gpu can ask for a batch size.")
        try:
            self.current_batch_size = self._native.get_batch_size()
        except RuntimeError as e:
            raise ZeusBSORuntimError(str(e)) from None
        return self.current_batch_size

    def on_train_begin(self) -> None:
        """Open the measurement window."""
        try:
            self._native.on_train_begin()
        except RuntimeError as e:
            raise ZeusBSORuntimError(str(e)) from None

    def on_evaluate(self, metric: float) -> None:
        """Report the epoch's metric with the cumulative time and energy; raise if stopped short of the target."""
        if self.current_batch_size == 0:
            raise ZeusBSOOperationOrderError("Call get_batch_size to set the batch size first")
        try:
            failure = self._native.on_evaluate(float(metric))
        except RuntimeError as e:
            raise ZeusBSORuntimError(str(e)) from None
        if failure is not None:
            raise ZeusBSOTrainFailError(failure)

    def _close(self) -> None:
        self._native.close()
