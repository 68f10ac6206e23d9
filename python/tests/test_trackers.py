"""zeus_native.integrations against the real trackers.

Each entry point, each script in its own process on the simulator with the
pinned trackers (scripts/setup-trackers.sh) layered after PyTorch and
transformers (scripts/setup-frameworks.sh) on its PYTHONPATH: a plain loop to a
real `mlflow server` on a loopback port (its own SQLite store and artifact
root; read back with MlflowClient) and to W&B offline (read back from the files
the offline run wrote), a real transformers Trainer and a real Lightning
Trainer on the CPU to both, and Ctrl-C in each.

These need the cached PyTorch and tracker environments, so the clean-root wheel
suite (scripts/test-wheel-suite.sh) leaves them out; scripts/run-tests.sh runs
them against the same wheel in the host's venv.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import a100s, wait_ready

REPO = Path(__file__).resolve().parents[2]
# Nothing but loopback: no usage reports from mlflow (its telemetry), transformers or the hub.
OFFLINE = {"MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "true", "HF_HUB_OFFLINE": "1",
           "HF_HUB_DISABLE_TELEMETRY": "1", "WANDB_MODE": "offline"}


def offline_env(pythonpath: str, **more: str) -> dict:
    """This process's environment offline, with `pythonpath`."""
    return {**os.environ, **OFFLINE, "PYTHONPATH": pythonpath, **more}


def test_importing_the_integrations_imports_no_tracker_or_framework(trackers):
    """Where every tracker and framework is installed, none is imported until used."""
    run = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import importlib.util, sys
        import zeus_native.integrations, zeus_native.integrations.mlflow, zeus_native.integrations.wandb
        import zeus_native.integrations.hf, zeus_native.integrations.lightning
        names = ("mlflow", "wandb", "lightning", "transformers", "torch")
        print(all(importlib.util.find_spec(m) for m in names), sorted(m for m in names if m in sys.modules))
    """)], capture_output=True, text=True, timeout=120, env=offline_env(trackers))
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "True []"


# ---------------------------------------------------------- real trackers


@pytest.fixture(scope="module")
def trackers() -> str:
    """PYTHONPATH for the scripts: PyTorch and transformers, then the trackers and Lightning."""
    paths = []
    for setup in ("setup-frameworks.sh", "setup-trackers.sh"):
        run = subprocess.run([str(REPO / "scripts" / setup)], capture_output=True, text=True, timeout=1800)
        if run.returncode != 0:
            pytest.fail(f"scripts/{setup} failed ({run.returncode}):\n{run.stderr}")
        paths.append(run.stdout.strip().splitlines()[-1])
    return os.pathsep.join(paths)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class MlflowServer:
    """`mlflow server` on a loopback port with its own SQLite store and artifact root."""

    def __init__(self, directory: Path, pythonpath: str) -> None:
        directory.mkdir()
        self.directory = directory
        self.log_path = directory / "server.log"
        env = offline_env(pythonpath)
        for _attempt in range(3):
            self.port = free_port()
            self.url = f"http://127.0.0.1:{self.port}"
            with open(self.log_path, "ab") as log:
                self.process = subprocess.Popen(
                    [sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(self.port),
                     "--workers", "1", "--backend-store-uri", f"sqlite:///{directory / 'mlflow.db'}",
                     "--default-artifact-root", str(directory / "artifacts")],
                    cwd=directory, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
            if wait_ready(self.process, self.url + "/health", 120, 0.2, 2):
                return
            self.stop()
        pytest.fail(f"mlflow server did not become ready; its log:\n{self.log_path.read_text()}")

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=3)  # a scratch store: nothing to keep
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


@pytest.fixture(scope="module")
def mlflow_server(trackers, tmp_path_factory):
    server = MlflowServer(tmp_path_factory.mktemp("mlflow") / "server", trackers)
    yield server
    server.stop()


def run_script(trackers: str, tmp_path: Path, source: str, env: dict | None = None, timeout: float = 300,
               expect: int = 0) -> subprocess.CompletedProcess:
    script = tmp_path / f"script-{time.monotonic_ns()}.py"
    script.write_text(textwrap.dedent(source))
    full_env = offline_env(trackers, TOKENIZERS_PARALLELISM="false", HF_HOME=str(tmp_path / "hf-home"),
                           WANDB_SILENT="true", WANDB_DIR=str(tmp_path), WANDB_CACHE_DIR=str(tmp_path / "wandb-cache"),
                           WANDB_CONFIG_DIR=str(tmp_path / "wandb-config"), MLFLOW_HTTP_REQUEST_MAX_RETRIES="0",
                           MLFLOW_HTTP_REQUEST_TIMEOUT="30")
    full_env.update(env or {})
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=full_env,
                         timeout=timeout, cwd=tmp_path)
    assert run.returncode == expect, f"exit code {run.returncode}\nstdout:\n{run.stdout}\nstderr:\n{run.stderr}"
    return run


def last_json(run: subprocess.CompletedProcess):
    """The last JSON line of the script's output (mlflow prints lines of its own)."""
    return json.loads([line for line in run.stdout.splitlines() if line.startswith(("{", "["))][-1])


