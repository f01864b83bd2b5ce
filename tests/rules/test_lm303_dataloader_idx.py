"""LM303: dataloader_idx parameters get a default of 0; LM002 then has nothing to mark."""

import textwrap

from lightmigrate.analysis.project import ProjectIndex
from lightmigrate.output.findings import Kind
from lightmigrate.rules.base import RuleContext, SourceFile
from lightmigrate.rules import ALL_RULES
from lightmigrate.rules.lm303_dataloader_idx import DataloaderIdxRule
from lightmigrate.engine import transform_text

from .conftest import check_rewrite

RULE = DataloaderIdxRule()


def test_module_eval_hooks_and_steps_get_default():
    findings = check_rewrite(RULE, '''\
import pytorch_lightning as pl


class M(pl.LightningModule):
    def test_step(self, batch, batch_idx, dataloader_idx):
        return batch

    def on_predict_batch_start(self, batch, batch_idx, loader):
        pass
''', '''\
import pytorch_lightning as pl


class M(pl.LightningModule):
    def test_step(self, batch, batch_idx, dataloader_idx=0):
        return batch

    def on_predict_batch_start(self, batch, batch_idx, loader=0):
        pass
''')
    assert [(f.code, f.kind, f.line) for f in findings] == [("LM303", Kind.FIXED, 5), ("LM303", Kind.FIXED, 8)]


def test_legacy_train_batch_hook_gets_default():
    check_rewrite(RULE, '''\
import pytorch_lightning as pl


class M(pl.LightningModule):
    def on_train_batch_end(self, outputs, batch, batch_idx, dataloader_idx):
        self.idx = dataloader_idx
''', '''\
import pytorch_lightning as pl


class M(pl.LightningModule):
    def on_train_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):
        self.idx = dataloader_idx
''')


def test_required_parameter_after_it_is_left_for_lm002():
    src = '''\
import pytorch_lightning as pl


class M(pl.LightningModule):
    def on_test_batch_end(self, outputs, batch, batch_idx, dataloader_idx, extra):
        pass
'''
    check_rewrite(RULE, src, None)
    out = transform_text(src, ALL_RULES, path="model.py").text
    assert "TODO(lightmigrate): LM002" in out


def test_callback_step_names_and_foreign_callbacks_untouched():
    check_rewrite(RULE, '''\
import pytorch_lightning as pl
from keras.callbacks import Callback as KerasCallback


class C(pl.Callback):
    def validation_step(self, a, b, c, d):
        pass


class K(KerasCallback):
    def on_test_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx):
        pass
''', None)


def test_base_class_in_other_file():
    check_rewrite(RULE, '''\
from base import Base


class Leaf(Base):
    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx):
        pass
''', '''\
from base import Base


class Leaf(Base):
    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):
        pass
''', project_files={"base.py": "import pytorch_lightning as pl\n\n\nclass Base(pl.LightningModule):\n    pass\n"})


def test_whole_pipeline_leaves_no_lm002_marker():
    src = '''\
import pytorch_lightning as pl


class M(pl.LightningModule):
    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx):
        pass
'''
    out = transform_text(src, ALL_RULES, path="model.py").text
    assert "dataloader_idx=0" in out and "TODO(lightmigrate)" not in out


# --- find: the sites, across files, and none where nothing changes --------------------------

def _find(files, path):
    index = ProjectIndex()
    for other, text in files.items():
        index.add_source(textwrap.dedent(text), other)
    return RULE.find(SourceFile(path, textwrap.dedent(files[path])), RuleContext(path, index))


def _acts(files, path):
    files = {p: textwrap.dedent(t) for p, t in files.items()}
    result = transform_text(files[path], [RULE], path, project_of(files))
    return result.changed or bool(result.findings)


def project_of(files):
    index = ProjectIndex()
    for other, text in files.items():
        index.add_source(text, other)
    return index


