"""LM301: self.log(name, dict) -> self.log_dict with flat keys; unknown dicts marked."""

from lightmigrate.output.findings import Kind
from lightmigrate.rules.lm301_log_dict import LogDictRule

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