MLFLOW_READER = """
    import json, sys
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=sys.argv[1])
    experiment = client.get_experiment_by_name(sys.argv[2])
    runs = client.search_runs([experiment.experiment_id]) if experiment else []
    out = []
    for run in runs:
        history = {key: [[m.step, m.value] for m in sorted(client.get_metric_history(run.info.run_id, key),
                                                          key=lambda m: m.step)]
                   for key in run.data.metrics}
        out.append({"status": run.info.status, "tags": run.data.tags, "metrics": history,
                    "name": run.info.run_name})
    print(json.dumps(out))
"""


def mlflow_runs(trackers: str, tmp_path: Path, url: str, experiment: str) -> list:
    """The runs of `experiment` on the server: status, tags and each metric's [step, value] history."""
    reader = tmp_path / "read_mlflow.py"
    reader.write_text(textwrap.dedent(MLFLOW_READER))
    run = subprocess.run([sys.executable, str(reader), url, experiment], capture_output=True, text=True,
                         timeout=120, env=offline_env(trackers))
    assert run.returncode == 0, run.stderr
    return last_json(run)


# The offline run's transaction log (run-<id>.wandb, what `wandb sync` uploads):
# LevelDB-log framing (a 7-byte header, 32 KiB blocks, records of 1 full or
# first/middle/last chunks) around wandb's own Record protobufs.
WANDB_READER = """
import json, struct, sys
from pathlib import Path
from wandb.proto import wandb_internal_pb2

def chunks(path):
    data = Path(path).read_bytes()
    assert data[:4] == b":W&B", data[:7]
    pos, pending = 7, b""
    while pos + 7 <= len(data):
        left = 32768 - pos % 32768
        if left < 7:
            pos += left
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos:pos + 7])
        pending += data[pos + 7:pos + 7 + length]
        pos += 7 + length
        if kind in (1, 4):
            yield pending
            pending = b""

def items(entries):
    return {e.key or "/".join(e.nested_key): json.loads(e.value_json) for e in entries}

history, summary, exit_code = [], {}, None
for data in chunks(next(Path(sys.argv[1]).glob("run-*.wandb"))):
    record = wandb_internal_pb2.Record()
    record.ParseFromString(data)
    kind = record.WhichOneof("record_type")
    if kind == "history":
        history.append(items(record.history.item))
    elif kind == "summary":
        summary.update(items(record.summary.update))
    elif kind == "exit":
        exit_code = record.exit.exit_code
print(json.dumps({"history": history, "summary": summary, "exit_code": exit_code}))
"""


def wandb_run(trackers: str, tmp_path: Path) -> dict:
    """The one offline run under tmp_path/wandb: its history rows, summary updates and exit code."""
    runs = sorted((tmp_path / "wandb").glob("offline-run-*"))
    assert len(runs) == 1, runs
    reader = tmp_path / "read_wandb.py"
    reader.write_text(WANDB_READER)
    run = subprocess.run([sys.executable, str(reader), str(runs[0])], capture_output=True, text=True, timeout=120,
                         env=offline_env(trackers))
    assert run.returncode == 0, run.stderr
    return last_json(run)


def window_rows(history: list, window: str) -> dict:
    """{step: row} of a window's rows in a W&B history (the run's total: step None)."""
    base = f"energy/{window}/"
    return {row.get(base + "step"): row for row in history if any(k.startswith(base) for k in row)}


