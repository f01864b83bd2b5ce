"""lightmigrate.cst.walk visits exactly what libcst's own visit does, in the same order."""

from pathlib import Path

import libcst as cst
import libcst.matchers as m
import pytest

from lightmigrate.cst.walk import children, find_all, walk

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
SNIPPET = '''
import os as o, sys  # a comment
from a.b import (c as d, e)
@dec(1)
class A(B, metaclass=M):
    x: int = 3
    async def f(self, a, /, b=2, *c, d, **e) -> "T":
        """doc"""
        y = [i for i in range(3) if i] + {k: v for k, v in z.items()}
        lam = lambda q: (q, -q, not q)
        with open(f"{a!r:>{b}}") as fh, x as (p, q):
            yield from fh
        try:
            pass
        except (ValueError, KeyError) as exc:
            raise X from exc
        finally:
            del a[1:2, ::3]
        while a < b <= c is not d:
            a += 1; b @= 2
        return a if b else c
'''


def modules():
    yield cst.parse_module(SNIPPET)
    for path in sorted(CORPUS.glob("*.py"))[:25]:
        yield cst.parse_module(path.read_text(encoding="utf-8"))


class Recorder(cst.CSTVisitor):
    """Sees every node (overrides on_visit/on_leave), and prunes lambdas."""

    def __init__(self):
        self.log = []

    def on_visit(self, node):
        self.log.append(("visit", id(node)))
        return not isinstance(node, cst.Lambda)

    def on_leave(self, original_node):
        self.log.append(("leave", id(original_node)))


class Hooked(cst.CSTVisitor):
    """Hooks on a few types; returning False from visit_ClassDef must skip the class body."""

    def __init__(self, enter_classes):
        self.enter_classes = enter_classes
        self.log = []

    def visit_ClassDef(self, node):
        self.log.append(("class", node.name.value))
        return self.enter_classes

    def visit_Call(self, node):
        self.log.append(("call", id(node)))

    def leave_Name(self, original_node):
        self.log.append(("name", original_node.value))



class HookedTrivia(Hooked):
    def visit_Comment(self, node):  # a hook on trivia: the walk must still enter whitespace
        self.log.append(("comment", node.value))


@pytest.mark.parametrize("module", list(modules()), ids=lambda mod: str(len(mod.code)))
def test_walk_matches_libcst_visit(module):
    for make in (Recorder, lambda: Hooked(True), lambda: Hooked(False), lambda: HookedTrivia(True)):
        theirs, ours = make(), make()
        module.visit(theirs)
        walk(module, ours)
        assert ours.log == theirs.log
        assert ours.log  # something was seen


def test_children_match_libcst_children():
    for module in modules():
        todo = [module]
        while todo:
            node = todo.pop()
            assert [id(c) for c in children(node)] == [id(c) for c in node.children]
            todo.extend(node.children)


TYPES = [
    (cst.Call,),
    (cst.ClassDef, cst.FunctionDef),
    (cst.Name,),
    (cst.Comma,),  # trivia: the search must enter whitespace and punctuation
    (cst.BaseSmallStatement,),  # a base class: every kind of small statement
]


def libcst_findall(node, types):
    return m.findall(node, m.MatchIfTrue(lambda n: isinstance(n, types)))


def test_find_all_matches_libcst_findall():
    for module in modules():
        for types in TYPES:
            assert [id(n) for n in find_all(module, *types)] == [id(n) for n in libcst_findall(module, types)]
    assert find_all(cst.parse_module(SNIPPET), cst.Import)  # found something


def test_find_all_answers_the_same_from_its_index():
    # A tree's nodes are kept by type on its first search and looked up after: same nodes, same order,
    # also for types whose nodes interleave, and for subtrees of a searched tree.
    from lightmigrate.cst import walk as cst_walk

    cst_walk.forget_masks()
    mixed = (cst.Attribute, cst.Name, cst.Call)
    for module in modules():
        expected = [id(n) for n in libcst_findall(module, mixed)]
        assert [id(n) for n in find_all(module, *mixed)] == expected  # walked
        assert cst_walk._SEARCHED[id(module)][0] is module
        assert [id(n) for n in find_all(module, *mixed)] == expected  # looked up
        for cls in find_all(module, cst.ClassDef)[:3]:
            for _ in range(2):
                assert [id(n) for n in find_all(cls, *mixed)] == [id(n) for n in libcst_findall(cls, mixed)]
    assert len(expected) > 50
    cst_walk.forget_masks()
    assert not cst_walk._SEARCHED


