"""The original Zeus's own examples (its 0.16.0 sdist on PyPI) run on zeus_native
with only the import changed, each in its own Python process on the simulator, to
a clean exit (code 0).

The examples are not copied into this repository: the pinned sdist is downloaded
once (its sha256 checked) into ${ZEUS_CACHE_DIR:-~/.cache/zeus-native} and the
named files are read from it. Each example's text is changed in two ways only:

1. rewrite_imports(): `zeus` becomes `zeus_native` in import statements;
2. the changes this machine forces, each listed with its reason in EXAMPLES and
   applied by substitute(), which fails if the text to change is not there
   exactly as many times as expected (so a different example fails loudly
   instead of running unchanged). This machine has no GPU: PyTorch runs on the
   CPU (`cuda` shims in STAND_INS' sitecustomize, "gloo" for "nccl"), and the
   simulator's GPUs are measured. It has no internet: no dataset or model is
   downloaded. And runs are kept short (the examples' own flags where they have
   them).

torchvision has no release for the pinned torch (2.15.0) on PyPI, so the image
examples import a stand-in (STAND_INS' torchvision: random images, a small CNN
under the example's default architecture name, transforms that pass tensors
through). Examples whose dependencies are not installed here are skipped with
the name of what is missing.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import re
import shutil
import socket
import subprocess
import sys
import tarfile
import textwrap
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import a100s, energy_bound

REPO = Path(__file__).resolve().parents[2]
SETUP_FRAMEWORKS = REPO / "scripts" / "setup-frameworks.sh"
ZEUS = Path(os.environ.get("ZEUS_TEST_CLI", REPO / "build" / "bin" / "zeus"))

ORIGINAL_VERSION = "0.16.0"
ORIGINAL_SDIST = f"zeus-{ORIGINAL_VERSION}.tar.gz"
ORIGINAL_SDIST_SHA256 = "c77e3fec498fd7aea11ad081a723c1cc6cad9b670c6ebf47afd1b5ac5a6c5206"


# --- the original's sources ---------------------------------------------------------


def cache_dir() -> Path:
    return Path(os.environ.get("ZEUS_CACHE_DIR") or Path.home() / ".cache" / "zeus-native")


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def original_examples() -> Path:
    """The original's examples/ directory, from its pinned sdist (downloaded once)."""
    directory = cache_dir() / f"zeus-{ORIGINAL_VERSION}-sdist"
    examples = directory / f"zeus-{ORIGINAL_VERSION}" / "examples"
    tarball = directory / ORIGINAL_SDIST
    if not tarball.is_file():
        directory.mkdir(parents=True, exist_ok=True)
        download = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps",
             "--no-binary", ":all:", "-d", str(directory), f"zeus=={ORIGINAL_VERSION}"],
            capture_output=True, text=True, timeout=300)
        if download.returncode != 0 or not tarball.is_file():
            pytest.fail(f"downloading the original's sdist ({ORIGINAL_SDIST}) from PyPI failed:\n{download.stderr}")
    digest = sha256_of(tarball)
    if digest != ORIGINAL_SDIST_SHA256:
        pytest.fail(f"{tarball} has sha256 {digest}, not the pinned {ORIGINAL_SDIST_SHA256}: "
                    "delete it to download again")
    if not examples.is_dir():
        # Plain files and folders under examples/ only, into a scratch folder first so
        # that an interrupted extraction is not taken for a complete one.
        partial = directory / "partial"
        shutil.rmtree(partial, ignore_errors=True)
        with tarfile.open(tarball) as archive:
            members = [m for m in archive.getmembers()
                       if m.name.startswith(f"zeus-{ORIGINAL_VERSION}/examples/") and ".." not in m.name.split("/")
                       and (m.isfile() or m.isdir())]
            archive.extractall(partial, members=members)
        (partial / f"zeus-{ORIGINAL_VERSION}").rename(examples.parent)
        partial.rmdir()
    return examples


# --- the changes ----------------------------------------------------------------------

_IMPORT = re.compile(r"^(?P<indent>[ \t]*)(?P<keyword>from|import)[ \t]+zeus(?P<rest>(\.[\w.]+)?([ \t].*)?)$",
                     re.MULTILINE)


