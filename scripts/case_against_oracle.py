"""Run corpus cases against real pytorch-lightning 1.9.5 and print the first differences.

For checking that a case fails when a rule's handling of a ledger fact is removed (issue 26,
``seen_to_fail`` in lightmigrate/catalog/semantics.py): edit the rule in a scratch copy, run

    PYTHONPATH=$PWD .venv/bin/python scripts/case_against_oracle.py corpus/CASE.py [...]

and revert the edit. The 1.9.5 side of a case does not depend on the rules, so its results are
kept in a cache folder (``--cache``, keyed by the case's text) and reused on the next run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

from lightmigrate.verify.compare import compare_results, format_differences
from lightmigrate.verify.oracle import engine_migrate, run_migrated, run_original


def _original(cases, cache: Path, python):
    results = {"side": "v1", "cases": {}}
    todo = []
    for case in cases:
        key = hashlib.sha256(case.read_bytes()).hexdigest()[:16]
        path = cache / f"{case.stem}-{key}.json"
        if path.exists():
            results["cases"][case.stem] = json.loads(path.read_text(encoding="utf-8"))
        else:
            todo.append((case, path))
    if todo:
        fresh = run_original([c for c, _ in todo], python)
        for case, path in todo:
            record = fresh["cases"][case.stem]
            if not record.get("error"):
                path.write_text(json.dumps(record), encoding="utf-8")
            results["cases"][case.stem] = record
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="+", type=Path)
    parser.add_argument("--oracle", default=os.environ.get("LIGHTMIGRATE_ORACLE_PYTHON"))
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "lightmigrate-v1-cache")
    parser.add_argument("--max", type=int, default=6, help="differences shown per case")
    args = parser.parse_args(argv)
    args.cache.mkdir(parents=True, exist_ok=True)
    cases = [c.resolve() for c in args.cases]
    expected = _original(cases, args.cache, args.oracle)
    actual = run_migrated(cases, engine_migrate())
    diffs = compare_results(expected, actual)
    for case in cases:
        mine = [d for d in diffs if d.case == case.stem]
        print(f"{case.name}: {'match' if not mine else f'{len(mine)} differences'}")
        if mine:
            print(format_differences(mine[:args.max]))
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
