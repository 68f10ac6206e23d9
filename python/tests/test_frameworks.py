"""Acceptance with real PyTorch, transformers and accelerate (issue 22): the seed's
snippets, a real transformers.Trainer with HFGlobalPowerLimitOptimizer(ZeusMonitor())
and the optimizer loop with 8-step epochs, each in its own Python process on the
simulator, each running to a clean exit (code 0).

The frameworks live outside the clone and the main .venv (the PyPI torch wheel
brings ~3 GB of CUDA libraries): scripts/setup-frameworks.sh installs them once
per pinned set and prints their directory, which goes on these processes'
PYTHONPATH only. On this machine torch finds no NVIDIA driver, so it is the
CPU-only PyTorch case of the issue: training runs on the CPU while the
simulator's GPUs are measured and power-limited.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import a100s

REPO = Path(__file__).resolve().parents[2]
SETUP = REPO / "scripts" / "setup-frameworks.sh"


@pytest.fixture(scope="module")
def frameworks() -> str:
    """The frameworks' directory (installed now if this pinned set is not yet)."""
    run = subprocess.run([str(SETUP)], capture_output=True, text=True, timeout=1800)
    if run.returncode != 0:
        pytest.fail(f"{SETUP} failed ({run.returncode}):\n{run.stderr}")
    return run.stdout.strip().splitlines()[-1]


def run_script(frameworks: str, tmp_path: Path, source: str, timeout: float = 300) -> subprocess.CompletedProcess:
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(source))
    env = dict(os.environ)
    env["PYTHONPATH"] = frameworks
    env["TOKENIZERS_PARALLELISM"] = "false"
    env["HF_HUB_OFFLINE"] = "1"  # a model built from a config: nothing to download
    env["HF_HOME"] = str(tmp_path / "hf-home")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=timeout,
                         cwd=tmp_path)
    assert run.returncode == 0, f"exit code {run.returncode}\nstdout:\n{run.stdout}\nstderr:\n{run.stderr}"
    assert "Exception ignored" not in run.stderr, run.stderr
    return run


def test_the_frameworks_are_real_and_torch_reaches_no_gpu(frameworks, sim, tmp_path):
    sim.start(a100s(1))
    run = run_script(frameworks, tmp_path, """
        import accelerate, torch, transformers
        print(torch.__version__, transformers.__version__, accelerate.__version__, torch.cuda.is_available())
    """)
    torch_version, transformers_version, accelerate_version, cuda = run.stdout.split()
    assert (f"torch=={torch_version.split('+')[0]}" in SETUP.read_text()
            and f"transformers=={transformers_version}" in SETUP.read_text()
            and f"accelerate=={accelerate_version}" in SETUP.read_text()), run.stdout
    assert cuda == "False"


def test_seed_snippets_with_real_torch_training(frameworks, sim, tmp_path):
    """README's window snippet around the blog's training loop, and the PowerMonitor
    snippet, changed only in their imports; the window's energy is within the
    counter bound of the simulator's ground truth."""
    sim.start(a100s(4, clock="real"))
    run = run_script(frameworks, tmp_path, """
        import ctypes, json, os, sys, time
        import torch
        from zeus_native.monitor import PowerMonitor, ZeusMonitor

        sim = ctypes.CDLL(os.path.join(os.path.dirname(__import__("zeus_native").__file__),
                                       "zeus-sim", "libnvidia-ml.so.1"))
        def truth(gpu):
            j = ctypes.c_double()
            assert sim.zeusSimGroundTruthEnergy(ctypes.c_uint(gpu), ctypes.byref(j)) == 0
            return j.value

        model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
        criterion = torch.nn.MSELoss()
        optim = torch.optim.SGD(model.parameters(), lr=0.01)
        data = torch.utils.data.TensorDataset(torch.randn(256, 32), torch.randn(256, 1))
        train_dataloader = torch.utils.data.DataLoader(data, batch_size=32)

        # All four GPUs are measured simultaneously.
        monitor = ZeusMonitor(gpu_indices=[0,1,2,3])
        before = [truth(g) for g in range(4)]
        monitor.begin_window("training")
        for e in range(3):
            monitor.begin_window("epoch")
            for x, y in train_dataloader:
                y_hat = model(x)
                loss = criterion(y, y_hat)
                loss.backward()
                optim.step()
            time.sleep(0.3)
            measurement = monitor.end_window("epoch")
            print(f"Epoch {e}: {measurement.time} s, {measurement.total_energy} J", file=sys.stderr)
        measurement = monitor.end_window("training")
        after = [truth(g) for g in range(4)]

        power = PowerMonitor(gpu_indices=[0])
        time.sleep(0.5)
        timelines = power.get_all_power_timelines()
        print(json.dumps({"measured": [measurement.gpu_energy[g] for g in range(4)],
                          "truth": [a - b for a, b in zip(after, before)], "time": measurement.time,
                          "timeline_points": len(timelines["device_instant"][0])}))
    """)
    result = __import__("json").loads(run.stdout.splitlines()[-1])
    assert result["time"] > 0.9
    assert result["timeline_points"] >= 1
    for measured, truth in zip(result["measured"], result["truth"]):
        # One counter refresh (0.1 s) of an idle A100's power at each edge, at most 2 x 100 W x 0.1 s.
        assert abs(measured - truth) <= 20.0 + 0.002, result