def rewrite_imports(source: str) -> str:
    """`from zeus.x import y` -> `from zeus_native.x import y`, `from zeus import x`
    -> `from zeus_native import x`, `import zeus` -> `import zeus_native as zeus`,
    `import zeus.x as y` -> `import zeus_native.x as y`. A bare `import zeus.x` is
    refused: the name `zeus.x` it binds has no one-line rewrite."""

    def replace(match: re.Match[str]) -> str:
        indent, keyword, rest = match["indent"], match["keyword"], match["rest"] or ""
        if keyword == "from":
            return f"{indent}from zeus_native{rest}"
        if rest.strip() == "" or rest.lstrip().startswith("#"):
            return f"{indent}import zeus_native as zeus{rest}"
        if rest.lstrip().startswith("as "):
            return f"{indent}import zeus_native {rest.lstrip()}"
        if re.match(r"\.[\w.]+[ \t]+as[ \t]", rest):
            return f"{indent}import zeus_native{rest}"
        raise ValueError(f"no import rewrite for {match.group(0).strip()!r}")

    return _IMPORT.sub(replace, source)


@dataclass(frozen=True)
class Change:
    """One change the sandbox forces: `old` occurs `count` times and becomes `new`."""
    old: str
    new: str
    why: str
    count: int = 1


def substitute(source: str, changes: list[Change]) -> str:
    for change in changes:
        found = source.count(change.old)
        if found != change.count:
            raise AssertionError(f"expected {change.old!r} {change.count} time(s), found it {found} "
                                 f"(for: {change.why})")
        source = source.replace(change.old, change.new)
    return source


def test_rewrite_imports_changes_only_zeus_imports():
    source = textwrap.dedent("""\
        from zeus.monitor import ZeusMonitor
        from zeus.optimizer.power_limit import MaxSlowdownConstraint, GlobalPowerLimitOptimizer
        from zeus import monitor
        import zeus
        import zeus as z
        import zeus.metric as metric
            from zeus.utils.env import get_env  # indented
        import zeusd
        from zeusx import y
        text = "from zeus.monitor import ZeusMonitor"
        # from zeus.monitor import ZeusMonitor
        monitor = zeus.monitor.ZeusMonitor()
        """)
    assert rewrite_imports(source) == textwrap.dedent("""\
        from zeus_native.monitor import ZeusMonitor
        from zeus_native.optimizer.power_limit import MaxSlowdownConstraint, GlobalPowerLimitOptimizer
        from zeus_native import monitor
        import zeus_native as zeus
        import zeus_native as z
        import zeus_native.metric as metric
            from zeus_native.utils.env import get_env  # indented
        import zeusd
        from zeusx import y
        text = "from zeus.monitor import ZeusMonitor"
        # from zeus.monitor import ZeusMonitor
        monitor = zeus.monitor.ZeusMonitor()
        """)
    with pytest.raises(ValueError, match="import zeus.monitor"):
        rewrite_imports("import zeus.monitor\n")


def test_substitute_refuses_a_change_whose_text_is_not_there_as_expected():
    assert substitute("a b a", [Change("a", "c", "test", count=2)]) == "c b c"
    with pytest.raises(AssertionError, match="found it 0"):
        substitute("a b", [Change("x", "y", "test")])
    with pytest.raises(AssertionError, match="found it 2"):
        substitute("a b a", [Change("a", "y", "test")])


# --- stand-ins for what this machine lacks -------------------------------------------

