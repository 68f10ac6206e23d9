"""The interpreter exits cleanly (code 0) with every thread-owning object still alive (issue 22 §1).

Each object runs in its own Python process on the simulator's real clock (so
the energy monitor's counter watch thread runs) and is left referenced from
module globals at exit, as training scripts leave them. A thread still reading
the driver while the C and C++ exit handlers run ended the process with SIGSEGV
(139) when teardown was slow (transformers imported): a race, so each script
also checks the cause directly: once the atexit hooks have run, no thread but
the main one may be left (exit code 3 otherwise).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from conftest import a100s

PRELUDE = """
import atexit, os, socket, sys, time


def native_threads_left():
    # Registered before zeus_native is imported, so it runs after zeus_native's
    # own hook (atexit is last in, first out): by then every thread the package
    # started must be joined, before the C and C++ exit handlers run.
    left = len(os.listdir("/proc/self/task")) - 1
    if left:
        names = [open(f"/proc/self/task/{t}/comm").read().strip() for t in os.listdir("/proc/self/task")]
        print(f"{left} native thread(s) still running after the atexit hooks: {names}", file=sys.stderr)
        sys.stderr.flush()
        os._exit(3)


atexit.register(native_threads_left)
from zeus_native.monitor import ZeusMonitor

def unreachable_url():
    with socket.socket() as s:  # a port nothing listens on: pushes fail with a warning
        s.bind(("127.0.0.1", 0))
        return "http://127.0.0.1:%d" % s.getsockname()[1]
"""

# What each script leaves alive at exit. Each opens a window, so that the
# objects' threads are busy reading the GPUs when the interpreter ends.
OBJECTS = {
    "energy monitor": """
        monitor = ZeusMonitor(gpu_indices=[0, 1])
        monitor.begin_window("open at exit")
        time.sleep(0.3)
    """,
    "power monitor": """
        from zeus_native.monitor import PowerMonitor
        power = PowerMonitor(gpu_indices=[0, 1], update_period=0.01)
        time.sleep(0.2)
    """,
    "temperature monitor": """
        from zeus_native.monitor import TemperatureMonitor
        temperature = TemperatureMonitor(gpu_indices=[0, 1], update_period=0.01)
        time.sleep(0.2)
    """,
    "metrics": """
        import warnings
        warnings.simplefilter("ignore")
        from zeus_native.metric import EnergyCumulativeCounter, PowerGauge
        counter = EnergyCumulativeCounter([], [0, 1], 0.01, unreachable_url(), "exit")
        gauge = PowerGauge([0, 1], 0.01, unreachable_url(), "exit")
        counter.begin_window("open at exit")
        gauge.begin_window("open at exit")
        time.sleep(0.2)
    """,
    "carbon monitor": """
        from zeus_native.monitor import CarbonEmissionMonitor, EnergyCostMonitor
        from zeus_native.monitor.carbon import ConstantCarbonIntensity
        from zeus_native.monitor.price import ConstantPrice
        carbon = CarbonEmissionMonitor(ConstantCarbonIntensity(300.0), gpu_indices=[0, 1], poll_interval=0.01)
        cost = EnergyCostMonitor(ConstantPrice(0.1), gpu_indices=[0, 1], poll_interval=0.01)
        carbon.begin_window("open at exit")
        cost.begin_window("open at exit")
        time.sleep(0.2)
    """,
    "cpu packages": """
        monitor = ZeusMonitor(gpu_indices=[0], cpu_indices=[0])  # the CPU set's counter sampler runs
        monitor.begin_window("open at exit")
        time.sleep(0.2)
    """,
    "rapl wraparound tracker": """
        import os
        from zeus_native.device.cpu.rapl import RAPLFile
        rapl_file = RAPLFile(os.path.join(os.environ["ZEUS_POWERCAP_ROOT"], "intel-rapl:0"))
        rapl_file.read()  # starts its RaplWraparoundTracker's thread
        time.sleep(0.2)
    """,
    "power-limit optimizer done": """
        from zeus_native.optimizer import GlobalPowerLimitOptimizer
        monitor = ZeusMonitor(gpu_indices=[0, 1])
        plo = GlobalPowerLimitOptimizer(monitor, wait_steps=0, warmup_steps=0, profile_steps=2, pl_step=150)
        for _ in range(12):
            plo.on_step_begin()
            time.sleep(0.02)
            plo.on_step_end()
        assert type(plo.state).__name__ == "Done", plo.state
        monitor.begin_window("open at exit")
    """,
}


def fake_powercap(root):
    zone = root / "intel-rapl:0"
    zone.mkdir(parents=True)
    (zone / "name").write_text("package-0\n")
    (zone / "energy_uj").write_text("1000000\n")
    (zone / "max_energy_range_uj").write_text("262143328850\n")


@pytest.mark.parametrize("name", list(OBJECTS))
def test_the_interpreter_exits_cleanly_with_the_object_alive(sim, tmp_path, monkeypatch, name):
    fake_powercap(tmp_path / "powercap")
    monkeypatch.setenv("ZEUS_POWERCAP_ROOT", str(tmp_path / "powercap"))
    sim.start(a100s(2, clock="real"))
    script = tmp_path / "alive_at_exit.py"
    script.write_text(PRELUDE + textwrap.dedent(OBJECTS[name]))
    for attempt in range(3):  # the crash was a race: every run must be clean
        run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=dict(os.environ),
                             timeout=120)
        assert run.returncode == 0, (
            f"{name}, run {attempt + 1}: exit code {run.returncode} (3: a thread outlived the atexit hooks; "
            f"-11/139: the exit-time crash)\n{run.stderr}")


DAEMON_WINDOWS = """
import sys, threading, time
from zeus_native.monitor import ZeusMonitor

monitor = ZeusMonitor(gpu_indices=[0, 1], window_edges=sys.argv[1])


def windows(thread):
    i = 0
    while True:  # still inside begin_window/end_window when the interpreter exits
        key = f"t{thread}-{i}"
        monitor.begin_window(key, sync_execution=False)
        monitor.end_window(key, sync_execution=False)
        i += 1


for thread in range(int(sys.argv[2])):
    threading.Thread(target=windows, args=(thread,), daemon=True).start()
time.sleep(0.3)
"""


@pytest.mark.parametrize("edges", ["synchronous", "sampled"])
@pytest.mark.parametrize("threads", [1, 3])
def test_the_interpreter_exits_cleanly_with_daemon_threads_inside_windows(sim, tmp_path, edges, threads):
    sim.start(a100s(2, clock="real"))
    script = tmp_path / "daemon_windows.py"
    script.write_text(DAEMON_WINDOWS)
    for attempt in range(3):  # a race: every run must be clean
        run = subprocess.run([sys.executable, str(script), edges, str(threads)], capture_output=True, text=True,
                             env=dict(os.environ), timeout=120)
        assert run.returncode == 0, (
            f"{edges} edges, {threads} thread(s), run {attempt + 1}: exit code {run.returncode} "
            f"(-6/134: a thread taking the GIL back during finalization)\n{run.stderr[-2000:]}")
