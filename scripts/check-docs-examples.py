#!/usr/bin/env python3
"""Runs every example of the documentation's user pages (scripts/docs_nav.py),
so that an example that stops working fails CI.

- Each fenced ```python block is type-checked with mypy against the installed
  zeus_native (its stubs), then run on the GPU simulator (ZEUS_SIMULATE=1) in a
  fresh directory. Fragments may use names they do not define (`model`,
  `loader`): mypy's name-defined check is off, every other check is on.
- Each fenced ```sh / ```bash block is run with bash -euo pipefail in a fresh
  directory where build/, data/ and packaging/ point into this checkout, so
  `build/bin/zeus ... --simulate` runs the programs just built. Processes a
  block starts in the background are killed when it ends.
- An HTML comment on the line before a block changes that:
    <!-- no-run: REASON -->            never run (a real GPU, root, the
                                        internet, a cluster); Python blocks
                                        are still type-checked
    <!-- docs-example: needs torch [transformers] -->
                                        run only with those packages: their
                                        directories in ZEUS_DOCS_FRAMEWORKS
                                        (a PYTHONPATH: what scripts/setup-
                                        frameworks.sh and setup-trackers.sh
                                        print); otherwise reported as skipped
    A block of another language (yaml, text, cpp, json...) is not run.

Usage: check-docs-examples.py [--only PAGE] [--list] [--timeout S]"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from docs_nav import ROOT, user_pages  # noqa: E402

RUNNABLE = {"python": "python", "sh": "sh", "bash": "sh", "shell": "sh"}
MARKER = re.compile(r"<!--\s*(no-run|docs-example)\s*:\s*(.*?)\s*-->")
# What a shell example may reach in its scratch directory.
LINKED_PATHS = ("build", "data", "packaging")


@dataclass
class Example:
    page: Path
    line: int  # of the opening fence, 1-based
    kind: str  # "python" or "sh"
    code: str
    no_run: str | None = None  # the reason
    needs: list[str] = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def examples_of(page: Path) -> list[Example]:
    lines = page.read_text(encoding="utf-8").split("\n")
    found: list[Example] = []
    i = 0
    while i < len(lines):
        fence = re.match(r"^(\s*)(```+)\s*([\w+-]*)", lines[i])
        if not fence:
            i += 1
            continue
        indent, ticks, lang = fence.groups()
        end = i + 1
        while end < len(lines) and not lines[end].strip().startswith(ticks):
            end += 1
        if end == len(lines):
            raise SystemExit(f"{page.relative_to(ROOT)}:{i + 1}: a code fence that is never closed")
        kind = RUNNABLE.get(lang.lower())
        if kind:
            code = "\n".join(line[len(indent):] for line in lines[i + 1:end]) + "\n"
            example = Example(page, i + 1, kind, code)
            previous = lines[i - 1].strip() if i > 0 else ""
            marker = MARKER.fullmatch(previous)
            if marker:
                what, value = marker.groups()
                if what == "no-run":
                    if not value:
                        raise SystemExit(f"{example.where}: <!-- no-run: --> needs a reason")
                    example.no_run = value
                elif value.startswith("needs "):
                    example.needs = value.split()[1:]
                else:
                    raise SystemExit(f"{example.where}: unknown marker '{previous}' "
                                     "(use <!-- no-run: REASON --> or <!-- docs-example: needs PACKAGE... -->)")
            found.append(example)
        i = end + 1
    return found


def type_check(examples: list[Example], scratch: Path) -> list[str]:
    """mypy over every Python example at once; returns one failure per example."""
    python_examples = [e for e in examples if e.kind == "python"]
    if not python_examples:
        return []
    files = {}
    for n, example in enumerate(python_examples):
        path = scratch / f"example_{n}.py"
        path.write_text(example.code)
        files[path.name] = example
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--ignore-missing-imports", "--disable-error-code", "name-defined",
         "--no-error-summary", "--cache-dir", str(scratch / ".mypy_cache"), "--python-executable", sys.executable,
         *sorted(files)],
        cwd=scratch, capture_output=True, text=True)
    failures: dict[str, list[str]] = {}
    for line in run.stdout.splitlines():
        name = line.split(":", 1)[0]
        if name in files and ": error:" in line:
            example = files[name]
            number, message = line.split(":", 2)[1:]
            failures.setdefault(name, []).append(f"line {example.line + int(number)}:{message}")
    if run.returncode not in (0, 1) or (run.returncode == 1 and not failures):
        return [f"mypy failed to run (exit {run.returncode}):\n{run.stdout}{run.stderr}"]
    return [f"{files[name].where}: mypy: " + "; ".join(messages) for name, messages in failures.items()]


def run_example(example: Example, scratch: Path, timeout: float, frameworks: str | None) -> str | None:
    """Runs one example; None when it passed, else why it failed."""
    workdir = Path(tempfile.mkdtemp(prefix="example-", dir=scratch))
    env = dict(os.environ)
    env["ZEUS_SIMULATE"] = "1"
    for name in ("ZEUS_SIM_CONFIG", "ZEUS_SIM_STATE", "ZEUSD_SOCK_PATH", "ZEUSD_HOST_PORT", "ZEUSD_TOKEN"):
        env.pop(name, None)
    if example.kind == "python":
        (workdir / "example.py").write_text(example.code)
        command = [sys.executable, "example.py"]
        if example.needs and frameworks:
            env["PYTHONPATH"] = frameworks
            env["HF_HUB_OFFLINE"] = "1"
            env["HF_HUB_DISABLE_TELEMETRY"] = "1"
            env["MLFLOW_DISABLE_TELEMETRY"] = "true"  # mlflow's usage reports: nothing leaves the machine
            env["DO_NOT_TRACK"] = "true"
            env["TOKENIZERS_PARALLELISM"] = "false"
            env["HF_HOME"] = str(workdir / "hf-home")
    else:
        for name in LINKED_PATHS:
            (workdir / name).symlink_to(ROOT / name)
        (workdir / "example.sh").write_text(example.code)
        command = ["bash", "-euo", "pipefail", "example.sh"]
        env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"  # python3 is the venv's
    log = workdir / "output.log"
    with log.open("w") as output_file:  # a file, not a pipe: a server the block left running keeps a pipe open
        process = subprocess.Popen(command, cwd=workdir, env=env, stdout=output_file, stderr=subprocess.STDOUT,
                                   start_new_session=True)
        try:
            process.wait(timeout=timeout)
            failed, reason = process.returncode != 0, f"exit status {process.returncode}"
        except subprocess.TimeoutExpired:
            failed, reason = True, f"still running after {timeout:.0f} s"
        finally:
            try:  # the block itself if it timed out, and whatever it left in the background
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait()
    output = log.read_text(errors="replace")
    if failed:
        tail = "\n".join(output.splitlines()[-25:])
        return f"{example.where}: {example.kind} example failed ({reason}):\n{example.code}--- output ---\n{tail}"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="only the pages whose path contains this")
    parser.add_argument("--list", action="store_true", help="list the examples and what will happen to each")
    parser.add_argument("--timeout", type=float, default=180, help="seconds per example (default 180)")
    args = parser.parse_args()

    examples = [e for page in user_pages() if not args.only or args.only in str(page) for e in examples_of(page)]
    frameworks = os.environ.get("ZEUS_DOCS_FRAMEWORKS") or None
    if args.list:
        for e in examples:
            what = f"not run: {e.no_run}" if e.no_run else (f"needs {' '.join(e.needs)}" if e.needs else "run")
            print(f"{e.where:45s} {e.kind:6s} {what}")
        return 0

    failures: list[str] = []
    ran = skipped = 0
    with tempfile.TemporaryDirectory(prefix="docs-examples-") as scratch_name:
        scratch = Path(scratch_name)
        failures += type_check(examples, scratch)
        for example in examples:
            if example.no_run:
                continue
            if example.needs and not frameworks:
                skipped += 1
                continue
            started = time.monotonic()
            failure = run_example(example, scratch, args.timeout, frameworks)
            ran += 1
            status = "FAILED" if failure else "ok"
            print(f"check-docs-examples: {example.where} ({example.kind}) {status} in {time.monotonic() - started:.1f} s",
                  flush=True)
            if failure:
                failures.append(failure)
    typed = sum(e.kind == "python" for e in examples)
    not_run = sum(bool(e.no_run) for e in examples)
    print(f"check-docs-examples: {ran} examples ran, {typed} Python examples type-checked, {not_run} marked no-run"
          + (f", {skipped} skipped (need packages: set "
             "ZEUS_DOCS_FRAMEWORKS=$(scripts/setup-frameworks.sh):$(scripts/setup-trackers.sh))"
             if skipped else ""))
    for failure in failures:
        print(f"check-docs-examples: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
