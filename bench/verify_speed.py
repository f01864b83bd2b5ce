"""How long `lightmigrate verify` takes (goals, issue 22: one tiny case at most 3 s wall including
start-up; the bundled corpus outside ``pending/`` at most 60 s on a 2-core machine).

    .venv/bin/python bench/verify_speed.py                  # both figures, reference = the v1 shim
    .venv/bin/python bench/verify_speed.py --oracle .venv-pl19/bin/python
    .venv/bin/python bench/verify_speed.py --skip-corpus --repeat 5

Runs the real command (a subprocess, as a user would) and reports, for the tiny case (median
over ``--repeat`` runs) and for the whole corpus (one run), the wall time, the CPU time (user +
system) of the command and all its subprocesses, and the machine's load average: on a shared
machine the wall time mostly measures the other users, the CPU time much less so. For the tiny
case it also says where the start-up goes: interpreter start, importing lightmigrate's verify
command, importing Lightning (each side does it, side by side), migrating the case, and the
case itself (the runner's own timing).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import List, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
TINY_CASE = ROOT / "corpus" / "validation_single_loader.py"
GOAL_TINY = 3.0
GOAL_CORPUS = 60.0


def corpus_paths() -> List[str]:
    """Every bundled case outside ``pending/``: the single-file cases, the projects, the published."""
    corpus = ROOT / "corpus"
    return [*map(str, sorted(corpus.glob("*.py"))), str(corpus / "projects"), str(corpus / "published")]


def timed(cmd: Sequence[str]) -> Tuple[subprocess.CompletedProcess, float, float, float]:
    """(process, wall s, CPU s of it and its children, 1-minute load average before)."""
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return proc, wall, cpu, load


def verify_cmd(paths: Sequence[str], oracle: str = None) -> List[str]:
    return [sys.executable, "-m", "lightmigrate", "verify", "--output-format", "json",
            *(["--oracle", oracle] if oracle else []), *paths]


def run_verify(paths: Sequence[str], oracle: str = None) -> Tuple[dict, float, float, float]:
    proc, wall, cpu, load = timed(verify_cmd(paths, oracle))
    if proc.returncode not in (0, 1, 2) or not proc.stdout.strip().startswith("{"):
        sys.exit(f"verify failed (exit {proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout), wall, cpu, load


def startup_breakdown() -> None:
    """Where a tiny case's start-up goes, each part in a fresh interpreter (wall / CPU s)."""
    parts = [
        ("interpreter start", "pass"),
        ("import the verify command (click, engine, rules, libcst)",
         "import lightmigrate.cli, lightmigrate.verify.session, lightmigrate.verify.render"),
        ("import torch + Lightning (once per side, both sides at once)", "import pytorch_lightning"),
        ("migrate the tiny case (libcst)",
         "import time; from lightmigrate.verify.oracle import engine_migrate; m = engine_migrate(); "
         f"t = time.perf_counter(); m(open({str(TINY_CASE)!r}).read()); "
         "print(f'{time.perf_counter() - t:.3f}')"),
    ]
    for label, code in parts:
        proc, wall, cpu, load = timed([sys.executable, "-c", code])
        extra = f" (of which the migration itself {proc.stdout.strip()} s)" if "migrate" in label else ""
        print(f"  {label}: {wall:.2f} s wall, {cpu:.2f} s CPU{extra}; load {load:.1f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--oracle", help="a pytorch-lightning 1.x interpreter for the reference side")
    parser.add_argument("--repeat", type=int, default=3, help="runs of the tiny case (median reported)")
    parser.add_argument("--skip-corpus", action="store_true")
    args = parser.parse_args()
    mode = "--oracle " + args.oracle if args.oracle else "v1 shim"
    print(f"{os.cpu_count()} cores; reference: {mode}")

    walls = []
    for i in range(args.repeat):
        doc, wall, cpu, load = run_verify([str(TINY_CASE)], args.oracle)
        (case,) = doc["cases"]
        walls.append(wall)
        print(f"tiny case run {i + 1}: {wall:.2f} s wall, {cpu:.2f} s CPU (all processes), load {load:.1f}; "
              f"verdict {case['verdict']}; the case itself: reference {case['seconds']['reference']} s, "
              f"migrated {case['seconds']['migrated']} s")
    tiny = statistics.median(walls)
    print("where a tiny case's start-up goes:")
    startup_breakdown()
    print(f"tiny case: median {tiny:.2f} s wall; {'within' if tiny <= GOAL_TINY else 'ABOVE'} the {GOAL_TINY} s goal")

    if not args.skip_corpus:
        doc, wall, cpu, load = run_verify(corpus_paths(), args.oracle)
        n = len(doc["cases"])
        print(f"corpus: {n} cases in {wall:.1f} s wall ({wall / n:.2f} s/case), {cpu:.1f} s CPU (all processes), "
              f"load {load:.1f} before; {doc['summary']}, exit {doc['exit_code']}; "
              f"{'within' if wall <= GOAL_CORPUS else 'ABOVE'} the {GOAL_CORPUS} s goal")
    return 0


if __name__ == "__main__":
    sys.exit(main())
