"""The zeusd client (the original's zeus.utils.zeusd): where a daemon is (`ZeusdConfig`), a
connection to it (`ZeusdClient`, one typed method per route) and `require_capabilities`.

    from zeus_native.utils.zeusd import ZeusdClient, ZeusdConfig, require_capabilities

    client = ZeusdClient(ZeusdConfig.uds(socket_path="/run/zeusd/zeusd.sock"))
    client.gpu_ids                # [0, 1, 2, 3]
    require_capabilities(client, read_gpu=True, gpu_ids=[0])
    client.get_gpu_power().power_mw   # {0: 75000, 1: 120000, ...}

The requests are made by the native client (docs/zeusd-client.md) without the GIL; one
connection per ZeusdClient, shared by the threads that use it.
"""

from __future__ import annotations

import dataclasses
import logging
import operator
import os
from typing import TYPE_CHECKING, Dict, FrozenSet, List, Optional, Sequence, Tuple

from zeus_native import _core
from zeus_native.exception import ZeusBaseError

if TYPE_CHECKING:
    import httpx

logger = logging.getLogger(__name__)


class ZeusdConnectionError(ZeusBaseError):
    """Cannot reach the Zeusd daemon."""


class ZeusdAuthError(ZeusBaseError):
    """Authentication or authorization failure."""


class ZeusdCapabilityError(ZeusBaseError):
    """Requested capabilities exceed what the daemon offers."""


@dataclasses.dataclass(frozen=True)
class ZeusdConfig:
    """A zeusd endpoint: `host_port` ("host:port", TCP) or `socket_path` (Unix socket), the
    token (ZEUSD_TOKEN when None), and the GPU and CPU indices to stream (None: all, []: none)."""

    host_port: Optional[str] = None
    socket_path: Optional[str] = None
    token: Optional[str] = None
    gpu_indices: Optional[List[int]] = None
    cpu_indices: Optional[List[int]] = None

    @classmethod
    def tcp(cls, host: str, port: int, *, token: Optional[str] = None, gpu_indices: Optional[List[int]] = None,
            cpu_indices: Optional[List[int]] = None) -> "ZeusdConfig":
        """A TCP endpoint."""
        return cls(host_port=f"{host}:{port}", token=token, gpu_indices=gpu_indices, cpu_indices=cpu_indices)

    @classmethod
    def uds(cls, socket_path: str, *, token: Optional[str] = None, gpu_indices: Optional[List[int]] = None,
            cpu_indices: Optional[List[int]] = None) -> "ZeusdConfig":
        """A Unix socket endpoint."""
        return cls(socket_path=socket_path, token=token, gpu_indices=gpu_indices, cpu_indices=cpu_indices)

    @classmethod
    def from_env(cls) -> Optional["ZeusdConfig"]:
        """ZEUSD_SOCK_PATH (first) or ZEUSD_HOST_PORT, with ZEUSD_TOKEN; None when neither is set."""
        token = os.environ.get("ZEUSD_TOKEN")
        sock = os.environ.get("ZEUSD_SOCK_PATH")
        if sock is not None:
            return cls.uds(socket_path=sock, token=token)
        host_port = os.environ.get("ZEUSD_HOST_PORT")
        if host_port is not None:
            return cls(host_port=host_port, token=token)
        return None

    @property
    def endpoint(self) -> str:
        """The socket path or "host:port": how results name this daemon."""
        return self.socket_path if self.socket_path is not None else str(self.host_port)

    def url(self, path: str) -> str:
        """The full URL of `path` on this daemon (http://localhost/... on a Unix socket)."""
        if self.socket_path is not None:
            return f"http://localhost{path}"
        return f"http://{self.host_port}{path}"

    def make_client(self) -> "httpx.Client":
        """An httpx.Client for this daemon (its Unix socket, the token's Bearer header), for
        requests of your own; needs httpx, which zeus_native itself does not use."""
        try:
            import httpx
        except ImportError as e:
            raise ImportError("ZeusdConfig.make_client returns an httpx.Client: install httpx "
                              "(pip install httpx), or use ZeusdClient's methods, which need nothing") from e
        token = self._token()
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        if self.socket_path is not None:
            return httpx.Client(transport=httpx.HTTPTransport(uds=self.socket_path), headers=headers)
        return httpx.Client(headers=headers)

    def _token(self) -> Optional[str]:
        """`token`, else ZEUSD_TOKEN (as PowerStreamingClient does)."""
        return self.token if self.token is not None else os.environ.get("ZEUSD_TOKEN")


@dataclasses.dataclass(frozen=True)
class GpuInfo:
    """A GPU the daemon serves: its index in zeusd's routes and its model name."""

    id: int
    name: str


