"""LM005: several optimizers with optimizer_idx become a manual-optimization loop (spec M7, M8, B.5).
Runtime equivalence with 1.9.5: corpus/gan_two_optimizers.py, optimizer_frequencies.py,
reduce_lr_on_plateau_two_optimizers.py, adam_and_lbfgs.py and the LM005 rows of corpus/README.md."""


import pytest

from lightmigrate.analysis.project import ProjectIndex
from lightmigrate.engine import transform_text
from lightmigrate.rules import ALL_RULES
from lightmigrate.rules.base import RuleContext, SourceFile
from lightmigrate.rules.lm005_multi_optimizer import MultiOptimizerRule

from .conftest import check_corpus_case_idempotent, check_rewrite, run_rule

RULE = MultiOptimizerRule()
HEAD = "import pytorch_lightning as pl\nimport torch\n\n\n"

GAN = HEAD + '''\
class GAN(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.g = torch.nn.Linear(2, 2)

    def training_step(self, batch, batch_idx, optimizer_idx):
        return {"loss": batch.sum(), "i": optimizer_idx}

    def training_epoch_end(self, outputs):
        self.log("n", float(len(outputs)))

    def configure_optimizers(self):
        return [torch.optim.SGD(self.g.parameters(), lr=0.1), torch.optim.SGD(self.g.parameters(), lr=0.1)], []
'''


def test_examples_are_idempotent_and_compile():
    for ex in RULE.examples:
        check_rewrite(RULE, ex.before, ex.after)


def test_epoch_end_gets_batch_optimizer_nesting_and_is_idempotent():
    out, _ = run_rule(RULE, GAN)
    compile(out, "<out>", "exec")
    assert "def training_step(self, batch, batch_idx):" in out
    assert "def _training_step(self, batch, batch_idx, optimizer_idx):" in out
    assert "self.automatic_optimization = False" in out.split("def training_step")[0]
    assert "def training_epoch_end" not in out
    assert "self._train_outputs.append(outputs)" in out
    assert "outputs = self._train_outputs[0]" in out  # the one-batch squeeze
    assert run_rule(RULE, out)[0] == out


def test_whole_chain_leaves_no_marker():
    result = transform_text(GAN, ALL_RULES, path="gan.py")
    assert "TODO(lightmigrate)" not in result.text
    assert transform_text(result.text, ALL_RULES, path="gan.py").text == result.text


def test_frequencies_move_into_the_loop():
    src = GAN.replace("return [torch.optim.SGD(self.g.parameters(), lr=0.1), torch.optim.SGD(self.g.parameters(), lr=0.1)], []",
                      'return ({"optimizer": torch.optim.SGD(self.g.parameters(), lr=0.1), "frequency": 2},\n'
                      '                {"optimizer": torch.optim.SGD(self.g.parameters(), lr=0.1), "frequency": 1})')
    out, _ = run_rule(RULE, src)
    assert "enumerate((2, 3)) if batch_idx % 3 < end" in out
    assert '"frequency"' not in out


def test_trainer_args_in_same_file_move_into_the_module():
    src = GAN + '\n\ntrainer = pl.Trainer(max_epochs=2, gradient_clip_val=0.5, accumulate_grad_batches=2)\n'
    out, _ = run_rule(RULE, src)
    assert "pl.Trainer(max_epochs=2)" in out
    assert "self.clip_gradients(optimizer, gradient_clip_val=0.5, gradient_clip_algorithm=None)" in out
    assert "loss = loss / 2" in out and "if batch_idx % 2 == 0:" in out
    assert run_rule(RULE, out)[0] == out


def test_trainer_args_of_an_aliased_trainer_move_into_the_module():
    # ``from pytorch_lightning import Trainer as PLT``: ``PLT(...)`` makes the Trainer too
    src = ("from pytorch_lightning import Trainer as PLT\n" + GAN
           + '\n\ntrainer = PLT(max_epochs=2, gradient_clip_val=0.5, accumulate_grad_batches=2)\n')
    out, _ = run_rule(RULE, src)
    assert "trainer = PLT(max_epochs=2)\n" in out
    assert "self.clip_gradients(optimizer, gradient_clip_val=0.5, gradient_clip_algorithm=None)" in out
    assert "loss = loss / 2" in out and "if batch_idx % 2 == 0:" in out
    assert run_rule(RULE, out)[0] == out


def test_aliased_trainer_in_a_test_function_keeps_its_own_arguments():
    src = """\
from pytorch_lightning import Trainer as PLT
import pytorch_lightning as pl
import torch


def test_fit():
    class GAN(pl.LightningModule):
        def training_step(self, batch, batch_idx, optimizer_idx):
            return batch.sum()

        def configure_optimizers(self):
            return [torch.optim.SGD(self.parameters(), lr=0.1), torch.optim.SGD(self.parameters(), lr=0.1)]

    trainer = PLT(accumulate_grad_batches=2)


def test_other():
    trainer = PLT(accumulate_grad_batches=3)
"""
    out, _ = run_rule(RULE, src)
    assert "trainer = PLT()\n" in out and "PLT(accumulate_grad_batches=3)" in out
    assert "loss = loss / 2" in out
    assert run_rule(RULE, out)[0] == out


def test_trainer_dict_literal():
    src = GAN + '\n\ncfg = {"max_epochs": 2, "accumulate_grad_batches": 3}\n'
    out, _ = run_rule(RULE, src)
    assert 'cfg = {"max_epochs": 2}' in out
    assert "(batch_idx + 1) % 3 == 0" in out


