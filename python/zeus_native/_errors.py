"""Maps a native error (code, text, family) to the original Zeus's exception class."""

from __future__ import annotations


import re


def sentence(text: str) -> str:
    """The message as the original's read: a capital first letter ("Measurement window 'x'
    does not exist"), unless it starts with a name (sync_execution_with=..., nvmlInit)."""
    first = re.match(r"[a-z]+(?=[\s,:;.]|$)", text)
    return text[0].upper() + text[1:] if first else text


# The shared C++ library's messages name the zeus CLI and C++ options; raised to
# Python they name what a Python user passes or runs instead.
PYTHON_SPELLINGS = (
    ("run `zeus show-env` to see", "run `python -m zeus_native.show_env` to see"),
    ("`zeus show-env`", "`python -m zeus_native.show_env`"),
    ("zeus show-env", "python -m zeus_native.show_env"),
    ("restart = true", "restart=True"),
    ("estimate = true (--carbon-estimate)", "estimate=True"),
    ("PowerMonitorOptions::domains", "power_domains"),
    ("CpuOptions::powercap_root or ZEUS_POWERCAP_ROOT", "ZEUS_POWERCAP_ROOT"),
    ("(--simulate or ZEUS_SIMULATE=1)", "(ZEUS_SIMULATE=1)"),
    ("use --simulate", "set ZEUS_SIMULATE=1"),
    ("--log (log_file)", "log_file"),
    ("--carbon-intensity or --carbon-file", "ConstantCarbonIntensity or CarbonIntensityFile"),
    ("(--carbon-zone LAT,LON)", "(ElectricityMapsClient((lat, lon)))"),
    ("or use --price / --price-file", "or use ConstantPrice"),
)


def python_spelling(text: str) -> str:
    """`text` with the CLI's and C++'s spellings replaced by Python's."""
    for native, python in PYTHON_SPELLINGS:
        text = text.replace(native, python)
    return text


def native_error(code: str, text: str, family: str) -> Exception:
    """The exception instance the native core raises for an error (internal)."""
    text = sentence(python_spelling(text))
    from zeus_native.device import exception as base
    from zeus_native.device.cpu import common as cpu
    from zeus_native.device.gpu import common as gpu
    from zeus_native.device.soc import common as soc

    if family == "value" and code in ("invalid state", "not found", "invalid argument", "no data"):
        return ValueError(text)
    if family in ("gpu", "value"):
        return gpu.GPU_ERRORS.get(code, gpu.ZeusGPUUnknownError)(text)
    if family == "cpu":
        if code == "no permission":
            return cpu.ZeusCPUNoPermissionError(text)
        if code == "not found":
            return cpu.ZeusCPUNotFoundError(text)
        return cpu.ZeusCPUInitError(text)
    if family == "soc":
        return soc.ZeusSoCInitError(text)
    del base
    return RuntimeError(text)
