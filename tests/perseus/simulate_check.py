"""`zeus perseus simulate` end to end, checked against numbers this script
computes itself: each run's iteration time is the 1F1B critical path of its
instructions' durations (work / (clock / max clock), the simulator's rule),
so the all-max run must take the critical path of the plain work and the
Perseus run the critical path at the served clocks (which proves the client
really locked them); the Perseus run must save energy without slowing the
iteration, and agree with the solver's prediction.

usage: simulate_check.py <zeus binary>
"""
import json
import subprocess
import sys

ZEUS = sys.argv[1]
STAGES, MICROBATCHES, FORWARD, IMBALANCE = 3, 4, 0.02, 0.3
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what, flush=True)


def order(stage):
    """Synchronous 1F1B: warm-up forwards, one-forward-one-backward, drain."""
    warmup = min(STAGES - stage - 1, MICROBATCHES)
    out = [("forward", m) for m in range(warmup)]
    for i in range(MICROBATCHES - warmup):
        out += [("forward", warmup + i), ("backward", i)]
    out += [("backward", m) for m in range(MICROBATCHES - warmup, MICROBATCHES)]
    return out


def work(stage, kind):
    scale = 1 + IMBALANCE * stage / (STAGES - 1)
    return FORWARD * scale * (2 if kind == "backward" else 1)


def critical_path(duration):
    """Makespan of one iteration; duration(stage, position) in s."""
    finish, free, pos = {}, [0.0] * STAGES, [0] * STAGES
    orders = [order(s) for s in range(STAGES)]
    while any(pos[s] < len(orders[s]) for s in range(STAGES)):
        progressed = False
        for s in range(STAGES):
            while pos[s] < len(orders[s]):
                kind, m = orders[s][pos[s]]
                dep = (kind, s - 1, m) if kind == "forward" and s > 0 else (
                    (kind, s + 1, m) if kind == "backward" and s + 1 < STAGES else None)
                if dep is not None and dep not in finish:
                    break
                start = max(free[s], finish[dep] if dep else 0.0)
                free[s] = finish[(kind, s, m)] = start + duration(s, pos[s])
                pos[s] += 1
                progressed = True
        assert progressed, "deadlock in the test's own 1F1B"
    return max(free)


out = subprocess.run([ZEUS, "perseus", "simulate", "--stages", str(STAGES), "--microbatches", str(MICROBATCHES),
                      "--forward-units", str(FORWARD), "--imbalance", str(IMBALANCE), "--format", "json"],
                     capture_output=True, text=True, timeout=300)
assert out.returncode == 0, out.stderr
report = json.loads(out.stdout)
fmax = max(report["frequencies_mhz"])

schedule = report["schedule"]
check(len(schedule) == STAGES, f"one served schedule per stage: {len(schedule)}")
for s in range(STAGES):
    check([name for name, _ in schedule[s]] == [kind for kind, _ in order(s)], f"stage {s} runs 1F1B: {schedule[s]}")
    check(all(f in report["frequencies_mhz"] for _, f in schedule[s]), f"stage {s} clocks were profiled")
check(report["job_id"].endswith(f"+dp1+pp{STAGES}+tp1+PointSolution+simulated"), report["job_id"])

plain = critical_path(lambda s, i: work(s, order(s)[i][0]))
at_clocks = critical_path(lambda s, i: work(s, order(s)[i][0]) * fmax / schedule[s][i][1])
base, perseus = report["all_max_frequency"], report["perseus"]
check(abs(base["iteration_time_s"] - plain) <= 1e-6 * plain, f"all-max time {base['iteration_time_s']} != {plain}")
check(abs(perseus["iteration_time_s"] - at_clocks) <= 1e-6 * at_clocks,
      f"Perseus time {perseus['iteration_time_s']} != critical path at the served clocks {at_clocks}")
check(any(f != fmax for stage in schedule for _, f in stage), "some instruction runs below the maximum clock")
check(perseus["clock_changes_per_iteration"] > 0, "the clients changed clocks")
# No slowdown beyond the solver's time quantum (1 ms) per instruction on the critical path.
check(perseus["iteration_time_s"] <= base["iteration_time_s"] + 0.001 * 2 * (MICROBATCHES + STAGES - 1),
      f"Perseus slowed the iteration: {perseus['iteration_time_s']} vs {base['iteration_time_s']}")
check(perseus["iteration_energy_j"] < base["iteration_energy_j"],
      f"Perseus saves energy: {perseus['iteration_energy_j']} vs {base['iteration_energy_j']}")
predicted = report["predicted"]["iteration_energy_j"]
check(abs(perseus["iteration_energy_j"] - predicted) <= 0.05 * predicted,
      f"measured {perseus['iteration_energy_j']} J within 5 % of the solver's {predicted} J")

# Bad input: a clear error, no crash.
bad = subprocess.run([ZEUS, "perseus", "simulate", "--stages", "0"], capture_output=True, text=True, timeout=60)
check(bad.returncode != 0 and "--stages" in bad.stderr, f"--stages 0 refused: {bad.returncode} {bad.stderr!r}")

if failures:
    sys.exit(f"{len(failures)} check(s) failed")
print(f"perseus simulate: saves {100 * report['energy_saving']:.1f} % at {100 * report['slowdown']:+.2f} % time")
