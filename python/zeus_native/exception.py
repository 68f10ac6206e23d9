"""Base exception of zeus_native (the original's zeus.exception)."""

from __future__ import annotations


class ZeusBaseError(Exception):
    """Base of every Zeus exception; `message` is the text (problem and fix)."""

    def __init__(self, message: str) -> None:
        """Create the error with its message."""
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        """The message."""
        return self.message
