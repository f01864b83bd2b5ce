"""The gates (``Rule.needed``) of the hook rule LM004 (LM001, LM002, LM003, LM301, LM303,
LM305 and LM306 find their sites themselves: see their own tests):
they must say "needed" whenever the rule's walk changes or reports something (aliases,
subclasses of project classes defined in other files, files the index has not seen), and
"not needed" for the common files where the walk would do nothing."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest
from gate_checks import gate_says, walk_acts

from lightmigrate.analysis.project import ClassInfo, ProjectIndex
from lightmigrate.rules.base import RuleContext
from lightmigrate.rules.shared.gates import def_parameter_names
from lightmigrate.rules.lm004_optimizer_hooks import OptimizerHooksRule

RULES = [OptimizerHooksRule()]
BY_CODE = {r.code: r for r in RULES}


def _files(files):
    return {path: textwrap.dedent(text) for path, text in files.items()}


def needed(code: str, path: str, files) -> bool:
    """The gate of rule ``code`` for ``files[path]``, with every file of ``files`` indexed."""
    files = _files(files)
    return gate_says(BY_CODE[code], files[path], path, files)


def changes(code: str, path: str, files) -> bool:
    """Whether the rule's walk (every gate open) changes or reports anything in ``files[path]``."""
    files = _files(files)
    return walk_acts(BY_CODE[code], files[path], path, files)


def check(code: str, path: str, files, expected: bool) -> None:
    """The gate says ``expected``, and the rule's walk agrees: it changes or reports something
    exactly when the gate says "needed" (for these cases the gate is exact)."""
    assert needed(code, path, files) is expected
    assert changes(code, path, files) is expected


# ---------------------------------------------------------------------------------------------
# Every rewriting example of every rule of the group passes its gate, and a file the index
# has not seen always does.


EXAMPLES = [(r, ex) for r in RULES for ex in r.examples if ex.after is not None and ex.after != ex.before]


@pytest.mark.parametrize("rule,example", EXAMPLES, ids=[f"{r.code}-{e.title}" for r, e in EXAMPLES])
def test_gate_passes_every_rewriting_example(rule, example):
    index = ProjectIndex()
    index.add_source(example.before, "model.py")
    assert rule.needed(example.before, RuleContext("model.py", index))
    # and when the index has not seen the file (apply indexes it itself)
    assert rule.needed(example.before, RuleContext("model.py", ProjectIndex()))
    assert rule.needed(example.before, RuleContext("other.py", index))


UNCHANGED = [(r, ex) for r in RULES for ex in r.examples if ex.after is None]


@pytest.mark.parametrize("rule,example", UNCHANGED, ids=[f"{r.code}-{e.title}" for r, e in UNCHANGED])
def test_gate_closed_only_where_the_walk_does_nothing(rule, example):
    # the examples a rule leaves alone: where the gate says "not needed", the walk itself
    # (run directly, no gate) changes and reports nothing
    if not needed(rule.code, "model.py", {"model.py": example.before}):
        assert not changes(rule.code, "model.py", {"model.py": example.before})


@pytest.mark.parametrize("code", sorted(BY_CODE))
def test_unparsable_text_is_needed(code):
    index = ProjectIndex()
    index.add_source("x = 1\n", "m.py")
    assert BY_CODE[code].needed("def broken(:\n", RuleContext("m.py", index))


# ---------------------------------------------------------------------------------------------
# LM004 optimizer hooks

def test_lm004_old_signatures_toggles_and_manual_steps_are_needed():
    old_step = {"m.py": """\
        import lightning.pytorch as L


        class M(L.LightningModule):
            def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_idx, closure, on_tpu, amp, lbfgs):
                optimizer.step(closure=closure)
        """}
    check("LM004", "m.py", old_step, True)
    toggles = {"m.py": """\
        import pytorch_lightning as pl


        class M(pl.LightningModule):
            def training_step(self, batch, batch_idx):
                opt = self.optimizers()
                self.toggle_optimizer(opt, 0)
                self.untoggle_optimizer(0)
        """}
    check("LM004", "m.py", toggles, True)


def test_lm004_2x_signatures_are_not_needed():
    files = {"m.py": """\
        import pytorch_lightning as pl


        class M(pl.LightningModule):
            def training_step(self, batch, batch_idx):
                return batch

            def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_closure=None):
                optimizer.step(closure=optimizer_closure)

            def lr_scheduler_step(self, scheduler, metric):
                scheduler.step()
        """}
    check("LM004", "m.py", files, False)


def test_lm004_callback_subclass_in_another_file():
    files = {
        "cb.py": """\
            from pytorch_lightning.callbacks import Callback


            class Base(Callback):
                pass
            """,
        "watch.py": """\
            from cb import Base


            class Watch(Base):
                def on_before_optimizer_step(self, trainer, pl_module, optimizer, opt_idx):
                    print(opt_idx)
            """,
        "new.py": """\
            import pytorch_lightning as pl
            from cb import Base


            class Watch2(Base):
                def on_before_optimizer_step(self, trainer, pl_module, optimizer):
                    print(optimizer)
            """,
    }
    check("LM004", "watch.py", files, True)
    check("LM004", "new.py", files, False)
    # without a Lightning import in the file, the class is not recognisable: its hook is marked
    files["new.py"] = textwrap.dedent(files["new.py"]).replace("import pytorch_lightning as pl\n", "")
    check("LM004", "new.py", files, True)


