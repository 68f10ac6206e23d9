#!/usr/bin/env bash
# Real PyTorch + Hugging Face transformers + accelerate (PyPI, pinned) for the
# framework acceptance tests (python/tests/test_frameworks.py), in a directory
# of their own OUTSIDE the clone and the main .venv: the PyPI torch wheel
# brings ~3 GB of CUDA libraries, so it is installed once per pinned set and
# kept between runs (ZEUS_CACHE_DIR, default ~/.cache/zeus-native). Only those
# tests put it on sys.path. Prints the directory.
set -euo pipefail
cd "$(dirname "$0")/.."

FRAMEWORKS=(torch==2.15.0 transformers==5.24.0 accelerate==1.15.0)
python=.venv/bin/python
[ -x "$python" ] || { echo "setup-frameworks: run scripts/setup-python.sh first (it makes .venv/)" >&2; exit 1; }

key=$(printf '%s\n' "$("$python" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')" "${FRAMEWORKS[@]}" \
      | sha256sum | cut -c1-12)
dir="${ZEUS_CACHE_DIR:-$HOME/.cache/zeus-native}/frameworks-torch-$key"
if [ ! -f "$dir/.installed" ]; then
  rm -rf "$dir.partial"
  mkdir -p "$(dirname "$dir")"
  # With their dependencies (numpy, tokenizers, the nvidia-* CUDA wheels...):
  # the directory is complete on its own and goes first on the tests' path.
  "$python" -m pip install --quiet --disable-pip-version-check --no-warn-script-location \
    --target "$dir.partial" "${FRAMEWORKS[@]}" >&2
  echo "${FRAMEWORKS[*]}" > "$dir.partial/.installed"
  rm -rf "$dir"
  mv "$dir.partial" "$dir"
fi
echo "$dir"
