"""LM301: self.log(name, dict) -> self.log_dict with flat keys; unknown dicts marked."""

import textwrap

from lightmigrate.analysis.project import ProjectIndex
from lightmigrate.output.findings import Kind
from lightmigrate.rules.base import RuleContext, SourceFile
from lightmigrate.rules.lm301_log_dict import WHY_BLOCKED, LogDictRule

from .conftest import check_rewrite, run_rule

RULE = LogDictRule()
HEAD = "import pytorch_lightning as pl\n\n\n"


def test_keyword_value_positional_options_and_quotes_kept():
    findings = check_rewrite(RULE, HEAD + '''\
class M(pl.LightningModule):
    def validation_step(self, batch, batch_idx):
        self.log(name='val', value={'a': 1.0, 'b': 2.0}, on_epoch=True)
        self.log("rates", {"lr": 0.1}, True, False)
''', HEAD + '''\
class M(pl.LightningModule):
    def validation_step(self, batch, batch_idx):
        self.log_dict({'val/a': 1.0, 'val/b': 2.0}, on_epoch=True)
        self.log_dict({"rates/lr": 0.1}, True, False)
''')
    assert [(f.code, f.kind) for f in findings] == [("LM301", Kind.FIXED), ("LM301", Kind.FIXED)]


def test_comprehension_and_non_literal_keys():
    check_rewrite(RULE, HEAD + '''\
class M(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        self.log("per_class", {str(i): v for i, v in enumerate(batch)})
        self.log("named", {self.key: 1.0})
        return batch.sum()
''', HEAD + '''\
class M(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        self.log_dict({f"per_class/{str(i)}": v for i, v in enumerate(batch)})
        self.log_dict({f"named/{self.key}": 1.0})
        return batch.sum()
''')


def test_rebound_local_or_parameter_is_not_assumed_a_dict():
    check_rewrite(RULE, HEAD + '''\
class M(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        stats = {"a": 1.0}
        stats = batch.sum()
        self.log("stats", stats)
        return batch

    def log_it(self, stats):
        self.log("stats", stats)
''', None)


def test_monitor_on_the_old_key_is_marked():
    out, findings = run_rule(RULE, HEAD + '''\
class M(pl.LightningModule):
    def validation_step(self, batch, batch_idx):
        self.log("val", {"loss": batch.sum()})


ckpt = pl.callbacks.ModelCheckpoint(monitor="val")
''')
    assert 'self.log_dict({"val/loss": batch.sum()})' in out
    marker_line = out.splitlines()[out.splitlines().index('ckpt = pl.callbacks.ModelCheckpoint(monitor="val")') - 1]
    assert marker_line.startswith("# TODO(lightmigrate): LM301 monitor 'val'")
    again, _ = run_rule(RULE, out)
    assert again == out


def test_metric_attribute_blocks_the_rewrite():
    out, _ = run_rule(RULE, HEAD + '''\
class M(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        self.log("m", {"a": self.metric}, metric_attribute="metric")
        return batch
''')
    assert "self.log_dict(" not in out and 'self.log("m", {"a": self.metric}' in out
    assert "# TODO(lightmigrate): LM301" in out


# --- find: the sites, across files, and none where nothing changes --------------------------

def _find(text, path="m.py", files=None, indexed=True):
    index = ProjectIndex()
    for other, other_text in {**(files or {}), **({path: text} if indexed else {})}.items():
        index.add_source(textwrap.dedent(other_text), other)
    return RULE.find(SourceFile(path, textwrap.dedent(text)), RuleContext(path, index))


def _acts(text, path="m.py", files=None):
    text = textwrap.dedent(text)
    out, findings = run_rule(RULE, text, path, {p: textwrap.dedent(t) for p, t in (files or {}).items()})
    return out != text or bool(findings)


def test_find_dict_value_and_local_dict():
    literal = """\
        import pytorch_lightning as pl


        class M(pl.LightningModule):
            def training_step(self, batch, batch_idx):
                self.log("train", value={"a": batch})
                return batch
        """
    sites = _find(literal)
    assert [(s.line, s.col, s.target, s.action, s.data) for s in sites] == [
        (6, 8, "M.training_step", "rewrite", ((5, 5), (6, 9), "M", "train"))]
    assert _acts(literal)
    local = """\
        import pytorch_lightning as pl


        class M(pl.LightningModule):
            def validation_step(this, batch, batch_idx):
                metrics = {"acc": batch}
                this.log("val", metrics)
        """
    assert [(s.target, s.action) for s in _find(local)] == [("M.validation_step", "rewrite")]
    assert _acts(local)


