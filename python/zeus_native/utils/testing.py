"""Replaying recorded windows instead of measuring (the original's zeus.utils.testing)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import List, Optional, Union

from zeus_native.monitor.energy import Measurement, ZeusMonitor
from zeus_native.utils.framework import sync_execution as _sync_execution

logger = logging.getLogger(__name__)


class ReplayZeusMonitor(ZeusMonitor):
    """A ZeusMonitor that reads no GPU: each end_window returns the next row of a
    log_file that a ZeusMonitor wrote (`start_time,window_name,elapsed_time,gpu0_energy,...`),
    in end_window order. For tests and fast-forwarding a recorded run."""

    def __init__(
        self,
        gpu_indices: Optional[List[int]] = None,
        approx_instant_energy: bool = False,
        log_file: Union[str, Path, None] = None,
        ignore_sync_execution: bool = False,
        match_window_name: bool = True,
    ) -> None:
        """Replay `log_file`; gpu_indices default to the GPUs of its header."""
        if log_file is None:
            raise ValueError("ReplayZeusMonitor needs log_file: the CSV a ZeusMonitor(log_file=...) wrote")
        self.approx_instant_energy = approx_instant_energy
        self.ignore_sync_execution = ignore_sync_execution
        self.match_window_name = match_window_name
        self.log_file = open(log_file)  # noqa: SIM115 (read row by row as windows end)
        header = self.log_file.readline().rstrip("\n")
        if gpu_indices is None:
            gpu_indices = [int(column.split("_")[0][3:]) for column in header.split(",")[3:] if column]
        self._replayed_gpus = list(gpu_indices)
        self.ongoing_windows: List[str] = []
        logger.info("Replaying from '%s' with GPU indices %s", log_file, self.gpu_indices)

    @property
    def gpu_indices(self) -> List[int]:  # type: ignore[override]
        """The GPUs of the log (or as given)."""
        return self._replayed_gpus

    nvml_gpu_indices = gpu_indices

    def _sync(self, sync_execution: bool) -> None:
        if sync_execution and not self.ignore_sync_execution:
            _sync_execution(self.gpu_indices)

    def begin_window(self, key: str, sync_execution: bool = True, restart: bool = False) -> None:
        """Open `key` (RuntimeError if it is open, unless restart)."""
        if key in self.ongoing_windows:
            if not restart:
                raise RuntimeError(f"Window {key} is already ongoing.")
            self.ongoing_windows.remove(key)
        self.ongoing_windows.append(key)
        self._sync(sync_execution)

    def end_window(self, key: str, sync_execution: bool = True, cancel: bool = False) -> Measurement:
        """Close `key`: the log's next row (cancel: zeros, no row consumed)."""
        if key not in self.ongoing_windows:
            raise RuntimeError(f"Window {key} is not ongoing.")
        self.ongoing_windows.remove(key)
        self._sync(sync_execution)
        if cancel:
            return Measurement(time=0.0, gpu_energy={i: 0.0 for i in self.gpu_indices})
        line = self.log_file.readline()
        if not line:
            raise RuntimeError("No more lines in the log file.")
        _, window_name, *numbers = line.rstrip("\n").split(",")
        if self.match_window_name and window_name != key:
            raise RuntimeError(f"Was expecting {window_name}, not {key}.")
        if len(numbers) != len(self.gpu_indices) + 1:
            raise RuntimeError(f"Line has unexpected number of energy measurements: {line}")
        elapsed, *energies = map(float, numbers)
        return Measurement(time=elapsed, gpu_energy=dict(zip(self.gpu_indices, energies)))
