"""`python -m zeus_native.monitor power|energy`: the original's CLI monitor, same output shape."""

from __future__ import annotations

import argparse
import sys
import threading
import time
from datetime import datetime


def _energy(args: argparse.Namespace) -> None:
    from zeus_native.monitor import ZeusMonitor

    monitor = ZeusMonitor(gpu_indices=args.gpu_indices)
    print(f"Monitoring GPU {monitor.gpu_indices}.", file=sys.stderr, flush=True)
    monitor.begin_window("zeus.monitor.energy")
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        measurement = monitor.end_window("zeus.monitor.energy")
        print("Total energy (J):")
        print(measurement, flush=True)


def _power(args: argparse.Namespace) -> None:
    from zeus_native.monitor import PowerMonitor

    monitor = PowerMonitor(gpu_indices=args.gpu_indices, update_period=args.update_period)
    print(f"Monitoring power usage of GPUs {monitor.gpu_indices}", file=sys.stderr, flush=True)
    start = time.time()
    try:
        while True:
            time.sleep(args.update_period)
            power = monitor.get_power(power_domain=args.power_domain)
            if power is not None:
                print(datetime.now())
                print({f"GPU{i}": w for i, w in power.items()}, flush=True)
    except KeyboardInterrupt:
        end = time.time()
        print("\nTotal time (s):", end - start)
        try:
            energy = monitor.get_energy(start, end, power_domain=args.power_domain)
        except ValueError as e:
            print(f"Total energy (J): unavailable ({e})")
        else:
            print("Total energy (J):")
            print({f"GPU{i}": j for i, j in energy.items()}, flush=True)
    finally:
        monitor.stop()


def main(argv: list[str] | None = None) -> int:
    """Parse arguments and run the chosen monitor until Ctrl-C."""
    parser = argparse.ArgumentParser(prog="python -m zeus_native.monitor")
    sub = parser.add_subparsers(dest="command", required=True)
    energy = sub.add_parser("energy", help="one energy window until Ctrl-C")
    energy.add_argument("--gpu-indices", type=int, nargs="+", default=None)
    power = sub.add_parser("power", help="power every --update-period seconds until Ctrl-C")
    power.add_argument("--gpu-indices", type=int, nargs="+", default=None)
    power.add_argument("--update-period", type=float, default=1.0)
    power.add_argument(
        "--power-domain", choices=["device_instant", "device_average", "memory_average"], default="device_instant"
    )
    args = parser.parse_args(argv)
    if args.command == "energy":
        _energy(args)
    else:
        _power(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
