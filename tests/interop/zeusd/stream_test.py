"""The original Zeus's `PowerStreamingClient` (zeus.monitor.power_streaming,
PyPI zeus 0.16.0) against two real zeusd processes at once: one on a Unix
socket without auth (GPU and CPU streams), one on TCP with auth and a
cpu-read token (GPU streaming skipped, as the original decides from the
scopes). GPU readings follow a load started in the simulator; CPU readings
follow the power the test plays on the fake powercap tree.

    python stream_test.py <zeusd> <libnvidia-ml.so.1>
"""
import ctypes
import time

import harness
from harness import check, expect_raises, wait_until

import pynvml

from zeus.monitor.power_streaming import PowerStreamingClient
from zeus.utils.zeusd import ZeusdCapabilityError, ZeusdConfig


def body():
    uds = harness.Zeusd("uds", extra=["--gpu-power-poll-hz", "20", "--cpu-power-poll-hz", "10"])
    # Its own simulator, so the load below shows on the Unix-socket daemon only.
    tcp = harness.Zeusd("tcp", tcp=True, auth=True, sim_state=harness.WORK / "tcp-sim-state")
    cpu_token = tcp.token("cpu-read", user="streamer")
    pynvml.nvmlInit()
    count = pynvml.nvmlDeviceGetCount()

    # Explicit requests the daemon cannot satisfy fail in the constructor.
    expect_raises(ValueError, PowerStreamingClient, [ZeusdConfig.uds(uds.socket_path, gpu_indices=[0, 5])],
                  contains="GPU indices [5]")
    expect_raises(ZeusdCapabilityError, PowerStreamingClient,
                  [ZeusdConfig.tcp("127.0.0.1", tcp.port, token=cpu_token, gpu_indices=[0])],
                  contains="lacks required scope 'gpu-read'")
    expect_raises(ValueError, PowerStreamingClient,
                  [ZeusdConfig.uds(uds.socket_path), ZeusdConfig.uds(uds.socket_path)], contains="Duplicate")

    # A steady load on GPU 1 of the Unix-socket daemon's simulator (this
    # process holds the load; the simulator ends it when the process exits).
    sim = ctypes.CDLL(harness.SIM_LIBRARY)
    load_id = ctypes.c_int()
    rc = sim.zeusSimLoadBegin(ctypes.c_uint(1), ctypes.c_double(1.0), ctypes.byref(load_id))
    check(rc == 0, f"zeusSimLoadBegin returned {rc}")
    wait_until(lambda: pynvml.nvmlDeviceGetPowerUsage(pynvml.nvmlDeviceGetHandleByIndex(1)) > 200_000, 5,
               what="the simulated load on GPU 1")

    servers = [
        ZeusdConfig.uds(uds.socket_path),  # everything the daemon has
        ZeusdConfig.tcp("127.0.0.1", tcp.port, token=cpu_token),  # GPUs skipped: no gpu-read scope
    ]
    with harness.PowerDriver(uds.powercap, package_w=60.0, dram_w=8.0), \
            harness.PowerDriver(tcp.powercap, package_w=150.0, dram_w=20.0):
        stream = PowerStreamingClient(servers, reconnect_delay_s=0.2)
        try:
            names = sorted(t.name for t in stream._threads)
            check(names == sorted([f"gpu-power-stream-{uds.socket_path}", f"cpu-power-stream-{uds.socket_path}",
                                   f"cpu-power-stream-{tcp.endpoint}"]), names)

            def settled():
                readings = stream.get_power()
                a, b = readings.get(uds.socket_path), readings.get(tcp.endpoint)
                if a is None or b is None or set(a.gpu_power_w) != set(range(count)) or 0 not in a.cpu_power_w \
                        or 0 not in b.cpu_power_w:
                    return None
                # 60 W + 8 W on the Unix-socket daemon's tree, 150 W + 20 W on the TCP one's.
                ca, cb = a.cpu_power_w[0], b.cpu_power_w[0]
                if not (a.gpu_power_w[1] > 200 and 30 < ca.cpu_w < 100 and 110 < cb.cpu_w < 200
                        and ca.dram_w is not None and 3 < ca.dram_w < 14
                        and cb.dram_w is not None and 14 < cb.dram_w < 30):
                    return None
                return readings

            readings = wait_until(settled, 15, 0.05, what="GPU and CPU readings from both daemons")
            a, b = readings[uds.socket_path], readings[tcp.endpoint]
            check(set(readings) == {uds.socket_path, tcp.endpoint}, readings)
            check(b.gpu_power_w == {}, b.gpu_power_w)
            check(30 < a.gpu_power_w[0] < 150, a.gpu_power_w)  # idle
            for r in (a, b):
                check(abs(r.timestamp_s - time.time()) < 3, (r.timestamp_s, time.time()))

            # The blocking iterator yields fresh snapshots.
            for snapshot in stream:
                check(set(snapshot) == {uds.socket_path, tcp.endpoint})
                break

            # The load ends: GPU 1's streamed power falls back to idle.
            check(sim.zeusSimLoadEnd(load_id) == 0)
            wait_until(lambda: stream.get_power()[uds.socket_path].gpu_power_w[1] < 150, 10, 0.05,
                       what="GPU 1 back to idle in the stream")
        finally:
            t0 = time.monotonic()
            stream.stop()
            check(time.monotonic() - t0 < 5, f"stop() took {time.monotonic() - t0:.1f} s")

    # The power on the fake tree stops: the streamed CPU power falls to zero.
    with harness.PowerDriver(uds.powercap, package_w=0.0, dram_w=0.0):
        stream = PowerStreamingClient([ZeusdConfig.uds(uds.socket_path, gpu_indices=[], cpu_indices=[0])])
        try:
            check([t.name for t in stream._threads] == [f"cpu-power-stream-{uds.socket_path}"])
            reading = wait_until(lambda: stream.get_power().get(uds.socket_path), 5, what="a CPU reading")
            check(set(reading.cpu_power_w) == {0} and reading.gpu_power_w == {}, reading)
            uds.powercap.bump(uds.powercap.package, 10_000_000)  # a 10 J step shows up as power
            wait_until(lambda: stream.get_power()[uds.socket_path].cpu_power_w[0].cpu_w > 1, 5, 0.02,
                       what="a CPU reading that follows the bumped counter")
            wait_until(lambda: stream.get_power()[uds.socket_path].cpu_power_w[0].cpu_w == 0, 5, 0.02,
                       what="the CPU reading back at zero")
        finally:
            stream.stop()

    check(uds.stop() == 0 and tcp.stop() == 0)


if __name__ == "__main__":
    harness.main(body)
