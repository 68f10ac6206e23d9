"""Perseus's client (the original's zeus.optimizer.pipeline_frequency), over
zeus::optimizer::PipelineFrequencyOptimizer.

Same constructor and callbacks as the original. The frequency controller runs
in-process (each clock change is an NVML or zeusd call on the calling thread,
skipping repeats), and the GPU's clocks return to the driver at close() or
exit. Rank 0's job id reaches the other ranks through torch.distributed when
it is initialised (as the original); a job of one rank needs nothing.
"""

from __future__ import annotations

import atexit
import weakref

from zeus_native import _core
from zeus_native.callback import Callback
from zeus_native.device import get_gpus
from zeus_native.utils.framework import DEFAULT_SYNC, sync_function

__all__ = ["PipelineFrequencyOptimizer"]

_live: "weakref.WeakSet" = weakref.WeakSet()


@atexit.register
def _restore_clocks() -> None:
    for optimizer in list(_live):
        optimizer.close()


def _broadcast_job_id(job_id: str | None) -> str:
    try:
        import torch.distributed as dist
    except ImportError as e:
        raise RuntimeError("a job of several ranks shares its job id through torch.distributed, which is missing") from e
    if not dist.is_initialized():
        raise RuntimeError("Instantiate `PipelineFrequencyOptimizer` after `init_process_group`.")
    objects = [job_id]
    dist.broadcast_object_list(objects, src=0)
    if objects[0] is None:
        raise RuntimeError("Failed to broadcast job ID to all ranks")
    return objects[0]


class PipelineFrequencyOptimizer(Callback):
    """Pipeline frequency optimizer (one per rank)."""

    def __init__(
        self,
        rank: int,
        dp_rank: int,
        pp_rank: int,
        tp_rank: int,
        device_id: int,
        dp_degree: int,
        pp_degree: int,
        tp_degree: int,
        world_size: int,
        server_url: str,
        job_metadata: str | None = None,
    ) -> None:
        """Register with the PFO server and wait for this rank's schedule (every rank must ask)."""
        for name, value in (("rank", rank), ("dp_rank", dp_rank), ("pp_rank", pp_rank), ("tp_rank", tp_rank),
                            ("device_id", device_id)):
            if value < 0:
                raise ValueError(f"{name} must be non-negative, got {value}")
        for name, value in (("dp_degree", dp_degree), ("pp_degree", pp_degree), ("tp_degree", tp_degree),
                            ("world_size", world_size)):
            if value < 1:
                raise ValueError(f"{name} must be at least 1, got {value}")
        options = _core.PipelineFrequencyOptions()
        options.server_url = server_url.rstrip("/")
        options.rank, options.dp_rank, options.pp_rank, options.tp_rank = rank, dp_rank, pp_rank, tp_rank
        options.dp_degree, options.pp_degree, options.tp_degree = dp_degree, pp_degree, tp_degree
        options.world_size = world_size
        options.job_metadata = job_metadata
        self.server_url = server_url
        self.rank, self.dp_rank, self.pp_rank, self.tp_rank = rank, dp_rank, pp_rank, tp_rank
        self.device_id = device_id
        # The default "torch": without a PyTorch that reaches a GPU there is no
        # PyTorch work to wait for (None), and nothing to warn about.
        try:
            self._sync = sync_function(DEFAULT_SYNC)
        except RuntimeError:
            self._sync = None
        share = _broadcast_job_id if world_size > 1 else None
        self._native = _core.PipelineFrequencyOptimizer(get_gpus(), device_id, options, share)
        self.job_id = self._native.job_id
        self.freq_schedule = [tuple(item) for item in self._native.schedule]
        _live.add(self)

    def on_step_begin(self) -> None:
        """Mark the beginning of a step."""
        self._native.on_step_begin()

    def on_step_end(self) -> None:
        """Mark the end of a step: the step must have used the whole schedule."""
        self._native.on_step_end()

    def on_instruction_begin(self, name: str) -> None:
        """Lock the clock of the schedule's next instruction, which must be `name`."""
        if self._sync is not None:  # as the original: the previous instruction has finished
            self._sync([self.device_id])
        self._native.on_instruction_begin(name)

    def on_instruction_end(self, name: str) -> None:
        """Mark the end of an instruction."""
        self._native.on_instruction_end(name)

    def close(self) -> None:
        """Give the GPU's clocks back to the driver (also at exit)."""
        self._native.close()
        _live.discard(self)
