#!/usr/bin/env python3
"""zeus_slurm.so in a real single-node Slurm, on the GPU simulator.

The test starts munged (a key of its own), zeusd on the simulator, slurmctld
and slurmd, all on loopback with their configuration, state and spool in a
temporary folder: ProctrackType=proctrack/linuxproc, TaskPlugin=task/none,
two GPUs as GRES whose File= entries are plain files the test creates. Then
`srun hostname` must work, and jobs burn simulated GPUs:

- one GPU and two GPUs (srun steps): each GPU's energy in the step's record
  and line lies between the burn's own ground truth and the ground truth
  read around srun, give or take one counter refresh (100 ms) at the
  maximum power at each edge; a step of 16 tasks gets one line;
- a batch job that fails (exit 3): the batch step's record keeps the exit
  code, the line is in the job's stderr file, the job's own record (prolog
  to epilog) is written;
- a job cancelled with scancel: the record keeps the signal;
- two jobs at once on different GPUs: each record has its own GPU's energy;
- zeusd down: the job still runs, the record says why there is no number;
- a plugin option that makes no sense: slurmd's log names it, the job runs;
- a spool that cannot be written: the line says so, the job runs;
- a job holding the whole node (--exclusive): zeusd serves a generated RAPL
  tree (a package zone with a DRAM zone per CPU package of this machine)
  whose counters the test advances while the job runs; the record's CPU and
  DRAM energy are exactly those advances. Without zeusd's cpu-read, the
  record says why and the job runs. Steps with one CPU share the packages:
  their records say so and hold no CPU number.

Usage: slurm_plugin_test.py PLUGIN ZEUSD ZEUS_SIM SIM_LIBRARY
Exits 77 (skipped) when Slurm's daemons or munged are not installed.
"""
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
import unittest

SKIP = 77
PLUGIN, ZEUSD, ZEUS_SIM, SIM_LIBRARY = (
    (os.path.abspath(p) for p in sys.argv[1:5]) if len(sys.argv) >= 5 else (None,) * 4)
# Counter refresh period × the preset's maximum power (A100: 400 W), per edge.
EDGE_J = 0.1 * 400.0
NODE = socket.gethostname().split(".")[0]
# The CPUs this test (and so slurmd and each slurmstepd) may run on; slurm.conf
# gives the node as many, so that --exclusive holds every one of them.
ALLOWED_CPUS = sorted(os.sched_getaffinity(0))
SLURM_CPUS = max(2, len(ALLOWED_CPUS))  # two one-CPU jobs run at once
MAX_ENERGY_RANGE_UJ = 262143328850


def package_cpus():
    """{physical_package_id: {online CPU, ...}} from sysfs, as the plugin reads it."""
    packages = {}
    root = "/sys/devices/system/cpu"
    for entry in os.listdir(root):
        if not (entry.startswith("cpu") and entry[3:].isdigit()):
            continue
        try:
            with open(os.path.join(root, entry, "topology", "physical_package_id")) as f:
                packages.setdefault(int(f.read()), set()).add(int(entry[3:]))
        except OSError:
            continue  # offline
    return packages


def missing_programs():
    return [p for p in ("slurmctld", "slurmd", "srun", "sbatch", "scancel", "sinfo", "munged")
            if shutil.which(p) is None and not os.path.exists(os.path.join("/usr/sbin", p))]


