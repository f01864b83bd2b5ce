"""LM102: Trainer methods and properties."""

import libcst as cst
import pytest

from lightmigrate.analysis.project import ProjectIndex
from lightmigrate.engine import transform_text
from lightmigrate.output.findings import Kind
from lightmigrate.rules.base import RuleContext, Site, SourceFile
from lightmigrate.rules.lm102_trainer_api import LR_LOST, LR_SET_ELSEWHERE, LR_SUGGESTION, TrainerApiRule
from lightmigrate.rules.shared.lr_suggestion import APPLY_CODE, SUGGEST_CODE

from .conftest import check_rewrite, run_rule

RULE = TrainerApiRule()
HEAD = "import pytorch_lightning as pl\n\n\nclass CB(pl.Callback):\n    def on_fit_start(self, trainer, pl_module):\n"


VAL_LIST = "if not isinstance(val_loaders, (list, tuple)):\n            val_loaders = [val_loaders]\n        "
TEST_LIST = "if not isinstance(test_loaders, (list, tuple)):\n            test_loaders = [test_loaders]\n        "


def body(line):
    return HEAD + "        " + line + "\n"


@pytest.mark.parametrize("before,after", [
    ("x = trainer.train_dataloader.loaders", "x = trainer.train_dataloader"),
    ("x = pl_module.trainer.root_gpu", "x = pl_module.trainer.strategy.root_device.index"),
    ("x = trainer.training_type_plugin", "x = trainer.strategy"),
    ("x = trainer.data_parallel_device_ids", "x = trainer.device_ids"),
    ("x = trainer.progress_bar_dict", "x = trainer.progress_bar_metrics"),
    ("x = trainer.tested_ckpt_path", "x = trainer.ckpt_path"),
    ("dls = trainer.val_dataloaders\n        n = len(dls) if isinstance(dls, (list, tuple)) else 1", None),
    # T-prop2: read once into a local that is a list, as 1.9's was
    ("for dl in trainer.val_dataloaders: pass",
     "val_loaders = trainer.val_dataloaders\n        " + VAL_LIST + "for dl in val_loaders: pass"),
    ("dls = trainer.val_dataloaders",
     "dls = trainer.val_dataloaders\n        if not isinstance(dls, (list, tuple)):\n            dls = [dls]"),
    ("x = trainer.val_dataloaders[0]",
     "val_loaders = trainer.val_dataloaders\n        " + VAL_LIST + "x = val_loaders[0]"),
    ("n = len(trainer.test_dataloaders)",
     "test_loaders = trainer.test_dataloaders\n        " + TEST_LIST + "n = len(test_loaders)"),
    ('ok = trainer.precision == "16"', 'ok = trainer.precision == "16-mixed"'),
    ("ok = trainer.precision != 'bf16'", "ok = trainer.precision != 'bf16-mixed'"),
    ("ok = trainer.precision in ('32', 'bf16')", "ok = trainer.precision in ('32-true', 'bf16-mixed')"),
    ('ok = trainer.precision == "16-mixed"', None),
    ("x = trainer.num_devices", None),
    ("x = other.root_gpu", None),
])
def test_attribute_rewrites(before, after):
    check_rewrite(RULE, body(before), None if after is None else body(after))


def test_data_parallel_and_prediction_writers_import_from_the_files_root():
    src = ("import lightning.pytorch as L\n\n\ndef f(trainer):\n    a = trainer.data_parallel\n"
           "    b = trainer.prediction_writer_callbacks\n")
    check_rewrite(RULE, src,
                  "import lightning.pytorch as L\nfrom lightning.pytorch.strategies import ParallelStrategy\n"
                  "from lightning.pytorch.callbacks import BasePredictionWriter\n\n\ndef f(trainer):\n"
                  "    a = isinstance(trainer.strategy, ParallelStrategy)\n"
                  "    b = [c for c in trainer.callbacks if isinstance(c, BasePredictionWriter)]\n")


def test_fit_keywords():
    src = ("import pytorch_lightning as pl\n\nt = pl.Trainer()\nt.fit(m, train_dataloader=a, val_dataloaders=b)\n"
           "t.validate(m, val_dataloaders=b)\nt.test(m, test_dataloaders=c)\n")
    check_rewrite(RULE, src,
                  "import pytorch_lightning as pl\n\nt = pl.Trainer()\nt.fit(m, train_dataloaders=a, val_dataloaders=b)\n"
                  "t.validate(m, dataloaders=b)\nt.test(m, dataloaders=c)\n")


GUIDE_URL = "https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html"
HELPERS_HEAD = "import torch\nimport pytorch_lightning as pl\nfrom pytorch_lightning.tuner import Tuner\n"


def test_tuner_lr_find_keeps_the_19_default():
    """``update_attr=True`` given: 1.9 set its own suggestion, which the line after sets again."""
    src = "import pytorch_lightning as pl\n\ntrainer = pl.Trainer()\nf = trainer.tuner.lr_find(model, update_attr=True)\n" \
          "n = trainer.tuner.scale_batch_size(model)\n"
    check_rewrite(RULE, src,
                  HELPERS_HEAD + "from pytorch_lightning.utilities.parsing import lightning_hasattr, lightning_setattr\n\n\n"
                  f"{SUGGEST_CODE}\n\n{APPLY_CODE}\n\ntrainer = pl.Trainer()\n"
                  "f = Tuner(trainer).lr_find(model, update_attr=True)\n"
                  "apply_lr_suggestion_19(model, f)\n"
                  "n = Tuner(trainer).scale_batch_size(model, max_trials=26, margin=0.0, max_val=2**31)\n")