def test_non_literal_trainer_arg_is_marked_and_left():
    src = GAN + '\n\ntrainer = pl.Trainer(accumulate_grad_batches=ACC)\n'
    out, _ = run_rule(RULE, src)
    assert "# TODO(lightmigrate): LM005" in out and "optimizer_idx):" in out


def test_trainer_in_another_file_marked_there():
    train = "import pytorch_lightning as pl\n\ntrainer = pl.Trainer(gradient_clip_val=0.5)\n"
    out, _ = run_rule(RULE, train, path="train.py", project_files={"model.py": GAN})
    assert "# TODO(lightmigrate): LM005" in out and "GAN (model.py)" in out
    model, findings = run_rule(RULE, GAN, path="model.py", project_files={"train.py": train})
    assert "gradient_clip_val=0.5" in model and "TODO(lightmigrate): LM005" in model
    marker = next(line for line in model.splitlines() if "TODO(lightmigrate): LM005" in line)
    assert "(in train.py)" in marker  # each place names the other
    assert run_rule(RULE, model, path="model.py", project_files={"train.py": train})[0] == model


def test_trainer_in_a_config_dict_in_another_file_is_used_and_marked():
    config = 'TRAINER = {"max_epochs": 3, "accumulate_grad_batches": 2}\n'
    model, _ = run_rule(RULE, GAN, path="model.py", project_files={"config.py": config})
    assert "should_step = (batch_idx + 1) % 2 == 0 or last_batch" in model and "(in config.py)" in model
    out, _ = run_rule(RULE, config, path="config.py", project_files={"model.py": GAN})
    assert out.splitlines()[0].startswith("# TODO(lightmigrate): LM005 accumulate_grad_batches=2 raises")
    assert "GAN (model.py)" in out and '"accumulate_grad_batches": 2' in out  # marked, left for the user


def test_several_training_scripts_are_never_guessed_between():
    a = "import pytorch_lightning as pl\n\ntrainer = pl.Trainer(accumulate_grad_batches=3)\n"
    b = "import pytorch_lightning as pl\n\ntrainer = pl.Trainer(gradient_clip_val=0.5)\n"
    files = {"a_train.py": a, "b_finetune.py": b}
    model, _ = run_rule(RULE, GAN, path="model.py", project_files=files)
    assert "self.automatic_optimization = False" in model
    assert "should_step" not in model and "clip_gradients" not in model  # no values taken from either
    marker = next(line for line in model.splitlines() if "TODO(lightmigrate): LM005" in line)
    assert "in a_train.py and 1 other file raise" in marker
    for path, text in files.items():
        others = {p: t for p, t in files.items() if p != path}
        out, _ = run_rule(RULE, text, path=path, project_files={"model.py": GAN, **others})
        assert "if this Trainer trains GAN (model.py)" in out and "Trainer(" in out
        assert out.count("TODO(lightmigrate)") == 1


def test_trainer_next_to_its_own_module_is_not_applied_to_other_files():
    own = HEAD + ("class Single(pl.LightningModule):\n    def training_step(self, batch, batch_idx):\n"
                  "        return batch.sum()\n\n\ncfg = {\"accumulate_grad_batches\": 3}\n")
    model, _ = run_rule(RULE, GAN, path="gan.py", project_files={"single.py": own})
    assert "should_step" not in model and "TODO(lightmigrate)" not in model
    out, _ = run_rule(RULE, own, path="single.py", project_files={"gan.py": GAN})
    assert out == own  # its Trainer settings belong to its own single-optimizer module


def test_tbptt_with_several_optimizers_is_marked():
    src = GAN.replace("batch_idx, optimizer_idx)", "batch_idx, optimizer_idx, hiddens)")
    out, _ = run_rule(RULE, src)
    assert "TODO(lightmigrate): LM005" in out and "hiddens)" in out


def test_single_optimizer_untouched():
    src = HEAD + "class M(pl.LightningModule):\n    def training_step(self, batch, batch_idx):\n        return batch.sum()\n"
    check_rewrite(RULE, src, None)


def test_accumulation_notes_the_changed_logging_cadence():
    from lightmigrate.output.findings import Kind

    src = GAN + '\n\ntrainer = pl.Trainer(max_epochs=2, accumulate_grad_batches=2)\n'
    _, findings = run_rule(RULE, src)
    notes = [f for f in findings if f.kind == Kind.NOTE]
    assert len(notes) == 1 and notes[0].code == "LM005"
    assert "accumulate_grad_batches=2" in notes[0].message and "step numbers differ" in notes[0].message
    assert notes[0].line == src.splitlines().index("    def training_step(self, batch, batch_idx, optimizer_idx):") + 1
    _, clip_only = run_rule(RULE, GAN + '\n\ntrainer = pl.Trainer(max_epochs=2, gradient_clip_val=0.5)\n')
    assert [f for f in clip_only if f.kind == Kind.FIXED] and not [f for f in clip_only if f.kind == Kind.NOTE]




def test_user_optimizer_step_that_only_runs_the_closure_still_counts_a_step():
    # 1.9 counted global_step once per optimizer_step call (the hook ran the closure alone on
    # batches it did not step); 2.x manual optimization counts real steps: the loop adds the
    # missing count (issue 21 kind 6.6; corpus gan_optimizer_step_closure_only)
    source = GAN + '''
    def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_idx, optimizer_closure,
                       on_tpu=False, using_native_amp=False, using_lbfgs=False):
        if optimizer_idx == 0 or batch_idx % 2:
            optimizer.step(closure=optimizer_closure)
        else:
            optimizer_closure()
'''
    out = transform_text(source, ALL_RULES, path="m.py").text
    assert """\
        steps = self.trainer.fit_loop.epoch_loop.manual_optimization.optim_step_progress
        stepped = steps.total.completed
        self.optimizer_step(self.current_epoch, batch_idx, optimizer, closure)
        if steps.total.completed == stepped:  # 1.x counted this call as a step too
            steps.increment_ready()
            steps.increment_completed()
""" in out
    assert transform_text(out, ALL_RULES, path="m.py").text == out


