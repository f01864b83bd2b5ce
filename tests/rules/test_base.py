"""lightmigrate.rules.base: where a rule's finding is."""

import libcst as cst

from lightmigrate.rules.base import RuleContext


def test_position_of_a_node_and_of_a_node_from_elsewhere():
    module = cst.parse_module("import os\n\n\nclass A:\n    @property\n    def f(self):\n        return 1\n")
    func = module.body[1].body.body[0]
    ctx = RuleContext()
    assert ctx.position(module, func) == (6, 5)  # libcst: a decorated def starts at `def`
    assert ctx.position(module, func.name) == (6, 9)
    assert ctx.position(module, cst.Name("x")) == (0, 0)  # not in the module
    other = module.with_changes(body=module.body[1:])
    assert ctx.position(other, other.body[0]) == (3, 1)  # in the module asked about (no import line)
