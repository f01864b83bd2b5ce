"""How long `lightmigrate verify` takes (goals, issue 22: one tiny case at most 3 s wall including
start-up; the bundled corpus outside ``pending/`` at most 60 s on a 2-core machine).

    .venv/bin/python bench/verify_speed.py                  # all figures, reference = the v1 shim
    .venv/bin/python bench/verify_speed.py --oracle .venv-pl19/bin/python
    .venv/bin/python bench/verify_speed.py --skip-corpus --repeat 5

Runs the real command (a subprocess, as a user would), with a warm-worker folder of its own
(so no worker is running at first, and the one it starts is stopped at the end), and reports
for the tiny case: the cold run without a worker (``--no-server``: one fresh interpreter per
side), the first call (starts the warm worker, which imports torch + Lightning), and warm
calls (median over ``--repeat``); then the whole corpus twice on the warm workers (the first
run may start the 1.x interpreter's worker for the cases the shim cannot run; the second is the
figure of the goal), optionally cold (``--corpus-cold``), and where a warm call's time goes.
Each figure comes with the wall time, the CPU time (user + system) of the command, its
subprocesses AND the warm workers with their children, and the machine's load average before:
on a shared machine the wall time mostly measures the other users, the CPU time much less so.
Without ``$LIGHTMIGRATE_ORACLE_PYTHON`` (or a ``.venv-pl19`` next to ``bench/``) the cases the
shim cannot run are errors, as they would be for a user.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
TINY_CASE = ROOT / "corpus" / "validation_single_loader.py"
GOAL_TINY = 3.0
GOAL_CORPUS = 60.0
TICKS = os.sysconf("SC_CLK_TCK")


def corpus_paths() -> List[str]:
    """Every bundled case outside ``pending/``: the single-file cases, the projects, the published."""
    corpus = ROOT / "corpus"
    return [*map(str, sorted(corpus.glob("*.py"))), str(corpus / "projects"), str(corpus / "published")]


def worker_pids(folder: Path) -> List[int]:
    """The warm workers listening in ``folder`` (they answer an echo job with their pid)."""
    from lightmigrate.verify import warm

    pids = []
    for sock in folder.glob("*.sock"):
        try:
            conn = warm._try_connect(str(sock))
            if conn is None:
                continue
            conn.sendall(json.dumps({"call": "echo", "args": {}}).encode() + b"\n")
            reply = b""
            while chunk := conn.recv(1 << 16):
                reply += chunk
            conn.close()
            pids.append(json.loads(reply)["result"]["ppid"])
        except (OSError, ValueError, warm.ServerError):
            pass
    return pids


def worker_cpu(pid: int) -> float:
    """CPU seconds of a worker and of its reaped children (each job's child)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / TICKS  # utime stime cutime cstime


class Bench:
    def __init__(self, oracle: Optional[str]) -> None:
        self.oracle = oracle
        self.folder = Path(tempfile.mkdtemp(prefix="lmbench-"))
        self.env = {**os.environ, "PYTHONPATH": str(ROOT), "LIGHTMIGRATE_VERIFY_SERVER_DIR": str(self.folder),
                    "LIGHTMIGRATE_VERIFY_SERVER": "1"}

    def timed(self, cmd: Sequence[str]) -> Tuple[subprocess.CompletedProcess, float, float, float]:
        """(process, wall s, CPU s of it, its children and the warm workers, 1-minute load before)."""
        load = os.getloadavg()[0]
        workers = {pid: worker_cpu(pid) for pid in worker_pids(self.folder)}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=self.env)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        time.sleep(1.2)  # a worker reaps its children within a second: then their time is its own
        cpu += sum(worker_cpu(pid) - workers.get(pid, 0.0) for pid in worker_pids(self.folder))
        return proc, wall, cpu, load

    def run_verify(self, paths: Sequence[str], *flags: str) -> Tuple[dict, float, float, float]:
        cmd = [sys.executable, "-m", "lightmigrate", "verify", "--output-format", "json",
               *(["--oracle", self.oracle] if self.oracle else []), *flags, *paths]
        proc, wall, cpu, load = self.timed(cmd)
        if proc.returncode not in (0, 1, 2) or not proc.stdout.strip().startswith("{"):
            sys.exit(f"verify failed (exit {proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
        return json.loads(proc.stdout), wall, cpu, load

    def stop(self) -> None:
        for pid in worker_pids(self.folder):
            os.kill(pid, signal.SIGTERM)
        shutil.rmtree(self.folder, ignore_errors=True)


def tiny_line(label: str, doc: dict, wall: float, cpu: float, load: float) -> str:
    (case,) = doc["cases"]
    notes = "; ".join(doc.get("notes") or [])
    return (f"  {label}: {wall:.2f} s wall, {cpu:.2f} s CPU (all processes), load {load:.1f}; verdict "
            f"{case['verdict']}; verify's own time {doc['seconds']:.2f} s, of which the case itself: reference "
            f"{case['seconds']['reference']} s, migrated {case['seconds']['migrated']} s" + (f"; {notes}" if notes else ""))


def startup_breakdown(bench: Bench) -> None:
    """Where the start-up goes, each part in a fresh interpreter (wall / CPU s)."""
    parts = [
        ("interpreter start", "pass"),
        ("import the verify command (click, engine, rules, libcst): every call",
         "import lightmigrate.cli, lightmigrate.verify.session, lightmigrate.verify.render"),
        ("import torch + Lightning (the first call's warm worker; each side of a --no-server run)",
         "import pytorch_lightning"),
        ("first migration in a fresh interpreter (the rules and libcst warming up; the warm worker has it ready)",
         "import time; from lightmigrate.verify.oracle import engine_migrate; m = engine_migrate(); "
         f"t = time.perf_counter(); m(open({str(TINY_CASE)!r}).read()); "
         "print(f'{time.perf_counter() - t:.3f}')"),
    ]
    for label, code in parts:
        proc, wall, cpu, load = bench.timed([sys.executable, "-c", code])
        extra = f" (of which the migration itself {proc.stdout.strip()} s)" if "migration" in label else ""
        print(f"  {label}: {wall:.2f} s wall, {cpu:.2f} s CPU{extra}; load {load:.1f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--oracle", help="a pytorch-lightning 1.x interpreter for the reference side")
    parser.add_argument("--repeat", type=int, default=3, help="warm runs of the tiny case (median reported)")
    parser.add_argument("--skip-corpus", action="store_true")
    parser.add_argument("--corpus-cold", action="store_true", help="also time the corpus with --no-server")
    args = parser.parse_args()
    bench = Bench(args.oracle)
    mode = "--oracle " + args.oracle if args.oracle else "v1 shim"
    print(f"{os.cpu_count()} cores; reference: {mode}; warm-worker folder {bench.folder}")
    try:
        print("tiny case:")
        print(tiny_line("cold, --no-server", *bench.run_verify([str(TINY_CASE)], "--no-server")))
        print(tiny_line("first call (starts the warm worker)", *bench.run_verify([str(TINY_CASE)])))
        walls = []
        for i in range(args.repeat):
            doc, wall, cpu, load = bench.run_verify([str(TINY_CASE)])
            walls.append(wall)
            print(tiny_line(f"warm call {i + 1}", doc, wall, cpu, load))
        tiny = statistics.median(walls)
        print("where the time goes:")
        startup_breakdown(bench)
        print(f"tiny case, warm: median {tiny:.2f} s wall; {'within' if tiny <= GOAL_TINY else 'ABOVE'} "
              f"the {GOAL_TINY} s goal")
        if not args.skip_corpus:
            # the first corpus call may also start the 1.x interpreter's worker (for the cases the
            # shim cannot run, when $LIGHTMIGRATE_ORACLE_PYTHON or .venv-pl19 is there); the second
            # finds every worker running
            runs = [("first corpus call", ()), ("warm", ())]
            runs += [("cold, --no-server", ("--no-server",))] if args.corpus_cold else []
            for label, flags in runs:
                doc, wall, cpu, load = bench.run_verify(corpus_paths(), *flags)
                n = len(doc["cases"])
                print(f"corpus ({label}): {n} cases in {wall:.1f} s wall ({wall / n:.2f} s/case), {cpu:.1f} s CPU "
                      f"(all processes), load {load:.1f} before; {doc['summary']}, exit {doc['exit_code']}; "
                      f"{'within' if wall <= GOAL_CORPUS else 'ABOVE'} the {GOAL_CORPUS} s goal")
    finally:
        bench.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
