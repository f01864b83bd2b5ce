"""Everything a run reports about a tree, as JSON, for comparing two versions of the engine.

    python scripts/snapshot_run.py OUT.json PATH... [--jobs N] [--unified-imports]

Runs ``rewrite --diff`` through the API (nothing is written) and records, per file: whether it
changed, its diff, its error, its marker count, and every finding and change entry. Two
snapshots taken before and after a speed change must be equal (``cmp`` them): the speed work
of issue 8 must not change a byte of output.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

from lightmigrate.engine.model import Mode
from lightmigrate.engine.run import run
from lightmigrate.rules import ALL_RULES, OPT_IN_RULES


def snapshot(paths, jobs: int, opt_in: bool) -> dict:
    rules = list(ALL_RULES) + (list(OPT_IN_RULES) if opt_in else [])
    report = run(paths, rules, Mode.DIFF, jobs=jobs)
    out = {}
    for f in report.files:
        out[f.path] = {
            "changed": f.changed,
            "diff": f.diff,
            "error": f.error.format() if f.error else None,
            "markers": f.markers,
            "findings": [asdict(x) for x in f.findings],
            "changes": [asdict(x) for x in f.changes],
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--unified-imports", action="store_true")
    args = parser.parse_args()
    data = snapshot(args.paths, args.jobs, args.unified_imports)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, sort_keys=True, default=str)
    changed = sum(1 for v in data.values() if v["changed"])
    print(f"{len(data)} files, {changed} changed, "
          f"{sum(len(v['findings']) for v in data.values())} findings -> {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