def test_visitors_walk_cannot_emulate_go_to_libcst():
    class AttributeHook(cst.CSTVisitor):
        def __init__(self):
            self.seen = []

        def visit_Call_func(self, node):
            self.seen.append(id(node))

    module = cst.parse_module(SNIPPET)
    theirs, ours = AttributeHook(), AttributeHook()
    module.visit(theirs)
    walk(module, ours)
    assert ours.seen == theirs.seen and ours.seen

    class Renamer(cst.CSTTransformer):
        def __init__(self):
            self.count = 0

        def leave_Name(self, original_node, updated_node):
            self.count += 1
            return updated_node

    renamer = Renamer()
    walk(module, renamer)
    assert renamer.count == len(m.findall(module, m.Name()))


def test_pruned_transformer_gives_the_same_output():
    from lightmigrate.cst.walk import PrunedTransformer

    class Rename(PrunedTransformer):
        def leave_FunctionDef(self, original_node, updated_node):
            if updated_node.name.value == "training_step":
                return updated_node.with_changes(name=cst.Name("step_of_training"))
            return updated_node

    class Plain(cst.CSTTransformer):
        leave_FunctionDef = Rename.leave_FunctionDef

    changed = 0
    for module in modules():
        ours, theirs = module.visit(Rename()), module.visit(Plain())
        assert ours.code == theirs.code
        changed += ours.code != module.code
    assert changed  # some corpus module has a training_step


def test_pruning_skips_subtrees_without_hooked_nodes_and_never_prunes_custom_on_visit(monkeypatch):
    from lightmigrate.cst.walk import PrunedTransformer, type_masks

    rebuilt = []
    original = cst.Name._visit_and_replace_children
    monkeypatch.setattr(cst.Name, "_visit_and_replace_children",
                        lambda self, visitor: (rebuilt.append(self), original(self, visitor))[1])

    module = cst.parse_module(SNIPPET)
    masks = type_masks(module)
    nodes = list(_all_nodes(module))
    assert all(id(n) in masks for n in nodes)

    seen = []

    class OnlyLambda(PrunedTransformer):
        def visit_Lambda(self, node):
            seen.append(node)

    rebuilt.clear()
    out = module.visit(OnlyLambda())
    assert out.code == module.code and len(seen) == 1
    assert rebuilt == []  # no Name holds a Lambda: none was entered, none rebuilt
    module.visit(cst.CSTTransformer())
    assert len(rebuilt) == len(find_all(module, cst.Name)) > 20  # libcst alone rebuilds them all

    class Custom(PrunedTransformer):  # acts on every node: must see them all
        def __init__(self):
            self.count = 0

        def on_visit(self, node):
            self.count += 1
            return super().on_visit(node)

    custom = Custom()
    module.visit(custom)
    assert custom.count == len(nodes)


def _all_nodes(node):
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        todo.extend(n.children)


def test_same_tree_agrees_with_deep_equals():
    from lightmigrate.cst.walk import same_tree

    class Suffix(cst.CSTTransformer):
        def leave_Name(self, original_node, updated_node):
            return updated_node.with_changes(value=updated_node.value + "_") if updated_node.value == "self" else updated_node

    verdicts = set()
    for module in [*modules(), cst.parse_module("x = [1, 2]  # no self here\n")]:
        rebuilt = module.visit(cst.CSTTransformer())  # every node a new object, all equal
        assert rebuilt is not module and same_tree(rebuilt, module)
        changed = module.visit(Suffix())
        verdict = same_tree(changed, module)
        assert verdict == changed.deep_equals(module) == (changed.code == module.code)
        verdicts.add(verdict)
    assert verdicts == {True, False}  # both cases occurred


# --- transform: libcst's visit, rebuilding only what changed ------------------------------------


class RenameSteps(cst.CSTTransformer):
    def leave_FunctionDef(self, original_node, updated_node):
        if updated_node.name.value == "training_step":
            return updated_node.with_changes(name=cst.Name("step_of_training"))
        return updated_node