@pytest.mark.parametrize("name", ['adam_and_lbfgs', 'frequencies_with_schedulers', 'gan_callback_zero_grad_outputs', 'gan_optimizer_step_closure_only', 'gan_skipped_steps_batch_end', 'gan_two_optimizers', 'one_batch_two_optimizers_squeeze', 'optimizer_frequencies', 'reduce_lr_on_plateau_max_steps', 'reduce_lr_on_plateau_two_optimizers', 'two_optimizers_accumulate', 'two_optimizers_schedulers_clip', 'two_optimizers_epoch_end_early_return'])
def test_corpus_case_is_rewritten_and_a_second_run_changes_nothing(name):
    """Idempotency on realistic 1.x code: this rule alone, then again on its own output."""
    check_corpus_case_idempotent(RULE, name)


def test_scheduler_frequency_is_left_alone_and_plateau_steps_at_epoch_end():
    src = GAN.replace(
        "        return [torch.optim.SGD(self.g.parameters(), lr=0.1), torch.optim.SGD(self.g.parameters(), lr=0.1)], []\n",
        "        a = torch.optim.SGD(self.g.parameters(), lr=0.1)\n"
        "        b = torch.optim.SGD(self.g.parameters(), lr=0.1)\n"
        '        return [a, b], [{"scheduler": torch.optim.lr_scheduler.StepLR(a, 1), "interval": "epoch", "frequency": 2},\n'
        '                        {"scheduler": torch.optim.lr_scheduler.ReduceLROnPlateau(b), "monitor": "val_loss"}]\n')
    assert '"frequency": 2' in src
    out, _ = run_rule(RULE, src)
    # a scheduler's own "frequency" is still valid on 2.x: kept, and honoured by the generated stepping
    assert '"interval": "epoch", "frequency": 2}' in out
    assert "if (count + 1) % config.frequency == 0:" in out
    # ReduceLROnPlateau: stepped after the epoch with its monitor, as 1.9 did (spec B.5)
    epoch_end = out.split("def on_train_epoch_end(self):", 1)[1]
    assert "ReduceLROnPlateau" in epoch_end and "self.trainer.callback_metrics['val_loss']" in epoch_end
    # ... only after an epoch that reached its last batch: 1.9.5's FitLoop.on_advance_end did not
    # step it after an epoch max_steps cut short (issue 26, ledger fact L4; corpus
    # reduce_lr_on_plateau_max_steps)
    guard, loop = epoch_end.split("for config in self.trainer.lr_scheduler_configs:", 1)
    assert "self.trainer.fit_loop.epoch_loop.batch_progress.is_last_batch" in guard
    assert "batch_progress.current.ready == self.trainer.num_training_batches" in guard
    assert run_rule(RULE, out)[0] == out


def test_lightningcli_yaml_config_is_used_and_marked(tmp_path):
    """A LightningCLI config is a training script too: its literal accumulation/clipping values
    move into the manual loop, the module says where they came from, the YAML keys get an LM005
    marker naming the module, and a second run changes nothing (issue 5: "or a config")."""
    from lightmigrate.engine import Mode, run

    (tmp_path / "model.py").write_text(GAN)
    (tmp_path / "main.py").write_text("from pytorch_lightning.cli import LightningCLI\n\nfrom model import GAN\n\n"
                                      "LightningCLI(GAN)\n")
    config = "# training settings\ntrainer:\n  max_epochs: 3\n  accumulate_grad_batches: 2  # two batches\n" \
             "  gradient_clip_val: 0.5\nmodel: {}\n"
    (tmp_path / "config.yaml").write_text(config)
    report = run([str(tmp_path)], ALL_RULES, Mode.WRITE)
    assert report.failed == 0
    model = (tmp_path / "model.py").read_text()
    assert "should_step = (batch_idx + 1) % 2 == 0 or last_batch" in model
    assert "gradient_clip_val=0.5" in model and "config.yaml" in model
    out = (tmp_path / "config.yaml").read_text()
    lines = out.splitlines()
    for key in ("accumulate_grad_batches", "gradient_clip_val"):
        at = next(i for i, line in enumerate(lines) if line.strip().startswith(key + ":"))
        assert lines[at - 1].startswith("  # TODO(lightmigrate): LM005 ") and "GAN (" in lines[at - 1], key
    assert "  accumulate_grad_batches: 2  # two batches" in lines and lines[0] == "# training settings"
    findings = [f for f in report.files if f.path.endswith("config.yaml")][0].findings
    assert sum(f.code == "LM005" for f in findings) == 2
    again = run([str(tmp_path)], ALL_RULES, Mode.CHECK)
    assert again.changed == 0 and again.failed == 0


def test_yaml_config_without_a_multi_optimizer_module_is_not_marked(tmp_path):
    from lightmigrate.engine import Mode, run

    (tmp_path / "model.py").write_text(HEAD + "class One(pl.LightningModule):\n"
                                       "    def training_step(self, batch, batch_idx):\n        return batch.sum()\n")
    (tmp_path / "config.yaml").write_text("trainer:\n  accumulate_grad_batches: 2\n  gradient_clip_val: 0.5\n")
    report = run([str(tmp_path)], ALL_RULES, Mode.WRITE)
    assert report.failed == 0
    assert "LM005" not in (tmp_path / "config.yaml").read_text()


