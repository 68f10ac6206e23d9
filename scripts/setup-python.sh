#!/usr/bin/env bash
# Python tooling for the interop tests, from PyPI, in a virtual environment at
# .venv/ (Debian's python3 + python3-venv). Used by scripts/run-tests.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

# NVIDIA's own NVML bindings: a real third-party NVML client for the simulator.
REQUIREMENTS=(nvidia-ml-py==13.580.82 PyJWT==2.10.1)

python=/usr/bin/python3
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
if ! .venv/bin/python -c "import pynvml" 2>/dev/null; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check "${REQUIREMENTS[@]}"
fi
echo "setup-python: .venv ready ($(.venv/bin/python -c 'import pynvml, importlib.metadata as m; print("nvidia-ml-py", m.version("nvidia-ml-py"))'))"