STAND_INS = {
    # No GPU: the examples' .cuda() calls keep tensors and modules on the CPU.
    "sitecustomize.py": '''
        import torch

        def _stay_on_cpu(self, *args, **kwargs):
            return self

        torch.nn.Module.cuda = _stay_on_cpu
        torch.Tensor.cuda = _stay_on_cpu
        torch.cuda.set_device = lambda device: None
        torch.cuda.synchronize = lambda device=None: None
    ''',
    # torchvision has no release for the pinned torch: random 32x32 images of 10
    # classes, a small CNN under the examples' default name, pass-through transforms.
    "torchvision/__init__.py": '''
        from . import datasets, models, transforms
    ''',
    "torchvision/models.py": '''
        import torch

        def resnet18(num_classes=10):
            return torch.nn.Sequential(
                torch.nn.Conv2d(3, 8, 3, stride=2), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
                torch.nn.Flatten(), torch.nn.Linear(8, num_classes))
    ''',
    "torchvision/datasets.py": '''
        import os
        import torch

        class ImageFolder(torch.utils.data.TensorDataset):
            def __init__(self, root, transform=None):
                count = int(os.environ.get("STAND_IN_IMAGES", "64"))
                generator = torch.Generator().manual_seed(0)
                super().__init__(torch.randn(count, 3, 32, 32, generator=generator),
                                 torch.randint(0, 10, (count,), generator=generator))

        class FashionMNIST(torch.utils.data.TensorDataset):
            """Random 1x28x28 images of 10 classes (nothing is downloaded)."""

            def __init__(self, root, train=True, download=False, transform=None):
                count = int(os.environ.get("STAND_IN_IMAGES", "64")) // (1 if train else 4)
                generator = torch.Generator().manual_seed(0 if train else 1)
                super().__init__(torch.randn(count, 1, 28, 28, generator=generator),
                                 torch.randint(0, 10, (count,), generator=generator))
    ''',
    "torchvision/transforms.py": '''
        class _PassThrough:
            def __init__(self, *args, **kwargs):
                pass

            def __call__(self, x):
                return x

        Compose = RandomResizedCrop = RandomHorizontalFlip = ToTensor = Normalize = Resize = CenterCrop = _PassThrough
    ''',
}


def write_stand_ins(directory: Path, names: tuple[str, ...]) -> None:
    for name, text in STAND_INS.items():
        if name.split("/")[0].removesuffix(".py") in names:
            path = directory / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text))


# --- the examples ---------------------------------------------------------------------

NO_GPU = "no GPU here: PyTorch runs on the CPU"

@dataclass(frozen=True)
class Example:
    path: str
    changes: list[Change] = field(default_factory=list)
    needs: tuple[str, ...] = ()  # import statements that must work with the frameworks directories
    stand_ins: tuple[str, ...] = ()


HF_RUN_CLM_NEEDS = ("import datasets", "import evaluate")
# run_clm.py was written for transformers 4 (4.37); what transformers 5 removed or renamed.
TRANSFORMERS_5 = [
    Change("    is_torch_tpu_available,", "    # is_torch_tpu_available: gone from transformers 5 (and no TPU here)",
           "transformers 5 has no is_torch_tpu_available"),
    Change("not is_torch_tpu_available()", "True", "the line above: there is no TPU", count=2),
    Change("from transformers.utils import check_min_version, send_example_telemetry",
           "from transformers.utils import check_min_version", "transformers 5 has no send_example_telemetry"),
    Change('send_example_telemetry("run_clm", model_args, data_args)',
           "pass  # send_example_telemetry: gone from transformers 5 (and no internet here)", "the line above"),
    Change("        tokenizer=tokenizer,", "        processing_class=tokenizer,",
           "transformers 5's Trainer takes the tokenizer as processing_class"),
]

