"""mkdocs hook: the C++ API reference, generated from the public headers.

A page holding the line `<!-- cpp-api -->` gets, in its place, one section per
header of include/zeus/<layer>/ (layers in the order of docs/architecture.md):
the header's opening comment as text (its indented lines as a code example),
then its declarations with their comments, without includes, pragmas and
namespace lines. Generated at every build, so it is never out of date.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARKER = "<!-- cpp-api -->"
LAYERS = ["platform", "device", "monitor", "report", "profile", "optimizer", "carbon", "metrics",
          "attribution", "bso", "perseus", "lowtime", "simulation", "zeusd"]
SKIP_LINE = re.compile(r"^\s*(#pragma|#include|namespace [\w:]+ \{|\}\s*// namespace|namespace \{|\}  // namespace)")


def _opening_comment(lines: list[str]) -> tuple[list[str], int]:
    comment: list[str] = []
    i = 0
    while i < len(lines) and lines[i].startswith("//"):
        comment.append(lines[i][2:].removeprefix(" ") if lines[i] != "//" else "")
        i += 1
    return comment, i


def _comment_as_markdown(comment: list[str]) -> str:
    out: list[str] = []
    in_code = False
    for line in comment:
        code = line.startswith("  ") and line.strip() != ""
        if code and not in_code:
            out += ["", "```cpp"]
            in_code = True
        elif not code and in_code and line.strip() != "":
            out += ["```", ""]
            in_code = False
        out.append(line[2:] if in_code and line.startswith("  ") else line)
    if in_code:
        out.append("```")
    return "\n".join(out).strip()


def _declarations(lines: list[str]) -> str:
    kept: list[str] = []
    for line in lines:
        if SKIP_LINE.match(line):
            continue
        if line.strip() == "" and (not kept or kept[-1].strip() == ""):
            continue
        kept.append(line.rstrip())
    return "\n".join(kept).strip()


def header_section(path: Path) -> str:
    lines = path.read_text(encoding="utf-8").splitlines()
    comment, start = _opening_comment(lines)
    name = path.relative_to(ROOT / "include").as_posix()
    parts = [f"### `{name}`", ""]
    if comment:
        parts += [_comment_as_markdown(comment), ""]
    body = _declarations(lines[start:])
    if body:
        parts += ["```cpp", body, "```", ""]
    return "\n".join(parts)


def reference() -> str:
    base = ROOT / "include" / "zeus"
    layers = [d.name for d in sorted(base.iterdir()) if d.is_dir()]
    ordered = [layer for layer in LAYERS if layer in layers] + [layer for layer in layers if layer not in LAYERS]
    sections: list[str] = []
    for layer in ordered:
        headers = sorted((base / layer).glob("*.hpp"))
        if not headers:
            continue
        sections.append(f"## {layer}\n")
        sections += [header_section(h) for h in headers]
    return "\n".join(sections)


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ANN001 (mkdocs' hook signature)
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, reference())
