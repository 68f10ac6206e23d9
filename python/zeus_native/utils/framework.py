"""Framework synchronisation (the original's zeus.utils.framework.sync_execution).

A framework is imported only when a monitor asks for it, and a missing one is
an error when the monitor is created, not at its first window.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
import warnings
from typing import Callable, Dict, List, Union

FRAMEWORKS = ("torch", "jax", "cupy")


class _DefaultFramework(str):
    """The default "torch": unlike an explicit choice, a missing PyTorch means no sync."""


DEFAULT_SYNC = _DefaultFramework("torch")


def _missing_framework(name: str, error: ImportError) -> Callable[[list[int]], None]:
    """The sync of a chosen framework that cannot be imported: the monitor is made (as the
    original's), with a UserWarning now; windows that synchronise raise RuntimeError, those
    begun and ended with sync_execution=False work."""
    text = (f"sync_execution_with={name!r} but {name} cannot be imported ({error}); install it, choose another "
            f"of {', '.join(FRAMEWORKS)}, or synchronise yourself and pass sync_execution=False to this "
            "monitor's begin_window and end_window")
    warnings.warn(text, stacklevel=4)

    def sync(gpu_indices: list[int]) -> None:
        # Only the text is kept: the ImportError's traceback holds the monitor's
        # __init__ frame, and through this function the monitor itself, a cycle
        # through a native object the garbage collector cannot break.
        raise RuntimeError(text)

    return sync


def _import(name: str):
    return importlib.import_module(name)


def _installed(name: str) -> bool:
    if name in sys.modules:
        return True
    try:
        return importlib.util.find_spec(name) is not None
    except ValueError:  # a module without a spec: present
        return True


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
    if sync_with is DEFAULT_SYNC and not _installed("torch"):
        return None
    try:
        module = _import(str(sync_with))
    except ImportError as e:
        return _missing_framework(str(sync_with), e)
    if sync_with == "torch":
        if not module.cuda.is_available():
            # A PyTorch that reaches no CUDA GPU (a CPU-only build, or no NVIDIA
            # driver) has queued nothing on any GPU. The default means no sync;
            # an explicit choice is an error now, naming the cause, rather than
            # torch's "Found no NVIDIA driver" at the first window (issue 22).
            if sync_with is DEFAULT_SYNC:
                return None
            raise RuntimeError(
                f"sync_execution_with='torch' but this PyTorch ({getattr(module, '__version__', '?')}) cannot reach "
                "a CUDA GPU (torch.cuda.is_available() is False: a CPU-only build, or no NVIDIA driver), so it "
                "cannot wait for GPU work; install a CUDA build of PyTorch, or leave sync_execution_with at its "
                "default (which does not wait when PyTorch has no GPU)"
            )
        return _torch_sync(module)
    if sync_with == "jax":
        return _jax_sync(module)
    return _cupy_sync(module)


def sync_execution(gpu_devices: list[int], sync_with: str = "torch") -> None:
    """Block until the work queued on `gpu_devices` by `sync_with` has finished."""
    sync = sync_function(sync_with)
    if sync is not None:
        sync(list(gpu_devices))


# The original's framework helpers (zeus.utils.framework), same names and
# semantics; the frameworks are imported only when asked about.
MODULE_CACHE: Dict[str, types.ModuleType] = {}


def torch_is_available(ensure_available: bool = False, ensure_cuda: bool = True) -> bool:
    """Whether PyTorch imports (and, with ensure_cuda, reaches CUDA: RuntimeError if not).

    ensure_available: RuntimeError instead of False when it does not import.
    """
    try:
        import torch  # type: ignore[import-not-found]
    except ImportError as e:
        if ensure_available:
            raise RuntimeError("Failed to import PyTorch; install it, or choose another framework") from e
        return False
    if ensure_cuda and not torch.cuda.is_available():
        raise RuntimeError("PyTorch is available but does not have CUDA support (torch.cuda.is_available() is False)")
    MODULE_CACHE["torch"] = torch
    return True


def jax_is_available(ensure_available: bool = False, ensure_cuda: bool = True) -> bool:
    """Whether JAX imports (and, with ensure_cuda, has a GPU backend: RuntimeError if not)."""
    try:
        import jax  # type: ignore[import-not-found]
    except ImportError as e:
        if ensure_available:
            raise RuntimeError("Failed to import JAX; install it, or choose another framework") from e
        return False
    if ensure_cuda:
        try:
            gpus = jax.devices("gpu")
        except RuntimeError:
            gpus = []
        if not gpus:
            raise RuntimeError("JAX is available but does not have CUDA support (no GPU backend)")
    MODULE_CACHE["jax"] = jax
    return True


def cupy_is_available(ensure_available: bool = False) -> bool:
    """Whether CuPy imports (ensure_available: RuntimeError instead of False)."""
    try:
        import cupy  # type: ignore[import-not-found]
    except ImportError as e:
        if ensure_available:
            raise RuntimeError("Failed to import CuPy; install it, or choose another framework") from e
        return False
    MODULE_CACHE["cupy"] = cupy
    return True


def _torch_distributed():
    """torch.distributed when PyTorch is installed and a process group is up, else None."""
    if not torch_is_available(ensure_cuda=False):
        return None
    dist = MODULE_CACHE["torch"].distributed
    return dist if dist.is_available() and dist.is_initialized() else None


def running_ranks() -> "tuple[int, int] | None":
    """(rank, world size) when this process is one of several of a running torch.distributed
    process group, else None. Only a PyTorch already imported can have one up: PyTorch is not
    imported here (the profiler and the power-limit optimizer ask at every call)."""
    torch = sys.modules.get("torch")
    dist = getattr(torch, "distributed", None) if torch is not None else None
    if dist is None or not dist.is_available() or not dist.is_initialized():
        return None
    size = int(dist.get_world_size())
    return (int(dist.get_rank()), size) if size > 1 else None


def all_reduce(object: Union[List[int], List[float]], operation: str) -> Union[List[int], List[float]]:  # noqa: A002
    """Reduce `object` over every replica with "sum" or "max"; as is when not distributed."""
    if operation not in ("sum", "max"):
        raise ValueError(f"all_reduce unsupported operation: {operation!r}; use 'sum' or 'max'")
    dist = _torch_distributed()
    if dist is not None:
        torch = MODULE_CACHE["torch"]
        tensor = torch.tensor(object, dtype=torch.float64)
        if torch.cuda.is_available() and dist.get_backend() == "nccl":
            tensor = tensor.cuda()
        dist.all_reduce(tensor, op=dist.ReduceOp.SUM if operation == "sum" else dist.ReduceOp.MAX)
        return tensor.cpu().tolist()
    if torch_is_available(ensure_cuda=False):
        return object
    if jax_is_available(ensure_cuda=False):
        if MODULE_CACHE["jax"].device_count() == 1:
            return object
        raise NotImplementedError("JAX distributed is not supported yet.")
    raise RuntimeError("No framework is available; install PyTorch or JAX")


def is_distributed() -> bool:
    """Whether this process is one of several (a torch.distributed group, or several JAX devices)."""
    if torch_is_available(ensure_cuda=False):
        return _torch_distributed() is not None
    if jax_is_available(ensure_cuda=False):
        return MODULE_CACHE["jax"].device_count() > 1
    raise RuntimeError("No framework is available; install PyTorch or JAX")


def get_rank() -> int:
    """This process's rank, or 0 when not distributed."""
    dist = _torch_distributed()
    if dist is not None:
        return int(dist.get_rank())
    if not torch_is_available(ensure_cuda=False) and jax_is_available(ensure_cuda=False):
        return int(MODULE_CACHE["jax"].process_index())
    return 0


def get_world_size() -> int:
    """How many processes take part, or 1 when not distributed."""
    dist = _torch_distributed()
    if dist is not None:
        return int(dist.get_world_size())
    if not torch_is_available(ensure_cuda=False) and jax_is_available(ensure_cuda=False):
        return int(MODULE_CACHE["jax"].process_count())
    return 1
