"""Walks the original Zeus's public Python surface against zeus_native.

For each module of the original's package tree (installed in .venv; the modules
docs/python.md's API exceptions name are not imported), its public names: what the
module defines, and for a package what it re-exports from zeus. For each name:
the same name in the same zeus_native module; for a function or method the same
parameter names in the same order with the same defaults (extra parameters
after them must have defaults); for a class each public method, property and
class attribute it defines, and for a dataclass its fields in order.

`python python/tests/api_walk.py` prints every gap and the totals;
test_api_walk.py fails on a gap not listed in docs/python.md's exceptions.
"""

from __future__ import annotations

import dataclasses
import enum
import fnmatch
import importlib
import inspect
import re
import sys
import types
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

def original_modules() -> List[str]:
    """Every module of the installed original's package tree, named from its files (nothing is
    imported): the walk covers them all, but for those docs/python.md's API exceptions name."""
    import importlib.util

    spec = importlib.util.find_spec("zeus")
    if spec is None or spec.origin is None:
        raise ImportError("the original Zeus is not installed (scripts/setup-python.sh installs it in .venv)")
    root = Path(spec.origin).parent
    names = set()
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names.add(".".join(parts))
    return sorted(names)


EXCEPTIONS_DOC = Path(__file__).resolve().parents[2] / "docs" / "python.md"


@dataclasses.dataclass
class Gap:
    name: str  # e.g. zeus.monitor.energy.ZeusMonitor.begin_window
    problem: str

    def __str__(self) -> str:
        return f"{self.name}: {self.problem}"


def _ours(name: str) -> str:
    return "zeus_native" + name[len("zeus"):]


def _public(name: str) -> bool:
    return not name.startswith("_")


def _module_names(module: types.ModuleType) -> Iterator[Tuple[str, Any]]:
    is_package = hasattr(module, "__path__")
    explicit = getattr(module, "__all__", None)
    for name, obj in sorted(vars(module).items()):
        if not _public(name) or isinstance(obj, types.ModuleType):
            continue
        home = getattr(obj, "__module__", None)
        if explicit is not None and name in explicit:
            yield name, obj
        elif home == module.__name__:
            yield name, obj
        elif is_package and isinstance(home, str) and home.startswith("zeus.") and (
                inspect.isclass(obj) or inspect.isfunction(obj)):
            yield name, obj


def _signature(obj: Any) -> Optional[inspect.Signature]:
    try:
        return inspect.signature(obj)
    except (TypeError, ValueError):
        return None


def _same_default(a: Any, b: Any) -> bool:
    if a is inspect.Parameter.empty or b is inspect.Parameter.empty:
        return a is b
    if isinstance(a, enum.Enum) or isinstance(b, enum.Enum):
        return getattr(a, "value", a) == getattr(b, "value", b)
    try:
        return bool(a == b) or repr(a) == repr(b)
    except Exception:  # noqa: BLE001
        return repr(a) == repr(b)


def compare_signatures(where: str, theirs: Any, ours: Any) -> List[Gap]:
    """Gaps between two callables' parameters (names, order, defaults)."""
    a, b = _signature(theirs), _signature(ours)
    if a is None:
        return []
    if b is None:
        return [Gap(where, "signature cannot be read (native function without a Python signature)")]
    theirs_params = [p for p in a.parameters.values()]
    ours_params = [p for p in b.parameters.values()]
    ours_by_name = {p.name: p for p in ours_params}
    gaps: List[Gap] = []
    ours_has_kwargs = any(p.kind is p.VAR_KEYWORD for p in ours_params)
    ours_has_args = any(p.kind is p.VAR_POSITIONAL for p in ours_params)
    position = 0
    for p in theirs_params:
        if p.kind is p.VAR_POSITIONAL:
            if not ours_has_args:
                gaps.append(Gap(where, f"missing *{p.name}"))
            continue
        if p.kind is p.VAR_KEYWORD:
            if not ours_has_kwargs:
                gaps.append(Gap(where, f"missing **{p.name}"))
            continue
        q = ours_by_name.get(p.name)
        if q is None:
            if not ours_has_kwargs or p.kind is p.POSITIONAL_ONLY:
                gaps.append(Gap(where, f"missing parameter {p.name!r}"))
            continue
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.POSITIONAL_ONLY):
            if q.kind not in (q.POSITIONAL_OR_KEYWORD, q.POSITIONAL_ONLY) or ours_params.index(q) != position:
                gaps.append(Gap(where, f"parameter {p.name!r} at position {position} in the original, "
                                       f"{ours_params.index(q)} here ({q.kind.description})"))
            position += 1
        if p.default is inspect.Parameter.empty and q.default is not inspect.Parameter.empty:
            pass  # optional here, required there: every call of the original's still works
        elif not _same_default(p.default, q.default):
            gaps.append(Gap(where, f"parameter {p.name!r} defaults to {p.default!r} in the original, "
                                   f"{q.default!r} here"))
    theirs_names = {p.name for p in theirs_params}
    for q in ours_params:
        if q.name not in theirs_names and q.kind in (q.POSITIONAL_OR_KEYWORD, q.KEYWORD_ONLY, q.POSITIONAL_ONLY) \
                and q.default is inspect.Parameter.empty:
            gaps.append(Gap(where, f"extra required parameter {q.name!r}"))
    return gaps