@dataclasses.dataclass(frozen=True)
class CpuInfo:
    """A CPU package (RAPL) the daemon serves, and whether its DRAM energy can be read."""

    id: int
    dram_available: bool


@dataclasses.dataclass(frozen=True)
class GpuPowerSnapshot:
    """GPU power now: the daemon's Unix time (ms) and mW per GPU index."""

    timestamp_ms: int
    power_mw: Dict[int, int]


@dataclasses.dataclass(frozen=True)
class CpuDramPower:
    """One CPU package's power (mW); dram_mw None when DRAM cannot be read."""

    cpu_mw: int
    dram_mw: Optional[int]


@dataclasses.dataclass(frozen=True)
class CpuPowerSnapshot:
    """CPU power now: the daemon's Unix time (ms) and the power of each package."""

    timestamp_ms: int
    power_mw: Dict[int, CpuDramPower]


@dataclasses.dataclass(frozen=True)
class CpuEnergyResult:
    """One CPU package's cumulative energy (µJ); None when not asked for or not available."""

    cpu_energy_uj: Optional[int]
    dram_energy_uj: Optional[int]


def _zeusd_error(message: str) -> Exception:
    from zeus_native.device.exception import ZeusdError

    return ZeusdError(message)


def _ids(ids: Sequence[int], kind: str, operation: str) -> List[int]:
    """Device indices as the native client takes them; a negative one is the daemon's 400."""
    out = [operator.index(i) for i in ids]
    for i in out:
        if i < 0:
            raise _zeusd_error(f"Failed to {operation}: {kind} index {i} is not a device index (indices are 0 or "
                               f"more; the daemon lists its {kind}s in /discover)")
    return out


def _all_or(ids: Optional[Sequence[int]], kind: str, operation: str) -> List[int]:
    """None (every device) is the native client's empty list."""
    return [] if ids is None else _ids(ids, kind, operation)


