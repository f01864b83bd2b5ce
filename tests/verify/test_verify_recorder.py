"""Unit tests for the recorder/runner, run in-process on the 2.x side (this interpreter)."""

import importlib.util
import json
import sys
import textwrap

import pytest

from lightmigrate.verify.hooks import epoch_end_anchors, epoch_end_param_names, epoch_end_watch
from lightmigrate.verify.recorder import EpochEndTracer, encode, param_is_read

torch = pytest.importorskip("torch")
pytest.importorskip("pytorch_lightning")

from lightmigrate.verify import runner  # noqa: E402  (imports Lightning lazily anyway)


@pytest.fixture(autouse=True)
def _restore_torch_determinism():
    before = torch.are_deterministic_algorithms_enabled()
    yield
    torch.use_deterministic_algorithms(before)


ORIGINAL_1X = '''
import pytorch_lightning as pl

class Model(pl.LightningModule):
    def validation_epoch_end(self, outputs):
        """Docstrings produce no line event."""
        self._summarize(outputs)

    def _summarize(self, outputs):
        self.log("val_mean", torch.stack(outputs).mean())

    def training_epoch_end(self, outs):
        pass

    def on_predict_epoch_end(self, results):
        self.n = len(results)
'''

MIGRATED_2X = '''
import torch
from torch.utils.data import DataLoader, TensorDataset
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(2, 1)
        self.seen = []

    def training_step(self, batch, batch_idx):
        (x,) = batch
        loss = self.lin(x).pow(2).mean()
        self.log("loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        (x,) = batch
        return self.lin(x).abs().mean()

    def on_validation_epoch_start(self):
        self._buf = [[]]

    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):
        self._buf[dataloader_idx].append(outputs)

    def on_validation_epoch_end(self):
        outputs = self._buf
        if len(outputs) == 1:
            outputs = outputs[0]
        self._summarize_epoch_end(outputs)

    def _summarize_epoch_end(self, outputs):
        self._summarize(outputs)

    def _summarize(self, outputs):
        self.log("val_mean", torch.stack(outputs).mean())
        self.seen.append(len(outputs))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def lightmigrate_case():
    g = torch.Generator().manual_seed(0)
    data = lambda n: DataLoader(TensorDataset(torch.randn(n, 2, generator=g)), batch_size=2)
    return {"model": Model(), "train_dataloaders": data(4), "val_dataloaders": data(6),
            "trainer": {"max_epochs": 2}}
'''


def test_hooks_read_names_and_anchors_from_the_original():
    assert epoch_end_param_names(ORIGINAL_1X) == {"validation": ["outputs"], "train": ["outs"], "predict": ["results"]}
    # docstrings skipped; `pass` bodies have no anchor
    assert epoch_end_anchors(ORIGINAL_1X) == ["self._summarize(outputs)", "self.n = len(results)"]
    assert set(epoch_end_watch(ORIGINAL_1X)) == {"names", "anchors"}


def test_encode():
    t = torch.tensor([[1.0, 2.0]], requires_grad=True) * 2
    assert encode(t) == {"tensor": [1, 2], "dtype": "torch.float32", "values": [2.0, 4.0], "requires_grad": True}
    assert encode(torch.tensor(3))["values"] == [3]
    assert encode({"a": (1, None), 2: ["x", 1.5]}) == {"a": {"tuple": [1, None]}, "2": ["x", 1.5]}

    class Thing:
        pass

    assert encode(Thing())["repr"].endswith("at 0x?>")
    json.dumps(encode({"nan": float("nan")}))


def test_param_is_read():
    def uses(self, outputs):
        return len(outputs)

    def ignores(self, outputs):
        return 1

    def closure(self, outputs):
        return [o for o in outputs]

    def passes_on(self, outputs):
        return super().validation_epoch_end(outputs)  # noqa

    assert param_is_read(uses.__code__, "outputs")
    assert not param_is_read(ignores.__code__, "outputs")
    assert param_is_read(closure.__code__, "outputs")
    assert param_is_read(passes_on.__code__, "outputs")


