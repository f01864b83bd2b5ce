"""What the comparison sees of user callbacks and of ModelCheckpoint / EarlyStopping (issue 26):
the callbacks' hook calls (how often, where among the module's hooks, the ``outputs`` their
``on_*_batch_end`` saw) and the monitoring callbacks' results (best score, epoch and step of
the best and kept checkpoints, every save, the stopped epoch)."""

import importlib.util
import re
import textwrap
from pathlib import Path

from lightmigrate.engine import transform_text
from lightmigrate.rules import ALL_RULES
from lightmigrate.verify import runner
from lightmigrate.verify.compare import compare_case
from lightmigrate.verify.hook_log import HookLog, callback_timeline

CASE = Path(__file__).resolve().parents[2] / "corpus" / "checkpoint_early_stopping_epoch_end.py"


USER_CODE = textwrap.dedent('''\
    class Callback:
        pass


    class Base(Callback):
        def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
            self.total = outputs["loss"]


    class Child(Base):
        def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
            outputs = {"loss": outputs["loss"] * 2}  # as a migration's first line would
            super().on_train_batch_end(trainer, pl_module, outputs, batch, batch_idx)

        def on_train_epoch_end(self, trainer, pl_module):
            pass


    class Model:
        def training_step(self, batch, batch_idx):
            return batch

        def call_callbacks(self, callback):  # a migrated loop calling the callbacks' hook
            callback.on_train_epoch_end(None, self)
''')


