"""Write ``lightmigrate/cst/field_orders.json``: the order in which libcst visits the fields of
each node class, read from the source of the libcst installed in this interpreter.

    python scripts/field_orders.py

``lightmigrate.cst.walk.field_orders`` reads the table when it was made from the libcst version
that is installed, and reads libcst's source itself otherwise (0.08 s of every run that
migrates something). Run this after changing the libcst version the project is tested with.
"""

from __future__ import annotations

import json
from pathlib import Path

from lightmigrate.cst.walk import SHIPPED_ORDERS, _read_orders, installed_libcst


def main() -> None:
    version = installed_libcst()
    if version is None:
        raise SystemExit("the installed libcst does not say its version (libcst._version)")
    orders = {name: [list(pair) for pair in pairs] for name, pairs in sorted(_read_orders().items())}
    lines = ",\n".join(f"  {json.dumps(name)}: {json.dumps(pairs)}" for name, pairs in orders.items())
    Path(SHIPPED_ORDERS).write_text(f'{{"libcst": {json.dumps(version)}, "orders": {{\n{lines}\n}}}}\n',
                                    encoding="utf-8")
    print(f"{SHIPPED_ORDERS}: {len(orders)} classes, libcst {version}")


if __name__ == "__main__":
    main()
