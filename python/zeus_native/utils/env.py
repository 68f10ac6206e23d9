"""Typed environment variables (the original's zeus.utils.env)."""

from __future__ import annotations

import os
from typing import Optional, Type, TypeVar, cast

T = TypeVar("T")


def get_env(name: str, valtype: Type[T], default: Optional[T] = None) -> T:
    """The environment variable `name` converted with `valtype`.

    A bool accepts "true" or "false" (any case). A variable that is not set gives
    `default`, or ValueError naming it when there is no default.
    """
    if name not in os.environ:
        if default is not None:
            return default
        raise ValueError(f"Missing environment variable '{name}'")
    text = os.environ[name]
    if valtype is bool:
        lowered = text.lower()
        if lowered not in ("true", "false"):
            raise ValueError(f"Strange boolean environment variable value '{lowered}' (use true or false)")
        return cast(T, lowered == "true")
    return valtype(text)  # type: ignore[call-arg]
