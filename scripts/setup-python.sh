#!/usr/bin/env bash
# Python tooling for the interop tests, from PyPI, in a virtual environment at
# .venv/ (Debian's python3 + python3-venv). Used by scripts/run-tests.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

# NVIDIA's own NVML bindings: a real third-party NVML client for the simulator.
# The original Zeus's Python package (its zeusd client, tests/interop/zeusd/) with
# only what zeus.utils.zeusd, zeus.monitor.power_streaming (whose package imports
# scikit-learn), zeus.device and zeus.show_env import: --no-deps skips the rest of
# its declared dependencies (pandas, amdsmi, tyro, ...), so every package of the
# closure is pinned here. pydantic (v1 API) is what the original batch-size
# optimizer client (zeus.optimizer.batch_size, tests/bso/) needs besides httpx.
REQUIREMENTS=(--no-deps
  nvidia-ml-py==13.580.82 PyJWT==2.10.1
  zeus==0.16.0
  httpx==0.28.1 httpcore==1.0.9 h11==0.16.0 anyio==4.16.0 idna==3.20 certifi==2026.10.18
  typing_extensions==4.16.0
  scikit-learn==1.9.1 scipy==1.17.1 numpy==2.4.6 joblib==1.6.0 cloudpickle==3.1.2
  narwhals==2.29.0 threadpoolctl==3.8.0
  pydantic==1.10.22)

python=/usr/bin/python3
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
if ! .venv/bin/python -c 'import sys, importlib.metadata as m; sys.exit(any(m.version(n) != v for n, v in (r.split("==") for r in sys.argv[1:] if "==" in r)))' "${REQUIREMENTS[@]}" 2>/dev/null; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check "${REQUIREMENTS[@]}"
fi
echo "setup-python: .venv ready ($(.venv/bin/python -c 'import pynvml, importlib.metadata as m; print("nvidia-ml-py", m.version("nvidia-ml-py"))'))"
