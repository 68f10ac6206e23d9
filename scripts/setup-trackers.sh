#!/usr/bin/env bash
# The experiment trackers and Lightning (PyPI, pinned) for the tests of
# zeus_native.integrations (python/tests/test_trackers.py) and the docs'
# examples that need them: a directory of their own OUTSIDE the clone and the
# main .venv, kept between runs (ZEUS_CACHE_DIR, default ~/.cache/zeus-native)
# like scripts/setup-frameworks.sh's. It goes on sys.path AFTER that torch
# directory: Lightning and torchmetrics are installed without their
# dependencies so that torch (5.6 GB) is never downloaded twice; torch comes
# from there. Prints the directory.
set -euo pipefail
cd "$(dirname "$0")/.."

# With their dependencies (SQLAlchemy, Flask, pandas, protobuf, wandb's core...):
# mlflow's server too (the tests start one), and Lightning's own small ones.
TRACKERS=(mlflow==3.17.2 wandb==0.31.0
  lightning-utilities==0.15.3 "fsspec[http]==2026.9.0" PyYAML==6.0.4 tqdm==4.70.1 packaging==26.4
  typing_extensions==4.16.0)
# Without dependencies (each declares torch, which the frameworks' directory has).
ON_TORCH=(lightning==2.6.6 torchmetrics==1.9.0)
python=.venv/bin/python
[ -x "$python" ] || { echo "setup-trackers: run scripts/setup-python.sh first (it makes .venv/)" >&2; exit 1; }

key=$(printf '%s\n' "$("$python" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')" "${TRACKERS[@]}" \
      "${ON_TORCH[@]}" | sha256sum | cut -c1-12)
dir="${ZEUS_CACHE_DIR:-$HOME/.cache/zeus-native}/trackers-$key"
if [ ! -f "$dir/.installed" ]; then
  rm -rf "$dir.partial"
  mkdir -p "$(dirname "$dir")"
  pip=("$python" -m pip install --quiet --disable-pip-version-check --no-warn-script-location --no-warn-conflicts
       --target "$dir.partial")
  "${pip[@]}" "${TRACKERS[@]}" >&2
  # Console scripts are of no use here (their #! is .venv's python, without this
  # directory on its path: the tests run python -m mlflow); the second install
  # would warn that bin/ exists.
  rm -rf "$dir.partial/bin"
  "${pip[@]}" --no-deps "${ON_TORCH[@]}" >&2
  rm -rf "$dir.partial/bin"
  echo "${TRACKERS[*]} ${ON_TORCH[*]}" > "$dir.partial/.installed"
  rm -rf "$dir"
  mv "$dir.partial" "$dir"
fi
echo "$dir"
