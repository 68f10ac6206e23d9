"""Every bound entry point that takes a device index, called with every kind of
out-of-range index, raises the original's exception class and never takes the
interpreter down. The entry points are found by introspecting the bound API
(native classes of zeus_native._core and the device classes users get), so a
method added later is covered without editing this file."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from conftest import a100s

# Past the end, far past, negative, and past 31, 32, 63 and 64 bits.
OUT_OF_RANGE = [2, 100, -1, -2, 2**31, 2**32, 2**63, 2**64, -(2**64)]

# Runs in a child: a crash (SIGSEGV, abort) must show as the child's exit status,
# not kill pytest. Prints one JSON line per call: where, index, outcome.
PROBE = textwrap.dedent(
    r"""
    import inspect, json, re, sys
    import zeus_native._core as core
    from zeus_native.device import get_cpus, get_gpus
    from zeus_native.device.gpu import NVIDIAGPU
    from zeus_native.device.cpu import RAPLCPU
    from zeus_native.monitor import PowerMonitor, TemperatureMonitor, ZeusMonitor

    OUT_OF_RANGE = json.loads(sys.argv[1])
    INDEX_NAMES = {"gpu_index", "cpu_index", "device_id", "index"}

    def parameters(function):
        sig = getattr(function, "__nb_signature__", None)
        if sig is not None:  # nanobind: "def name(self, gpu_index: int, block: bool = True) -> None"
            text = sig[0][0]
            inside = text[text.index("(") + 1 : text.rindex(")")]
            names, depth, current = [], 0, ""
            for ch in inside + ",":
                if ch in "[(":
                    depth += 1
                elif ch in "])":
                    depth -= 1
                if ch == "," and depth == 0:
                    names.append(current.strip())
                    current = ""
                else:
                    current += ch
            return [(n.split(":")[0].split("=")[0].strip(), "=" in n) for n in names if n]
        try:
            signature = inspect.signature(function)
        except (TypeError, ValueError):
            return []
        return [(p.name, p.default is not inspect.Parameter.empty) for p in signature.parameters.values()
                if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]

    def report(where, index, outcome):
        print(json.dumps({"where": where, "index": str(index), "outcome": outcome}), flush=True)

    def call(where, function, args, kwargs):
        try:
            function(*args, **kwargs)
            return "returned"
        except Exception as e:
            return type(e).__name__

    # Objects users reach, and the native class behind each.
    gpus = get_gpus()
    cpus = get_cpus()
    power = PowerMonitor(gpu_indices=[0, 1], update_period=0.1)
    temperature = TemperatureMonitor(gpu_indices=[0, 1], update_period=0.1)
    objects = {
        "get_gpus()": gpus,
        "ZeusMonitor().gpus": ZeusMonitor(gpu_indices=[0]).gpus,
        "get_cpus()": cpus,
        "PowerMonitor": power,
        "TemperatureMonitor": temperature,
    }
    covered = {cls for o in objects.values() for cls in type(o).__mro__}

    # Every native class with a method that takes an index must be reached above.
    for name, cls in vars(core).items():
        if not isinstance(cls, type):
            continue
        for attr, function in vars(cls).items():
            params = parameters(function)
            if attr != "__init__" and any(p in INDEX_NAMES for p, _ in params) and cls not in covered:
                report(f"core.{name}.{attr}", None, "NOT REACHED")

    def public_methods(obj):
        for attr in dir(obj):
            function = getattr(obj, attr)
            if attr.startswith("_") or not callable(function):
                continue
            target = function
            alias = re.match(r"Deprecated alias of (\w+)", function.__doc__ or "")
            if alias:  # a camelCase alias takes its snake_case method's arguments
                target = getattr(obj, alias.group(1))
            yield attr, function, [p for p in parameters(target) if p[0] != "self"]

    for where, obj in objects.items():
        for attr, function, params in public_methods(obj):
            for position, (name, has_default) in enumerate(params):
                if name not in INDEX_NAMES:
                    continue
                for index in OUT_OF_RANGE:
                    args, kwargs = [], {}
                    for other, other_default in params[:position]:
                        if other == "power_domain":
                            args.append("device_instant")
                        elif not other_default:
                            args.append(0)
                    kwargs[name] = index
                    for other, other_default in params[position + 1 :]:
                        if not other_default:
                            kwargs[other] = True if other in ("enabled", "block") else 0
                    report(f"{where}.{attr}", index, call(where, function, args, kwargs))

    # One device object per bad index: every method of it refuses.
    for cls in (NVIDIAGPU, RAPLCPU):
        for index in OUT_OF_RANGE:
            try:
                device = cls(index)
            except Exception as e:  # refused when made: as good as every method refusing
                report(f"{cls.__name__}(i).__init__", index, type(e).__name__)
                continue
            for attr, function, params in public_methods(device):
                args = [True if n in ("enabled", "block") else 0 for n, d in params if not d]
                report(f"{cls.__name__}(i).{attr}", index, call(cls.__name__, function, args, {}))
    power.stop()
    print("DONE", flush=True)
    """
)


def _probe(tmp_path, sim) -> list[dict]:
    zone = tmp_path / "powercap" / "intel-rapl:0"
    zone.mkdir(parents=True)
    (zone / "name").write_text("package-0\n")
    (zone / "energy_uj").write_text("1000000\n")
    (zone / "max_energy_range_uj").write_text("262143328850\n")
    import os

    env = dict(os.environ, ZEUS_POWERCAP_ROOT=str(tmp_path / "powercap"))
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    result = subprocess.run([sys.executable, str(script), json.dumps(OUT_OF_RANGE)], env=env,
                            capture_output=True, text=True, timeout=300)
    lines = result.stdout.splitlines()
    assert result.returncode == 0 and lines[-1:] == ["DONE"], (
        f"the probe died (exit {result.returncode}) after:\n" + "\n".join(lines[-5:]) + "\n" + result.stderr[-3000:])
    return [json.loads(line) for line in lines[:-1]]


def test_every_index_taking_entry_point_refuses_out_of_range_indices(sim, tmp_path):
    sim.start(a100s(2))
    calls = _probe(tmp_path, sim)
    assert not [c["where"] for c in calls if c["outcome"] == "NOT REACHED"], "a native class is not reached"
    by_where: dict[str, set[str]] = {}
    for c in calls:
        by_where.setdefault(c["where"], set()).add(c["outcome"])

    gpu_getters = ["get_power_management_limit", "get_instant_power_usage", "get_average_power_usage",
                   "get_average_memory_power_usage", "get_total_energy_consumption", "get_gpu_temperature",
                   "get_power_management_limit_constraints", "get_supported_graphics_clocks",
                   "get_supported_memory_clocks", "get_persistence_mode", "get_name",
                   "set_power_management_limit", "getPowerManagementLimitConstraints", "getInstantPowerUsage",
                   "getTotalEnergyConsumption", "getGpuTemperature"]
    for where in ("get_gpus()", "ZeusMonitor().gpus", "NVIDIAGPU(i)"):
        for getter in gpu_getters:
            assert f"{where}.{getter}" in by_where, f"{where}.{getter} was not found by introspection"
    for where, outcomes in by_where.items():
        if where.startswith(("get_gpus()", "ZeusMonitor().gpus", "NVIDIAGPU(i)")):
            expected = {"ZeusGPUInvalidArgError"}
        elif where.startswith(("get_cpus()", "RAPLCPU(i)")):
            expected = {"ZeusCPUNotFoundError"}
        else:  # a monitor's timeline filter: an index that is no monitored GPU selects none
            expected = {"returned"}
        if where.endswith(("supports_nonblocking_setters",)):
            continue
        assert outcomes == expected, f"{where}: {outcomes}, expected {expected}"


def test_a_timeline_filter_with_no_such_gpu_selects_none(sim):
    sim.start(a100s(2))
    from zeus_native.monitor import PowerMonitor

    monitor = PowerMonitor(gpu_indices=[0, 1], update_period=0.1)
    sim.advance(1.0)
    for bad in (-1, 2, 2**64):
        assert monitor.get_power_timeline("device_instant", gpu_index=bad) == {}
        assert all(lines == {} for lines in monitor.get_all_power_timelines(gpu_index=bad).values())
