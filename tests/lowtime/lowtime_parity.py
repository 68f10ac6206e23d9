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
import resource
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
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"FAIL: {' '.join(cmd)} exited {proc.returncode}: {proc.stderr}")
    return json.loads((out / "frontier.json").read_text()), elapsed


def model_cost(m: dict, q: int) -> float:
    return m["a"] * math.exp(m["b"] * q) + m["c"]


def check(zeus: str, work: Path, stages: int, mbs: int) -> dict:
    case = work / f"{stages}x{mbs}"
    case.mkdir(parents=True, exist_ok=True)
    profile = case / "profile.csv"
    write_profile(profile, stages)
    points, schedules, models, lowtime_seconds = lowtime_frontier(profile, stages, mbs)
    given = case / "lowtime_cost_models.json"
    given.write_text(json.dumps({k: {x: v[x] for x in "abc"} for k, v in models.items()}))
    native, native_seconds = native_frontier(zeus, profile, mbs, case / "given", given)
    ours = native["points"][1:]  # lowtime never yields its starting point
    failures = []
    if len(ours) != len(points):
        failures.append(f"{len(ours)} native points vs {len(points)} lowtime points")
    knob_mismatches = 0
    for k, ((qt, cost, _), p) in enumerate(zip(points, ours)):
        if p["quant_time"] != qt:
            failures.append(f"point {k + 1}: quant_time {p['quant_time']} vs lowtime {qt}")
        elif abs(p["effective_energy"] - cost) > 1e-9 * abs(cost):
            failures.append(f"point {k + 1}: cost {p['effective_energy']!r} vs lowtime {cost!r}")
        sched = json.loads((case / "given" / p["schedule"]).read_text())
        if [[tuple(x) for x in s] for s in sched] != schedules[k]:
            knob_mismatches += 1  # ties between equal-cost cuts may differ (optimizers.md §4.3)
    # The native fit of the same options against scipy's, over each option's quantized time.
    fitted, _ = native_frontier(zeus, profile, mbs, case / "fitted", None)
    worst_fit = 0.0
    for key, m in models.items():
        ours_m = fitted["cost_models"][key]
        for q in m["quant_times"]:
            ref = model_cost(m, q)
            worst_fit = max(worst_fit, abs(model_cost(ours_m, q) - ref) / max(abs(ref), 1e-12))
    if worst_fit > 1e-4:
        failures.append(f"native exponential fit differs from scipy's by {worst_fit:.3g} relative")
    print(f"{stages}x{mbs}: {len(points)} points, knob-plan differences {knob_mismatches}, "
          f"worst fit difference {worst_fit:.2e}, lowtime {lowtime_seconds:.3f} s, native {native_seconds:.3f} s")
    for f in failures[:10]:
        print(f"  FAIL {f}")
    return {"ok": not failures, "lowtime_s": lowtime_seconds, "native_s": native_seconds, "points": len(points)}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("zeus")
    parser.add_argument("work", type=Path)
    parser.add_argument("--sizes", default="2x3,3x6,4x8")
    args = parser.parse_args()
    ok = True
    for size in args.sizes.split(","):
        s, m = (int(x) for x in size.split("x"))
        ok &= check(args.zeus, args.work, s, m)["ok"]
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