def test_lr_find_update_attr_inside_an_expression_is_marked():
    src = "import pytorch_lightning as pl\n\ntrainer = pl.Trainer()\nprint(trainer.tuner.lr_find(model, update_attr=True))\n"
    check_rewrite(RULE, src,
                  "import pytorch_lightning as pl\nfrom pytorch_lightning.tuner import Tuner\n\ntrainer = pl.Trainer()\n"
                  f"# TODO(lightmigrate): LM102 {LR_SUGGESTION.format(why=LR_SET_ELSEWHERE)} ({GUIDE_URL})\n"
                  "print(Tuner(trainer).lr_find(model, update_attr=True))\n")


def test_suggestion_of_a_1x_finder_gets_1_9s_rule():
    """T-meth2: the finder bound once in the function, the lr_find call itself, the finder read
    as ``.results`` and ``.plot()``: 1.9's suggestion through a helper added once, after the
    imports (``import torch`` is there already), no marker."""
    src = ("import torch\nimport pytorch_lightning as pl\n\nSEED = 1\n\n\ndef find(model, dl):\n"
           "    trainer = pl.Trainer(max_epochs=3)\n"
           "    lr_finder = trainer.tuner.lr_find(model, dl, num_training=50)\n"
           "    lr_finder.plot(suggest=True)\n"
           "    new_lr = lr_finder.suggestion(skip_begin=5)\n"
           "    return new_lr, lr_finder.results, trainer.tuner.lr_find(model).suggestion()\n")
    check_rewrite(RULE, src,
                  "import torch\nimport pytorch_lightning as pl\nfrom pytorch_lightning.tuner import Tuner\n\n\n"
                  f"{SUGGEST_CODE}\n\nSEED = 1\n\n\ndef find(model, dl):\n"
                  "    trainer = pl.Trainer(max_epochs=3)\n"
                  "    lr_finder = Tuner(trainer).lr_find(model, dl, num_training=50, update_attr=False)\n"
                  "    lr_finder.plot(suggest=True)\n"
                  "    new_lr = lr_suggestion_19(lr_finder, skip_begin=5)\n"
                  "    return new_lr, lr_finder.results, lr_suggestion_19(Tuner(trainer).lr_find(model, update_attr=False))\n")


def test_suggestion_on_a_finder_of_a_project_trainer_attribute():
    """pytorch_tabular 1.0's ``find_learning_rate`` (the sweep): ``self.trainer.tuner.lr_find(...)``;
    the file also reads ``result['lr_find'].suggestion()`` of a ``tune()`` it cannot rewrite, which
    does not concern this finder."""
    src = ("import pytorch_lightning as pl\nimport torch\n\n\nclass TabularModel:\n"
           "    def fit(self, train_loader):\n"
           "        result = self.trainer.tune(self.model, train_loader)\n"
           "        print(result['lr_find'].suggestion())\n\n"
           "    def find_learning_rate(self, model, train_loader, plot=True):\n"
           "        lr_finder = self.trainer.tuner.lr_find(\n            model=self.model,\n"
           "            train_dataloaders=train_loader,\n        )\n"
           "        if plot:\n            fig = lr_finder.plot(suggest=True)\n"
           "        new_lr = lr_finder.suggestion()\n        return new_lr, lr_finder.results\n")
    out, _ = run_rule(RULE, src)
    assert "        new_lr = lr_suggestion_19(lr_finder)\n" in out
    assert "            train_dataloaders=train_loader,\n            update_attr=False,\n        )\n" in out
    assert "T-meth2" not in out and out.count("def lr_suggestion_19(") == 1 and out.count("import torch") == 1
    assert "        print(result['lr_find'].suggestion())\n" in out  # (its tune() is marked: T-meth1)
    assert run_rule(RULE, out)[0] == out


def test_suggestion_the_rule_cannot_trace_keeps_the_marker_where_the_finder_leaves():
    src = ("import pytorch_lightning as pl\n\n\ndef find(model, trainer):\n"
           "    finder = trainer.tuner.lr_find(model)\n    return finder\n\n\n"
           "def kept(model, trainer):\n    finder = trainer.tuner.lr_find(model)\n    return finder.suggestion()\n\n\n"
           "def report(f):\n    return f.suggestion()\n")
    out, _ = run_rule(RULE, src)
    marker = f"    # TODO(lightmigrate): LM102 {LR_SUGGESTION.format(why=LR_LOST)} ({GUIDE_URL})\n"
    assert out.count(marker) == 1
    assert marker + "    finder = Tuner(trainer).lr_find(model, update_attr=False)\n    return finder\n" in out
    assert "    return lr_suggestion_19(finder)\n" in out and "    return f.suggestion()\n" in out
    assert run_rule(RULE, out)[0] == out


