"""The original's zeus.optimizer.pipeline_frequency.frequency_controller: a process of its own
that sets one GPU's SM clock, so that the training loop never waits for the driver.

PipelineFrequencyOptimizer does not use it (its clock changes are native calls that skip
repeats); it is here for code that drives the clocks itself, as the original's examples did.
"""

from __future__ import annotations

import atexit
import contextlib
import multiprocessing as mp
from typing import Optional

from zeus_native.device import get_gpus
from zeus_native.device.gpu import ZeusGPUNotSupportedError


class FrequencyController:
    """Spawns a process that locks GPU `device_id`'s SM clock to each frequency it is sent.

    The process is started fresh ("spawn"), not forked as the original's: a fork copies this
    process's native threads' locks in whatever state they are in."""

    def __init__(self, device_id: int = 0) -> None:
        """Start the process: the default power limit, the highest memory clock, the highest SM clock."""
        context = mp.get_context("spawn")
        self._q: "mp.Queue[Optional[int]]" = context.Queue()
        self._proc = context.Process(target=_control, args=(device_id, self._q))
        atexit.register(self.end)
        self._proc.start()

    def set_frequency(self, frequency: int) -> None:
        """Lock the SM clock to `frequency` MHz, asynchronously; 0 does nothing."""
        if frequency != 0:
            self._q.put(frequency, block=False)

    def end(self) -> None:
        """Stop the process; it returns the clocks to the driver first."""
        self._q.put(None, block=False)

    def _controller_process(self, device_id: int) -> None:
        """The process's work, as the original names it."""
        _control(device_id, self._q)


def _control(device_id: int, queue: "mp.Queue[Optional[int]]") -> None:
    """Apply each frequency from `queue` until None, then return the clocks to the driver."""
    gpus = get_gpus()
    gpus.reset_power_management_limit(device_id)
    max_mem_freq = max(gpus.get_supported_memory_clocks(device_id))
    with contextlib.suppress(ZeusGPUNotSupportedError):
        gpus.set_memory_locked_clocks(device_id, max_mem_freq, max_mem_freq)
    current = max(gpus.get_supported_graphics_clocks(device_id, max_mem_freq))
    gpus.set_gpu_locked_clocks(device_id, current, current)
    while True:
        target = queue.get(block=True)
        if target is None:
            break
        if target != current:
            gpus.set_gpu_locked_clocks(device_id, target, target)
            current = target
    with contextlib.suppress(ZeusGPUNotSupportedError):
        gpus.reset_memory_locked_clocks(device_id)
    gpus.reset_gpu_locked_clocks(device_id)
