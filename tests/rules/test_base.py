"""lightmigrate.rules.base: node positions as libcst's metadata wrapper gives them."""

from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from lightmigrate.rules.base import RuleContext, node_positions

CORPUS = Path(__file__).resolve().parent.parent.parent / "corpus"


def test_node_positions_are_the_metadata_wrappers():
    checked = 0
    for path in sorted(CORPUS.glob("*.py"))[:20]:
        module = cst.parse_module(path.read_text(encoding="utf-8"))
        ours = node_positions(module)
        theirs = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        assert dict(ours) == dict(theirs)
        checked += len(theirs)
    assert checked > 10_000


def test_position_of_a_node_and_of_a_node_from_elsewhere():
    module = cst.parse_module("import os\n\n\nclass A:\n    def f(self):\n        return 1\n")
    func = module.body[1].body.body[0]
    ctx = RuleContext()
    assert ctx.position(module, func) == (5, 5)
    assert ctx.position(module, func.name) == (5, 9)
    assert ctx.position(module, cst.Name("x")) == (0, 0)  # not in the module
