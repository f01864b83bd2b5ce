"""lightmigrate.rules.shared.marking.StatementMarker: with ``types`` it skips subtrees, same output."""

import libcst as cst

from lightmigrate.cst.walk import transform
from lightmigrate.rules.shared.marking import StatementMarker

SOURCE = '''\
import os


def f(trainer):
    x = 1
    if trainer.get_progress_bar_dict():
        y = [2, 3]
    for k in range(3):
        print(k, trainer.get_progress_bar_dict()["loss"])
    return x
'''


def why(node):
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
            node.func.attr.value == "get_progress_bar_dict":
        return "old API"
    return None


def test_marker_with_types_marks_the_same_statements_as_without():
    module = cst.parse_module(SOURCE)
    seen_all, seen_some = [], []

    def counting(seen):
        def inner(node):
            seen.append(type(node).__name__)
            return why(node)
        return inner

    plain = StatementMarker("LM999", counting(seen_all))
    pruned = StatementMarker("LM999", counting(seen_some), (cst.Call,))
    out_plain, out_pruned = transform(module, plain), transform(module, pruned)
    assert out_plain.code == out_pruned.code == module.visit(StatementMarker("LM999", why)).code
    assert plain.marked == pruned.marked == 2
    assert out_pruned.code.count("# TODO(lightmigrate): LM999 old API") == 2
    assert "    # TODO(lightmigrate): LM999 old API\n    if trainer" in out_pruned.code
    assert "Integer" in seen_all and "Integer" not in seen_some  # `x = 1` holds no Call: not entered
    assert len(seen_some) < len(seen_all) // 2
