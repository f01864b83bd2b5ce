"""LM309: notes for silent behaviour changes; the code never changes."""

import pytest

from lightmigrate.analysis.project import ProjectIndex
from lightmigrate.engine.transform import transform_text
from lightmigrate.output.findings import Kind
from lightmigrate.rules.base import RuleContext, SourceFile
from lightmigrate.rules.lm309_behaviour_notes import NOTE_NONE_DDP, NOTE_ORDER, BehaviourNotesRule

from .conftest import check_rewrite

RULE = BehaviourNotesRule()


def sites(source, files=None, path="x.py"):
    """``RULE.find`` for ``source`` in a project of ``files`` and ``source``, as (line, col)."""
    index = ProjectIndex()
    for other, text in {**(files or {}), path: source}.items():
        index.add_source(text, other)
    return [(s.line, s.col) for s in RULE.find(SourceFile(path, source), RuleContext(path, index))]


def notes(findings):
    return [(f.line, f.message.split(" ")[0:3]) for f in findings if f.kind == Kind.NOTE]


def test_seed_eval_fit_and_csv_notes_with_lines():
    findings = check_rewrite(RULE, '''\
import pytorch_lightning as pl

pl.seed_everything(workers=True)
model.eval()
trainer = pl.Trainer(logger=pl.loggers.CSVLogger("logs"))
trainer.fit(model)
''', None)
    by_line = {f.line: f.message for f in findings}
    assert set(by_line) == {3, 4, 5}
    assert "uses 0 from Lightning 2.2" in by_line[3]
    assert "no longer calls `model.train()`" in by_line[4]
    assert "CSVLogger" in by_line[5]
    assert all(f.kind == Kind.NOTE and f.code == "LM309" for f in findings)


def test_none_step_under_ddp_and_checkpoint_order():
    findings = check_rewrite(RULE, '''\
import pytorch_lightning as pl


class M(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        if batch is None:
            return None
        return batch.sum()

    def on_train_epoch_end(self):
        self.log("score", 1.0)


ckpt = pl.callbacks.ModelCheckpoint(monitor="score")
trainer = pl.Trainer(strategy="ddp", callbacks=[ckpt])
''', None)
    lines = sorted(f.line for f in findings)
    assert lines == [5, 14]
    assert "raises from Lightning 2.3" in [f for f in findings if f.line == 5][0].message


def test_nothing_reported_for_2x_clean_code():
    findings = check_rewrite(RULE, '''\
import pytorch_lightning as pl


class M(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        return batch.sum()


pl.seed_everything(1)
trainer = pl.Trainer(strategy="ddp")
trainer.fit(M())
''', None)
    assert findings == []


def test_signal_handler_kubeflow_and_progress_bar_callback_notes():
    findings = check_rewrite(RULE, '''\
import signal

import pytorch_lightning as pl

signal.signal(signal.SIGTERM, on_term)
env = "KUBEFLOW"
trainer = pl.Trainer()
bar = trainer.progress_bar_callback
trainer.test(model)
''', None)
    by_line = {f.line: f.message for f in findings}
    assert set(by_line) == {5, 6, 8}
    assert "signal" in by_line[5] and "validate/test/predict" in by_line[5]
    assert "Kubeflow" in by_line[6] and "KubeflowEnvironment" in by_line[6]
    assert "RichProgressBar" in by_line[8]


def test_own_signal_handler_without_evaluation_calls_is_quiet():
    findings = check_rewrite(RULE, '''\
import signal

import pytorch_lightning as pl

signal.signal(signal.SIGTERM, on_term)
pl.Trainer().fit(model)
''', None)
    assert findings == []


# ---------------------------------------------------------------------------------------------
# find: one site per note, at the node it names; none where nothing is noted

