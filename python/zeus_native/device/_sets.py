"""The process's device sets, opened once (like the original's singletons)."""

from __future__ import annotations

import threading

from zeus_native import _core, _exit

_lock = threading.Lock()
_gpus: _core.GPUs | None = None
_cpus: _core.CPUs | None = None
_soc: _core.SoC | None = None


def gpus() -> _core.GPUs:
    """The GPUs of this process, opened on first use."""
    global _gpus
    with _lock:
        if _gpus is None:
            _gpus = _core.open_gpus()
        return _gpus


def cpus() -> _core.CPUs:
    """The CPU packages of this process, opened on first use."""
    global _cpus
    with _lock:
        if _cpus is None:
            _cpus = _core.open_cpus()
        return _cpus


def soc() -> _core.SoC:
    """The SoC of this process, opened on first use."""
    global _soc
    with _lock:
        if _soc is None:
            _soc = _core.open_soc()
        return _soc


def stop_threads() -> None:
    """Join the open sets' counter samplers (interpreter exit, after every monitor)."""
    with _lock:
        for opened in (_cpus, _soc):
            if opened is not None:
                opened._stop_threads()


_exit.at_exit("device", stop_threads)


def reset() -> None:
    """Forget the opened sets, so that the next call opens them again from the
    environment (tests that change the simulator between cases use this)."""
    global _gpus, _cpus, _soc
    with _lock:
        _gpus = _cpus = _soc = None