EXAMPLES = {
    "jax": Example("jax/measure_energy.py", [
        Change("for i in range(50000):", "for i in range(50):",
               "short run: 50 1000x1000 products on the CPU instead of 50,000 (no flag for it)"),
    ], needs=("import jax",)),
    "power_limit_single": Example("power_limit_optimizer/train_single.py", stand_ins=("sitecustomize", "torchvision"),
                                  needs=("import torch",)),
    "power_limit_dp": Example("power_limit_optimizer/train_dp.py", [
        Change('dist.init_process_group(backend="nccl")', 'dist.init_process_group(backend="gloo")',
               NO_GPU + " (NCCL needs GPUs; gloo is torch.distributed's CPU backend)"),
        Change("model, device_ids=[args.gpu], output_device=args.gpu",
               "model, device_ids=None, output_device=None",
               NO_GPU + " (DistributedDataParallel takes no device ids for a CPU module)"),
    ], stand_ins=("sitecustomize", "torchvision"), needs=("import torch",)),
    "prometheus": Example("prometheus/train_single.py", [
        Change("'http://localhost:9091'", "os.environ['PUSHGATEWAY_URL']",
               "the pushgateway this test starts listens on a free loopback port, not 9091", count=3),
        Change("time.sleep(10)", "time.sleep(2)", "short run: the example waits 10 s for a last push"),
    ], stand_ins=("sitecustomize", "torchvision"), needs=("import torch",)),
    "profile_p2p": Example("pipeline_frequency_optimizer/profile_p2p.py", [
        Change('backend="nccl"', 'backend="gloo"', NO_GPU + " (gloo is torch.distributed's CPU backend)"),
        Change('tensor = torch.rand(10000, 10000, device="cuda")', "tensor = torch.rand(100, 100)",
               NO_GPU + ", and a short run: a 100x100 tensor instead of a 10000x10000 one on a GPU"),
        Change('os.environ["MASTER_PORT"] = "29500"', 'os.environ["MASTER_PORT"] = os.environ["FREE_PORT"]',
               "a free loopback port: another test may hold 29500"),
        Change("time.sleep(60)", "time.sleep(1)", "short run: rank 1 sleeps 1 s instead of 60 s", count=1),
        Change('print("Sleeping for 60 seconds")', 'print("Sleeping for 1 second")', "the line above"),
    ], stand_ins=("sitecustomize",), needs=("import torch",)),
    # Written for transformers 4 (4.37): send_example_telemetry is gone from transformers 5.
    "huggingface_run_clm": Example("huggingface/run_clm.py", TRANSFORMERS_5, needs=HF_RUN_CLM_NEEDS),
    "carbon_run_clm": Example("carbon_emission_monitor/run_clm.py", [
        *TRANSFORMERS_5,
        Change("ip_latlong = get_ip_lat_long()", "ip_latlong = (42.28, -83.74)",
               "no internet here to locate this machine by its address: a fixed location"),
        Change("ElectrictyMapsClient(ip_latlong, estimate=True)",
               'ElectrictyMapsClient(ip_latlong, estimate=True, base_url=os.environ["ELECTRICITY_MAPS_URL"])',
               "no internet here: a loopback stand-in for the ElectricityMaps API"),
    ], needs=HF_RUN_CLM_NEEDS),
    "bso_mnist": Example("batch_size_optimizer/mnist/train_single_gpu.py", stand_ins=("torchvision",),
                         needs=("import tensorboardX",)),
}


@pytest.fixture(scope="module")
def examples_dir() -> Path:
    return original_examples()


@pytest.fixture(scope="module")
def frameworks() -> list[str]:
    """The directories that hold torch/transformers (scripts/setup-frameworks.sh) and jax
    (.venv/frameworks, scripts/setup-python.sh)."""
    run = subprocess.run([str(SETUP_FRAMEWORKS)], capture_output=True, text=True, timeout=1800)
    if run.returncode != 0:
        pytest.fail(f"{SETUP_FRAMEWORKS} failed ({run.returncode}):\n{run.stderr}")
    directories = [run.stdout.strip().splitlines()[-1]]
    jax_dir = Path(sys.prefix) / "frameworks"
    if jax_dir.is_dir():
        directories.append(str(jax_dir))
    return directories


@pytest.fixture(scope="module")
def example_frameworks(frameworks) -> list[str]:
    """`frameworks`, then what only some examples import (datasets, evaluate, tensorboardX:
    scripts/setup-frameworks.sh --examples)."""
    run = subprocess.run([str(SETUP_FRAMEWORKS), "--examples"], capture_output=True, text=True, timeout=1800)
    if run.returncode != 0:
        pytest.fail(f"{SETUP_FRAMEWORKS} --examples failed ({run.returncode}):\n{run.stderr}")
    return [*frameworks, run.stdout.strip().splitlines()[-1]]


def importable(statement: str, path: list[str]) -> bool:
    check = subprocess.run([sys.executable, "-c", statement], env={**os.environ, "PYTHONPATH": os.pathsep.join(path)},
                           capture_output=True, timeout=120)
    return check.returncode == 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def prepare(name: str, examples_dir: Path, frameworks: list[str], tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """The example's changed text in tmp_path, and its processes' environment."""
    example = EXAMPLES[name]
    missing = [m for m in example.needs if not importable(m, frameworks)]
    if missing:
        pytest.skip(f"{example.path} needs {'; '.join(missing)}: not with the frameworks installed here "
                    "(scripts/setup-frameworks.sh, scripts/setup-python.sh)")
    stand_ins = tmp_path / "stand-ins"
    write_stand_ins(stand_ins, example.stand_ins)
    script = tmp_path / Path(example.path).name
    script.write_text(substitute(rewrite_imports((examples_dir / example.path).read_text()), example.changes))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(stand_ins), *frameworks])
    env.update(TOKENIZERS_PARALLELISM="false", HF_HUB_OFFLINE="1", HF_HOME=str(tmp_path / "hf-home"),
               JAX_PLATFORMS="cpu", OMP_NUM_THREADS="1", FREE_PORT=str(free_port()))
    return script, env


