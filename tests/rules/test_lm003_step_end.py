"""LM003: step-end hooks, inlined when they can change the result, moved to batch-end hooks
when they only have side effects. Runtime equivalence with 1.9.5: corpus/*step_end* cases."""


import textwrap

import libcst as cst
import pytest

from lightmigrate.analysis.project import ProjectIndex
from lightmigrate.engine import transform_text
from lightmigrate.output.findings import Kind
from lightmigrate.rules import ALL_RULES
from lightmigrate.rules.base import RuleContext, Site, SourceFile
from lightmigrate.rules.lm003_step_end import HOOKS, UNKNOWN_CLASS, StepEndRule, _StepEndMigration
from lightmigrate.rules.shared.class_edit import migrate_classes

from .conftest import check_corpus_case_idempotent, check_rewrite, run_rule

RULE = StepEndRule()
HEAD = "import pytorch_lightning as pl\n\n\n"


def rw(before, after, **kw):
    return check_rewrite(RULE, HEAD + before, None if after is None else HEAD + after, **kw)


def test_dict_mutated_in_place_is_inlined():
    findings = rw(
        '''\
class M(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        return {"loss": batch.sum(), "n": 1}

    def training_step_end(self, out):
        out["loss"] = out["loss"] * 2
''',
        '''\
class M(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        outputs = self._training_step(batch, batch_idx)
        result = self._training_step_end(outputs)
        return outputs if result is None else result

    def _training_step(self, batch, batch_idx):
        return {"loss": batch.sum(), "n": 1}

    def _training_step_end(self, out):
        out["loss"] = out["loss"] * 2
''',
    )
    assert [f.kind for f in findings] == [Kind.FIXED]


def test_training_hook_logging_an_extra_key_moves_to_batch_end():
    rw(
        '''\
class M(pl.LightningModule):
    def training_step_end(self, out):
        """Log the accuracy."""
        self.log("acc", out["acc"])
        return out
''',
        '''\
class M(pl.LightningModule):
    def on_train_batch_end(self, out, batch, batch_idx):
        self.log("acc", out["acc"])
''',
    )


def test_training_hook_reading_the_loss_is_inlined():
    # on_train_batch_end would see the loss detached and divided by accumulate_grad_batches
    out, _ = run_rule(RULE, HEAD + '''\
class M(pl.LightningModule):
    def training_step_end(self, out):
        self.log("loss_again", out["loss"])
''')
    assert "def on_train_batch_end" not in out
    assert "result = self._training_step_end(outputs)" in out


def test_training_hook_reading_weights_or_global_step_is_inlined():
    for body in ('self.log("w", self.layer.weight.sum())', 'self.log("step", float(self.global_step))'):
        out, _ = run_rule(RULE, HEAD + f'''\
class M(pl.LightningModule):
    def training_step_end(self, out):
        {body}
''')
        assert "def on_train_batch_end" not in out, body  # they change across the optimizer step


@pytest.mark.parametrize("body", [
    'self.log("lr", self.lr_schedulers().get_last_lr()[0])',
    'self.log("lr", self.trainer.optimizers[0].param_groups[0]["lr"])',
    'self.log("lr", self.trainer.lr_scheduler_configs[0].scheduler.get_last_lr()[0])',
])
def test_training_hook_reading_the_lr_is_inlined(body):
    # step-interval schedulers step between the closure (where 1.9 ran the hook) and
    # on_train_batch_end: the moved hook would log the next batch's LR (corpus
    # step_end_logs_scheduler_lr)
    before = HEAD + f'''\
class M(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        return batch.sum()

    def training_step_end(self, out):
        {body}
'''
    out, findings = run_rule(RULE, before)
    assert "def on_train_batch_end" not in out
    assert "result = self._training_step_end(outputs)" in out
    assert "optimizer / LR scheduler state" in findings[0].message
    assert run_rule(RULE, out)[0] == out


LBFGS_STEP_END = '''\
class M(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        return batch.sum()

    def training_step_end(self, out):
        self.calls += 1
        self.log("acc", out["acc"])
'''
LBFGS_OPTIMIZERS = '''\

    def configure_optimizers(self):
        return torch.optim.LBFGS(self.parameters(), max_iter=4)
'''


