"""`python -m zeus_native.show_env [--format human|json] [--check-control]`.

The Python packages this interpreter has (PyTorch, JAX, CuPy), then the same
report as `zeus show-env` (one library implementation): GPUs with their
capabilities and why not, CPU packages, SoC rails and the zeusd daemon.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import platform

import zeus_native
from zeus_native import _core
from zeus_native.device import _sets


def _version(module: str) -> str:
    if importlib.util.find_spec(module) is None:
        return "not available"
    try:
        return importlib.metadata.version(module)
    except importlib.metadata.PackageNotFoundError:
        return "available"


def packages() -> dict[str, str]:
    """Python, zeus_native and the frameworks ZeusMonitor can synchronise with."""
    return {
        "python": platform.python_version(),
        "zeus_native": zeus_native.__version__,
        "torch": _version("torch"),
        "jax": _version("jax"),
        "cupy": _version("cupy"),
    }


def report(format: str = "human", check_control: bool = False) -> str:  # noqa: A002 (the CLI's option name)
    """The report as text ("human") or one JSON document ("json")."""
    gpus = _sets.gpus()
    env_json, human, _ = _core.environment_report(gpus, _sets.cpus(), _sets.soc(), check_control)
    if format == "json":
        document = json.loads(env_json)
        document["python_packages"] = packages()
        return json.dumps(document, indent=2)
    pkgs = packages()
    head = [
        "Python packages:",
        f"  Python {pkgs['python']}, zeus_native {pkgs['zeus_native']}",
        f"  PyTorch: {pkgs['torch']}, JAX: {pkgs['jax']}, CuPy: {pkgs['cupy']}",
        "",
    ]
    # The library's report opens with its own "Zeus <version>" line: the same
    # version as zeus_native's, said once above.
    first, _, rest = human.partition("\n")
    if first.startswith("Zeus "):
        human = rest
    return "\n".join(head) + human


def show_env() -> None:
    """Print the report (human format), as the original's show_env()."""
    print(report(), end="")


def main(argv: list[str] | None = None) -> int:
    """Print the report; exit status 0 (as the original's show_env)."""
    parser = argparse.ArgumentParser(prog="python -m zeus_native.show_env")
    parser.add_argument("--format", choices=["human", "json"], default="human")
    parser.add_argument("--check-control", action="store_true",
                        help="find out whether the power limit may be changed by re-applying each GPU's limit")
    args = parser.parse_args(argv)
    print(report(args.format, args.check_control), end="" if args.format == "human" else "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
