"""LM006: truncated BPTT becomes a manual-optimization split loop. Runtime equivalence with
1.9.5: corpus/tbptt_*.py."""


import pytest

from lightmigrate.analysis.project import ProjectIndex
from lightmigrate.engine import transform_text
from lightmigrate.output.findings import Kind
from lightmigrate.rules import ALL_RULES
from lightmigrate.rules.base import RuleContext, SourceFile
from lightmigrate.rules.lm006_tbptt import TbpttRule

from .conftest import check_corpus_case_idempotent, check_rewrite

RULE = TbpttRule()
HEAD = "import pytorch_lightning as pl\nimport torch\n\n\n"

MODEL = '''\
class M(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.truncated_bptt_steps = 2

    def training_step(self, batch, batch_idx, hiddens):
        out, h = self.rnn(batch[0], hiddens)
        return {"loss": out.sum(), "hiddens": h, "n": 1}
'''


def migrate(source, rules=(RULE,)):
    out = transform_text(HEAD + source, list(rules), path="model.py")
    compile(out.text, "<out>", "exec")
    again = transform_text(out.text, list(rules), path="model.py")
    assert again.text == out.text, "second run changed the code"
    return out.text, out.findings


def test_basic_rewrite_keeps_the_attribute_and_moves_the_body():
    out, findings = migrate(MODEL)
    assert "self.automatic_optimization = False\n        self.truncated_bptt_steps = 2" in out
    assert "def training_step(self, batch, batch_idx):" in out
    assert "def _training_step(self, batch, batch_idx, hiddens):\n        out, h = self.rnn(batch[0], hiddens)" in out
    assert "for split in self._tbptt_split_batch(batch, self.truncated_bptt_steps):" in out
    assert "opt.step(closure=closure)" in out
    assert 'hiddens = recursive_detach(result["output"]["hiddens"])' in out
    assert "from pytorch_lightning.utilities.memory import recursive_detach" in out
    assert "def _tbptt_split_batch(self, batch, split_size):" in out
    # zero_grad after the forward, then backward
    closure = out[out.index("def closure"):out.index("return result")]
    assert closure.index("self._training_step(") < closure.index("opt.zero_grad()") < closure.index("manual_backward")
    assert [f.kind for f in findings] == [Kind.FIXED]


def test_no_init_creates_one():
    out, _ = migrate('''\
class M(pl.LightningModule):
    truncated_bptt_steps = 3

    def training_step(self, batch, batch_idx, hiddens):
        return {"loss": batch.sum(), "hiddens": hiddens}
''')
    assert ("    truncated_bptt_steps = 3\n\n    def __init__(self, *args, **kwargs):\n"
            "        super().__init__(*args, **kwargs)\n        self.automatic_optimization = False\n") in out


def test_epoch_end_is_converted_with_split_nesting():
    out, _ = migrate(MODEL + '''
    def training_epoch_end(self, outputs):
        self.log("n", float(len(outputs)))
''')
    assert "training_epoch_end" not in out
    assert "def on_train_epoch_start(self):\n        self.training_step_outputs = []" in out
    assert "self.training_step_outputs.append(split_outputs)" in out
    assert "def on_train_epoch_end(self):" in out
    assert "elif all(len(splits) == 1 for splits in outputs):" in out


def test_epoch_end_merges_into_existing_hook():
    out, _ = migrate(MODEL + '''
    def training_epoch_end(self, outputs):
        self.log("n", float(len(outputs)))

    def on_train_epoch_end(self):
        self.log("after", 1.0)
''')
    body = out[out.index("def on_train_epoch_end"):]
    assert body.index('self.log("n"') < body.index('self.log("after"')
    assert out.count("def on_train_epoch_end") == 1


def test_step_end_runs_inside_the_closure():
    out, _ = migrate(MODEL + '''
    def training_step_end(self, out):
        out["loss"] = out["loss"] * 2
''')
    assert "def _training_step_end(self, out):" in out
    assert "end_output = self._training_step_end(output)" in out
    assert "def training_step_end" not in out


def test_custom_split_is_kept_and_called():
    out, _ = migrate(MODEL + '''
    def tbptt_split_batch(self, batch, split_size):
        return [batch]
''')
    assert "def _tbptt_split_batch(self, batch, split_size):\n        return [batch]" in out
    assert out.count("def _tbptt_split_batch") == 1


def test_trainer_kwargs_move_into_the_module():
    out, _ = migrate(MODEL + '''

trainer = pl.Trainer(max_epochs=2, accumulate_grad_batches=4, gradient_clip_val=0.5)
''')
    assert "pl.Trainer(max_epochs=2)" in out
    assert "should_step = (batch_idx + 1) % 4 == 0 or self.trainer.is_last_batch" in out
    assert "if batch_idx % 4 == 0:\n                    opt.zero_grad()" in out
    assert 'output["loss"] / 4' in out
    assert "self.clip_gradients(optimizer, gradient_clip_val=0.5)" in out
    assert "# TODO(lightmigrate): LM006 accumulate_grad_batches=4 moved here" in out


