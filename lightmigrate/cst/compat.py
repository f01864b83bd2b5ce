"""The libcst internals lightmigrate's fast paths lean on, checked once per process.

Two fast paths use libcst beyond its public API:

- ``cst/codegen.py`` generates code and positions with its own ``CodegenState`` (from
  ``libcst._nodes.internal``) and each node's ``_codegen``, without libcst's per-node
  position bookkeeping;
- ``cst/walk.py`` walks and rebuilds trees in the order libcst visits each node's fields,
  read from libcst's ``_nodes`` sources (or the table shipped for the version tested).

A libcst release that moves or changes these could break the import or, worse, make a walk
skip fields so that a rule silently misses code. So before first use, :func:`fast_paths_ok`
checks them on a sample module against what the public API says (``Module.code``,
``CSTNode.children``) and against positions known from the sample's text. If anything is off,
the fast paths step aside and the public API is used (slower, same output). ``pyproject.toml``
pins the libcst versions the test suite has run with.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

try:
    from libcst._nodes.internal import CodegenState
except ImportError:  # pragma: no cover - a libcst that moved it: the public API is used
    CodegenState = None  # type: ignore[assignment,misc]

# Code with most kinds of nodes a rule meets, and the start (line, column) of some of them, as
# anyone can read them off the text: libcst's PositionProvider gives the same.
SAMPLE = (
    "# header\n"
    "import a.b as c\n"
    "from x import (y, z as w)\n"
    "@deco(1)\n"
    "class A(B, metaclass=M):\n"
    "    '''doc'''\n"
    "    attr: int = 3\n"
    "\n"
    "    async def f(self, p, /, q=2, *args, r, **kw) -> None:\n"
    "        for i in range(3):\n"
    "            if i and not p or q < 2 <= r:\n"
    "                yield {k: [v async for v in w] for k in 'ab'}\n"
    "            elif (t := i):\n"
    "                del t\n"
    "            else:\n"
    "                continue\n"
    "        with open(p) as fh, ctx():\n"
    "            try:\n"
    "                raise ValueError(f'{p!r:>3}') from None\n"
    "            except (KeyError, IndexError) as e:\n"
    "                pass\n"
    "            finally:\n"
    "                assert p, 'msg'\n"
    "        return lambda *a, **k: a[1:2, ::3] if p else (yield)\n"
    "x = super().f(*[1], **{'a': 2})  # tail\n"
    "while x: x -= 1; break\n"
    "global_ = not x\n"
)
EXPECTED_STARTS: Dict[Tuple[str, int], Tuple[int, int]] = {
    # (node type, its index among nodes of that type in preorder) -> (line, column)
    ("Import", 0): (2, 0),
    ("ClassDef", 0): (5, 0),
    ("FunctionDef", 0): (9, 4),
    ("For", 0): (10, 8),
    ("If", 0): (11, 12),
    ("DictComp", 0): (12, 22),
    ("With", 0): (17, 8),
    ("Raise", 0): (19, 16),
    ("Return", 0): (24, 8),
    ("Assign", 0): (25, 0),
    ("While", 0): (26, 0),
}

_OK: Optional[bool] = None


def _preorder_checked(node: cst.CSTNode) -> Optional[List[cst.CSTNode]]:
    """Every node of ``node``'s tree in preorder, through the public ``children``; None when
    ``walk.children`` gives some node other children, or in another order."""
    from lightmigrate.cst import walk

    out: List[cst.CSTNode] = []
    stack = [node]
    while stack:
        current = stack.pop()
        out.append(current)
        theirs = list(current.children)
        ours = walk.children(current)
        if len(ours) != len(theirs) or any(a is not b for a, b in zip(ours, theirs)):
            return None
        stack.extend(reversed(theirs))
    return out


def _check() -> bool:
    from lightmigrate.cst import codegen

    module = cst.parse_module(SAMPLE)
    if codegen.fast_code_for(module, module) != SAMPLE:
        return False
    nodes = _preorder_checked(module)
    if nodes is None:
        return False
    starts = codegen.fast_node_starts(module)
    seen: Dict[str, int] = {}
    for node in nodes:
        name = type(node).__name__
        k = seen.get(name, 0)
        seen[name] = k + 1
        expected = EXPECTED_STARTS.get((name, k))
        if expected is not None and starts.get(id(node)) != expected:
            return False
    return len({name for name, _ in EXPECTED_STARTS} - set(seen)) == 0


def fast_paths_ok() -> bool:
    """Whether the fast paths of ``codegen`` and ``walk`` agree with libcst's public API here
    (worked out once per process)."""
    global _OK
    if _OK is None:
        from lightmigrate.cst import walk

        walk.use_fast_paths(True)  # (the check itself runs them)
        try:
            _OK = CodegenState is not None and _check()
        except Exception:  # any surprise from the internals: use the public API
            _OK = False
        walk.use_fast_paths(_OK)
    return _OK
