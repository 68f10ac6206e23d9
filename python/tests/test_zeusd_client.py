"""zeus_native.utils.zeusd's ZeusdClient and require_capabilities (the original's zeus.utils.zeusd)
against a real zeusd (the repository's build/bin/zeusd on a Unix socket, over the simulator and a
fake RAPL package): every method, and the errors for a daemon that is down, a permission denied,
a capability missing and a GPU index the daemon lacks. Where the original's client (installed in
.venv) can make the same call, its answer and exception class are compared with ours."""

from __future__ import annotations

import dataclasses
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Callable, Optional

import pytest

from conftest import a100s, energy_bound
from zeusd_daemon import ZEUSD, Daemon, require_zeusd

POWER_NOISE_W = 0.5  # the simulator's instant-power noise σ (docs/simulator.md)
PACKAGE_UJ = 123_456_789  # the fake RAPL package's counter (it never advances: 0 W)
DRAM_UJ = 9_876_543


def _original():
    return pytest.importorskip("zeus.utils.zeusd", reason="the original Zeus is installed in .venv")


@pytest.fixture
def rapl(tmp_path, monkeypatch) -> Path:
    """One RAPL package with a DRAM zone, for zeusd's cpu-read routes."""
    zone = tmp_path / "powercap" / "intel-rapl:0"
    dram = zone / "intel-rapl:0:0"
    dram.mkdir(parents=True)
    for directory, name, uj in ((zone, "package-0", PACKAGE_UJ), (dram, "dram", DRAM_UJ)):
        (directory / "name").write_text(name + "\n")
        (directory / "energy_uj").write_text(f"{uj}\n")
        (directory / "max_energy_range_uj").write_text("262143328850\n")
    monkeypatch.setenv("ZEUS_POWERCAP_ROOT", str(zone.parent))
    return zone


@pytest.fixture
def start(sim, rapl, tmp_path):
    """start(*zeusd serve options, sock=path) -> a zeusd on a Unix socket over 2 simulated A100s."""
    require_zeusd()
    sim.start(a100s(2))
    daemons = []

    def _start(*args: str, sock: Optional[Path] = None) -> Daemon:
        n = len(daemons)
        d = Daemon(tmp_path / f"zeusd{n}", sock=sock or tmp_path / f"zeusd{n}.sock", args=args)
        daemons.append(d)
        return d

    yield _start
    for d in daemons:
        d.stop()


@pytest.fixture
def signing_key(tmp_path) -> Path:
    key = tmp_path / "key"
    key.write_bytes(os.urandom(32))
    key.chmod(0o600)
    return key


def issue_token(key: Path, scopes: str) -> str:
    run = subprocess.run([str(ZEUSD), "token", "issue", "--signing-key-path", str(key), "--user", "alice", "--scope",
                          scopes], capture_output=True, text=True, timeout=30, check=True)
    return run.stdout.strip().splitlines()[-1]


def raised(call: Callable[[], object]) -> Optional[BaseException]:
    try:
        call()
    except Exception as e:  # noqa: BLE001 (the class is what is compared)
        return e
    return None


def same_error(ours: Callable[[], object], theirs: Callable[[], object]) -> BaseException:
    """Our exception, checked to be of the original's class (by name: the hierarchies are parallel)."""
    mine, original = raised(ours), raised(theirs)
    assert mine is not None, "zeus_native raised nothing"
    assert original is not None, "the original raised nothing"
    assert type(mine).__name__ == type(original).__name__, (mine, original)
    return mine


