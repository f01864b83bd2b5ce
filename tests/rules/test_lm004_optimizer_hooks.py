"""LM004: optimizer hooks lose optimizer_idx and the optimizer_step flags; hand-written manual
steps get an LBFGS-safe closure. Runtime equivalence with 1.9.5: corpus/optimizer_hooks_old_signatures.py,
corpus/manual_step_without_closure.py, corpus/callback_before_optimizer_step_opt_idx.py."""

import textwrap

import pytest

from lightmigrate.analysis.project import ProjectIndex
from lightmigrate.engine import transform_text
from lightmigrate.output.findings import Kind
from lightmigrate.rules import ALL_RULES
from lightmigrate.rules.base import RuleContext, SourceFile
from lightmigrate.rules.lm004_optimizer_hooks import OptimizerHooksRule

from .conftest import check_corpus_case_idempotent, check_rewrite, run_rule

RULE = OptimizerHooksRule()
HEAD = "import pytorch_lightning as pl\n\n\n"
MANUAL_INIT = '''\
class M(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False

'''


def rw(before, after, **kw):
    return check_rewrite(RULE, HEAD + before, None if after is None else HEAD + after, **kw)


def markers(out):
    return [line.strip() for line in out.splitlines() if "TODO(lightmigrate): LM004" in line]


def test_optimizer_step_all_flags_and_super_call():
    findings = check_rewrite(RULE, HEAD + '''\
class M(pl.LightningModule):
    def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_idx, optimizer_closure, on_tpu, using_native_amp, using_lbfgs):
        if on_tpu or using_native_amp == True:
            pass
        self.flags = (optimizer_idx, using_lbfgs)
        super().optimizer_step(epoch, batch_idx, optimizer, optimizer_idx, optimizer_closure, on_tpu, using_native_amp, using_lbfgs)
''', '''\
import pytorch_lightning as pl
import torch
from pytorch_lightning.accelerators import XLAAccelerator


class M(pl.LightningModule):
    def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_closure):
        if isinstance(self.trainer.accelerator, XLAAccelerator) or (self.trainer.precision in ("16-mixed", "bf16-mixed")) == True:
            pass
        self.flags = (0, isinstance(getattr(optimizer, "optimizer", optimizer), torch.optim.LBFGS))
        super().optimizer_step(epoch, batch_idx, optimizer, optimizer_closure)
''')
    assert [(f.code, f.kind) for f in findings] == [("LM004", Kind.FIXED)]


def test_optimizer_step_keyword_flags_multiline_and_lightning_root():
    check_rewrite(RULE, '''\
import torch
from lightning.pytorch import LightningModule


class M(LightningModule):
    def optimizer_step(
        self,
        epoch,
        batch_idx,
        optimizer,
        optimizer_idx=0,
        optimizer_closure=None,
        on_tpu=False,
        using_native_amp=False,
        using_lbfgs=False,
    ):
        if on_tpu:
            print("tpu")
        optimizer.step(closure=optimizer_closure)
''', '''\
import torch
from lightning.pytorch import LightningModule
from lightning.pytorch.accelerators import XLAAccelerator


class M(LightningModule):
    def optimizer_step(
        self,
        epoch,
        batch_idx,
        optimizer,
        optimizer_closure=None,
    ):
        if isinstance(self.trainer.accelerator, XLAAccelerator):
            print("tpu")
        optimizer.step(closure=optimizer_closure)
''')


def test_reassigned_index_is_bound_at_the_top():
    rw('''\
class M(pl.LightningModule):
    def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_idx=0, optimizer_closure=None):
        """Doc."""
        optimizer_idx += 1
        optimizer.step(closure=optimizer_closure)
''', '''\
class M(pl.LightningModule):
    def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_closure=None):
        """Doc."""
        optimizer_idx = 0
        optimizer_idx += 1
        optimizer.step(closure=optimizer_closure)
''')


def test_index_under_manual_optimization_asks_the_trainer():
    rw(MANUAL_INIT + '''\
    def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_idx=0, optimizer_closure=None):
        self.log("i", float(optimizer_idx))
        optimizer.step(closure=optimizer_closure)

    def optimizer_zero_grad(self, epoch, batch_idx, optimizer, optimizer_idx):
        optimizer.zero_grad(set_to_none=optimizer_idx == 0)
''', MANUAL_INIT + '''\
    def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_closure=None):
        self.log("i", float(self.trainer.optimizers.index(getattr(optimizer, "optimizer", optimizer))))
        optimizer.step(closure=optimizer_closure)

    def optimizer_zero_grad(self, epoch, batch_idx, optimizer):
        optimizer.zero_grad(set_to_none=self.trainer.optimizers.index(getattr(optimizer, "optimizer", optimizer)) == 0)
''')


