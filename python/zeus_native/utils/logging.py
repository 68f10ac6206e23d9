"""Printing to a file and the console at once (the original's zeus.utils.logging)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Union


class FileAndConsole:
    """Like tee for print(): `sys.stdout = FileAndConsole(path)` writes to both."""

    def __init__(self, filepath: Union[str, Path]) -> None:
        """Open (truncate) `filepath`; the console is the sys.stdout of now."""
        self.file = open(filepath, "w")  # noqa: SIM115 (lives as long as the object)
        self.stdout = sys.stdout

    def write(self, message: str) -> None:
        """Write `message` to both, flushed."""
        self.file.write(message)
        self.stdout.write(message)
        self.flush()

    def flush(self) -> None:
        """Flush both."""
        self.file.flush()
        self.stdout.flush()