def test_yaml_values_that_do_not_raise_under_manual_optimization_are_not_marked(tmp_path):
    # issue 21 kind 8: 2.6.6 raises only for accumulate_grad_batches other than 1 and
    # gradient_clip_val above 0 (configuration_validator.__verify_manual_optimization_support);
    # gradient_clip_algorithm never raises
    from lightmigrate.engine import Mode, run

    (tmp_path / "model.py").write_text(GAN)
    config = ("trainer:\n  max_epochs: 3\n  accumulate_grad_batches: 1\n  gradient_clip_val: 0\n"
              "  gradient_clip_algorithm: value\n")
    (tmp_path / "config.yaml").write_text(config)
    report = run([str(tmp_path)], ALL_RULES, Mode.WRITE)
    assert report.failed == 0
    assert "TODO(lightmigrate)" not in (tmp_path / "config.yaml").read_text()
    assert "TODO(lightmigrate)" not in (tmp_path / "model.py").read_text()
    # only the key that raises gets a marker, short, with its value and the nearest module
    (tmp_path / "model.py").write_text(GAN)
    (tmp_path / "config.yaml").write_text(config.replace("gradient_clip_val: 0", "gradient_clip_val: 0.5"))
    run([str(tmp_path)], ALL_RULES, Mode.WRITE)
    lines = (tmp_path / "config.yaml").read_text().splitlines()
    markers = [line for line in lines if "TODO(lightmigrate)" in line]
    assert markers == ["  # TODO(lightmigrate): LM005 gradient_clip_val=0.5 raises under manual optimization, which "
                       "GAN (model.py) now uses; remove it here (LM005 moved the value into the module)"]
    assert lines[lines.index(markers[0]) + 1] == "  gradient_clip_val: 0.5"


def test_python_training_script_with_harmless_values_is_not_marked():
    script = "import pytorch_lightning as pl\n\ntrainer = pl.Trainer(accumulate_grad_batches=1, gradient_clip_val=0.0)\n"
    out, _ = run_rule(RULE, script, path="train.py", project_files={"model.py": GAN})
    assert out == script


def test_two_projects_in_one_tree_second_run_adds_no_yaml_marker(tmp_path):
    # issue 21 kind 7b: the marker named every multi-optimizer module of the tree; the second
    # run counted fewer (the migrated ones had no optimizer_idx any more), so its wording
    # differed and a second marker was added above each key
    from lightmigrate.engine import Mode, run

    blocked = GAN.replace("class GAN(pl.LightningModule):", "class Base(pl.LightningModule):\n"
                          "    def training_epoch_end(self, outputs):\n        pass\n\n\nclass GAN2(Base):")
    for name, model, config in (("a", GAN, "trainer:\n  accumulate_grad_batches: 2\n"),
                                ("b", blocked, "trainer:\n  gradient_clip_val: 0.5\n")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "model.py").write_text(model)
        (tmp_path / name / "config.yaml").write_text(config)
    first = run([str(tmp_path)], ALL_RULES, Mode.WRITE)
    assert first.failed == 0
    for name in ("a", "b"):
        assert (tmp_path / name / "config.yaml").read_text().count("TODO(lightmigrate): LM005") == 1
    again = run([str(tmp_path)], ALL_RULES, Mode.CHECK)
    assert again.changed == 0 and again.failed == 0


def test_a_config_of_another_project_in_the_tree_is_not_this_modules_trainer(tmp_path):
    # two projects (each with its project file) side by side: each module takes its own
    # project's config, never the other one's
    from lightmigrate.engine import Mode, run

    for name, value in (("a", 2), ("b", 3)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "pyproject.toml").write_text("[project]\nname = 'x'\n")
        (tmp_path / name / "model.py").write_text(GAN)
        (tmp_path / name / "config.yaml").write_text(f"trainer:\n  accumulate_grad_batches: {value}\n")
    assert run([str(tmp_path)], ALL_RULES, Mode.WRITE).failed == 0
    for name, value in (("a", 2), ("b", 3)):
        model = (tmp_path / name / "model.py").read_text()
        assert f"should_step = (batch_idx + 1) % {value} == 0 or last_batch" in model, name
        assert "(in config.yaml)" in model
        config = (tmp_path / name / "config.yaml").read_text()
        assert f"accumulate_grad_batches={value} raises under manual optimization, which GAN (model.py) now uses" in config
    assert run([str(tmp_path)], ALL_RULES, Mode.CHECK).changed == 0


TEST_FILE = '''\
import pytorch_lightning as pl
import torch


def test_two_optimizers(tmpdir):
    class TestModel(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.g = torch.nn.Linear(2, 2)

        def training_step(self, batch, batch_idx, optimizer_idx):
            return batch.sum()

        def configure_optimizers(self):
            return [torch.optim.SGD(self.g.parameters(), lr=0.1), torch.optim.SGD(self.g.parameters(), lr=0.1)]

    trainer = pl.Trainer(default_root_dir=tmpdir, max_epochs=1)
    trainer.fit(TestModel())


def test_two_optimizers_accumulate(tmpdir):
    class TestModel(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.g = torch.nn.Linear(2, 2)

        def training_step(self, batch, batch_idx, optimizer_idx):
            return batch.sum()

        def configure_optimizers(self):
            return [torch.optim.SGD(self.g.parameters(), lr=0.1), torch.optim.SGD(self.g.parameters(), lr=0.1)]

    trainer = pl.Trainer(default_root_dir=tmpdir, max_epochs=1, accumulate_grad_batches=2)
    trainer.fit(TestModel())
'''


