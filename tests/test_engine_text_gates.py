"""The gates' text-only first steps (``Rule.may_need``, ``Rule.gate_kinds``), as the engine asks
them: right after the triggers, so a file no gate can need is never parsed, and a file whose
gates need a Lightning class is left to the lazy index until it finds one there. The outcome
must be the one of a run with those steps left out (``scripts/audit_gates.py`` leaves them out;
its corpus test is in test_rule_gates.py)."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lightmigrate.engine import Mode, run, transform
from lightmigrate.engine.survey import text_gates
from lightmigrate.rules import select_rules

BASE = """\
import pytorch_lightning as pl


class Base(pl.LightningModule):
    def configure_optimizers(self):
        return None
"""
# No word of Lightning in it: LM301 rewrites it because Base, in another file, is a LightningModule.
CHILD = """\
from base import Base


class Child(Base):
    def training_step(self, batch, batch_idx):
        self.log("train", {"loss": batch})
        return batch
"""
# The same trigger (``.log(``) in a file with no Lightning class: no gate can need it.
TORCHY = """\
import torch


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.log(x) * x
"""
# Triggers of LM101/LM102 (``trainer``) with no Lightning import: never parsed.
NO_IMPORT = "def step(trainer):\n    return trainer\n"


def _project(tmp_path: Path, extra=None) -> Path:
    files = {"base.py": BASE, "child.py": CHILD, "torchy.py": TORCHY, "no_import.py": NO_IMPORT, **(extra or {})}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def _outcome(report):
    return {Path(f.path).name: (f.diff, f.error.format() if f.error else None, f.markers, f.findings, f.changes)
            for f in report.files}


@pytest.fixture
def parsed(monkeypatch):
    """The texts ``ast.parse`` is given during the test."""
    texts = []
    real = ast.parse

    def counting(source, *args, **kwargs):
        texts.append(source if isinstance(source, str) else source.decode())
        return real(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counting)
    return texts


@pytest.mark.parametrize("jobs", [1, 2])
def test_files_no_gate_can_need_are_never_parsed(tmp_path, parsed, jobs):
    root = _project(tmp_path)
    report = run([str(root)], select_rules(), Mode.DIFF, jobs=jobs)
    out = _outcome(report)
    assert 'self.log_dict({"train/loss": batch})' in out["child.py"][0]
    assert out["torchy.py"] == out["no_import.py"] == ("", None, 0, [], [])
    if jobs == 1:  # (on two processes, the parses happen elsewhere)
        # (LM301, the only rule TORCHY's text triggers, now finds its sites on the ast without a
        # text gate, so TORCHY is parsed; NO_IMPORT lacks "lightning", which the prefilter of LM101/LM102 needs)
        assert CHILD in parsed and TORCHY in parsed and NO_IMPORT not in parsed


def test_the_outcome_is_the_one_without_text_gates(tmp_path, monkeypatch):
    root = _project(tmp_path, {
        # a mixin of a LightningModule defined in another file: LM301 works in it too
        "mixin.py": 'class LogMixin:\n    def training_step(self, batch, batch_idx):\n        self.log("all", {"v": batch})\n',
        "mixed.py": "import lightning.pytorch as pl\nfrom mixin import LogMixin\n\n\n"
                    "class Mixed(pl.LightningModule, LogMixin):\n    pass\n",
        # a callback subclass of a project callback: LM002 marks its misspelt hook
        "cb_base.py": "from pytorch_lightning import Callback\n\n\nclass Base2(Callback):\n    pass\n",
        "cb.py": "from cb_base import Base2\n\n\nclass Printer(Base2):\n    def on_train_epoch_ends(self, trainer, module):\n"
                 "        pass\n",
    })
    rules = select_rules()
    gated = _outcome(run([str(root)], rules, Mode.DIFF, jobs=1))
    assert "log_dict" in gated["mixin.py"][0] and gated["cb.py"][2] == 1
    monkeypatch.setattr(transform, "rule_may_need", lambda rule, text: True)
    monkeypatch.setattr(transform, "rule_gate_kinds", lambda rule, text: None)
    assert _outcome(run([str(root)], rules, Mode.DIFF, jobs=1)) == gated


def test_a_syntax_error_is_reported_only_where_a_rule_may_need_the_file(tmp_path):
    # A file is parsed (and its syntax error reported) only when its text, and the project's
    # classes, show some rule may need it: a trigger alone, in a file with no Lightning word
    # and no class header that leads to a Lightning class, is not enough.
    # (TORCHY's trigger is LM301's, which has no text gate any more: its syntax error is reported)
    root = _project(tmp_path, {"broken_torchy.py": TORCHY + "def f(:\n", "broken_child.py": CHILD + "def f(:\n",
                               "broken_no_import.py": NO_IMPORT + "def f(:\n"})
    out = _outcome(run([str(root)], select_rules(), Mode.DIFF, jobs=1))
    assert out["broken_no_import.py"][1] is None
    assert "syntax error" in out["broken_torchy.py"][1]
    assert "syntax error" in out["broken_child.py"][1]


def test_a_file_with_markers_passes_whatever_the_text_gates_say():
    rules = {r.code: r for r in select_rules()}
    text = "x.log(1)  # TODO(lightmigrate): LM301 something\n"
    assert text_gates(text, frozenset({"LM301"}), rules) == (frozenset({"LM301"}), None)


def test_comment_searches_end_on_a_line_of_many_hashes():
    # In a repeated group, a comment that may end anywhere splits a line of n "#" in 2**n ways:
    # a failing search never ends. The searches must read each comment whole. (Run apart, so a
    # regression fails here instead of hanging the suite.)
    probe = textwrap.dedent("""\
        from lightmigrate.rules.shared import gates
        from lightmigrate.rules import lm203_loggers_cli as loggers_cli
        line = "#" * 200 + "\\n"
        assert not gates.attribute_read("x." + line, frozenset({"fit"}))
        assert not gates.attribute_read("trainer" + line, frozenset({"fit"}), frozenset({"t"}))
        assert not gates.attribute_assigned("trainer." + line, frozenset({"gpus"}))
        assert not gates.string_key("'a'" + line, frozenset({"a2"}))
        assert not gates.trainer_call_names("Trainer " + line + " x") - {"Trainer"}
        assert not loggers_cli._DIMS_KEYWORD.search("dims" + line)
        # and a comment inside brackets still counts as a gap
        assert gates.attribute_read("(x.  # why\\n   fit)", frozenset({"fit"}))
        assert gates.attribute_read("(x.  # why\\r   fit)", frozenset({"fit"}))
        # a whole run over such a file (before the fix, this one never ended)
        from lightmigrate.engine import Mode, run
        from lightmigrate.rules import select_rules
        import pathlib, tempfile
        folder = pathlib.Path(tempfile.mkdtemp())
        (folder / "banner.py").write_text("import pytorch_lightning as pl\\n\\nprint(trainer)  " + line
                                          + "n = trainer.num_gpus\\n")
        report = run([str(folder)], select_rules(), Mode.CHECK, jobs=1)
        assert report.changed == 1 and report.files[0].markers == 1
        print("done")
        """)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "done", done.stderr