DDP_MODULE = '''\
import pytorch_lightning as pl


class M(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        if batch is None:
            return None
        return batch.sum()


trainer = pl.Trainer(strategy="ddp")
'''
EPOCH_END = '''\
import pytorch_lightning as pl
from pytorch_lightning.callbacks import EarlyStopping


class M(pl.LightningModule):
    def on_train_epoch_end(self):
        self.log("score", 1.0)


stop = EarlyStopping(monitor="score")
'''


@pytest.mark.parametrize("text, expected", [
    ("import pytorch_lightning as pl\npl.seed_everything()\n", [(2, 0)]),
    ("import pytorch_lightning as pl\npl.seed_everything(  # no seed\n    workers=True)\n", [(2, 0)]),
    ("from pytorch_lightning.loggers import CSVLogger\nlogger = CSVLogger('logs')\n", [(2, 9)]),
    ("trainer.fit(model)\ntrainer.fit(model)\nstrategy = 'ddp_spawn'\n", [(2, 0)]),
    ("model.eval()\ntrainer.fit(model)\n", [(1, 0)]),
    ("import signal\nsignal.signal(signal.SIGTERM, handler)\ntrainer.test(model)\n", [(2, 0)]),
    ("x = trainer.progress_bar_callback\n", [(1, 4)]),
    ("m = trainer.progress_bar_metrics\n", [(1, 4)]),
    ("from pytorch_lightning.plugins.environments import KubeflowEnvironment\n", [(1, 51)]),
    ("import lightning\né = 'kubeflow'\n", [(2, 4)]),  # columns count characters, as libcst's do
    ("def run(trainer, model):\n    model.eval()\n    trainer.fit(model)\n", [(2, 4)]),  # handed a Trainer
    (DDP_MODULE, [(5, 4)]),
    (DDP_MODULE.replace("return None", "return").replace("\n", "\r\n"), [(5, 4)]),  # a bare return, CRLF
    (EPOCH_END, [(10, 7)]),
    # nothing to note
    ("import pytorch_lightning as pl\nseed = pl.seed_everything\n", []),  # named, never called
    ("import pytorch_lightning as pl\npl.seed_everything(1234)\npl.seed_everything(seed=3, workers=True)\n", []),
    (DDP_MODULE.replace("            return None\n", "            return batch.new_zeros(())\n"), []),  # never None
    (DDP_MODULE.replace("(pl.LightningModule)", "(object)"), []),  # not a LightningModule
    (EPOCH_END.replace('monitor="score"', "patience=3"), []),  # nothing monitored
    ("trainer.fit(model)\ntrainer.fit(model)\n", []),  # twice, but no spawn strategy
    # ledger fact L6 (1.9 zeroed the gradients at every validation start) is kept by LM101, not noted
    ("import pytorch_lightning as pl\nt = pl.Trainer(accumulate_grad_batches=2, val_check_interval=0.5)\n", []),
    ("import signal\nsignal.signal(signal.SIGTERM, handler)\ntrainer.fit(model)\n", []),
    ("# kubeflow, in a comment only\nx = 1\n", []),
    # code that is not Lightning's: no import, no Lightning class, no trainer (issue 21, kind 8)
    ("é = 'kubeflow'\n", []),
    ("class Report:\n    def get_metrics(self):\n        return self.progress_bar_metrics\n", []),
    ("from sklearn.svm import SVC\nmodel = SVC()\nmodel.eval()\nmodel.fit(x, y)\n", []),
    ("import keras\nmodel.fit(x)\nmodel.fit(x)\nstrategy = 'ddp_spawn'\n", []),
])
def test_find(text, expected):
    assert sites(text) == expected


