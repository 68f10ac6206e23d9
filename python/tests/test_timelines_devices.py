"""PowerMonitor, TemperatureMonitor, device methods and CPU packages (fake powercap)."""

from __future__ import annotations

import time

import pytest

from conftest import a100s


def test_power_monitor_timeline_energy_and_power(sim):
    sim.start(a100s(2, clock="real"))
    from zeus_native.monitor import PowerDomain, PowerMonitor

    monitor = PowerMonitor(update_period=0.02, power_domains=["device_instant"])
    assert monitor.power_domains == ["device_instant"]
    before = [sim.truth(g) for g in range(2)]
    start = time.time()
    time.sleep(0.6)
    end = time.time()
    after = [sim.truth(g) for g in range(2)]
    energy = monitor.get_energy(start + 0.1, end - 0.1)
    for g in range(2):
        # Idle power is steady: the window's share of the true energy, within the sensor noise.
        expected = (after[g] - before[g]) * (end - start - 0.2) / (end - start)
        assert energy[g] == pytest.approx(expected, rel=0.1)
    timeline = monitor.get_power_timeline(PowerDomain.DEVICE_INSTANT, gpu_index=1)
    assert list(timeline) == [1] and len(timeline[1]) >= 2
    assert all(start - 1 <= t <= time.time() and w > 0 for t, w in timeline[1])
    power = monitor.get_power()
    assert set(power) == {0, 1} and all(abs(power[g] - sim.true_power(g)) < 10 for g in range(2))
    assert set(monitor.get_all_power_timelines()) == {"device_instant"}
    with pytest.raises(ValueError, match="not monitored"):
        monitor.get_power(power_domain="device_average")
    monitor.stop()
    monitor.stop()  # idempotent
    with pytest.raises(ValueError, match="non-empty"):
        PowerMonitor(gpu_indices=[])


def test_temperature_monitor(sim):
    sim.start(a100s(2, clock="real"))
    from zeus_native.monitor import TemperatureMonitor

    monitor = TemperatureMonitor(update_period=0.05)
    time.sleep(0.2)
    temps = monitor.get_temperature()
    for g in range(2):
        assert abs(temps[g] - sim.temperature(g)) <= 1
    assert set(monitor.get_temperature_timeline()) == {0, 1}
    monitor.stop()


def test_gpu_methods_match_the_simulator(sim):
    sim.start(a100s(2))
    from zeus_native.device import get_gpus
    from zeus_native.device.gpu import ZeusGPUInvalidArgError

    gpus = get_gpus(ensure_homogeneous=True)
    assert len(gpus) == 2
    assert gpus.get_name(0) == "NVIDIA A100-SXM4-40GB"
    lo, hi = gpus.get_power_management_limit_constraints(0)
    assert (lo, hi) == (100_000, 400_000)  # the A100 preset's limits (docs/simulator.md)
    gpus.set_power_management_limit(0, 250_000)
    assert gpus.get_power_management_limit(0) == 250_000
    gpus.reset_power_management_limit(0)
    assert gpus.get_power_management_limit(0) == 400_000
    assert gpus.supports_get_total_energy_consumption(0)
    e0 = gpus.get_total_energy_consumption(1)
    sim.advance(1.0)
    assert gpus.get_total_energy_consumption(1) > e0
    assert abs(gpus.get_instant_power_usage(0) / 1000 - sim.true_power(0)) < 5
    assert abs(gpus.get_gpu_temperature(0) - sim.temperature(0)) <= 1
    assert gpus.get_supported_graphics_clocks(0)[0] == max(gpus.get_supported_graphics_clocks(0))
    with pytest.raises(ZeusGPUInvalidArgError, match="GPU index 5 is out of range.*0 to 1"):
        gpus.get_name(5)


