"""Where a zeusd is and what to stream from it (the original's zeus.utils.zeusd config and
errors), for `zeus_native.monitor.power_streaming.PowerStreamingClient`. The daemon client
itself is native (docs/zeusd-client.md)."""

from __future__ import annotations

import dataclasses
import os
from typing import List, Optional

from zeus_native.exception import ZeusBaseError


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
