"""Check that the rules' gates (``Rule.needed``) never skip work that mattered.

    python scripts/audit_gates.py PATH... [--unified-imports]

Runs ``rewrite --diff`` over PATH twice in this process: once as the engine runs it, once
with every gate open (each rule whose text triggers match walks the tree: its text gates
``may_need`` and ``gate_kinds``, asked by the prefilter, are left out too). Any difference in
a file's diff, findings, markers or error is a gate that said "not needed" wrongly; the
differing files are listed and the exit status is 1. Exit 0 means the outputs are equal.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import asdict

from lightmigrate.engine import transform
from lightmigrate.rules.base import WHOLE_FILE, GatedRule
from lightmigrate.engine.model import Mode
from lightmigrate.engine.run import run
from lightmigrate.rules import ALL_RULES, OPT_IN_RULES


def outcome(paths, rules) -> dict:
    report = run(paths, rules, Mode.DIFF, jobs=1)
    return {
        f.path: (f.diff, f.error.format() if f.error else None, f.markers,
                 [asdict(x) for x in f.findings], [asdict(x) for x in f.changes])
        for f in report.files
    }


def audit(paths, rules) -> list:
    """Paths whose outcome differs between gated and ungated runs."""
    gated = outcome(paths, rules)
    real = transform.rule_sites, transform.rule_may_need, transform.rule_gate_kinds
    # (only rules still behind a gate, ``GatedRule``: the others' ``find`` is their decision)
    transform.rule_sites = lambda rule, source, ctx: (
        [WHOLE_FILE] if isinstance(rule, GatedRule) else real[0](rule, source, ctx))
    transform.rule_may_need = lambda rule, text: True
    transform.rule_gate_kinds = lambda rule, text: None
    try:
        open_ = outcome(paths, rules)
    finally:
        transform.rule_sites, transform.rule_may_need, transform.rule_gate_kinds = real
    return sorted(p for p in set(gated) | set(open_) if gated.get(p) != open_.get(p))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--unified-imports", action="store_true")
    args = parser.parse_args()
    rules = list(ALL_RULES) + (list(OPT_IN_RULES) if args.unified_imports else [])
    start = time.perf_counter()
    bad = audit(args.paths, rules)
    for path in bad:
        print(f"{path}: output differs when every gate is open")
    print(f"{len(bad)} files differ ({time.perf_counter() - start:.1f} s)", file=sys.stderr)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
