"""Crash safety: a large in-place rewrite killed with SIGKILL leaves every file either
byte-identical to its original or to its full rewrite, and no temporary file survives the
next run."""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from lightmigrate.engine.source import TEMP_SUFFIX, stale_temp_files

SCRIPT = Path(sys.executable).with_name("lightmigrate")
FILES = 48

TEMPLATE = '''import torch
import pytorch_lightning as pl


class Model{i}(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear({i} % 7 + 1, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.layer(x), y)
        return {{"loss": loss, "n": {i}}}

    def training_epoch_end(self, outputs):
        self.log("mean_loss", torch.stack([o["loss"] for o in outputs]).mean())

    def validation_step(self, batch, batch_idx):
        return self.layer(batch[0]).sum()

    def validation_step_end(self, out):
        self.log("val_sum", out)

    def validation_epoch_end(self, outputs):
        self.log("val_total", sum(outputs))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.{i})
'''


def make_tree(root: Path, count: int = FILES) -> dict:
    originals = {}
    for i in range(count):
        path = root / f"pkg{i % 4}" / f"model_{i:03d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        data = TEMPLATE.format(i=i + 1).encode()
        path.write_bytes(data)
        originals[path.relative_to(root)] = data
    return originals


def rewrite(root: Path, jobs: int = 2) -> subprocess.CompletedProcess:
    return subprocess.run([str(SCRIPT), "rewrite", "--jobs", str(jobs), str(root)], capture_output=True,
                          text=True, timeout=600)


def tree_bytes(root: Path) -> dict:
    """Every file's bytes. While the command still runs, a temporary file can be renamed away
    between the listing and the read: such a file is simply not in this snapshot."""
    out = {}
    for p in root.rglob("*"):
        try:
            if p.is_file():
                out[p.relative_to(root)] = p.read_bytes()
        except FileNotFoundError:
            continue
    return out


def temp_files(root: Path) -> list:
    return [p for p in root.rglob("*") if p.name.endswith(TEMP_SUFFIX)]


def test_sigkill_leaves_only_whole_files(tmp_path):
    reference = tmp_path / "reference"
    originals = make_tree(reference)
    done = rewrite(reference)
    assert done.returncode == 0, done.stderr
    rewritten = tree_bytes(reference)
    assert set(rewritten) == set(originals)
    assert all(rewritten[k] != originals[k] for k in originals)  # every file needs the rewrite

    # Kill after the first file is rewritten, after about a third and after about two thirds.
    for n, wanted in enumerate((1, FILES // 3, 2 * FILES // 3)):
        root = tmp_path / f"run{n}"
        make_tree(root)
        proc = subprocess.Popen([str(SCRIPT), "rewrite", "--jobs", "2", str(root)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 300
        try:
            while time.monotonic() < deadline and proc.poll() is None:
                current = tree_bytes(root)
                if sum(1 for k, v in current.items() if k in originals and v == rewritten[k]) >= wanted:
                    break
                time.sleep(0.01)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)  # the command and its workers at once
            proc.wait()
        after = tree_bytes(root)
        partial = [k for k in originals if after.get(k) not in (originals[k], rewritten[k])]
        assert partial == []
        finished = sum(1 for k in originals if after[k] == rewritten[k])
        assert finished >= wanted or proc.returncode == 0
        leftovers = set(after) - set(originals)
        assert all(k.name.endswith(TEMP_SUFFIX) for k in leftovers)
        # The next run finishes the job and removes any temporary file the kill left.
        again = rewrite(root)
        assert again.returncode == 0, again.stderr
        assert tree_bytes(root) == rewritten
        assert temp_files(root) == []


def test_next_run_removes_stale_temporary_files_it_owns(tmp_path):
    originals = make_tree(tmp_path, 4)
    first = sorted(originals)[0]
    target = tmp_path / first
    stale = target.with_name(f".{target.name}.abcd1234{TEMP_SUFFIX}")
    stale.write_bytes(originals[first][:100])  # a half-written rewrite from a killed run
    foreign = target.with_name(f".notours.abcd1234{TEMP_SUFFIX}")  # not next to a file of the run
    foreign.write_bytes(b"x")
    unrelated = target.with_name("notes.lmtmp")
    unrelated.write_bytes(b"keep")
    assert stale_temp_files([str(target)]) == [str(stale)]
    # --check and --diff never delete anything.
    subprocess.run([str(SCRIPT), "rewrite", "--check", str(tmp_path)], capture_output=True, timeout=600)
    assert stale.exists()
    done = rewrite(tmp_path)
    assert done.returncode == 0, done.stderr
    assert not stale.exists()
    assert foreign.exists() and unrelated.read_bytes() == b"keep"
    shutil.rmtree(tmp_path / first.parent)