OPTIMIZER_LOOP = """
    import sys, time, warnings
    import torch
    {extra_import}
    from zeus_native.monitor import ZeusMonitor
    from zeus_native.optimizer import GlobalPowerLimitOptimizer

    model = torch.nn.Linear(16, 1)
    optim = torch.optim.SGD(model.parameters(), lr=0.01)
    data = torch.utils.data.TensorDataset(torch.randn(64, 16), torch.randn(64, 1))
    train_dataloader = torch.utils.data.DataLoader(data, batch_size=8)  # 8 steps per epoch

    try:
        ZeusMonitor(gpu_indices=[0], sync_execution_with="torch")
    except RuntimeError as e:
        print("explicit torch sync:", e, file=sys.stderr)
    else:
        raise SystemExit("an explicit torch sync with a CPU-only PyTorch must be a clear error")

    monitor = ZeusMonitor(gpu_indices=[0,1,2,3])
    plo = GlobalPowerLimitOptimizer(monitor, {arguments})
    epochs = 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for epoch in range(6):
            plo.on_epoch_begin()
            for x, y in train_dataloader:
                plo.on_step_begin()
                optim.zero_grad()
                torch.nn.functional.mse_loss(model(x), y).backward()
                optim.step()
                time.sleep(0.005)
                plo.on_step_end()
            plo.on_epoch_end()
            epochs += 1
    print(epochs, type(plo.state).__name__ if not isinstance(plo.state, str) else plo.state,
          plo.optimal_power_limit, len([w for w in caught if issubclass(w.category, UserWarning)]))
"""


def test_optimizer_loop_with_8_step_epochs_warns_and_trains_on(frameworks, sim, tmp_path):
    """The default warm-up and window (10 + 40 steps) cannot fit 8-step epochs: one
    warning, every epoch runs, the maximum limit stays, exit 0."""
    sim.start(a100s(4, clock="real"))
    run = run_script(frameworks, tmp_path, OPTIMIZER_LOOP.format(extra_import="", arguments=""))
    epochs, state, limit, warned = run.stdout.split()
    assert (epochs, state, warned) == ("6", "Done", "1"), run.stderr
    assert "cannot reach a CUDA GPU" in run.stderr
    assert "training continues at the maximum limit" in run.stderr or warned == "1"


def test_optimizer_reaching_done_with_transformers_imported_exits_cleanly(frameworks, sim, tmp_path):
    """The exit-time crash's case: profiling finished (Done) with transformers imported."""
    sim.start(a100s(4, clock="real"))
    run = run_script(frameworks, tmp_path, OPTIMIZER_LOOP.format(
        extra_import="import transformers", arguments="warmup_steps=1, profile_steps=3, pl_step=100"))
    epochs, state, limit, warned = run.stdout.split()
    assert (epochs, state, warned) == ("6", "Done", "0"), run.stderr
    assert int(limit) in (400_000, 300_000, 200_000, 100_000), run.stdout


HF_TRAINER = """
    import sys, warnings
    import torch
    import transformers
    from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments
    from zeus_native.monitor import ZeusMonitor
    from zeus_native.optimizer.power_limit import HFGlobalPowerLimitOptimizer

    torch.manual_seed(0)
    config = BertConfig(vocab_size=64, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=32, num_labels=2)
    model = BertForSequenceClassification(config)
    dataset = [{{"input_ids": torch.randint(0, 64, (16,)), "attention_mask": torch.ones(16, dtype=torch.long),
                "labels": torch.tensor(i % 2)}} for i in range(64)]  # 8 steps per epoch at batch size 8
    args = TrainingArguments(output_dir="out", num_train_epochs=3, per_device_train_batch_size=8, use_cpu=True,
                             report_to="none", save_strategy="no", logging_strategy="no", disable_tqdm=True)
    callback = HFGlobalPowerLimitOptimizer(ZeusMonitor(), {arguments})
    assert isinstance(callback, transformers.TrainerCallback)
    trainer = Trainer(model=model, args=args, train_dataset=dataset, callbacks=[callback])
    trainer.train()
    print(trainer.state.epoch, trainer.state.global_step, callback.optimizer.optimal_power_limit)
"""


@pytest.mark.parametrize("arguments", ["", "warmup_steps=1, profile_steps=2, pl_step=150"],
                         ids=["short-epochs", "profiled-to-done"])
def test_hf_trainer_with_the_power_limit_optimizer(frameworks, sim, tmp_path, arguments):
    sim.start(a100s(2, clock="real"))
    run = run_script(frameworks, tmp_path, HF_TRAINER.format(arguments=arguments))
    epoch, steps, limit = run.stdout.split()[-3:]
    assert float(epoch) == 3.0 and int(steps) == 24, run.stdout
    if not arguments:
        assert "training continues at the maximum limit" in run.stderr
        assert limit == "400000"
    else:
        assert limit in ("400000", "250000", "100000"), run.stdout
