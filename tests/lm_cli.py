"""Helpers for tests that run the installed ``lightmigrate`` command as a user would."""

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(sys.executable).with_name("lightmigrate")

# A LightningModule with a 1.x epoch-end hook (LM001 rewrites it) ...
EPOCH_END = '''import pytorch_lightning as pl


class Model(pl.LightningModule):
    def validation_step(self, batch, batch_idx):
        return {"x": 1}

    def validation_epoch_end(self, outputs):
        print(outputs)
'''
# ... and one with a misspelt hook (LM002 marks it).
MISSPELT = '''import pytorch_lightning as pl


class Other(pl.LightningModule):
    def on_training_epoch_end(self):
        print("never runs on 2.x")
'''
CLEAN = "x = 1\n"


def lightmigrate(*args, cwd, env=None):
    """Run the real command; returns the CompletedProcess (text mode)."""
    full_env = dict(os.environ)
    full_env.pop("CI", None)
    full_env.update(env or {})
    return subprocess.run([str(SCRIPT), *map(str, args)], cwd=cwd, capture_output=True, text=True, env=full_env)


def write(root: Path, files: dict) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def snapshot(root: Path) -> dict:
    return {p: p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and ".git" not in p.parts}