def test_trainer_kwargs_dict_is_recognised():
    out, _ = migrate(MODEL + '''

CASE = {"trainer": {"max_epochs": 2, "gradient_clip_val": 1.0}, "other": {"gradient_clip_val": 3, "lr": 1}}
''')
    assert '{"trainer": {"max_epochs": 2}, "other": {"gradient_clip_val": 3, "lr": 1}}' in out
    assert "gradient_clip_val=1.0" in out


def test_schedulers_step_per_batch():
    out, _ = migrate(MODEL + '''
    def configure_optimizers(self):
        opt = torch.optim.SGD(self.parameters(), lr=0.1)
        return [opt], [torch.optim.lr_scheduler.StepLR(opt, 1)]
''')
    assert "for config in self.trainer.lr_scheduler_configs:" in out
    assert 'if config.interval == "step":' in out


def test_plateau_gets_a_marker():
    out, _ = migrate(MODEL + '''
    def configure_optimizers(self):
        opt = torch.optim.SGD(self.parameters(), lr=0.1)
        return {"optimizer": opt, "lr_scheduler": torch.optim.lr_scheduler.ReduceLROnPlateau(opt), "monitor": "x"}
''')
    assert "# TODO(lightmigrate): LM006 ReduceLROnPlateau" in out
    assert "not isinstance(config.scheduler, torch.optim.lr_scheduler.ReduceLROnPlateau)" in out


def test_markers_for_cases_left_alone():
    cases = {
        "several optimizers": '''\
class M(pl.LightningModule):
    truncated_bptt_steps = 2

    def training_step(self, batch, batch_idx, optimizer_idx, hiddens):
        return {"loss": batch.sum(), "hiddens": None}
''',
        "hiddens without the attribute": '''\
class M(pl.LightningModule):
    def training_step(self, batch, batch_idx, hiddens):
        return {"loss": batch.sum(), "hiddens": None}
''',
        "overridden optimizer_step": MODEL + '''
    def optimizer_step(self, *args, **kwargs):
        super().optimizer_step(*args, **kwargs)
''',
        "already manual": MODEL.replace("super().__init__()", "super().__init__()\n        self.automatic_optimization = False"),
    }
    for title, src in cases.items():
        out, _ = migrate(src)
        assert "# TODO(lightmigrate): LM006" in out, title
        assert "def closure" not in out, title


def test_on_train_batch_end_reading_outputs_is_marked():
    out, _ = migrate(MODEL + '''
    def on_train_batch_end(self, outputs, batch, batch_idx):
        self.log("x", outputs[0]["loss"])
''')
    assert "# TODO(lightmigrate): LM006 under truncated BPTT Lightning 1.x passed a list" in out


def test_no_tbptt_no_change():
    check_rewrite(RULE, HEAD + '''\
class M(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        return batch.sum()
''', None)


def test_full_chain_leaves_no_1x_hooks():
    out, findings = migrate(MODEL + '''
    def training_step_end(self, out):
        return out

    def training_epoch_end(self, outputs):
        self.log("n", float(len(outputs)))
''', rules=ALL_RULES)
    assert "TODO(lightmigrate)" not in out
    for old in ("def training_epoch_end", "def training_step_end", "def tbptt_split_batch"):
        assert old not in out
    assert {f.code for f in findings} == {"LM006"}


def test_lightning_package_import_is_matched():
    src = "import lightning.pytorch as pl\nimport torch\n\n\n" + MODEL
    out = transform_text(src, [RULE], path="model.py").text
    assert "from lightning.pytorch.utilities.memory import recursive_detach" in out




@pytest.mark.parametrize("name", ['tbptt_custom_split_step_end', 'tbptt_hiddens', 'tbptt_lstm_scheduler_clip'])
def test_corpus_case_is_rewritten_and_a_second_run_changes_nothing(name):
    """Idempotency on realistic 1.x code: this rule alone, then again on its own output."""
    check_corpus_case_idempotent(RULE, name)


def test_marked_step_moved_aside_by_step_end_inlining_is_not_marked_again():
    """LM006 marks a training_step it cannot migrate; LM003 then moves that method (and its marker)
    to a helper and writes a new training_step. The next run must not mark the new one."""
    from lightmigrate.rules import ALL_RULES

    source = ("import pytorch_lightning as pl\n\n\nclass Model(pl.LightningModule):\n"
              "    def __init__(self):\n        super().__init__()\n        self.truncated_bptt_steps = 2\n\n"
              "    def training_step(self, batch, batch_idx):\n        return self.layer(batch).sum()\n\n"
              "    def training_step_end(self, outputs):\n        return outputs * 2\n")
    once = transform_text(source, ALL_RULES).text
    assert once.count("TODO(lightmigrate): LM006") == 1
    assert transform_text(once, ALL_RULES).text == once


# ---------------------------------------------------------------------------------------------
# The import root of recursive_detach: the package of the class's own Lightning base