def test_classes_of_one_name_in_several_test_functions_are_each_migrated_with_their_own_trainer():
    # issue 21 kind 7c: a file with two classes that use optimizer_idx. Test files define
    # `class TestModel` in each test: the index could not tell them apart and the rule left
    # both as they were, unmarked (they raise on 2.x)
    once = transform_text(TEST_FILE, ALL_RULES, path="test_gan.py")
    assert not once.problems
    first, second = once.text.split("def test_two_optimizers_accumulate(tmpdir):")
    assert first.count("self.automatic_optimization = False") == 1 and "should_step" not in first
    assert second.count("self.automatic_optimization = False") == 1
    assert "should_step = (batch_idx + 1) % 2 == 0 or last_batch" in second
    # each test's own Trainer: the second one loses the argument its class took over
    assert "pl.Trainer(default_root_dir=tmpdir, max_epochs=1)\n" in second
    assert "optimizer_idx):" not in once.text.replace("def _training_step(self, batch, batch_idx, optimizer_idx):", "")
    assert transform_text(once.text, ALL_RULES, path="test_gan.py").text == once.text


# --- find: the sites, and nothing where the rule has nothing to do --------------------------

SMALL_GAN = '''\
import pytorch_lightning as pl


class GAN(pl.LightningModule):
    def training_step(self, batch, batch_idx, optimizer_idx):
        return batch.sum()

    def configure_optimizers(self):
        return [self.a, self.b]
'''
SCRIPT = "import pytorch_lightning as pl\ntrainer = pl.Trainer(gradient_clip_val=0.5)\n"
OTHER = "import torch\nfrequency = 3\n"


def project_of(files):
    index = ProjectIndex()
    for path, text in files.items():
        index.add_source(text, path)
    return index


def find(text, path="model.py", files=None, index=None):
    """``RULE.find`` for ``text`` at ``path`` in a project of ``files`` (plus ``text`` itself)."""
    if index is None:
        index = project_of({**(files or {}), path: text})
    return RULE.find(SourceFile(path, text), RuleContext(path, index))


def acts(text, path="model.py", files=None):
    """Whether the rule changes or reports anything in ``text`` (run through the engine)."""
    out, findings = run_rule(RULE, text, path=path, project_files=files)
    return out != text or bool(findings)


def test_find_in_a_project_with_a_module_a_script_and_an_unrelated_file():
    files = {"gan.py": SMALL_GAN, "train.py": SCRIPT, "other.py": OTHER}
    index = project_of(files)
    gan = find(SMALL_GAN, "gan.py", index=index)
    assert [(s.line, s.target, s.action) for s in gan] == [(4, "GAN", "migrate"), (0, "", "after")]
    assert gan[0].data[:3] == ("_training_step", "_training_step_end", (("gradient_clip_val", 0.5),))
    assert gan[1].data == ("mark-model", "(in train.py) ")  # the one script's Trainer trains it
    script = find(SCRIPT, "train.py", index=index)
    assert [(s.line, s.col, s.action) for s in script] == [(2, 0, "mark-trainer-args")]
    assert "GAN (gan.py)" in script[0].data
    marked = run_rule(RULE, SCRIPT, "train.py", {"gan.py": SMALL_GAN})[0]
    assert "TODO(lightmigrate): LM005" in marked
    assert find(marked, "train.py", {"gan.py": SMALL_GAN}) == []  # marked once
    assert find(OTHER, "other.py", index=index) == []
    # without a multi-optimizer class in the project, a script's Trainer settings are left alone
    alone = {"train.py": SCRIPT, "other.py": OTHER}
    assert find(SCRIPT, "train.py", alone) == [] and not acts(SCRIPT, "train.py", alone)


def test_find_indexes_a_file_the_index_never_saw():
    assert [s.action for s in find(SMALL_GAN, "new.py", index=ProjectIndex())] == ["migrate", "after"]
    assert find(OTHER, "new.py", index=ProjectIndex()) == []
    assert [s.action for s in find(SCRIPT, "new.py", index=project_of({"gan.py": SMALL_GAN}))] == ["mark-trainer-args"]


def test_find_a_subclass_in_another_file_renames_its_step():
    child = ("from gan import GAN\n\n\nclass Child(GAN):\n    def training_step(self, batch, batch_idx, optimizer_idx):\n"
             "        return super().training_step(batch, batch_idx, optimizer_idx)\n")
    sites = find(child, "child.py", {"gan.py": SMALL_GAN})
    assert [(s.line, s.target, s.action, s.data) for s in sites] == [
        (4, "Child", "rename", ("_training_step", "_training_step_end"))]
    assert acts(child, "child.py", {"gan.py": SMALL_GAN})
    # the parent, seen from its own file, is the top class: it is migrated
    assert [s.action for s in find(SMALL_GAN, "gan.py", {"child.py": child})] == ["migrate", "after"]


def test_find_nothing_for_one_optimizer_or_an_optimizer_idx_elsewhere():
    single = HEAD + "class M(pl.LightningModule):\n    def training_step(self, batch, batch_idx):\n        return batch.sum()\n"
    assert find(single) == [] and not acts(single)
    keyword_only = SMALL_GAN.replace("batch_idx, optimizer_idx)", "batch_idx, *, optimizer_idx)")
    assert find(keyword_only) == [] and not acts(keyword_only)
    inherited_only = SMALL_GAN + "\n\nclass Sub(GAN):\n    pass\n"
    assert [s.target for s in find(inherited_only) if s.target] == ["GAN"]
    assert find(OTHER, files={"gan.py": SMALL_GAN}) == []