def run(command: list[str], env: dict[str, str], cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess:
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)
    assert done.returncode == 0, f"exit code {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    assert "Traceback" not in done.stderr, done.stderr
    print(done.stdout[-3000:], done.stderr[-3000:], sep="\n")  # shown for a failed assert after this
    return done


def figures(pattern: str, text: str) -> list[float]:
    return [float(m) for m in re.findall(pattern, text)]


def test_the_changes_are_only_imports_and_what_the_sandbox_forces(examples_dir):
    """Each example's changed text differs from the original only in its zeus imports and
    its listed changes: every other line is the original's."""
    for name, example in EXAMPLES.items():
        original = (examples_dir / example.path).read_text()
        changed = substitute(rewrite_imports(original), example.changes)
        allowed = {line for change in example.changes for line in change.new.splitlines()}
        for before, after in zip(original.splitlines(), changed.splitlines(), strict=True):
            if before != after:
                assert (re.match(r"\s*(from|import) zeus", before) and "zeus_native" in after) or any(
                    a in after for a in allowed), (name, before, after)


def test_jax_measure_energy(examples_dir, frameworks, sim, tmp_path):
    """examples/jax/measure_energy.py: sync_execution_with="jax" on a CPU-only JAX,
    one window over the products; the GPU's energy is the simulator's idle power
    over the window's time (it does no GPU work)."""
    sim.start(a100s(1, clock="real"))
    script, env = prepare("jax", examples_dir, frameworks, tmp_path)
    done = run([sys.executable, str(script)], env, tmp_path)
    (seconds,) = figures(r"Took ([0-9.e+-]+) seconds\.", done.stdout)
    (joules,) = figures(r"GPU 0 consumed ([0-9.e+-]+) Joules\.", done.stdout)
    assert seconds > 0 and joules > 0, done.stdout
    idle = sim.true_power(0)
    assert abs(joules - idle * seconds) <= 2 * idle * 0.1 + 0.002, (joules, idle, seconds)


class SimGpuStatus(ctypes.Structure):
    """zeusSimGpuStatus_t (sim/include/zeus_sim/zeus_sim.h)."""
    _fields_ = [("size", ctypes.c_uint), ("name", ctypes.c_char * 96), ("uuid", ctypes.c_char * 96),
                ("now_s", ctypes.c_double), ("true_power_w", ctypes.c_double), ("temperature_c", ctypes.c_double),
                ("clock_mhz", ctypes.c_double), ("power_limit_w", ctypes.c_double), ("utilization", ctypes.c_double),
                ("ground_truth_energy_j", ctypes.c_double), ("energy_counter_supported", ctypes.c_int),
                ("energy_counter_mj", ctypes.c_ulonglong), ("instant_power_reading_w", ctypes.c_double),
                ("average_power_reading_w", ctypes.c_double), ("active_loads", ctypes.c_uint), ("lost", ctypes.c_int)]


class PowerLimitRecorder:
    """Every power limit the simulator's GPU holds while the example runs, in order
    (polled: a limit held for less than a poll may be missed)."""

    def __init__(self, sim, gpu: int) -> None:
        self.sim, self.gpu, self.limits = sim, gpu, []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def _read(self) -> float:
        status = SimGpuStatus(size=ctypes.sizeof(SimGpuStatus))
        assert self.sim.lib.zeusSimGetGpuStatus(ctypes.c_uint(self.gpu), ctypes.byref(status)) == 0
        return status.power_limit_w

    def _poll(self) -> None:
        while not self._stop.is_set():
            limit = self._read()
            if not self.limits or self.limits[-1] != limit:
                self.limits.append(limit)
            self._stop.wait(0.002)

    def __enter__(self) -> "PowerLimitRecorder":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._poll_once_more()

    def _poll_once_more(self) -> None:
        limit = self._read()
        if self.limits[-1] != limit:
            self.limits.append(limit)