def test_find_module_in_another_file():
    base = "import pytorch_lightning as pl\n\n\nclass Base(pl.LightningModule):\n    pass\n"
    sub = DDP_MODULE.replace("import pytorch_lightning as pl\n", "import pytorch_lightning as pl\nfrom base import Base\n") \
        .replace("(pl.LightningModule)", "(Base)")
    assert sites(sub, {"base.py": base}) == [(6, 4)]
    assert sites(sub) == []  # Base unknown: not a LightningModule
    index = ProjectIndex()
    index.add_source(base, "base.py")
    index.add_source(sub, "sub.py")
    found = transform_text(sub, [RULE], "sub.py", index).findings
    assert [(f.line, f.col, f.message) for f in found] == [(6, 5, NOTE_NONE_DDP)]


def test_find_first_node_in_visiting_order():
    # a decorated definition comes before its decorators, as libcst visits it
    text = "import pytorch_lightning\nclass B:\n    @cache(x.progress_bar_metrics)\n    def get_metrics(self):\n        pass\n"
    assert sites(text) == [(4, 4)]


def test_notes_need_no_libcst_parse_and_honour_suppression(monkeypatch):
    """LM309 only reports (``edits_code`` False): a file where it is the only rule with sites is
    never parsed with libcst, and its notes on suppressed lines are dropped."""
    import lightmigrate.engine.transform as transform

    parsed = []
    real = transform.parse_source
    monkeypatch.setattr(transform, "parse_source", lambda *a, **k: parsed.append(1) or real(*a, **k))
    text = '''\
import pytorch_lightning as pl

pl.seed_everything()
model.eval()  # lightmigrate: ignore[LM309]
trainer = pl.Trainer()
trainer.fit(model)
'''
    out = transform_text(text, [RULE], "x.py", ProjectIndex())
    assert parsed == []
    assert not out.changed and out.text == text
    assert [(f.line, f.code) for f in out.findings] == [(3, "LM309")]
    assert not RULE.edits_code


# Ledger B2.6: the C11 note is for a module's own logging on_train_epoch_end left as it is

MONITORED_1X = '''\
import torch
import pytorch_lightning as pl
from pytorch_lightning.callbacks import EarlyStopping


class M(pl.LightningModule):
    def training_epoch_end(self, outputs):
        self.log("train_mean", torch.stack([o["loss"] for o in outputs]).mean())

    def on_train_epoch_end(self):
        self.log("score", 1.0)


stop = EarlyStopping(monitor="score")
'''


def _lm001_then_lm309(text):
    from lightmigrate.rules.lm001_epoch_end import EpochEndRule

    index = ProjectIndex()
    index.add_source(text, "x.py")
    return transform_text(text, [EpochEndRule(), RULE], path="x.py", project=index)


def test_order_note_only_where_the_hook_was_not_moved():
    # a 1.x class: LM001 moves its on_train_epoch_end after the monitors; nothing to note, in
    # either run (the on_train_epoch_end left holds training_epoch_end's body, B2.5)
    first = _lm001_then_lm309(MONITORED_1X)
    assert "_train_epoch_end_after_monitors" in first.text
    assert not [f for f in first.findings if f.code == "LM309"]
    second = _lm001_then_lm309(first.text)
    assert second.text == first.text and not [f for f in second.findings if f.code == "LM309"]
    # no 1.x evidence: the code stays, and the note says why it was not moved
    plain = MONITORED_1X.replace('''    def training_epoch_end(self, outputs):
        self.log("train_mean", torch.stack([o["loss"] for o in outputs]).mean())

''', "")
    result = _lm001_then_lm309(plain)
    assert result.text == plain
    assert [(f.line, f.message) for f in result.findings if f.code == "LM309"] == [(11, NOTE_ORDER)]  # at EarlyStopping(
    assert "only in a class whose removed `*_epoch_end` hooks it migrates" in NOTE_ORDER


def test_order_note_not_for_training_epoch_end_alone():
    # what 1.9's callbacks saw the same epoch (B2.5, kept by LM001): nothing to note
    only_old = MONITORED_1X.replace('''    def on_train_epoch_end(self):
        self.log("score", 1.0)
''', "").replace("\n\n\n\nstop", "\n\n\nstop")
    assert sites(only_old) == []