def test_helpers_already_in_the_file_are_not_written_again():
    first, _ = run_rule(RULE, "import pytorch_lightning as pl\n\n\ndef a(model, trainer):\n"
                              "    return trainer.tuner.lr_find(model).suggestion()\n")
    more = first + "\n\ndef b(model, trainer):\n    f = trainer.tuner.lr_find(model, update_attr=True)\n"
    out, _ = run_rule(RULE, more)
    assert out.count("def lr_suggestion_19(") == 1 and out.count("def apply_lr_suggestion_19(") == 1
    assert "    apply_lr_suggestion_19(model, f)\n" in out
    assert run_rule(RULE, out)[0] == out


def test_tuner_argument_added_on_its_own_line():
    src = ("import pytorch_lightning as pl\n\ntrainer = pl.Trainer()\nlr_finder = trainer.tuner.lr_find(\n"
           "    model=model,\n    num_training=num_training,\n)\n")
    check_rewrite(RULE, src, "import pytorch_lightning as pl\nfrom pytorch_lightning.tuner import Tuner\n\n"
                  "trainer = pl.Trainer()\nlr_finder = Tuner(trainer).lr_find(\n    model=model,\n"
                  "    num_training=num_training,\n    update_attr=False,\n)\n")


def test_scale_batch_size_max_trials_off_by_one():
    src = "import pytorch_lightning as pl\n\ntrainer = pl.Trainer()\nn = trainer.tuner.scale_batch_size(model, max_trials=3, mode='binsearch')\n"
    check_rewrite(RULE, src, "import pytorch_lightning as pl\nfrom pytorch_lightning.tuner import Tuner\n\ntrainer = pl.Trainer()\n"
                  "n = Tuner(trainer).scale_batch_size(model, max_trials=4, mode='binsearch', margin=0.0, max_val=2**31)\n")


def test_tune_batch_size_then_lr():
    src = ("import pytorch_lightning as pl\n\ndef main():\n    trainer = pl.Trainer(auto_scale_batch_size=True, auto_lr_find='lr')\n"
           "    trainer.tune(model, scale_batch_size_kwargs={'max_trials': 3})\n")
    out, _ = run_rule(RULE, src)
    assert "TODO(lightmigrate)" not in out
    assert out.endswith("    with isolate_rng():\n        tuner = Tuner(trainer)\n"
                        "        tuner.scale_batch_size(\n            model,\n            mode=\"power\",\n"
                        "            max_trials=4,\n            margin=0.0,\n            max_val=2**31,\n        )\n"
                        "        lr_finder = tuner.lr_find(model, update_attr=True, attr_name=\"lr\")\n"
                        "        apply_lr_suggestion_19(model, lr_finder, \"lr\")\n")
    assert run_rule(RULE, out)[0] == out


def test_tune_lr_find_kwargs_become_keywords_and_keep_1_9s_update_attr():
    """1.9's tune(): ``lr_find_kwargs.setdefault("update_attr", True)``: a literal dict's entries
    become keywords; with ``update_attr=False`` in it 1.9 set nothing, so no helper; a
    non-literal ``update_attr`` leaves the tune() call marked."""
    src = ("import pytorch_lightning as pl\n\n\ndef main(model, dl, lr_finder):\n    trainer = pl.Trainer(auto_lr_find=True)\n"
           "    trainer.tune(model, lr_find_kwargs={'min_lr': 1e-5, 'mode': 'linear'})\n")
    out, _ = run_rule(RULE, src)
    assert ("        lr_finder_1 = tuner.lr_find(model, update_attr=True, min_lr=1e-5, mode='linear')\n"
            "        apply_lr_suggestion_19(model, lr_finder_1)\n") in out
    assert run_rule(RULE, out)[0] == out
    off, _ = run_rule(RULE, src.replace("'mode': 'linear'", "'update_attr': False"))
    assert "        tuner.lr_find(model, update_attr=False, min_lr=1e-5)\n" in off
    assert "lr_suggestion_19" not in off
    unknown, _ = run_rule(RULE, src.replace("'mode': 'linear'", "'update_attr': flag"))
    assert "# TODO(lightmigrate): LM102 T-meth1" in unknown and "trainer.tune(" in unknown


def test_tune_without_visible_flags_is_marked():
    out, findings = run_rule(RULE, "import pytorch_lightning as pl\n\ndef main(trainer):\n    trainer.tune(model)\n")
    assert "# TODO(lightmigrate): LM102 T-meth1" in out and "    trainer.tune(model)\n" in out
    # the marker says why the call is not rewritten
    assert "not rewritten because this Trainer is not built in this function" in out


