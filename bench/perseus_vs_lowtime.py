"""Whole-frontier solve: `zeus perseus solve` against the original lowtime
(PyPI 0.3.0, Rust max flow) on the same generated 1F1B pipelines, in one run.

Each side runs in its own process (wall time and peak RSS from wait4). The
native side is given lowtime's fitted coefficients so that both solve the same
instance; the frontiers are compared point by point (time equal, cost within
1e-9 relative). lowtime can get a time budget: it then stops early and its
total is projected from its per-iteration time (reported as such).

Peak RSS includes the driver's ~10 MiB, inherited at fork.

Usage: .venv/bin/python bench/perseus_vs_lowtime.py build/bin/zeus WORK_DIR
           [--sizes 8x32,16x128] [--lowtime-budget 600] [--repeat 3] [--schedules N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

# The driver stays small (no numpy/lowtime imports): Linux carries a forked
# parent's peak RSS into the child's ru_maxrss, even across exec.
PARITY_DIR = Path(__file__).resolve().parent.parent / "tests" / "lowtime"
UNIT_TIME, P2P_POWER = 0.001, 70.0  # as lowtime_parity.py

LOWTIME_CHILD = r"""
import json, signal, sys, time
sys.path.insert(0, sys.argv[1])
import lowtime_parity as lp
from pathlib import Path
profile, stages, mbs, budget, out = Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
lp.write_profile(profile, stages)
points, models = [], {}
import lowtime.solver as solver
# Same steps as lp.lowtime_frontier, but stoppable: time each yield.
orig_run = solver.PhillipsDessouky.run
def run(self):
    start = time.perf_counter()
    for r in orig_run(self):
        points.append((r.quant_time, float(r.cost)))
        yield r
        if time.perf_counter() - start > budget:
            break
solver.PhillipsDessouky.run = run
lp.PhillipsDessouky = solver.PhillipsDessouky
t0 = time.perf_counter()
cpu0 = time.process_time()
_, _, models, solve_s = lp.lowtime_frontier(profile, stages, mbs)
json.dump({"points": points, "models": {k: {x: v[x] for x in "abc"} for k, v in models.items()},
           "solve_s": solve_s, "total_s": time.perf_counter() - t0,
           "total_cpu_s": time.process_time() - cpu0}, open(out, "w"))
"""


def timed(cmd: list[str]) -> tuple[float, int, str, float]:
    """Wall seconds, peak RSS (KiB), stderr and CPU seconds (user + system) of a child."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    stderr = proc.stderr.read()
    proc.stdout.read()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[:3]} failed: {stderr}")
    return elapsed, usage.ru_maxrss, stderr, usage.ru_utime + usage.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("zeus")
    ap.add_argument("work", type=Path)
    ap.add_argument("--sizes", default="8x32,16x128")
    ap.add_argument("--lowtime-budget", type=float, default=600.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--schedules", type=int, default=None,
                    help="native: write the schedule files of at most N points (default: every point, as the original)")
    args = ap.parse_args()
    sizes = [tuple(int(x) for x in size.split("x")) for size in args.sizes.split(",")]
    # Every lowtime run first, then every native one: the long part starts at
    # once and the native runs follow on the same machine in the same run.
    lowtime_runs = {}
    for stages, mbs in sizes:
        case = args.work / f"{stages}x{mbs}"
        case.mkdir(parents=True, exist_ok=True)
        lt_wall, lt_rss, _, lt_cpu = timed([sys.executable, "-c", LOWTIME_CHILD, str(PARITY_DIR),
                                            str(case / "profile.csv"), str(stages), str(mbs),
                                            str(args.lowtime_budget), str(case / "lowtime.json")])
        lowtime_runs[(stages, mbs)] = (lt_wall, lt_rss, lt_cpu)
        print(f"lowtime {stages}x{mbs}: {lt_wall:.1f} s wall, {lt_cpu:.1f} s CPU", file=sys.stderr, flush=True)
    for stages, mbs in sizes:
        size = f"{stages}x{mbs}"
        case = args.work / size
        profile = case / "profile.csv"
        lt_wall, lt_rss, lt_cpu = lowtime_runs[(stages, mbs)]
        lt = json.loads((case / "lowtime.json").read_text())
        models = case / "models.json"
        models.write_text(json.dumps(lt["models"]))
        runs = []
        for k in range(args.repeat):
            out = case / f"native{k}"
            shutil.rmtree(out, ignore_errors=True)  # solve refuses a non-empty output directory
            wall, rss, stderr, cpu = timed([args.zeus, "perseus", "solve", "--profile", str(profile), "--p2p-power",
                                       str(P2P_POWER), "--microbatches", str(mbs), "--unit-time", str(UNIT_TIME),
                                       "--output-dir", str(out), "--cost-models", str(models)]
                                           + ([] if args.schedules is None else ["--schedules", str(args.schedules)]))
            solve_s = float(stderr.split("fit and solve took ")[1].split(" s")[0])
            runs.append((solve_s, wall, rss, cpu))
        native = json.loads((case / "native0" / "frontier.json").read_text())["points"]
        n_lt = len(lt["points"])
        same = all(p["quant_time"] == q and abs(p["effective_energy"] - c) <= 1e-9 * abs(c)
                   for (q, c), p in zip(lt["points"], native[1:]))
        complete = n_lt == len(native) - 1
        lt_solve = lt["solve_s"]
        projected = lt_solve if complete else lt_solve / max(n_lt, 1) * (len(native) - 1)
        solve_med = statistics.median(r[0] for r in runs)
        wall_med = statistics.median(r[1] for r in runs)
        cpu_med = statistics.median(r[3] for r in runs)
        print(json.dumps({
            "size": size, "frontier_points": len(native) - 1,
            "lowtime_points_solved": n_lt, "lowtime_complete": complete,
            "same_frontier_on_common_points": same,
            "lowtime_solve_s": round(lt_solve, 3), "lowtime_solve_s_projected": round(projected, 1),
            "lowtime_peak_rss_mib": round(lt_rss / 1024, 1),
            # Whole processes, CPU (user + system): less sensitive than wall time to a shared machine.
            "lowtime_process_wall_s": round(lt_wall, 1), "lowtime_process_cpu_s": round(lt_cpu, 1),
            "lowtime_fit_and_solve_cpu_s": round(lt.get("total_cpu_s", float("nan")), 1),
            "native_solve_s_median": round(solve_med, 4), "native_process_wall_s_median": round(wall_med, 3),
            "native_process_cpu_s_median": round(cpu_med, 3),
            "native_peak_rss_mib": round(max(r[2] for r in runs) / 1024, 1),
            "speedup_solve": round(projected / solve_med, 1),
            "speedup_process_cpu": round(lt_cpu / cpu_med, 1) if complete else None,
        }), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
