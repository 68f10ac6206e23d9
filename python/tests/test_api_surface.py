"""Every public name of the issue's list exists and is documented; the extension ships type stubs."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pytest

PUBLIC = {
    "zeus_native.monitor": ["ZeusMonitor", "Measurement", "PowerMonitor", "PowerDomain", "TemperatureMonitor"],
    "zeus_native.monitor.energy": ["ZeusMonitor", "Measurement"],
    "zeus_native.monitor.carbon": ["CarbonEmissionMonitor", "CarbonIntensityProvider", "ElectricityMapsClient",
                                   "ElectrictyMapsClient", "ConstantCarbonIntensity", "CarbonIntensityFile",
                                   "ZeusCarbonIntensityHTTPError", "ZeusCarbonIntensityNotFoundError"],
    "zeus_native.monitor.price": ["EnergyCostMonitor", "ElectricityPriceProvider", "OpenEIClient", "ConstantPrice",
                                  "TimeOfUsePriceFile", "ZeusElectricityPriceHTTPError",
                                  "ZeusElectricityPriceNotFoundError"],
    "zeus_native.device": ["get_gpus", "get_cpus", "get_soc"],
    "zeus_native.device.exception": ["ZeusBaseGPUError", "ZeusBaseCPUError", "ZeusBaseSoCError", "ZeusdError"],
    "zeus_native.device.gpu": ["get_gpus", "GPUs", "ZeusGPUInitError", "ZeusGPUInvalidArgError",
                               "ZeusGPUNotSupportedError", "ZeusGPUNoPermissionError", "ZeusGPUHeterogeneousError",
                               "ZeusGPUUnknownError", "ZeusGPULostError"],
    "zeus_native.device.cpu": ["get_cpus", "CPUs", "ZeusCPUInitError", "ZeusCPUNoPermissionError",
                               "ZeusCPUNotFoundError", "ZeusRAPLNotSupportedError"],
    "zeus_native.device.soc": ["get_soc", "SoC", "ZeusSoCInitError", "ZeusJetsonInitError"],
    "zeus_native.exception": ["ZeusBaseError"],
    "zeus_native.optimizer": ["GlobalPowerLimitOptimizer", "HFGlobalPowerLimitOptimizer"],
    "zeus_native.optimizer.power_limit": ["GlobalPowerLimitOptimizer", "HFGlobalPowerLimitOptimizer", "Energy",
                                          "Time", "ZeusCost", "MaxSlowdownConstraint", "OptimumSelector"],
    "zeus_native.optimizer.batch_size": ["BatchSizeOptimizer", "JobSpec"],
    "zeus_native.optimizer.batch_size.exceptions": ["ZeusBSORuntimError", "ZeusBSOTrainFailError", "ZeusBSOConfigError",
                                                    "ZeusBSOOperationOrderError", "ZeusBSOBadOperationError"],
    "zeus_native.utils.lr_scaler": ["LinearScaler", "SquareRootScaler"],
    "zeus_native.profile": ["measure", "profile_measurement_duration", "profile_cooldown_duration",
                            "sweep_measurement_duration", "sweep_cooldown_duration", "profile_parameters",
                            "TrialResult", "SweepResult", "SweepReport"],
    "zeus_native.callback": ["Callback", "CallbackSet"],
    "zeus_native.metric": ["Metric", "EnergyHistogram", "EnergyCumulativeCounter", "PowerGauge"],
    "zeus_native.utils.metric": ["zeus_cost"],
    "zeus_native.utils.framework": ["sync_execution"],
    "zeus_native.show_env": ["main", "report"],
}


def _documented(obj) -> bool:
    """A docstring with prose, not only the signature nanobind generates."""
    lines = [l.strip() for l in (inspect.getdoc(obj) or "").splitlines() if l.strip()]
    return any(not re.match(r"^[\w.]*\(.*\)( -> .*)?$", l) for l in lines)


def _members(obj):
    for name, member in inspect.getmembers(obj):
        if name.startswith("_") and name not in ("__init__",):
            continue
        if name == "__init__" and member is object.__init__:
            continue
        if inspect.isfunction(member) or inspect.ismethoddescriptor(member) or isinstance(member, property) \
                or inspect.isbuiltin(member) or callable(member):
            yield name, member


@pytest.mark.parametrize("module_name", sorted(PUBLIC))
def test_public_names_exist_and_are_documented(module_name):
    module = importlib.import_module(module_name)
    assert (module.__doc__ or "").strip(), module_name
    undocumented = []
    for name in PUBLIC[module_name]:
        obj = getattr(module, name)
        if not _documented(obj):
            undocumented.append(name)
        if inspect.isclass(obj) and not issubclass(obj, BaseException) and not issubclass(obj, type(None)):
            for member_name, member in _members(obj):
                if member_name == "__init__":
                    continue
                owner = next((k for k in obj.__mro__ if member_name in vars(k)), None)
                if owner is None or owner.__module__ == "builtins" or owner is object:
                    continue
                if not _documented(member):
                    undocumented.append(f"{name}.{member_name}")
    assert undocumented == []


def test_extension_has_type_stubs():
    import zeus_native

    package = Path(zeus_native.__file__).parent
    stub = (package / "_core.pyi").read_text()
    assert "class EnergyMonitor" in stub and "def begin_window" in stub
    assert all(f"class {c}:" in stub for c in ("EnergyHistogram", "EnergyCumulativeCounter", "PowerGauge"))
    assert (package / "py.typed").exists()


def test_exception_hierarchy_matches_the_original():
    from zeus_native.device.cpu import ZeusCPUInitError, ZeusCPUNoPermissionError
    from zeus_native.device.exception import ZeusBaseCPUError, ZeusBaseGPUError, ZeusBaseSoCError, ZeusdError
    from zeus_native.device.gpu import ZeusGPUInitError, ZeusGPUInvalidArgError
    from zeus_native.device.soc import ZeusJetsonInitError, ZeusSoCInitError
    from zeus_native.exception import ZeusBaseError

    for cls in (ZeusBaseGPUError, ZeusBaseCPUError, ZeusBaseSoCError):
        assert issubclass(cls, ZeusBaseError)
    assert issubclass(ZeusdError, ZeusBaseGPUError)
    assert issubclass(ZeusGPUInitError, ZeusBaseGPUError) and issubclass(ZeusGPUInvalidArgError, ZeusBaseGPUError)
    assert issubclass(ZeusCPUInitError, ZeusBaseCPUError) and issubclass(ZeusCPUNoPermissionError, ZeusBaseCPUError)
    assert issubclass(ZeusSoCInitError, ZeusBaseSoCError) and issubclass(ZeusJetsonInitError, ZeusSoCInitError)
    e = ZeusGPUInitError("why (fix)")
    assert e.message == str(e) == "why (fix)"


def test_get_soc_says_why_there_is_none(sim):
    import platform

    from zeus_native.device import get_soc
    from zeus_native.device.soc import ZeusSoCInitError

    if platform.machine() != "aarch64":
        with pytest.raises(ZeusSoCInitError, match="Jetson"):
            get_soc()


def test_get_gpus_and_cpus_without_devices_say_why(sim, monkeypatch):
    monkeypatch.setenv("ZEUS_SIM_LIBRARY", "/nonexistent/libnvidia-ml.so.1")
    from zeus_native.device import get_cpus, get_gpus
    from zeus_native.device.cpu import ZeusCPUInitError
    from zeus_native.device.gpu import ZeusGPUInitError
    from zeus_native.monitor import ZeusMonitor

    with pytest.raises(ZeusGPUInitError, match="nonexistent"):
        get_gpus()
    with pytest.raises(ZeusCPUInitError, match="no-powercap|RAPL"):
        get_cpus()
    assert ZeusMonitor().gpu_indices == []  # like the original: no GPUs, silently empty
    with pytest.raises(ZeusGPUInitError):
        ZeusMonitor(gpu_indices=[0])


def test_sync_execution_function(monkeypatch):
    import sys
    import types

    from zeus_native.utils.framework import sync_execution

    calls = []
    cupy = types.ModuleType("cupy")
    cupy.cuda = types.SimpleNamespace(Device=lambda d: types.SimpleNamespace(synchronize=lambda: calls.append(d)))
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    sync_execution([1, 3], sync_with="cupy")
    assert calls == [1, 3]
