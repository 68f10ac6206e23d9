"""The original's exception classes, raised by the faults they name (the
simulator's presets, permissions and injected faults), and the remaining
public names of the issue's list used for what they are."""

from __future__ import annotations

import pytest

from conftest import a100s


def _sim_one(sim, model: str, **entry) -> None:
    sim.start({"clock": "virtual", "gpus": [{"model": model, "count": 1, **entry}]})


def test_pre_volta_energy_is_not_supported(sim):
    _sim_one(sim, "P100-PCIE-16GB")
    from zeus_native.device import get_gpus
    from zeus_native.device.gpu import ZeusGPUNotSupportedError

    assert not get_gpus().supports_get_total_energy_consumption(0)
    with pytest.raises(ZeusGPUNotSupportedError, match="energy counter is not available.*Volta"):
        get_gpus().get_total_energy_consumption(0)


def test_a_forbidden_setter_is_no_permission_with_the_zeusd_fix(sim):
    _sim_one(sim, "A100-SXM4-40GB", permissions={"set_power_limit": False})
    from zeus_native.device import get_gpus
    from zeus_native.device.gpu import ZeusGPUNoPermissionError

    with pytest.raises(ZeusGPUNoPermissionError, match="Insufficient Permissions.*zeusd"):
        get_gpus().set_power_management_limit(0, 200_000)
    assert get_gpus().get_power_management_limit(0) == 400_000  # unchanged


def test_mixed_models_are_heterogeneous(sim):
    sim.start({"clock": "virtual", "gpus": [{"model": "A100-SXM4-40GB", "count": 1},
                                            {"model": "V100-SXM2-16GB", "count": 1}]})
    from zeus_native.device import get_gpus
    from zeus_native.device.gpu import ZeusGPUHeterogeneousError

    with pytest.raises(ZeusGPUHeterogeneousError, match="A100.*V100.*CUDA_VISIBLE_DEVICES"):
        get_gpus(ensure_homogeneous=True)
    assert len(get_gpus()) == 2  # without the check the set opens


@pytest.mark.parametrize("fault, error", [("GPU_IS_LOST", "ZeusGPULostError"),
                                          ("NVML_ERROR_UNKNOWN", "ZeusGPUUnknownError")])
def test_a_gpu_that_failed_to_initialise_raises_its_nvml_error(sim, fault, error):
    sim.start({"clock": "virtual", "gpus": [{"model": "A100-SXM4-40GB", "count": 1},
                                            {"model": "A100-SXM4-40GB", "count": 1,
                                             "faults": {"init_error": fault}}]})
    import zeus_native.device.gpu as gpu
    from zeus_native.device import get_gpus

    assert get_gpus().get_name(0) == "NVIDIA A100-SXM4-40GB"  # the other GPU keeps working
    with pytest.raises(getattr(gpu, error), match="GPU 1 .*failed to initialise"):
        get_gpus().get_name(1)


def test_every_error_class_has_the_original_s_base():
    from zeus_native.device import cpu, gpu, soc
    from zeus_native.device.exception import ZeusBaseCPUError, ZeusBaseGPUError, ZeusBaseSoCError

    for name in ("ZeusGPUInitError", "ZeusGPUInvalidArgError", "ZeusGPUNotSupportedError", "ZeusGPUNoPermissionError",
                 "ZeusGPUHeterogeneousError", "ZeusGPUUnknownError", "ZeusGPULostError"):
        assert issubclass(getattr(gpu, name), ZeusBaseGPUError), name
    for name in ("ZeusCPUInitError", "ZeusCPUNoPermissionError", "ZeusCPUNotFoundError", "ZeusRAPLNotSupportedError"):
        assert issubclass(getattr(cpu, name), ZeusBaseCPUError), name
    assert issubclass(soc.ZeusJetsonInitError, ZeusBaseSoCError)


def test_selectors_share_the_original_s_base():
    from zeus_native.optimizer.power_limit import Energy, MaxSlowdownConstraint, OptimumSelector, Time, ZeusCost

    for selector in (Energy(), Time(), ZeusCost(eta_knob=0.5, world_size=1), MaxSlowdownConstraint(factor=1.1)):
        assert isinstance(selector, OptimumSelector)


def test_profile_names_of_the_original_and_their_report_classes(sim):
    sim.start(a100s(1))
    from zeus_native.monitor import ZeusMonitor
    from zeus_native.profile import (SweepReport, SweepResult, TrialResult, measure, profile_cooldown_duration,
                                     profile_measurement_duration, sweep_cooldown_duration,
                                     sweep_measurement_duration)

    assert profile_measurement_duration is sweep_measurement_duration
    assert profile_cooldown_duration is sweep_cooldown_duration
    monitor = ZeusMonitor()

    def step():
        sim.advance(0.01)

    trial = measure(step, monitor, measurement_duration=0.2, cooldown_duration=0.0, num_warmup_iterations=1,
                    num_calibration_iterations=3)
    assert isinstance(trial, TrialResult) and trial.iterations >= 1
    report = profile_cooldown_duration(step, monitor, [0.0], measurement_duration=0.2, num_trials=1,
                                       num_warmup_trials=0, num_warmup_iterations=1, num_calibration_iterations=3)
    assert isinstance(report, SweepReport)
    assert all(isinstance(entry, SweepResult) for entry in report.entries) and len(report.entries) == 1