def test_find_module_and_callback_hooks():
    files = {"m.py": """\
        import lightning.pytorch as L


        class M(L.LightningModule):
            def predict_step(self, batch, batch_idx, dataloader_idx):
                return batch
        """}
    assert [(s.line, s.col, s.target, s.data) for s in _find(files, "m.py")] == [
        (5, 4, "M.predict_step", "dataloader_idx")]
    assert _acts(files, "m.py")
    # a callback whose base is in another file; the parameter may have any name
    files = {
        "cb.py": "import pytorch_lightning as pl\n\n\nclass Base(pl.Callback):\n    pass\n",
        "w.py": """\
            from cb import Base


            class Watch(Base):
                def on_test_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, idx):
                    print(idx)
            """,
    }
    assert [(s.target, s.data) for s in _find(files, "w.py")] == [("Watch.on_test_batch_end", "idx")]
    assert _acts(files, "w.py")
    # the file not indexed yet: find indexes it
    text = textwrap.dedent(files["w.py"])
    index = project_of({"cb.py": files["cb.py"]})
    assert [s.data for s in RULE.find(SourceFile("w.py", text), RuleContext("w.py", index))] == ["idx"]
    # the base unknown: nothing
    assert _find({"w.py": files["w.py"]}, "w.py") == []


def test_find_nothing_for_defaults_present_or_not_a_hook_of_the_kind():
    files = {"m.py": """\
        import pytorch_lightning as pl


        class M(pl.LightningModule):
            def validation_step(self, batch, batch_idx, dataloader_idx=0):
                return batch

            async def test_step(self, batch, batch_idx, dataloader_idx, /):
                return batch

            def on_test_batch_end(self, outputs, batch, batch_idx, dataloader_idx, extra):
                pass


        class Watch(pl.Callback):
            def validation_step(self, batch, batch_idx, dataloader_idx):
                return batch


        class Other:
            def test_step(self, batch, batch_idx, dataloader_idx):
                return batch
        """}
    assert _find(files, "m.py") == []
    assert not _acts(files, "m.py")


def test_train_batch_hooks_keep_dataloader_idx_in_a_class_the_epoch_end_rule_edits():
    # issue 21, kind 5: the whole rule set on a 1.6-era class whose training_epoch_end LM001
    # migrates (merging its buffer into the existing on_train_batch_end); the file also has a
    # black-style parenthesised import of a moved module. 2.x calls the train batch hooks with
    # (outputs,) batch, batch_idx: dataloader_idx, never read, goes
    src = textwrap.dedent('''\
        import pytorch_lightning as pl
        from pytorch_lightning.utilities.cli import (
            LightningCLI,
        )


        class Model(pl.LightningModule):
            def on_train_batch_start(self, batch, batch_idx, dataloader_idx):
                self.started = batch_idx

            def training_step(self, batch, batch_idx):
                return {"loss": batch.sum()}

            def training_epoch_end(self, outputs):
                self.log("n", float(len(outputs)))

            def on_train_batch_end(self, outputs, batch, batch_idx, dataloader_idx):
                self.seen = batch_idx
        ''')
    index = ProjectIndex()
    index.add_source(src, "m.py")
    out = transform_text(src, ALL_RULES, path="m.py", project=index)
    assert "def on_train_batch_start(self, batch, batch_idx):" in out.text
    assert "def on_train_batch_end(self, outputs, batch, batch_idx):" in out.text
    # (the class defines on_train_batch_start, which may end an epoch before its first batch: the
    # old body stays as a helper that on_train_epoch_end calls after an epoch that ran a batch)
    assert "self.training_step_outputs.append(outputs)" in out.text and "def training_epoch_end" not in out.text
    assert "self._training_epoch_end(outputs)" in out.text
    assert "TODO(lightmigrate)" not in out.text
    compile(out.text, "m.py", "exec")
    index = ProjectIndex()
    index.add_source(out.text, "m.py")
    assert transform_text(out.text, ALL_RULES, path="m.py", project=index).text == out.text


