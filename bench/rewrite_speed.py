"""How fast is ``lightmigrate rewrite --check`` on big trees?

    python bench/rewrite_speed.py [--runs 5] [--jobs N] [--cache DIR]

Two comparisons, each timed as alternating runs (ours, theirs, ours, theirs, ...) of fresh
processes, reporting the median wall time, the ratio, and the peak memory (the largest
resident set of any single process of the tool, from ``getrusage(RUSAGE_CHILDREN)`` of a
wrapper process that runs only that command):

1. mixed tree: the ``torch`` and ``lightning`` packages installed in this interpreter, copied
   (``.py`` files only) into the cache: ``lightmigrate rewrite --check --jobs N`` against
   ``ruff check --select E,F,W --no-cache`` (ruff uses every core; it is installed into this
   interpreter from PyPI when missing: ``pip install -c constraints.txt ruff``).
2. Lightning-heavy tree: the .py files of published 1.x-era packages (downloaded once with
   ``pip download --no-deps``): ``lightmigrate rewrite --check --jobs N`` against libcst's
   bare ``parse_module`` of every file of the tree on N processes (and, for reference, of only
   the files that pass lightmigrate's prefilter, which are the ones it parses).

Nothing in the trees is written (``--check``). lightmigrate's own modules are byte-compiled
first, as pip does when it installs a package. Exit status 0; the figures go to stdout.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PUBLISHED = ("lightning-bolts==0.6.0.post1", "pytorch-lightning-bolts==0.3.2.post1",
             "lightning-flash==0.8.1", "pytorch-forecasting==0.10.1")
MIXED_PACKAGES = ("torch", "lightning")

# Runs one command and prints "<seconds> <maxrss KiB>" of it (and its descendants).
_MEASURE = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "dt = time.perf_counter() - t\n"
    "print(dt, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.returncode)\n"
)

# Bare libcst parse of a list of files on N processes (the list is read from a file).
_PARSE = (
    "import sys, libcst\n"
    "from multiprocessing import Pool\n"
    "def parse(path):\n"
    "    try:\n"
    "        with open(path, 'rb') as f:\n"
    "            libcst.parse_module(f.read())\n"
    "        return 1\n"
    "    except Exception:\n"
    "        return 0\n"
    "if __name__ == '__main__':\n"
    "    paths = open(sys.argv[2]).read().split('\\n')\n"
    "    jobs = int(sys.argv[1])\n"
    "    with Pool(jobs) as pool:\n"
    "        ok = sum(pool.imap_unordered(parse, paths, chunksize=4))\n"
    "    print(ok)\n"
)


def py_files(tree: Path) -> list:
    return sorted(str(p) for p in tree.rglob("*.py") if p.is_file())


def site_packages() -> Path:
    import sysconfig

    return Path(sysconfig.get_paths()["purelib"])


def copy_mixed(cache: Path) -> Path:
    tree = cache / "mixed"
    if tree.is_dir():
        return tree
    staging = cache / "mixed.partial"
    shutil.rmtree(staging, ignore_errors=True)
    for name in MIXED_PACKAGES:
        src = site_packages() / name
        for path in src.rglob("*.py"):
            target = staging / name / path.relative_to(src)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    staging.rename(tree)
    return tree


def fetch_published(cache: Path) -> Path:
    tree = cache / "lightning-heavy"
    if tree.is_dir():
        return tree
    downloads = cache / "downloads"
    downloads.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q",
                    "-d", str(downloads), *PUBLISHED], check=True)
    staging = cache / "lightning-heavy.partial"
    shutil.rmtree(staging, ignore_errors=True)
    for archive in sorted(downloads.iterdir()):
        target = staging / archive.name.split("-")[0]
        if archive.suffix in (".whl", ".zip"):
            with zipfile.ZipFile(archive) as z:
                for name in z.namelist():
                    if name.endswith(".py"):
                        z.extract(name, target)
        elif archive.name.endswith((".tar.gz", ".tgz")):
            with tarfile.open(archive) as t:
                members = [m for m in t.getmembers() if m.isfile() and m.name.endswith(".py")]
                t.extractall(target, members=members, filter="data")
    staging.rename(tree)
    return tree


def ensure_ruff() -> list:
    try:
        subprocess.run([sys.executable, "-m", "ruff", "--version"], check=True, capture_output=True)
    except subprocess.CalledProcessError:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "-c", str(ROOT / "constraints.txt"), "ruff"],
                       check=True)
    return [sys.executable, "-m", "ruff"]


def measure(cmd: list, env: dict) -> tuple:
    out = subprocess.run([sys.executable, "-c", _MEASURE, *cmd], capture_output=True, text=True, env=env,
                         check=True).stdout.split()
    return float(out[0]), int(out[1]) / 1024.0, int(out[2])


def compare(label: str, ours: list, theirs: list, their_name: str, runs: int, env: dict) -> None:
    times = {"lightmigrate": [], their_name: []}
    memory = {"lightmigrate": 0.0, their_name: 0.0}
    codes = {}
    for _ in range(runs):
        for name, cmd in (("lightmigrate", ours), (their_name, theirs)):
            seconds, mib, code = measure(cmd, env)
            times[name].append(seconds)
            memory[name] = max(memory[name], mib)
            codes[name] = code
    mine, other = statistics.median(times["lightmigrate"]), statistics.median(times[their_name])
    print(f"\n{label}")
    for name in times:
        runs_text = ", ".join(f"{t:.2f}" for t in times[name])
        print(f"  {name:<28} median {statistics.median(times[name]):7.2f} s  (runs: {runs_text})  "
              f"peak RSS {memory[name]:7.1f} MiB  exit {codes[name]}")
    print(f"  ratio lightmigrate / {their_name}: {mine / other:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--cache", type=Path, default=ROOT / "bench" / ".cache")
    parser.add_argument("--only", choices=["mixed", "heavy"], default=None)
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items()}
    env["CI"] = "1"  # no progress bar
    lightmigrate = [str(Path(sys.executable).with_name("lightmigrate")), "rewrite", "--check", "--jobs", str(args.jobs)]
    print(f"{args.runs} alternating runs each, --jobs {args.jobs}, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f} at start")
    # An installed package has its bytecode compiled (pip does it); a source checkout run with
    # PYTHONDONTWRITEBYTECODE set would compile every module of lightmigrate on each start.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "lightmigrate")], check=True)

    if args.only in (None, "mixed"):
        mixed = copy_mixed(args.cache)
        files = py_files(mixed)
        size = sum(os.path.getsize(f) for f in files) / 1e6
        ruff = ensure_ruff()
        version = subprocess.run([*ruff, "--version"], capture_output=True, text=True).stdout.strip()
        compare(f"mixed tree ({', '.join(MIXED_PACKAGES)}): {len(files)} files, {size:.1f} MB",
                [*lightmigrate, str(mixed)],
                [*ruff, "check", "--select", "E,F,W", "--no-cache", "--exit-zero", "--quiet", str(mixed)],
                f"{version} (all cores)", args.runs, env)

    if args.only in (None, "heavy"):
        heavy = fetch_published(args.cache)
        files = py_files(heavy)
        size = sum(os.path.getsize(f) for f in files) / 1e6
        listing = args.cache / "heavy-files.txt"
        listing.write_text("\n".join(files))
        sys.path.insert(0, str(ROOT))
        from lightmigrate.engine.transform import needs_transform
        from lightmigrate.rules import ALL_RULES

        wanted = [f for f in files if needs_transform(Path(f).read_text(errors="replace"), ALL_RULES)]
        prefiltered = args.cache / "heavy-prefiltered.txt"
        prefiltered.write_text("\n".join(wanted))
        label = f"Lightning-heavy tree ({', '.join(PUBLISHED)}): {len(files)} files, {size:.1f} MB"
        compare(label, [*lightmigrate, str(heavy)], [sys.executable, "-c", _PARSE, str(args.jobs), str(listing)],
                f"libcst.parse_module, all {len(files)} files", args.runs, env)
        compare(f"same tree, parse of only the {len(wanted)} files that pass the prefilter",
                [*lightmigrate, str(heavy)], [sys.executable, "-c", _PARSE, str(args.jobs), str(prefiltered)],
                f"libcst.parse_module, {len(wanted)} files", max(1, args.runs // 2), env)


if __name__ == "__main__":
    main()
