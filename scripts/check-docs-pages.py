#!/usr/bin/env python3
"""Checks the user pages of the documentation site (every page in mkdocs.yml's
nav outside the "Contributing" section): their words in all stay under the
budget, and none carries development history (issue numbers, machine loads,
dated run logs, the team's own words). Run by scripts/build-docs.sh.

Usage: check-docs-pages.py [--limit N] [--list]"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from docs_nav import ROOT, user_pages  # noqa: E402

DEFAULT_LIMIT = 35_000

# What a user page must not say: each pattern with the reason it is refused.
DEVELOPMENT_WORDING = [
    (re.compile(r"\bissues? \d+\b", re.I), "an issue number"),
    (re.compile(r"\bload average\b|\bat load \d", re.I), "a machine load"),
    (re.compile(r"\bsessions?\b", re.I), "'session' (development wording)"),
    (re.compile(r"\bhelpers?'? builds?\b|\bother (engineers|helpers)\b", re.I), "the team's own activity"),
    (re.compile(r"No GPU was lent", re.I), "development wording"),
    (re.compile(r"§\s?\d"), "a section of a document that is not in the repository"),
    # attribution.md is also a user page: only a bare mention (not a link) is the reference document.
    (re.compile(r"shared/reference/|\b(zeus-inventory|measurement-facts|optimizers|user-asks)\.md|(?<![\[(/\w-])attribution\.md"),
     "a document that is not in the repository"),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=DEFAULT_LIMIT)
    parser.add_argument("--list", action="store_true", help="print each page's words")
    args = parser.parse_args()

    total = 0
    problems: list[str] = []
    for path in user_pages():
        page = path.relative_to(ROOT / "docs")
        text = path.read_text(encoding="utf-8")
        words = len(text.split())
        total += words
        if args.list:
            print(f"{words:7d}  {page}")
        in_code = False
        for number, line in enumerate(text.splitlines(), 1):
            if line.lstrip().startswith("```"):
                in_code = not in_code
            for pattern, why in DEVELOPMENT_WORDING:
                if pattern.search(line):
                    problems.append(f"docs/{page}:{number}: {why}: {line.strip()[:100]}")
    print(f"check-docs-pages: user pages hold {total:,} words (budget {args.limit:,})")
    for problem in problems:
        print(f"check-docs-pages: {problem}", file=sys.stderr)
    if total > args.limit:
        print(f"check-docs-pages: {total - args.limit:,} words over the budget: move run logs, "
              "investigations and design notes to the Contributing section", file=sys.stderr)
    return 1 if problems or total > args.limit else 0


if __name__ == "__main__":
    sys.exit(main())
