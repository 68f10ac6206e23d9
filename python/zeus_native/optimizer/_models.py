"""The few pydantic (v1) model features the power-limit optimizer's states use,
for when pydantic is not installed: keyword construction with the field types'
checks (ValueError naming the field), dict(), json(), copy(), == and pydantic's
str()/repr(). With pydantic installed the states are real pydantic models."""

from __future__ import annotations

import json
import typing
from typing import Any, Dict, Optional


class PositiveInt(int):
    """An int > 0."""


class NonNegativeInt(int):
    """An int >= 0."""


class PositiveFloat(float):
    """A float > 0."""


_RULES = {
    PositiveInt: (int, lambda v: v > 0, "greater than 0"),
    NonNegativeInt: (int, lambda v: v >= 0, "greater than or equal to 0"),
    PositiveFloat: (float, lambda v: v > 0, "greater than 0"),
}


def _checked(model: str, field: str, kind: type, value: Any) -> Any:
    convert, ok, rule = _RULES[kind]
    try:
        if isinstance(value, bool) or (convert is int and isinstance(value, float) and not value.is_integer()):
            raise TypeError
        converted = convert(value)
    except (TypeError, ValueError):
        raise ValueError(f"{model} {field}: value is not a valid {convert.__name__} ({value!r})") from None
    if not ok(converted):
        raise ValueError(f"{model} {field}: ensure this value is {rule} ({value!r})")
    return converted


class BaseModel:
    """Fields from the class's annotations, each checked on construction."""

    def __init__(self, **values: Any) -> None:
        """Keyword fields, all required."""
        fields = typing.get_type_hints(type(self))
        name = type(self).__name__
        unknown = set(values) - set(fields)
        if unknown:
            raise ValueError(f"{name}: unknown field(s) {sorted(unknown)}; fields: {list(fields)}")
        for field, kind in fields.items():
            if field not in values:
                raise ValueError(f"{name} {field}: field required")
            object.__setattr__(self, field, _checked(name, field, kind, values[field]))

    def dict(self) -> Dict[str, Any]:
        """The fields as a dict."""
        return {field: getattr(self, field) for field in typing.get_type_hints(type(self))}

    def json(self) -> str:
        """The fields as JSON."""
        return json.dumps(self.dict())

    def copy(self, update: Optional[Dict[str, Any]] = None) -> Any:
        """A copy, with `update`'s fields replaced."""
        return type(self)(**{**self.dict(), **(update or {})})

    def __eq__(self, other: object) -> bool:
        """Same class and fields."""
        return type(other) is type(self) and self.dict() == other.dict()  # type: ignore[attr-defined]

    def __str__(self) -> str:
        """pydantic's: `field=value field=value`."""
        return " ".join(f"{k}={v!r}" for k, v in self.dict().items())

    def __repr__(self) -> str:
        """pydantic's: `Name(field=value, ...)`."""
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.dict().items())})"