def _class_members(cls: type) -> Iterator[Tuple[str, Any]]:
    for klass in cls.__mro__:
        if klass is object or not getattr(klass, "__module__", "").startswith("zeus"):
            continue
        for name, member in vars(klass).items():
            if _public(name) or name == "__init__":
                yield name, member


def compare_class(where: str, theirs: type, ours: Any) -> Tuple[int, List[Gap]]:
    """(names checked, gaps) for a class and its members."""
    gaps: List[Gap] = []
    if not inspect.isclass(ours):
        return 1, [Gap(where, f"is a {type(ours).__name__} here, a class in the original")]
    checked = 0
    if dataclasses.is_dataclass(theirs):
        checked += 1
        if not dataclasses.is_dataclass(ours):
            gaps.append(Gap(where, "not a dataclass"))
        else:
            theirs_fields = [f.name for f in dataclasses.fields(theirs)]
            ours_fields = [f.name for f in dataclasses.fields(ours)]
            if ours_fields[:len(theirs_fields)] != theirs_fields:
                gaps.append(Gap(where, f"dataclass fields {ours_fields} here, {theirs_fields} in the original"))
            if theirs.__dataclass_params__.frozen != ours.__dataclass_params__.frozen:  # type: ignore[attr-defined]
                gaps.append(Gap(where, "frozen differs from the original"))
    if issubclass(theirs, enum.Enum):
        checked += 1
        if not (issubclass(ours, enum.Enum) and {m.name: m.value for m in theirs} == {m.name: m.value for m in ours}):
            gaps.append(Gap(where, "enum members differ"))
        return checked, gaps
    seen = set()
    for name, member in _class_members(theirs):
        if name in seen:
            continue
        seen.add(name)
        checked += 1
        member_where = f"{where}.{name}"
        if dataclasses.is_dataclass(theirs) and name in {f.name for f in dataclasses.fields(theirs)}:
            continue  # a field's default, checked with the fields
        if name == "__init__":
            if isinstance(member, (types.FunctionType,)):
                gaps += compare_signatures(member_where, member, ours.__init__)
            continue
        if not hasattr(ours, name):
            gaps.append(Gap(member_where, "missing"))
            continue
        ours_member = inspect.getattr_static(ours, name)
        if isinstance(member, (property, getattr(__import__("functools"), "cached_property"))):
            continue  # present: a property or attribute either way
        if isinstance(member, (staticmethod, classmethod)):
            # Both unbound (a classmethod's cls included), so a classmethod meets a classmethod.
            ours_unbound = ours_member.__func__ if isinstance(ours_member, (staticmethod, classmethod)) \
                else getattr(ours, name)
            gaps += compare_signatures(member_where, member.__func__, ours_unbound)
        elif inspect.isfunction(member):
            if not callable(getattr(ours, name)):
                gaps.append(Gap(member_where, "not callable here"))
            else:
                gaps += compare_signatures(member_where, member, ours_member if inspect.isfunction(ours_member)
                                           else getattr(ours, name))
    return checked, gaps


