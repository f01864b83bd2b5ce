"""How long `lightmigrate verify` takes per corpus case (goal: at most 1.5 s per case on a
2-core machine).

    .venv/bin/python bench/verify_speed.py                 # reference = the v1 shim on 2.x
    .venv/bin/python bench/verify_speed.py --oracle .venv-pl19/bin/python
    .venv/bin/python bench/verify_speed.py --repeat 3 corpus/

Runs the real command (a subprocess, as a user would) ``--repeat`` times and reports, per run,
the wall time per case, plus the median over runs, and where the time goes: interpreter start
and Lightning import per side versus the cases themselves (from the runner's own timings).
It also reports the CPU time (user + system) of the command and all its subprocesses per case,
and the machine's load average: on a shared machine the wall time mostly measures the other
users, the CPU time much less so.
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

ROOT = Path(__file__).resolve().parent.parent
GOAL_SECONDS_PER_CASE = 1.5


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", default=[str(ROOT / "corpus")])
    parser.add_argument("--oracle", help="a pytorch-lightning 1.x interpreter for the reference side")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    cmd = [sys.executable, "-m", "lightmigrate", "verify", "--output-format", "json", *args.paths]
    if args.oracle:
        cmd[4:4] = ["--oracle", args.oracle]
    per_case = []
    for i in range(args.repeat):
        load = os.getloadavg()[0]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if proc.returncode not in (0, 1, 2) or not proc.stdout.strip().startswith("{"):
            print(proc.stdout[-2000:], proc.stderr[-2000:], file=sys.stderr)
            return proc.returncode
        doc = json.loads(proc.stdout)
        n = len(doc["cases"])
        ref = sum(c["seconds"]["reference"] or 0 for c in doc["cases"])
        new = sum(c["seconds"]["migrated"] or 0 for c in doc["cases"])
        per_case.append(wall / n)
        print(f"run {i + 1}: {n} cases in {wall:.2f} s wall = {wall / n:.3f} s/case "
              f"(cases alone: reference {ref / n:.3f} s/case, migrated {new / n:.3f} s/case; "
              f"the rest is interpreter start, Lightning import and migration); "
              f"CPU {cpu:.1f} s = {cpu / n:.3f} CPU s/case (both sides, all processes); load average {load:.1f} "
              f"on {os.cpu_count()} cores")
    median = statistics.median(per_case)
    verdict = "within" if median <= GOAL_SECONDS_PER_CASE else "ABOVE"
    mode = "--oracle " + args.oracle if args.oracle else "v1 shim"
    print(f"median {median:.3f} s per case over {args.repeat} runs ({mode}); {verdict} the "
          f"{GOAL_SECONDS_PER_CASE} s goal")
    return 0


if __name__ == "__main__":
    sys.exit(main())
