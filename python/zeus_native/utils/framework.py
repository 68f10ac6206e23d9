"""Framework synchronisation (the original's zeus.utils.framework.sync_execution).

A framework is imported only when a monitor asks for it, and a missing one is
an error when the monitor is created, not at its first window.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Callable

FRAMEWORKS = ("torch", "jax", "cupy")


class _DefaultFramework(str):
    """The default "torch": unlike an explicit choice, a missing PyTorch means no sync."""


DEFAULT_SYNC = _DefaultFramework("torch")


def _import(name: str):
    try:
        return importlib.import_module(name)
    except ImportError as e:
        raise RuntimeError(
            f"sync_execution_with={name!r} but {name} cannot be imported ({e}); install it, choose another of "
            f"{', '.join(FRAMEWORKS)}, or synchronise yourself and pass sync_execution=False to the windows"
        ) from e


def _torch_sync(torch) -> Callable[[list[int]], None]:
    def sync(gpu_indices: list[int]) -> None:
        for device in gpu_indices:
            torch.cuda.synchronize(device)

    return sync


def _jax_sync(jax) -> Callable[[list[int]], None]:
    def sync(gpu_indices: list[int]) -> None:
        try:
            gpus = jax.devices("gpu")
        except RuntimeError:
            gpus = []  # a CPU-only JAX has queued nothing on any GPU
        futures = [jax.device_put(0.0, device=gpus[d]) + 0 for d in gpu_indices if d < len(gpus)]
        futures.append(jax.device_put(0.0, device=jax.devices("cpu")[0]) + 0)
        jax.block_until_ready(futures)

    return sync


def _cupy_sync(cupy) -> Callable[[list[int]], None]:
    def sync(gpu_indices: list[int]) -> None:
        for device in gpu_indices:
            cupy.cuda.Device(device).synchronize()

    return sync


def sync_function(sync_with: str) -> Callable[[list[int]], None] | None:
    """The function that waits for `sync_with`'s queued GPU work, or None.

    None only for the default "torch" when PyTorch is not installed (then no
    PyTorch work can be queued). Raises RuntimeError, naming the fix, for an
    unknown framework or an explicitly chosen one that cannot be imported.
    """
    if sync_with not in FRAMEWORKS:
        raise RuntimeError(
            f"unknown sync_execution_with={sync_with!r}; use one of {', '.join(repr(f) for f in FRAMEWORKS)}"
        )
    if sync_with is DEFAULT_SYNC and importlib.util.find_spec("torch") is None:
        return None
    module = _import(str(sync_with))
    if sync_with == "torch":
        return _torch_sync(module)
    if sync_with == "jax":
        return _jax_sync(module)
    return _cupy_sync(module)


def sync_execution(gpu_devices: list[int], sync_with: str = "torch") -> None:
    """Block until the work queued on `gpu_devices` by `sync_with` has finished."""
    sync = sync_function(sync_with)
    if sync is not None:
        sync(list(gpu_devices))
