"""analysis/ast_nodes.py: the node list and the visitor give what Python's own walkers give."""

import ast

import pytest

from lightmigrate.analysis.ast_nodes import NodeVisitor, ast_nodes

CODE = '''\
import os, sys as system
from a.b import (c, d as e)


@decorator(1, key=[x for x in range(3) if x])
class Model(Base, metaclass=Meta):
    """Docs."""
    attr: int = 0

    async def step(self, batch, *args, scale=1.0, **kw):
        async with lock as held:
            total = {**kw, "a": -batch[0:2, ...]}
            lam = lambda q, /, r=None: q if r else not q
            del total["a"]
            return f"{total!r:>{10}}" + b"x".decode() * (yield)

    def loop(self):
        global counter
        for i, (j, k) in enumerate(zip(a, b)):
            while i < j <= k:
                i += 1
            else:
                continue
        try:
            pass
        except (ValueError, KeyError) as exc:
            raise RuntimeError() from exc
        finally:
            assert counter, "message"
        match self.value:
            case {"k": [1, *rest]} | Point(x=0) if rest:
                pass
            case _:
                pass
'''

_SKIPPED = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)


class _Plain(ast.NodeVisitor):
    def __init__(self):
        self.seen = []
        self.scopes = []

    def generic_visit(self, node):
        if not isinstance(node, _SKIPPED):
            self.seen.append((type(node).__name__, len(self.scopes)))
        super().generic_visit(node)

    def visit_FunctionDef(self, node):
        self.scopes.append(node.name)
        self.generic_visit(node)
        self.scopes.pop()

    visit_AsyncFunctionDef = visit_FunctionDef


class _Fast(NodeVisitor):
    __init__ = _Plain.__init__
    visit_FunctionDef = _Plain.visit_FunctionDef
    visit_AsyncFunctionDef = _Plain.visit_FunctionDef

    def generic_visit(self, node):
        self.seen.append((type(node).__name__, len(self.scopes)))
        super().generic_visit(node)


def test_visitor_visits_what_ast_nodevisitor_visits_in_the_same_order():
    tree = ast.parse(CODE)
    plain, fast = _Plain(), _Fast()
    plain.visit(tree)
    fast.visit(tree)
    assert len(fast.seen) > 100
    assert fast.seen == plain.seen  # the same nodes, the same order, the same scopes around them
    assert {name for name, _ in fast.seen} >= {"Match", "MatchOr", "JoinedStr", "Lambda", "AsyncWith", "MatchStar"}


def test_visitor_calls_each_visit_method_of_its_own_class():
    class Calls(NodeVisitor):
        def __init__(self):
            self.names = []

        def visit_Call(self, node):
            self.names.append(ast.unparse(node.func))
            self.generic_visit(node)

    class Names(NodeVisitor):
        def __init__(self):
            self.names = []

        def visit_Name(self, node):
            self.names.append(node.id)

    tree = ast.parse("f(g(x), key=h())\n")
    calls, names = Calls(), Names()
    calls.visit(tree)
    names.visit(tree)
    assert calls.names == ["f", "g", "h"]
    assert names.names == ["f", "g", "x", "h"]  # each subclass has its own method table


def test_nodes_are_ast_walk_without_contexts_and_operators():
    tree = ast.parse(CODE)
    expected = [n for n in ast.walk(tree) if not isinstance(n, _SKIPPED)]
    assert ast_nodes(tree) == expected


def test_visitor_sends_constants_to_generic_visit_unless_the_class_visits_them():
    class Generic(NodeVisitor):
        def __init__(self):
            self.generic = []

        def generic_visit(self, node):
            self.generic.append(type(node).__name__)
            super().generic_visit(node)

    class Own(Generic):
        def visit_Constant(self, node):
            self.generic.append(f"own {node.value!r}")

    tree = ast.parse("f(1, 'a')\n")
    generic, own = Generic(), Own()
    generic.visit(tree)
    own.visit(tree)
    assert generic.generic.count("Constant") == 2  # not through ast.NodeVisitor.visit_Constant
    assert Generic._methods[ast.Constant] is Generic.generic_visit
    assert own.generic[-2:] == ["own 1", "own 'a'"]


def test_visitor_skipping_leaves_keeps_the_visits_of_a_plain_node_visitor():
    # (a class that keeps the base generic_visit skips the calls on nodes without children;
    # what its own visit methods see, and in what order, is what ast.NodeVisitor gives them)
    def methods(base):
        class Recorder(base):
            def __init__(self):
                self.seen = []

            def visit_Call(self, node):
                self.seen.append(("call", node.lineno, node.col_offset))
                self.generic_visit(node)

            def visit_Name(self, node):
                self.seen.append(("name", node.id))

            def visit_arg(self, node):
                self.seen.append(("arg", node.arg))
                self.generic_visit(node)

            def visit_FunctionDef(self, node):
                self.seen.append(("def", node.name))
                self.generic_visit(node)

            visit_AsyncFunctionDef = visit_FunctionDef

        return Recorder()

    tree = ast.parse(CODE)
    plain, fast = methods(ast.NodeVisitor), methods(NodeVisitor)
    plain.visit(tree)
    fast.visit(tree)
    assert len(fast.seen) > 30 and fast.seen == plain.seen
    assert type(fast)._methods[ast.Constant] is not type(fast).generic_visit  # (skipped: a leaf)


def test_a_visitor_that_overrides_visit_is_refused():
    # (generic_visit calls each child's own method, so an overridden visit would be skipped)
    with pytest.raises(TypeError, match="not visit"):
        class Wrong(NodeVisitor):  # noqa: F841
            def visit(self, node):
                pass