def program(name):
    return shutil.which(name) or os.path.join("/usr/sbin", name)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(condition, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = condition()
        if result:
            return result
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


class Cluster:
    """munged, zeusd on the simulator, slurmctld and slurmd in folder `d`."""

    def __init__(self, d):
        self.d = d
        self.processes = {}
        self.spool = os.path.join(d, "records")
        self.env = dict(os.environ, SLURM_CONF=os.path.join(d, "slurm.conf"),
                        ZEUS_SIM_STATE=os.path.join(d, "sim-state"), PATH=os.path.dirname(ZEUS_SIM) + ":" + os.environ["PATH"])
        for key in ("ZEUS_SIM_CONFIG", "CUDA_VISIBLE_DEVICES", "ZEUSD_SOCK_PATH", "ZEUSD_HOST_PORT"):
            self.env.pop(key, None)
        self.zeusd_socket = os.path.join(d, "zeusd.sock")
        self.powercap = os.path.join(d, "powercap")
        self.packages = sorted(package_cpus())
        self.rapl_uj = {}  # (package, "package" or "dram") -> the counter's value now

    def write_powercap(self):
        """intel-rapl:N (package-N) with intel-rapl:N:0 (dram) for each CPU package of this machine."""
        for n in self.packages:
            for zone, name, uj in ((f"intel-rapl:{n}", f"package-{n}", 1_000_000 * (n + 1)),
                                   (f"intel-rapl:{n}/intel-rapl:{n}:0", "dram", 500_000 * (n + 1))):
                path = os.path.join(self.powercap, zone)
                os.makedirs(path, exist_ok=True)
                for file, content in (("name", name), ("max_energy_range_uj", MAX_ENERGY_RANGE_UJ)):
                    with open(os.path.join(path, file), "w") as f:
                        f.write(f"{content}\n")
                self.set_rapl(n, "dram" if name == "dram" else "package", uj)

    def set_rapl(self, package, kind, uj):
        zone = f"intel-rapl:{package}" + (f"/intel-rapl:{package}:0" if kind == "dram" else "")
        path = os.path.join(self.powercap, zone, "energy_uj")
        with open(path + ".tmp", "w") as f:
            f.write(f"{uj}\n")
        os.replace(path + ".tmp", path)  # zeusd reads the old value or the new, never half of one
        self.rapl_uj[(package, kind)] = uj

    def advance_rapl(self, package, kind, uj):
        self.set_rapl(package, kind, self.rapl_uj[(package, kind)] + uj)

    def spawn(self, name, args, env=None):
        with open(os.path.join(self.d, name + ".out"), "wb") as log:
            self.processes[name] = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env or self.env)

    def stop(self, name):
        process = self.processes.pop(name, None)
        if process and process.poll() is None:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def log(self, name):
        for candidate in (name, name + ".out"):
            path = os.path.join(self.d, candidate)
            if os.path.exists(path):
                with open(path, errors="replace") as f:
                    return f.read()
        return ""

    def start_munge(self):
        key = os.path.join(self.d, "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        self.munge_socket = os.path.join(self.d, "munge.sock")
        self.spawn("munged", [program("munged"), "--foreground", "--force", "--key-file", key,
                              "--socket", self.munge_socket, "--pid-file", os.path.join(self.d, "munged.pid"),
                              "--log-file", os.path.join(self.d, "munged.log"),
                              "--seed-file", os.path.join(self.d, "munged.seed")])
        wait_for(lambda: os.path.exists(self.munge_socket), 10, "munged's socket\n" + self.log("munged.out"))

    def start_zeusd(self, *options):
        env = dict(self.env, ZEUS_SIMULATE="1", ZEUS_SIM_LIBRARY=SIM_LIBRARY, ZEUS_POWERCAP_ROOT=self.powercap,
                   LD_LIBRARY_PATH=os.path.dirname(SIM_LIBRARY))
        self.spawn("zeusd", [ZEUSD, "serve", "--socket-path", self.zeusd_socket, *options], env=env)
        wait_for(lambda: os.path.exists(self.zeusd_socket), 15, "zeusd's socket\n" + self.log("zeusd.out"))

    def write_plugstack(self, *options):
        with open(os.path.join(self.d, "plugstack.conf"), "w") as f:
            f.write(" ".join(["required", PLUGIN, *options]) + "\n")

    def default_plugstack(self):
        self.write_plugstack(f"spool={self.spool}", f"zeusd=unix:{self.zeusd_socket}")

    def write_configuration(self):
        d = self.d
        devices = os.path.join(d, "dev")
        os.makedirs(devices)
        # Slurm wants character devices: NVIDIA's major number, never opened
        # (no cgroup constrains devices here).
        for i in range(2):
            os.mknod(os.path.join(devices, f"nvidia{i}"), 0o600 | stat.S_IFCHR, os.makedev(195, i))
        for sub in ("state", "spool"):
            os.makedirs(os.path.join(d, sub))
        conf = f"""ClusterName=zeustest
SlurmctldHost={NODE}(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={self.munge_socket}
CredType=cred/munge
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
SlurmdDebug=verbose
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SchedulerParameters=sched_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
ReturnToService=2
SlurmdParameters=config_overrides
PlugStackConfig={d}/plugstack.conf
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MailProg=/bin/true
KillWait=2
InactiveLimit=0
NodeName=zeusnode NodeHostname={NODE} NodeAddr=127.0.0.1 CPUs={SLURM_CPUS} RealMemory=1000 Gres=gpu:2 State=UNKNOWN
PartitionName=debug Nodes=zeusnode Default=YES MaxTime=INFINITE State=UP
"""
        with open(os.path.join(d, "slurm.conf"), "w") as f:
            f.write(conf)
        with open(os.path.join(d, "gres.conf"), "w") as f:
            f.write(f"NodeName=zeusnode Name=gpu File={devices}/nvidia[0-1]\n")
        self.default_plugstack()

    def start_slurm(self):
        conf = self.env["SLURM_CONF"]
        self.spawn("slurmctld", [program("slurmctld"), "-D", "-i", "-f", conf])
        self.spawn("slurmd", [program("slurmd"), "-D", "-N", "zeusnode", "-f", conf])

        def node_idle():
            out = subprocess.run([program("sinfo"), "-h", "-N", "-o", "%t"], env=self.env, capture_output=True,
                                 text=True)
            return out.returncode == 0 and out.stdout.strip() == "idle"
        wait_for(node_idle, 30, "the node to be idle\n" + self.log("slurmctld.log") + self.log("slurmd.log"))

    def run(self, args, timeout=60, **kwargs):
        return subprocess.run(args, env=self.env, capture_output=True, text=True, timeout=timeout, **kwargs)

    def truth(self):
        """Each GPU's cumulative ground-truth energy in joules."""
        out = subprocess.run([ZEUS_SIM, "status", "--format", "json"], env=self.env, capture_output=True,
                             text=True, check=True)
        return {g["index"]: g["ground_truth_energy_j"] for g in json.loads(out.stdout)["gpus"]}

    def active_loads(self):
        out = subprocess.run([ZEUS_SIM, "status", "--format", "json"], env=self.env, capture_output=True,
                             text=True, check=True)
        return {g["index"]: g["active_loads"] for g in json.loads(out.stdout)["gpus"]}

    def record(self, job_id, step, timeout=15):
        path = os.path.join(self.spool, f"job-{job_id}", f"{step}.{NODE}.json")
        wait_for(lambda: os.path.exists(path), timeout, f"{path}\n{self.log('slurmd.log')[-3000:]}")
        with open(path) as f:
            return json.load(f)

    def close(self):
        for name in ("slurmd", "slurmctld", "zeusd", "munged"):
            self.stop(name)


def job_id_of(text):
    """The job id in srun's/sbatch's output ("Submitted batch job 7") or a zeus line."""
    for word in text.replace(":", " ").split():
        if word.isdigit():
            return int(word)
    raise AssertionError(f"no job id in {text!r}")


def burn_truths(output):
    """`zeus-sim burn` prints "gpu N: X J" per GPU: the burn's own ground truth."""
    truths = {}
    for line in output.splitlines():
        if line.startswith("gpu ") and line.endswith(" J"):
            index, joules = line[4:-2].split(": ")
            truths[int(index)] = float(joules)
    return truths


def zeus_lines(text):
    return [line for line in text.splitlines() if line.startswith("zeus: ")]


class SlurmPlugin(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="zeus-slurm-")
        cls.cluster = Cluster(cls.dir)
        try:
            cls.cluster.start_munge()
            cls.cluster.write_powercap()
            cls.cluster.start_zeusd()
            cls.cluster.write_configuration()
            cls.cluster.start_slurm()
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.cluster.close()
        if os.environ.get("ZEUS_SLURM_TEST_KEEP"):
            print("kept", cls.dir, file=sys.stderr)
        else:
            shutil.rmtree(cls.dir, ignore_errors=True)

    def assert_energy_between(self, record, gpu, low, high):
        measured = record["gpu_energy_j"][str(gpu)]
        self.assertGreater(measured, low - EDGE_J, record)
        self.assertLess(measured, high + EDGE_J, record)

    def srun_burn(self, gpus, seconds):
        """An srun step burning each GPU Slurm gave it; (job id, output, truth before, truth after)."""
        script = f'for g in ${{SLURM_STEP_GPUS//,/ }}; do zeus-sim burn --gpu $g --seconds {seconds} & done; wait'
        before = self.cluster.truth()
        out = self.cluster.run(["srun", f"--gres=gpu:{gpus}", "bash", "-c", script])
        after = self.cluster.truth()
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        return out, before, after

    def check_burn_step(self, gpus):
        out, before, after = self.srun_burn(gpus, 1.5)
        burned = burn_truths(out.stdout)
        self.assertEqual(len(burned), gpus, out.stdout)
        lines = zeus_lines(out.stderr)
        self.assertEqual(len(lines), 1, out.stderr)
        job_id = job_id_of(lines[0])
        record = self.cluster.record(job_id, "0")
        self.assertEqual(record["gpus"], sorted(burned), record)
        self.assertEqual(record["gpu_source"], "SLURM_STEP_GPUS")
        self.assertIsNone(record["reason"])
        for gpu, burn in burned.items():
            self.assert_energy_between(record, gpu, burn, after[gpu] - before[gpu])
        self.assertAlmostEqual(record["total_energy_j"], sum(record["gpu_energy_j"].values()), places=6)
        self.assertEqual(record["tasks"], [{"task": 0, "exit_code": 0}])
        # One CPU of the node's: its packages are shared, so no CPU number.
        self.assertIsNone(record["cpu_energy_j"], record)
        self.assertIn("shares packages with other jobs", record["cpu_reason"])
        gpu_words = ("GPU " if gpus == 1 else "GPUs ") + ",".join(str(g) for g in sorted(burned))
        self.assertIn(f"zeus: job {job_id} step 0 on {NODE}: {gpu_words}: {record['total_energy_j']:.3f} J",
                      lines[0])
        return record

    def test_0_srun_hostname(self):
        out = self.cluster.run(["srun", "hostname"])
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.strip().split(".")[0], NODE)
        # No GPUs, no record and no line.
        self.assertEqual(zeus_lines(out.stderr), [])

    def test_1_one_gpu(self):
        self.check_burn_step(1)

    def test_2_two_gpus(self):
        self.check_burn_step(2)

    def test_2b_many_tasks_one_line(self):
        # The line comes once per node, after the last task (here the 16th);
        # the record lists every task's exit.
        out = self.cluster.run(["srun", "-n", "16", "--overcommit", "--gres=gpu:1", "bash", "-c",
                                "sleep 0.$((SLURM_PROCID / 15 * 5)); exit $((SLURM_PROCID / 15))"])
        self.assertNotEqual(out.returncode, 0, out.stderr)
        lines = zeus_lines(out.stderr)
        self.assertEqual(len(lines), 1, out.stderr)
        record = self.cluster.record(job_id_of(lines[0]), "0")
        self.assertEqual(sorted(record["tasks"], key=lambda t: t["task"]),
                         [{"task": t, "exit_code": int(t == 15)} for t in range(16)])
        self.assertIsNone(record["reason"], record)

    def test_3_failing_batch_job(self):
        out_path = os.path.join(self.dir, "failing.out")
        err_path = os.path.join(self.dir, "failing.err")
        before = self.cluster.truth()
        out = self.cluster.run(["sbatch", "--wait", "--gres=gpu:1", "-o", out_path, "-e", err_path, "--wrap",
                                "zeus-sim burn --gpu $SLURM_JOB_GPUS --seconds 1; exit 3"])
        after = self.cluster.truth()
        self.assertNotEqual(out.returncode, 0, out.stdout + out.stderr)
        job_id = job_id_of(out.stdout)
        record = self.cluster.record(job_id, "batch")
        self.assertEqual(record["gpu_source"], "SLURM_JOB_GPUS")
        self.assertEqual(record["tasks"], [{"task": 0, "exit_code": 3}])
        with open(out_path) as f:
            burned = burn_truths(f.read())
        (gpu, burn), = burned.items()
        self.assertEqual(record["gpus"], [gpu])
        self.assert_energy_between(record, gpu, burn, after[gpu] - before[gpu])
        with open(err_path) as f:
            lines = zeus_lines(f.read())
        self.assertEqual(len(lines), 1, lines)
        self.assertIn(f"zeus: job {job_id} step batch on {NODE}: GPU {gpu}: {record['total_energy_j']:.3f} J",
                      lines[0])
        # The job's own record, prolog to epilog, holds the batch step.
        job = self.cluster.record(job_id, "job")
        self.assertEqual(job["gpus"], [gpu])
        self.assertEqual(job["gpu_source"], "SLURM_JOB_GPUS")
        self.assertIsNone(job["reason"], job)
        self.assertGreaterEqual(job["gpu_energy_j"][str(gpu)], record["gpu_energy_j"][str(gpu)] - EDGE_J, job)
        self.assertLess(job["gpu_energy_j"][str(gpu)], after[gpu] - before[gpu] + EDGE_J, job)

    def test_4_cancelled_job(self):
        before = self.cluster.truth()
        out = self.cluster.run(["sbatch", "--gres=gpu:1", "-o", "/dev/null", "--wrap",
                                "zeus-sim burn --gpu $SLURM_JOB_GPUS --seconds 60 & wait"])
        self.assertEqual(out.returncode, 0, out.stderr)
        job_id = job_id_of(out.stdout)
        try:
            busy = wait_for(lambda: [g for g, n in self.cluster.active_loads().items() if n], 20,
                            "the cancelled job's burn to start")
            self.assertEqual(len(busy), 1, busy)
            gpu = busy[0]
            loaded = self.cluster.truth()
            time.sleep(0.5)
            cancelled = self.cluster.truth()
        finally:
            self.assertEqual(self.cluster.run(["scancel", str(job_id)]).returncode, 0)
        record = self.cluster.record(job_id, "batch")
        after = self.cluster.truth()
        self.assertEqual(record["gpus"], [gpu])
        self.assertEqual(len(record["tasks"]), 1, record)
        self.assertEqual(record["tasks"][0].get("signal"), signal.SIGTERM, record)  # the shell, killed by scancel
        self.assert_energy_between(record, gpu, cancelled[gpu] - loaded[gpu], after[gpu] - before[gpu])

    def test_5_two_jobs_at_once(self):
        before = self.cluster.truth()
        scripts = ['echo gpu=$SLURM_STEP_GPUS; zeus-sim burn --gpu $SLURM_STEP_GPUS --seconds 2',
                   'echo gpu=$SLURM_STEP_GPUS; zeus-sim burn --gpu $SLURM_STEP_GPUS --seconds 1 --util 0.3']
        runs = [subprocess.Popen(["srun", "--gres=gpu:1", "bash", "-c", s], env=self.cluster.env, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE) for s in scripts]
        outputs = [r.communicate(timeout=60) for r in runs]
        after = self.cluster.truth()
        gpus, windows = [], []
        for (stdout, stderr), run in zip(outputs, runs):
            self.assertEqual(run.returncode, 0, stdout + stderr)
            (gpu, burn), = burn_truths(stdout).items()
            gpus.append(gpu)
            lines = zeus_lines(stderr)
            self.assertEqual(len(lines), 1, stderr)
            record = self.cluster.record(job_id_of(lines[0]), "0")
            self.assertEqual(record["gpus"], [gpu], record)
            self.assert_energy_between(record, gpu, burn, after[gpu] - before[gpu])
            windows.append((record["start_unix_s"], record["end_unix_s"]))
        self.assertEqual(sorted(gpus), [0, 1], outputs)
        # They ran at once: each started before the other ended.
        self.assertLess(max(w[0] for w in windows), min(w[1] for w in windows), windows)

    def unmeasured_step(self, restore):
        """Runs a 1-GPU step that must run whatever the plugin meets; calls `restore` after it; its one zeus line."""
        try:
            out = self.cluster.run(["srun", "--gres=gpu:1", "bash", "-c", "echo ran"])
        finally:
            restore()
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.strip(), "ran")
        lines = zeus_lines(out.stderr)
        self.assertEqual(len(lines), 1, out.stderr)
        return lines[0]

    def test_6_zeusd_down(self):
        self.cluster.stop("zeusd")
        line = self.unmeasured_step(self.cluster.start_zeusd)
        self.assertIn("GPU energy not measured: no reading at its start", line)
        self.assertIn(self.cluster.zeusd_socket, line)
        record = self.cluster.record(job_id_of(line), "0")
        self.assertIsNone(record["total_energy_j"])
        self.assertIn(self.cluster.zeusd_socket, record["reason"])

    def test_7_invalid_option(self):
        self.cluster.write_plugstack(f"spool={self.cluster.spool}", "colour=blue")
        line = self.unmeasured_step(self.cluster.default_plugstack)
        self.assertIn('option "colour=blue" in plugstack.conf is not an option of this plugin', line)
        log = wait_for(lambda: "colour=blue" in self.cluster.log("slurmd.log") and self.cluster.log("slurmd.log"),
                       10, "slurmd's log to name the option")
        self.assertIn("this job runs without its GPU energy measured", log)

    def test_8_spool_not_writable(self):
        # /proc refuses new folders even to root: the line says so, the job runs.
        self.cluster.write_plugstack("spool=/proc/zeus-slurm", f"zeusd=unix:{self.cluster.zeusd_socket}")
        line = self.unmeasured_step(self.cluster.default_plugstack)
        self.assertRegex(line, r": GPU \d: [0-9.]+ J in [0-9.]+ s \(record not saved: cannot create the spool folder "
                               r"/proc/zeus-slurm/job-\d+: ")

    def require_whole_node(self):
        online = set().union(*package_cpus().values())
        if not online <= set(ALLOWED_CPUS) or len(ALLOWED_CPUS) != SLURM_CPUS:
            self.skipTest(f"this test may run on CPUs {ALLOWED_CPUS} of {sorted(online)}: a job cannot hold "
                          "every CPU package")
        if self.cluster.packages != list(range(len(self.cluster.packages))):
            self.skipTest(f"package ids {self.cluster.packages} are not zeusd's RAPL zone numbers 0..N-1")

    def whole_node_step(self, advance):
        """An `srun --exclusive` step on one GPU that waits while `advance()` runs; its line and record."""
        done = os.path.join(self.dir, f"done-{time.monotonic_ns()}")
        script = f"echo started; while [ ! -e {done} ]; do sleep 0.05; done"
        run = subprocess.Popen(["srun", "--exclusive", "--gres=gpu:1", "bash", "-c", script], env=self.cluster.env,
                               text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            # The step's start counters are read before its task runs.
            self.assertEqual(run.stdout.readline().strip(), "started")
            advance()
        finally:
            open(done, "w").close()
        _, stderr = run.communicate(timeout=60)
        self.assertEqual(run.returncode, 0, stderr)
        lines = zeus_lines(stderr)
        self.assertEqual(len(lines), 1, stderr)
        return lines[0], self.cluster.record(job_id_of(lines[0]), "0")

    def test_9_whole_node_cpu_and_dram_energy(self):
        self.require_whole_node()
        packages = self.cluster.packages
        advanced = {(n, kind): 0 for n in packages for kind in ("package", "dram")}

        def advance():
            # In steps of a few joules: zeusd takes a jump beyond 1000 W for a glitch.
            for step in range(6):
                for n in packages:
                    for kind, uj in (("package", 2_000_000 + 1_234 * n + step), ("dram", 700_001 * (n + 1))):
                        self.cluster.advance_rapl(n, kind, uj)
                        advanced[(n, kind)] += uj
                time.sleep(0.05)

        line, record = self.whole_node_step(advance)
        self.assertIsNone(record["reason"], record)
        self.assertIsNone(record["cpu_reason"], record)
        self.assertEqual(record["cpu_packages"], packages)
        for n in packages:
            self.assertAlmostEqual(record["cpu_energy_j"][str(n)], advanced[(n, "package")] / 1e6, places=6)
            self.assertAlmostEqual(record["dram_energy_j"][str(n)], advanced[(n, "dram")] / 1e6, places=6)
        cpu_j = sum(advanced[(n, "package")] for n in packages) / 1e6
        dram_j = sum(advanced[(n, "dram")] for n in packages) / 1e6
        which = ("CPU package " if len(packages) == 1 else "CPU packages ") + ",".join(map(str, packages))
        self.assertIn(f" s; {which}: {cpu_j:.3f} J, DRAM: {dram_j:.3f} J (record ", line)

    def test_9b_zeusd_without_cpu_read(self):
        self.require_whole_node()
        self.cluster.stop("zeusd")
        self.cluster.start_zeusd("--enable", "gpu-read,gpu-control")
        try:
            line, record = self.whole_node_step(lambda: None)
        finally:
            self.cluster.stop("zeusd")
            self.cluster.start_zeusd()
        self.assertIsNone(record["reason"], record)  # the GPU is measured all the same
        self.assertIsNone(record["cpu_energy_j"], record)
        self.assertIsNone(record["dram_energy_j"], record)
        self.assertIn("cpu-read", record["cpu_reason"])
        self.assertIn(" not measured: no reading at its start: ", line)


if __name__ == "__main__":
    if None in (PLUGIN, ZEUSD, ZEUS_SIM, SIM_LIBRARY):
        sys.exit(__doc__)
    missing = missing_programs()
    if missing:
        print(f"SKIPPED: Slurm is not installed here ({', '.join(missing)} missing); scripts/setup.sh installs "
              "slurmctld, slurmd, slurm-client and munge", file=sys.stderr)
        sys.exit(SKIP)
    if os.geteuid() != 0:
        print("SKIPPED: a single-node Slurm needs root (slurmd runs jobs as their users)", file=sys.stderr)
        sys.exit(SKIP)
    unittest.main(argv=sys.argv[:1], verbosity=2)
