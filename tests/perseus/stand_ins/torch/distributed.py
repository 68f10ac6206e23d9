"""torch.distributed's two calls the PFO client makes, over files in a shared
directory, so that ranks can be processes or threads of one process."""
import os
import pickle
import threading
import time

_local = threading.local()
_process_rank = None


def init_process_group(rank: int, store_dir: str) -> None:
    """Per thread when ranks are threads; the first call also sets the process's rank."""
    global _process_rank
    _local.rank, _local.store, _local.calls = rank, store_dir, 0
    if _process_rank is None:
        _process_rank = (rank, store_dir)


def _state():
    if not hasattr(_local, "rank"):
        init_process_group(*_process_rank)
    return _local


def is_initialized() -> bool:
    return hasattr(_local, "rank") or _process_rank is not None


def broadcast_object_list(objects: list, src: int = 0) -> None:
    state = _state()
    path = os.path.join(state.store, f"broadcast-{state.calls}")
    state.calls += 1
    if state.rank == src:
        with open(path + f".tmp{state.rank}", "wb") as f:
            pickle.dump(objects, f)
        os.rename(path + f".tmp{state.rank}", path)
        return
    deadline = time.monotonic() + 60
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise RuntimeError(f"fake torch.distributed: rank {src} never broadcast {path}")
        time.sleep(0.01)
    with open(path, "rb") as f:
        objects[:] = pickle.load(f)
