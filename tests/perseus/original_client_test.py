"""The original Perseus client (Zeus 0.16.0 from PyPI,
zeus.optimizer.pipeline_frequency.PipelineFrequencyOptimizer, unchanged)
against `zeus perseus-server`, with ranks as processes or threads on the
simulator's GPUs: job registration and id, the blocking schedule (a rank's
GET /schedule returns only after the last rank asked), each rank's schedule
(PointSolution and PointSolution3D), the clocks the original frequency
controller locks from it, results and dumps, and bad input that gets a clear
error while the server keeps serving.

usage: original_client_test.py <zeus binary> processes|threads
       original_client_test.py --worker JSON   (one rank, as a process)
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "stand_ins"))  # torch, aiofiles, pandas: what the client imports but never needs


def run_rank(spec: dict) -> dict:
    """One training rank: register, fetch the schedule, run two steps, stop the controller."""
    import pynvml
    import torch.distributed as dist
    from zeus.optimizer.pipeline_frequency import PipelineFrequencyOptimizer

    dist.init_process_group(spec["rank"], spec["store"])
    time.sleep(spec.get("delay", 0))
    started = time.time()
    opt = PipelineFrequencyOptimizer(
        rank=spec["rank"], dp_rank=spec["dp_rank"], pp_rank=spec["pp_rank"], tp_rank=0,
        device_id=spec["rank"], dp_degree=spec["dp"], pp_degree=spec["pp"], tp_degree=1,
        world_size=spec["pp"] * spec["dp"], server_url=spec["url"], job_metadata="interop")
    scheduled = time.time()
    names = [name for name, _ in opt.freq_schedule]
    for _ in range(2):
        opt.on_step_begin()
        for name in names:
            opt.on_instruction_begin(name)
            opt.on_instruction_end(name)
        opt.on_step_end()
    # A wrong instruction is refused by the client, as the original's contract says.
    refused = ""
    try:
        opt.on_instruction_begin("optimizer_step")
    except RuntimeError as e:
        refused = str(e)
    # The controller (its own process) locks the clock of the last instruction;
    # an idle simulated GPU shows its locked minimum as its clock.
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(spec["rank"])
    want = opt.freq_schedule[-1][1]
    deadline = time.monotonic() + 20
    seen = None
    while time.monotonic() < deadline:
        seen = pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)
        if seen == want:
            break
        time.sleep(0.02)
    opt.frequency_controller.end()
    opt.frequency_controller._proc.join(timeout=20)
    restored = pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)
    return {"rank": spec["rank"], "job_id": opt.job_id, "schedule": [list(p) for p in opt.freq_schedule],
            "started": started, "scheduled": scheduled, "clock_seen": seen, "clock_restored": restored,
            "refused": refused}


if sys.argv[1] == "--worker":
    print(json.dumps(run_rank(json.loads(sys.argv[2]))))
    sys.exit(0)

ZEUS = os.path.abspath(sys.argv[1])
MODE = sys.argv[2]
assert MODE in ("processes", "threads"), MODE
WORK = Path(tempfile.mkdtemp(prefix="pfo-client-"))
os.environ["ZEUS_SIM_STATE"] = str(WORK / "sim-state")
(WORK / "sim.json").write_text(json.dumps({"seed": 42, "clock": "real", "gpus": [{"model": "A100-SXM4-40GB", "count": 4}]}))
os.environ["ZEUS_SIM_CONFIG"] = str(WORK / "sim.json")
for name in ("CUDA_VISIBLE_DEVICES", "ZEUSD_SOCK_PATH", "ZEUSD_HOST_PORT") + tuple(k for k in os.environ if k.startswith("ZEUS_PFO_")):
    os.environ.pop(name, None)

import httpx  # noqa: E402
import pynvml  # noqa: E402

sys.path.insert(0, str(HERE.parents[1] / "python" / "tests"))
from server_listening import wait_for_listening  # noqa: E402

pynvml.nvmlInit()
MIN_CLOCK = min(pynvml.nvmlDeviceGetSupportedGraphicsClocks(pynvml.nvmlDeviceGetHandleByIndex(0), max(
    pynvml.nvmlDeviceGetSupportedMemoryClocks(pynvml.nvmlDeviceGetHandleByIndex(0)))))

# Two stages, two microbatches, 1F1B; every frequency distinct and above the minimum.
SOLUTION = [
    [["forward", 1410], ["forward", 1395], ["backward", 1380], ["backward", 1365]],
    [["forward", 1200], ["backward", 1185], ["forward", 1170], ["backward", 1155]],
]
(WORK / "solution.json").write_text(json.dumps(SOLUTION))
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what, flush=True)


class Server:
    """`zeus perseus-server` on port 0, at the port it says it listens on."""

    def __init__(self, scheduler: str):
        self.dump = WORK / f"dump-{scheduler}"
        self.log = WORK / f"{scheduler}.log"
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [ZEUS, "perseus-server", "--listen", "127.0.0.1:0", "--scheduler", scheduler,
                 "--solution", str(WORK / "solution.json"), "--dump-dir", str(self.dump)], stderr=log)
        self.port = wait_for_listening(self.log, self.proc, "zeus perseus-server: listening on ").port
        self.url = f"http://127.0.0.1:{self.port}"

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)


def run_job(server: Server, pp: int, dp: int, late_rank: int) -> list[dict]:
    store = tempfile.mkdtemp(dir=WORK)
    specs = [{"rank": r, "pp_rank": r // dp, "dp_rank": r % dp, "pp": pp, "dp": dp, "url": server.url,
              "store": store, "delay": 1.5 if r == late_rank else 0} for r in range(pp * dp)]
    if MODE == "threads":
        results, errors = [None] * len(specs), []

        def thread(spec):
            try:
                results[spec["rank"]] = run_rank(spec)
            except BaseException as e:  # noqa: BLE001 -- reported below
                errors.append(f"rank {spec['rank']}: {e!r}")
        threads = [threading.Thread(target=thread, args=(s,)) for s in specs]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert not errors, errors
        return results
    procs = [subprocess.Popen([sys.executable, __file__, "--worker", json.dumps(s)], stdout=subprocess.PIPE)
             for s in specs]
    out = []
    for p in procs:
        stdout, _ = p.communicate(timeout=120)
        assert p.returncode == 0, f"a rank failed ({p.returncode})"
        out.append(json.loads(stdout.decode().strip().splitlines()[-1]))
    return out


def check_job(results: list[dict], stage_of, scheduler: str, dp: int, pp: int, late_rank: int):
    ids = {r["job_id"] for r in results}
    check(len(ids) == 1, f"every rank has the same job id: {ids}")
    job_id = ids.pop()
    check(re.fullmatch(rf"\d{{4}}-\d\d-\d\d-\d\d-\d\d-\d\d\+dp{dp}\+pp{pp}\+tp1\+{scheduler}\+interop", job_id),
          f"job id format: {job_id}")
    late_start = results[late_rank]["started"]
    for r in results:
        want = SOLUTION[stage_of(r["rank"])]
        check(r["schedule"] == want, f"{scheduler} rank {r['rank']}: schedule {r['schedule']} != {want}")
        # The barrier: nobody has a schedule before the late rank asked for one.
        check(r["scheduled"] >= late_start, f"rank {r['rank']} got its schedule before rank {late_rank} started")
        check(r["clock_seen"] == want[-1][1], f"rank {r['rank']}: clock {r['clock_seen']} never became {want[-1][1]}")
        check(r["clock_restored"] == MIN_CLOCK, f"rank {r['rank']}: clock {r['clock_restored']} not restored to idle {MIN_CLOCK}")
        check("next expected instruction" in r["refused"], f"wrong instruction refused: {r['refused']!r}")
    return job_id


point = Server("PointSolution")
three_d = Server("PointSolution3D")
try:
    # Pure pipeline: one schedule per rank.
    job = check_job(run_job(point, pp=2, dp=1, late_rank=1), lambda rank: rank, "PointSolution", 1, 2, 1)
    check(json.loads((point.dump / job / "ranks.json").read_text())[1]["pp_rank"] == 1, "ranks.json dumped")

    # 3-D: pp 2 x dp 2, the solution has one entry per stage.
    job3 = check_job(run_job(three_d, pp=2, dp=2, late_rank=0), lambda rank: rank // 2, "PointSolution3D", 2, 2, 0)
    # The client never reports results (the original's TODO); a profiler would POST them like this.
    for rank in range(4):
        body = {"rank": rank, "iter_time": [1.0 + rank], "iter_energy": [100.0 * (rank + 1)],
                "time_breakdown": {"forward": [[0.5]]}, "energy_breakdown": {"forward": [[50.0]]}}
        response = httpx.post(f"{three_d.url}/result/{job3}", json=body)
        check(response.status_code == 200 and response.json() is None, f"result {rank}: {response.text}")
    prof = json.loads((three_d.dump / job3 / "0.prof.json").read_text())
    check([p["iter_energy"] for p in prof] == [[100.0], [200.0], [300.0], [400.0]], f"0.prof.json: {prof}")
    sched = json.loads((three_d.dump / job3 / "0.sched.json").read_text())
    check([s["frequencies"] for s in sched] == [SOLUTION[r // 2] for r in range(4)], f"0.sched.json: {sched}")

    # Bad input: clear errors, and the server goes on.
    r = httpx.get(f"{point.url}/schedule/2020-01-01-00-00-00+dp1+pp2+tp1+PointSolution", params={"rank": 0})
    check(r.status_code == 404 and "unknown job id" in r.json()["detail"], f"unknown job: {r.status_code} {r.text}")
    r = httpx.post(f"{point.url}/register_job", json={"pp_degree": 3, "dp_degree": 1, "tp_degree": 1, "world_size": 3})
    check(r.status_code == 200, f"register a 3-stage job: {r.text}")
    wrong = r.json()
    r = httpx.post(f"{point.url}/register_rank/{wrong}",
                   json={"rank": 3, "dp_rank": 0, "pp_rank": 0, "tp_rank": 0, "available_frequencies": [1410]})
    check(r.status_code == 400 and "outside" in r.json()["detail"], f"rank outside the world: {r.status_code} {r.text}")
    for rank in range(3):
        r = httpx.post(f"{point.url}/register_rank/{wrong}",
                       json={"rank": rank, "dp_rank": 0, "pp_rank": rank, "tp_rank": 0, "available_frequencies": [1410]})
        check(r.status_code == 200, f"register rank {rank}: {r.text}")
    # The solution has 2 entries, this job 3 ranks: its schedules would have the wrong shape.
    r = httpx.get(f"{point.url}/schedule/{wrong}", params={"rank": 0}, timeout=30)
    check(r.status_code == 500 and "assumes 2 ranks, but the job has 3" in r.json()["detail"],
          f"wrong-size solution: {r.status_code} {r.text}")
    r = httpx.post(f"{point.url}/register_job", json={"pp_degree": 2, "dp_degree": 1, "tp_degree": 1, "world_size": 4})
    check(r.status_code == 422, f"world_size mismatch: {r.status_code} {r.text}")
    # ...and a new job still runs end to end.
    check_job(run_job(point, pp=2, dp=1, late_rank=0), lambda rank: rank, "PointSolution", 1, 2, 0)
    check(point.proc.poll() is None and three_d.proc.poll() is None, "servers still running")
finally:
    point.stop()
    three_d.stop()
    if not failures:
        shutil.rmtree(WORK, ignore_errors=True)

if failures:
    print(f"{len(failures)} check(s) failed; server logs in {WORK}")
    sys.exit(1)
print(f"original PFO client against zeus perseus-server ({MODE}): all checks passed")