def test_power_limit_train_single(examples_dir, frameworks, sim, tmp_path):
    """examples/power_limit_optimizer/train_single.py on the stand-in images, with
    enough steps in the first epoch for the optimizer's 10 warm-up + 40 profiling
    steps at each limit, a full load on the GPU (so a lower limit draws less power)
    and ZEUS_MAX_SLOWDOWN (read by the example through zeus_native.utils.env) so
    lax that the lowest limit is chosen: the GPU goes through every limit from the
    maximum down in pl_step (25 W) steps, holds the minimum for the rest of the
    training, and is back at the maximum after exit."""
    from zeus_native.device import get_gpus

    sim.start(a100s(1, clock="real"))
    low_mw, high_mw = get_gpus().get_power_management_limit_constraints(0)
    expected = [w / 1000 for w in range(high_mw, low_mw - 1, -25_000)]
    load = sim.load(0, 1.0)
    script, env = prepare("power_limit_single", examples_dir, frameworks, tmp_path)
    env["STAND_IN_IMAGES"] = str(2 * (1 + 50 * len(expected) + 20))
    env["ZEUS_MAX_SLOWDOWN"] = "100"
    with PowerLimitRecorder(sim, 0) as recorder:
        done = run([sys.executable, str(script), str(tmp_path / "imagenet"), "--epochs", "2", "-b", "2", "-j", "0",
                    "-p", "1000"], env, tmp_path)
    sim.unload(load)
    assert done.stdout.count("Top-1 accuracy:") == 2, done.stdout
    # Profiled from the maximum down, then the chosen minimum held, then the maximum restored at exit.
    assert recorder.limits == [*expected, expected[0]], recorder.limits


def test_power_limit_train_dp_on_two_gloo_ranks(examples_dir, frameworks, sim, tmp_path):
    """examples/power_limit_optimizer/train_dp.py under torch.distributed's launcher,
    2 ranks on gloo, each monitoring its own simulated GPU, as train_single above:
    both GPUs go through every limit, hold the lowest and are restored; both ranks
    train and validate every epoch."""
    from zeus_native.device import get_gpus

    sim.start(a100s(2, clock="real"))
    low_mw, high_mw = get_gpus().get_power_management_limit_constraints(0)
    expected = [w / 1000 for w in range(high_mw, low_mw - 1, -25_000)]
    loads = [sim.load(gpu, 1.0) for gpu in (0, 1)]
    script, env = prepare("power_limit_dp", examples_dir, frameworks, tmp_path)
    # A global batch of 2 is 1 image per rank: each rank's epoch is half the images.
    env["STAND_IN_IMAGES"] = str(2 * (1 + 50 * len(expected) + 20))
    env["ZEUS_MAX_SLOWDOWN"] = "100"
    with PowerLimitRecorder(sim, 0) as gpu0, PowerLimitRecorder(sim, 1) as gpu1:
        done = run([sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2",
                    "--master-addr", "127.0.0.1", "--master-port", env["FREE_PORT"],
                    str(script), str(tmp_path / "imagenet"), "--epochs", "2", "-b", "2", "-j", "0", "-p", "1000"],
                   env, tmp_path)
    for load in loads:
        sim.unload(load)
    assert done.stdout.count("Top-1 accuracy:") == 2 * 2, done.stdout
    assert gpu0.limits == gpu1.limits == [*expected, expected[0]], (gpu0.limits, gpu1.limits)


def fake_rapl_packages(root: Path, count: int) -> Path:
    """A powercap tree with `count` idle RAPL packages: this machine exposes none."""
    for package in range(count):
        zone = root / f"intel-rapl:{package}"
        zone.mkdir(parents=True)
        (zone / "name").write_text(f"package-{package}\n")
        (zone / "energy_uj").write_text("1000000\n")
        (zone / "max_energy_range_uj").write_text("262143328850\n")
    return root