def test_find_marks_what_it_cannot_rewrite():
    text = """\
        import pytorch_lightning as pl


        class M(pl.LightningModule):
            def training_step(self, batch, batch_idx):
                self.log(self.prefix, {"a": batch})
                self.log("x", {"a": batch}, metric_attribute="m")
                self.log("y", {**batch})
                self.log("z", {k: v for k, v in batch}, *extra)
                self.log("w", {'say "hi"': 1}) if batch else None
        """
    assert [(s.action, s.data[-1][:40]) for s in _find(text)] == [
        ("mark", "`self.log` with a dict value raises in L"),
        ("mark", "`self.log` with a dict value raises in L"),
        ("mark", "`self.log` with a dict value raises in L"),
        ("mark", "`self.log` with a dict value raises in L"),
        ("rewrite", "w"),
    ]
    assert _acts(text)


def test_find_monitors_of_rewritten_names():
    text = """\
        import pytorch_lightning as pl
        from pytorch_lightning.callbacks import ModelCheckpoint


        class M(pl.LightningModule):
            def training_step(self, batch, batch_idx):
                self.log("val", {"acc": batch})
                self.log(f"other", {"acc": batch})


        ckpt = ModelCheckpoint(monitor="val")
        stop = EarlyStopping(monitor="other")
        """
    sites = _find(text)
    assert [(s.target, s.action, s.data[-1]) for s in sites[1:2]] == [("M.training_step", "mark", WHY_BLOCKED)]
    assert [(s.line, s.target, s.action, s.data) for s in sites[2:]] == [(11, "monitor", "mark-monitor", "val")]
    out, _ = run_rule(RULE, textwrap.dedent(text))
    assert "# TODO(lightmigrate): LM301 monitor 'val'" in out and "monitor 'other'" not in out


def test_find_follows_the_hierarchy_across_files():
    files = {"models.py": "import lightning.pytorch as pl\n\n\nclass Base(pl.LightningModule):\n    pass\n"}
    text = """\
        from models import Base


        class Model(Base):
            def training_step(self, batch, batch_idx):
                self.log("train", {"loss": batch})
                return batch
        """
    assert [s.target for s in _find(text, files=files)] == ["Model.training_step"]
    assert [s.target for s in _find(text, files=files, indexed=False)] == ["Model.training_step"]
    out, _ = run_rule(RULE, textwrap.dedent(text), "train.py", files)
    assert 'self.log_dict({"train/loss": batch})' in out
    plain = text.replace("from models import Base", "Plain = object").replace("(Base)", "(Plain)")
    assert _find(plain, files=files) == [] and not _acts(plain, files=files)


def test_find_nothing_for_scalars_rebound_names_or_outside_lightning():
    scalars = """\
        import pytorch_lightning as pl


        class M(pl.LightningModule):
            def training_step(self, batch, batch_idx):
                metrics = {"acc": batch}
                self.log("loss", batch)
                self.log_dict(metrics)
                again = {"a": 1}
                again = {"a": 2}
                self.log("again", again)
                self.parts = 1
                parts = {"a": 1}
                self.log("parts", parts)
                other.log("x", {"a": 1})
                return batch
        """
    assert _find(scalars) == [] and not _acts(scalars)
    plain = """\
        class Logger:
            def step(self):
                self.log("train", {"a": 1})
        """
    assert _find(plain, "p.py") == [] and not _acts(plain, "p.py")


def test_fix_finds_calls_after_non_ascii_text():
    text = HEAD + 'class M(pl.LightningModule):\n    def training_step(self, b, i):\n        é = 1; self.log("t", {"ü": b})\n'
    sites = _find(text)
    # ast counts the column in bytes (16), libcst in characters (15, 1-based 16)
    assert [(s.col, s.data[1]) for s in sites] == [(16, (6, 16))]
    out, _ = run_rule(RULE, text)
    assert 'self.log_dict({"t/ü": b})' in out
