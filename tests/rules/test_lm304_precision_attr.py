"""LM304: self.precision -> self.trainer.precision with 2.x literals."""

from lightmigrate.output.findings import Kind
from lightmigrate.rules.lm304_precision_attr import PrecisionAttrRule

from .conftest import check_rewrite, run_rule

RULE = PrecisionAttrRule()
HEAD = "import pytorch_lightning as pl\n\n\n"


def test_reversed_and_negated_comparisons():
    findings = check_rewrite(RULE, HEAD + '''\
class M(pl.LightningModule):
    def training_step(self, x):
        if 32 != self.precision:
            x = x.float()
        if self.precision not in ['16', 'bf16', 64]:
            x = x * 2
        return x
''', HEAD + '''\
class M(pl.LightningModule):
    def training_step(self, x):
        if "32-true" != self.trainer.precision:
            x = x.float()
        if self.trainer.precision not in ['16-mixed', 'bf16-mixed', "64-true"]:
            x = x * 2
        return x
''')
    assert [(f.code, f.kind) for f in findings] == [("LM304", Kind.FIXED)]


def test_unknown_literal_is_rewritten_and_marked():
    out, _ = run_rule(RULE, HEAD + '''\
class M(pl.LightningModule):
    def forward(self, x):
        return x if self.precision == 8 else x.half()
''')
    assert "self.trainer.precision == 8" in out
    assert "# TODO(lightmigrate): LM304 `precision` is now the Trainer's string" in out


def test_read_in_init_is_marked_not_rewritten():
    out, _ = run_rule(RULE, HEAD + '''\
class M(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.bits = self.precision
''')
    assert "self.bits = self.precision" in out
    assert "# TODO(lightmigrate): LM304 `self.precision` is gone" in out


def test_other_objects_precision_untouched():
    check_rewrite(RULE, HEAD + '''\
class M(pl.LightningModule):
    def forward(self, x):
        return self.metric.precision == 16


class Other:
    def f(self):
        return self.precision == 16
''', None)


def test_forward_is_rewritten_but_marked():
    out, _ = run_rule(RULE, HEAD + '''\
class M(pl.LightningModule):
    def forward(self, x):
        return x.half() if self.precision == 16 else x
''')
    assert 'self.trainer.precision == "16-mixed"' in out
    assert "# TODO(lightmigrate): LM304 `forward` may run outside a Trainer" in out
