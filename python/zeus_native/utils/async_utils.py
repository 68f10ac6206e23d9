"""asyncio helpers (the original's zeus.utils.async_utils)."""

from __future__ import annotations

import asyncio
import functools
import logging
from typing import Any, Coroutine, Optional, TypeVar

T = TypeVar("T")

default_logger = logging.getLogger(__name__)


def create_task(coroutine: Coroutine[Any, Any, T], logger: Optional[logging.Logger] = None) -> "asyncio.Task[T]":
    """loop.create_task on the running loop, logging the task's exception (if any) when it ends."""
    task = asyncio.get_running_loop().create_task(coroutine)
    task.add_done_callback(functools.partial(_log_failure, logger=logger or default_logger))
    return task


def _log_failure(task: "asyncio.Task[Any]", logger: logging.Logger) -> None:
    if task.cancelled():
        return
    error = task.exception()
    if error is not None:
        logger.error("Job task died with an exception!", exc_info=error)
