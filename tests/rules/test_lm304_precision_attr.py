"""LM304: self.precision -> self.trainer.precision with 2.x literals."""

from lightmigrate.analysis.project import ProjectIndex
from lightmigrate.output.findings import Kind
from lightmigrate.rules.base import RuleContext, SourceFile
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


# --- find: the sites, across files, and none where nothing changes --------------------------

def _find(text, path="model.py", files=None, indexed=True):
    index = ProjectIndex()
    for other, other_text in {**(files or {}), **({path: text} if indexed else {})}.items():
        index.add_source(other_text, other)
    return RULE.find(SourceFile(path, text), RuleContext(path, index))


def _acts(text, path="model.py", files=None):
    out, findings = run_rule(RULE, text, path, files)
    return out != text or bool(findings)


BASE = HEAD + "class Base(pl.LightningModule):\n    pass\n"
USES = '''\
from base import Base


class Model(Base):
    def training_step(self, batch, batch_idx):
        if self.precision == 16:
            batch = batch.half()
        return batch

    def __init__(self):
        self.bits = self.precision
'''


def test_find_follows_the_hierarchy_across_files():
    sites = _find(USES, files={"base.py": BASE})
    assert [(s.line, s.col, s.target, s.action, s.data) for s in sites] == [
        (5, 4, "Model.training_step", "rewrite", ("module", "self")),
        (10, 4, "Model.__init__", "mark-init", ("module", "self")),
    ]
    # not indexed yet: find indexes the file itself
    assert [s.target for s in _find(USES, files={"base.py": BASE}, indexed=False)] == [
        "Model.training_step", "Model.__init__"]
    plain = USES.replace("from base import Base", "Plain = object").replace("(Base)", "(Plain)")
    assert _find(plain, files={"base.py": BASE}) == []
    assert not _acts(plain, files={"base.py": BASE})
    out, _ = run_rule(RULE, USES, project_files={"base.py": BASE})
    assert 'self.trainer.precision == "16-mixed"' in out


def test_find_callback_receiver_and_no_attribute():
    callback = (HEAD + "class P(pl.Callback):\n"
                "    def on_fit_start(self, trainer, pl_module):\n        print(pl_module.precision)\n")
    assert [(s.target, s.data) for s in _find(callback)] == [("P.on_fit_start", ("callback", "pl_module"))]
    assert _acts(callback)
    no_read = HEAD + "class M(pl.LightningModule):\n    precision_note = '.precision'\n"
    assert _find(no_read) == [] and not _acts(no_read)


def test_find_only_the_precision_of_a_methods_receiver():
    # another object's precision, in a callback and in a module, is left alone
    plugin = (HEAD + "class P(pl.Callback):\n"
              "    def on_fit_start(self, trainer, pl_module):\n        return trainer.strategy.precision_plugin\n\n\n"
              "def dtype(plugin):\n    return plugin.precision\n")
    other = (HEAD + "class M(pl.LightningModule):\n"
             "    def forward(self, cfg):\n        return 1 if cfg.precision == 16 else 2\n")
    # a class that sets a precision of its own
    owns = (HEAD + "class M(pl.LightningModule):\n    def setup(self, stage):\n        self.precision: int = 3\n\n"
            "    def forward(self, x):\n        return self.precision\n")
    for text in (plugin, other, owns):
        assert _find(text) == []
        assert not _acts(text)
    # a receiver of any name, in parentheses, across lines, in an async method
    odd = (HEAD + "class M(pl.LightningModule):\n"
           "    async def forward(this, x):\n        return x if (this  # me\n                 ).precision == 16 else x\n")
    assert [(s.target, s.data) for s in _find(odd)] == [("M.forward", ("module", "this"))]
    assert _acts(odd)


def test_fix_edits_only_the_methods_of_the_sites():
    # two classes of the same name: only the one whose method reads the precision is edited
    text = (HEAD + "class M(pl.LightningModule):\n    def forward(self, x):\n        return self.precision\n\n\n"
            "class M(pl.LightningModule):\n    def forward(self, x):\n        return x\n")
    sites = _find(text)
    assert [s.line for s in sites] == [5]
    out, findings = run_rule(RULE, text)
    assert out.count("TODO(lightmigrate)") == 1 and len(findings) == 2  # the fix and its marker
