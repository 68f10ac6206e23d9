"""The original batch-size optimizer client (Zeus 0.16.0 from PyPI,
zeus.optimizer.batch_size.client.BatchSizeOptimizer, unchanged) drives
`zeus bso-server` through a full recurring job, measured by the original
ZeusMonitor on the simulator's GPUs. Also: restarts (SIGTERM and kill -9)
keep every committed change, and bad input gets the original's status codes.

usage: original_client_test.py <zeus binary> [sqlite|postgresql]
"""
import atexit
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ZEUS = os.path.abspath(sys.argv[1])
# ZeusMonitor synchronises through torch; a two-function stand-in (see its docstring).
sys.path.insert(0, str(HERE / "fake_torch"))
sys.path.insert(0, str(HERE.parents[1] / "python" / "tests"))
WORK = Path(tempfile.mkdtemp(prefix="bso-client-"))
atexit.register(shutil.rmtree, WORK, True)
os.environ["ZEUS_SIM_STATE"] = str(WORK / "sim-state")
for name in ("ZEUS_SIM_CONFIG", "CUDA_VISIBLE_DEVICES", "ZEUS_BSO_DATABASE_URL"):
    os.environ.pop(name, None)

import httpx  # noqa: E402
from zeus.monitor import ZeusMonitor  # noqa: E402
from zeus.optimizer.batch_size.client import BatchSizeOptimizer  # noqa: E402
from zeus.optimizer.batch_size.common import JobSpec  # noqa: E402
from zeus.optimizer.batch_size.exceptions import ZeusBSOTrainFailError  # noqa: E402
from server_listening import wait_for_listening  # noqa: E402


class Server:
    """`zeus bso-server` on a port of its choosing (port 0, the port read from
    the line it prints); a restart comes back on the same port, as a real one
    does, so that clients made before it (a run in flight) reach it again."""

    def __init__(self, database: str):
        self.database = database
        self.port = 0
        self.url = ""
        self.proc = None

    def start(self):
        log = WORK / "server.log"
        start = log.stat().st_size if log.exists() else 0
        with open(log, "ab") as out:
            self.proc = subprocess.Popen(
                [ZEUS, "bso-server", "--database", self.database, "--listen", f"127.0.0.1:{self.port}"], stderr=out)
        self.port = wait_for_listening(log, self.proc, "zeus bso-server: listening on ", start=start).port
        self.url = f"http://127.0.0.1:{self.port}"

    def stop(self, sig=signal.SIGTERM):
        self.proc.send_signal(sig)
        self.proc.wait(timeout=30)


# Synthetic training: epochs to reach the target per batch size (None: never).
EPOCHS_TO_TARGET = {8: None, 16: 3, 32: 1, 64: 2, 128: 3, 256: None}
EPOCH_SECONDS = 0.06
MAX_EPOCHS = 4


def recurrence(server: Server, monitor: ZeusMonitor, job: JobSpec) -> tuple[int, bool]:
    """One training run of the recurring job; returns (batch size, converged)."""
    bso = BatchSizeOptimizer(monitor, server.url, job)
    bs = bso.get_batch_size()
    bso.on_train_begin()
    needed = EPOCHS_TO_TARGET[bs]
    for epoch in range(1, MAX_EPOCHS + 1):
        time.sleep(EPOCH_SECONDS)
        metric = 0.9 if needed is not None and epoch >= needed else 0.1
        try:
            bso.on_evaluate(metric)
        except ZeusBSOTrainFailError:
            return bs, False
        if bso.training_finished:
            return bs, True
    raise AssertionError(f"the server never stopped batch size {bs} within max_epochs")


def trials(server: Server, job_id: str):
    """The job's trials as the server stored them."""
    if server.database.startswith("postgres"):
        out = subprocess.check_output(["psql", server.database, "-At", "-F", "|", "-c",
                               f"SELECT trial_number, batch_size, type, status, time, energy, converged FROM bso_trial "
                               f"WHERE job_id = '{job_id}' ORDER BY trial_number"], text=True)
        rows = [line.split("|") for line in out.splitlines() if line]
    else:
        import sqlite3
        con = sqlite3.connect(server.database)
        rows = con.execute("SELECT trial_number, batch_size, type, status, time, energy, converged FROM bso_trial "
                           "WHERE job_id = ? ORDER BY trial_number", (job_id,)).fetchall()
        con.close()
    return [(int(r[0]), int(r[1]), r[2], r[3], None if r[4] in (None, "") else float(r[4]),
             None if r[5] in (None, "") else float(r[5]), None if r[6] in (None, "") else int(r[6])) for r in rows]