def test_cpu_energy_from_a_fake_powercap_tree(sim, tmp_path, monkeypatch):
    root = tmp_path / "powercap"
    zone = root / "intel-rapl:0"
    dram = zone / "intel-rapl:0:0"
    dram.mkdir(parents=True)
    (zone / "name").write_text("package-0\n")
    (zone / "energy_uj").write_text("1000000\n")
    (zone / "max_energy_range_uj").write_text("262143328850\n")
    (dram / "name").write_text("dram\n")
    (dram / "energy_uj").write_text("500000\n")
    (dram / "max_energy_range_uj").write_text("65712999613\n")
    monkeypatch.setenv("ZEUS_POWERCAP_ROOT", str(root))
    sim.start(a100s(1))
    from zeus_native.device import get_cpus
    from zeus_native.monitor import ZeusMonitor

    assert len(get_cpus()) == 1 and get_cpus().supports_get_dram_energy_consumption(0)
    monitor = ZeusMonitor(cpu_indices=[0])
    monitor.begin_window("cpu")
    (zone / "energy_uj").write_text(str(1_000_000 + 7_250_000) + "\n")
    (dram / "energy_uj").write_text(str(500_000 + 1_125_000) + "\n")
    sim.advance(0.5)
    m = monitor.end_window("cpu")
    assert m.cpu_energy == {0: pytest.approx(7.25)}
    assert m.dram_energy == {0: pytest.approx(1.125)}
    with pytest.raises(Exception, match="CPU index 3"):
        get_cpus().get_total_energy_consumption(3)


def test_sampled_cpu_edges_from_a_fake_powercap_tree(sim, tmp_path, monkeypatch):
    """window_edges="sampled": the watcher thread reads the package and its
    DRAM every 5 ms; each edge is its latest reading plus the power since the
    one before. With the counters still before each edge (the power read is
    0 W), the edges are the counters exactly, and the bound says how far they
    could be off (the 1000 W default ceiling × the reading's age)."""
    import os
    import time

    root = tmp_path / "powercap"
    zone = root / "intel-rapl:0"
    dram = zone / "intel-rapl:0:0"
    dram.mkdir(parents=True)
    (zone / "name").write_text("package-0\n")
    (zone / "max_energy_range_uj").write_text("262143328850\n")
    (dram / "name").write_text("dram\n")
    (dram / "max_energy_range_uj").write_text("65712999613\n")

    def write(path, value):  # atomically, as the kernel's file changes for a reader
        (path.parent / "tmp").write_text(f"{value}\n")
        os.replace(path.parent / "tmp", path)

    write(zone / "energy_uj", 1_000_000)
    write(dram / "energy_uj", 500_000)
    monkeypatch.setenv("ZEUS_POWERCAP_ROOT", str(root))
    sim.start(a100s(1, clock="real"))
    from zeus_native.monitor import ZeusMonitor

    monitor = ZeusMonitor(cpu_indices=[0], window_edges="sampled")
    monitor.begin_window("cpu", sync_execution=False)
    time.sleep(0.1)  # the watcher's readings before the step: 0 W since the begin edge
    write(zone / "energy_uj", 1_000_000 + 7_250_000)
    write(dram / "energy_uj", 500_000 + 1_125_000)
    time.sleep(0.1)  # and after it: 0 W again at the end edge
    m = monitor.end_window("cpu", sync_execution=False)
    assert m.cpu_energy == {0: pytest.approx(7.25, abs=1e-9)}
    assert m.dram_energy == {0: pytest.approx(1.125, abs=1e-9)}
    for kind in ("cpu", "dram"):
        bound = m.provenance[kind][0]["edge_error_bound_j"]
        assert bound is not None and 0 < bound <= 2 * 1000 * 0.1, (kind, bound)
        assert m.provenance[kind][0]["source"] == "hardware counter"


def test_threads_not_processes_and_clean_exit(sim, tmp_path):
    import subprocess
    import sys
    import textwrap

    sim.start(a100s(2, clock="real"))
    script = tmp_path / "exit.py"
    script.write_text(textwrap.dedent('''
        import os, threading
        from zeus_native.monitor import PowerMonitor, TemperatureMonitor, ZeusMonitor
        tasks = lambda: len(os.listdir("/proc/self/task"))
        before = tasks()
        p = PowerMonitor(update_period=0.05); t = TemperatureMonitor(update_period=0.05); z = ZeusMonitor()
        children = open(f"/proc/self/task/{os.getpid()}/children").read().split()
        print(before, tasks(), len(children))
        # exit without stop(): the atexit hook joins the samplers
    '''))
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and run.stderr == "", run.stderr
    before, during, children = map(int, run.stdout.split())
    assert during >= before + 2  # one sampling thread per monitor...
    assert children == 0  # ...and no helper process