def test_every_method_against_zeusd(start, sim):
    from zeus_native.device import get_gpus
    from zeus_native.utils.zeusd import (CpuDramPower, CpuEnergyResult, CpuInfo, GpuInfo, GpuPowerSnapshot,
                                         ZeusdClient, ZeusdConfig, require_capabilities)

    d = start()
    sim.advance(3.0)
    client = ZeusdClient(ZeusdConfig.uds(str(d.sock)))
    gpus = get_gpus()  # this process's own view of the same simulator
    assert client.endpoint == str(d.sock)
    assert client.gpus == [GpuInfo(id=i, name=gpus.get_name(i)) for i in (0, 1)]
    assert client.gpu_ids == [0, 1]
    assert client.cpus == [CpuInfo(id=0, dram_available=True)] and client.cpu_ids == [0]
    assert client.dram_available == [True]
    assert (client.auth_required, client.auth_error, client.granted_scopes) == (False, None, frozenset())
    assert client.can_read_gpu and client.can_control_gpu and client.can_read_cpu
    require_capabilities(client, read_gpu=True, control_gpu=True, read_cpu=True, gpu_ids=[0, 1], cpu_ids=[0])

    before, truth_before = client.get_gpu_energy([0, 1]), [sim.truth(i) for i in (0, 1)]
    sim.advance(2.0)
    after = client.get_gpu_energy([0, 1])
    assert set(before) == set(after) == {0, 1}
    for i in (0, 1):  # the counter's growth is the simulator's ground-truth energy
        assert abs((after[i] - before[i]) / 1000 - (sim.truth(i) - truth_before[i])) <= energy_bound(sim, i)

    power = client.get_gpu_power()
    assert isinstance(power, GpuPowerSnapshot) and set(power.power_mw) == {0, 1}
    for i in (0, 1):
        assert abs(power.power_mw[i] / 1000 - sim.true_power(i)) <= 5 * POWER_NOISE_W + 0.001
    assert abs(power.timestamp_ms / 1000 - time.time()) < 60  # the daemon's wall clock: this machine's
    assert set(client.get_gpu_power([1]).power_mw) == {1}

    low, high = gpus.get_power_management_limit_constraints(1)
    assert client.get_power_limit_constraints() == {i: gpus.get_power_management_limit_constraints(i) for i in (0, 1)}
    client.set_power_limit([1], (low + high) // 2)
    assert client.get_power_limit([1]) == {1: (low + high) // 2}
    assert gpus.get_power_management_limit(1) == (low + high) // 2  # the daemon changed the shared device
    assert client.get_power_limit() == {0: gpus.get_power_management_limit(0), 1: (low + high) // 2}
    client.set_power_limit([1], high, block=False)

    client.set_persistence_mode([0], True)
    assert client.get_persistence_mode([0]) == {0: True}
    client.set_persistence_mode([0], False)
    assert client.get_persistence_mode() == {0: False, 1: gpus.get_persistence_mode(1)}

    memory = gpus.get_supported_memory_clocks(0)
    graphics = gpus.get_supported_graphics_clocks(0)
    client.set_gpu_locked_clocks([0], min(graphics), max(graphics))
    client.reset_gpu_locked_clocks([0])
    client.set_mem_locked_clocks([0], min(memory), max(memory))
    client.reset_mem_locked_clocks([0], block=True)
    log = d.log_text
    for line in (f"POST /gpu/set_gpu_locked_clocks?gpu_ids=0&min_clock_mhz={min(graphics)}"
                 f"&max_clock_mhz={max(graphics)}&block=true",
                 "POST /gpu/reset_gpu_locked_clocks?gpu_ids=0&block=true",
                 f"POST /gpu/set_mem_locked_clocks?gpu_ids=0&min_clock_mhz={min(memory)}&max_clock_mhz={max(memory)}",
                 "POST /gpu/reset_mem_locked_clocks?gpu_ids=0&block=true",
                 "POST /gpu/set_power_limit?gpu_ids=1&power_limit_mw=" + str(high) + "&block=false"):
        assert line in log, line

    cpu_energy = client.get_cpu_energy()
    assert set(cpu_energy) == {0} and isinstance(cpu_energy[0], CpuEnergyResult)
    assert client.get_cpu_energy([0], dram=False)[0].dram_energy_uj is None
    assert client.get_cpu_energy([0], cpu=False)[0].cpu_energy_uj is None
    assert client.get_cpu_power().power_mw == {0: CpuDramPower(cpu_mw=0, dram_mw=0)}  # counters that never move
    assert client.get_cpu_power([0]).power_mw.keys() == {0}

    assert abs(client.get_time() - time.time()) < 60
    assert client.url("/discover") == "http://localhost/discover"
    try:
        import httpx  # noqa: F401 (the original's dependency, not zeus_native's)
    except ImportError:
        with pytest.raises(ImportError, match="pip install httpx"):
            client.make_client()
        return
    with client.make_client() as http:
        assert [g["id"] for g in http.get(client.url("/discover")).json()["gpus"]] == [0, 1]


def test_answers_are_the_originals(start, sim):
    """The same reads through the original's client, on the same daemon and a still clock."""
    theirs = _original()
    from zeus_native.utils.zeusd import ZeusdClient, ZeusdConfig

    d = start()
    sim.advance(2.0)
    ours, original = ZeusdClient(ZeusdConfig.uds(str(d.sock))), theirs.ZeusdClient(theirs.ZeusdConfig.uds(str(d.sock)))
    for name in ("gpu_ids", "cpu_ids", "dram_available", "auth_required", "auth_error", "granted_scopes",
                 "can_read_gpu", "can_control_gpu", "can_read_cpu", "endpoint"):
        assert getattr(ours, name) == getattr(original, name), name
    assert [dataclasses.astuple(g) for g in ours.gpus] == [dataclasses.astuple(g) for g in original.gpus]
    assert [dataclasses.astuple(c) for c in ours.cpus] == [dataclasses.astuple(c) for c in original.cpus]
    for method, args in (("get_gpu_energy", ([0, 1],)), ("get_power_limit", ()), ("get_power_limit_constraints", ()),
                         ("get_persistence_mode", ([1],))):
        assert getattr(ours, method)(*args) == getattr(original, method)(*args), method
    for args in ((), ([0], True, False), ([0], False, True)):
        assert ({i: dataclasses.astuple(e) for i, e in ours.get_cpu_energy(*args).items()} ==
                {i: dataclasses.astuple(e) for i, e in original.get_cpu_energy(*args).items()}), args
    assert dataclasses.astuple(ours.get_cpu_power().power_mw[0]) == \
        dataclasses.astuple(original.get_cpu_power().power_mw[0])
    assert ours.url("/time") == original.url("/time")


def test_daemon_down(start, tmp_path, monkeypatch):
    theirs = _original()
    from zeus_native.utils.zeusd import ZeusdClient, ZeusdConfig, ZeusdConnectionError

    missing = tmp_path / "nobody-here.sock"
    e = same_error(lambda: ZeusdClient(ZeusdConfig.uds(str(missing))),
                   lambda: theirs.ZeusdClient(theirs.ZeusdConfig.uds(str(missing))))
    assert isinstance(e, ZeusdConnectionError)
    assert str(e).startswith(f"Cannot reach Zeusd at {missing}: ")
    assert "does not exist" in str(e) and "start zeusd" in str(e)  # what is wrong, and the fix

    with socket.socket() as held:  # bound, never listening: refused
        held.bind(("127.0.0.1", 0))
        port = held.getsockname()[1]
        e = same_error(lambda: ZeusdClient(ZeusdConfig.tcp("127.0.0.1", port)),
                       lambda: theirs.ZeusdClient(theirs.ZeusdConfig.tcp("127.0.0.1", port)))
        assert str(e).startswith(f"Cannot reach Zeusd at 127.0.0.1:{port}: ")

    for name in ("ZEUSD_SOCK_PATH", "ZEUSD_HOST_PORT"):
        monkeypatch.delenv(name, raising=False)
    e = same_error(ZeusdClient, theirs.ZeusdClient)
    assert str(e) == str(raised(theirs.ZeusdClient))  # "No Zeusd connection configured. Set ..."

    d = start()
    monkeypatch.setenv("ZEUSD_SOCK_PATH", str(d.sock))
    client = ZeusdClient()  # from the environment
    assert client.gpu_ids == [0, 1]
    d.stop()
    with pytest.raises(ZeusdConnectionError, match="could not reach zeusd at unix:"):
        client.get_gpu_power()
    with pytest.raises(ZeusdConnectionError):
        client.set_power_limit([0], 200_000)


def test_permission_denied(start, signing_key, monkeypatch):
    theirs = _original()
    from zeus_native.device.exception import ZeusdError
    from zeus_native.utils.zeusd import (ZeusdAuthError, ZeusdCapabilityError, ZeusdClient, ZeusdConfig,
                                         require_capabilities)

    d = start("--signing-key-path", str(signing_key))
    monkeypatch.delenv("ZEUSD_TOKEN", raising=False)

    # No token: discovery still works, everything else is refused.
    anonymous = ZeusdClient(ZeusdConfig.uds(str(d.sock)))
    original = theirs.ZeusdClient(theirs.ZeusdConfig.uds(str(d.sock)))
    assert anonymous.auth_required and anonymous.gpu_ids == [0, 1]
    assert anonymous.auth_error == original.auth_error  # the original's words, fix included
    assert not (anonymous.can_read_gpu or anonymous.can_control_gpu or anonymous.can_read_cpu)
    e = same_error(lambda: require_capabilities(anonymous, read_gpu=True),
                   lambda: theirs.require_capabilities(original, read_gpu=True))
    assert isinstance(e, ZeusdAuthError)
    e = same_error(lambda: anonymous.get_gpu_power(), lambda: original.get_gpu_power())
    assert isinstance(e, ZeusdError) and "answered 401" in str(e) and "ZEUSD_TOKEN" in str(e)

    # A token with gpu-read only: reads pass, control is refused with the daemon's words and the fix.
    token = issue_token(signing_key, "gpu-read")
    reader = ZeusdClient(ZeusdConfig.uds(str(d.sock), token=token))
    original = theirs.ZeusdClient(theirs.ZeusdConfig.uds(str(d.sock), token=token))
    assert reader.auth_error is None and reader.granted_scopes == frozenset({"gpu-read"})
    assert reader._whoami_sub == original._whoami_sub == "alice"
    assert (reader.can_read_gpu, reader.can_control_gpu, reader.can_read_cpu) == (True, False, False)
    assert set(reader.get_gpu_power().power_mw) == {0, 1}
    e = same_error(lambda: reader.set_power_limit([0], 200_000), lambda: original.set_power_limit([0], 200_000))
    assert isinstance(e, ZeusdError)
    assert "answered 403" in str(e) and "lacks required scope 'gpu-control'" in str(e)
    assert "zeusd token issue" in str(e)
    e = same_error(lambda: require_capabilities(reader, control_gpu=True, read_cpu=True),
                   lambda: theirs.require_capabilities(original, control_gpu=True, read_cpu=True))
    assert isinstance(e, ZeusdCapabilityError)
    assert str(e).startswith(str(raised(lambda: theirs.require_capabilities(original, control_gpu=True,
                                                                              read_cpu=True))))
    assert "zeusd token issue --scope gpu-control,cpu-read" in str(e)  # and the fix

    # ZEUSD_TOKEN is the token when the config has none.
    monkeypatch.setenv("ZEUSD_TOKEN", token)
    assert ZeusdClient(ZeusdConfig.uds(str(d.sock))).granted_scopes == frozenset({"gpu-read"})

    # A token the daemon did not sign.
    other_key = signing_key.with_name("other-key")
    other_key.write_bytes(os.urandom(32))
    other_key.chmod(0o600)
    forged = issue_token(other_key, "gpu-read,gpu-control,cpu-read")
    rejected = ZeusdClient(ZeusdConfig.uds(str(d.sock), token=forged))
    assert rejected.auth_error.startswith(f"Token rejected by Zeusd at {d.sock}: ")
    assert rejected.granted_scopes == frozenset() and not rejected.can_read_gpu
    same_error(lambda: require_capabilities(rejected, read_gpu=True),
               lambda: theirs.require_capabilities(theirs.ZeusdClient(theirs.ZeusdConfig.uds(str(d.sock),
                                                                                             token=forged)),
                                                   read_gpu=True))


NOBODY = 65534


def test_socket_permission_denied(start):
    """A socket this user may not open (mode 600, root's): the original's ZeusdConnectionError,
    naming the owner, the mode and the fix. Run as nobody, from a child process."""
    if os.geteuid() != 0:
        pytest.skip("switching to an unprivileged user needs root")
    _original()
    directory = Path(tempfile.mkdtemp(prefix="zeusd-perm-"))  # reachable by nobody, unlike tmp_path
    try:
        directory.chmod(0o755)
        sock = directory / "zeusd.sock"
        start("--socket-permissions", "600", sock=sock)
        script = textwrap.dedent(f"""
            import zeus.utils.zeusd as theirs
            from zeus_native.utils.zeusd import ZeusdClient, ZeusdConfig
            for make in (lambda: ZeusdClient(ZeusdConfig.uds({str(sock)!r})),
                         lambda: theirs.ZeusdClient(theirs.ZeusdConfig.uds({str(sock)!r}))):
                try:
                    make()
                    print("connected")
                except Exception as e:
                    print(type(e).__name__, "|", e)
        """)
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                             user=NOBODY, group=NOBODY, extra_groups=[], cwd="/",
                             env={"PATH": os.environ.get("PATH", "/usr/bin"), "HOME": "/"})
        assert run.returncode == 0, run.stderr
        ours, theirs = run.stdout.splitlines()
        assert ours.split(" | ")[0] == theirs.split(" | ")[0] == "ZeusdConnectionError", run.stdout
        assert f"Cannot reach Zeusd at {sock}: " in ours and "permission denied" in ours, ours
        assert "mode 600" in ours and "ask an administrator to add you to group" in ours, ours
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def test_capability_missing(start):
    theirs = _original()
    from zeus_native.device.exception import ZeusdError
    from zeus_native.utils.zeusd import ZeusdCapabilityError, ZeusdClient, ZeusdConfig, require_capabilities

    d = start("--enable", "gpu-read")
    client = ZeusdClient(ZeusdConfig.uds(str(d.sock)))
    original = theirs.ZeusdClient(theirs.ZeusdConfig.uds(str(d.sock)))
    assert (client.can_read_gpu, client.can_control_gpu, client.can_read_cpu) == (True, False, False)
    require_capabilities(client, read_gpu=True, gpu_ids=[1])
    e = same_error(lambda: require_capabilities(client, control_gpu=True, read_cpu=True),
                   lambda: theirs.require_capabilities(original, control_gpu=True, read_cpu=True))
    assert isinstance(e, ZeusdCapabilityError)
    words = str(raised(lambda: theirs.require_capabilities(original, control_gpu=True, read_cpu=True)))
    assert str(e).startswith(words)  # "... API group 'gpu-control' is not enabled on this server; ..."
    assert "--enable gpu-control,cpu-read" in str(e)  # and the fix
    e = same_error(lambda: client.set_power_limit([0], 200_000), lambda: original.set_power_limit([0], 200_000))
    assert isinstance(e, ZeusdError) and "API group 'gpu-control' is not enabled on this server" in str(e)
    e = same_error(lambda: client.get_cpu_energy(), lambda: original.get_cpu_energy())
    assert "zeusd serve --enable cpu-read" in str(e)


def test_bad_gpu_index(start):
    theirs = _original()
    from zeus_native.device.exception import ZeusdError
    from zeus_native.utils.zeusd import ZeusdCapabilityError, ZeusdClient, ZeusdConfig, require_capabilities

    d = start()
    client = ZeusdClient(ZeusdConfig.uds(str(d.sock)))
    original = theirs.ZeusdClient(theirs.ZeusdConfig.uds(str(d.sock)))
    e = same_error(lambda: require_capabilities(client, gpu_ids=[0, 7, 9], cpu_ids=[0, 3]),
                   lambda: theirs.require_capabilities(original, gpu_ids=[0, 7, 9], cpu_ids=[0, 3]))
    assert isinstance(e, ZeusdCapabilityError)
    assert str(e).startswith(f"Zeusd at {d.sock}: GPU indices [7, 9] not available (available: [0, 1]); "
                             "CPU indices [3] not available (available: [0])")
    for ours, original_call in ((lambda: client.get_gpu_energy([7]), lambda: original.get_gpu_energy([7])),
                                (lambda: client.get_gpu_power([0, 7]), lambda: original.get_gpu_power([0, 7])),
                                (lambda: client.set_power_limit([7], 200_000),
                                 lambda: original.set_power_limit([7], 200_000)),
                                (lambda: client.get_power_limit([-1]), lambda: original.get_power_limit([-1])),
                                (lambda: client.get_cpu_power([3]), lambda: original.get_cpu_power([3]))):
        e = same_error(ours, original_call)
        assert isinstance(e, ZeusdError)
        assert any(f"{kind} {i}" in str(e) or f"{kind} index {i}" in str(e)
                   for kind, i in (("GPU", 7), ("GPU", -1), ("CPU", 3))), str(e)


def test_one_client_shared_by_threads(start):
    """One client, eight threads calling at once (each call without the GIL): every call succeeds."""
    from concurrent.futures import ThreadPoolExecutor

    from zeus_native.utils.zeusd import ZeusdClient, ZeusdConfig

    d = start()
    client = ZeusdClient(ZeusdConfig.uds(str(d.sock)))

    def calls(n: int) -> int:
        for _ in range(20):
            assert set(client.get_gpu_power([n % 2]).power_mw) == {n % 2}
            assert client.get_power_limit([0, 1]).keys() == {0, 1}
        return n

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert sorted(pool.map(calls, range(8))) == list(range(8))


def test_device_classes_through_a_client(start, monkeypatch):
    """ZeusdNVIDIAGPU(i, client) and ZeusdRAPLCPU(i, client), as the original's: capabilities
    checked at construction, GPU settings through that daemon by the NVML index, CPU energy from it."""
    from zeus_native.device.cpu.rapl import ZeusdRAPLCPU
    from zeus_native.device.gpu.nvidia import ZeusdNVIDIAGPU
    from zeus_native.utils.zeusd import ZeusdCapabilityError, ZeusdClient, ZeusdConfig

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")  # this process's GPU 0 is the daemon's (NVML's) 1
    d = start()
    client = ZeusdClient(ZeusdConfig.uds(str(d.sock)))
    gpu = ZeusdNVIDIAGPU(0, client)
    assert gpu.supports_nonblocking_setters
    default = gpu.get_power_management_limit()
    low, _ = gpu.get_power_management_limit_constraints()
    gpu.set_power_management_limit(low)
    assert client.get_power_limit([1]) == {1: low} and gpu.get_power_management_limit() == low
    gpu.set_power_management_limit(low)  # already: no request, as the original
    gpu.reset_power_management_limit()
    assert gpu.get_power_management_limit() == default
    gpu.set_persistence_mode(True)
    assert gpu.get_persistence_mode() is True
    graphics = gpu.get_supported_graphics_clocks()
    gpu.set_gpu_locked_clocks(min(graphics), max(graphics))
    gpu.reset_gpu_locked_clocks()
    log = d.log_text
    assert log.count(f"POST /gpu/set_power_limit?gpu_ids=1&power_limit_mw={low}&") == 1
    assert f"POST /gpu/set_power_limit?gpu_ids=1&power_limit_mw={default}&" in log
    assert "POST /gpu/set_persistence_mode?gpu_ids=1&enabled=true" in log
    assert "POST /gpu/reset_gpu_locked_clocks?gpu_ids=1" in log and "gpu_ids=0" not in log

    cpu = ZeusdRAPLCPU(0, client)
    entry = client.get_cpu_energy([0])[0]
    measured = cpu.get_total_energy_consumption()
    assert (measured.cpu_mj, measured.dram_mj) == (entry.cpu_energy_uj / 1000, entry.dram_energy_uj / 1000)
    assert cpu.supports_get_dram_energy_consumption()

    with pytest.raises(ZeusdCapabilityError, match=r"CPU indices \[3\] not available"):
        ZeusdRAPLCPU(3, client)
    reader = ZeusdClient(ZeusdConfig.uds(str(start("--enable", "gpu-read").sock)))
    with pytest.raises(ZeusdCapabilityError, match="API group 'gpu-control' is not enabled on this server"):
        ZeusdNVIDIAGPU(0, reader)

    theirs = _original()  # the original's client works with these classes too
    ZeusdNVIDIAGPU(0, theirs.ZeusdClient(theirs.ZeusdConfig.uds(str(d.sock)))).set_persistence_mode(False)
    assert client.get_persistence_mode([1]) == {1: False}
