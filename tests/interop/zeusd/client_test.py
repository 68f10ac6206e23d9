"""The original Zeus's `ZeusdClient` (zeus.utils.zeusd, PyPI zeus 0.16.0),
unchanged, against our real zeusd: construction from the environment,
discovery, every read, every setter (effects read back through NVIDIA's own
pynvml on the same simulator), errors, require_capabilities, the original's
daemon-backed device classes (ZeusdRAPLCPU, ZeusdNVIDIAGPU),
`python -m zeus.show_env`, and restore-on-exit of what a client process set.

    python client_test.py <zeusd> <libnvidia-ml.so.1> uds|tcp
"""
import os
import sys
import time

import harness
from harness import check, expect_raises, wait_until

import pynvml

from zeus.device.exception import ZeusdError
from zeus.utils.zeusd import (
    CpuEnergyResult,
    ZeusdCapabilityError,
    ZeusdClient,
    ZeusdConfig,
    ZeusdConnectionError,
    require_capabilities,
)

TRANSPORT = sys.argv[3] if len(sys.argv) > 3 else "uds"
assert TRANSPORT in ("uds", "tcp"), TRANSPORT


def nv(i):
    return pynvml.nvmlDeviceGetHandleByIndex(i)


def nv_limit(i):
    return pynvml.nvmlDeviceGetPowerManagementLimit(nv(i))


def nv_persistence(i):
    return pynvml.nvmlDeviceGetPersistenceMode(nv(i)) == pynvml.NVML_FEATURE_ENABLED


def nv_clock(i):
    return pynvml.nvmlDeviceGetClockInfo(nv(i), pynvml.NVML_CLOCK_GRAPHICS)


# NVML cannot read locked clocks back; an idle simulated GPU sits at the
# locked minimum (docs/simulator.md), far above its hardware minimum.
LOCKED_MIN_MHZ = None


def nv_clocks_locked(i):
    return abs(nv_clock(i) - LOCKED_MIN_MHZ) <= 1


