"""Regenerate ``lightmigrate/catalog/spec_rows.json`` from the spec's section A (a dev script).

The spec (``lightning-1-to-2.md``) lives outside the repository, so the row catalogue the
coverage ledger needs is committed as data and regenerated with this script when the spec
changes:

    python scripts/spec_rows.py /path/to/lightning-1-to-2.md            # writes the json
    python scripts/spec_rows.py /path/to/lightning-1-to-2.md --check    # exit 1 if stale

Every table row of section A becomes one entry (id, section, old, new, category); the A.7
rows (B-1..B-14) have the change as ``old`` and category ``3 (info)``; each bullet of A.8
becomes one entry with the id ``lightmigrate.rules.base`` documents ("A8-trainer-args", ...).
Only the standard library is used.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Dict, List

OUT = Path(__file__).resolve().parent.parent / "lightmigrate" / "catalog" / "spec_rows.json"

# A.8 bullet titles (the bold lead-in) -> row id (see Rule.coverage in lightmigrate/rules/base.py).
A8_IDS = {
    "Trainer arguments": "A8-trainer-args",
    "`fit` keywords": "A8-fit-keywords",
    "Hooks": "A8-hooks",
    "Callback and DataModule checkpoint state": "A8-checkpoint-state",
    "LightningModule": "A8-module",
    "Imports": "A8-imports",
    "Trainer attributes": "A8-trainer-attributes",
    "Callbacks and loggers": "A8-callbacks-loggers",
}
SECTION_RE = re.compile(r"^###\s+(A\.\d+)\s+(.*)$")
BULLET_RE = re.compile(r"^- \*\*(.+?)\.\*\*\s*(.*)$")


def _cells(line: str) -> List[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def parse(text: str) -> List[Dict[str, str]]:
    rows: List[Dict[str, str]] = []
    section = title = ""
    in_a = False
    for line in text.splitlines():
        if line.startswith("## "):
            in_a = line.startswith("## A.")
            continue
        if not in_a:
            continue
        m = SECTION_RE.match(line)
        if m:
            section, title = m.group(1), m.group(2).strip()
            continue
        if line.startswith("| ") and not line.startswith("| #") and not line.startswith("|---"):
            cells = _cells(line)
            if section == "A.7":
                rows.append({"id": cells[0], "section": section, "section_title": title, "old": cells[1],
                             "new": "", "category": "3 (info)"})
            else:
                rows.append({"id": cells[0], "section": section, "section_title": title, "old": cells[1],
                             "new": cells[2], "category": cells[3]})
            continue
        b = BULLET_RE.match(line)
        if b and section == "A.8":
            name = b.group(1)
            if name not in A8_IDS:
                raise SystemExit(f"unknown A.8 bullet {name!r}: add its id to A8_IDS")
            rows.append({"id": A8_IDS[name], "section": section, "section_title": title, "old": name,
                         "new": b.group(2).strip(), "category": "1/3 (legacy)"})
    ids = [r["id"] for r in rows]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise SystemExit(f"duplicate row ids in the spec: {dupes}")
    missing = sorted(set(A8_IDS.values()) - set(ids))
    if missing:
        raise SystemExit(f"A.8 bullets not found: {missing}")
    return rows


def render(rows: List[Dict[str, str]]) -> str:
    return json.dumps(rows, indent=1, ensure_ascii=False) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("spec", type=Path, help="path to lightning-1-to-2.md")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--check", action="store_true", help="exit 1 when the committed data is stale")
    args = ap.parse_args(argv)
    data = render(parse(args.spec.read_text(encoding="utf-8")))
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
        if current != data:
            print(f"{args.out} is out of date: run python scripts/spec_rows.py {args.spec}", file=sys.stderr)
            return 1
        return 0
    args.out.write_text(data, encoding="utf-8")
    print(f"wrote {len(json.loads(data))} rows to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
