"""`python -m zeus_native.show_env`: versions, GPUs, CPUs, SoC and zeusd, as the original's show_env."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import platform
import shutil

import zeus_native
from zeus_native.device import _sets


def _version(module: str) -> str:
    if importlib.util.find_spec(module) is None:
        return "not available"
    try:
        return importlib.metadata.version({"cupy": "cupy"}.get(module, module))
    except importlib.metadata.PackageNotFoundError:
        return "available"


def report() -> str:
    """The report, as text."""
    rule = "-" * shutil.get_terminal_size((80, 20)).columns
    lines = [rule, "## Package availability and versions", "Detected:"]
    lines.append(f"  Python version: {platform.python_version()}")
    lines.append(f"  Zeus (zeus_native): {zeus_native.__version__}")
    lines.append(f"  PyTorch: {_version('torch')}")
    lines.append(f"  JAX: {_version('jax')}")
    lines.append(f"  CuPy: {_version('cupy')}")
    lines += [rule, "## Device availability"]
    lines.append(f"CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', '[NOT SET]')}")
    lines.append(f"HIP_VISIBLE_DEVICES={os.environ.get('HIP_VISIBLE_DEVICES', '[NOT SET]')}")
    gpus = _sets.gpus()
    if gpus.init_error is not None or len(gpus) == 0:
        lines.append("  No GPUs available.")
        if gpus.init_error:
            lines.append(f"  {gpus.init_error}")
    else:
        info = gpus.backend_info
        lines.append(f"Backend: {info['backend']}{' (simulated)' if info['simulated'] else ''}, "
                     f"driver {info['driver_version']}")
        lines.append("Device index mapping: Physical (e.g., nvidia-smi) -> Zeus (or any CUDA application)")
        for i in range(len(gpus)):
            lines.append(f"    GPU {gpus.get_physical_index(i)} -> GPU {i} ({gpus.get_name(i)})")
    lines += [rule, "## CPU availability"]
    cpus = _sets.cpus()
    if cpus.init_error is not None or len(cpus) == 0:
        lines.append(f"  No CPUs available. {cpus.init_error or ''}".rstrip())
    else:
        for i in range(len(cpus)):
            lines.append(f"  CPU {i}:")
            status = cpus.get_status(i)
            if status is None:
                lines.append(f"    CPU measurements available ({cpus.get_zone_path(i)})")
            else:
                lines.append(f"    CPU measurements unavailable ({status})")
            dram = "available" if cpus.supports_get_dram_energy_consumption(i) else "unavailable"
            lines.append(f"    DRAM measurements {dram}")
    lines += [rule, "## SoC availability"]
    soc = _sets.soc()
    if soc.init_error is None:
        lines.append(f"  {soc.name}: Available metrics: {', '.join(soc.get_available_metrics())}")
    else:
        lines.append(f"  No SoC available. ({soc.init_error})")
    lines += [rule, "## Zeusd daemon"]
    endpoint = gpus.backend_info.get("zeusd_endpoint") if gpus.init_error is None else None
    if endpoint:
        lines.append(f"  Endpoint: {endpoint}")
    elif os.environ.get("ZEUSD_SOCK_PATH") or os.environ.get("ZEUSD_HOST_PORT"):
        lines.append(f"  Configured: {os.environ.get('ZEUSD_SOCK_PATH') or os.environ.get('ZEUSD_HOST_PORT')}")
    else:
        lines.append("  Not configured (set ZEUSD_SOCK_PATH or ZEUSD_HOST_PORT to connect).")
    lines.append(rule)
    return "\n".join(lines)


def main() -> int:
    """Print the report."""
    print(report())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