def test_the_other_module_hooks():
    rw('''\
class M(pl.LightningModule):
    def optimizer_zero_grad(self, epoch, batch_idx, optimizer, optimizer_idx):
        optimizer.zero_grad()

    def lr_scheduler_step(self, scheduler, optimizer_idx, metric):
        if optimizer_idx == 0:
            scheduler.step()

    def configure_gradient_clipping(self, optimizer, optimizer_idx, gradient_clip_val=None, gradient_clip_algorithm=None):
        super().configure_gradient_clipping(optimizer, optimizer_idx, gradient_clip_val, gradient_clip_algorithm)

    def on_before_optimizer_step(self, optimizer, optimizer_idx):
        self.log("idx", float(optimizer_idx))

    def backward(self, loss, optimizer, optimizer_idx, *args, **kwargs):
        self.last = (optimizer, optimizer_idx)
        super().backward(loss, optimizer, optimizer_idx, *args, **kwargs)
''', '''\
class M(pl.LightningModule):
    def optimizer_zero_grad(self, epoch, batch_idx, optimizer):
        optimizer.zero_grad()

    def lr_scheduler_step(self, scheduler, metric):
        if 0 == 0:
            scheduler.step()

    def configure_gradient_clipping(self, optimizer, gradient_clip_val=None, gradient_clip_algorithm=None):
        super().configure_gradient_clipping(optimizer, gradient_clip_val, gradient_clip_algorithm)

    def on_before_optimizer_step(self, optimizer):
        self.log("idx", float(self.trainer.optimizers.index(optimizer)))

    def backward(self, loss, *args, **kwargs):
        self.last = (self.trainer.optimizers[0], 0)
        super().backward(loss, *args, **kwargs)
''')


def test_backward_under_manual_optimization_is_marked_when_the_body_reads_the_optimizer():
    out, _ = run_rule(RULE, HEAD + MANUAL_INIT + '''\
    def backward(self, loss, optimizer, optimizer_idx):
        loss.backward()
        self.seen = optimizer_idx
''')
    assert "    def backward(self, loss):\n        optimizer_idx = None\n" in out
    (marker,) = markers(out)
    assert "1.9 passed None here" in marker


def test_toggle_and_untoggle():
    rw('''\
class M(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        g, d = self.optimizers()
        self.toggle_optimizer(g, 0)
        self.untoggle_optimizer(0)
        self.toggle_optimizer(d, optimizer_idx=1)
        self.untoggle_optimizer(1)

    def other(self, opt_idx):
        self.untoggle_optimizer(opt_idx)
        self.untoggle_optimizer(self.opt)
''', '''\
class M(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        g, d = self.optimizers()
        self.toggle_optimizer(g)
        self.untoggle_optimizer(g)
        self.toggle_optimizer(d)
        self.untoggle_optimizer(d)

    def other(self, opt_idx):
        self.untoggle_optimizer(self.trainer.optimizers[opt_idx])
        self.untoggle_optimizer(self.opt)
''')


def test_callback_hooks():
    check_rewrite(RULE, '''\
from pytorch_lightning.callbacks import BaseFinetuning, Callback


class Unfreeze(BaseFinetuning):
    def finetune_function(self, pl_module, epoch, optimizer, opt_idx):
        if opt_idx == 0 and epoch == 2:
            self.unfreeze_and_add_param_group(pl_module.backbone, optimizer)


class Norm(Callback):
    def on_before_optimizer_step(self, trainer, pl_module, optimizer, opt_idx):
        super().on_before_optimizer_step(trainer, pl_module, optimizer, opt_idx)
        pl_module.log(f"norm_{opt_idx}", 1.0)
''', '''\
from pytorch_lightning.callbacks import BaseFinetuning, Callback


class Unfreeze(BaseFinetuning):
    def finetune_function(self, pl_module, epoch, optimizer):
        if pl_module.trainer.optimizers.index(optimizer) == 0 and epoch == 2:
            self.unfreeze_and_add_param_group(pl_module.backbone, optimizer)


class Norm(Callback):
    def on_before_optimizer_step(self, trainer, pl_module, optimizer):
        super().on_before_optimizer_step(trainer, pl_module, optimizer)
        pl_module.log(f"norm_{trainer.optimizers.index(optimizer)}", 1.0)
''')


