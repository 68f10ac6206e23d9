"""Power of a fleet from many zeusd instances (the original's zeus.monitor.power_streaming).

    from zeus_native.utils.zeusd import ZeusdConfig
    from zeus_native.monitor.power_streaming import PowerStreamingClient

    client = PowerStreamingClient(servers=[ZeusdConfig.tcp("node1", 4938), ZeusdConfig.tcp("node2", 4938)])
    client.get_power()            # {"node1:4938": PowerReadings(timestamp_s, gpu_power_w, cpu_power_w)}
    for readings in client: ...   # a snapshot at each update, until stop()
    client.stop()

The streams (GET /gpu/stream_power and /cpu/stream_power, server-sent events) are read by
native threads (one per stream), reconnecting after `reconnect_delay_s` when a daemon drops;
timestamps are on this machine's clock (each daemon's offset measured through GET /time).
What goes wrong later (a dropped stream, a refused token) is logged as a warning.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from typing import AsyncIterator, Dict, Iterator, Optional, Sequence

from zeus_native import _core, _exit
from zeus_native.utils.zeusd import ZeusdCapabilityError, ZeusdConfig, ZeusdConnectionError

logger = logging.getLogger(__name__)


@dataclasses.dataclass
class CpuPowerReading:
    """One CPU package's power (W); dram_w None when not available."""

    cpu_w: float = 0.0
    dram_w: Optional[float] = None


@dataclasses.dataclass
class PowerReadings:
    """One daemon's latest readings: timestamp_s (Unix, this machine's clock), W per GPU and per CPU."""

    timestamp_s: float = 0.0
    gpu_power_w: Dict[int, float] = dataclasses.field(default_factory=dict)
    cpu_power_w: Dict[int, CpuPowerReading] = dataclasses.field(default_factory=dict)


def _indices(value: Optional[Sequence[int]]) -> Optional[list]:
    return None if value is None else [int(i) for i in value]


class PowerStreamingClient:
    """Streams GPU and CPU power from every zeusd in `servers` (ZeusdConfig, ours or the
    original's), keyed by each config's `endpoint`."""

    def __init__(self, servers: Sequence[ZeusdConfig], reconnect_delay_s: float = 1.0) -> None:
        """Connect to every server and start streaming. ValueError for a duplicate endpoint or an
        index a daemon lacks; ZeusdCapabilityError for listed indices the token may not read;
        ZeusdConnectionError for a daemon that cannot be reached."""
        import os

        self._servers = list(servers)
        self._reconnect_delay = reconnect_delay_s
        if not reconnect_delay_s > 0:
            raise ValueError(f"reconnect_delay_s must be positive seconds, got {reconnect_delay_s}")
        token_from_env = os.environ.get("ZEUSD_TOKEN")
        native_servers = [
            (s.socket_path, s.host_port, s.token if s.token is not None else token_from_env, s.endpoint,
             _indices(s.gpu_indices), _indices(s.cpu_indices))
            for s in self._servers
        ]
        native, code, message = _core.ZeusdPowerStream.start(native_servers, float(reconnect_delay_s))
        if native is None:
            if code == "invalid argument" or code == "invalid config":
                raise ValueError(message)
            if code == "no permission":
                raise ZeusdCapabilityError(message)
            raise ZeusdConnectionError(message)
        self._native = native
        self._seen = 0
        _exit.track(self, "sampler", PowerStreamingClient.stop)
        if native.stream_count == 0:
            logger.warning("No GPU or CPU power streaming threads were started. "
                           "Check that the zeusd endpoints have the expected devices available.")

    @property
    def clock_offsets(self) -> Dict[str, float]:
        """Seconds added to each daemon's timestamps (this machine's clock minus the daemon's)."""
        return dict(self._native.clock_offsets_s)

    def _log_warnings(self) -> None:
        for text in self._native.take_warnings():
            logger.warning("%s", text)

    def stop(self) -> None:
        """End every stream, join the threads, and wake iterators (idempotent)."""
        self._native.stop()
        self._log_warnings()

    def get_power(self) -> Dict[str, PowerReadings]:
        """The latest readings of every daemon that has sent one."""
        self._log_warnings()
        return {
            key: PowerReadings(timestamp_s=ts, gpu_power_w=dict(gpus),
                               cpu_power_w={i: CpuPowerReading(cpu_w=c, dram_w=d) for i, (c, d) in cpus.items()})
            for key, (ts, gpus, cpus) in self._native.latest().items()
        }

    def _wait_for_update(self) -> bool:
        """Block until new readings arrive (True) or 1 s passes or stop() (False)."""
        count = self._native.wait_for_update(self._seen, 1.0)
        updated = count > self._seen
        self._seen = count
        return updated and not self._native.stopped

    def __iter__(self) -> Iterator[Dict[str, PowerReadings]]:
        """A get_power() snapshot each time readings arrive, until stop()."""
        while not self._native.stopped:
            if self._wait_for_update():
                yield self.get_power()

    async def __aiter__(self) -> AsyncIterator[Dict[str, PowerReadings]]:
        """As __iter__, without blocking the event loop."""
        loop = asyncio.get_running_loop()
        while not self._native.stopped:
            if await loop.run_in_executor(None, self._wait_for_update):
                yield self.get_power()
