"""LM101/LM102 rewrites that change runtime code, run on both versions: the original on real
pytorch-lightning 1.9.5, the migrated copy on Lightning 2.x (this interpreter). The corpus harness
builds the Trainer itself, so these scripts (resume from a checkpoint, trainer.tune) run here."""

import json
import os
import subprocess
import sys

import pytest

from lightmigrate.engine import transform_text
from lightmigrate.rules import ALL_RULES

from tests.verify.conftest import require_oracle

COMMON = '''
import json, os, sys
import torch
from torch.utils.data import DataLoader, TensorDataset
import pytorch_lightning as pl


class M(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(3, 1)
        self.lr = 0.01
        self.batch_size = 2

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.mse_loss(self.layer(x).squeeze(-1), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", torch.nn.functional.mse_loss(self.layer(x).squeeze(-1), y))

    def train_dataloader(self):
        g = torch.Generator().manual_seed(7)
        x = torch.randn(64, 3, generator=g)
        return DataLoader(TensorDataset(x, x.sum(-1)), batch_size=self.batch_size)

    def val_dataloader(self):
        return loader()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.lr)


def loader():
    g = torch.Generator().manual_seed(8)
    x = torch.randn(24, 3, generator=g)
    return DataLoader(TensorDataset(x, x.sum(-1)), batch_size=4)


QUIET = dict(logger=False, enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
             accelerator="cpu")
'''

RESUME = '''
def resume(out_dir):
    pl.seed_everything(3)
    path = os.path.join(out_dir, "phase1.ckpt")
    first = pl.Trainer(max_epochs=2, default_root_dir=out_dir, **QUIET)
    model = M()
    first.fit(model, loader())
    first.save_checkpoint(path)
    model = M()
    trainer = pl.Trainer(max_epochs=4, default_root_dir=out_dir, resume_from_checkpoint=path, **QUIET)
    trainer.fit(model, loader(), loader())
    result = trainer.validate(model, loader(), verbose=False)
    return {"global_step": trainer.global_step, "epoch": trainer.current_epoch,
            "weights": [round(float(v), 6) for v in model.layer.weight.flatten()],
            "validate": {k: round(v, 6) for k, v in result[0].items()}}
'''

TUNE = '''
def tune_MODE(out_dir):
    pl.seed_everything(3)
    model = M()
    trainer = pl.Trainer(max_epochs=10, default_root_dir=out_dir, auto_lr_find=True, auto_scale_batch_size="MODE",
                         logger=False, enable_checkpointing=False, enable_progress_bar=False,
                         enable_model_summary=False, accelerator="cpu")
    trainer.tune(model, scale_batch_size_kwargs={"max_trials": 3, "steps_per_trial": 1},
                 lr_find_kwargs={"num_training": 30, "min_lr": 1e-4, "max_lr": 0.3,
                                 "early_stop_threshold": None})
    return {"lr": round(model.lr, 8), "batch_size": model.batch_size, "rng_after": round(torch.rand(1).item(), 6)}
'''

TAIL = '''

if __name__ == "__main__":
    out = {}
    for name, fn in (("resume", resume), ("binsearch", tune_binsearch), ("power", tune_power)):
        folder = os.path.join(sys.argv[1], name)
        os.makedirs(folder)
        out[name] = fn(folder)
    print("RESULT " + json.dumps(out))
'''

SCRIPT = COMMON + RESUME + TUNE.replace("MODE", "binsearch") + TUNE.replace("MODE", "power") + TAIL


def _run(python, code, tmp_path, name):
    path = tmp_path / f"{name}.py"
    path.write_text(code)
    out_dir = tmp_path / f"{name}_out"
    out_dir.mkdir()
    proc = subprocess.run([str(python), str(path), str(out_dir)], capture_output=True, text=True, timeout=900,
                          env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = [l for l in proc.stdout.splitlines() if l.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):])


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The script on 1.9.5 and its migration on 2.x, once for the module (each run starts Lightning)."""
    oracle = require_oracle()
    tmp_path = tmp_path_factory.mktemp("trainer_behaviour")
    migrated = transform_text(SCRIPT, ALL_RULES, "case.py")
    v1 = _run(oracle, SCRIPT, tmp_path, "v1")
    v2 = _run(sys.executable, migrated.text, tmp_path, "v2")
    return v1, v2, migrated


def test_migration_of_the_script(runs):
    _, _, migrated = runs
    text = migrated.text
    assert "resume_from_checkpoint" not in text and "ckpt_path=path" in text
    assert "trainer.tune(" not in text and text.count("tuner.scale_batch_size(") == 2 and text.count("tuner.lr_find(") == 2
    # 1.9's tune() set the model's lr to 1.9's suggestion: kept by a helper written once, no marker
    assert migrated.markers == 0
    assert text.count("def apply_lr_suggestion_19(") == 1 and text.count("apply_lr_suggestion_19(model, lr_finder)") == 2


def test_resume_from_checkpoint_moves_to_fit_and_matches_19(runs):
    v1, v2, _ = runs
    assert v1["resume"]["global_step"] == 24 and v1["resume"]["epoch"] == 4  # resumed after 2 of 4 epochs
    assert v2["resume"] == v1["resume"]


@pytest.mark.parametrize("mode", ["binsearch", "power"])
def test_tune_becomes_tuner_and_matches_19(runs, mode):
    v1, v2 = runs[0][mode], runs[1][mode]
    assert v1["batch_size"] > 2 and v1["lr"] != 0.01  # both searches changed something on 1.9.5
    # batch size (max_trials + 1, margin 0, no cap) and the RNG state after tune() (isolate_rng) match
    assert (v2["batch_size"], v2["rng_after"]) == (v1["batch_size"], v1["rng_after"])
    # 2.x's suggestion algorithm differs (lr_suggestion_19 computes 1.9's): the model gets 1.9's rate
    assert v2["lr"] == v1["lr"]