def test_not_lightning_backward_is_left_alone():
    check_rewrite(RULE, '''\
import torch
import pytorch_lightning as pl


class MyFn(torch.autograd.Function):
    @staticmethod
    def backward(ctx, grad, optimizer):
        return grad
''', None)


# ---------------------------------------------------------------------------------------------
# The LBFGS-safe closure


def test_manual_step_moves_into_a_closure_with_clipping_and_shared_names():
    findings = rw(MANUAL_INIT + '''\
    def training_step(self, batch, batch_idx):
        x, y = batch
        g, d = self.optimizers()
        self.toggle_optimizer(g, 0)
        g.zero_grad()
        out = self.net(x)
        loss = out.sum()
        self.manual_backward(loss)
        self.clip_gradients(g, gradient_clip_val=0.5)
        g.step()
        self.untoggle_optimizer(0)
        self.log("loss", loss)
        return out
''', MANUAL_INIT + '''\
    def training_step(self, batch, batch_idx):
        x, y = batch
        g, d = self.optimizers()
        self.toggle_optimizer(g)
        loss = None
        out = None

        def closure():
            nonlocal loss, out
            g.zero_grad()
            out = self.net(x)
            loss = out.sum()
            self.manual_backward(loss)
            self.clip_gradients(g, gradient_clip_val=0.5)
            return loss

        g.step(closure=closure)
        self.untoggle_optimizer(g)
        self.log("loss", loss)
        return out
''')
    assert all(f.kind == Kind.FIXED for f in findings)


def test_forward_before_zero_grad_and_optimizer_fetched_late():
    rw(MANUAL_INIT + '''\
    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = self(x).sum()
        opt = self.optimizers()
        opt.zero_grad()
        self.manual_backward(loss)
        opt.step()
''', MANUAL_INIT + '''\
    def training_step(self, batch, batch_idx):
        x, y = batch
        opt = self.optimizers()

        def closure():
            loss = self(x).sum()
            opt.zero_grad()
            self.manual_backward(loss)
            return loss

        opt.step(closure=closure)
''')


@pytest.mark.parametrize("body,why", [
    ('''\
        opt = self.optimizers()
        loss = self(batch)
        if batch_idx % 2 == 0:
            opt.zero_grad()
        self.manual_backward(loss)
        opt.step()
''', "zero_grad/manual_backward are inside a branch"),
    ('''\
        opt = self.optimizers()
        opt.zero_grad()
        self.manual_backward(self(batch))
        if (batch_idx + 1) % 2 == 0:
            opt.step()
''', "inside a branch, a loop or an expression"),
    ('''\
        a, b = self.optimizers()
        a.zero_grad()
        b.zero_grad()
        loss = self(batch)
        self.manual_backward(loss)
        a.step()
        b.step()
''', "several optimizer steps"),
    ('''\
        opt = self.optimizers()
        loss = self(batch)
        self.manual_backward(loss)
        opt.step()
        opt.zero_grad()
''', "zero_grad does not come before"),
])
def test_unclear_shapes_are_marked_on_the_step(body, why):
    src = HEAD + MANUAL_INIT + "    def training_step(self, batch, batch_idx):\n" + body
    out, _ = run_rule(RULE, src)
    found = markers(out)
    assert found and all(why in m and "LBFGS needs a closure" in m for m in found)
    for i, line in enumerate(out.splitlines()):
        if "TODO(lightmigrate): LM004" in line:
            assert out.splitlines()[i + 1].strip().endswith(".step()")
    assert run_rule(RULE, out)[0] == out


def test_steps_with_a_closure_and_scheduler_steps_are_left_alone():
    rw(MANUAL_INIT + '''\
    def training_step(self, batch, batch_idx):
        opt = self.optimizers()

        def closure():
            opt.zero_grad()
            loss = self(batch)
            self.manual_backward(loss)
            return loss

        opt.step(closure=closure)
        sch = self.lr_schedulers()
        sch.step()
''', None)