def test_tune_of_a_trainer_another_method_makes_from_an_unreadable_dict_says_exactly_why():
    """pytorch_tabular 1.0 (the sweep): ``self.trainer`` comes from ``self._prepare_trainer()``,
    which spreads a comprehension over the config into ``pl.Trainer``: which tuners 1.9's tune()
    ran cannot be read, and the marker names the method, the dict and where its keys come from."""
    source = (
        "import pytorch_lightning as pl\n\n\n"
        "class TabularModel:\n"
        "    def _prepare_trainer(self, callbacks):\n"
        "        names = [p for p in pl.Trainer.__init__.__code__.co_varnames]\n"
        "        trainer_args_config = {k: v for k, v in self.config.items() if k in names}\n"
        "        trainer_args_config.update(self.config.trainer_kwargs)\n"
        "        return pl.Trainer(callbacks=callbacks, **trainer_args_config)\n\n"
        "    def _prepare_for_training(self, callbacks=None):\n"
        "        self.trainer = self._prepare_trainer(callbacks)\n\n"
        "    def fit(self, train_loader):\n"
        "        self._prepare_for_training()\n"
        "        if self.config.auto_lr_find:\n"
        "            result = self.trainer.tune(self.model, train_loader)\n"
        "        self.trainer = None\n"
    )
    out, _ = run_rule(RULE, source)
    assert ("not rewritten because `self.trainer` is made by `_prepare_trainer()` as "
            "`pl.Trainer(..., **trainer_args_config)`, and that dict's auto_lr_find / auto_scale_batch_size "
            "entries (which decided what 1.9's tune() ran) cannot be read: its keys come from a comprehension "
            "over `self.config.items()` and an update from `self.config.trainer_kwargs`;") in out
    assert "            result = self.trainer.tune(self.model, train_loader)\n" in out
    assert run_rule(RULE, out)[0] == out


def test_tune_result_keeps_1_9_dict():
    """Issue 25 kind 4: ``result = trainer.tune(...)`` (pytorch_tabular-style) becomes Tuner calls whose
    results fill the dict 1.9's tune() returned, keyed by the tuners that ran; 1.9's suggestion is
    set on the model and read from ``result['lr_find']``."""
    src = ("import pytorch_lightning as pl\n\n\ndef main(model, dl):\n    trainer = pl.Trainer(auto_lr_find=True)\n"
           "    result = trainer.tune(model, dl)\n    print(result['lr_find'].suggestion())\n")
    check_rewrite(RULE, src,
                  HELPERS_HEAD + "from pytorch_lightning.utilities.seed import isolate_rng\n"
                  "from pytorch_lightning.utilities.parsing import lightning_hasattr, lightning_setattr\n\n\n"
                  f"{SUGGEST_CODE}\n\n{APPLY_CODE}\n\ndef main(model, dl):\n"
                  "    trainer = pl.Trainer(auto_lr_find=True)\n"
                  "    with isolate_rng():\n        tuner = Tuner(trainer)\n"
                  '        result = {\n            "lr_find": tuner.lr_find(model, train_dataloaders=dl, update_attr=True),\n'
                  '        }\n        apply_lr_suggestion_19(model, result["lr_find"])\n'
                  "    print(lr_suggestion_19(result['lr_find']))\n")
    both = src.replace("auto_lr_find=True", "auto_lr_find=True, auto_scale_batch_size='binsearch'")
    out, _ = run_rule(RULE, both)
    assert ('        result = {\n            "scale_batch_size": tuner.scale_batch_size(model, train_dataloaders=dl, '
            'mode="binsearch", max_trials=26, margin=0.0, max_val=2**31),\n'
            '            "lr_find": tuner.lr_find(model, train_dataloaders=dl, update_attr=True),\n        }\n') in out
    none = src.replace("auto_lr_find=True", "max_epochs=1")
    assert "        result = {}\n" in run_rule(RULE, none)[0]
    assert [(s.line, s.action) for s in sites(src)][:1] == [(6, "tune")]


def test_trainer_model_setter_becomes_strategy_model():
    """T-prop11: 1.9's ``trainer.model = m`` only passed ``m`` to ``trainer.strategy.model``,
    which 2.x still has (pytorch_tabular's load_model)."""
    check_rewrite(RULE, body("trainer.model = pl_module"), body("trainer.strategy.model = pl_module"))
    src = "import pytorch_lightning as pl\n\ntabular_model.trainer = pl.Trainer()\ntabular_model.trainer.model = model\n"
    check_rewrite(RULE, src, src.replace(".trainer.model =", ".trainer.strategy.model ="))
    assert [(s.target, s.action) for s in sites(src)] == [("model", "model-setter")]


MANUAL = ("import pytorch_lightning as pl\n\n\nclass M(pl.LightningModule):\n    def training_step(self, batch, batch_idx):\n"
          "        opt = self.optimizers()\n        loss = self(batch)\n        self.manual_backward(loss)\n        opt.step()\n")


@pytest.mark.parametrize("tail,after", [
    # the step returns nothing: the line goes and the step returns the loss the LR finder reads
    ("        # track the loss for the lr finder\n        self.trainer.fit_loop.running_loss.append(loss)\n"
     "        self.log('loss', loss)\n", "        self.log('loss', loss)\n        return loss\n"),
    # it already returns that loss (as the value or under "loss")
    ("        self.trainer.fit_loop.running_loss.append(loss.detach())\n        return {'loss': loss}\n",
     "        return {'loss': loss}\n"),
    ("        if batch_idx:\n            self.trainer.fit_loop.running_loss.append(loss)\n        return loss\n",
     "        if batch_idx:\n            pass\n        return loss\n"),
])
def test_running_loss_append_is_dropped(tail, after):
    """Issue 25 kind 4: 2.x's LR finder reads the loss training_step returns, not a running loss."""
    check_rewrite(RULE, MANUAL + tail, MANUAL + after)
    assert [s.action for s in sites(MANUAL + tail)] == ["drop"]