def metric_values(history: dict, window: str, step) -> dict:
    """{quantity: value} of one MLflow window at `step` (from each metric's history)."""
    base = f"energy/{window}/"
    return {key[len(base):]: dict((s, v) for s, v in points)[step]
            for key, points in history.items() if key.startswith(base)}


SIM_TRUTH = """
    import ctypes, os
    import zeus_native
    _sim = ctypes.CDLL(os.path.join(os.path.dirname(zeus_native.__file__), "zeus-sim", "libnvidia-ml.so.1"))
    def truth(gpu):
        j = ctypes.c_double()
        assert _sim.zeusSimGroundTruthEnergy(ctypes.c_uint(gpu), ctypes.byref(j)) == 0
        return j.value
    def advance(seconds):  # the simulator's virtual clock: the trackers' own time is not in any window
        assert _sim.zeusSimAdvance(ctypes.c_double(seconds)) == 0
"""

PLAIN_LOOP = SIM_TRUTH + """
    import json, sys, time
    {imports}

    out = {{"epochs": {{}}}}
    energy = {logger}  # opens the simulator, which truth() then reads
    run_start = truth(0)
    with energy:
        for epoch in range(3):
            before = truth(0)
            with energy.window("epoch", step=epoch):
                advance(5.0)
            out["epochs"][epoch] = truth(0) - before
    out["run"] = truth(0) - run_start
    print(json.dumps(out))
"""


def test_plain_loop_to_a_real_mlflow_server(trackers, mlflow_server, sim, tmp_path):
    sim.start(a100s(2))
    run = run_script(trackers, tmp_path, PLAIN_LOOP.format(
        imports="import mlflow\n    from zeus_native.integrations.mlflow import MLflowEnergyLogger\n"
                "    mlflow.start_run(run_name='plain-loop')",
        logger="MLflowEnergyLogger(gpu_indices=[0, 1])"),
        env={"MLFLOW_TRACKING_URI": mlflow_server.url, "MLFLOW_EXPERIMENT_NAME": "plain-loop"})
    truth = last_json(run)
    (logged,) = mlflow_runs(trackers, tmp_path, mlflow_server.url, "plain-loop")
    for epoch in range(3):
        values = metric_values(logged["metrics"], "epoch", epoch)
        assert abs(values["gpu0_j"] - truth["epochs"][str(epoch)]) <= 20.002, (epoch, values, truth)
        assert values["gpu_total_j"] == pytest.approx(values["gpu0_j"] + values["gpu1_j"], rel=1e-12)
        assert values["time_s"] == pytest.approx(5.0, abs=1e-3)
    total = metric_values(logged["metrics"], "run", 0)
    assert abs(total["gpu0_j"] - truth["run"]) <= 20.002
    epochs_sum = sum(metric_values(logged["metrics"], "epoch", e)["gpu0_j"] for e in range(3))
    assert total["gpu0_j"] >= epochs_sum - 20.002  # the run's window holds the three epochs
    for window in ("epoch", "run"):
        provenance = json.loads(logged["tags"][f"zeus.energy.provenance.{window}"])
        assert provenance["window"] == window and provenance["interrupted"] is False
        assert provenance["measured_by"].startswith("zeus_native ")
        assert set(provenance["devices"]["gpu"]) == {"0", "1"}
        assert provenance["devices"]["gpu"]["0"]["source"]
    assert json.loads(logged["tags"]["zeus.energy.provenance.epoch"])["step"] == 2
    # The user's own run: the logger logged into it and left it to the user (ended by mlflow at exit).
    assert logged["status"] == "FINISHED"


def test_a_logger_used_twice_makes_two_mlflow_runs(trackers, mlflow_server, sim, tmp_path):
    """Without a run of the user's, each start() begins a run and close() ends it: a second
    train() with the same callback (after the first stopped on a caught exception) is a new run."""
    sim.start(a100s(1))
    run_script(trackers, tmp_path, SIM_TRUTH + """
    from zeus_native.integrations.mlflow import MLflowEnergyLogger

    energy = MLflowEnergyLogger(gpu_indices=[0])
    for seconds in (3.0, 7.0):
        with energy:
            advance(seconds)
    """, env={"MLFLOW_TRACKING_URI": mlflow_server.url, "MLFLOW_EXPERIMENT_NAME": "twice"})
    runs = mlflow_runs(trackers, tmp_path, mlflow_server.url, "twice")
    assert sorted(round(metric_values(r["metrics"], "run", 0)["time_s"]) for r in runs) == [3, 7]
    assert [r["status"] for r in runs] == ["FINISHED", "FINISHED"]