def test_lbfgs_keeps_step_end_in_the_closure():
    # Issue 26 (ledger fact B3.2): LBFGS evaluates the closure several times per batch and 1.9
    # ran training_step_end on every evaluation (a probe counted 16 calls for 4 batches on
    # 1.9.5); on_train_batch_end runs once per batch (4 calls), so the hook is inlined.
    out, findings = run_rule(RULE, HEAD + LBFGS_STEP_END + LBFGS_OPTIMIZERS)
    assert "def on_train_batch_end" not in out
    assert "result = self._training_step_end(outputs)" in out
    assert "LBFGS" in findings[0].message
    assert run_rule(RULE, out)[0] == out
    # without LBFGS the same hook only has side effects and moves to on_train_batch_end
    out, _ = run_rule(RULE, HEAD + LBFGS_STEP_END)
    assert "def on_train_batch_end(self, out, batch, batch_idx):" in out


def test_lbfgs_in_a_base_class_file_keeps_step_end_in_the_closure():
    base = "import pytorch_lightning as pl\nimport torch\n\n\nclass Base(pl.LightningModule):" + LBFGS_OPTIMIZERS
    sub = "from base import Base\n\n\n" + LBFGS_STEP_END.replace("pl.LightningModule", "Base")
    out, _ = run_rule(RULE, sub, path="sub.py", project_files={"base.py": base})
    assert "def on_train_batch_end" not in out
    assert "result = self._training_step_end(outputs)" in out


def test_none_return_keeps_raw_output_through_the_wrapper():
    out, _ = run_rule(RULE, HEAD + '''\
class M(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        return batch.sum()

    def training_step_end(self, loss):
        if loss > 0:
            return loss * 2
''')
    assert "return outputs if result is None else result" in out
    assert "def _training_step_end(self, loss):\n        if loss > 0:\n            return loss * 2" in out


def test_metric_update_merges_into_existing_batch_end_hook():
    rw(
        '''\
class M(pl.LightningModule):
    def validation_step_end(self, out):
        self.acc(out["preds"], out["target"])
        self.log("val_acc", self.acc)

    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx):
        self.seen += 1
''',
        '''\
class M(pl.LightningModule):
    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):
        out = outputs
        self.acc(out["preds"], out["target"])
        self.log("val_acc", self.acc)
        self.seen += 1
''',
    )


def test_several_dataloaders_pass_dataloader_idx_through():
    out, _ = run_rule(RULE, HEAD + '''\
class M(pl.LightningModule):
    def test_step(self, batch, batch_idx, dataloader_idx=0):
        return {"err": batch.sum(), "loader": dataloader_idx}

    def test_step_end(self, out):
        return {"err": out["err"] * 2, "loader": out["loader"]}
''')
    assert "def test_step(self, batch, batch_idx, dataloader_idx=0):\n        outputs = self._test_step(batch, batch_idx, dataloader_idx)" in out
    assert "def _test_step(self, batch, batch_idx, dataloader_idx=0):" in out


def test_step_end_in_base_class_subclass_overrides_the_helper():
    out, _ = run_rule(RULE, HEAD + '''\
class Base(pl.LightningModule):
    def training_step_end(self, loss):
        return loss + 1


class Child(Base):
    def training_step(self, batch, batch_idx):
        return super().training_step(batch, batch_idx) * 2
''')
    base, child = out.split("class Child(Base):")
    assert "def training_step(self, *args, **kwargs):" in base
    assert "def _training_step(self, *args, **kwargs):\n        return super().training_step(*args, **kwargs)" in base
    assert "def _training_step(self, batch, batch_idx):\n        return super()._training_step(batch, batch_idx) * 2" in child
    assert "def training_step" not in child


def test_direct_calls_of_the_step_skip_the_hook_as_in_1x():
    out, _ = run_rule(RULE, HEAD + '''\
class M(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        return batch.sum()

    def training_step_end(self, loss):
        return loss * 2

    def validation_step(self, batch, batch_idx):
        return self.training_step(batch, batch_idx)
''')
    # 1.9 applied training_step_end only in the training loop, never to a direct call
    assert "return self._training_step(batch, batch_idx)" in out


def test_dp_reduction_is_marked_when_the_project_uses_dp():
    src = HEAD + '''\
class M(pl.LightningModule):
    def training_step_end(self, out):
        return out["loss"].mean()


trainer = pl.Trainer(strategy="dp", gpus=2)
'''
    out, findings = run_rule(RULE, src)
    assert "TODO(lightmigrate): LM003 this reduced outputs gathered across GPUs" in out
    assert Kind.MARKER in [f.kind for f in findings]
    plain, _ = run_rule(RULE, src.replace('strategy="dp", ', ""))
    assert "TODO(lightmigrate)" not in plain


