"""The batch-size optimizer's exceptions (the original's zeus.optimizer.batch_size.exceptions)."""

from __future__ import annotations

from zeus_native.exception import ZeusBaseError


class ZeusBSORuntimError(ZeusBaseError):
    """The server answered an error or could not be reached (the original's spelling)."""


class ZeusBSOTrainFailError(ZeusBaseError):
    """The server stopped this run short of its target: relaunch, it chooses another batch size."""


class ZeusBSOConfigError(ZeusBaseError):
    """The GPUs or the job cannot be used with the optimizer (e.g. no GPUs)."""


class ZeusBSOOperationOrderError(ZeusBaseError):
    """A callback was called before the one it needs (get_batch_size first)."""


class ZeusBSOBadOperationError(ZeusBaseError):
    """An operation this process may not do (only rank 0 asks for a batch size)."""