def test_plain_loop_to_wandb_offline(trackers, sim, tmp_path):
    sim.start(a100s(1))
    run = run_script(trackers, tmp_path, PLAIN_LOOP.format(
        imports="from zeus_native.integrations.wandb import WandbEnergyLogger",
        logger="WandbEnergyLogger(gpu_indices=[0], project='zeus-energy')"))
    truth = last_json(run)
    logged = wandb_run(trackers, tmp_path)
    epochs = window_rows(logged["history"], "epoch")
    assert sorted(epochs) == [0, 1, 2]
    for epoch, row in epochs.items():
        assert abs(row["energy/epoch/gpu0_j"] - truth["epochs"][str(epoch)]) <= 20.002, (row, truth)
        assert row["energy/epoch/total_j"] == row["energy/epoch/gpu0_j"]
    (total,) = window_rows(logged["history"], "run").values()
    assert abs(total["energy/run/gpu0_j"] - truth["run"]) <= 20.002
    summary = logged["summary"]
    assert summary["energy/run/gpu0_j"] == total["energy/run/gpu0_j"]  # the totals in the summary too
    assert summary["energy/run/provenance"]["interrupted"] is False
    assert summary["energy/epoch/provenance"]["step"] == 2
    assert summary["energy/run/provenance"]["devices"]["gpu"]["0"]["source"]
    assert logged["exit_code"] == 0  # the run the logger began, finished by it


def truth_callback(base: str, train_begin: str, epoch_begin: str, epoch_end: str, train_end: str) -> str:
    """A framework callback class `Truth` (after the energy callback in the list: each
    read just inside its window) that keeps the simulator's ground truth in `truths`."""
    return SIM_TRUTH + f"""
    truths = {{"epochs": [], "run": None}}
    class Truth({base}):
        def {train_begin}(self, *args, **kwargs):
            self.run_start = truth(0)
        def {epoch_begin}(self, *args, **kwargs):
            self.epoch_start = truth(0)
        def {epoch_end}(self, *args, **kwargs):
            truths["epochs"].append(truth(0) - self.epoch_start)
        def {train_end}(self, *args, **kwargs):
            truths["run"] = truth(0) - self.run_start
"""

HF_TRAINER = """
    import json, os, signal
    import torch
    from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainerCallback, TrainingArguments
    from zeus_native.integrations.hf import HFEnergyCallback
    from zeus_native.integrations.mlflow import MLflowTracker
    from zeus_native.integrations.wandb import WandbTracker
""" + truth_callback("TrainerCallback", "on_train_begin", "on_epoch_begin", "on_epoch_end", "on_train_end") + """
    torch.manual_seed(0)
    config = BertConfig(vocab_size=64, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=32, num_labels=2)
    model = BertForSequenceClassification(config)
    dataset = [{"input_ids": torch.randint(0, 64, (16,)), "attention_mask": torch.ones(16, dtype=torch.long),
                "labels": torch.tensor(i % 2)} for i in range(64)]  # 8 steps per epoch at batch size 8
    args = TrainingArguments(output_dir="out", num_train_epochs=3, per_device_train_batch_size=8, use_cpu=True,
                             report_to="none", save_strategy="no", logging_strategy="no", disable_tqdm=True)
    class Steps(TrainerCallback):
        def on_step_end(self, *args, **kwargs):
            advance(0.5)
            if @INTERRUPT@:
                os.kill(os.getpid(), signal.SIGINT)

    energy = HFEnergyCallback(MLflowTracker(), WandbTracker(project="zeus-energy"), gpu_indices=[0])
    trainer = Trainer(model=model, args=args, train_dataset=dataset, callbacks=[energy, Truth(), Steps()])
    try:
        trainer.train()
    finally:
        print(json.dumps(truths), flush=True)
"""


