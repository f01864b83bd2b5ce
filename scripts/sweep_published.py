"""Run the published-package sweep by hand and print its tables (a dev script).

    .venv/bin/python scripts/sweep_published.py [--work DIR] [--cache DIR] [--select LM001,...]
                                                [--exclude LM090] [PACKAGE==VERSION ...]

Downloads the pinned wheels (cached), migrates a copy of their sources with the rules, checks
that every output parses and that a second run changes nothing, and counts the removed 1.x APIs
left without a ``# TODO(lightmigrate)`` marker (see lightmigrate/verify/sweep.py). Exit status 1
when anything failed or the count is not 0. The same checks run in tests/test_published_sweep.py.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lightmigrate.rules import ALL_RULES  # noqa: E402
from lightmigrate.verify.sweep import PACKAGES, sweep  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("packages", nargs="*", default=list(PACKAGES))
    ap.add_argument("--work", type=Path, help="scratch folder for the extracted sources (default: a temp dir)")
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "lightmigrate-sweep-wheels")
    ap.add_argument("--v1-python", default=str(ROOT / ".venv-pl19" / "bin" / "python"))
    ap.add_argument("--v2-python", default=sys.executable)
    ap.add_argument("--select", default="", help="comma-separated rule codes to run (default: all)")
    ap.add_argument("--exclude", default="", help="comma-separated rule codes to leave out")
    args = ap.parse_args(argv)
    select = [c for c in args.select.split(",") if c]
    exclude = [c for c in args.exclude.split(",") if c]
    rules = [r for r in ALL_RULES if (not select or r.code in select) and r.code not in exclude]
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        result = sweep(work, args.cache, args.v1_python, args.v2_python, args.packages, rules,
                       constraints=ROOT / "constraints.txt")
        print(result.migration_summary())
        print()
        print(result.table())
    bad = any(m.failed or m.unparsable_outputs or m.second_run_changed for m in result.migrations.values())
    return 1 if bad or result.unmarked else 0


if __name__ == "__main__":
    sys.exit(main())
