#!/usr/bin/env bash
# Python tooling from PyPI, pinned, in a virtual environment at .venv/
# (Debian's python3 + python3-venv), and the project's own Python package
# zeus_native (python/zeus_native, built from this repository with nanobind
# and scikit-build-core). Used by scripts/run-tests.sh.
#
#   scripts/setup-python.sh               the tools and zeus_native
#   scripts/setup-python.sh --deps-only   the tools only (CI downloads them while
#                                         the C++ tree compiles, then installs its wheel)
set -euo pipefail
cd "$(dirname "$0")/.."
deps_only=0
case "${1:-}" in
  "") ;;
  --deps-only) deps_only=1 ;;
  *) echo "setup-python: unknown option '$1' (use --deps-only, or nothing)" >&2; exit 2 ;;
esac

# NVIDIA's own NVML bindings: a real third-party NVML client for the simulator.
# The original Zeus's Python package (its zeusd client, tests/interop/zeusd/,
# and the side-by-side tests of python/tests/) with only what zeus.utils.zeusd,
# zeus.monitor (ZeusMonitor, PowerMonitor), zeus.device and zeus.show_env
# import: --no-deps skips the rest of its declared dependencies (pandas,
# amdsmi, tyro, torch...), so every package of the closure is pinned here.
REQUIREMENTS=(--no-deps
  nvidia-ml-py==13.580.82 PyJWT==2.10.1
  zeus==0.16.0
  httpx==0.28.1 httpcore==1.0.9 h11==0.16.0 anyio==4.16.0 idna==3.20 certifi==2026.10.18
  typing_extensions==4.16.0
  scikit-learn==1.9.1 scipy==1.17.1 numpy==2.4.6 joblib==1.6.0 cloudpickle==3.1.2
  narwhals==2.29.0 threadpoolctl==3.8.0
  # zeus_native's build backend and binding generator, and the test runner.
  nanobind==3.1.0 scikit-build-core==1.1.2 pathspec==1.1.1 packaging==26.3
  pytest==9.2.0 iniconfig==2.3.1 pluggy==1.7.0 pygments==2.21.0
  # Type checkers for the stubs test (python/tests/test_typing.py). pyright's
  # wheel carries its JavaScript (pyright/dist) and runs on Debian's nodejs,
  # offline.
  mypy==2.4.1 mypy_extensions==1.2.0 librt==0.17.0 ast_serialize==0.13.1
  pyright==1.1.414 nodeenv==1.12.0
  # The original batch-size optimizer client (zeus.optimizer.batch_size, tests/bso/);
  # SQLAlchemy makes the original server's database from its own schema module
  # (tests/bso/original_database_test.py; the sync engine needs no greenlet).
  pydantic==1.10.22 SQLAlchemy==2.0.44
  # The original lowtime (its Rust max flow in the wheel) for the Perseus
  # solver's parity test and benchmark; matplotlib, imported but only used to
  # draw, is stubbed there (tests/lowtime/lowtime_parity.py).
  lowtime==0.3.0 networkx==3.6.1 attrs==26.1.0
  # The documentation site (scripts/build-docs.sh): mkdocs-material, and
  # mkdocstrings reading zeus_native's sources statically for the Python API
  # reference (griffe, no import). certifi, idna, packaging, pathspec and
  # pygments are pinned above and satisfy these too.
  mkdocs==1.6.1 mkdocs-material==9.8.2 mkdocs-material-extensions==1.3.1
  mkdocs-get-deps==0.2.2 mergedeep==1.3.4 platformdirs==4.14.8 pyyaml_env_tag==1.1
  PyYAML==6.0.4 Jinja2==3.1.6 MarkupSafe==3.0.4 Markdown==3.11.3 click==8.5.1
  ghp-import==2.1.0 python-dateutil==4.0.0 watchdog==7.1.0 colorama==0.4.6
  babel==2.19.0 backrefs==8.3.1 paginate==0.5.7 pymdown-extensions==12.3
  requests==2.34.2 charset-normalizer==3.5.3 urllib3==2.8.0 tzdata==2026.6
  mkdocstrings==1.0.8 mkdocstrings-python==2.0.11 mkdocs-autorefs==1.4.5 griffelib==2.4.1
  # The built site in headless Chromium over the DevTools protocol
  # (scripts/check-docs-browser.py).
  websocket-client==1.9.2)
# A real framework without a GPU build, for zeus_native's sync_execution_with="jax"
# test, in its own directory (.venv/frameworks, put on sys.path by that test
# only): with a CPU-only JAX importable, the original's `python -m zeus.show_env`
# crashes (jax.devices("gpu") raises), which the zeusd interop tests run.
FRAMEWORKS=(jax==0.10.2 jaxlib==0.10.2 ml_dtypes==0.6.0 opt_einsum==3.4.0)

python=/usr/bin/python3
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
if ! .venv/bin/python -c 'import sys, importlib.metadata as m; sys.exit(any(m.version(n) != v for n, v in (r.split("==") for r in sys.argv[1:] if "==" in r)))' "${REQUIREMENTS[@]}" 2>/dev/null; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check "${REQUIREMENTS[@]}"
fi
if [ ! -f .venv/frameworks/.installed ] || [ "$(cat .venv/frameworks/.installed)" != "${FRAMEWORKS[*]}" ]; then
  rm -rf .venv/frameworks
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps --target .venv/frameworks "${FRAMEWORKS[@]}"
  echo "${FRAMEWORKS[*]}" > .venv/frameworks/.installed
fi
echo "setup-python: .venv ready ($(.venv/bin/python -c 'import pynvml, importlib.metadata as m; print("nvidia-ml-py", m.version("nvidia-ml-py"))'))"
[ "$deps_only" = 0 ] || exit 0

# zeus_native itself: a release wheel when ZEUS_NATIVE_WHEEL names one
# (scripts/run-tests.sh builds it first, so the tests run what users install
# and libzeus is not compiled once more for .venv), otherwise built from this
# checkout (pyproject.toml) in build-python/ so rebuilds are incremental, with
# the pinned build tools above (no build isolation).
if [ -n "${ZEUS_NATIVE_WHEEL:-}" ]; then
  [ -f "$ZEUS_NATIVE_WHEEL" ] || { echo "setup-python: ZEUS_NATIVE_WHEEL='$ZEUS_NATIVE_WHEEL' is not a file (scripts/build-wheel.sh writes dist/*.whl)" >&2; exit 2; }
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps --force-reinstall "$ZEUS_NATIVE_WHEEL"
else
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-build-isolation --no-deps .
fi
echo "setup-python: zeus_native $(.venv/bin/python -c 'import zeus_native; print(zeus_native.__version__)') installed"