def test_automatic_optimization_step_is_not_touched():
    rw('''\
class M(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        opt = self.optimizers()
        opt.zero_grad()
        loss = self(batch)
        self.manual_backward(loss)
        opt.step()
''', None)


LBFGS_MANUAL = HEAD.replace("import pytorch_lightning as pl", "import torch\nimport pytorch_lightning as pl") + '''\
class LbfgsManual(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False
        self.lin = torch.nn.Linear(3, 1)
        self.forward_calls = 0

    def forward(self, x):
        self.forward_calls += 1
        return self.lin(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        opt = self.optimizers()
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(self(x), y)
        self.manual_backward(loss)
        opt.step()
        self.log("loss", loss)

    def configure_optimizers(self):
        return torch.optim.LBFGS(self.parameters(), lr=0.5, max_iter=4)
'''


def _train_on_2x(source):
    import pytorch_lightning as pl
    from torch.utils.data import DataLoader, TensorDataset
    import torch

    ns = {}
    exec(compile(source, "<lbfgs>", "exec"), ns)
    pl.seed_everything(0)
    model = ns["LbfgsManual"]()
    x = torch.randn(8, 3, generator=torch.Generator().manual_seed(1))
    loader = DataLoader(TensorDataset(x, x @ torch.tensor([1.0, -2.0, 0.5])), batch_size=4)
    trainer = pl.Trainer(max_epochs=1, accelerator="cpu", devices=1, logger=False, enable_checkpointing=False,
                         enable_progress_bar=False, enable_model_summary=False)
    trainer.fit(model, loader)
    return model, trainer


def test_rewritten_manual_lbfgs_runs_on_2x_and_evaluates_the_closure_several_times():
    out, _ = run_rule(RULE, LBFGS_MANUAL)
    assert "opt.step(closure=closure)" in out
    with pytest.raises(TypeError):  # a bare opt.step() hands LBFGS a closure returning None
        _train_on_2x(LBFGS_MANUAL)
    model, trainer = _train_on_2x(out)
    assert trainer.global_step == 2  # one optimizer step per batch
    assert model.forward_calls > 2  # LBFGS evaluated the closure several times per step
    assert float(trainer.callback_metrics["loss"]) >= 0


# ---------------------------------------------------------------------------------------------
# The whole chain


def test_chain_lm002_no_longer_marks_migrated_signatures():
    src = HEAD + '''\
class M(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        return batch.sum()

    def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_idx=0, optimizer_closure=None,
                       on_tpu=False, using_native_amp=False, using_lbfgs=False):
        optimizer.step(closure=optimizer_closure)

    def on_before_optimizer_step(self, optimizer, optimizer_idx):
        pass
'''
    result = transform_text(src, ALL_RULES, path="m.py")
    assert "TODO(lightmigrate)" not in result.text
    assert "def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_closure=None):" in result.text
    assert "def on_before_optimizer_step(self, optimizer):" in result.text
    assert transform_text(result.text, ALL_RULES, path="m.py").text == result.text


def test_chain_manual_step_with_epoch_end():
    src = HEAD + MANUAL_INIT + '''\
    def training_step(self, batch, batch_idx):
        opt = self.optimizers()
        opt.zero_grad()
        loss = self(batch).sum()
        self.manual_backward(loss)
        opt.step()
        return loss

    def training_epoch_end(self, outputs):
        self.log("n", float(len(outputs)))
'''
    result = transform_text(src, ALL_RULES, path="m.py")
    assert "opt.step(closure=closure)" in result.text
    assert "def on_train_epoch_end(self):" in result.text
    assert "TODO(lightmigrate)" not in result.text
    compile(result.text, "m.py", "exec")
    assert transform_text(result.text, ALL_RULES, path="m.py").text == result.text




@pytest.mark.parametrize("name", ['callback_before_optimizer_step_opt_idx', 'configure_gradient_clipping_optimizer_idx', 'manual_step_without_closure', 'optimizer_hooks_old_signatures', 'optimizer_step_warmup_override'])
def test_corpus_case_is_rewritten_and_a_second_run_changes_nothing(name):
    """Idempotency on realistic 1.x code: this rule alone, then again on its own output."""
    check_corpus_case_idempotent(RULE, name)


# ---------------------------------------------------------------------------------------------
# The import root of an added XLAAccelerator: the package of the class's own Lightning base