def test_running_loss_return_not_added_when_a_subclass_reads_outputs():
    other = {"sub.py": "from model import M\n\n\nclass Sub(M):\n    def on_train_batch_end(self, outputs, batch, i):\n"
                       "        self.seen = outputs\n"}
    text = MANUAL + "        self.trainer.fit_loop.running_loss.append(loss)\n"
    assert [s.action for s in sites(text, path="model.py", files=other)] == ["drop-mark"]


@pytest.mark.parametrize("tail", [
    "        self.trainer.fit_loop.running_loss.append(loss)\n        return loss * 2\n",  # returns another value
    "        self.trainer.fit_loop.running_loss.append(loss)\n        loss = None\n",  # rebound after
    "        self.trainer.fit_loop.running_loss.append(loss)\n        if batch_idx:\n            return\n",
    # returning the loss would change what training_epoch_end receives
    "        self.trainer.fit_loop.running_loss.append(loss)\n\n    def training_epoch_end(self, outputs):\n"
    "        self.n = len(outputs)\n",
])
def test_running_loss_append_marked_with_the_reason(tail):
    out, findings = run_rule(RULE, MANUAL + tail)
    markers = [f for f in findings if f.kind is Kind.MARKER]
    assert len(markers) == 1 and "2.x has no `fit_loop.running_loss`" in markers[0].message
    assert "Not done here because " in markers[0].message
    assert run_rule(RULE, out)[0] == out


@pytest.mark.parametrize("line,row", [
    ("trainer.reset_val_dataloader(pl_module)", "T-meth4"),
    ("x = trainer.amp_level", "T-prop6"),  # (apex: amp_backend and using_native_amp are rewritten)
    ("x = trainer.optimizer_frequencies", "T-prop8"),
    ("x = trainer.tuning", "T-prop9"),
    ("x = trainer.resume_from_checkpoint", "T-prop10"),
    ("trainer.fit_loop = loop", "T-prop12"),
    ("trainer.fit_loop.max_steps = 10", "T-prop13"),
    ("x = trainer.fit_loop.running_loss", "T-prop14"),
    ("x = trainer.num_gpus", "A.8"),
    ("ok = trainer.precision == 16", "T-prop7"),
    ("x = trainer.slurm_job_id", "A.8"),
])
def test_marked(line, row):
    out, findings = run_rule(RULE, body(line))
    markers = [f for f in findings if f.kind is Kind.MARKER]
    assert len(markers) == 1 and markers[0].message.startswith(row) and markers[0].code == "LM102"
    assert run_rule(RULE, out)[0] == out


def test_weights_only_note_for_checkpoint_loads():
    _, findings = run_rule(RULE, "import pytorch_lightning as pl\n\nt = pl.Trainer()\nt.fit(m, ckpt_path='a.ckpt')\n"
                                 "t.test(m, ckpt_path='b.ckpt', weights_only=False)\n")
    notes = [f for f in findings if f.kind is Kind.NOTE]
    assert [(n.line, n.message[:9]) for n in notes] == [(4, "T-prop15:")]


def test_file_without_lightning_is_left_alone():
    check_rewrite(RULE, "def f(trainer):\n    return trainer.root_gpu\n", None)


# --- find: the sites, exactly where the fix acts -------------------------------------------------

LOADERS_GUARDED = '''\
import pytorch_lightning as pl


class M(pl.LightningModule):
    def on_validation_epoch_start(self):
        loaders = self.trainer.val_dataloaders
        self.outputs = [[] for _ in (loaders if isinstance(loaders, (list, tuple)) else [loaders])]

    def on_test_epoch_start(self):
        n = len((self.trainer.test_dataloaders if isinstance(self.trainer.test_dataloaders, (list, tuple)) else [self.trainer.test_dataloaders]))
'''
PL = "import pytorch_lightning as pl\n"


def sites(text, path="train.py", files=None):
    """``RULE.find`` for ``text`` at ``path`` in a project of ``files`` and that file."""
    index = ProjectIndex()
    for other, other_text in (files or {}).items():
        index.add_source(other_text, other)
    index.add_source(text, path)
    return RULE.find(SourceFile(path, text), RuleContext(path, index))


def fix_acts(text, found, path="train.py"):
    """Whether the fix changes ``text`` or reports something for the sites ``found``."""
    ctx = RuleContext(path, ProjectIndex())
    return RULE.fix(cst.parse_module(text), found, ctx).code != text or bool(ctx.findings)


