"""What the trainer's ModelCheckpoint and EarlyStopping callbacks ended with, in words that do not
depend on file names or on the Lightning version.

Import-light (runs inside the 1.9.5 interpreter too): Lightning is looked up through the root
package name the caller passes.

* :class:`CheckpointSaves` wraps ``trainer.save_checkpoint`` for the run (an instance attribute,
  removed afterwards) and notes the trainer's ``current_epoch`` and ``global_step`` at each save
  (the ``"epoch"`` and ``"global_step"`` the checkpoint file holds) and which ModelCheckpoint
  made it.
* :func:`monitor_results` reads the callbacks' state after the run: for each ModelCheckpoint its
  best score, the epoch and step of its best checkpoint and of each kept top-k checkpoint, and
  every save it made but ``last.ckpt``, as ``[epoch, step]``; for each EarlyStopping the epoch it
  stopped in (0: never), how many checks it has waited since the best, and the best score.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any, Dict, List, Optional, Tuple

from lightmigrate.verify.recorder import scalar


def _classes(root: str) -> Tuple[Optional[type], Optional[type]]:
    try:
        callbacks = importlib.import_module(root + ".callbacks")
    except ImportError:  # pragma: no cover
        return None, None
    return getattr(callbacks, "ModelCheckpoint", None), getattr(callbacks, "EarlyStopping", None)


class CheckpointSaves:
    """``with CheckpointSaves(trainer, root):`` notes every checkpoint saved during the block."""

    def __init__(self, trainer: Any, root: str) -> None:
        self.trainer = trainer
        self.checkpoint_cls, _ = _classes(root)
        self.at: Dict[str, List[int]] = {}  # real path -> [epoch, step] of its latest save
        self.by: Dict[int, List[List[Any]]] = {}  # id(ModelCheckpoint) -> [[path, epoch, step], ...]

    def __enter__(self) -> "CheckpointSaves":
        original = self.trainer.save_checkpoint
        saves = self

        def save_checkpoint(filepath: Any, *args: Any, **kwargs: Any) -> Any:
            saves.note(str(filepath))
            return original(filepath, *args, **kwargs)

        self.trainer.save_checkpoint = save_checkpoint
        return self

    def __exit__(self, *exc: Any) -> None:
        self.trainer.__dict__.pop("save_checkpoint", None)

    def note(self, filepath: str) -> None:
        where = [int(self.trainer.current_epoch), int(self.trainer.global_step)]
        path = os.path.realpath(filepath)
        self.at[path] = where
        frame = sys._getframe(2)
        for _ in range(4):  # the ModelCheckpoint method that asked for the save
            if frame is None:
                break
            owner = frame.f_locals.get("self")
            if self.checkpoint_cls is not None and isinstance(owner, self.checkpoint_cls):
                self.by.setdefault(id(owner), []).append([path, *where])
                break
            frame = frame.f_back

    def where(self, filepath: Any) -> Optional[List[int]]:
        return self.at.get(os.path.realpath(str(filepath))) if filepath else None


def _score(value: Any) -> Any:
    return None if value is None else scalar(value)


def monitor_results(trainer: Any, root: str, saves: Optional[CheckpointSaves] = None) -> Dict[str, Any]:
    """``{"ModelCheckpoint(<monitor>)": {...}, "EarlyStopping(<monitor>)": {...}}`` for the
    trainer's callbacks of these two classes (subclasses included), in their order; a second
    one with the same label gets ``#2``."""
    checkpoint_cls, stopping_cls = _classes(root)
    out: Dict[str, Any] = {}
    for callback in getattr(trainer, "callbacks", None) or []:
        if checkpoint_cls is not None and isinstance(callback, checkpoint_cls):
            label, record = "ModelCheckpoint", _checkpoint_record(callback, saves)
        elif stopping_cls is not None and isinstance(callback, stopping_cls):
            label, record = "EarlyStopping", {
                "stopped_epoch": int(callback.stopped_epoch),
                "wait_count": int(callback.wait_count),
                "best_score": _score(callback.best_score),
            }
        else:
            continue
        label = f"{label}({getattr(callback, 'monitor', None)})"
        key, n = label, 1
        while key in out:
            n += 1
            key = f"{label}#{n}"
        out[key] = record
    return out


def _checkpoint_record(callback: Any, saves: Optional[CheckpointSaves]) -> Dict[str, Any]:
    def where(path: Any) -> Optional[List[int]]:
        return saves.where(path) if saves is not None else None

    # ``last.ckpt`` is left out: 2.x (2.2+) re-saves it only when a top-k checkpoint was saved
    # in the same step, 1.9 at every check
    last = os.path.realpath(callback.last_model_path) if callback.last_model_path else None
    made = saves.by.get(id(callback), []) if saves is not None else []
    top_k = [[*(where(path) or [None, None]), _score(score)] for path, score in callback.best_k_models.items()]
    return {
        "best_model_score": _score(callback.best_model_score),
        "best": where(callback.best_model_path),
        "top_k": sorted(top_k, key=lambda row: (row[0] is None, row[0] or 0, row[1] or 0)),
        "saved": [[epoch, step] for path, epoch, step in made if path != last],
    }
