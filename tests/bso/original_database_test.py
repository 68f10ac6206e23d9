#!/usr/bin/env python3
"""`zeus bso-server` pointed at the original server's database refuses to
start, with a message that says so (docs/batch-size-optimizer.md).

The database is made as the original's deployment makes it: its own schema
module (zeus/optimizer/batch_size/server/database/schema.py from Zeus 0.16.0,
read from the installed package) through SQLAlchemy's create_all, and a job
written through its ORM table class. Before, our server created its own tables
beside the original's and answered "Unknown job" for the original's jobs.

Usage: original_database_test.py ZEUS_CLI  (run with .venv/bin/python: Zeus
0.16.0 and SQLAlchemy from scripts/setup-python.sh). Exit 77 (skipped) when
SQLAlchemy or the original package is missing.
"""
import enum
import importlib.util
import os
import subprocess
import sys
import tempfile
import types

ZEUS = sys.argv[1]

try:
    import sqlalchemy
    from sqlalchemy.orm import Session
except ImportError:
    print("SQLAlchemy is not installed: run scripts/setup-python.sh")
    sys.exit(77)
spec = importlib.util.find_spec("zeus")
if spec is None or spec.origin is None:
    print("the original zeus package is not installed: run scripts/setup-python.sh")
    sys.exit(77)
schema_path = os.path.join(os.path.dirname(spec.origin), "optimizer", "batch_size", "server", "database", "schema.py")

# schema.py imports only Stage from the server's job models (pydantic and the
# rest of the package are not needed to make the tables): give it that enum
# under its own name, then run the original module unchanged.
class Stage(enum.Enum):
    Pruning = "Pruning"
    MAB = "MAB"


for name in ("zeus_original_stub", "zeus_original_stub.models"):
    sys.modules[name] = types.ModuleType(name)
sys.modules["zeus_original_stub.models"].Stage = Stage
with open(schema_path) as f:
    source = f.read().replace("from zeus.optimizer.batch_size.server.job.models import Stage",
                              "from zeus_original_stub.models import Stage")
schema = types.ModuleType("original_schema")
sys.modules["original_schema"] = schema  # SQLAlchemy resolves the annotations there
exec(compile(source, schema_path, "exec"), schema.__dict__)

with tempfile.TemporaryDirectory(prefix="zeus-bso-original-db-") as work:
    path = os.path.join(work, "original.db")
    engine = sqlalchemy.create_engine(f"sqlite:///{path}")
    schema.Base.metadata.create_all(engine)
    with Session(engine) as session:
        session.add(schema.JobTable(
            job_id="mnist-original", job_id_prefix="mnist", default_batch_size=128, higher_is_better_metric=True,
            eta_knob=0.5, beta_knob=2.0, target_metric=0.5, max_epochs=100, num_pruning_rounds=2, window_size=10,
            max_power=3000.0, number_of_gpus=1, gpu_model="A100", mab_prior_mean=0.0, mab_prior_precision=0.0,
            mab_num_explorations=2, mab_seed=None, mab_random_generator_state=None, exp_default_batch_size=128,
            stage=Stage.Pruning, min_cost=None, min_cost_batch_size=128))
        session.commit()
    tables_before = sorted(sqlalchemy.inspect(engine).get_table_names())
    engine.dispose()

    env = {k: v for k, v in os.environ.items() if k != "ZEUS_BSO_DATABASE_URL"}
    for how, args, extra_env in (
            ("--database", ["--database", path], {}),
            ("ZEUS_BSO_DATABASE_URL", [], {"ZEUS_BSO_DATABASE_URL": f"sqlite+aiosqlite:///{path}"})):
        run = subprocess.run([ZEUS, "bso-server", "--listen", "127.0.0.1:0", *args], env={**env, **extra_env},
                             capture_output=True, text=True, timeout=60)
        assert run.returncode == 2, f"{how}: exit {run.returncode}: {run.stderr}"
        for part in ("holds the original Zeus batch-size server's tables", "BatchSize", "Job", "Trial",
                     "does not import the original's jobs", "--database"):
            assert part in run.stderr, f"{how}: '{part}' not in: {run.stderr}"
    # Nothing was written beside the original's tables.
    engine = sqlalchemy.create_engine(f"sqlite:///{path}")
    assert sorted(sqlalchemy.inspect(engine).get_table_names()) == tables_before, \
        sqlalchemy.inspect(engine).get_table_names()
    engine.dispose()
print("ok: the original server's database is refused, and left as it was")