@pytest.mark.parametrize("text,expected", [
    (PL + "\n\nclass M(pl.LightningModule):\n    def f(self):\n        return self.trainer.root_gpu\n",
     [("root_gpu", "rename")]),
    (PL + "if trainer.precision == 16:\n    pass\n", [("precision", "precision")]),
    (PL + "trainer.model = net\n", [("model", "model-setter")]),
    (PL + "trainer.fit(model, train_dataloader=dl)\n", [("fit", "call")]),
    (PL + "trainer.test(model, ckpt_path='best')\n", [("test", "call")]),
    ("from pytorch_lightning import Trainer as T\nt = T(auto_lr_find=True)\nt.tune(model)\n",
     [("tune", "tune"), ("tune", "call")]),
    (PL + "n = len(trainer.val_dataloaders)\n", [("val_dataloaders", "wrap")]),
    (PL + "loop.fit_loop.max_steps = 3\n", [("max_steps", "setter")]),
    (PL + "loop.fit_loop.max_steps = (  # set once\n    3)\nprint(loop.fit_loop.min_steps)\n", [("max_steps", "setter")]),
    (PL + "x = self.trainer.fit_loop.epoch_loop.batch_loop\n", [("batch_loop", "internals")]),
    (PL + "(loop.fit_loop  # the loop\n ).max_steps = 3\n", [("max_steps", "setter")]),
    ("from pytorch_lightning import Trainer\nt = Trainer()\nn = t.num_gpus\n", [("num_gpus", "mark")]),
    ("from pytorch_lightning import Trainer\nt = Trainer()\nt.model = net\n", [("model", "model-setter")]),
    (PL + "self.tr = pl.Trainer()\nif self.tr.precision == '16':\n    pass\n", [("precision", "precision")]),
    (PL + "for dl in trainer.val_dataloaders:\n    pass\n", [("val_dataloaders", "wrap")]),
    (PL + "n = (self.trainer  # the loop\n     ).test_dataloaders[0]\n", [("test_dataloaders", "wrap")]),
    (PL + "\n\nclass M(pl.LightningModule):\n    def on_validation_epoch_start(self):\n"
     "        loaders = self.trainer.val_dataloaders\n\n    def check(self, loaders):\n"
     "        return isinstance(loaders, (list, tuple))\n", [("val_dataloaders", "wrap")]),  # the check is elsewhere
    (PL + "if trainer.precision < 3 == 16:\n    pass\n", [("precision", "precision")]),  # a chain: marked
    (PL + "ok = trainer.precision == p == '16'\n", [("precision", "precision")]),
    (PL + "d = trainer.val_dataloaders  # all of them\n", [("val_dataloaders", "wrap")]),
    (PL + "d = trainer.val_dataloaders\\\n    [0]\n", [("val_dataloaders", "wrap")]),
    (PL + "for i, d in enumerate(trainer.test_dataloaders ):\n    pass\n", [("test_dataloaders", "wrap")]),
    (PL + "n = len(trainer.val_dataloaders)", [("val_dataloaders", "wrap")]),
    (PL + "lr = trainer.tuner.lr_find(model)\n", [("lr_find", "tuner")]),
    (PL + "from pytorch_lightning.loops.optimization.optimizer_loop import OptimizerLoop\n",
     [("optimizer_loop", "internals")]),  # libcst sees the dotted name as attributes
    # nothing to do
    ("trainer.fit(model, train_dataloader=dl)\nx = trainer.root_gpu\n", []),  # no Lightning import
    (PL + "trainer.fit(model, train_dataloaders=dl)\n", []),
    (PL + "print(trainer.precision)\nm = trainer.model\n", []),
    (PL + "runner.fit(model, train_dataloader=dl)\nx = runner.root_gpu\n", []),  # no trainer
    (PL + "x = args.gpus\nself.model = net\nprint(trainer.max_epochs)\n", []),
    (PL + "if args.precision == 16:\n    print(trainer.precision)\n", []),
    (LOADERS_GUARDED, []),  # what LM003 and LM102 write: left alone
    ("from pytorch_lightning import Trainer\nt = Trainer(gpus=args.gpus)\nself.model = net\nt.fit(self.model)\n", []),
    (PL + "if self.trainer.fit_loop.max_steps == -1:\n    steps = 0\n", []),  # read: 2.x still has it
    (PL + "loop.fit_loop.min_steps += 1\n", []),
    (PL + "if trainer.val_dataloaders is None:\n    pass\n", []),
    (PL + "ok = bool(trainer.test_dataloaders or [])\n", []),
    (PL + "if self.trainer.precision not in precision_to_bits:\n    pass\n", []),
    (PL + "same = trainer.precision == other.precision\n", []),
    (PL + "self.max_steps = 3\nprint(self.trainer.fit_loop.min_steps)\n", []),
])
def test_find(text, expected):
    found = sites(text)
    assert [(s.target, s.action) for s in found] == expected
    assert fix_acts(text, found) == bool(expected)


def test_find_tune_statements():
    text = ("import pytorch_lightning as pl\nt = pl.Trainer(auto_lr_find=True)\nt.tune(m)\nif x: t.tune(m)\n"
            "a = 1; t.tune(m)\nt.tune(m); a = 1\nt.tune(m, unknown=1)\n")
    found = sites(text)
    # only a statement on its own line becomes Tuner calls; every trainer.tune() call is marked
    assert [(s.line, s.action, s.data[:2] if s.action == "tune" else s.data[0][:10]) for s in found] == [
        (3, "tune", (True, False)), (3, "call", "tune-mark:"), (4, "call", "tune-mark:"),
        (5, "call", "tune-mark:"), (6, "call", "tune-mark:"), (7, "call", "tune-mark:")]
    twice = text.replace("t = pl.Trainer(auto_lr_find=True)\n", "t = pl.Trainer(auto_lr_find=True)\n" * 2)
    assert not any(s.action == "tune" for s in sites(twice))  # which Trainer is tuned: unknown


def test_find_names_bound_to_a_trainer_and_wide_characters():
    text = 'import pytorch_lightning as pl\nself.tr = pl.Trainer()\nx = "é"; g = self.tr.gpus\n'
    assert [(s.line, s.col, s.target, s.action) for s in sites(text)] == [(3, 14, "gpus", "mark")]  # UTF-8 column
    assert "TODO(lightmigrate): LM102 A.8: `trainer.gpus`" in transform_text(text, [RULE], "train.py").text


