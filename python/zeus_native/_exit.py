"""Every native thread the package starts ends before the interpreter does.

Objects that own a native thread (energy monitors' counter watches, power and
temperature samplers, pushed metrics, carbon and cost pollers, the CPU and SoC
device sets' counter samplers) register here;
one atexit hook, registered when zeus_native is first imported (so it runs
after the hooks registered later, such as the optimizers' that restore power
limits), stops them in dependency order. Without it a thread still reading
the GPU while the C and C++ exit handlers tear the driver library down
crashes the process at exit (issue 22).
"""

from __future__ import annotations

import atexit
import functools
import sys
import weakref
from typing import Callable, List, Tuple

# Stopped first to last: what reads an energy monitor goes before it, and
# the device sets (CPU and SoC samplers) after every monitor that reads them.
ORDER = ("carbon", "metric", "sampler", "energy", "device")

_tracked: "weakref.WeakKeyDictionary[object, Tuple[str, Callable[[object], None]]]" = weakref.WeakKeyDictionary()


def track(owner: object, kind: str, stop: Callable[[object], None]) -> None:
    """Call `stop(owner)` at interpreter exit if `owner` is still alive then."""
    if kind not in ORDER:
        raise ValueError(f"unknown kind {kind!r}; use one of {', '.join(ORDER)}")
    _tracked[owner] = (kind, stop)


_functions: List[Tuple[str, Callable[[], None]]] = []


def at_exit(kind: str, stop: Callable[[], None]) -> None:
    """Call `stop()` at interpreter exit, in `kind`'s turn (for module-level owners)."""
    if kind not in ORDER:
        raise ValueError(f"unknown kind {kind!r}; use one of {', '.join(ORDER)}")
    _functions.append((kind, stop))


def stop_all() -> None:
    """Stops every tracked object's threads (idempotent; also used by tests)."""
    entries: List[Tuple[int, Callable[[], None]]] = []
    for owner, (kind, stop) in list(_tracked.items()):
        entries.append((ORDER.index(kind), functools.partial(stop, owner)))
        del _tracked[owner]
    entries += [(ORDER.index(kind), stop) for kind, stop in _functions]
    entries.sort(key=lambda e: e[0])
    for _, stop in entries:
        try:
            stop()
        except Exception:  # noqa: BLE001 (one failure must not leave the others running)
            import traceback

            traceback.print_exc()


def _at_interpreter_exit() -> None:
    """stop_all, then close the native gate: a daemon thread still inside a native call (a window
    begun in a loop) must not take the GIL back once finalization starts, where CPython ends it
    with pthread_exit and a C++ destructor on its way turns that into std::terminate (exit 134)."""
    stop_all()
    core = sys.modules.get("zeus_native._core")
    if core is not None:  # never imported: no native call can be running
        core._close_native_gate()


atexit.register(_at_interpreter_exit)
