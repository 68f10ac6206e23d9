"""Energy windows (the original's zeus.monitor.energy)."""

from __future__ import annotations

import os
from pathlib import Path

from zeus_native import _core
from zeus_native.device import _sets
from zeus_native.device._indices import check_cpu_indices, check_gpu_indices
from zeus_native.device.cpu.common import ZeusCPUNoPermissionError
from zeus_native.utils.framework import DEFAULT_SYNC, sync_function

Measurement = _core.Measurement


def _open_log(log_file: str | Path) -> str:
    path = os.fspath(log_file)
    try:
        directory = os.path.dirname(path)
        if directory:
            os.makedirs(directory, exist_ok=True)
        with open(path, "w"):
            pass
    except OSError as e:
        raise type(e)(
            e.errno,
            f"cannot write the log file {path!r} ({e.strerror}); pass a log_file in a writable directory, or None",
        ) from e
    return path


class ZeusMonitor(_core.EnergyMonitor):
    """Measure the GPU, CPU and SoC energy of named windows of your program.

        monitor = ZeusMonitor(gpu_indices=[0, 1])
        monitor.begin_window("step")
        ...
        measurement = monitor.end_window("step")   # .time (s), .gpu_energy {index: J}

    Windows may nest and overlap and be used from several threads; device reads
    release the GIL. GPU indices are CUDA indices (positions in
    CUDA_VISIBLE_DEVICES); CPU indices are RAPL packages. sync_execution_with is
    "torch", "jax" or "cupy" (imported now; an explicit choice that is not
    installed is an error here; the default "torch" without PyTorch means no sync).

    wait_for_counter_refresh (not in the original): at each window edge, wait
    for the energy counters' next two refreshes (about 0.2 s) and take the
    edge from them, instead of estimating it from the last refresh and one
    power reading (each value's provenance "edge_error_bound_j" says how far
    that estimate can be off).
    """

    def __init__(
        self,
        gpu_indices: list[int] | None = None,
        cpu_indices: list[int] | None = None,
        approx_instant_energy: bool = False,
        log_file: str | Path | None = None,
        sync_execution_with: str = DEFAULT_SYNC,
        wait_for_counter_refresh: bool = False,
    ) -> None:
        """Open the devices and check every argument (see the class docstring)."""
        sync = sync_function(sync_execution_with)
        gpus = _sets.gpus()
        cpus = _sets.cpus()
        if cpus.init_error is not None:
            if cpus.init_error_code == "no permission" and cpu_indices:
                raise ZeusCPUNoPermissionError(cpus.init_error)
            cpus_arg = None
        else:
            cpus_arg = cpus
        soc = _sets.soc()
        soc_arg = soc if soc.init_error is None else None
        if gpus.init_error is not None and gpu_indices:
            from zeus_native.device.gpu.common import ZeusGPUInitError

            raise ZeusGPUInitError(gpus.init_error)
        gpu_indices = None if gpu_indices is None else check_gpu_indices(gpus, gpu_indices)
        cpu_indices = None if cpu_indices is None else check_cpu_indices(cpus, cpu_indices)
        path = _open_log(log_file) if log_file is not None else None
        super().__init__(
            gpus,
            cpus_arg,
            soc_arg,
            None if gpu_indices is None else [int(i) for i in gpu_indices],
            None if cpu_indices is None else [int(i) for i in cpu_indices],
            bool(approx_instant_energy),
            path,
            sync,
            bool(wait_for_counter_refresh),
        )
        self.gpus = gpus
        self.cpus = cpus
        self.soc = soc
        self.soc_is_present = soc_arg is not None
        self.sync_with = str(sync_execution_with)
        self.approx_instant_energy = bool(approx_instant_energy)
        self.log_file = path
        self.wait_for_counter_refresh = bool(wait_for_counter_refresh)