def test_find_does_not_depend_on_the_other_files_of_the_project():
    other = {"base.py": "import pytorch_lightning as pl\n\n\nclass Base(pl.LightningModule):\n    pass\n"}
    text = ("from base import Base\nimport pytorch_lightning as pl\n\n\nclass M(Base):\n    def f(self):\n"
            "        return self.trainer.root_gpu, self.runner.root_gpu\n")
    assert sites(text, "m.py", other) == sites(text) == [Site(7, 15, "root_gpu", "rename")]


def test_prefilter_needs_a_lightning_import_in_the_text():
    assert not RULE.may_apply("def step(trainer):\n    return trainer.root_gpu\n")
    assert RULE.may_apply("import lightning.pytorch as pl\nx = trainer.root_gpu\n")


def test_find_spells_receivers_with_their_parentheses_as_libcst_does():
    # `self.tr` is bound to a Trainer; `(self.tr)` is another spelling, which the rule never took
    # for a Trainer (a name in parentheses is still that name)
    text = ("import pytorch_lightning as pl\nself.tr = pl.Trainer()\nt = pl.Trainer()\n"
            "a = (self.tr).gpus\nb = self.tr.gpus\nc = (t).gpus\n")
    assert [(s.line, s.target) for s in sites(text)] == [(5, "gpus"), (6, "gpus")]


ESB = '''\
import pytorch_lightning as pl


class M(pl.LightningModule):
    def compute_loss(self, out):
        return out * min(1.0, self.global_step / self.trainer.estimated_stepping_batches)

    def training_step(self, batch, batch_idx):
        return self.compute_loss(batch)

    def test_step(self, batch, batch_idx):
        self.log("loss", self.compute_loss(batch))

    def configure_optimizers(self):
        return make(self, self.trainer.estimated_stepping_batches)
'''


def test_estimated_stepping_batches_outside_fit_is_marked():
    """Issue 25 kind 5: read from test_step (here through a loss helper) with no train_dataloader,
    1.9.5 returned -1 (or an earlier fit's value) and 2.6.6 raises; configure_optimizers (fit) is fine."""
    found = sites(ESB)
    assert [(s.line, s.action, s.data) for s in found] == [(6, "mark-esb", "compute_loss (called from test_step)")]
    out, findings = run_rule(RULE, ESB)
    markers = [f for f in findings if f.kind is Kind.MARKER]
    assert len(markers) == 1 and "read in compute_loss (called from test_step)" in markers[0].message
    assert run_rule(RULE, out)[0] == out
    # the module has its own training data: 2.x counts it in trainer.test() as 1.9 did
    with_data = ESB + "\n    def train_dataloader(self):\n        return loader\n"
    assert sites(with_data) == []
    # inherited from a base class in another file
    base = {"base.py": "import pytorch_lightning as pl\n\n\nclass Base(pl.LightningModule):\n"
                       "    def train_dataloader(self):\n        return loader\n"}
    sub = ESB.replace("class M(pl.LightningModule):", "from base import Base\n\n\nclass M(Base):")
    assert sites(sub, files=base) == []


def test_progress_bar_dict_loss_is_renamed_and_marked():
    """pl_bolts' tests read ``trainer.progress_bar_dict['loss']``: 1.x's running loss, which 2.x's
    progress_bar_metrics lacks; other keys (logged metrics) are a plain rename."""
    out, findings = run_rule(RULE, body("loss = trainer.progress_bar_dict['loss']"))
    assert "loss = trainer.progress_bar_metrics['loss']" in out
    markers = [f for f in findings if f.kind is Kind.MARKER]
    assert len(markers) == 1 and "running training loss" in markers[0].message
    assert run_rule(RULE, out)[0] == out
    check_rewrite(RULE, body("acc = trainer.progress_bar_dict['test_acc']"),
                  body("acc = trainer.progress_bar_metrics['test_acc']"))


def test_a_users_config_trainer_section_is_not_the_trainer():
    # issue 21 kind 8: stores to `<config>.trainer.<attr>` and reads of a config's trainer
    # section are the user's, not Lightning's Trainer
    src = '''\
import pytorch_lightning as pl


def main(cfg, args):
    cfg.trainer.gpus = 2
    args.trainer.num_processes = 4
    trainer = pl.Trainer(max_epochs=args.trainer.gpus)
    return trainer
'''
    check_rewrite(RULE, src, None)
    from .find_imports import sites_of
    assert sites_of(RULE, src) == []
    out, _ = run_rule(RULE, src + "\n\ndef f(trainer):\n    return trainer.gpus\n")
    assert out.count("TODO(lightmigrate): LM102") == 1


WRAPPED = "(trainer.val_dataloaders if isinstance(trainer.val_dataloaders, (list, tuple)) else [trainer.val_dataloaders])"