def test_find_marks_a_blocked_class_once():
    tbptt = GAN.replace("super().__init__()\n", "super().__init__()\n        self.truncated_bptt_steps = 2\n")
    sites = find(tbptt)
    assert [(s.target, s.action) for s in sites] == [("GAN", "mark")] and "TBPTT" in sites[0].data
    out, _ = run_rule(RULE, tbptt)
    assert find(out) == []  # the marker is there: nothing left to do
    non_literal = GAN + "\n\ntrainer = pl.Trainer(accumulate_grad_batches=ACC)\n"
    sites = find(non_literal)
    assert [s.action for s in sites] == ["mark"] and "accumulate_grad_batches" in sites[0].data


def test_find_says_what_happens_to_the_trainer_arguments():
    literal = find(GAN + '\n\ncfg = {"max_epochs": 2, "accumulate_grad_batches": 3}\n')
    assert literal[0].data[2] == (("accumulate_grad_batches", 3),) and literal[-1].data == ("strip", (None, frozenset()))
    assert find(GAN)[-1].data == ("", None)
    a = "import pytorch_lightning as pl\n\ntrainer = pl.Trainer(accumulate_grad_batches=3)\n"
    b = "import pytorch_lightning as pl\n\ntrainer = pl.Trainer(gradient_clip_val=0.5)\n"
    sites = find(GAN, "model.py", {"a_train.py": a, "b_finetune.py": b})
    assert sites[-1].data == ("mark-ambiguous", ("a_train.py", "b_finetune.py"))


def test_find_marks_only_statement_lines_libcst_can_mark():
    # a Trainer call in the body of a one-line `if` is in no statement line of its own: the
    # old walk never marked it, and find returns no site for it
    script = "import pytorch_lightning as pl\nif True: trainer = pl.Trainer(gradient_clip_val=0.5)\n"
    assert find(script, "train.py", {"gan.py": SMALL_GAN}) == []
    assert not acts(script, "train.py", {"gan.py": SMALL_GAN})
    two = "import pytorch_lightning as pl\nx = 1; t = pl.Trainer(gradient_clip_val=0.5)\n"
    assert [(s.line, s.col) for s in find(two, "train.py", {"gan.py": SMALL_GAN})] == [(2, 0)]


def test_find_reads_configure_optimizers_with_the_comments_libcst_gives_it():
    # a comment indented as the method's body after it belongs to the method (libcst puts it
    # in the body's footer): the plateau scheduler it names makes the class unmigratable
    body = "        return [self.a, self.b]\n"
    inside = SMALL_GAN.replace(body, body + "        # a ReduceLROnPlateau would need a monitor\n")
    sites = find(inside)
    assert [s.action for s in sites] == ["mark"] and "ReduceLROnPlateau" in sites[0].data
    # one at the class body's indentation before the next method belongs to that method
    outside = SMALL_GAN.replace(body, body + "\n    # a ReduceLROnPlateau would need a monitor\n"
                                             "    def other(self):\n        pass\n")
    assert [s.action for s in find(outside)] == ["migrate", "after"]
    # implicitly concatenated strings are not literals, as for libcst
    concatenated = GAN + '\n\ntrainer = pl.Trainer(gradient_clip_algorithm="no" "rm")\n'
    assert [s.action for s in find(concatenated)] == ["mark"]


ONE_OR_TWO = HEAD + '''\
class Model(pl.LightningModule):
    def __init__(self, split=False):
        super().__init__()
        self.split = split
        self.body = torch.nn.Linear(2, 2)
        self.head = torch.nn.Linear(2, 1)

    def training_step(self, batch, batch_idx, optimizer_idx=0):
        return self.head(self.body(batch)).sum()

    def configure_optimizers(self):
        if self.split:
            return [torch.optim.SGD(self.body.parameters(), lr=0.1), torch.optim.SGD(self.head.parameters(), lr=0.1)]
        return torch.optim.SGD(self.parameters(), lr=0.1)
'''


def test_loop_works_when_configure_optimizers_may_return_one_optimizer():
    """Issue 25 kind 5: with one optimizer, 2.x's ``self.optimizers()`` returns it alone (not a
    list), so the generated loop must not iterate over it as it is."""
    out, _ = run_rule(RULE, ONE_OR_TWO)
    assert ("        optimizers = self.optimizers()\n"
            "        optimizers = optimizers if isinstance(optimizers, list) else [optimizers]\n"
            "        for optimizer_idx, optimizer in enumerate(optimizers):\n") in out
    assert run_rule(RULE, out)[0] == out
    with_epoch_end = ONE_OR_TWO.replace("    def configure_optimizers(self):",
                                        "    def training_epoch_end(self, outputs):\n        self.n = len(outputs)\n\n"
                                        "    def configure_optimizers(self):")
    out, _ = run_rule(RULE, with_epoch_end)
    assert "if outputs and all(len(per_batch) == 1 for per_batch in outputs):" in out
    # with one optimizer 1.9 called training_step without optimizer_idx: a default other than 0 is marked
    none_default = ONE_OR_TWO.replace("optimizer_idx=0", "optimizer_idx=None")
    out, findings = run_rule(RULE, none_default)
    assert "its default, not 0" in out and "def training_step(self, batch, batch_idx, optimizer_idx=None)" in out
    # every return gives two optimizers: optimizers() is a list, the loop reads it directly
    gan, _ = run_rule(RULE, GAN)
    assert "for optimizer_idx, optimizer in enumerate(self.optimizers()):" in gan
    assert "isinstance(optimizers, list)" not in gan