def _import(path, name):
    spec = importlib.util.spec_from_file_location(name, str(path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_v1_tracer_records_once_per_invocation_and_skips_unused_arguments(tmp_path):
    path = tmp_path / "fake_v1.py"
    path.write_text(textwrap.dedent('''
        class Base:
            trainer = None

            def training_step(self, batch, batch_idx):
                return None

            def validation_epoch_end(self, outputs):
                self.got = list(outputs)

        class Leaf(Base):
            def validation_epoch_end(self, outputs):
                outputs = outputs[:1]  # rebinding after entry does not change the record
                super().validation_epoch_end(outputs)

            def test_epoch_end(self, outputs):
                self.validation_epoch_end(outputs)

            def training_epoch_end(self, outputs):
                self.done = True
    '''))
    mod = _import(path, "_lm_fake_v1")
    leaf = mod.Leaf()
    with EpochEndTracer(str(path), "v1") as tracer:
        leaf.validation_epoch_end([1, 2])
        leaf.test_epoch_end([3])
        leaf.training_epoch_end([4])
        leaf.validation_epoch_end([])
    recs = [(r["stage"], r["hook"], r["captured"], r["value"]) for r in tracer.records]
    assert recs == [
        ("validation", "validation_epoch_end", True, [1, 2]),
        ("test", "test_epoch_end", True, [3]),
        ("train", "training_epoch_end", False, None),
        ("validation", "validation_epoch_end", True, []),
    ]


def test_v2_tracer_folds_the_module_hook_into_the_run_once_call_before_it(tmp_path):
    """LM001's run-once method (a callback calls it, then the module's hook calls it again,
    a no-op) yields one record per run of the old body; a second validation in the same epoch
    starts anew, and a module hook without a run-once call before it is recorded as usual."""
    path = tmp_path / "fake_v2.py"
    path.write_text(textwrap.dedent('''
        class Model:
            trainer = None
            buf = None

            def training_step(self, batch, batch_idx):
                return None

            def on_validation_epoch_start(self):
                self.buf = [1, 2]

            def on_validation_epoch_end(self):
                self._finish_validation_epoch()

            def _finish_validation_epoch(self):
                outputs = self.buf
                if outputs is None:
                    return
                self.buf = None
                self.got = list(outputs)
    '''))
    mod = _import(path, "_lm_fake_v2")
    m = mod.Model()
    watch = {"names": {"validation": ["outputs"]}, "anchors": ["self.got = list(outputs)"]}
    with EpochEndTracer(str(path), "v2", watch=watch) as tracer:
        for callback_first in (True, True, False):
            m.on_validation_epoch_start()
            if callback_first:
                m._finish_validation_epoch()  # (what the callback's hook does)
            m.on_validation_epoch_end()
    recs = [(r["hook"], r["captured"], r["capture"], r["value"]) for r in tracer.records]
    assert recs == [("_finish_validation_epoch", True, "anchor", [1, 2])] * 2 + [
        ("on_validation_epoch_end", True, "anchor", [1, 2])]


def test_run_case_in_process_v2_records_metrics_and_epoch_end_inputs(tmp_path):
    path = tmp_path / "tiny_case.py"
    path.write_text(MIGRATED_2X)
    watch = epoch_end_watch(ORIGINAL_1X)
    rec = runner.run_case(str(path), "v2", watch=watch, quiet=False)
    assert rec["error"] is None, rec["traceback"]
    keys = {key for _, key, _ in rec["metrics"]}
    assert {"loss", "val_mean", "epoch"} <= keys
    assert rec["global_step"] == 4 and rec["current_epoch"] == 2
    assert set(rec["state_dict"]) == {"lin.weight", "lin.bias"}
    # sanity check (2 batches) + 2 epochs (3 batches each); one record per invocation even though
    # the value passes through two helpers with the same parameter name
    assert [(r["stage"], r["sanity"], r["epoch"]) for r in rec["epoch_end"]] == [
        ("validation", True, 0), ("validation", False, 0), ("validation", False, 1)]
    assert all(r["captured"] and r["capture"] == "anchor" for r in rec["epoch_end"])
    # the anchor skips the migration's set-up: the value is the flat (1-loader) list
    assert [len(r["value"]) for r in rec["epoch_end"]] == [2, 3, 3]
    assert rec["epoch_end"][1]["value"][0]["tensor"] == []
    val_rows = [v for step, key, v in rec["metrics"] if key == "val_mean"]
    assert len(val_rows) == 2  # sanity-check metrics are not logged


def test_run_case_records_errors_and_the_runner_continues(tmp_path):
    bad = tmp_path / "bad_case.py"
    bad.write_text("def lightmigrate_case():\n    raise RuntimeError('nope')\n")
    good = tmp_path / "good_case.py"
    good.write_text(MIGRATED_2X)
    out = tmp_path / "out.json"
    assert runner.main([str(bad), str(good), "--side", "v2", "--out", str(out), "--verbose"]) == 0
    doc = json.loads(out.read_text())
    assert doc["side"] == "v2" and list(doc["cases"]) == ["bad_case", "good_case"]
    assert doc["cases"]["bad_case"]["error"] == "RuntimeError: nope"
    assert "Traceback" in doc["cases"]["bad_case"]["traceback"]
    assert doc["cases"]["good_case"]["error"] is None
