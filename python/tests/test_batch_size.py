"""zeus_native.optimizer.batch_size against the repository's `zeus bso-server`
(build/bin/zeus), through recurring jobs on simulated GPUs: the batch sizes the
server's pruning must give, the time and energy stored per trial against the
simulator's ground truth, the original's exceptions, and the original's example
code (examples/batch_size_optimizer/mnist/train_single_gpu.py) with only its
imports changed."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from conftest import a100s, energy_bound
from server_listening import wait_for_listening

ZEUS = Path(os.environ.get("ZEUS_TEST_CLI", Path(__file__).resolve().parents[2] / "build" / "bin" / "zeus"))

EPOCH_S = 20.0  # virtual seconds of work per epoch


@pytest.fixture
def server(tmp_path):
    """`zeus bso-server` on a SQLite file; yields (url, database path)."""
    if not ZEUS.exists():
        pytest.skip(f"{ZEUS} is not built (scripts/build.sh builds it; or set ZEUS_TEST_CLI)")
    db = tmp_path / "bso.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZEUS_SIM") and k != "ZEUS_BSO_DATABASE_URL"}
    log = open(tmp_path / "bso-server.log", "wb")
    proc = subprocess.Popen([str(ZEUS), "bso-server", "--database", str(db), "--listen", "127.0.0.1:0",
                             "--threads", "1"], env=env, stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL)
    try:
        listening = wait_for_listening(tmp_path / "bso-server.log", proc, "zeus bso-server: listening on ", 20)
    except AssertionError:
        proc.kill()
        proc.wait()
        raise
    yield listening.url, db
    proc.terminate()
    proc.wait(timeout=20)
    log.close()


def _trials(db: Path, job_id: str) -> list[tuple]:
    with sqlite3.connect(db) as c:
        return c.execute("SELECT trial_number, batch_size, status, time, energy, converged FROM bso_trial "
                         "WHERE job_id = ? ORDER BY trial_number", (job_id,)).fetchall()


# The epoch at which each batch size reaches the target (None: never).
REACHES = {32: 3, 64: 2, 128: None}


def _train(sim, bso, batch_size: int, max_epochs: int) -> tuple[list[float], bool]:
    """One recurrence: EPOCH_S of full load per epoch; returns the true
    energies of the epochs and whether the server stopped it short of the
    target (ZeusBSOTrainFailError)."""
    from zeus_native.optimizer.batch_size.exceptions import ZeusBSOTrainFailError

    energies = []
    bso.on_train_begin()
    for epoch in range(1, max_epochs + 1):
        before = sim.truth(0)
        load = sim.load(0, 1.0)
        sim.advance(EPOCH_S)
        sim.unload(load)
        energies.append(sim.truth(0) - before)
        reached = REACHES[batch_size] is not None and epoch >= REACHES[batch_size]
        try:
            bso.on_evaluate(0.95 if reached else 0.1)
        except ZeusBSOTrainFailError:
            return energies, True
        if bso.training_finished:
            break
    return energies, False


def test_a_recurring_job_is_pruned_and_measured(sim, server):
    from zeus_native.monitor import ZeusMonitor
    from zeus_native.optimizer.batch_size import BatchSizeOptimizer, JobSpec

    url, db = server
    sim.start(a100s(1))
    monitor = ZeusMonitor(gpu_indices=[0])
    job = JobSpec(job_id="py-mnist", job_id_prefix="py", batch_sizes=[128, 32, 64], default_batch_size=64,
                  target_metric=0.9, max_epochs=4, beta_knob=None, mab_seed=7)
    chosen = []
    for recurrence in range(6):
        bso = BatchSizeOptimizer(monitor, url, job)
        assert bso.job.job_id == "py-mnist"
        assert bso.job.batch_sizes == [32, 64, 128]
        batch_size = bso.get_batch_size()
        assert bso.get_batch_size() == batch_size  # asked once per run
        chosen.append(batch_size)
        energies, failed = _train(sim, bso, batch_size, job.max_epochs)
        assert failed == (REACHES[batch_size] is None)
        assert bso.training_finished
        trial = _trials(db, "py-mnist")[-1]
        assert trial[1] == batch_size and trial[2] == "Succeeded"
        epochs = len(energies)
        assert epochs == (REACHES[batch_size] or job.max_epochs)
        # Cumulative time and energy of the epochs' windows (the HTTP calls
        # between them happen at a standing virtual clock).
        assert trial[3] == pytest.approx(epochs * EPOCH_S, rel=1e-6)
        assert abs(trial[4] - sum(energies)) <= epochs * energy_bound(sim, 0)
        assert bool(trial[5]) == (REACHES[batch_size] is not None)
        bso._close()
    # Pruning round 1: the default, down (32), up (128, never reaches); round 2
    # over the converged {32, 64}, from the cheaper (64: two epochs against
    # three) down; then Thompson sampling between the two.
    assert chosen[:3] == [64, 32, 128]
    assert chosen[3:5] == [64, 32]
    assert chosen[5] in (32, 64)
    # The server got GPU 0's maximum limit in whole W (gpu_config).
    with sqlite3.connect(db) as c:
        max_power, gpus, model = c.execute(
            "SELECT max_power, number_of_gpus, gpu_model FROM bso_job WHERE job_id = 'py-mnist'").fetchone()
    assert (max_power, gpus) == (400.0, 1)  # the A100 SXM4 preset's 400 W (docs/simulator.md)
    assert "A100" in model


def test_an_abandoned_run_leaves_a_failed_trial(sim, server):
    from zeus_native.monitor import ZeusMonitor
    from zeus_native.optimizer.batch_size import BatchSizeOptimizer, JobSpec

    url, db = server
    sim.start(a100s(1))
    monitor = ZeusMonitor(gpu_indices=[0])
    bso = BatchSizeOptimizer(monitor, url, JobSpec(job_id_prefix="gone", batch_sizes=[8, 16], default_batch_size=8))
    assert bso.job.job_id.startswith("gone-")
    assert bso.get_batch_size() == 8
    bso.on_train_begin()
    bso._close()  # what the interpreter's exit does (the original's atexit hook)
    assert _trials(db, bso.job.job_id)[-1][2] == "Failed"


def test_the_originals_errors(sim, server, tmp_path):
    from zeus_native.monitor import ZeusMonitor
    from zeus_native.optimizer.batch_size import BatchSizeOptimizer, JobSpec
    from zeus_native.optimizer.batch_size.exceptions import (
        ZeusBSOBadOperationError,
        ZeusBSOOperationOrderError,
        ZeusBSORuntimError,
    )

    url, db = server
    sim.start(a100s(1))
    monitor = ZeusMonitor(gpu_indices=[0])
    job = JobSpec(job_id="err-1", job_id_prefix="err", batch_sizes=[8, 16], default_batch_size=8)
    with pytest.raises(ZeusBSOBadOperationError, match="Only rank 0"):
        BatchSizeOptimizer(monitor, url, job, rank=1).get_batch_size()
    with pytest.raises(ZeusBSOOperationOrderError, match="get_batch_size"):
        BatchSizeOptimizer(monitor, url, job).on_evaluate(0.5)
    other = JobSpec(job_id="err-1", job_id_prefix="err", batch_sizes=[8, 32], default_batch_size=8)
    with pytest.raises(ZeusBSORuntimError, match="409"):
        BatchSizeOptimizer(monitor, url, other)
    with pytest.raises(ZeusBSORuntimError, match="127.0.0.1:9"):
        BatchSizeOptimizer(monitor, "http://127.0.0.1:9", job)
    for bad, says in [(dict(batch_sizes=[], default_batch_size=8), "empty"),
                      (dict(batch_sizes=[8], default_batch_size=16), "not in batch_sizes"),
                      (dict(batch_sizes=[8], default_batch_size=8, eta_knob=2), "eta_knob"),
                      (dict(batch_sizes=[8], default_batch_size=8, beta_knob=0), "beta_knob"),
                      (dict(batch_sizes=[8], default_batch_size=8, job_id="x-1"), "does not start with prefix")]:
        with pytest.raises(ValueError, match=says):
            JobSpec(job_id_prefix="err", **bad)


# What the server refuses with a 422 (src/bso/router.cpp) beyond the original's validators.
SERVER_REFUSES = [
    (dict(num_pruning_rounds=0), "num_pruning_rounds"),
    (dict(batch_sizes=[8, 16, 8]), "listed more than once"),
    (dict(mab_seed=-1), "mab_seed"),
    (dict(job_id_prefix="p" * 392), "job_id_prefix: ensure this value has at most 391 characters"),
    (dict(job_id_prefix="p", job_id="p" * 401), "job_id: ensure this value has at most 400 characters"),
    (dict(gpu_model="A" * 401), "gpu_model: ensure this value has at most 400 characters"),
]


def _spec(**override) -> dict:
    return {"job_id_prefix": "srv", "batch_sizes": [8, 16], "default_batch_size": 8, "max_power": 300.0,
            "number_of_gpus": 1, "gpu_model": "NVIDIA A100", **override}


def test_job_spec_refuses_what_the_server_refuses():
    from zeus_native.optimizer.batch_size.common import JobSpecFromClient

    JobSpecFromClient(**_spec(num_pruning_rounds=1, mab_seed=0, job_id_prefix="p" * 391, gpu_model="A" * 400))
    for bad, says in SERVER_REFUSES:
        with pytest.raises(ValueError, match=says):
            JobSpecFromClient(**_spec(**bad))


def test_the_server_agrees_with_job_spec(server):
    import json
    import urllib.error
    import urllib.request

    url, _ = server
    for body, status in [(_spec(num_pruning_rounds=1, mab_seed=0, job_id_prefix="p" * 391, gpu_model="A" * 400),
                          201)] + [(_spec(**bad), 422) for bad, _ in SERVER_REFUSES]:
        request = urllib.request.Request(url + "/jobs", json.dumps(body).encode(), method="POST",
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=10) as reply:
                got = reply.status
        except urllib.error.HTTPError as e:
            got = e.code
        assert got == status, (body, got)


ORIGINAL_EXAMPLE = '''
import os, sys
from zeus_native.monitor import ZeusMonitor
from zeus_native.optimizer.power_limit import GlobalPowerLimitOptimizer
from zeus_native.optimizer.batch_size import BatchSizeOptimizer, JobSpec
from zeus_native.utils.lr_scaler import LinearScaler

sys.path.insert(0, os.environ["CONFTEST_DIR"])
from conftest import Simulator
from pathlib import Path
sim = Simulator(Path(os.environ["SIM_DIR"]))
sim._call("zeusSimOpen")

# The Zeus part of examples/batch_size_optimizer/mnist/train_single_gpu.py, as written there.
monitor = ZeusMonitor(gpu_indices=[0])
plo = GlobalPowerLimitOptimizer(monitor)
bso = BatchSizeOptimizer(
    monitor=monitor,
    server_url=os.environ["ZEUS_SERVER_URL"],
    job=JobSpec(
        job_id=os.environ.get("ZEUS_JOB_ID", None),
        job_id_prefix="mnist-dev",
        default_batch_size=256,
        batch_sizes=[32, 64, 256, 512, 1024, 4096, 2048],
        max_epochs=2,
        target_metric=0.5,
    ),
)
batch_size = bso.get_batch_size()
print("Chosen batach_size:", batch_size)
lr = LinearScaler(bs=64, lr=0.01).compute_lr(new_bs=batch_size)
bso.on_train_begin()
for epoch in range(1, 3):
    plo.on_epoch_begin()
    for step in range(60):
        plo.on_step_begin()
        load = sim.load(0, 1.0); sim.advance(0.25); sim.unload(load)
        plo.on_step_end()
    plo.on_epoch_end()
    bso.on_evaluate(0.6 if epoch == 2 else 0.2)
print("finished", bso.training_finished, batch_size, lr)
'''


def test_the_originals_example_runs_with_the_import_changed(sim, server, tmp_path):
    url, db = server
    sim.start(a100s(1))
    script = tmp_path / "train_single_gpu.py"
    script.write_text(ORIGINAL_EXAMPLE)
    env = dict(os.environ, ZEUS_SERVER_URL=url, ZEUS_JOB_ID="mnist-dev-1", CONFTEST_DIR=str(Path(__file__).parent),
               SIM_DIR=str(tmp_path))
    run = subprocess.run([os.sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Chosen batach_size: 256" in run.stdout
    assert "finished True 256" in run.stdout
    trial = _trials(db, "mnist-dev-1")[-1]
    assert trial[1:3] == (256, "Succeeded") and trial[5] == 1
    assert trial[3] == pytest.approx(2 * 60 * 0.25, rel=1e-6)