def test_multiple_optimizers_get_a_marker():
    out, findings = run_rule(RULE, HEAD + '''\
class GAN(pl.LightningModule):
    def training_step(self, batch, batch_idx, optimizer_idx):
        return batch.sum()

    def training_step_end(self, out):
        return out
''')
    assert "TODO(lightmigrate): LM003 runs once per optimizer" in out
    assert "def training_step_end(self, out):" in out


def test_step_end_and_epoch_end_together_buffer_the_step_end_result():
    src = HEAD + '''\
class M(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        return batch.sum()

    def training_step_end(self, loss):
        return {"loss": loss, "double": loss * 2}

    def training_epoch_end(self, outputs):
        self.total = sum(o["double"] for o in outputs)
'''
    result = transform_text(src, ALL_RULES, path="m.py")
    text = result.text
    assert "return outputs if result is None else result" in text  # the step returns the hook's dict
    assert "self.training_step_outputs.append(outputs)" in text  # which on_train_batch_end buffers
    assert "def training_step_end" not in text and "def training_epoch_end" not in text
    assert "TODO(lightmigrate)" not in text
    assert transform_text(text, ALL_RULES, path="m.py").text == text


def test_report_says_why_a_hook_was_inlined():
    cases = {
        'return {"loss": out["loss"] * 2}': "because it returns a new value",
        'out["loss"] = 0': "because it changes its argument",
        'self.log("l", out["loss"])': "reads the loss",
        'self.log("s", float(self.global_step))': "because it reads weights, gradients, global_step",
    }
    for body, reason in cases.items():
        _, findings = run_rule(RULE, HEAD + f'''\
class M(pl.LightningModule):
    def training_step_end(self, out):
        {body}
''')
        (finding,) = findings
        assert reason in finding.message and "inlined" in finding.message, (body, finding.message)




@pytest.mark.parametrize("name", ['eval_step_end_two_loaders', 'step_end_changes_loss', 'step_end_counts_under_lbfgs', 'step_end_in_base_class', 'step_end_logs_only_or_none', 'step_end_logs_scheduler_lr', 'step_end_metric_object', 'step_end_mutates_dict'])
def test_corpus_case_is_rewritten_and_a_second_run_changes_nothing(name):
    """Idempotency on realistic 1.x code: this rule alone, then again on its own output."""
    check_corpus_case_idempotent(RULE, name)


# ---------------------------------------------------------------------------------------------
# find: one site per class the class walk changes, [] exactly where it changes nothing
# (these cases were the gate's: subclasses in other files, unrecognised classes)


def find_sites(path, files):
    """``RULE.find`` for ``files[path]`` in a project of ``files`` (path -> text), and check
    that it is exact: the unrestricted class walk changes or reports something exactly when
    find has sites."""
    files = {p: textwrap.dedent(t) for p, t in files.items()}
    index = ProjectIndex()
    for p, t in files.items():
        index.add_source(t, p)
    text = files[path]
    sites = RULE.find(SourceFile(path, text), RuleContext(path, index))
    ctx = RuleContext(path, index)
    out = migrate_classes(cst.parse_module(text), ctx, "LM003", HOOKS, _StepEndMigration, UNKNOWN_CLASS)
    assert bool(sites) is (out.code != text or bool(ctx.findings))
    return sites


BASE_WITH_STEP_END = {
    "base.py": """\
        import pytorch_lightning as pl


        class Base(pl.LightningModule):
            def training_step(self, batch, batch_idx):
                return batch

            def training_step_end(self, out):
                return out * 2
        """,
}


def test_find_own_hook_and_subclass_step_in_another_file():
    assert find_sites("base.py", BASE_WITH_STEP_END) == [Site(4, 0, "Base", "migrate", ("training_step_end",))]
    files = {**BASE_WITH_STEP_END, "sub.py": """\
        from base import Base


        class Sub(Base):
            def training_step(self, batch, batch_idx):
                return batch + 1
        """}
    assert find_sites("sub.py", files) == [Site(4, 0, "Sub", "migrate", ("training_step_end",))]


@pytest.mark.parametrize("method", ["configure_optimizers", "validation_step"])
def test_find_nothing_in_a_subclass_without_the_step_or_hook(method):
    sub = f"from base import Base\n\n\nclass Sub(Base):\n    def {method}(self, *args):\n        return None\n"
    assert find_sites("sub.py", {**BASE_WITH_STEP_END, "sub.py": sub}) == []