def body():
    daemon = harness.Zeusd("main", tcp=TRANSPORT == "tcp")
    os.environ.update(daemon.client_env())

    pynvml.nvmlInit()
    count = pynvml.nvmlDeviceGetCount()
    check(count >= 2, f"the default simulator has two GPUs, pynvml sees {count}")
    ids = list(range(count))
    defaults = {i: nv_limit(i) for i in ids}
    lo, hi = pynvml.nvmlDeviceGetPowerManagementLimitConstraints(nv(0))

    # ---- construction: from the environment, as the device layer does ----
    client = ZeusdClient()
    check(client.endpoint == daemon.endpoint, (client.endpoint, daemon.endpoint))
    explicit = ZeusdClient(ZeusdConfig.tcp("127.0.0.1", daemon.port) if daemon.tcp
                           else ZeusdConfig.uds(daemon.socket_path))
    check(explicit.gpu_ids == client.gpu_ids)

    check(client.gpu_ids == ids, f"gpu_ids {client.gpu_ids}, pynvml {ids}")
    check([g.name for g in client.gpus] == [pynvml.nvmlDeviceGetName(nv(i)) for i in ids], client.gpus)
    check(client.cpu_ids == [0], client.cpu_ids)
    check(client.dram_available == [True], client.dram_available)
    check([(c.id, c.dram_available) for c in client.cpus] == [(0, True)], client.cpus)
    check(client.auth_required is False and client.auth_error is None)
    check(client.granted_scopes == frozenset())
    check(client.can_read_gpu and client.can_control_gpu and client.can_read_cpu)
    require_capabilities(client, read_gpu=True, control_gpu=True, read_cpu=True, gpu_ids=ids, cpu_ids=[0])
    expect_raises(ZeusdCapabilityError, require_capabilities, client, read_gpu=True, gpu_ids=[0, 7],
                  contains="GPU indices [7] not available")
    expect_raises(ZeusdCapabilityError, require_capabilities, client, read_cpu=True, cpu_ids=[3],
                  contains="CPU indices [3] not available")

    # ---- GPU reads, checked against pynvml on the same simulator ----
    before = {i: pynvml.nvmlDeviceGetTotalEnergyConsumption(nv(i)) for i in ids}
    energy = client.get_gpu_energy(ids)
    after = {i: pynvml.nvmlDeviceGetTotalEnergyConsumption(nv(i)) for i in ids}
    check(set(energy) == set(ids), energy)
    for i in ids:
        check(isinstance(energy[i], int) and before[i] <= energy[i] <= after[i], (before[i], energy[i], after[i]))
    check(set(client.get_gpu_energy([1])) == {1})

    t0 = time.time()
    power = client.get_gpu_power()
    check(abs(power.timestamp_ms / 1000 - t0) < 5, (power.timestamp_ms, t0))
    check(set(power.power_mw) == set(ids), power)
    for i in ids:
        nv_power = pynvml.nvmlDeviceGetPowerUsage(nv(i))
        check(isinstance(power.power_mw[i], int) and abs(power.power_mw[i] - nv_power) < 25_000,
              (i, power.power_mw[i], nv_power))
    check(set(client.get_gpu_power([1]).power_mw) == {1})

    check(client.get_power_limit() == defaults, (client.get_power_limit(), defaults))
    check(client.get_power_limit([1]) == {1: defaults[1]})
    constraints = client.get_power_limit_constraints()
    check(constraints == {i: tuple(pynvml.nvmlDeviceGetPowerManagementLimitConstraints(nv(i))) for i in ids},
          constraints)
    check(client.get_power_limit_constraints([0]) == {0: (lo, hi)})
    check(client.get_persistence_mode() == {i: nv_persistence(i) for i in ids})

    # ---- CPU reads over the fake powercap tree ----
    cpu = client.get_cpu_energy()
    check(set(cpu) == {0} and isinstance(cpu[0], CpuEnergyResult), cpu)
    check(isinstance(cpu[0].cpu_energy_uj, int) and isinstance(cpu[0].dram_energy_uj, int), cpu)
    daemon.powercap.bump(daemon.powercap.package, 1_000_000)
    daemon.powercap.bump(daemon.powercap.dram, 250_000)
    cpu2 = client.get_cpu_energy([0])
    check(cpu2[0].cpu_energy_uj - cpu[0].cpu_energy_uj == 1_000_000, (cpu, cpu2))
    check(cpu2[0].dram_energy_uj - cpu[0].dram_energy_uj == 250_000, (cpu, cpu2))
    only_cpu = client.get_cpu_energy(cpu=True, dram=False)
    check(only_cpu[0].dram_energy_uj is None and only_cpu[0].cpu_energy_uj == cpu2[0].cpu_energy_uj, only_cpu)
    only_dram = client.get_cpu_energy([0], cpu=False, dram=True)
    check(only_dram[0].cpu_energy_uj is None and only_dram[0].dram_energy_uj == cpu2[0].dram_energy_uj, only_dram)

    # /cpu/get_power is the counters' delta over a 100 ms window while a thread
    # plays 80 W + 12 W on the tree; on a loaded machine one window can catch a
    # stalled writer, so a few tries.
    with harness.PowerDriver(daemon.powercap, package_w=80.0, dram_w=12.0):
        time.sleep(0.1)
        for _ in range(20):
            cpu_power = client.get_cpu_power()
            check(set(cpu_power.power_mw) == {0}, cpu_power)
            reading = cpu_power.power_mw[0]
            check(isinstance(reading.cpu_mw, int) and isinstance(reading.dram_mw, int), reading)
            if 40_000 < reading.cpu_mw < 160_000 and 4_000 < reading.dram_mw < 30_000:
                break
        else:
            raise AssertionError(f"/cpu/get_power never near 80 W / 12 W: {cpu_power}")
    check(abs(cpu_power.timestamp_ms / 1000 - time.time()) < 5, cpu_power)
    check(set(client.get_cpu_power([0]).power_mw) == {0})

    t0 = time.time()
    daemon_time = client.get_time()
    check(isinstance(daemon_time, float) and abs(daemon_time - t0) < 2, (daemon_time, t0))

    # ---- the original's daemon-backed CPU, as its device layer builds it ----
    from zeus.device.cpu.rapl import ZeusdRAPLCPU

    rapl = ZeusdRAPLCPU(0, client)
    check(rapl.supports_get_dram_energy_consumption())
    m = rapl.get_total_energy_consumption()
    now = client.get_cpu_energy([0])[0]
    check(abs(m.cpu_mj - now.cpu_energy_uj / 1000) < 1e-9 or m.cpu_mj <= now.cpu_energy_uj / 1000, (m, now))
    check(m.dram_mj is not None and m.dram_mj > 0, m)

    # ---- setters, read back through pynvml while this client is alive ----
    client.set_power_limit([0], lo + 50_000, block=True)
    check(nv_limit(0) == lo + 50_000, nv_limit(0))
    check(nv_limit(1) == defaults[1])
    check(client.get_power_limit([0]) == {0: lo + 50_000})
    client.set_power_limit(ids, lo + 100_000, block=False)
    wait_until(lambda: all(nv_limit(i) == lo + 100_000 for i in ids), 5, what="non-blocking set_power_limit")

    client.set_persistence_mode([0], True, block=True)
    check(nv_persistence(0) and not nv_persistence(1))
    check(client.get_persistence_mode([0]) == {0: True})
    client.set_persistence_mode([0], False, block=False)
    wait_until(lambda: not nv_persistence(0), 5, what="non-blocking set_persistence_mode")

    graphics = sorted(pynvml.nvmlDeviceGetSupportedGraphicsClocks(nv(0), max(
        pynvml.nvmlDeviceGetSupportedMemoryClocks(nv(0)))))
    low, high = graphics[len(graphics) // 2], graphics[-10]
    global LOCKED_MIN_MHZ
    LOCKED_MIN_MHZ = low
    idle_clock = nv_clock(0)
    check(idle_clock < low and not nv_clocks_locked(0) and not nv_clocks_locked(1), (idle_clock, low))
    client.set_gpu_locked_clocks([0], low, high, block=True)
    check(nv_clocks_locked(0), (nv_clock(0), low))
    check(not nv_clocks_locked(1))
    client.reset_gpu_locked_clocks([0], block=True)
    check(not nv_clocks_locked(0) and nv_clock(0) == idle_clock, (nv_clock(0), idle_clock))
    client.set_gpu_locked_clocks([0, 1], low, high, block=False)
    wait_until(lambda: nv_clocks_locked(0) and nv_clocks_locked(1), 5, what="non-blocking set_gpu_locked_clocks")
    client.reset_gpu_locked_clocks([0, 1], block=False)
    wait_until(lambda: not nv_clocks_locked(0) and not nv_clocks_locked(1), 5,
               what="non-blocking reset_gpu_locked_clocks")

    mem = max(pynvml.nvmlDeviceGetSupportedMemoryClocks(nv(0)))
    client.set_mem_locked_clocks([0], mem, mem, block=True)
    client.reset_mem_locked_clocks([0], block=True)

    # /gpu/reset_locked_clocks (both clocks) has no method in the 0.16.0
    # client; sent with the client's own transport, as a user of make_client()/url() would.
    client.set_gpu_locked_clocks([1], low, high)
    check(nv_clocks_locked(1))
    with client.make_client() as http:
        resp = http.post(client.url("/gpu/reset_locked_clocks"), params={"gpu_ids": "1", "block": "true"})
    check(resp.status_code == 200, (resp.status_code, resp.text))
    check(not nv_clocks_locked(1) and nv_clock(1) == idle_clock)

    # ---- the original's ZeusdNVIDIAGPU: local reads, setters through the daemon ----
    from zeus.device.gpu import get_gpus
    from zeus.device.gpu.nvidia import ZeusdNVIDIAGPU

    gpus = get_gpus()
    check(all(isinstance(g, ZeusdNVIDIAGPU) for g in gpus.gpus) and len(gpus) == count, gpus.gpus)
    gpus.set_power_management_limit(1, lo + 20_000)
    check(nv_limit(1) == lo + 20_000 and gpus.get_power_management_limit(1) == lo + 20_000)
    gpus.set_persistence_mode(1, True)
    check(nv_persistence(1) and gpus.gpus[1].get_persistence_mode())
    gpus.set_persistence_mode(1, False)
    gpus.reset_power_management_limit(1)
    check(nv_limit(1) == defaults[1])

    # ---- errors surface as ZeusdError with the daemon's words ----
    e = expect_raises(ZeusdError, client.get_gpu_energy, [9], contains="Failed to get_gpu_energy")
    check("GPU 9 not found" in str(e), str(e))
    expect_raises(ZeusdError, client.get_gpu_power, [0, 9], contains="Failed to get_gpu_power")
    expect_raises(ZeusdError, client.get_power_limit, [9], contains="Failed to get_power_limit")
    expect_raises(ZeusdError, client.get_gpu_energy, [], contains="gpu_ids must contain at least one GPU index")
    e = expect_raises(ZeusdError, client.set_power_limit, [9], lo, contains="Failed to set_power_limit")
    check("GPU index 9 does not exist." in str(e), str(e))
    limit = nv_limit(0)
    expect_raises(ZeusdError, client.set_power_limit, [0], hi + 1_000_000, contains="Failed to set_power_limit")
    check(nv_limit(0) == limit, "a refused power limit changed the GPU")
    expect_raises(ZeusdError, client.set_gpu_locked_clocks, [0], high, low,
                  contains="Failed to set_gpu_locked_clocks")
    expect_raises(ZeusdError, client.get_cpu_energy, [5], contains="Failed to get_cpu_energy")
    expect_raises(ZeusdError, client.get_cpu_power, [5], contains="Failed to get_cpu_power")

    # ---- python -m zeus.show_env: the original's report of the daemon ----
    shown = harness.run_python("import runpy; runpy.run_module('zeus.show_env', run_name='__main__')",
                               daemon.client_env())
    check(shown.returncode == 0, shown.stderr)
    out = shown.stdout
    names = [(i, pynvml.nvmlDeviceGetName(nv(i))) for i in ids]
    for line in (f"Endpoint: {daemon.endpoint}", f"GPUs: {names}", "CPU IDs: [0]", "DRAM available: [True]",
                 "Auth required: False", "can_read_gpu: True", "can_control_gpu: True", "can_read_cpu: True"):
        check(line in out, f"show_env lacks {line!r}:\n{out}")

    # ---- another client process: its change lives while it does ----
    child = harness.run_python(
        "from zeus.utils.zeusd import ZeusdClient\n"
        f"ZeusdClient().set_power_limit([1], {lo + 30_000})\n"
        "import pynvml; pynvml.nvmlInit()\n"
        "print(pynvml.nvmlDeviceGetPowerManagementLimit(pynvml.nvmlDeviceGetHandleByIndex(1)))\n",
        daemon.client_env())
    check(child.returncode == 0, child.stderr)
    check(int(child.stdout.split()[-1]) == lo + 30_000, child.stdout)
    if daemon.tcp:
        # A TCP peer has no process id: the change stays until the daemon stops.
        time.sleep(0.5)
        check(nv_limit(1) == lo + 30_000, nv_limit(1))
    else:
        # Restored once the client process has gone (our safety addition).
        wait_until(lambda: nv_limit(1) == defaults[1], 10, what="restore after the client process exits")
    check(nv_limit(0) == lo + 100_000, "this (live) client's limit was undone")

    # ---- the daemon stops: every change still recorded is put back ----
    check(daemon.stop() == 0)
    check(all(nv_limit(i) == defaults[i] for i in ids), {i: nv_limit(i) for i in ids})
    expect_raises(ZeusdConnectionError, ZeusdClient)


if __name__ == "__main__":
    harness.main(body)