class _Stub(types.ModuleType):
    """A third-party module the original imports but .venv lacks (prometheus_client,
    pandas, amdsmi...): any attribute is a placeholder class. Only the original's own
    definitions are walked, so what they import need not work."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return type(name, (), {"__module__": self.__name__})


def _import_original(name: str) -> types.ModuleType:
    for _attempt in range(50):
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError as e:
            missing = e.name or ""
            if not missing or missing == "zeus" or missing.startswith("zeus."):
                raise
            parts = missing.split(".")
            for i in range(1, len(parts) + 1):
                stub = _Stub(".".join(parts[:i]))
                stub.__path__ = []  # type: ignore[attr-defined]
                sys.modules.setdefault(stub.__name__, stub)
    raise ImportError(f"{name}: too many missing dependencies")


NOT_WALKED = "not walked: an API exception in docs/python.md"


def walk(patterns: List[str]) -> Tuple[int, List[Gap]]:
    """(names checked, gaps) over every module of the original. A module an exception pattern
    names is not imported (servers, scripts) and counts as one excepted name. Stubs the
    original's missing third-party imports into sys.modules: run it in a process of its own."""
    total = 0
    gaps: List[Gap] = []
    for module_name in original_modules():
        total += 1
        if any(fnmatch.fnmatchcase(module_name, p) for p in patterns):
            gaps.append(Gap(module_name, NOT_WALKED))
            continue
        theirs = _import_original(module_name)
        try:
            ours = importlib.import_module(_ours(module_name))
        except ImportError as e:
            gaps.append(Gap(module_name, f"module missing ({e})"))
            continue
        for name, obj in _module_names(theirs):
            where = f"{module_name}.{name}"
            total += 1
            if not hasattr(ours, name):
                gaps.append(Gap(where, "missing"))
                continue
            mine = getattr(ours, name)
            if inspect.isclass(obj):
                checked, class_gaps = compare_class(where, obj, mine)
                total += checked
                gaps += class_gaps
            elif inspect.isfunction(obj):
                if not callable(mine):
                    gaps.append(Gap(where, "not callable here"))
                else:
                    gaps += compare_signatures(where, obj, mine)
    return total, gaps


def documented_exceptions() -> List[str]:
    """Patterns (fnmatch) listed in docs/python.md under "API exceptions", one per `- `pattern`` line."""
    text = EXCEPTIONS_DOC.read_text()
    section = text.split("## API exceptions", 1)[1] if "## API exceptions" in text else ""
    section = section.split("\n## ", 1)[0]
    return re.findall(r"^- `([^`]+)`", section, flags=re.M)


def excepted(gap: Gap, patterns: List[str]) -> bool:
    return any(fnmatch.fnmatchcase(gap.name, p) for p in patterns)


@dataclasses.dataclass
class Totals:
    walked: int  # names looked at, modules included
    excepted: int  # names an API exception covers
    in_scope: int  # the rest
    compatible: int  # in-scope names without a gap
    modules: int  # modules of the original
    modules_walked: int  # those not excepted

    def line(self) -> str:
        return (f"{self.compatible} of {self.in_scope} in-scope names compatible "
                f"({100.0 * self.compatible / max(self.in_scope, 1):.1f}%); {self.excepted} excepted in "
                f"docs/python.md; {self.walked} walked; {self.modules_walked} of the original's {self.modules} "
                f"modules walked")


def totals(total: int, gaps: List[Gap], patterns: List[str]) -> Totals:
    excepted_names = {g.name for g in gaps if excepted(g, patterns)}
    open_names = {g.name for g in gaps if not excepted(g, patterns)}
    in_scope = total - len(excepted_names)
    modules = len(original_modules())
    skipped = sum(1 for g in gaps if g.problem == NOT_WALKED)
    return Totals(total, len(excepted_names), in_scope, in_scope - len(open_names), modules, modules - skipped)


def main() -> int:
    patterns = documented_exceptions()
    total, gaps = walk(patterns)
    summary = totals(total, gaps, patterns)
    if "--json" in sys.argv:
        import json

        print(json.dumps({"total": total, "gaps": [str(g) for g in gaps], "totals": dataclasses.asdict(summary)}))
        return 0
    open_gaps = [g for g in gaps if not excepted(g, patterns)]
    for gap in open_gaps:
        print(gap)
    print(summary.line())
    return 1 if open_gaps else 0


if __name__ == "__main__":
    sys.exit(main())