def test_xla_import_comes_from_the_package_of_the_class_base_when_the_file_imports_both():
    """A file importing both packages: ``class M(pl.LightningModule)`` with ``pl`` =
    ``pytorch_lightning`` runs under a ``pytorch_lightning`` Trainer, whose accelerator is never
    a ``lightning.pytorch`` XLAAccelerator (LM004 used to import that one)."""
    step = '''\

class M({base}):
    def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_idx, optimizer_closure, on_tpu, amp, lbfgs):
        if on_tpu:
            optimizer.step(closure=optimizer_closure)
'''
    head = "import pytorch_lightning as pl\nimport lightning.pytorch as L\n\n"
    out, _ = run_rule(RULE, head + step.format(base="pl.LightningModule"))
    assert "from pytorch_lightning.accelerators import XLAAccelerator\n" in out
    assert "lightning.pytorch.accelerators" not in out
    out, _ = run_rule(RULE, head + step.format(base="L.LightningModule"))
    assert "from lightning.pytorch.accelerators import XLAAccelerator\n" in out
    # through a base class of the same file, and a `from` import of the class itself
    head = "from pytorch_lightning import LightningModule\nimport lightning\n\n\nclass Base(LightningModule):\n    pass\n"
    out, _ = run_rule(RULE, head + step.format(base="Base"))
    assert "from pytorch_lightning.accelerators import XLAAccelerator\n" in out
    # a base from another file: what the file imports decides (here only the unified package)
    head = "from base import Base\nimport lightning\n"
    out, _ = run_rule(RULE, head + step.format(base="Base"),
                      project_files={"base.py": "import lightning as L\n\n\nclass Base(L.LightningModule):\n    pass\n"})
    assert "from lightning.pytorch.accelerators import XLAAccelerator\n" in out


# ---------------------------------------------------------------------------------------------
# find: the sites, for small projects


def sites(path, files):
    """``RULE.find`` for ``files[path]`` in a project of ``files`` (path -> text, dedented)."""
    files = {p: textwrap.dedent(t) for p, t in files.items()}
    index = ProjectIndex()
    for p, t in files.items():
        index.add_source(t, p)
    return [(s.target, s.action) for s in RULE.find(SourceFile(path, files[path]), RuleContext(path, index))]


def test_find_old_signatures_toggles_and_manual_steps():
    old_step = """\
        import lightning.pytorch as L


        class M(L.LightningModule):
            def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_idx, closure, on_tpu, amp, lbfgs):
                optimizer.step(closure=closure)


        class Fine(L.LightningModule):
            def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_closure=None):
                optimizer.step(closure=optimizer_closure)
        """
    assert sites("m.py", {"m.py": old_step}) == [("M", "module")]
    toggles = """\
        import pytorch_lightning as pl


        class M(pl.LightningModule):
            def training_step(self, batch, batch_idx):
                opt = self.optimizers()
                self.toggle_optimizer(opt, 0)
                self.untoggle_optimizer(0)
        """
    assert sites("m.py", {"m.py": toggles}) == [("M", "module")]
    manual = """\
        import pytorch_lightning as pl


        class M(pl.LightningModule):
            def __init__(self):
                super().__init__()
                self.automatic_optimization = False

            def training_step(self, batch, batch_idx):
                opt = self.optimizers()
                opt.step()
        """
    assert sites("m.py", {"m.py": manual}) == [("M", "module")]
    # with a closure already, or under automatic optimization, a step is left alone
    assert sites("m.py", {"m.py": manual.replace("opt.step()", "opt.step(closure=c)")}) == []
    assert sites("m.py", {"m.py": manual.replace(" = False", " = True")}) == []


def test_find_nothing_for_2x_signatures():
    files = {"m.py": """\
        import pytorch_lightning as pl


        class M(pl.LightningModule):
            def training_step(self, batch, batch_idx):
                return batch

            def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_closure=None):
                optimizer.step(closure=optimizer_closure)

            def lr_scheduler_step(self, scheduler, metric):
                scheduler.step()

            def backward(self, loss, *args, **kwargs):
                loss.backward(*args, **kwargs)
        """}
    assert sites("m.py", files) == []


def test_find_callback_subclass_in_another_file():
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
    # (the class is also marked as not recognisably a LightningModule: its hook has a 1.x module
    # signature, and nothing in watch.py says Lightning)
    assert sites("watch.py", files) == [("Watch", "mark"), ("Watch", "callback")]
    assert sites("new.py", files) == []
    # without a Lightning import in the file, the class is not recognisable: its hook is marked
    files["new.py"] = textwrap.dedent(files["new.py"]).replace("import pytorch_lightning as pl\n", "")
    assert sites("new.py", files) == [("Watch2", "mark")]