def test_epoch_end_with_an_early_return_stays_a_method_called_after_the_buffer_is_read():
    # issue 21 kind 7: it was marked and left as training_epoch_end, which LM001 then migrated on
    # a second run into a buffer of its own that the manual loop never fills
    src = GAN.replace('''    def training_epoch_end(self, outputs):
        self.log("n", float(len(outputs)))
''', '''    def training_epoch_end(self, outputs):
        if not outputs:
            return
        self.log("n", float(len(outputs)))
''')
    out, _ = run_rule(RULE, src)
    assert '''    def on_train_epoch_end(self):
        outputs = [per_batch for per_batch in self._train_outputs if per_batch]  # 1.x: [batch][optimizer]
        if len(self._train_outputs) == 1:  # 1.x squeezed away a batch dimension of size one
            outputs = self._train_outputs[0]
        self._training_epoch_end(outputs)

    def _training_epoch_end(self, outputs):
        if not outputs:
            return
        self.log("n", float(len(outputs)))
''' in out
    assert "TODO(lightmigrate)" not in out
    once = transform_text(src, ALL_RULES, path="gan.py")
    assert "TODO(lightmigrate)" not in once.text and "training_step_outputs" not in once.text
    assert transform_text(once.text, ALL_RULES, path="gan.py").text == once.text


def test_a_subclass_elsewhere_is_marked_with_its_blocked_base_not_renamed():
    """Issue 21 kind 1: a base whose loop LM005 cannot write (here: another subclass overrides
    training_epoch_end) is marked; its subclasses' ``training_step(..., optimizer_idx)`` in other
    files must be marked too, not renamed to a helper nothing calls."""
    base = SMALL_GAN.replace("optimizer_idx):", "optimizer_idx=0):")
    wgan = ("from gan import GAN\n\n\nclass WGAN(GAN):\n    def training_step(self, batch, batch_idx, optimizer_idx=0):\n"
            "        return super().training_step(batch, batch_idx, optimizer_idx) * 2\n")
    logged = ("import torch\nfrom gan import GAN\n\n\nclass LoggedGAN(GAN):\n    def training_epoch_end(self, outputs):\n"
              "        self.log('n', float(len(outputs)))\n")
    files = {"gan.py": base, "wgan.py": wgan, "logged.py": logged}
    top = find(base, "gan.py", files)
    assert [s.action for s in top] == ["mark"] and "training_epoch_end" in top[0].data
    sites = find(wgan, "wgan.py", files)
    assert [(s.line, s.target, s.action) for s in sites] == [(4, "WGAN", "mark")]
    assert "GAN (gan.py)" in sites[0].data and "training_epoch_end" in sites[0].data
    out, _ = run_rule(RULE, wgan, path="wgan.py", project_files={"gan.py": base, "logged.py": logged})
    assert "def training_step(self, batch, batch_idx, optimizer_idx=0):" in out and "_training_step" not in out
    assert out.count("TODO(lightmigrate): LM005") == 1
    assert run_rule(RULE, out, path="wgan.py", project_files={"gan.py": base, "logged.py": logged})[0] == out
    # once the base carries its marker (a second run), the subclass still is not renamed
    marked_base, _ = run_rule(RULE, base, path="gan.py", project_files={"wgan.py": wgan, "logged.py": logged})
    assert "TODO(lightmigrate): LM005" in marked_base
    assert find(out, "wgan.py", {"gan.py": marked_base, "logged.py": logged}) == []
    # without the blocking subclass, the base migrates and the override is renamed, as before
    ok = {"gan.py": base, "wgan.py": wgan}
    assert [s.action for s in find(base, "gan.py", ok)] == ["migrate", "after"]
    assert [s.action for s in find(wgan, "wgan.py", ok)] == ["rename"]


# ---------------------------------------------------------------------------------------------
# Callbacks around the generated loop (issue 21 kind 6.5; corpus gan_callback_zero_grad_outputs):
# 1.9 called their on_before_zero_grad in every optimizer's closure and passed their
# on_train_batch_end one dict per optimizer; 2.x manual optimization does neither.

MONITOR = '''\
from pytorch_lightning.callbacks import Callback


class Monitor(Callback):
    def on_before_zero_grad(self, trainer, pl_module, optimizer):
        self.zeroed = getattr(self, "zeroed", 0) + 1

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        self.last = [o["loss"] for o in outputs]
'''


def test_generated_loop_serves_the_callbacks_of_the_project():
    out, _ = run_rule(RULE, GAN, path="gan.py", project_files={"monitor.py": MONITOR})
    assert """\
            for callback in self.trainer.callbacks:
                callback.on_before_zero_grad(self.trainer, self, optimizer.optimizer)
            optimizer.zero_grad()
""" in out
    assert "        self._v1_optimizer_outputs = outputs  # what 1.x passed to callbacks' on_train_batch_end\n" in out
    plain, _ = run_rule(RULE, GAN, path="gan.py")  # no such callback in the project: nothing added
    assert "callback" not in plain and "_v1_optimizer_outputs" not in plain


def test_callback_batch_end_takes_the_per_optimizer_list_back():
    out, findings = run_rule(RULE, MONITOR, path="monitor.py", project_files={"gan.py": GAN})
    assert """\
    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        outputs = getattr(pl_module, "_v1_optimizer_outputs", outputs)  # 1.x: one dict per optimizer
        self.last = [o["loss"] for o in outputs]
""" in out
    assert [f.code for f in findings] == ["LM005"]
    assert run_rule(RULE, out, path="monitor.py", project_files={"gan.py": GAN})[0] == out
    # without a multi-optimizer module in the project, or when the hook ignores outputs: unchanged
    assert run_rule(RULE, MONITOR, path="monitor.py")[0] == MONITOR
    ignoring = MONITOR.replace('self.last = [o["loss"] for o in outputs]', "self.last = batch_idx")
    assert run_rule(RULE, ignoring, path="monitor.py", project_files={"gan.py": GAN})[0] == ignoring