def check_tracked_epochs(trackers, tmp_path, url, experiment, truths, epochs, interrupted=False):
    """Both trackers got each epoch (step: its index) and the run's total, as measured
    (within the counter bound of ground truth), with provenance; an interrupted run
    is marked so and its runs ended as failed."""
    (logged,) = mlflow_runs(trackers, tmp_path, url, experiment)
    offline = wandb_run(trackers, tmp_path)
    rows = window_rows(offline["history"], "epoch")
    assert sorted(rows) == list(range(epochs)), rows
    for epoch in range(epochs):
        values = metric_values(logged["metrics"], "epoch", epoch)
        assert values["gpu0_j"] == rows[epoch]["energy/epoch/gpu0_j"]  # the same record in both
        if epoch < len(truths["epochs"]):
            assert abs(values["gpu0_j"] - truths["epochs"][epoch]) <= 20.002, (epoch, values, truths)
    total = metric_values(logged["metrics"], "run", 0)
    (total_row,) = window_rows(offline["history"], "run").values()
    assert total["gpu0_j"] == total_row["energy/run/gpu0_j"] == offline["summary"]["energy/run/gpu0_j"]
    assert total["gpu0_j"] >= sum(metric_values(logged["metrics"], "epoch", e)["gpu0_j"] for e in range(epochs))
    if truths["run"] is not None:
        assert abs(total["gpu0_j"] - truths["run"]) <= 20.002
    run_provenance = json.loads(logged["tags"]["zeus.energy.provenance.run"])
    assert run_provenance["interrupted"] is interrupted
    assert offline["summary"]["energy/run/provenance"]["interrupted"] is interrupted
    assert offline["summary"]["energy/epoch/provenance"]["step"] == epochs - 1
    assert offline["summary"]["energy/epoch/provenance"]["interrupted"] is interrupted
    assert logged["status"] == ("KILLED" if interrupted else "FINISHED")
    assert offline["exit_code"] == (1 if interrupted else 0)


LIGHTNING = """
    import json, os, signal
    import torch
    import lightning.pytorch as pl
    from zeus_native.integrations.lightning import LightningEnergyCallback
    from zeus_native.integrations.mlflow import MLflowTracker
    from zeus_native.integrations.wandb import WandbTracker
""" + truth_callback("pl.Callback", "on_train_start", "on_train_epoch_start", "on_train_epoch_end",
                    "on_train_end") + """
    class Regression(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(16, 1)
        def training_step(self, batch, batch_index):
            x, y = batch
            advance(0.5)
            if @INTERRUPT@:
                os.kill(os.getpid(), signal.SIGINT)
            return torch.nn.functional.mse_loss(self.layer(x), y)
        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.01)

    # PyTorch counts GPUs through NVML: here the simulator's library, which zeus_native
    # loaded under NVML's name; this CPU-only PyTorch has no driver for them.
    torch.cuda.is_available = lambda: False
    torch.manual_seed(0)
    data = torch.utils.data.TensorDataset(torch.randn(64, 16), torch.randn(64, 1))
    loader = torch.utils.data.DataLoader(data, batch_size=8)
    energy = LightningEnergyCallback(MLflowTracker(), WandbTracker(project="zeus-energy"), gpu_indices=[0])
    trainer = pl.Trainer(max_epochs=3, accelerator="cpu", devices=1, logger=False, enable_checkpointing=False,
                         enable_progress_bar=False, enable_model_summary=False, callbacks=[energy, Truth()])
    try:
        trainer.fit(Regression(), loader)
    finally:
        print(json.dumps(truths), flush=True)
"""


# Each framework's script, what makes it press Ctrl-C (a real SIGINT: in the
# second epoch's first step for the Trainer, its third for Lightning), and its
# exit status then: Python's for the Trainer, which lets KeyboardInterrupt out;
# 1 for Lightning, which catches it, calls the callbacks' on_exception and exits
# (lightning/pytorch/trainer/call.py).
FRAMEWORKS = {
    "hf": (HF_TRAINER, "len(truths['epochs']) == 1", -signal.SIGINT),
    "lightning": (LIGHTNING, "self.current_epoch == 1 and batch_index == 2", 1),
}


