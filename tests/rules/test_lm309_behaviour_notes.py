"""LM309: notes for silent behaviour changes; the code never changes."""

from lightmigrate.output.findings import Kind
from lightmigrate.rules.lm309_behaviour_notes import BehaviourNotesRule

from .conftest import check_rewrite

RULE = BehaviourNotesRule()


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
