"""`python -m zeus_native.monitor power|energy`: the original's CLI monitor, same output shape.

--format json|csv writes what `zeus power|energy --format json|csv` writes: one
document on standard output (JSON Lines for power), messages on standard error.
The loop is the library's (the one `zeus power|energy` runs); Ctrl-C (SIGINT,
even in a background job that a shell started with it ignored) or SIGTERM ends
it with the totals.
"""

from __future__ import annotations

import argparse
import signal
import sys
from datetime import datetime

from zeus_native import _core

FORMATS = ["human", "json", "csv"]
PROG = "python -m zeus_native.monitor"


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def _write(text: str, stream=sys.stdout) -> None:
    stream.write(text)
    stream.flush()


def _energy(args: argparse.Namespace) -> None:
    from zeus_native.monitor import ZeusMonitor

    monitor = ZeusMonitor(gpu_indices=args.gpu_indices)
    measurement = _core.measure_until_stopped(
        monitor,
        "zeus.monitor.energy",
        None,
        None,
        on_begun=lambda: print(f"Monitoring GPU {monitor.gpu_indices}.", file=sys.stderr, flush=True),
    )
    if args.format == "json":
        _write(measurement.to_json())
    elif args.format == "csv":
        _write(measurement.to_csv())
    else:
        print("Total energy (J):")
        print(measurement, flush=True)


def _power(args: argparse.Namespace) -> None:
    from zeus_native.monitor import ZeusMonitor

    monitor = ZeusMonitor(gpu_indices=args.gpu_indices)
    devices = _core.power_device_labels(monitor)
    gpus = monitor.gpu_indices

    def human(wall: float, elapsed_s: float, watts: list) -> None:
        power = {f"GPU{i}": w for i, w in zip(gpus, watts) if w is not None}
        if power:
            print(datetime.now())
            print(power, flush=True)

    def formatted(wall: float, elapsed_s: float, watts: list) -> None:
        _write(_core.render_power_row(devices, wall, elapsed_s, watts, args.format))

    _write(_core.render_power_header(devices, args.format))
    measurement = _core.measure_until_stopped(
        monitor,
        "zeus.monitor.power",
        args.update_period,
        None,
        args.power_domain,
        on_reading=human if args.format == "human" else formatted,
        on_begun=lambda: print(f"Monitoring power usage of GPUs {gpus}", file=sys.stderr, flush=True),
        # What `zeus power` warns of (a GPU whose readings stopped or came back), once per change.
        on_warning=lambda text: print(f"{PROG}: warning: {text}", file=sys.stderr, flush=True),
    )
    if args.format == "json":
        _write(measurement.to_json(command="power", one_line=True))
    elif args.format == "csv":  # the CSV stream holds readings only, as `zeus power`'s
        _write(measurement.to_table(command="power"), sys.stderr)
    else:
        print("\nTotal time (s):", measurement.time)
        print("Total energy (J):")
        print({f"GPU{i}": j for i, j in (measurement.gpu_energy or {}).items()}, flush=True)


def energy(gpu_indices: list[int] | None = None) -> None:
    """The original's `energy` subcommand as a function: one energy window of `gpu_indices`
    (None: every GPU) until Ctrl-C, then its totals on standard output."""
    _energy(argparse.Namespace(gpu_indices=gpu_indices, format="human"))


def power(gpu_indices: list[int] | None = None, update_period: float = 1.0) -> None:
    """The original's `power` subcommand as a function: the power of `gpu_indices` every
    `update_period` seconds until Ctrl-C, then the time and energy."""
    if not update_period > 0:
        raise ValueError(f"update_period must be positive seconds, got {update_period}")
    _power(argparse.Namespace(gpu_indices=gpu_indices, update_period=update_period, power_domain="device_instant",
                              format="human"))


def main(argv: list[str] | None = None) -> int:
    """Parse arguments and run the chosen monitor until Ctrl-C (or SIGTERM)."""
    parser = argparse.ArgumentParser(prog=PROG)
    sub = parser.add_subparsers(dest="command", required=True)
    energy_parser = sub.add_parser("energy", help="one energy window until Ctrl-C")
    energy_parser.add_argument("--gpu-indices", type=int, nargs="+", default=None)
    energy_parser.add_argument("--format", choices=FORMATS, default="human", help="output format (as zeus energy's)")
    power_parser = sub.add_parser("power", help="power every --update-period seconds until Ctrl-C")
    power_parser.add_argument("--gpu-indices", type=int, nargs="+", default=None)
    power_parser.add_argument("--update-period", type=float, default=1.0)
    power_parser.add_argument(
        "--power-domain", choices=["device_instant", "device_average", "memory_average"], default="device_instant"
    )
    power_parser.add_argument("--format", choices=FORMATS, default="human", help="output format (as zeus power's)")
    args = parser.parse_args(argv)
    if args.command == "power" and not args.update_period > 0:
        parser.error(f"--update-period must be positive seconds, got {args.update_period}")
    signal.signal(signal.SIGTERM, _interrupt)  # SIGTERM ends the measurement with its report, as Ctrl-C does
    # SIGINT even when this process was started with it ignored (a shell's
    # background job): Python then installs no KeyboardInterrupt of its own,
    # and `zeus power|energy` take SIGINT in that case too.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    from zeus_native.exception import ZeusBaseError

    try:
        if args.command == "energy":
            _energy(args)
        else:
            _power(args)
    except (ZeusBaseError, ValueError, OSError) as e:  # bad input: its message names the fix; no traceback
        print(f"{parser.prog}: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