def test_find_nothing_for_an_autograd_function_backward():
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
    assert sites("f.py", files) == []


def test_find_marks_an_unrecognised_class_with_an_old_hook_once():
    text = """\
        from mystery import Base


        class M(Base):
            def optimizer_zero_grad(self, epoch, batch_idx, optimizer, optimizer_idx):
                optimizer.zero_grad()

            def backward(self, loss, optimizer, optimizer_idx):
                loss.backward()
        """
    assert sites("u.py", {"u.py": text}) == [("M", "mark")]
    out, _ = run_rule(RULE, textwrap.dedent(text), path="u.py")
    assert len(markers(out)) == 2
    assert sites("u.py", {"u.py": out}) == []  # marked already: nothing left to do


def test_find_nothing_for_a_class_inheriting_training_step_from_an_unrecognisable_base():
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
    assert sites("child.py", files) == []


def test_find_a_marked_manual_step_outside_training_step_once():
    text = HEAD + MANUAL_INIT + """\
    def training_step(self, batch, batch_idx):
        return self.helper()

    def helper(self):
        opt = self.optimizers()
        if self.ready: opt.step()
        opt.step()
"""
    assert sites("m.py", {"m.py": text}) == [("M", "module")]
    out, _ = run_rule(RULE, text, path="m.py")
    assert len(markers(out)) == 1  # the step after `if ...:` is on the `if` line: libcst cannot mark it
    assert sites("m.py", {"m.py": out}) == []


def test_class_lightning_root_follows_bases_and_falls_back_to_the_file_imports():
    import ast as pyast

    import libcst as cst

    from lightmigrate.cst.helpers import lightning_root
    from lightmigrate.rules.shared.import_root import class_lightning_root, file_lightning_root

    def root(text, name="M"):
        tree = pyast.parse(text)
        node = next(n for n in pyast.walk(tree) if isinstance(n, pyast.ClassDef) and n.name == name)
        return class_lightning_root(tree, node)

    # the preferred branch of a try/except ImportError binds the name first
    assert root("try:\n    import lightning.pytorch as pl\nexcept ImportError:\n    import pytorch_lightning as pl\n"
                "class M(pl.LightningModule):\n    pass\n") == "lightning.pytorch"
    assert root("import lightning as L\nimport pytorch_lightning\nclass M(L.LightningModule):\n    pass\n") \
        == "lightning.pytorch"
    assert root("import lightning.pytorch\nimport pytorch_lightning as pl\n"
                "class M(lightning.pytorch.LightningModule):\n    pass\n") == "lightning.pytorch"
    assert root("import lightning.pytorch as L\nfrom pytorch_lightning.core.module import LightningModule as LM\n"
                "class A(LM):\n    pass\nclass M(A):\n    pass\n") == "pytorch_lightning"
    # bases that lead nowhere in the file: the file's imports, as cst.helpers.lightning_root reads them
    for imports in ("", "import lightning\n", "import pytorch_lightning\n", "import lightning\nimport pytorch_lightning\n",
                    "from lightning.fabric import Fabric\n", "def f():\n    import lightning\n"):
        text = imports + "from base import Base\nclass M(Base):\n    pass\n"
        assert root(text) == file_lightning_root(pyast.parse(text)) == lightning_root(cst.parse_module(text)), imports


def test_find_reads_a_marker_as_libcst_does_after_a_nested_block():
    """A comment indented into the block above a statement belongs to that block (libcst's
    footer), not to the statement: it does not count as the statement's marker."""
    marker = "# TODO(lightmigrate): LM004 earlier"
    text = HEAD + MANUAL_INIT + f"""\
    def training_step(self, batch, batch_idx):
        return self.helper()

    def helper(self):
        opt = self.optimizers()
        if self.ready:
            pass
            {marker}
        opt.step()
"""
    assert sites("m.py", {"m.py": text}) == [("M", "module")]
    assert len(markers(run_rule(RULE, text, path="m.py")[0])) == 2
    moved = text.replace(f"            {marker}\n", f"        {marker}\n")
    assert sites("m.py", {"m.py": moved}) == []