def test_prometheus_train_single(examples_dir, frameworks, sim, pushgateway, tmp_path):
    """examples/prometheus/train_single.py pushing to a local pushgateway, with the two
    RAPL packages its cpu_indices=[0,1] name (idle stand-ins): one histogram sample
    per epoch, a cumulative GPU energy within the simulator's ground truth, and the
    GPU's power gauge at its true (idle) power."""
    sim.start(a100s(1, clock="real"))
    script, env = prepare("prometheus", examples_dir, frameworks, tmp_path)
    env["PUSHGATEWAY_URL"] = pushgateway.url
    env["ZEUS_POWERCAP_ROOT"] = str(fake_rapl_packages(tmp_path / "powercap", 2))
    before = sim.truth(0)
    run([sys.executable, str(script), str(tmp_path / "imagenet"), "--epochs", "2", "-b", "8", "-j", "0"],
        env, tmp_path)
    total = sim.truth(0) - before
    histogram = pushgateway.find("energy_monitor_gpu_energy_joules_count", job="training_energy_histogram",
                                 window="training_energy", index="0")
    assert [v for _, v in histogram] == [2.0], histogram
    counter = pushgateway.find("energy_monitor_gpu_energy_joules_total", job="training_energy_counter",
                               window="epoch_energy", index="0")
    assert len(counter) == 1 and 0 < counter[0][1] <= total + energy_bound(sim, 0), (counter, total)
    gauge = pushgateway.find("power_monitor_gpu_power_watts", job="training_power_gauge", index="0")
    assert len(gauge) == 1 and gauge[0][1] == pytest.approx(sim.true_power(0), rel=0.05), gauge


def test_pipeline_frequency_profile_p2p(examples_dir, frameworks, sim, tmp_path):
    """examples/pipeline_frequency_optimizer/profile_p2p.py: rank 0 measures its GPU
    while blocked on a receive from rank 1, which sleeps ~1 s first; the power it
    prints is the simulator's idle power."""
    sim.start(a100s(2, clock="real"))
    script, env = prepare("profile_p2p", examples_dir, frameworks, tmp_path)
    done = run([sys.executable, str(script)], env, tmp_path)
    (seconds,) = figures(r"Time \(s\): ([0-9.e+-]+)", done.stdout)
    (joules,) = figures(r"Energy \(J\): ([0-9.e+-]+)", done.stdout)
    (watts,) = figures(r"Power \(W\): ([0-9.e+-]+)", done.stdout)
    assert 0.5 < seconds < 30, done.stdout
    idle = sim.true_power(0)
    assert abs(joules - idle * seconds) <= 2 * idle * 0.1 + 0.002, (joules, idle, seconds)
    assert watts == pytest.approx(joules / seconds)


# A corpus and a word-level tokenizer made here (no model or dataset can be downloaded),
# and run_clm's flags for a 1-layer GPT-2 trained from scratch on them for 3 steps.
MAKE_CORPUS = '''
import sys
from pathlib import Path
from tokenizers import Tokenizer, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

out = Path(sys.argv[1])
words = "the quick brown fox jumps over a lazy dog while energy is measured per step".split()
lines = [" ".join(words[(i + j) % len(words)] for j in range(12)) for i in range(200)]
(out / "train.txt").write_text("\\n".join(lines) + "\\n")
tokenizer = Tokenizer(models.WordLevel(unk_token="<unk>"))
tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
tokenizer.train_from_iterator(lines, trainers.WordLevelTrainer(special_tokens=["<unk>", "<eos>"]))
PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="<unk>", eos_token="<eos>",
                        bos_token="<eos>").save_pretrained(out / "tokenizer")
'''


def run_clm_arguments(tmp_path: Path, env: dict[str, str]) -> list[str]:
    maker = tmp_path / "make_corpus.py"
    maker.write_text(MAKE_CORPUS)
    made = subprocess.run([sys.executable, str(maker), str(tmp_path)], env=env, capture_output=True, text=True,
                          timeout=300)
    assert made.returncode == 0, made.stderr
    return ["--model_type", "gpt2", "--config_overrides", "n_embd=32,n_layer=1,n_head=2,n_positions=64",
            "--tokenizer_name", str(tmp_path / "tokenizer"), "--train_file", str(tmp_path / "train.txt"),
            "--do_train", "--max_steps", "3", "--per_device_train_batch_size", "4", "--block_size", "32",
            "--output_dir", str(tmp_path / "out"), "--report_to", "none", "--use_cpu"]


def test_huggingface_run_clm(examples_dir, example_frameworks, sim, tmp_path):
    """examples/huggingface/run_clm.py with HFGlobalPowerLimitOptimizer as a Trainer callback:
    3 training steps of a tiny GPT-2 on a local corpus; the optimizer sets the GPU to its
    maximum limit before starting, and the GPU is at it after exit."""
    from zeus_native.device import get_gpus

    sim.start(a100s(1, clock="real"))
    _, high_mw = get_gpus().get_power_management_limit_constraints(0)
    script, env = prepare("huggingface_run_clm", examples_dir, example_frameworks, tmp_path)
    with PowerLimitRecorder(sim, 0) as recorder:
        done = run([sys.executable, str(script), *run_clm_arguments(tmp_path, env)], env, tmp_path, timeout=600)
    assert "***** train metrics *****" in done.stdout, done.stdout
    assert recorder.limits[-1] == high_mw / 1000, recorder.limits