def arms(server: Server, job_id: str) -> dict[int, int]:
    if server.database.startswith("postgres"):
        out = subprocess.check_output(["psql", server.database, "-At", "-F", "|", "-c",
                                       f"SELECT batch_size, num_observations FROM bso_arm WHERE job_id = '{job_id}'"],
                                      text=True)
        return {int(a): int(b) for a, b in (line.split("|") for line in out.splitlines() if line)}
    import sqlite3
    con = sqlite3.connect(server.database)
    out = dict(con.execute("SELECT batch_size, num_observations FROM bso_arm WHERE job_id = ?", (job_id,)).fetchall())
    con.close()
    return out


def full_recurring_job(server: Server):
    # A one-epoch run is shorter than the simulated energy counter's update period.
    monitor = ZeusMonitor(gpu_indices=[0], approx_instant_energy=True)
    job = JobSpec(job_id="mnist-recurring", job_id_prefix="mnist", batch_sizes=[8, 16, 32, 64, 128, 256],
                  default_batch_size=128, max_epochs=MAX_EPOCHS, target_metric=0.5, beta_knob=None, mab_seed=7)
    seen = []
    # Round 1 walks down from the default until 8 fails, then up (256 fails);
    # round 2 starts from round 1's cheapest (32: one epoch) over the survivors.
    expected_pruning = [128, 64, 32, 16, 8, 256, 32, 16, 64, 128]
    for i, expected in enumerate(expected_pruning):
        if i == 6:
            server.stop()  # restart between recurrences: the job continues where it was
            server.start()
        bs, converged = recurrence(server, monitor, job)
        seen.append(bs)
        assert bs == expected, (seen, expected_pruning)
        assert converged == (EPOCHS_TO_TARGET[bs] is not None), (bs, converged)
    # The MAB stage over the four survivors; a kill -9 in the middle of a run.
    mab = []
    for i in range(6):
        if i == 3:
            bso = BatchSizeOptimizer(monitor, server.url, job)
            bs = bso.get_batch_size()
            bso.on_train_begin()
            server.stop(signal.SIGKILL)
            server.start()
            for epoch in range(1, MAX_EPOCHS + 1):
                time.sleep(EPOCH_SECONDS)
                bso.on_evaluate(0.9 if epoch >= EPOCHS_TO_TARGET[bs] else 0.1)
                if bso.training_finished:
                    break
            mab.append(bs)
            continue
        bs, converged = recurrence(server, monitor, job)
        assert converged, bs
        mab.append(bs)
    assert set(mab) <= {16, 32, 64, 128}, mab

    stored = trials(server, "mnist-recurring")
    assert [t[0] for t in stored] == list(range(1, len(stored) + 1)), "trial numbers are 1, 2, 3, ..."
    assert [t[1] for t in stored] == expected_pruning + mab, (stored, mab)
    for number, bs, kind, status, t, e, converged in stored:
        assert status == "Succeeded", (number, status)
        assert kind == ("Exploration" if number <= len(expected_pruning) else "MAB"), (number, kind)
        epochs = EPOCHS_TO_TARGET[bs] or MAX_EPOCHS
        # The client's cumulative time covers its epochs, never the HTTP calls in between.
        assert epochs * EPOCH_SECONDS <= t < epochs * EPOCH_SECONDS + 1.0, (number, t)
        assert e > 0, (number, e)
        assert converged == (EPOCHS_TO_TARGET[bs] is not None)
    # Each arm was fitted on its two explorations, then refitted on every MAB result.
    assert arms(server, "mnist-recurring") == {bs: 2 + mab.count(bs) for bs in (16, 32, 64, 128)}