class ZeusdClient:
    """A connection to a zeusd: discovery, the token's scopes, and one method per route.

    `config` None reads ZEUSD_SOCK_PATH (first) or ZEUSD_HOST_PORT, with ZEUSD_TOKEN.
    Raises ZeusdConnectionError when the daemon cannot be reached or used; a missing or
    refused token does not raise here: it is kept in `auth_error`, which
    `require_capabilities` raises as ZeusdAuthError. Methods raise ZeusdError when the
    daemon refuses (the route's API group disabled, the token's scope missing, a GPU it
    lacks) and ZeusdConnectionError when it can no longer be reached.
    """

    def __init__(self, config: Optional[ZeusdConfig] = None) -> None:
        """Connect, run discovery (GET /discover) and, when the daemon requires it, check the token."""
        if config is None:
            config = ZeusdConfig.from_env()
            if config is None:
                raise ZeusdConnectionError(
                    "No Zeusd connection configured. Set ZEUSD_SOCK_PATH or ZEUSD_HOST_PORT, or pass a ZeusdConfig."
                )
        self._config = config
        token = config._token() or None  # an empty token is none, as the original sends no header for it
        if token is not None and ("\n" in token or "\r" in token):
            raise ZeusdConnectionError(f"Cannot reach Zeusd at {config.endpoint}: the token contains a line break "
                                       "(set it to the token `zeusd token issue` printed, on one line)")
        native, unreachable, why = _core.ZeusdClient.connect(config.socket_path, config.host_port, token)
        if native is None:
            raise ZeusdConnectionError(f"Cannot reach Zeusd at {config.endpoint}: {why}" if unreachable else why)
        self._native = native
        self._gpus = [GpuInfo(id=i, name=name) for i, name in native.gpus]
        self._cpus = [CpuInfo(id=i, dram_available=dram) for i, dram in native.cpus]
        self._gpu_ids = [gpu.id for gpu in self._gpus]
        self._cpu_ids = [cpu.id for cpu in self._cpus]
        self._dram_available = [cpu.dram_available for cpu in self._cpus]
        self._enabled_api_groups = set(native.enabled_api_groups)
        self._auth_required: bool = native.auth_required
        self._auth_error = self._auth_problem(token)
        identity = native.identity
        self._whoami_sub: Optional[str] = identity[0] if identity else None
        self._granted_scopes: FrozenSet[str] = frozenset(identity[1]) if identity else frozenset()
        self._whoami_exp: Optional[int] = identity[2] if identity else None
        if identity:
            logger.info("Authenticated with Zeusd at %s as user '%s' (scopes: %s)", config.endpoint,
                        self._whoami_sub, sorted(self._granted_scopes))
        if self._auth_error:
            logger.warning("Auth issue with Zeusd at %s: %s", config.endpoint, self._auth_error)

    def _auth_problem(self, token: Optional[str]) -> Optional[str]:
        """The original's words for a token problem, with the native client's detail and fix."""
        problem = self._native.auth_error
        if problem is None:
            return None
        why, status = problem
        endpoint = self._config.endpoint
        if not token:
            return (f"Zeusd at {endpoint} requires authentication but no token was provided. Set the ZEUSD_TOKEN "
                    "environment variable or pass token= in the config.")
        if status == 401:
            return f"Token rejected by Zeusd at {endpoint}: {why}"
        if status:
            return f"Unexpected response from /auth/whoami at {endpoint} (HTTP {status}): {why}"
        return f"Unexpected response from /auth/whoami at {endpoint}: {why}"

    @property
    def endpoint(self) -> str:
        """The socket path or "host:port"."""
        return self._config.endpoint

    @property
    def gpus(self) -> List[GpuInfo]:
        """The daemon's GPUs."""
        return list(self._gpus)

    @property
    def gpu_ids(self) -> List[int]:
        """The daemon's GPU indices."""
        return list(self._gpu_ids)

    @property
    def cpus(self) -> List[CpuInfo]:
        """The daemon's CPU packages."""
        return list(self._cpus)

    @property
    def cpu_ids(self) -> List[int]:
        """The daemon's CPU package indices."""
        return list(self._cpu_ids)

    @property
    def dram_available(self) -> List[bool]:
        """Whether each package's DRAM energy can be read, in `cpu_ids` order."""
        return list(self._dram_available)

    @property
    def auth_required(self) -> bool:
        """Whether the daemon requires a token."""
        return self._auth_required

    @property
    def auth_error(self) -> Optional[str]:
        """Why the token cannot be used (none given, refused); None when auth is fine or off."""
        return self._auth_error

    @property
    def granted_scopes(self) -> FrozenSet[str]:
        """The token's scopes (empty when auth is off or failed)."""
        return self._granted_scopes

    @property
    def can_read_gpu(self) -> bool:
        """Whether the gpu-read routes may be used (group enabled, scope granted)."""
        return self._native.can("gpu-read")

    @property
    def can_control_gpu(self) -> bool:
        """Whether the gpu-control routes may be used."""
        return self._native.can("gpu-control")

    @property
    def can_read_cpu(self) -> bool:
        """Whether the cpu-read routes may be used."""
        return self._native.can("cpu-read")

    def get_gpu_energy(self, gpu_ids: List[int]) -> Dict[int, int]:
        """Cumulative energy (mJ) of each GPU index."""
        return self._native.gpu_energy(_ids(gpu_ids, "GPU", "read GPU energy"))

    def get_gpu_power(self, gpu_ids: Optional[List[int]] = None) -> GpuPowerSnapshot:
        """Power now (mW) of each GPU index; None: every GPU."""
        timestamp_ms, power_mw = self._native.gpu_power(_all_or(gpu_ids, "GPU", "read GPU power"))
        return GpuPowerSnapshot(timestamp_ms=timestamp_ms, power_mw=power_mw)

    def set_power_limit(self, gpu_ids: List[int], power_limit_mw: int, block: bool = True) -> None:
        """Set the power limit (mW); with `block`, once the daemon has set it on every GPU."""
        self._native.set_power_limit(_ids(gpu_ids, "GPU", "set the GPU power limit"), power_limit_mw, block)

    def set_persistence_mode(self, gpu_ids: List[int], enabled: bool, block: bool = True) -> None:
        """Turn persistence mode on or off."""
        self._native.set_persistence_mode(_ids(gpu_ids, "GPU", "set the GPU persistence mode"), enabled, block)

    def get_persistence_mode(self, gpu_ids: Optional[List[int]] = None) -> Dict[int, bool]:
        """Whether persistence mode is on, per GPU index; None: every GPU."""
        return self._native.persistence_mode(_all_or(gpu_ids, "GPU", "read the GPU persistence mode"))

    def get_power_limit(self, gpu_ids: Optional[List[int]] = None) -> Dict[int, int]:
        """The power limit (mW) per GPU index; None: every GPU."""
        return self._native.power_limit(_all_or(gpu_ids, "GPU", "read the GPU power limit"))

    def get_power_limit_constraints(self, gpu_ids: Optional[List[int]] = None) -> Dict[int, Tuple[int, int]]:
        """(min mW, max mW) of the power limit per GPU index; None: every GPU."""
        return self._native.power_limit_constraints(
            _all_or(gpu_ids, "GPU", "read the GPU power limit constraints"))

    def set_gpu_locked_clocks(self, gpu_ids: List[int], min_clock_mhz: int, max_clock_mhz: int,
                              block: bool = True) -> None:
        """Lock the GPU clock to [min, max] MHz."""
        self._native.set_gpu_locked_clocks(_ids(gpu_ids, "GPU", "lock the GPU clocks"), min_clock_mhz,
                                           max_clock_mhz, block)

    def reset_gpu_locked_clocks(self, gpu_ids: List[int], block: bool = True) -> None:
        """Unlock the GPU clock."""
        self._native.reset_gpu_locked_clocks(_ids(gpu_ids, "GPU", "reset the GPU locked clocks"), block)

    def set_mem_locked_clocks(self, gpu_ids: List[int], min_clock_mhz: int, max_clock_mhz: int,
                              block: bool = True) -> None:
        """Lock the memory clock to [min, max] MHz."""
        self._native.set_mem_locked_clocks(_ids(gpu_ids, "GPU", "lock the GPU memory clocks"), min_clock_mhz,
                                           max_clock_mhz, block)

    def reset_mem_locked_clocks(self, gpu_ids: List[int], block: bool = True) -> None:
        """Unlock the memory clock."""
        self._native.reset_mem_locked_clocks(_ids(gpu_ids, "GPU", "reset the GPU memory locked clocks"), block)

    def get_cpu_energy(self, cpu_ids: Optional[List[int]] = None, cpu: bool = True,
                       dram: bool = True) -> Dict[int, CpuEnergyResult]:
        """Cumulative energy (µJ) per CPU package; None: every package."""
        energy = self._native.cpu_energy(_all_or(cpu_ids, "CPU", "read CPU energy"), cpu, dram)
        return {i: CpuEnergyResult(cpu_energy_uj=c, dram_energy_uj=d) for i, (c, d) in energy.items()}

    def get_cpu_power(self, cpu_ids: Optional[List[int]] = None) -> CpuPowerSnapshot:
        """Power now (mW) per CPU package; None: every package."""
        timestamp_ms, power = self._native.cpu_power(_all_or(cpu_ids, "CPU", "read CPU power"))
        return CpuPowerSnapshot(timestamp_ms=timestamp_ms,
                                power_mw={i: CpuDramPower(cpu_mw=c, dram_mw=d) for i, (c, d) in power.items()})

    def get_time(self) -> float:
        """The daemon's clock (GET /time), Unix seconds."""
        return self._native.time_ms() / 1000.0

    def make_client(self) -> "httpx.Client":
        """An httpx.Client for this daemon, for requests of your own (ZeusdConfig.make_client)."""
        return self._config.make_client()

    def url(self, path: str) -> str:
        """The full URL of `path` on this daemon, for `make_client()`."""
        return self._config.url(path)