def test_hook_log_records_callback_calls_and_the_outputs_their_body_saw(tmp_path):
    """Calls from this file stand for Lightning's: a callback's super() chain counts once, the
    module's code calling a callback hook counts, the outputs are the local at return."""
    path = tmp_path / "user_code.py"
    path.write_text(USER_CODE, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("_lm_user_code", path)
    user = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(user)
    model, child = user.Model(), user.Child()
    with HookLog(str(path), model, callback_base=user.Callback) as log:
        model.training_step(1, 0)
        child.on_train_batch_end(None, model, {"loss": 1.5}, None, 0)
        model.call_callbacks(child)
    record = log.record()
    assert record["sequence"] == ["training_step"]
    assert record["callbacks"] == {"calls": [[1, "Child.on_train_batch_end"], [1, "Child.on_train_epoch_end"]],
                                   "outputs": {"Child.on_train_batch_end": [{"loss": 3.0}]}}


def hooks(sequence, calls, defined, outputs=None):
    return {"sequence": sequence, "counts": {}, "defined": defined, "dead": [],
            "callbacks": {"calls": calls, "outputs": outputs or {}}}


def rec(h, monitors=None):
    return {"error": None, "hooks": h, "monitors": monitors}


# 1.9: training_epoch_end, the callbacks' on_train_epoch_end, then the module's on_train_epoch_end
V1 = hooks(["training_step", "training_step", "training_epoch_end", "on_train_epoch_end"],
           [[1, "Cb.on_train_batch_end"], [2, "Cb.on_train_batch_end"], [3, "Cb.on_train_epoch_end"]],
           ["training_step", "training_epoch_end", "on_train_epoch_end"])


def test_a_1x_epoch_end_hook_counts_where_2x_calls_the_module_hook():
    # 2.x after LM001: the callbacks' on_train_epoch_end, then the module's (with the old body)
    v2 = hooks(["training_step", "on_train_batch_end", "training_step", "on_train_batch_end", "on_train_epoch_end"],
               [[1, "Cb.on_train_batch_end"], [3, "Cb.on_train_batch_end"], [4, "Cb.on_train_epoch_end"]],
               ["training_step", "on_train_batch_end", "on_train_epoch_end"])
    assert callback_timeline(V1, V1["defined"]) == callback_timeline(v2, V1["defined"]) == [
        "training_step", "Cb.on_train_batch_end", "Cb.on_train_batch_end", "Cb.on_train_epoch_end",
        "on_train_epoch_end"]
    assert compare_case("c", rec(V1), rec(v2), sections=("callback_hooks",)) == []


def test_a_callback_hook_that_moved_past_the_module_hook_is_reported():
    v2 = hooks(["training_step", "training_step", "on_train_epoch_end"],
               [[1, "Cb.on_train_batch_end"], [2, "Cb.on_train_batch_end"], [3, "Cb.on_train_epoch_end"]],
               ["training_step", "on_train_epoch_end"])
    (diff,) = compare_case("c", rec(V1), rec(v2), sections=("callback_hooks",))
    assert diff.path == "c/callback_hooks[3]" and "another order" in diff.message
    assert diff.expected[:2] == ["Cb.on_train_batch_end", "Cb.on_train_epoch_end"]


def test_how_often_a_callback_hook_ran_and_what_outputs_it_saw():
    out = {"Cb.on_train_batch_end": [{"loss": 1.0}, {"loss": 2.0}]}
    v2_calls = [[1, "Cb.on_train_batch_end"], [2, "Cb.on_train_batch_end"]]
    e = rec(hooks(V1["sequence"], V1["callbacks"]["calls"], V1["defined"], out))
    fewer = rec(hooks(V1["sequence"], v2_calls, V1["defined"], out))
    (diff,) = compare_case("c", e, fewer, sections=("callback_hooks",))
    assert diff.path == "c/callback_hooks/Cb.on_train_epoch_end"
    assert (diff.expected, diff.actual) == ("ran 1 time(s)", "ran 0 time(s)")
    other = rec(hooks(V1["sequence"], V1["callbacks"]["calls"], V1["defined"],
                      {"Cb.on_train_batch_end": [{"loss": 1.0}, {"loss": 2.5}]}))
    (diff,) = compare_case("c", e, other, sections=("callback_hooks",))
    assert diff.path == 'c/callback_hooks/Cb.on_train_batch_end[1]["loss"]' and diff.actual == 2.5


def test_a_different_best_epoch_or_stopped_epoch_is_reported():
    monitors = {"ModelCheckpoint(val_loss)": {"best_model_score": 0.5, "best": [3, 16], "top_k": [[3, 16, 0.5]],
                                              "saved": [[0, 4], [3, 16]]},
                "EarlyStopping(val_loss)": {"stopped_epoch": 5, "wait_count": 2, "best_score": 0.5}}
    later = {"ModelCheckpoint(val_loss)": {**monitors["ModelCheckpoint(val_loss)"], "best": [4, 20]},
             "EarlyStopping(val_loss)": {**monitors["EarlyStopping(val_loss)"], "stopped_epoch": 6}}
    diffs = compare_case("c", rec(V1, monitors), rec(V1, later), sections=("monitors",))
    assert [d.path for d in diffs] == ['c/monitors["ModelCheckpoint(val_loss)"]["best"][0]',
                                       'c/monitors["ModelCheckpoint(val_loss)"]["best"][1]',
                                       'c/monitors["EarlyStopping(val_loss)"]["stopped_epoch"]']
    assert compare_case("c", rec(V1, monitors), rec(V1, monitors), sections=("monitors",)) == []


def test_a_migration_that_logs_the_monitored_metric_late_changes_the_best_and_the_stopped_epoch(tmp_path):
    """The corpus case migrated, and a wrong migration of it: the validation buffer is made
    once instead of every epoch, so ``val_loss`` averages every epoch so far (the sanity check
    included). Both run on 2.x here; the monitors differ."""
    migrated = transform_text(CASE.read_text(encoding="utf-8"), ALL_RULES, path=str(CASE)).text
    reset = "    def on_validation_epoch_start(self):\n"
    assert reset in migrated
    wrong = migrated.replace(reset, reset + '        if hasattr(self, "validation_step_outputs"):\n'
                                            "            return\n")
    records = {}
    for name, text in (("migrated", migrated), ("wrong", wrong)):
        path = tmp_path / f"{name}.py"
        path.write_text(text, encoding="utf-8")
        records[name] = runner.run_case(str(path), "v2", watch={"names": {}, "anchors": []})
        assert records[name]["error"] is None, records[name]["traceback"]
    good = records["migrated"]
    assert good["hooks"]["callbacks"]["outputs"]["BatchLossSum.on_train_batch_end"][0]["loss"]["tensor"] == []
    assert set(good["monitors"]) == {"ModelCheckpoint(val_loss)", "ModelCheckpoint(train_mean)",
                                     "EarlyStopping(val_loss)"}
    stopped = good["monitors"]["EarlyStopping(val_loss)"]["stopped_epoch"]
    assert 0 < stopped < good["current_epoch"] + 1 < 10  # stopped early
    best_epoch = good["monitors"]["ModelCheckpoint(val_loss)"]["best"][0]
    assert 0 < best_epoch < stopped
    diffs = compare_case("case", good, records["wrong"], sections=("monitors",))
    paths = {re.sub(r"\[\d+\]$", "", d.path) for d in diffs}
    assert 'case/monitors["ModelCheckpoint(val_loss)"]["best"]' in paths, diffs
    assert 'case/monitors["EarlyStopping(val_loss)"]["stopped_epoch"]' in paths, diffs