def test_find_marks_an_unrecognised_class_and_skips_a_plain_one():
    plain = {"p.py": "class Recorder:\n    def test_step_end(self, out):\n        return out\n"}
    assert find_sites("p.py", plain) == []
    unknown = {"u.py": "from x import Mystery\n\n\nclass Recorder(Mystery):\n"
                       "    def test_step_end(self, out):\n        return out\n"}
    assert find_sites("u.py", unknown) == [Site(4, 0, "Recorder", "mark")]


def test_find_several_stages_and_only_the_classes_that_change():
    text = HEAD + '''\
class A(pl.LightningModule):
    def validation_step_end(self, out):
        self.log("x", 1.0)

    def test_step_end(self, out):
        return out


class B(pl.LightningModule):
    def on_test_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):
        pass
'''
    sites = find_sites("model.py", {"model.py": text})
    assert [(s.target, s.action, s.data) for s in sites] == [("A", "migrate", ("validation_step_end", "test_step_end"))]


# ---------------------------------------------------------------------------------------------
# Class-body aliases (issue 21 kind 3)


def test_aliased_step_and_step_end_give_the_test_stage_its_own_wrapper():
    rw(
        '''\
class M(pl.LightningModule):
    def validation_step(self, batch, batch_idx):
        return {"pred": self(batch), "target": batch}

    test_step = validation_step

    def validation_step_end(self, out):
        return ((out["pred"] - out["target"]) ** 2).mean()

    test_step_end = validation_step_end
''',
        '''\
class M(pl.LightningModule):
    def validation_step(self, batch, batch_idx):
        outputs = self._validation_step(batch, batch_idx)
        result = self._validation_step_end(outputs)
        return outputs if result is None else result

    def _validation_step(self, batch, batch_idx):
        return {"pred": self(batch), "target": batch}

    def test_step(self, batch, batch_idx):
        outputs = self._test_step(batch, batch_idx)
        result = self._test_step_end(outputs)
        return outputs if result is None else result

    _test_step = _validation_step

    def _validation_step_end(self, out):
        return ((out["pred"] - out["target"]) ** 2).mean()

    _test_step_end = _validation_step_end
''',
    )


def test_an_aliased_side_effect_hook_is_inlined_not_moved():
    # moving validation_step_end to on_validation_batch_end would leave the alias naming nothing
    out, _ = run_rule(RULE, HEAD + '''\
class M(pl.LightningModule):
    def validation_step(self, batch, batch_idx):
        return batch

    def validation_step_end(self, out):
        self.log("v", out.sum())

    test_step_end = validation_step_end
''')
    assert "    _test_step_end = _validation_step_end\n" in out
    assert "def test_step(self, *args, **kwargs):" in out
    assert "on_validation_batch_end" not in out
    compile(out, "<out>", "exec")


def test_alias_of_the_step_follows_the_wrapped_body():
    # in 1.x test_step ran the raw validation step (no validation_step_end): so it does after
    out, _ = run_rule(RULE, HEAD + '''\
class M(pl.LightningModule):
    def validation_step(self, batch, batch_idx):
        return {"x": batch}

    test_step = validation_step

    def validation_step_end(self, out):
        return out["x"].sum()
''')
    assert "    test_step = _validation_step\n" in out


def test_find_an_alias_bound_step_end():
    files = {"m.py": """\
        import pytorch_lightning as pl


        class Model(pl.LightningModule):
            def _end(self, out):
                return out

            test_step_end = _end
        """}
    assert find_sites("m.py", files) == [Site(4, 0, "Model", "migrate", ("test_step_end",))]


# ---------------------------------------------------------------------------------------------
# Mixins earlier in the MRO (issue 21 kind 2)


def test_a_side_effect_hook_is_inlined_when_a_mixin_would_shadow_the_batch_end_hook():
    src = '''\
class CountingMixin:
    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):
        self.seen += 1


class Base(pl.LightningModule):
    def validation_step(self, batch, batch_idx):
        return batch.sum()

    def validation_step_end(self, out):
        self.log("v", out)


class Model(CountingMixin, Base):
    pass
'''
    out, findings = run_rule(RULE, HEAD + src)
    assert "def on_validation_batch_end(self, out," not in out  # not moved there: the mixin's would win
    assert "        result = self._validation_step_end(outputs)\n" in out
    assert any("CountingMixin.on_validation_batch_end comes before this class" in f.message for f in findings)
    again, _ = run_rule(RULE, out)
    assert again == out
    # without the subclass, the hook moves as before
    alone, _ = run_rule(RULE, HEAD + src.split("\n\nclass Model")[0] + "\n")
    assert "    def on_validation_batch_end(self, out, batch, batch_idx, dataloader_idx=0):\n" in alone


