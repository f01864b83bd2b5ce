"""What is left of the hook rules' gate helpers (every hook rule now finds its sites itself:
see the rules' own tests): ``def_parameter_names``, and the class index's per-file lists."""

from __future__ import annotations

import ast
from pathlib import Path

from lightmigrate.analysis.project import ClassInfo, ProjectIndex
from lightmigrate.rules.shared.gates import def_parameter_names


def test_def_parameter_names_holds_every_parameter_ast_finds():
    """For every function of the corpus and of this package, the names read from its headers
    include each parameter Python's ``ast`` finds."""
    root = Path(__file__).resolve().parents[2]
    checked = 0
    for path in sorted([*root.joinpath("corpus").rglob("*.py"), *root.joinpath("lightmigrate").rglob("*.py")]):
        text = path.read_text(encoding="utf-8")
        params: dict = {}
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                params.setdefault(node.name, set()).update(a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg))
        for name, expected in params.items():
            found = def_parameter_names(text, name)
            assert found is not None and expected <= set(found), (path, name)
            checked += 1
    assert checked > 1000


def test_def_parameter_names_reads_only_the_header():
    text = "def f(a, b: Dict[str, int] = g(')'), *c, d=1, **e) -> int:\n    z = 1\nx = 'def f(q)'\n"
    assert def_parameter_names(text, "f") == ["a", "b", "Dict", "str", "int", "g", "c", "d", "e", "q"]
    assert def_parameter_names("def f\n", "f") == []  # not a header: no parenthesis
    assert def_parameter_names("def f(a,\n", "f") is None  # unreadable: the file may need the rule
    assert def_parameter_names("undef f(a)\n", "f") == []


def test_classes_in_follows_additions_and_merges():
    a = ClassInfo("A", "a.py", ("pl.LightningModule",), frozenset())
    index = ProjectIndex([a])
    assert index.classes_in("a.py") == [a]
    assert index.classes_in("b.py") == []
    b = ClassInfo("B", "b.py", ("A",), frozenset())
    index.add(b)
    assert index.classes_in("b.py") == [b]
    other = ProjectIndex([ClassInfo("C", "a.py", (), frozenset())])
    index.merge(other)
    assert [c.name for c in index.classes_in("a.py")] == ["A", "C"]
