"""`zeus perseus solve` end to end with only the standard library: outputs are
consistent with each other and with the profile, and bad profiles are refused
with a message naming the problem.

Usage: perseus_cli_check.py ZEUS_BINARY WORK_DIR
"""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

STAGES, MBS, P2P = 3, 4, 70.0
FREQS = list(range(1980, 999, -30))


def profile_rows(stages: int = STAGES, freqs=FREQS, skip=None) -> list[str]:
    rows = ["stage,instruction,frequency,time,energy"]
    for s in range(stages):
        for inst, t0 in (("forward", 0.011 + 0.002 * s), ("backward", 0.022 + 0.001 * s)):
            for f in freqs:
                if skip == (s, inst, f):
                    continue
                t = t0 * 1980.0 / f
                rows.append(f"{s},{inst},{f},{t!r},{(75.0 + 230.0 * (f / 1980.0) ** 3) * t!r}")
    return rows


def solve(zeus: str, profile: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([zeus, "perseus", "solve", "--profile", str(profile), "--p2p-power", str(P2P),
                           "--microbatches", str(MBS), "--output-dir", str(out), *extra],
                          capture_output=True, text=True)


def main() -> int:
    zeus, work = sys.argv[1], Path(sys.argv[2])
    shutil.rmtree(work, ignore_errors=True)  # solve refuses a non-empty output directory
    work.mkdir(parents=True, exist_ok=True)
    failures: list[str] = []

    def expect(cond: bool, what: str) -> None:
        if not cond:
            failures.append(what)

    profile = work / "profile.csv"
    profile.write_text("\n".join(profile_rows()) + "\n")
    out = work / "out"
    proc = solve(zeus, profile, out)
    expect(proc.returncode == 0, f"solve failed: {proc.stderr}")
    if proc.returncode == 0:
        doc = json.loads((out / "frontier.json").read_text())
        points = doc["points"]
        expect(doc["stages"] == STAGES and doc["microbatches"] == MBS, "stages/microbatches echoed")
        expect(len(points) > 10, f"only {len(points)} points")
        expect(points[0]["schedule"] is None, "the start point has no schedule file (the original never writes it)")
        for i, p in enumerate(points):
            expect(p["quant_time"] == points[0]["quant_time"] - i, f"point {i} is not one quantum shorter")
            expect(abs(p["energy"] - (p["effective_energy"] + STAGES * p["time"] * P2P)) <= 1e-9 * p["energy"],
                   f"point {i}: energy != effective + S*T*P2P")
            if i:
                expect(p["effective_energy"] >= points[i - 1]["effective_energy"] - 1e-9, f"point {i}: cost went down")
                sched = json.loads((out / p["schedule"]).read_text())
                py = (out / f"freqs_pipeline_{i - 1:05d}.py").read_text()
                expect(ast.literal_eval(py.split("]\n#")[0] + "]") == [[tuple(x) for x in s] for s in sched],
                       f"point {i}: .py export differs from the JSON schedule")
                expect(f"# Iteration {i - 1} total cost: " in py, f"point {i}: .py export lacks its comment lines")
                expect(len(sched) == STAGES and all(len(s) == 2 * MBS for s in sched), f"point {i}: schedule shape")
                expect(all(f in FREQS for s in sched for _, f in s), f"point {i}: a frequency not in the profile")
        expect(not (out / f"freqs_pipeline_{len(points) - 1:05d}.py").exists(), "one export too many")
        ET.parse(out / "frontier.svg")  # well-formed

    # A profile saved by Excel or a Windows editor (UTF-8 byte-order mark, CRLF) is the same profile.
    windows = work / "windows.csv"
    windows.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(profile_rows()).encode() + b"\r\n")
    p = solve(zeus, windows, work / "windows-out", "--schedules", "0")
    expect(p.returncode == 0, f"BOM + CRLF profile refused: {p.stderr}")
    if p.returncode == 0 and proc.returncode == 0:
        expect(json.loads((work / "windows-out" / "frontier.json").read_text())["points"]
               == [dict(q, schedule=None) for q in json.loads((out / "frontier.json").read_text())["points"]],
               "BOM + CRLF profile: another frontier")

    # --schedules N: at most N points' files, spread out, the fastest always; 0: none.
    for cap in (3, 1, 0):
        capped = work / f"out-cap{cap}"
        p = solve(zeus, profile, capped, "--schedules", str(cap))
        expect(p.returncode == 0, f"--schedules {cap} failed: {p.stderr}")
        if p.returncode != 0:
            continue
        doc = json.loads((capped / "frontier.json").read_text())
        named = [i for i, q in enumerate(doc["points"]) if q["schedule"] is not None]
        files = sorted(x.name for x in capped.glob("schedule_*.json"))
        expect(files == sorted(doc["points"][i]["schedule"] for i in named), f"--schedules {cap}: files {files} vs {named}")
        expect(len(list(capped.glob("freqs_pipeline_*.py"))) == len(files), f"--schedules {cap}: one .py per JSON")
        expect(len(files) == cap, f"--schedules {cap}: wrote {len(files)}")
        if cap:
            expect(named[-1] == len(doc["points"]) - 1, f"--schedules {cap}: the fastest point is written")
        if cap == 3:
            expect(named[0] == 1, f"--schedules 3 starts at the slowest written point: {named}")
            expect((capped / doc["points"][named[1]]["schedule"]).read_bytes()
                   == (out / doc["points"][named[1]]["schedule"]).read_bytes(), "a capped schedule equals the full run's")

    def refused(name: str, rows: list[str], needle: str, *extra: str) -> None:
        bad = work / f"{name}.csv"
        bad.write_text("\n".join(rows) + ("\n" if rows else ""))
        p = solve(zeus, bad, work / f"{name}-out", *extra)
        expect(p.returncode == 2 and needle in p.stderr and "\n" == p.stderr[-1:],
               f"{name}: expected exit 2 naming '{needle}', got {p.returncode}: {p.stderr!r}")

    rows = profile_rows()
    refused("missing-stage", [r for r in rows if not r.startswith("1,")], "no forward rows for stage 1")
    refused("missing-frequency", profile_rows(skip=(2, "backward", 1500)), "stage 2 backward has no row at 1500 MHz")
    refused("duplicate", rows + [rows[5]], "duplicate row")
    refused("empty", [], "empty profile")
    refused("header-only", rows[:1], "no rows")
    refused("bad-number", rows[:3] + ["0,forward,1200,abc,3.0"] + rows[3:], "'time' is not a finite number")
    refused("missing-column", ["stage,instruction,frequency,time"] + [",".join(r.split(",")[:4]) for r in rows[1:]],
            "missing column 'energy'")
    refused("unknown-instruction", rows + ["0,sideways,1200,0.01,3.0"], "instruction must be 'forward' or 'backward'")
    # Three frequencies leave no degree of freedom for a*exp(b*t)+c.
    refused("too-few-options", profile_rows(freqs=[1980, 1500, 1000]), "3 frequencies profiled, too few")
    # Energy that rises as the instruction slows: nothing to trade.
    rising = ["stage,instruction,frequency,time,energy"] + [
        f"0,{inst},{f},{0.01 * 1980 / f!r},{1.0 + 50.0 * (1980 - f) / 1000 * 0.01 * 1980 / f + (1980 - f) ** 2 / 1e4!r}"
        for inst in ("forward", "backward") for f in FREQS]
    refused("rising-energy", rising, f"stage 0 forward: only 1 of {len(FREQS)} frequencies are Pareto-optimal")
    # A given cost model that rises with time is refused too.
    models = work / "rising-models.json"
    models.write_text(json.dumps({f"{s},{i}": {"a": 1.0, "b": 0.05, "c": 1.0}
                                  for s in range(STAGES) for i in ("forward", "backward")}))
    p = solve(zeus, profile, work / "rising-models-out", "--cost-models", str(models))
    expect(p.returncode == 2 and "energy rises as the instruction slows down" in p.stderr,
           f"rising cost model: {p.returncode} {p.stderr!r}")
    bad_models = work / "bad-models.json"
    bad_models.write_text('{"0,forward": {"a": 1}}')
    p = solve(zeus, profile, work / "bad-models-out", "--cost-models", str(bad_models))
    expect(p.returncode == 2 and "must be" in p.stderr, f"malformed cost models: {p.returncode} {p.stderr!r}")
    # The partial-frequency profile is accepted when asked.
    ok_partial = work / "partial.csv"
    ok_partial.write_text("\n".join(profile_rows(skip=(2, "backward", 1500))) + "\n")
    p = solve(zeus, ok_partial, work / "partial-out", "--allow-differing-frequencies")
    expect(p.returncode == 0, f"--allow-differing-frequencies refused: {p.stderr}")

    # A reused output directory is refused and left as it was.
    before = sorted(x.name for x in out.iterdir())
    p = solve(zeus, profile, out, "--schedules", "1")
    expect(p.returncode == 2 and "is not empty" in p.stderr and sorted(x.name for x in out.iterdir()) == before,
           f"reused --output-dir: {p.returncode} {p.stderr!r}")
    # Times the solver cannot quantise (3e6 s overflowed an int; 1e4 s took
    # 379 MB for one point) are refused with their line.
    for name, t in (("huge-time", 3e6), ("long-time", 1e4)):
        bad = list(rows)
        stage, inst, freq, _, energy = bad[7].split(",")
        bad[7] = f"{stage},{inst},{freq},{t!r},{energy}"
        refused(name, bad, "profile line 8: time")
    # Energies in microjoules get a message about units.
    micro = [rows[0]] + [",".join(r.split(",")[:4] + [repr(float(r.split(",")[4]) * 1e6)]) for r in rows[1:]]
    refused("microjoules", micro, "must be in joules")
    refused("duplicate-fix", rows + [rows[5]], "keep one measurement per (stage, instruction, frequency)")
    p = solve(zeus, profile, work / "unit-time-0", "--unit-time", "0")
    expect(p.returncode == 2 and "from 1e-09 to 1000" in p.stderr, f"--unit-time 0: {p.returncode} {p.stderr!r}")
    # Progress goes to stderr when asked (or on a terminal), never to stdout.
    p = solve(zeus, profile, work / "progress", "--progress", "--schedules", "0")
    expect(p.returncode == 0 and "ETA" in p.stderr and "frontier point" in p.stderr and p.stdout == "",
           f"--progress: {p.returncode} stdout {p.stdout!r} stderr {p.stderr!r}")
    p = solve(zeus, profile, work / "no-progress", "--schedules", "0")
    expect(p.returncode == 0 and "ETA" not in p.stderr, f"progress without a terminal: {p.stderr!r}")
    fit = json.loads((work / "no-progress" / "frontier.json").read_text())["cost_models"]
    expect(all(m.get("poor_fit") is False and m.get("rms_error", -1) >= 0 for m in fit.values()),
           f"the analytic profile's fits are rated good: {fit}")

    for f in failures:
        print("FAIL", f)
    print("OK" if not failures else f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
