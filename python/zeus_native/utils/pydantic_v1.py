"""Pydantic's v1 API whichever pydantic is installed (the original's zeus.utils.pydantic_v1)."""

try:
    from pydantic.v1 import *  # noqa: F403
except ImportError:
    from pydantic import *  # type: ignore[no-redef]  # noqa: F403
