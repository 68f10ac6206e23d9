"""A third-party NVML client (NVIDIA's own `nvidia-ml-py` bindings from PyPI) that
knows nothing about Zeus, run against the simulator through the loader path.

Every value is checked against the simulator's own report (`zeus-sim status
--format json`) or against NVML's documented semantics, not against constants.
"""
import json
import subprocess
import sys
import time

import pynvml


def poll(what, fetch, deadline_s=20.0):
    """fetch() until it returns something truthy; an AssertionError naming `what` after deadline_s."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        value = fetch()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"{what}: nothing after {deadline_s} s")


def check_processes(zeus_sim: str, h, gpu: int) -> None:
    """A load attributed to PID 4242 (zeus-sim burn --pid) is what pynvml's own
    structs read back: the running process and its utilization samples."""
    burn = subprocess.Popen([zeus_sim, "burn", "--gpu", str(gpu), "--seconds", "60", "--util", "0.8", "--pid", "4242"],
                            stdout=subprocess.DEVNULL)
    try:
        procs = poll("a running process", lambda: pynvml.nvmlDeviceGetComputeRunningProcesses(h))
        assert [p.pid for p in procs] == [4242], [p.pid for p in procs]

        def busy_samples():
            try:
                samples = pynvml.nvmlDeviceGetProcessUtilization(h, 0)
            except (pynvml.NVMLError_NotFound, pynvml.NVMLError_InsufficientSize):
                return []  # no sample yet, or one arrived between pynvml's sizing call and its read
            return [s for s in samples if s.pid == 4242 and s.smUtil == 80]
        samples = poll("a utilization sample of PID 4242 at 80 %", busy_samples)
        assert all(s.timeStamp > 0 for s in samples)
    finally:
        burn.terminate()
        burn.wait()


def main(zeus_sim: str) -> int:
    pynvml.nvmlInit()
    try:
        driver = pynvml.nvmlSystemGetDriverVersion()
        assert driver, "driver version is empty"
        count = pynvml.nvmlDeviceGetCount()
        status = json.loads(subprocess.check_output([zeus_sim, "status", "--format", "json"]))
        sim_gpus = status["gpus"] if isinstance(status, dict) else status
        assert count == len(sim_gpus), f"pynvml sees {count} GPUs, the simulator {len(sim_gpus)}"
        for i in range(count):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            name = pynvml.nvmlDeviceGetName(h)
            uuid = pynvml.nvmlDeviceGetUUID(h)
            assert name == sim_gpus[i]["name"], (name, sim_gpus[i]["name"])
            assert uuid == sim_gpus[i]["uuid"], (uuid, sim_gpus[i]["uuid"])
            # Handles found by UUID and by PCI bus id are the same device.
            assert pynvml.nvmlDeviceGetIndex(pynvml.nvmlDeviceGetHandleByUUID(uuid)) == i
            pci = pynvml.nvmlDeviceGetPciInfo(h)
            assert pynvml.nvmlDeviceGetIndex(pynvml.nvmlDeviceGetHandleByPciBusId(pci.busId)) == i
            arch = pynvml.nvmlDeviceGetArchitecture(h)
            assert arch >= pynvml.NVML_DEVICE_ARCH_VOLTA, arch

            e1 = pynvml.nvmlDeviceGetTotalEnergyConsumption(h)
            power = pynvml.nvmlDeviceGetPowerUsage(h)
            temp = pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU)
            lo, hi = pynvml.nvmlDeviceGetPowerManagementLimitConstraints(h)
            limit = pynvml.nvmlDeviceGetPowerManagementLimit(h)
            default = pynvml.nvmlDeviceGetPowerManagementDefaultLimit(h)
            assert 0 < lo <= limit <= hi, (lo, limit, hi)
            assert lo <= default <= hi
            assert power > 0 and 0 < temp < 120, (power, temp)
            fields = pynvml.nvmlDeviceGetFieldValues(h, [pynvml.NVML_FI_DEV_POWER_INSTANT])
            assert fields[0].nvmlReturn == pynvml.NVML_SUCCESS
            assert fields[0].value.uiVal > 0
            mem = pynvml.nvmlDeviceGetMemoryInfo(h)
            assert mem.total > 0 and mem.used + mem.free == mem.total
            util = pynvml.nvmlDeviceGetUtilizationRates(h)
            assert 0 <= util.gpu <= 100
            clocks = pynvml.nvmlDeviceGetSupportedMemoryClocks(h)
            assert clocks and pynvml.nvmlDeviceGetSupportedGraphicsClocks(h, max(clocks))
            assert pynvml.nvmlDeviceGetComputeRunningProcesses(h) == []

            # The counter is cumulative and monotonic while nothing resets it.
            subprocess.check_call([zeus_sim, "burn", "--gpu", str(i), "--seconds", "0.3", "--util", "1"],
                                  stdout=subprocess.DEVNULL)
            e2 = pynvml.nvmlDeviceGetTotalEnergyConsumption(h)
            assert e2 > e1, (e1, e2)
            check_processes(zeus_sim, h, i)

            # Setters behave like NVML: out of range is INVALID_ARGUMENT.
            try:
                pynvml.nvmlDeviceSetPowerManagementLimit(h, hi + 1000)
                raise AssertionError("an out-of-range power limit was accepted")
            except pynvml.NVMLError as err:
                assert err.value == pynvml.NVML_ERROR_INVALID_ARGUMENT, err
            print(f"GPU {i}: {name} {uuid} energy {e1}->{e2} mJ power {power} mW temp {temp} C")
        try:
            pynvml.nvmlDeviceGetHandleByIndex(count)
            raise AssertionError("a handle past the last GPU was returned")
        except pynvml.NVMLError as err:
            assert err.value == pynvml.NVML_ERROR_INVALID_ARGUMENT, err
    finally:
        pynvml.nvmlShutdown()
    print("pynvml interop: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
