"""Point-by-point parity of `zeus perseus solve` with the original lowtime.

For generated pipelines (analytic DVFS profiles), runs the original's
optimization step (Zeus's examples/pipeline_frequency_optimizer/
run_optimization.py, minus its plots) with lowtime from PyPI, and the native
solver on the same CSV. The native run is given lowtime's own fitted
coefficients (--cost-models), so the frontiers must agree exactly: the same
quantized time at every point and the cost within 1e-9 relative. Separately,
the native fit of the same options must predict costs close to scipy's.

Usage: lowtime_parity.py ZEUS_BINARY WORK_DIR [--sizes 2x3,4x8] [--bench]
Exit 77 (skipped) when lowtime is not installed (scripts/setup-python.sh).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import random
import resource
import shutil
import subprocess
import sys
import time
import types
from pathlib import Path

# lowtime imports matplotlib at import time only to draw; nothing is drawn here.
for name in ("matplotlib", "matplotlib.pyplot"):
    sys.modules.setdefault(name, types.ModuleType(name))

try:
    import networkx as nx
    from lowtime.cost_model import ExponentialModel
    from lowtime.graph_utils import DependencyResolver, add_sink_node, add_source_node
    from lowtime.operation import CandidateExecutionOptions, ExecutionOption, OperationSpec
    from lowtime.perseus.instruction import Backward, Forward, Instruction, backward_dep, forward_dep
    from lowtime.perseus.schedule import Synchronous1F1B
    from lowtime.solver import PhillipsDessouky
except ImportError as e:  # pragma: no cover
    print(f"SKIP: lowtime is not installed ({e}); run scripts/setup-python.sh")
    sys.exit(77)

UNIT_TIME = 0.001
P2P_POWER = 70.0
NOISE_FACTOR = 0.95


def write_profile(path: Path, stages: int) -> None:
    """Analytic DVFS: t = t0 * 1980 / f, P = P_static + k f^3, stages imbalanced."""
    rows = ["stage,instruction,frequency,time,energy"]
    for stage in range(stages):
        for inst, t0 in (("forward", 0.010 + 0.0013 * stage), ("backward", 0.021 + 0.0021 * ((stage * 7) % 3))):
            for f in range(1980, 999, -15):
                t = t0 * 1980.0 / f
                p = 75.0 + 230.0 * (f / 1980.0) ** 3
                rows.append(f"{stage},{inst},{f},{t!r},{p * t!r}")
    path.write_text("\n".join(rows) + "\n")


# Supported SM clocks (MHz), highest first, of the two GPUs Perseus was
# evaluated on; a profile takes a contiguous run from the top, as the
# original's profiler does before it stops scanning.
A100_CLOCKS = list(range(1410, 209, -15))
V100_CLOCKS = [1530 - (15 * k) // 2 for k in range(0, 187)]


def write_random_profile(path: Path, rng: random.Random) -> int:
    """A profile nobody tuned: random stage count, clock set and depth, times
    from a noisy DVFS law, energies noisy and non-monotone, some exact ties
    (equal times, equal energies, times rounded to the 0.1 ms a timer gives)."""
    stages = rng.randint(2, 8)
    clocks = rng.choice([A100_CLOCKS, V100_CLOCKS])
    depth = rng.randint(8, 24)
    stride = rng.choice([1, 1, 2, 3])
    freqs = clocks[:depth * stride:stride]
    rows = ["stage,instruction,frequency,time,energy"]
    for stage in range(stages):
        for inst in ("forward", "backward"):
            t0 = rng.uniform(0.015, 0.05) * (2.0 if inst == "backward" else 1.0)
            mem_bound = rng.uniform(0.0, 0.5)
            p_static = rng.uniform(50.0, 110.0)
            p_dyn = rng.uniform(120.0, 300.0)
            noise = rng.choice([0.0, 0.002, 0.005, 0.01, 0.02])
            fmax = clocks[0]
            prev = None
            for f in freqs:
                t = t0 * (mem_bound + (1 - mem_bound) * fmax / f) * (1 + rng.gauss(0, noise / 3))
                if rng.random() < 0.3:
                    t = round(t, 4)
                p = p_static + p_dyn * (f / fmax) ** rng.uniform(2.0, 3.0)
                e = p * t * (1 + rng.gauss(0, noise))
                if prev is not None and rng.random() < 0.08:
                    t, e = (prev[0], e) if rng.random() < 0.5 else (t, prev[1])
                prev = (t, e)
                rows.append(f"{stage},{inst},{f},{t!r},{e!r}")
    path.write_text("\n".join(rows) + "\n")
    return stages


def read_profile(path: Path) -> list[dict]:
    lines = path.read_text().splitlines()
    header = lines[0].split(",")
    return [dict(zip(header, line.split(","))) for line in lines[1:] if line]


def lowtime_frontier(profile: Path, stages: int, mbs: int):
    """run_optimization.py's steps, with lowtime."""
    rows = read_profile(profile)
    spec_map: dict[int, dict] = {s: {} for s in range(stages)}
    models: dict[str, dict] = {}
    for instruction in (Forward, Backward):
        name = instruction.__name__.lower()
        for stage in range(stages):
            options = [
                ExecutionOption[int](
                    real_time=float(r["time"]), unit_time=UNIT_TIME, cost=float(r["energy"]), knob=int(r["frequency"])
                )
                for r in rows
                if int(r["stage"]) == stage and r["instruction"] == name
            ]
            for option in options:
                option.cost -= P2P_POWER * option.quant_time * option.unit_time
            cand = CandidateExecutionOptions[int](options=options)
            if len(cand.options) <= 3:
                cand = CandidateExecutionOptions[int](options=options, noise_factor=NOISE_FACTOR)
            model = ExponentialModel(cand, search_strategy="best")
            a, b, c = (float(x) for x in model.coefficients)
            models[f"{stage},{name}"] = {"a": a, "b": b, "c": c, "quant_times": [o.quant_time for o in cand.options]}
            spec_map[stage][instruction] = OperationSpec[int](options=cand, cost_model=model)
    dag = nx.DiGraph()
    node_id = 2
    instructions = []
    for stage in range(stages):
        ids = []
        insts = []
        for inst in Synchronous1F1B(
            num_stages=stages, num_micro_batches=mbs, stage_id=stage, operation_spec_map=spec_map[stage]
        ):
            dag.add_node(node_id, op=inst)
            ids.append(node_id)
            insts.append(inst)
            node_id += 1
        instructions.append(insts)
        for u, v in zip(ids, ids[1:]):
            dag.add_edge(u, v)
    resolver = DependencyResolver(dependency_rules=[forward_dep, backward_dep], node_type=Instruction)
    nodes = dag.nodes(data=True)
    for (id1, d1), (id2, d2) in itertools.product(nodes, nodes):
        if resolver.is_dependent(d1["op"], d2["op"]):
            dag.add_edge(id1, id2)
    add_source_node(dag, 0)
    add_sink_node(dag, 1)
    dag.graph["source_node"] = 0
    dag.graph["sink_node"] = 1
    points = []
    schedules = []
    start = time.perf_counter()
    for result in PhillipsDessouky(dag).run():
        points.append((result.quant_time, result.cost, result.cost_change))
        schedules.append([[(type(i).__name__.lower(), i.assigned_knob) for i in insts] for insts in instructions])
    return points, schedules, models, time.perf_counter() - start