def test_a_moved_hook_calls_super_when_a_later_class_of_the_mro_defines_it():
    out, _ = run_rule(RULE, HEAD + '''\
class Base(pl.LightningModule):
    def validation_step(self, batch, batch_idx):
        return batch.sum()

    def validation_step_end(self, out):
        self.log("v", out)


class Counting(pl.LightningModule):
    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):
        self.seen += 1


class Model(Base, Counting):
    pass
''')
    assert ("    def on_validation_batch_end(self, out, batch, batch_idx, dataloader_idx=0):\n"
            "        self.log(\"v\", out)\n"
            "        super().on_validation_batch_end(out, batch, batch_idx, dataloader_idx)\n") in out


XBASE = HEAD + '''\
class Base(pl.LightningModule):
    def validation_step(self, batch, batch_idx):
        raise NotImplementedError

    def validation_step_end(self, out):
        return {"acc": (out["pred"] == out["target"]).float().mean()}
'''
XSUB = '''\
from base import Base


class Argmax(Base):
    def validation_step(self, batch, batch_idx):
        x, y = batch
        return {"pred": self(x).argmax(-1), "target": y}
'''


def test_a_subclass_in_another_file_without_the_trigger_overrides_the_helper():
    """Issue 21 kind 1: the base's step becomes the wrapper; a subclass's step in a file that
    holds no ``_step_end`` (the prefilter's trigger) must become the helper the wrapper calls,
    or the step-end never runs."""
    index = ProjectIndex()
    index.add_source(XBASE, "base.py")
    index.add_source(XSUB, "sub.py")
    assert index.linked_paths(HOOKS) == {"sub.py": frozenset({"Base"})}
    assert RULE.find(SourceFile("sub.py", XSUB), RuleContext("sub.py", index)) == [
        Site(4, 0, "Argmax", "migrate", ("validation_step_end",))]
    out, findings = run_rule(RULE, XSUB, path="sub.py", project_files={"base.py": XBASE})
    assert out == XSUB.replace("def validation_step(", "def _validation_step(")
    assert [f.kind for f in findings] == [Kind.FIXED]
    assert run_rule(RULE, out, path="sub.py", project_files={"base.py": XBASE})[0] == out
    base_out, _ = run_rule(RULE, XBASE, path="base.py", project_files={"sub.py": XSUB})
    assert "return self._validation_step_end(" not in base_out and "self._validation_step(batch, batch_idx)" in base_out
    # after both are migrated, nothing links the files any more: a second run changes nothing
    assert run_rule(RULE, out, path="sub.py", project_files={"base.py": base_out})[0] == out


def test_the_engine_migrates_the_linked_subclass_file(tmp_path):
    from lightmigrate.engine import Mode, run

    (tmp_path / "base.py").write_text(XBASE)
    (tmp_path / "sub.py").write_text(XSUB)
    (tmp_path / "other.py").write_text("class Other:\n    def validation_step(self, b, i):\n        pass\n")
    report = run([str(tmp_path)], [RULE], Mode.WRITE)
    assert report.changed == 2 and report.failed == 0
    assert "def _validation_step(self, batch, batch_idx):" in (tmp_path / "sub.py").read_text()
    assert (tmp_path / "other.py").read_text().count("_validation_step") == 0
    assert run([str(tmp_path)], [RULE], Mode.DIFF).changed == 0
    for jobs in (2,):  # the same with the files on several processes
        (tmp_path / "sub.py").write_text(XSUB)
        (tmp_path / "base.py").write_text(XBASE)
        assert run([str(tmp_path)], [RULE], Mode.WRITE, jobs=jobs).changed == 2
        assert "def _validation_step(self, batch, batch_idx):" in (tmp_path / "sub.py").read_text()


LOG_ONLY_BASE = HEAD + '''\
class Base(pl.LightningModule):
    def validation_step(self, batch, batch_idx):
        return {"preds": batch, "target": batch}

    def validation_step_end(self, outputs):
        self.log("val_acc", outputs["preds"].sum())
'''