def require_capabilities(
    client: ZeusdClient,
    *,
    read_gpu: bool = False,
    control_gpu: bool = False,
    read_cpu: bool = False,
    gpu_ids: Optional[List[int]] = None,
    cpu_ids: Optional[List[int]] = None,
) -> None:
    """Fail fast unless the daemon offers what the caller needs: the API groups enabled, the
    token's scopes, the device indices. ZeusdAuthError for a token problem, else
    ZeusdCapabilityError naming everything that is missing and how to get it. The original's
    ZeusdClient is checked too (without the fix, which the native client gives)."""
    if client.auth_error:
        raise ZeusdAuthError(client.auth_error)
    errors: List[str] = []
    for needed, scope, can in ((read_gpu, "gpu-read", client.can_read_gpu),
                               (control_gpu, "gpu-control", client.can_control_gpu),
                               (read_cpu, "cpu-read", client.can_read_cpu)):
        if needed and not can:
            errors.append(_capability_reason(client, scope))
    for wanted, available, kind in ((gpu_ids, client.gpu_ids, "GPU"), (cpu_ids, client.cpu_ids, "CPU")):
        if wanted is not None:
            missing = set(wanted) - set(available)
            if missing:
                errors.append(f"{kind} indices {sorted(missing)} not available (available: {sorted(available)})")
    if errors:
        native = getattr(client, "_native", None)
        fix = native and native.require_fix(read_gpu, control_gpu, read_cpu, [i for i in gpu_ids or [] if i >= 0],
                                            [i for i in cpu_ids or [] if i >= 0])
        raise ZeusdCapabilityError(f"Zeusd at {client.endpoint}: " + "; ".join(errors) + (f" ({fix})" if fix else ""))


def _capability_reason(client: ZeusdClient, scope: str) -> str:
    """Why the `scope` group cannot be used, in the original's words."""
    if scope not in client._enabled_api_groups:
        return f"API group '{scope}' is not enabled on this server"
    if client.auth_required and scope not in client.granted_scopes:
        return f"Token lacks required scope '{scope}' (granted: {sorted(client.granted_scopes)})"
    return f"'{scope}' is not available"