@pytest.mark.parametrize("ctrl_c", [False, True], ids=["complete", "ctrl-c"])
@pytest.mark.parametrize("framework", sorted(FRAMEWORKS))
def test_framework_callback_to_mlflow_and_wandb(framework, ctrl_c, trackers, mlflow_server, sim, tmp_path):
    """Three epochs, or Ctrl-C in the second: the Trainer calls no callback then, so
    what was measured is logged at exit; Lightning calls on_exception."""
    sim.start(a100s(1))
    script, press_ctrl_c, status = FRAMEWORKS[framework]
    experiment = f"{framework}-{'ctrl-c' if ctrl_c else 'complete'}"
    run = run_script(trackers, tmp_path, script.replace("@INTERRUPT@", press_ctrl_c if ctrl_c else "False"),
                     env={"MLFLOW_TRACKING_URI": mlflow_server.url, "MLFLOW_EXPERIMENT_NAME": experiment},
                     expect=status if ctrl_c else 0)
    truths = last_json(run)
    assert len(truths["epochs"]) == (1 if ctrl_c else 3) and (truths["run"] is None) == ctrl_c, truths
    check_tracked_epochs(trackers, tmp_path, mlflow_server.url, experiment, truths, epochs=2 if ctrl_c else 3,
                         interrupted=ctrl_c)


def test_hf_trainer_reporting_to_mlflow_and_wandb_itself(trackers, mlflow_server, sim, tmp_path):
    """With the Trainer's own MLflow and W&B callbacks, the energy goes into their runs."""
    sim.start(a100s(1))
    script = HF_TRAINER.replace("@INTERRUPT@", "False").replace('report_to="none"', 'report_to=["mlflow", "wandb"]')
    run = run_script(trackers, tmp_path, script,
                     env={"MLFLOW_TRACKING_URI": mlflow_server.url, "MLFLOW_EXPERIMENT_NAME": "hf-report-to"})
    truths = last_json(run)
    (logged,) = mlflow_runs(trackers, tmp_path, mlflow_server.url, "hf-report-to")
    assert any(key.startswith("train_") for key in logged["metrics"]), logged  # the Trainer's run (train_loss...)
    check_tracked_epochs(trackers, tmp_path, mlflow_server.url, "hf-report-to", truths, epochs=3)


def test_ctrl_c_in_a_plain_loop_logs_to_mlflow_and_wandb(trackers, mlflow_server, sim, tmp_path):
    sim.start(a100s(1))
    run = run_script(trackers, tmp_path, SIM_TRUTH + """
    import json, os, signal, time
    from zeus_native.integrations import EnergyLogger
    from zeus_native.integrations.mlflow import MLflowTracker
    from zeus_native.integrations.wandb import WandbTracker

    truths = {"epochs": [], "run": None}
    with EnergyLogger(MLflowTracker(), WandbTracker(project="zeus-energy"), gpu_indices=[0]) as energy:
        for epoch in range(3):
            before = truth(0)
            with energy.window("epoch", step=epoch):
                advance(2.0)
                if epoch == 1:
                    print(json.dumps(truths), flush=True)
                    os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C
                    time.sleep(10)
            truths["epochs"].append(truth(0) - before)
    """, env={"MLFLOW_TRACKING_URI": mlflow_server.url, "MLFLOW_EXPERIMENT_NAME": "plain-ctrl-c"},
        expect=-signal.SIGINT)
    assert "KeyboardInterrupt" in run.stderr
    truths = last_json(run)
    check_tracked_epochs(trackers, tmp_path, mlflow_server.url, "plain-ctrl-c", truths, epochs=2, interrupted=True)


def test_an_unreachable_tracking_server_is_a_warning_and_the_loop_runs(trackers, sim, tmp_path):
    sim.start(a100s(1))
    run = run_script(trackers, tmp_path, SIM_TRUTH + """
    import warnings
    from zeus_native.integrations.mlflow import MLflowEnergyLogger

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with MLflowEnergyLogger(tracking_uri="http://127.0.0.1:@PORT@", gpu_indices=[0]) as energy:
            for epoch in range(2):
                with energy.window("epoch", step=epoch):
                    advance(1.0)
    for w in caught:
        print(f"{w.category.__name__}: {str(w.message).splitlines()[0]}")
    print("trained")
""".replace("@PORT@", str(free_port())))
    assert run.stdout.splitlines()[-1] == "trained"
    failures = [line for line in run.stdout.splitlines() if line.startswith("RuntimeWarning: zeus_native: MLflow")]
    assert failures and all("energy not logged there" in line for line in failures), run.stdout