def test_a_hook_that_only_logs_is_inlined_when_a_subclass_overrides_the_step():
    """Moved to on_validation_batch_end, the base would have no wrapper, yet the subclass's
    step (in this file or another) became ``_validation_step``, which nothing called: the
    decision now reads the descendants, as every file of the hierarchy does."""
    sub = '''

class Sub(Base):
    def validation_step(self, batch, batch_idx):
        return {"preds": batch * 2, "target": batch}
'''
    out, _ = run_rule(RULE, LOG_ONLY_BASE + sub)
    assert "on_validation_batch_end" not in out
    assert "result = self._validation_step_end(outputs)" in out
    assert "class Sub(Base):\n    def _validation_step(self, batch, batch_idx):" in out
    assert run_rule(RULE, out)[0] == out
    # the same split across files
    other = "from base import Base\n" + sub
    base_out, _ = run_rule(RULE, LOG_ONLY_BASE, path="base.py", project_files={"sub.py": other})
    assert "result = self._validation_step_end(outputs)" in base_out
    sub_out, _ = run_rule(RULE, other, path="sub.py", project_files={"base.py": LOG_ONLY_BASE})
    assert "def _validation_step(self, batch, batch_idx):" in sub_out
    # without the subclass the hook still moves to the batch-end hook
    assert "def on_validation_batch_end(" in run_rule(RULE, LOG_ONLY_BASE)[0]


def test_a_subclass_elsewhere_that_only_calls_the_step_calls_the_helper():
    """``self.validation_step(...)`` ran the step alone in 1.9 (no step-end): in a subclass in
    another file that does not override it, the call goes to the helper, not the wrapper."""
    caller = ("from base import Base\n\n\nclass Tested(Base):\n    def test_step(self, batch, batch_idx):\n"
              "        return self.validation_step(batch, batch_idx)\n")
    index = ProjectIndex()
    index.add_source(XBASE, "base.py")
    index.add_source(caller, "caller.py")
    assert [(s.target, s.data) for s in RULE.find(SourceFile("caller.py", caller), RuleContext("caller.py", index))] == [
        ("Tested", ("validation_step_end",))]
    out, findings = run_rule(RULE, caller, path="caller.py", project_files={"base.py": XBASE})
    assert out == caller.replace("self.validation_step(", "self._validation_step(")
    assert findings
    base_out, _ = run_rule(RULE, XBASE, path="base.py", project_files={"caller.py": caller})
    assert "result = self._validation_step_end(outputs)" in base_out
    assert run_rule(RULE, out, path="caller.py", project_files={"base.py": base_out})[0] == out


def test_a_subclass_of_a_marked_hook_is_marked_not_renamed():
    """Issue 21 kind 1: the base's hook cannot be migrated (here: *args), so the base keeps its
    step and the hook, marked; a subclass's step (this file or another) must not become a
    helper nothing calls: it is marked with the base's reason."""
    base = HEAD + '''\
class Base(pl.LightningModule):
    def validation_step(self, batch, batch_idx):
        return {"preds": batch}

    def validation_step_end(self, *outs):
        return outs[0]
'''
    sub = "from base import Base\n\n\nclass Sub(Base):\n    def validation_step(self, batch, batch_idx):\n" \
          "        return {\"preds\": batch * 2}\n"
    index = ProjectIndex()
    index.add_source(base, "base.py")
    index.add_source(sub, "sub.py")
    sites = RULE.find(SourceFile("sub.py", sub), RuleContext("sub.py", index))
    assert [(s.action, s.data if s.action == "migrate" else s.data[0][0]) for s in sites] == [
        ("migrate", ("validation_step_end",)), ("blocked", "validation_step_end")]
    assert "unusual signature" in sites[1].data[0][1]
    out, _ = run_rule(RULE, sub, path="sub.py", project_files={"base.py": base})
    assert "def validation_step(self, batch, batch_idx):" in out and "_validation_step" not in out
    assert "# TODO(lightmigrate): LM003 overrides validation_step of Base (base.py)" in out
    assert run_rule(RULE, out, path="sub.py", project_files={"base.py": base})[0] == out
    one_file, _ = run_rule(RULE, base + "\n\n" + sub.split("\n\n\n", 1)[1])
    assert one_file.count("TODO(lightmigrate): LM003") == 2 and "_validation_step" not in one_file
    assert run_rule(RULE, one_file)[0] == one_file
    # a subclass that only calls the step has nothing to mark
    caller = "from base import Base\n\n\nclass C(Base):\n    def test_step(self, batch, batch_idx):\n" \
             "        return self.validation_step(batch, batch_idx)\n"
    index.add_source(caller, "caller.py")
    assert RULE.find(SourceFile("caller.py", caller), RuleContext("caller.py", index)) == []