def native_frontier(zeus: str, profile: Path, mbs: int, out: Path, cost_models: Path | None):
    cmd = [zeus, "perseus", "solve", "--profile", str(profile), "--p2p-power", str(P2P_POWER),
           "--microbatches", str(mbs), "--unit-time", str(UNIT_TIME), "--output-dir", str(out)]
    if cost_models is not None:
        cmd += ["--cost-models", str(cost_models)]
    shutil.rmtree(out, ignore_errors=True)  # solve refuses a non-empty output directory
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        return None, f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()}"
    return json.loads((out / "frontier.json").read_text()), elapsed


def model_cost(m: dict, q: int) -> float:
    return m["a"] * math.exp(m["b"] * q) + m["c"]


def check(zeus: str, work: Path, stages: int, mbs: int, random_seed: int | None = None) -> dict:
    case = work / (f"{stages}x{mbs}" if random_seed is None else f"random{random_seed}")
    case.mkdir(parents=True, exist_ok=True)
    profile = case / "profile.csv"
    if random_seed is None:
        write_profile(profile, stages)
    else:
        rng = random.Random(random_seed)
        stages = write_random_profile(profile, rng)
        mbs = rng.randint(3, mbs)
    label = f"{case.name} ({stages}x{mbs})"
    try:
        points, schedules, models, lowtime_seconds = lowtime_frontier(profile, stages, mbs)
    except BaseException as e:  # scipy's RuntimeError, lowtime's ValueError, a Rust panic
        if isinstance(e, KeyboardInterrupt):
            raise
        print(f"{label}: lowtime refused it ({type(e).__name__}: {str(e)[:120]}); not compared")
        return {"ok": True, "skipped": True}
    given = case / "lowtime_cost_models.json"
    given.write_text(json.dumps({k: {x: v[x] for x in "abc"} for k, v in models.items()}))
    native, native_seconds = native_frontier(zeus, profile, mbs, case / "given", given)
    if native is None:
        print(f"{label}: FAIL {native_seconds}")
        return {"ok": False}
    ours = native["points"][1:]  # lowtime never yields its starting point
    failures = []
    if len(ours) != len(points):
        failures.append(f"{len(ours)} native points (stopped: {native['stop_reason']}) vs {len(points)} lowtime points")
    knob_mismatches = 0
    for k, ((qt, cost, _), p) in enumerate(zip(points, ours)):
        if p["quant_time"] != qt:
            failures.append(f"point {k + 1}: quant_time {p['quant_time']} vs lowtime {qt}")
        elif abs(p["effective_energy"] - cost) > 1e-9 * abs(cost):
            failures.append(f"point {k + 1}: cost {p['effective_energy']!r} vs lowtime {cost!r}")
        sched = json.loads((case / "given" / p["schedule"]).read_text())
        if [[tuple(x) for x in s] for s in sched] != schedules[k]:
            knob_mismatches += 1
    if knob_mismatches:
        failures.append(f"{knob_mismatches} points whose knob plan differs from lowtime's")
    # The native fit of the same options against scipy's, over each option's quantized time.
    fitted, error = native_frontier(zeus, profile, mbs, case / "fitted", None)
    worst_fit = 0.0
    if fitted is None:
        failures.append(f"the native fit refused what scipy fits: {error}")
        models = {}
    for key, m in models.items():
        ours_m = fitted["cost_models"][key]
        for q in m["quant_times"]:
            ref = model_cost(m, q)
            worst_fit = max(worst_fit, abs(model_cost(ours_m, q) - ref) / max(abs(ref), 1e-12))
    if worst_fit > 1e-4:
        failures.append(f"native exponential fit differs from scipy's by {worst_fit:.3g} relative")
    print(f"{label}: {len(points)} points, worst fit difference {worst_fit:.2e}, "
          f"lowtime {lowtime_seconds:.3f} s, native {native_seconds:.3f} s")
    for f in failures[:10]:
        print(f"  FAIL {f}")
    return {"ok": not failures, "lowtime_s": lowtime_seconds, "native_s": native_seconds, "points": len(points)}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("zeus")
    parser.add_argument("work", type=Path)
    parser.add_argument("--sizes", default="2x3,3x6,4x8")
    parser.add_argument("--random", default="", metavar="SEEDS",
                        help="also random profiles (2-8 stages, A100/V100 clocks, noise, ties) from these seeds: 1-20,35")
    parser.add_argument("--max-microbatches", type=int, default=32, help="random cases draw 3..this many")
    args = parser.parse_args()
    ok = True
    for size in filter(None, args.sizes.split(",")):
        s, m = (int(x) for x in size.split("x"))
        ok &= check(args.zeus, args.work, s, m)["ok"]
    for part in filter(None, args.random.split(",")):
        lo, _, hi = part.partition("-")
        for seed in range(int(lo), int(hi or lo) + 1):
            ok &= check(args.zeus, args.work, 0, args.max_microbatches, random_seed=seed)["ok"]
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