def test_loaders_read_once_in_an_f_string_and_reused_by_later_lines():
    # issue 23: one local, not the long expression in every place; the f-string stays valid on 3.8
    check_rewrite(RULE, '''\
import pytorch_lightning as pl


class CB(pl.Callback):
    def on_test_start(self, trainer, pl_module):
        # how many batches
        print(f"{len(trainer.test_dataloaders[0])} batches of {trainer.test_dataloaders[0].batch_size}")
        self.sizes.append(trainer.test_dataloaders[-1].batch_size)
        first = trainer.test_dataloaders[0] if trainer.test_dataloaders else None
        trainer.test(pl_module)
        n = len(trainer.test_dataloaders)
''', '''\
import pytorch_lightning as pl


class CB(pl.Callback):
    def on_test_start(self, trainer, pl_module):
        # how many batches
        test_loaders = trainer.test_dataloaders
        if not isinstance(test_loaders, (list, tuple)):
            test_loaders = [test_loaders]
        print(f"{len(test_loaders[0])} batches of {test_loaders[0].batch_size}")
        self.sizes.append(test_loaders[-1].batch_size)
        first = test_loaders[0] if trainer.test_dataloaders else None
        trainer.test(pl_module)
        test_loaders_1 = trainer.test_dataloaders
        if not isinstance(test_loaders_1, (list, tuple)):
            test_loaders_1 = [test_loaders_1]
        n = len(test_loaders_1)
''')


@pytest.mark.parametrize("line, after", [
    # read later, or only on one branch, or again at each turn: wrapped where it is
    ("f = lambda: len(trainer.val_dataloaders)", f"f = lambda: len({WRAPPED[1:-1]})"),
    ("x = trainer.val_dataloaders[0] if trainer.sanity_checking else None",
     f"x = {WRAPPED}[0] if trainer.sanity_checking else None"),
    ("while i < len(trainer.val_dataloaders): i += 1", f"while i < len({WRAPPED[1:-1]}): i += 1"),
    ("if a: pass\n        elif trainer.val_dataloaders[0]: pass", f"if a: pass\n        elif {WRAPPED}[0]: pass"),
    ("if a: x = trainer.val_dataloaders[0]", f"if a: x = {WRAPPED}[0]"),
    ("x = [d for d in loaders if trainer.val_dataloaders[0] is d]",
     f"x = [d for d in loaders if {WRAPPED}[0] is d]"),
    # a call before the read in the same line may run the Trainer: not moved before it
    ("x = (run(), trainer.val_dataloaders[0])", f"x = (run(), {WRAPPED}[0])"),
    # a plain list, kept
    ("dls = list(trainer.val_dataloaders)",
     "val_loaders = trainer.val_dataloaders\n        " + VAL_LIST + "dls = list(val_loaders)"),
    # the first iterable of a comprehension is read at once (and 1.9 iterated loaders, not batches)
    ("x = [d.batch_size for d in trainer.val_dataloaders]",
     "val_loaders = trainer.val_dataloaders\n        " + VAL_LIST + "x = [d.batch_size for d in val_loaders]"),
    ("if len(trainer.val_dataloaders) > 1: pass",
     "val_loaders = trainer.val_dataloaders\n        " + VAL_LIST + "if len(val_loaders) > 1: pass"),
])
def test_loaders_local_or_in_place(line, after):
    check_rewrite(RULE, body(line), body(after))


def test_loaders_local_name_is_fresh_and_class_bodies_keep_the_expression():
    check_rewrite(RULE, body("val_loaders = 1\n        x = trainer.val_dataloaders[0]"),
                  body("val_loaders = 1\n        val_loaders_1 = trainer.val_dataloaders\n"
                       "        if not isinstance(val_loaders_1, (list, tuple)):\n"
                       "            val_loaders_1 = [val_loaders_1]\n        x = val_loaders_1[0]"))
    check_rewrite(RULE, "import pytorch_lightning as pl\n\n\nclass A:\n    n = len(trainer.val_dataloaders)\n",
                  f"import pytorch_lightning as pl\n\n\nclass A:\n    n = len({WRAPPED[1:-1]})\n")


def test_loaders_local_not_reused_where_a_generator_reads_later():
    # a generator's element runs when it is consumed, maybe after the Trainer ran again; its first
    # iterable is read at once
    check_rewrite(RULE, body("first = trainer.val_dataloaders[0]\n"
                             "        later = (trainer.val_dataloaders[i] for i in range(2))\n"
                             "        sizes = sum(d.batch_size for d in trainer.val_dataloaders)"),
                  body("val_loaders = trainer.val_dataloaders\n        " + VAL_LIST + "first = val_loaders[0]\n"
                       f"        later = ({WRAPPED}[i] for i in range(2))\n"
                       "        sizes = sum(d.batch_size for d in val_loaders)"))


def test_amp_backend_and_using_native_amp_reads_get_their_2x_meaning():
    # 1.9.5's amp_backend: "native" for its mixed-precision plugin (precision 16 or "bf16"), else
    # None (apex is gone); corpus/trainer_amp_backend.py runs it on both versions
    check_rewrite(RULE, '''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def on_train_start(self):
        backend = self.trainer.amp_backend
        native = trainer.using_native_amp
''', '''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def on_train_start(self):
        backend = ("native" if self.trainer.precision in ("16-mixed", "bf16-mixed") else None)
        native = (trainer.precision in ("16-mixed", "bf16-mixed"))
''')
    # a config's attribute of that name is not the Trainer's
    assert run_rule(RULE, "backend = config.amp_backend\n")[0] == "backend = config.amp_backend\n"