def test_detach_import_comes_from_the_package_of_the_class_base_when_the_file_imports_both():
    head = "import torch\nimport pytorch_lightning as pl\nfrom lightning.pytorch import Trainer\n\n\n"
    out = transform_text(head + MODEL, [RULE], path="model.py").text
    assert "from pytorch_lightning.utilities.memory import recursive_detach\n" in out
    out = transform_text(head.replace("import pytorch_lightning as pl", "import lightning.pytorch as pl")
                         .replace("from lightning.pytorch import Trainer", "from pytorch_lightning import Trainer")
                         + MODEL, [RULE], path="model.py").text
    assert "from lightning.pytorch.utilities.memory import recursive_detach\n" in out


# ---------------------------------------------------------------------------------------------
# find: the sites, for small projects


def sites(text, path="m.py", files=None):
    """``RULE.find`` for ``text`` at ``path``, in a project of ``files`` (path -> text) and it."""
    index = ProjectIndex()
    for p, t in {**(files or {}), path: text}.items():
        index.add_source(t, p)
    return [(s.target, s.action) for s in RULE.find(SourceFile(path, text), RuleContext(path, index))]


PL = "import pytorch_lightning as pl\n\n\n"


@pytest.mark.parametrize("text", [
    PL + "class M(pl.LightningModule):\n    truncated_bptt_steps = 2\n\n"
    "    def training_step(self, batch, batch_idx, hiddens):\n        return batch\n",
    PL + "class M(pl.LightningModule):\n    def __init__(self):\n"
    "        super().__init__()\n        self.truncated_bptt_steps = 5\n\n"
    "    def training_step(self, batch, batch_idx):\n        return batch\n",
    PL + "class M(pl.LightningModule):\n    def tbptt_split_batch(self, batch, split_size):\n        return [batch]\n",
    PL + "class M(pl.LightningModule):\n    def training_step(self, batch, batch_idx, hiddens):\n        return batch\n",
])
def test_find_a_class_with_tbptt(text):
    assert sites(text) == [("M", "edit")]


def test_find_a_class_of_unknown_kind_and_a_subclass_elsewhere():
    unknown = "from somewhere import Base\n\n\nclass M(Base):\n    def training_step(self, batch, batch_idx, hiddens):\n" \
              "        return batch\n"
    # cannot tell what Base is; training_step makes it look like a LightningModule: the editor
    # marks it (it never sets truncated_bptt_steps)
    assert sites(unknown) == [("M", "edit")]
    # without a training_step, its TBPTT hook is marked as in a class not recognisably one
    split_only = "from somewhere import Base\n\n\nclass M(Base):\n    def tbptt_split_batch(self, batch, n):\n" \
                 "        return [batch]\n"
    assert sites(split_only) == [("M", "mark")]
    assert "not recognisably a LightningModule" in transform_text(split_only, [RULE], path="m.py").text
    base = PL + "class Base(pl.LightningModule):\n    truncated_bptt_steps = 2\n"
    child = "from base import Base\n\n\nclass M(Base):\n    def training_step(self, batch, batch_idx, hiddens):\n" \
            "        return batch\n"
    assert sites(child, files={"base.py": base}) == [("M", "edit")]


@pytest.mark.parametrize("text", [
    PL + "class M(pl.LightningModule):\n    def training_step(self, batch, batch_idx):\n"
    "        out, hiddens = self.rnn(batch)  # hiddens are dropped\n        return out.sum()\n",
    # `hiddens` parameters outside any class that has a hook (torch's own decompositions)
    "def rnn_step(x, hiddens, weight):\n    return x @ weight + hiddens\n\n\nclass Cell:\n"
    "    def forward(self, x, hiddens):\n        return x\n",
    # a training_step taking hiddens in a class known not to be a LightningModule
    "import torch\n\n\nclass Loop(object):\n    def training_step(self, batch, batch_idx, hiddens):\n        return batch\n",
    # a class of unknown kind, in a file without TBPTT code ("hiddens" only as a variable)
    "from somewhere import Base\n\n\nclass M(Base):\n    def training_step(self, batch, batch_idx):\n"
    "        hiddens = None\n        return batch\n",
    # a one-line class body: libcst has no statements to look at
    PL + "class M(pl.LightningModule): truncated_bptt_steps = 2\n",
])
def test_find_nothing(text):
    assert sites(text) == []
    assert transform_text(text, [RULE], path="m.py").text == text


def test_find_nothing_in_a_class_marked_on_an_earlier_run():
    text = PL + "class M(pl.LightningModule):\n    truncated_bptt_steps = 2\n\n" \
        "    def training_step(self, batch, batch_idx, optimizer_idx, hiddens):\n        return batch\n"
    assert sites(text) == [("M", "edit")]
    out = transform_text(text, [RULE], path="m.py").text
    assert "TODO(lightmigrate): LM006" in out
    assert sites(out) == []
    # and a rewritten class is left alone on the next run
    out = transform_text(HEAD + MODEL, [RULE], path="m.py").text
    assert sites(out) == []
