"""Warns about monitors made at import time in spawned children (the original's zeus.utils.multiprocessing)."""

from __future__ import annotations

import inspect
import warnings
from typing import Any


def _is_global_in_spawned_child() -> bool:
    """Whether module-level code of a spawned child's main script (__name__ == "__mp_main__") is running."""
    frame = inspect.currentframe()
    frame = frame.f_back if frame is not None else None
    while frame is not None:
        code = frame.f_code
        if code.co_name == "<module>" and not (code.co_filename == "<string>" or code.co_filename.startswith("<frozen")):
            if frame.f_globals.get("__name__") == "__mp_main__":
                return True
        frame = frame.f_back
    return False


def warn_if_global_in_subprocess(self: Any) -> None:
    """Warn when `self` (a monitor) is made while a spawned child re-imports its main script."""
    if _is_global_in_spawned_child():
        warnings.warn(
            f"{type(self).__name__} was made while a spawned child process imported your main script, so "
            "module-level code (models, monitors) runs again in every child; create it under "
            '`if __name__ == "__main__":` or inside a function',
            stacklevel=4,
        )
