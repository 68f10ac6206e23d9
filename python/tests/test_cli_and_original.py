"""python -m zeus_native.monitor / show_env, and side by side with the original Zeus 0.16.0."""

from __future__ import annotations

import ast
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import SIM_LIBRARY, a100s


def _env(**extra) -> dict:
    env = dict(os.environ)
    env.update(extra)
    return env


def _run_until_lines(args, lines, timeout=30.0):
    proc = subprocess.Popen([sys.executable, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=_env())
    seen = []
    deadline = time.monotonic() + timeout
    while len(seen) < lines and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, "".join(seen) + out, err


def test_monitor_power_cli_under_sigint(sim):
    sim.start(a100s(2, clock="real"))
    rc, out, err = _run_until_lines(["-m", "zeus_native.monitor", "power", "--update-period", "0.2"], 4)
    assert rc == 0, err
    lines = out.splitlines()
    # Seed README shape: a timestamp line, then {'GPU0': W, 'GPU1': W}; at Ctrl-C the total time and energy.
    samples = [ast.literal_eval(l) for l in lines if l.startswith("{")]
    assert len(samples) >= 3 and all(set(s) == {"GPU0", "GPU1"} for s in samples)
    assert lines[0].startswith("20")  # datetime.now()
    assert "Total time (s):" in out
    total_time = float(out.split("Total time (s):")[1].split()[0])
    energy = samples[-1]
    assert lines[-2] == "Total energy (J):"
    energy = ast.literal_eval(lines[-1])
    for gpu in ("GPU0", "GPU1"):  # idle power x time, within the sensor noise and edges
        assert energy[gpu] == pytest.approx(samples[0][gpu] * total_time, rel=0.2)
    assert "Monitoring power usage of GPUs [0, 1]" in err


def test_monitor_functions_of_the_original_under_sigint(sim):
    """The original's zeus.monitor.__main__ functions, energy(gpu_indices) and
    power(gpu_indices, update_period), called from Python: they run until Ctrl-C as the CLI."""
    sim.start(a100s(2, clock="real"))
    script = "from zeus_native.monitor.__main__ import {}; {}"
    rc, out, err = _run_until_lines(["-c", script.format("power", "power([1], 0.2)")], 4)
    assert rc == 0, err
    samples = [ast.literal_eval(line) for line in out.splitlines() if line.startswith("{")]
    assert len(samples) >= 3 and all(set(s) == {"GPU1"} for s in samples[:-1])
    assert "Total time (s):" in out and "Monitoring power usage of GPUs [1]" in err
    proc = subprocess.Popen([sys.executable, "-c", script.format("energy", "energy([0])")], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=_env())
    assert "Monitoring GPU [0]" in proc.stderr.readline()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert out.startswith("Total energy (J):") and "gpu_energy={0: " in out


@pytest.mark.parametrize("command", ["power", "energy"])
def test_monitor_cli_ends_on_sigint_even_when_started_with_it_ignored(sim, command):
    """A shell starts background jobs (`cmd &` in a script) with SIGINT
    ignored, and Python then installs no KeyboardInterrupt for it: the module
    takes SIGINT itself, as `zeus power|energy` do, so it still ends with its
    totals (the wheel's drop-in check hung 30 s on this in a CI run started
    that way)."""
    sim.start(a100s(2, clock="real"))
    args = ["-m", "zeus_native.monitor", command] + (["--update-period", "0.2"] if command == "power" else [])
    proc = subprocess.Popen([sys.executable, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=_env(), preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    assert "Monitoring" in proc.stderr.readline()  # printed once the window is open
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("SIGINT did not end the monitor started with SIGINT ignored")
    assert proc.returncode == 0, err
    assert "Total energy (J):" in out


def test_monitor_energy_cli_under_sigint(sim):
    sim.start(a100s(1, clock="real"))
    proc = subprocess.Popen([sys.executable, "-m", "zeus_native.monitor", "energy"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=_env())
    assert "Monitoring GPU [0]" in proc.stderr.readline()
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert out.splitlines()[0] == "Total energy (J):"
    assert out.splitlines()[1].startswith("Measurement(time=")


def test_show_env_is_the_cli_report(sim):
    sim.start(a100s(2))
    out = subprocess.run([sys.executable, "-m", "zeus_native.show_env"], capture_output=True, text=True, env=_env(),
                         check=True).stdout
    assert out.startswith("Python packages:\n")
    for section in ("## zeusd (privileged daemon)", "## GPUs", "## CPUs (RAPL)", "## SoC"):
        assert section in out
    assert "GPU 1 -> GPU 1 (NVIDIA A100-SXM4-40GB" in out
    doc = json.loads(subprocess.run([sys.executable, "-m", "zeus_native.show_env", "--format", "json"],
                                    capture_output=True, text=True, env=_env(), check=True).stdout)
    assert set(doc["python_packages"]) == {"python", "zeus_native", "torch", "jax", "cupy"}
    zeus_cli = Path(__file__).resolve().parents[2] / "build" / "bin" / "zeus"
    if zeus_cli.exists():  # one implementation: the same document as `zeus show-env --format json`
        cli = json.loads(subprocess.run([str(zeus_cli), "show-env", "--format", "json"], capture_output=True,
                                        text=True, env=_env()).stdout)
        del doc["python_packages"]
        assert list(doc) == list(cli)
        assert [g["uuid"] for g in doc["gpus"]] == [g["uuid"] for g in cli["gpus"]]
        assert doc["cpus"] == cli["cpus"] and doc["zeusd"] == cli["zeusd"]


SIDE_BY_SIDE = textwrap.dedent('''
    import ctypes, json, sys, warnings
    warnings.simplefilter("ignore")
    from zeus.monitor import ZeusMonitor as Original
    from zeus_native.monitor import ZeusMonitor as Native
    sim = ctypes.CDLL(sys.argv[1])
    assert sim.zeusSimOpen() == 0
    def truth(g):
        j = ctypes.c_double(); assert sim.zeusSimGroundTruthEnergy(g, ctypes.byref(j)) == 0; return j.value
    load = ctypes.c_int()
    for g in range(2):
        assert sim.zeusSimLoadBegin(g, ctypes.c_double(0.7), ctypes.byref(load)) == 0
    original, native = Original(gpu_indices=[0, 1]), Native(gpu_indices=[0, 1])
    before = [truth(g) for g in range(2)]
    original.begin_window("w", sync_execution=False); native.begin_window("w", sync_execution=False)
    assert sim.zeusSimAdvance(ctypes.c_double(3.0)) == 0
    o = original.end_window("w", sync_execution=False); n = native.end_window("w", sync_execution=False)
    after = [truth(g) for g in range(2)]
    power = []
    for g in range(2):
        w = ctypes.c_double(); sim.zeusSimTruePower(g, ctypes.byref(w)); power.append(w.value)
    print(json.dumps({"original": o.gpu_energy, "native": n.gpu_energy, "truth": [a - b for a, b in zip(after, before)],
                      "power": power}))
''')


def test_side_by_side_with_the_original_zeus(sim, tmp_path):
    pytest.importorskip("zeus")
    sim.start(a100s(2))
    script = tmp_path / "side_by_side.py"
    script.write_text(SIDE_BY_SIDE)
    env = _env(LD_LIBRARY_PATH=str(SIM_LIBRARY.parent))
    run = subprocess.run([sys.executable, str(script), str(SIM_LIBRARY)], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    r = json.loads(run.stdout.splitlines()[-1])
    for g in range(2):
        bound = 2 * r["power"][g] * 0.1 + 0.002  # one counter refresh period at each edge + 1 mJ
        original, native, truth = r["original"][str(g)], r["native"][str(g)], r["truth"][g]
        assert abs(native - truth) <= bound
        assert abs(original - truth) <= bound
        assert abs(native - original) <= bound
