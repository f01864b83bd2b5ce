"""LM310: LightningModules of a package with a `train()` override get 1.9's train-after-eval hooks."""

import textwrap

from lightmigrate.analysis.project import ProjectIndex
from lightmigrate.rules.base import RuleContext, SourceFile
from lightmigrate.rules.lm310_train_mode import TrainModeRule

from .conftest import run_rule

RULE = TrainModeRule()

ENCODER = """\
    from torch import nn


    class CachedEncoder(nn.Module):
        def train(self, mode: bool = True):
            if mode and not self.training:
                self.cache = None
            return super().train(mode=mode)
    """
LIT = """\
    import pytorch_lightning
    from pkg.nn.encoder import CachedEncoder


    class LitModule(pytorch_lightning.LightningModule):
        def __init__(self):
            super().__init__()
            self.encoder = CachedEncoder()

        def training_step(self, batch, batch_idx):
            return self.encoder(batch).sum()


    class SubModule(LitModule):
        pass
    """
HOOKS = """\


        def on_validation_model_train(self):
            # as 1.9 did after validation (2.x only resets the `training` flags): runs CachedEncoder.train()
            self.trainer.model.train()

        def on_test_model_train(self):
            # as 1.9 did after testing (2.x only resets the `training` flags): runs CachedEncoder.train()
            self.trainer.model.train()
    """
PACKAGE = {"pkg/__init__.py": "", "pkg/nn/__init__.py": "", "pkg/contrib/__init__.py": "",
           "pkg/nn/encoder.py": ENCODER, "pkg/contrib/lit.py": LIT}


def _files(files):
    return {p: textwrap.dedent(t) for p, t in files.items()}


def _find(files, path):
    files = _files(files)
    index = ProjectIndex()
    for other, text in files.items():
        index.add_source(text, other)
    return [(s.line, s.target, s.action, s.data) for s in RULE.find(SourceFile(path, files[path]),
                                                                   RuleContext(path, index))]


def _run(files, path):
    files = _files(files)
    return run_rule(RULE, files[path], path, {p: t for p, t in files.items() if p != path})


def test_the_lightning_module_of_a_package_with_a_train_override_gets_the_hooks():
    assert _find(PACKAGE, "pkg/contrib/lit.py") == [(5, "LitModule", "add", (
        ("on_validation_model_train", "on_test_model_train"), "CachedEncoder"))]
    out, findings = _run(PACKAGE, "pkg/contrib/lit.py")
    lit = textwrap.dedent(LIT)
    head, tail = lit.split("\n\n\nclass SubModule")
    assert out == head + textwrap.dedent(HOOKS).rstrip("\n").replace("\n", "\n    ").replace("\n    \n", "\n\n") \
        + "\n\n\nclass SubModule" + tail, out
    assert [f.code for f in findings] == ["LM310", "LM310"]
    compile(out, "lit.py", "exec")
    again = dict(PACKAGE, **{"pkg/contrib/lit.py": out})
    assert _find(again, "pkg/contrib/lit.py") == [] and _run(again, "pkg/contrib/lit.py")[0] == out
    # the package's other files and the subclass are left alone
    assert _find(PACKAGE, "pkg/nn/encoder.py") == []


def test_only_the_missing_hook_is_added():
    files = dict(PACKAGE, **{"pkg/contrib/lit.py": LIT.replace(
        "    def training_step", "    def on_test_model_train(self):\n            pass\n\n        def training_step")})
    assert [s[3][0] for s in _find(files, "pkg/contrib/lit.py")] == [("on_validation_model_train",)]
    # a project mixin defining both: nothing to add
    mixin = "import pytorch_lightning\n\n\nclass Hooks:\n    def on_validation_model_train(self):\n        pass\n\n" \
            "    def on_test_model_train(self):\n        pass\n"
    files = dict(PACKAGE, **{"pkg/contrib/hooks.py": mixin, "pkg/contrib/lit.py": LIT.replace(
        "from pkg.nn.encoder import CachedEncoder", "from pkg.nn.encoder import CachedEncoder\n    from .hooks import Hooks")
        .replace("(pytorch_lightning.LightningModule)", "(Hooks, pytorch_lightning.LightningModule)")})
    assert _find(files, "pkg/contrib/lit.py") == []


def test_nothing_without_a_train_override_in_the_package():
    # no override anywhere
    plain = dict(PACKAGE, **{"pkg/nn/encoder.py": ENCODER.replace("def train(self, mode: bool = True)",
                                                                    "def reset(self, mode: bool = True)")})
    assert _find(plain, "pkg/contrib/lit.py") == []
    assert _run(plain, "pkg/contrib/lit.py")[0] == textwrap.dedent(LIT)
    # an override in another package of the run (torch's own nn.Module, say)
    other = {"pkg/__init__.py": "", "pkg/contrib/__init__.py": "", "pkg/contrib/lit.py": LIT,
             "vendor/__init__.py": "", "vendor/nn/__init__.py": "", "vendor/nn/encoder.py": ENCODER}
    assert _find(other, "pkg/contrib/lit.py") == []
    # a `train` that is not nn.Module's: a runner's loop, a dataset's split, a class outside
    # nn.Module's hierarchy
    for other in ("class Runner(Base):\n    def train(self, epochs, data):\n        pass\n",
                  "class Constant(Dataset):\n    def train(self):\n        return self.data\n",
                  "class Base:\n    pass\n\n\nclass Sampler(Base):\n    def train(self, mode=True):\n        pass\n"):
        assert _find(dict(PACKAGE, **{"pkg/nn/encoder.py": other}), "pkg/contrib/lit.py") == [], other


def test_a_single_script_with_both_classes():
    source = textwrap.dedent(ENCODER) + "\n\n" + textwrap.dedent(LIT).replace(
        "from pkg.nn.encoder import CachedEncoder\n", "")
    out, _ = run_rule(RULE, source, "train.py")
    assert out.count("self.trainer.model.train()") == 2 and run_rule(RULE, out, "train.py")[0] == out
