#!/usr/bin/env python3
"""An NVML client in Python that knows nothing about the simulator.

Loads "libnvidia-ml.so.1" by soname through the dynamic loader (ctest puts the
simulator's directory on LD_LIBRARY_PATH), the way pynvml / nvidia-ml-py do,
and reads what an energy monitor reads. Exit code 0 = success.
"""
import ctypes
import sys

NVML_SUCCESS = 0
NVML_ERROR_NOT_SUPPORTED = 3
NVML_ERROR_UNINITIALIZED = 1
NVML_FI_DEV_POWER_INSTANT = 186
NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION = 83


class FieldValue(ctypes.Structure):
    _fields_ = [
        ("fieldId", ctypes.c_uint),
        ("scopeId", ctypes.c_uint),
        ("timestamp", ctypes.c_longlong),
        ("latencyUsec", ctypes.c_longlong),
        ("valueType", ctypes.c_int),
        ("nvmlReturn", ctypes.c_int),
        ("value", ctypes.c_ulonglong),  # the union, read as its widest member
    ]


class PciInfo(ctypes.Structure):
    _fields_ = [
        ("busIdLegacy", ctypes.c_char * 16),
        ("domain", ctypes.c_uint),
        ("bus", ctypes.c_uint),
        ("device", ctypes.c_uint),
        ("pciDeviceId", ctypes.c_uint),
        ("pciSubSystemId", ctypes.c_uint),
        ("busId", ctypes.c_char * 32),
    ]


def main() -> int:
    nvml = ctypes.CDLL("libnvidia-ml.so.1")
    nvml.nvmlErrorString.restype = ctypes.c_char_p
    failures = []

    def check(rc, expected=NVML_SUCCESS, what=""):
        if rc != expected:
            failures.append(f"{what}: got {nvml.nvmlErrorString(rc).decode()} ({rc}), expected {expected}")

    count = ctypes.c_uint()
    check(nvml.nvmlDeviceGetCount_v2(ctypes.byref(count)), NVML_ERROR_UNINITIALIZED, "count before init")
    check(nvml.nvmlInitWithFlags(0), what="init")
    version = ctypes.create_string_buffer(80)
    check(nvml.nvmlSystemGetDriverVersion(version, 80), what="driver version")
    check(nvml.nvmlDeviceGetCount_v2(ctypes.byref(count)), what="count")
    if count.value != 3:
        failures.append(f"expected 3 GPUs, got {count.value}")
    for i in range(count.value):
        handle = ctypes.c_void_p()
        check(nvml.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(handle)), what=f"handle {i}")
        name = ctypes.create_string_buffer(96)
        check(nvml.nvmlDeviceGetName(handle, name, 96), what="name")
        uuid = ctypes.create_string_buffer(96)
        check(nvml.nvmlDeviceGetUUID(handle, uuid, 96), what="uuid")
        by_uuid = ctypes.c_void_p()
        check(nvml.nvmlDeviceGetHandleByUUID(uuid, ctypes.byref(by_uuid)), what="handle by uuid")
        if by_uuid.value != handle.value:
            failures.append("handle by UUID differs from handle by index")
        pci = PciInfo()
        check(nvml.nvmlDeviceGetPciInfo_v3(handle, ctypes.byref(pci)), what="pci")
        energy = ctypes.c_ulonglong()
        check(nvml.nvmlDeviceGetTotalEnergyConsumption(handle, ctypes.byref(energy)),
              NVML_ERROR_NOT_SUPPORTED if i == 2 else NVML_SUCCESS, f"energy {i}")
        power = ctypes.c_uint()
        check(nvml.nvmlDeviceGetPowerUsage(handle, ctypes.byref(power)), what="power")
        temp = ctypes.c_uint()
        check(nvml.nvmlDeviceGetTemperature(handle, 0, ctypes.byref(temp)), what="temperature")
        lo, hi, limit = ctypes.c_uint(), ctypes.c_uint(), ctypes.c_uint()
        check(nvml.nvmlDeviceGetPowerManagementLimitConstraints(handle, ctypes.byref(lo), ctypes.byref(hi)),
              what="constraints")
        check(nvml.nvmlDeviceGetPowerManagementLimit(handle, ctypes.byref(limit)), what="limit")
        fields = (FieldValue * 2)()
        fields[0].fieldId = NVML_FI_DEV_POWER_INSTANT
        fields[1].fieldId = NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION
        check(nvml.nvmlDeviceGetFieldValues(handle, 2, fields), what="field values")
        check(fields[0].nvmlReturn, what="instant power field")
        if not (power.value > 0 and temp.value > 0 and lo.value <= limit.value <= hi.value):
            failures.append(f"implausible readings on GPU {i}")
        print(f"{i} {name.value.decode()} {uuid.value.decode()} {pci.busId.decode()} power={power.value} mW "
              f"temp={temp.value} C energy={energy.value} mJ limit={limit.value} mW")
    check(nvml.nvmlShutdown(), what="shutdown")
    for failure in failures:
        print("FAIL:", failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