def test_one_optimizer_loop_hands_batch_end_hooks_the_squeezed_output():
    """With one optimizer at run time 1.9 passed on_train_batch_end (the module's and the
    callbacks') the step's output itself, not a list of one (corpus one_optimizer_batch_end_outputs)."""
    with_batch_end = ONE_OR_TWO.replace("    def configure_optimizers(self):",
                                        "    def on_train_batch_end(self, outputs, batch, batch_idx):\n"
                                        "        self.last = outputs\n\n    def configure_optimizers(self):")
    # (a step that returned None: 1.9 passed [], spec B.4, ledger B4.3)
    squeeze = "        batch_outputs = outputs if len(optimizers) > 1 else (outputs[0] if outputs else [])\n"
    out, _ = run_rule(RULE, with_batch_end, path="model.py", project_files={"monitor.py": MONITOR})
    assert squeeze in out
    assert "        self._train_batch_outputs = batch_outputs\n" in out
    assert "        self._v1_optimizer_outputs = batch_outputs  # what 1.x passed to callbacks' on_train_batch_end\n" in out
    assert run_rule(RULE, out, path="model.py", project_files={"monitor.py": MONITOR})[0] == out
    # every return gives two optimizers: the list as it is
    gan, _ = run_rule(RULE, GAN, path="gan.py", project_files={"monitor.py": MONITOR})
    assert "batch_outputs" not in gan and "self._v1_optimizer_outputs = outputs" in gan


@pytest.mark.parametrize("interval, marked", [('"step"', True), ("INTERVAL", True), ('"epoch"', False)])
def test_step_interval_plateau_is_marked(interval, marked):
    # Issue 26, ledger fact L5 (read from 1.9.5's TrainingEpochLoop.on_advance_end): 1.9 stepped a
    # step-interval ReduceLROnPlateau after every stepping batch's validation check; the loop
    # steps ReduceLROnPlateau once per epoch (a probe with interval "step" mismatched 1.9.5)
    body = "        return [self.a, self.b]\n"
    src = SMALL_GAN.replace(body, (
        "        plateau = {\"scheduler\": self.p, \"monitor\": \"loss0\", \"interval\": " + interval + "}\n"
        "        return [self.a, self.b], [plateau]\n"))
    sites = find(src)
    if marked:
        assert [s.action for s in sites] == ["mark"] and 'interval "step"' in sites[0].data
    else:  # the loop steps an epoch-interval one at the end of on_train_epoch_end, as 1.9 did
        assert [s.action for s in sites] == ["migrate", "after"]


def test_accumulating_batches_run_without_ddp_gradient_sync():
    """Spec B.5 (ledger B5.13): 1.9 ran an accumulating batch's closure inside DDP's no_sync.
    With accumulation the loop toggles each optimizer through ``optimizer.toggle_model(sync_grad=
    should_step)``, which toggles as toggle_optimizer does and blocks the sync on a batch that
    does not step; without accumulation it toggles as before."""
    config = 'TRAINER = {"max_epochs": 3, "accumulate_grad_batches": 2}\n'
    model, _ = run_rule(RULE, GAN, path="model.py", project_files={"config.py": config})
    assert ("        for optimizer_idx, optimizer in enumerate(self.optimizers()):\n"
            "            # 1.x: no DDP gradient sync on a batch that accumulates\n"
            "            with optimizer.toggle_model(sync_grad=should_step):\n"
            "                output = self._optimize(batch, batch_idx, optimizer_idx, optimizer, should_step)\n") in model
    assert "toggle_optimizer" not in model
    assert run_rule(RULE, model, path="model.py", project_files={"config.py": config})[0] == model
    plain, _ = run_rule(RULE, GAN, path="model.py")
    assert "self.toggle_optimizer(optimizer)" in plain and "toggle_model" not in plain


STEP_END = HEAD + '''\
class TwoHeads(pl.LightningModule):
    def training_step(self, batch, batch_idx, optimizer_idx):
        return {"loss": batch.sum(), "idx": optimizer_idx}

    def training_step_end(self, out):
{body}
        return out

    def configure_optimizers(self):
{optimizers}
'''
TWO = "        return [torch.optim.SGD([self.a], lr=0.1), torch.optim.SGD([self.b], lr=0.1)]"
BY_FREQUENCY = ('        return [{"optimizer": torch.optim.SGD([self.a], lr=0.1), "frequency": 1},\n'
                '                {"optimizer": torch.optim.SGD([self.b], lr=0.1), "frequency": 1}]')


@pytest.mark.parametrize("body, optimizers, marked", [
    ('        self.log(f"scaled_{out[\'idx\']}", out["loss"])', TWO, True),
    ('        self.log_dict({"scaled": out["loss"]})', TWO, True),
    ('        out["loss"] = out["loss"] * 2', TWO, False),  # it logs nothing
    ('        self.log("scaled", out["loss"])', BY_FREQUENCY, False),  # one optimizer per batch: nothing lost
])
def test_training_step_end_that_logs_is_marked_ledger_l18(body, optimizers, marked):
    """1.9.5 dropped optimizer 0's logged values on each epoch's first batch when training_step_end
    logged (its logger reset a hook's values whenever the hook name changed during that batch);
    the loop cannot lose them the same way: a marker names ledger fact L18."""
    out, _ = run_rule(RULE, STEP_END.replace("{body}", body).replace("{optimizers}", optimizers))
    lines = out.splitlines()
    at = lines.index("    def _training_step_end(self, out):")
    assert ("# TODO(lightmigrate): LM005 (ledger L18)" in out) is marked
    assert lines[at - 1].startswith("    # TODO(lightmigrate): LM005 (ledger L18) ") is marked  # on the moved hook
    assert run_rule(RULE, out)[0] == out
