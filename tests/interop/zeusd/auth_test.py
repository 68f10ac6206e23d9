"""The original Zeus's `ZeusdClient` and `require_capabilities` (PyPI zeus
0.16.0) against our real zeusd with JWT authentication: tokens made by
`zeusd token issue` (and, for an expired and a foreign token, by PyJWT),
ZEUSD_TOKEN from the environment, /auth/whoami, capability flags, the
original's ZeusdAuthError / ZeusdCapabilityError, and what a scope-limited
token can and cannot do (effects read back through pynvml).

    python auth_test.py <zeusd> <libnvidia-ml.so.1>
"""
import os
import time

import harness
from harness import check, expect_raises

import jwt
import pynvml

from zeus.device.exception import ZeusdError
from zeus.utils.zeusd import (
    ZeusdAuthError,
    ZeusdCapabilityError,
    ZeusdClient,
    ZeusdConfig,
    require_capabilities,
)

ALL = frozenset({"gpu-control", "gpu-read", "cpu-read"})


def body():
    daemon = harness.Zeusd("auth", auth=True)
    pynvml.nvmlInit()
    h0 = pynvml.nvmlDeviceGetHandleByIndex(0)
    default = pynvml.nvmlDeviceGetPowerManagementLimit(h0)
    lo, _ = pynvml.nvmlDeviceGetPowerManagementLimitConstraints(h0)

    def client(token=None):
        return ZeusdClient(ZeusdConfig.uds(daemon.socket_path, token=token))

    # ---- no token: discovery works, everything else is an auth error ----
    anon = client()
    check(anon.auth_required is True)
    check(anon.auth_error is not None and "requires authentication but no token" in anon.auth_error, anon.auth_error)
    check(not (anon.can_read_gpu or anon.can_control_gpu or anon.can_read_cpu))
    check(anon.gpu_ids == [0, 1] and anon.cpu_ids == [0])
    expect_raises(ZeusdAuthError, require_capabilities, anon, read_gpu=True)
    expect_raises(ZeusdAuthError, require_capabilities, anon)  # even with nothing asked for
    e = expect_raises(ZeusdError, anon.get_gpu_power, contains="Failed to get_gpu_power")
    check("Authentication required" in str(e), str(e))
    check(isinstance(anon.get_time(), float))  # /time needs no token

    # ---- a token that fails verification ----
    foreign = jwt.encode({"sub": "mallory", "scopes": sorted(ALL)}, b"not the daemon's key", algorithm="HS256")
    bad = client(foreign)
    check(bad.auth_error is not None and bad.auth_error.startswith("Token rejected by Zeusd"), bad.auth_error)
    check("Invalid token" in bad.auth_error, bad.auth_error)
    check(bad.granted_scopes == frozenset() and not bad.can_read_gpu)
    expect_raises(ZeusdAuthError, require_capabilities, bad, read_cpu=True, contains="Token rejected")

    expired = jwt.encode({"sub": "alice", "scopes": sorted(ALL), "exp": int(time.time()) - 3600},
                         daemon.signing_key(), algorithm="HS256")
    old = client(expired)
    check(old.auth_error is not None and "Token has expired." in old.auth_error, old.auth_error)
    expect_raises(ZeusdAuthError, require_capabilities, old, read_gpu=True, contains="Token has expired.")

    # ---- a full token, from ZEUSD_TOKEN as the device layer reads it ----
    full_token = daemon.token("gpu-control,gpu-read,cpu-read", user="alice", expires="1h")
    os.environ.update(daemon.client_env(full_token))
    full = ZeusdClient()
    check(full.auth_error is None, full.auth_error)
    check(full.granted_scopes == ALL, full.granted_scopes)
    check(full._whoami_sub == "alice", full._whoami_sub)
    check(isinstance(full._whoami_exp, int) and abs(full._whoami_exp - (time.time() + 3600)) < 120, full._whoami_exp)
    check(full.can_read_gpu and full.can_control_gpu and full.can_read_cpu)
    require_capabilities(full, read_gpu=True, control_gpu=True, read_cpu=True, gpu_ids=[0, 1], cpu_ids=[0])
    full.set_power_limit([0], lo + 50_000)
    check(pynvml.nvmlDeviceGetPowerManagementLimit(h0) == lo + 50_000)
    check(full.get_power_limit([0]) == {0: lo + 50_000})
    check(set(full.get_cpu_energy()) == {0})
    never = client(daemon.token("gpu-read", user="bob", expires="never"))
    check(never.auth_error is None and never._whoami_exp is None and never._whoami_sub == "bob")

    # ---- read-only token: reads yes, control no (403), nothing changes ----
    reader = client(daemon.token("gpu-read,cpu-read", user="carol"))
    check(reader.auth_error is None and reader.granted_scopes == {"gpu-read", "cpu-read"})
    check(reader.can_read_gpu and reader.can_read_cpu and not reader.can_control_gpu)
    require_capabilities(reader, read_gpu=True, read_cpu=True)
    e = expect_raises(ZeusdCapabilityError, require_capabilities, reader, read_gpu=True, control_gpu=True)
    check("Token lacks required scope 'gpu-control'" in str(e), str(e))
    check(set(reader.get_gpu_power().power_mw) == {0, 1})
    e = expect_raises(ZeusdError, reader.set_power_limit, [0], lo, contains="Failed to set_power_limit")
    check("gpu-control" in str(e), str(e))
    check(pynvml.nvmlDeviceGetPowerManagementLimit(h0) == lo + 50_000, "a 403 changed the GPU")
    expect_raises(ZeusdError, reader.set_gpu_locked_clocks, [0], 800, 900)
    # The original's device layer refuses a daemon-backed GPU without gpu-control.
    from zeus.device.gpu.nvidia import ZeusdNVIDIAGPU
    expect_raises(ZeusdCapabilityError, ZeusdNVIDIAGPU, 0, reader, contains="gpu-control")

    # ---- cpu-read only: the CPU through the daemon, no GPU reads ----
    cpu_only = client(daemon.token("cpu-read", user="dave"))
    check(cpu_only.can_read_cpu and not cpu_only.can_read_gpu and not cpu_only.can_control_gpu)
    from zeus.device.cpu.rapl import ZeusdRAPLCPU
    before = ZeusdRAPLCPU(0, cpu_only).get_total_energy_consumption()
    daemon.powercap.bump(daemon.powercap.package, 2_000_000)
    after = ZeusdRAPLCPU(0, cpu_only).get_total_energy_consumption()
    check(abs((after.cpu_mj - before.cpu_mj) - 2_000) < 1e-6, (before, after))
    e = expect_raises(ZeusdError, cpu_only.get_gpu_energy, [0], contains="Failed to get_gpu_energy")
    check("gpu-read" in str(e), str(e))
    expect_raises(ZeusdCapabilityError, require_capabilities, cpu_only, read_gpu=True,
                  contains="Token lacks required scope 'gpu-read'")

    # ---- a group that is not enabled: even a full token cannot use it ----
    readonly_daemon = harness.Zeusd("no-control", auth=True, extra=["--enable", "gpu-read,cpu-read"])
    c = ZeusdClient(ZeusdConfig.uds(readonly_daemon.socket_path,
                                    token=readonly_daemon.token("gpu-control,gpu-read,cpu-read")))
    check(c.auth_error is None and c.granted_scopes == ALL)
    check(c.can_read_gpu and c.can_read_cpu and not c.can_control_gpu)
    expect_raises(ZeusdCapabilityError, require_capabilities, c, control_gpu=True,
                  contains="API group 'gpu-control' is not enabled on this server")
    e = expect_raises(ZeusdError, c.set_power_limit, [0], lo)
    check("API group 'gpu-control' is not enabled on this server." in str(e), str(e))
    check(readonly_daemon.stop() == 0)

    # The limit the full token set is still there while this process lives,
    # and put back when the daemon stops.
    check(pynvml.nvmlDeviceGetPowerManagementLimit(h0) == lo + 50_000)
    check(daemon.stop() == 0)
    check(pynvml.nvmlDeviceGetPowerManagementLimit(h0) == default)


if __name__ == "__main__":
    harness.main(body)
