#!/usr/bin/env bash
# Builds the documentation site (mkdocs-material, mkdocs.yml) into site/ with
# --strict: a broken link or anchor, a page missing from the nav or a
# docstring the API reference cannot read fails the build. First checks the
# user pages' word budget and wording (scripts/check-docs-pages.py). Seconds.
#
#   scripts/build-docs.sh            build site/ (open site/index.html)
#   scripts/build-docs.sh --serve    serve it on http://127.0.0.1:8000 while you edit
#
# mkdocs and its plugins are pinned in scripts/setup-python.sh (.venv/).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/mkdocs ] || scripts/setup-python.sh --deps-only
export NO_MKDOCS_2_WARNING=1   # mkdocs-material's notice about its successor
case "${1:-}" in
  "") ;;
  --serve) exec .venv/bin/mkdocs serve --strict ;;
  *) echo "build-docs: unknown option '$1' (use --serve, or nothing)" >&2; exit 2 ;;
esac
.venv/bin/python scripts/check-docs-pages.py
.venv/bin/mkdocs build --strict --quiet
echo "build-docs: site/ built ($(find site -name '*.html' | wc -l) pages)"