def test_lm004_autograd_function_backward_is_not_needed():
    files = {"f.py": """\
        import torch


        class Square(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * x

            @staticmethod
            def backward(ctx, grad_output):
                return grad_output
        """}
    check("LM004", "f.py", files, False)


def test_lm004_unrecognised_class_with_an_old_hook_is_marked():
    files = {"u.py": """\
        from mystery import Base


        class M(Base):
            def optimizer_zero_grad(self, epoch, batch_idx, optimizer, optimizer_idx):
                optimizer.zero_grad()
        """}
    check("LM004", "u.py", files, True)


def test_lm004_text_gate_lets_through_every_file_the_gate_needs():
    """The gate may say "needed" where the walk finds nothing (here: a class that inherits
    training_step from an unrecognisable base, in a file with a ``def training_step``); the
    engine asks ``may_need`` first, so it must let such a file through too (``needed`` checks
    it), and the file has no "optim" anywhere."""
    files = {"base.py": """\
        from pkg import Unknown


        class Base(Unknown):
            def training_step(self, batch, batch_idx):
                pass
        """, "child.py": """\
        from base import Base


        class Child(Base):
            def backward(self, loss):
                pass


        def training_step(batch):
            pass
        """}
    assert needed("LM004", "child.py", files)
    assert "optim" not in files["child.py"]


def test_def_parameter_names_holds_every_parameter_ast_finds():
    """For every function of the corpus and of this package, the names read from its headers
    include each parameter Python's ``ast`` finds."""
    root = Path(__file__).resolve().parents[2]
    checked = 0
    for path in sorted([*root.joinpath("corpus").rglob("*.py"), *root.joinpath("lightmigrate").rglob("*.py")]):
        text = path.read_text(encoding="utf-8")
        params: dict = {}
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                params.setdefault(node.name, set()).update(a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg))
        for name, expected in params.items():
            found = def_parameter_names(text, name)
            assert found is not None and expected <= set(found), (path, name)
            checked += 1
    assert checked > 1000


def test_def_parameter_names_reads_only_the_header():
    text = "def f(a, b: Dict[str, int] = g(')'), *c, d=1, **e) -> int:\n    z = 1\nx = 'def f(q)'\n"
    assert def_parameter_names(text, "f") == ["a", "b", "Dict", "str", "int", "g", "c", "d", "e", "q"]
    assert def_parameter_names("def f\n", "f") == []  # not a header: no parenthesis
    assert def_parameter_names("def f(a,\n", "f") is None  # unreadable: the file may need the rule
    assert def_parameter_names("undef f(a)\n", "f") == []


def test_lm004_text_gate_reads_the_parameters_of_backward():
    """``may_need`` lets a ``def backward`` through only with a parameter the 1.x plan needs
    ("optim" in a name, or an index name); the other hooks' defs, toggles and manual steps
    always. Each case that passes has a gate that needs it."""
    rule = BY_CODE["LM004"]
    autograd = "class F:\n    def backward(ctx, grad_output):\n        return grad_output\n"
    assert not rule.may_need(autograd)
    assert rule.may_need(autograd.replace("grad_output)", "loss, optimizer, optimizer_idx)"))
    # the third parameter's name has "optim" in it; the index may be called opt_idx
    assert rule.may_need("def backward(self, loss, optim):\n    pass\n")
    assert rule.may_need("def backward(self, loss, opt, opt_idx):\n    pass\n")
    # a header over several lines, a default with a parenthesis in a string, a comment
    assert rule.may_need("def backward(\n    self,  # ) here\n    loss=f(')'),\n    optimizer=None,\n):\n    pass\n")
    # "optim" after the header does not count, nor a def of another name
    assert not rule.may_need("def backward(ctx, g):\n    optimizer = 1\ndef step(self, optimizer):\n    pass\n")
    for other in ("def training_step(self, batch):", "def optimizer_step(self, *args):",
                  "async def lr_scheduler_step(self, s):", "def \\\n    finetune_function(self):"):
        assert rule.may_need(other + "\n    pass\n"), other
    for text in ("self.toggle_optimizer(opt)\n", "automatic_optimization = False\n",
                 "def automatic_optimization(self):\n    return False\n"):
        assert rule.may_need(text), text
    assert not rule.may_need("optimizer = torch.optim.SGD(params)\nloss.backward()\n")


def test_lm004_a_backward_header_that_cannot_be_read_lets_the_file_through():
    assert BY_CODE["LM004"].may_need("def backward(self, loss,\n")


def test_lm004_backward_with_an_old_signature_in_an_unrecognised_class_is_marked():
    """Where the text gate reads a ``backward`` header as 1.x, the gate needs the file too."""
    files = {"u.py": """\
        from mystery import Base


        class M(Base):
            def backward(self, loss, optimizer, optimizer_idx):
                loss.backward()
        """}
    check("LM004", "u.py", files, True)
    assert BY_CODE["LM004"].may_need(_files(files)["u.py"])


# ---------------------------------------------------------------------------------------------
# The per-path class lookup the gates use


def test_classes_in_follows_additions_and_merges():
    a = ClassInfo("A", "a.py", ("pl.LightningModule",), frozenset())
    index = ProjectIndex([a])
    assert index.classes_in("a.py") == [a]
    assert index.classes_in("b.py") == []
    b = ClassInfo("B", "b.py", ("A",), frozenset())
    index.add(b)
    assert index.classes_in("b.py") == [b]
    other = ProjectIndex([ClassInfo("C", "a.py", (), frozenset())])
    index.merge(other)
    assert [c.name for c in index.classes_in("a.py")] == ["A", "C"]