class DropPass(cst.CSTTransformer):
    """Removes ``pass`` and expression statements (RemovalSentinel in a body and in a line)."""

    def leave_Pass(self, original_node, updated_node):
        return cst.RemovalSentinel.REMOVE

    def leave_Expr(self, original_node, updated_node):
        return cst.RemovalSentinel.REMOVE


class SplitAssign(cst.CSTTransformer):
    """``x = y`` becomes two statements (FlattenSentinel), and ``as`` aliases go (optional)."""

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if len(updated_node.body) == 1 and isinstance(updated_node.body[0], cst.Assign):
            return cst.FlattenSentinel([updated_node, updated_node.with_changes(body=[cst.Pass()])])
        return updated_node

    def leave_AsName(self, original_node, updated_node):
        return cst.RemovalSentinel.REMOVE

    def leave_Comma(self, original_node, updated_node):  # a sentinel field (Arg.comma)
        return cst.RemovalSentinel.REMOVE if isinstance(original_node.whitespace_after, cst.SimpleWhitespace) \
            and original_node.whitespace_after.value == "  " else updated_node


class EveryNode(cst.CSTTransformer):
    """Overrides on_visit / on_leave: sees every node, changes names in lambdas' bodies only."""

    def __init__(self):
        self.log = []
        self.depth = 0

    def on_visit(self, node):
        self.log.append(type(node).__name__)
        if isinstance(node, cst.Lambda):
            self.depth += 1
        return not isinstance(node, cst.Decorator)

    def on_leave(self, original_node, updated_node):
        if isinstance(original_node, cst.Lambda):
            self.depth -= 1
        if self.depth and isinstance(updated_node, cst.Name):
            return updated_node.with_changes(value=updated_node.value.upper())
        return updated_node


@pytest.mark.parametrize("make", [RenameSteps, DropPass, SplitAssign, EveryNode])
def test_transform_gives_libcsts_output_and_hook_calls(make):
    from lightmigrate.cst.walk import transform

    changed = 0
    for module in modules():
        ours_t, theirs_t = make(), make()
        ours, theirs = transform(module, ours_t), module.visit(theirs_t)
        assert ours.code == theirs.code and same_tree_ok(ours, theirs)
        assert getattr(ours_t, "log", None) == getattr(theirs_t, "log", None)
        changed += ours.code != module.code
    assert changed  # the transformer did change some module


def same_tree_ok(a, b):
    return a.deep_equals(b)


def test_transform_keeps_untouched_nodes_and_libcsts_tuples():
    from lightmigrate.cst.walk import transform

    module = cst.parse_module(SNIPPET)
    assert transform(module, cst.CSTTransformer()) is module  # nothing changed: nothing rebuilt
    out = transform(module, RenameSteps())
    assert out is module  # no training_step in the snippet

    class Rename(cst.CSTTransformer):
        def leave_Name(self, original_node, updated_node):
            return updated_node.with_changes(value="zz") if updated_node.value == "lam" else updated_node

    out = transform(module, Rename())
    assert "zz = lambda q" in out.code and out is not module
    # the class is rebuilt (its body changed), the imports above it are the very same nodes
    assert out.body[0] is module.body[0] and out.body[1] is module.body[1]
    assert out.body[2] is not module.body[2]

    # a node a rule built with lists comes out with tuples, as from libcst's visit
    built = cst.Module(body=[cst.SimpleStatementLine(body=[cst.Pass()])])
    out = transform(built, cst.CSTTransformer())
    assert type(out.body) is tuple and type(out.body[0].body) is tuple
    assert type(built.visit(cst.CSTTransformer()).body) is tuple


def test_transform_removing_the_module_and_removing_a_required_node():
    from lightmigrate.cst.walk import transform

    class Gone(cst.CSTTransformer):
        def leave_Module(self, original_node, updated_node):
            return cst.RemovalSentinel.REMOVE

    module = cst.parse_module("x = 1\n")
    ours = transform(module, Gone())
    assert ours.code == module.visit(Gone()).code and ours.body == ()

    class NoName(cst.CSTTransformer):
        def leave_Name(self, original_node, updated_node):
            return cst.RemovalSentinel.REMOVE

    for run in (lambda: transform(cst.parse_module("f(x)\n"), NoName()),
                lambda: cst.parse_module("f(x)\n").visit(NoName())):
        with pytest.raises(TypeError, match="does not allow it to be removed"):
            run()