def test_carbon_emission_monitor_run_clm(examples_dir, example_frameworks, sim, tmp_path):
    """examples/carbon_emission_monitor/run_clm.py: a CarbonEmissionMonitor window around
    training, with every hour at one intensity (a loopback stand-in for ElectricityMaps):
    the emission it prints is its energy times that intensity."""
    from conftest import JsonServer

    sim.start(a100s(1, clock="real"))
    intensity = 400.0  # gCO2eq/kWh
    now = int(time.time()) // 3600 * 3600
    hours = [{"zone": "US-MIDW-MISO", "carbonIntensity": intensity, "isEstimated": False,
              "datetime": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(now + 3600 * k))} for k in (-1, 0, 1)]
    script, env = prepare("carbon_run_clm", examples_dir, example_frameworks, tmp_path)
    with JsonServer(200, {"zone": "US-MIDW-MISO", "history": hours}) as api:
        env["ELECTRICITY_MAPS_URL"] = api.url
        done = run([sys.executable, str(script), *run_clm_arguments(tmp_path, env)], env, tmp_path, timeout=600)
    printed = done.stdout.split("Train energy & carbon measurements:", 1)[1]
    # CarbonEmissionMeasurement(time=..., gpu_energy={0: J}, gpu_carbon_emission={0: g}, ...).
    energy = figures(r"gpu_energy=\{0: ([0-9.e+-]+)\}", printed)[0]
    (emission,) = figures(r"gpu_carbon_emission=\{0: ([0-9.e+-]+)\}", printed)
    assert energy > 0, printed
    assert emission == pytest.approx(energy * intensity / 3.6e6, rel=1e-6), printed


def test_batch_size_optimizer_mnist(examples_dir, example_frameworks, sim, tmp_path):
    """examples/batch_size_optimizer/mnist/train_single_gpu.py against `zeus bso-server`,
    on the stand-in FashionMNIST: it trains one epoch at the batch size the server gives
    (the job's default on a new job), logs to tensorboardX and reports the epoch, which
    the server stores as a converged trial of that batch size."""
    import sqlite3

    from server_listening import wait_for_listening

    if not ZEUS.exists():
        pytest.skip(f"{ZEUS} is not built (scripts/build.sh builds it; or set ZEUS_TEST_CLI)")
    sim.start(a100s(1, clock="real"))
    script, env = prepare("bso_mnist", examples_dir, example_frameworks, tmp_path)
    database = tmp_path / "bso.db"
    with open(tmp_path / "bso-server.log", "wb") as log:
        server = subprocess.Popen([str(ZEUS), "bso-server", "--database", str(database), "--listen", "127.0.0.1:0"],
                                  stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                  env={k: v for k, v in os.environ.items() if not k.startswith("ZEUS_")})
        try:
            listening = wait_for_listening(tmp_path / "bso-server.log", server, "zeus bso-server: listening on ", 20)
            env.update(ZEUS_SERVER_URL=listening.url, ZEUS_JOB_ID="mnist-dev-1", STAND_IN_IMAGES="128")
            # Random labels: a target of 0 is reached (one the epoch missed ends the run with the original's
            # ZeusBSOTrainFailError).
            done = run([sys.executable, str(script), "--epochs", "1", "--target-accuracy", "0", "--dir",
                        str(tmp_path / "logs")], env, tmp_path)
        finally:
            server.terminate()
            server.wait(timeout=20)
    (batch_size,) = figures(r"Chosen batach_size: ([0-9]+)", done.stdout)
    assert batch_size == 256, done.stdout  # the job's default_batch_size
    assert list((tmp_path / "logs").glob("events.out.tfevents.*")), "tensorboardX wrote no event file"
    with sqlite3.connect(database) as db:
        trials = db.execute("SELECT batch_size, energy, time, converged FROM bso_trial "
                            "WHERE job_id = 'mnist-dev-1'").fetchall()
    assert len(trials) == 1 and trials[0][0] == 256 and trials[0][1] > 0 and trials[0][2] > 0, trials
    assert trials[0][3], trials