def bad_input(server: Server):
    url = server.url
    r = httpx.post(url + "/jobs", content=b"{not json")
    assert r.status_code == 422, r.text
    r = httpx.get(url + "/jobs/batch_size", params={"job_id": "nobody"})
    assert r.status_code == 400 and "nobody" in r.json()["message"], r.text
    spec = {"job_id": "mnist-recurring", "job_id_prefix": "mnist", "batch_sizes": [8, 16], "default_batch_size": 8,
            "max_power": 300, "number_of_gpus": 1, "gpu_model": "x"}
    r = httpx.post(url + "/jobs", json=spec)
    assert r.status_code == 409 and "doesn't match" in r.json()["message"], r.text
    r = httpx.post(url + "/report", json={"job_id": "mnist-recurring", "batch_size": 128, "trial_number": 1,
                                          "time": 1, "energy": 1, "metric": 0, "current_epoch": 1})
    assert r.status_code == 200 and r.json()["stop_train"] and "already reported" in r.json()["message"], r.text
    r = httpx.patch(url + "/trials", json={"job_id": "mnist-recurring", "batch_size": 8, "trial_number": 999})
    assert r.status_code == 404, r.text


def kill_nine_loses_nothing_committed(server: Server):
    """Registrations race a kill -9: every 201 the clients saw is in the restarted server."""
    acknowledged, stop = [], threading.Event()

    def register(worker: int):
        n = 0
        with httpx.Client(timeout=5) as client:
            while not stop.is_set():
                job_id = f"race-{worker}-{n}"
                n += 1
                try:
                    r = client.post(server.url + "/jobs", json={
                        "job_id": job_id, "job_id_prefix": "race", "batch_sizes": [32], "default_batch_size": 32,
                        "max_power": 300, "number_of_gpus": 1, "gpu_model": "sim"})
                except httpx.HTTPError:
                    continue
                if r.status_code == 201:
                    acknowledged.append(job_id)
    threads = [threading.Thread(target=register, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    time.sleep(1.0)
    server.stop(signal.SIGKILL)
    stop.set()
    for t in threads:
        t.join()
    assert acknowledged, "no registration finished before the kill"
    server.start()
    with httpx.Client() as client:
        for job_id in acknowledged:
            r = client.get(server.url + "/jobs/batch_size", params={"job_id": job_id})
            assert r.status_code == 200, (job_id, r.text)


def unusable_databases():
    newer = WORK / "newer.db"
    import sqlite3
    server = Server(str(newer))
    server.start()
    server.stop()
    con = sqlite3.connect(newer)
    con.execute("INSERT INTO bso_schema_version VALUES (999)")
    con.commit()
    con.close()
    for database, words in ((str(newer), "newer"), (str(WORK / "no" / "such" / "dir.db"), "no/such")):
        r = subprocess.run([ZEUS, "bso-server", "--database", database, "--listen", "127.0.0.1:0"],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 2 and words in r.stderr, (r.returncode, r.stderr)


def free_port() -> int:
    """A loopback port free now, for PostgreSQL, which does not say which port it got on port 0."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def private_postgres() -> str:
    """initdb + pg_ctl start on a free loopback port (as nobody when root); stopped at exit."""
    bins = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))
    assert bins, "PostgreSQL server binaries not found (scripts/setup.sh installs postgresql)"
    bin_dir = bins[-1].parent
    as_user = ["runuser", "-u", "nobody", "--"] if os.geteuid() == 0 else []
    if os.geteuid() == 0:
        shutil.chown(WORK, "nobody")
    data, port = WORK / "pg", free_port()
    subprocess.run(as_user + [str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", "bso", "--no-sync"],
                   check=True, stdout=subprocess.DEVNULL)
    pg_ctl = as_user + [str(bin_dir / "pg_ctl"), "-D", str(data)]
    subprocess.run(pg_ctl + ["-w", "-l", str(WORK / "pg.log"), "-o",
                             f"-p {port} -k {WORK} -c listen_addresses=127.0.0.1 -c fsync=off", "start"],
                   check=True, stdout=subprocess.DEVNULL)
    atexit.register(subprocess.run, pg_ctl + ["-m", "immediate", "stop"], stdout=subprocess.DEVNULL)
    return f"postgresql://bso@127.0.0.1:{port}/postgres"


def main() -> int:
    backend = sys.argv[2] if len(sys.argv) > 2 else "sqlite"
    database = private_postgres() if backend == "postgresql" else str(WORK / "bso.db")
    server = Server(database)
    # atexit runs last-in first-out: the clients' own PATCH /trials handlers
    # (registered later) still reach the server before it stops.
    atexit.register(lambda: server.proc and server.proc.poll() is None and server.stop())
    server.start()
    full_recurring_job(server)
    bad_input(server)
    kill_nine_loses_nothing_committed(server)
    if not database.startswith("postgres"):
        unusable_databases()
    print("original BSO client against zeus bso-server: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
