#!/usr/bin/env bash
# Real PyTorch + Hugging Face transformers + accelerate (PyPI, pinned) for the
# framework acceptance tests (python/tests/test_frameworks.py), in a directory
# of their own OUTSIDE the clone and the main .venv: the PyPI torch wheel
# brings ~3 GB of CUDA libraries, so it is installed once per pinned set and
# kept between runs (ZEUS_CACHE_DIR, default ~/.cache/zeus-native). Only those
# tests put it on sys.path. Prints the directory.
#
#   scripts/setup-frameworks.sh             the frameworks' directory
#   scripts/setup-frameworks.sh --examples  that, then on a second line a directory with what
#                                           only the original's examples import (Hugging Face
#                                           datasets and evaluate for run_clm, tensorboardX for
#                                           the batch-size optimizer's MNIST; ~400 MB with pyarrow
#                                           and pandas), to go after the first on their path
set -euo pipefail
cd "$(dirname "$0")/.."

FRAMEWORKS=(torch==2.15.0 transformers==5.24.0 accelerate==1.15.0)
EXAMPLE_EXTRAS=(datasets==5.2.0 evaluate==0.4.6 tensorboardX==2.6.5)
examples=0
case "${1:-}" in
  "") ;;
  --examples) examples=1 ;;
  *) echo "setup-frameworks: unknown option '$1' (use --examples, or nothing)" >&2; exit 2 ;;
esac
python=.venv/bin/python
[ -x "$python" ] || { echo "setup-frameworks: run scripts/setup-python.sh first (it makes .venv/)" >&2; exit 1; }

# Installs PACKAGES (with their dependencies, so the directory is complete on
# its own) once into $ZEUS_CACHE_DIR/NAME-<hash of the Python and the pins>;
# prints the directory.
install_once() {
  local name="$1"; shift
  local key dir
  key=$(printf '%s\n' "$("$python" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')" "$@" \
        | sha256sum | cut -c1-12)
  dir="${ZEUS_CACHE_DIR:-$HOME/.cache/zeus-native}/$name-$key"
  if [ ! -f "$dir/.installed" ]; then
    rm -rf "$dir.partial"
    mkdir -p "$(dirname "$dir")"
    "$python" -m pip install --quiet --disable-pip-version-check --no-warn-script-location \
      --target "$dir.partial" "$@" >&2
    echo "$*" > "$dir.partial/.installed"
    rm -rf "$dir"
    mv "$dir.partial" "$dir"
  fi
  echo "$dir"
}

# numpy, tokenizers, the nvidia-* CUDA wheels... come with torch.
install_once frameworks-torch "${FRAMEWORKS[@]}"
[ "$examples" = 0 ] || install_once frameworks-examples "${EXAMPLE_EXTRAS[@]}"