def test_unread_parameters_lost_before_19_are_dropped():
    # 1.9 and 2.x call these hooks without them: the parameter only made the call fail
    findings = check_rewrite(RULE, '''\
import pytorch_lightning as pl


class M(pl.LightningModule):
    def on_train_epoch_end(self, outputs):
        self.outputs = []

    def on_train_batch_start(
        self,
        batch,
        batch_idx,
        dataloader_idx,
    ):
        print(batch_idx)


class Cb(pl.Callback):
    def on_train_epoch_end(self, trainer, pl_module, outputs, *, extra=1):
        print(extra)
''', '''\
import pytorch_lightning as pl


class M(pl.LightningModule):
    def on_train_epoch_end(self):
        self.outputs = []

    def on_train_batch_start(
        self,
        batch,
        batch_idx,
    ):
        print(batch_idx)


class Cb(pl.Callback):
    def on_train_epoch_end(self, trainer, pl_module, *, extra=1):
        print(extra)
''')
    assert [(f.code, f.kind, f.line) for f in findings] == [
        ("LM303", Kind.FIXED, 5), ("LM303", Kind.FIXED, 8), ("LM303", Kind.FIXED, 18)]


def test_lost_parameters_that_are_read_or_passed_are_kept():
    check_rewrite(RULE, '''\
import pytorch_lightning as pl


class M(pl.LightningModule):
    def on_train_epoch_end(self, outputs):
        print(outputs)


class Cb(pl.Callback):
    def on_train_epoch_end(self, trainer, pl_module, outputs):
        print(locals())

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx):
        print(dataloader_idx)


class Other(pl.Callback):
    def on_train_epoch_end(self, trainer, pl_module, outputs=None):
        pass
''', '''\
import pytorch_lightning as pl


class M(pl.LightningModule):
    def on_train_epoch_end(self, outputs):
        print(outputs)


class Cb(pl.Callback):
    def on_train_epoch_end(self, trainer, pl_module, outputs):
        print(locals())

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
        print(dataloader_idx)


class Other(pl.Callback):
    def on_train_epoch_end(self, trainer, pl_module, outputs=None):
        pass
''')


def test_lost_parameter_kept_when_the_file_passes_it():
    source = '''\
import pytorch_lightning as pl


class Cb(pl.Callback):
    def on_train_epoch_end(self, trainer, pl_module, outputs):
        pass


Cb().on_train_epoch_end(None, None, [])
'''
    check_rewrite(RULE, source, None)
    # the whole rule set leaves LM002's marker on it
    out = transform_text(source, ALL_RULES, path="model.py").text
    assert "TODO(lightmigrate): LM002" in out and "pl_module, outputs)" in out


def test_lost_parameter_rebound_at_the_top_is_dropped_after_the_epoch_end_rule():
    # a 1.4-era module with training_epoch_end and on_train_epoch_end(self, outputs): LM001 puts
    # `outputs = self.training_step_outputs` first in the hook, so the value passed is never read
    src = textwrap.dedent('''\
        import pytorch_lightning as pl


        class M(pl.LightningModule):
            def training_step(self, batch, batch_idx):
                return batch.sum()

            def training_epoch_end(self, outputs):
                self.n = len(outputs)

            def on_train_epoch_end(self, outputs):
                print("end")
        ''')
    out = transform_text(src, ALL_RULES, path="model.py").text
    assert "    def on_train_epoch_end(self):\n        outputs = self.training_step_outputs\n" in out
    assert "TODO(lightmigrate)" not in out
    assert transform_text(out, ALL_RULES, path="model.py").text == out


def test_lost_parameter_read_before_it_is_rebound_is_kept():
    source = '''\
import pytorch_lightning as pl


class M(pl.LightningModule):
    def on_train_epoch_end(self, outputs):
        outputs = outputs + [1]
'''
    check_rewrite(RULE, source, None)


def test_callback_with_only_an_epoch_end_hook_loses_the_unread_outputs():
    """A file whose only hook with a lost parameter is ``on_train_epoch_end(..., outputs)`` (no
    batch hook, no step) reaches the rule too (its triggers), with every rule: no marker."""
    src = textwrap.dedent('''\
        import pytorch_lightning as pl


        class Printer(pl.Callback):
            def on_train_epoch_end(self, trainer, pl_module, outputs):
                print("epoch done")
    ''')
    once = transform_text(src, ALL_RULES, path="cb.py").text
    assert "def on_train_epoch_end(self, trainer, pl_module):\n" in once
    assert "TODO(lightmigrate)" not in once
    assert transform_text(once, ALL_RULES, path="cb.py").text == once
