"""The documentation site's user pages: every page of mkdocs.yml's nav outside
the "Contributing" section. Shared by check-docs-pages.py and
check-docs-examples.py."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
CONTRIBUTOR_SECTIONS = {"Contributing"}


def _pages(nav: list, hidden: bool = False) -> list[str]:
    pages: list[str] = []
    for entry in nav:
        if isinstance(entry, str):
            if not hidden:
                pages.append(entry)
            continue
        for title, value in entry.items():
            inner_hidden = hidden or title in CONTRIBUTOR_SECTIONS
            if isinstance(value, list):
                pages.extend(_pages(value, inner_hidden))
            elif not inner_hidden:
                pages.append(value)
    return pages


def docs_dir() -> Path:
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)
    return ROOT / config.get("docs_dir", "docs")


def user_pages() -> list[Path]:
    """The user pages, in nav order."""
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)
    return [docs_dir() / page for page in _pages(config["nav"])]