def test_transform_leaves_attribute_hooks_to_libcst(monkeypatch):
    from lightmigrate.cst.walk import transform

    class Attr(cst.CSTTransformer):
        def __init__(self):
            self.fields = []

        def visit_Call_func(self, node):
            self.fields.append("func")

    calls = []
    original = cst.Module.visit
    monkeypatch.setattr(cst.Module, "visit", lambda self, v: (calls.append(v), original(self, v))[1])
    t = Attr()
    transform(cst.parse_module("f(1)\ng(2)\n"), t)
    assert calls == [t] and t.fields == ["func", "func"]


def test_type_masks_of_a_transformed_tree_walk_only_its_new_nodes(monkeypatch):
    import lightmigrate.cst.walk as walk_module
    from lightmigrate.cst.walk import transform, type_masks

    module = cst.parse_module(SNIPPET)
    type_masks(module)

    class Rename(cst.CSTTransformer):
        def leave_Name(self, original_node, updated_node):
            return updated_node.with_changes(value="zz") if updated_node.value == "lam" else updated_node

    out = transform(module, Rename())
    opened = []
    real = walk_module.children
    monkeypatch.setattr(walk_module, "children", lambda n: (opened.append(n), real(n))[1])
    masks = type_masks(out)
    new_nodes = [n for n in _all_nodes(out) if id(n) not in {id(x) for x in _all_nodes(module)}]
    assert opened and len(opened) == len(new_nodes) < len(list(_all_nodes(out))) // 4
    for n in _all_nodes(out):
        expected = 0
        for sub in _all_nodes(n):
            expected |= walk_module._bit(type(sub))
        assert masks[id(n)] == expected


def test_own_hooks_are_the_overridden_ones():
    """own_hooks searches only classes outside libcst; it must find what a search of every
    attribute finds, for every visitor class the rules define (also the ones made inside
    functions, created here by running the rules over corpus files)."""
    from lightmigrate.cst.walk import _all_subclasses, own_hooks
    from lightmigrate.engine.transform import transform_text
    from lightmigrate.rules import select_rules

    rules = select_rules()
    for path in sorted(CORPUS.glob("*.py"))[:12]:
        transform_text(path.read_text(encoding="utf-8"), rules, str(path))

    def by_dir(kind, base):
        return sorted(name for name in dir(kind) if name.startswith(("visit_", "leave_"))
                      and getattr(kind, name) is not getattr(base, name, None))

    checked = 0
    for base in (cst.CSTVisitor, cst.CSTTransformer):
        for kind in _all_subclasses(base):
            if kind.__module__.startswith("libcst"):
                continue
            assert own_hooks(kind, base) == by_dir(kind, base), kind
            checked += 1
    assert checked > 30


def test_field_orders_are_libcsts_own_whichever_way_they_are_read(monkeypatch):
    # The table shipped in the package stands for libcst's source only for the version it was
    # read from; another version reads the source itself.
    import lightmigrate.cst.walk as walk

    read = walk._read_orders()
    assert len(read) > 100
    monkeypatch.setattr(walk, "_ORDERS", None)
    assert walk.field_orders() == read
    monkeypatch.setattr(walk, "installed_libcst", lambda: "0.0.1")
    assert walk._shipped_orders() is None
    monkeypatch.setattr(walk, "_ORDERS", None)
    assert walk.field_orders() == read  # (read from the source)
    monkeypatch.setattr(walk, "installed_libcst", lambda: None)
    assert walk._shipped_orders() is None


def test_the_shipped_field_orders_are_those_of_the_libcst_they_name():
    import json

    import lightmigrate.cst.walk as walk

    with open(walk.SHIPPED_ORDERS, encoding="utf-8") as f:
        shipped = json.load(f)
    assert shipped["libcst"] and len(shipped["orders"]) > 100
    if shipped["libcst"] == walk.installed_libcst():
        assert walk._shipped_orders() == walk._read_orders()
    else:  # made from another libcst: not used here (scripts/field_orders.py makes it anew)
        assert walk._shipped_orders() is None
