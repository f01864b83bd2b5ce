"""LM002: dead hooks are marked, never rewritten; valid hooks and plain methods are left alone."""

import textwrap

from lightmigrate.analysis.project import ProjectIndex
from lightmigrate.output.findings import Kind
from lightmigrate.rules.base import RuleContext, SourceFile
from lightmigrate.rules import ALL_RULES
from lightmigrate.rules.lm002_dead_hooks import DeadHooksRule

from .conftest import check_rewrite, run_rule

RULE = DeadHooksRule()
HEAD = "import pytorch_lightning as pl\n\n\n"


def markers(out):
    return [line.strip() for line in out.splitlines() if "TODO(lightmigrate): LM002" in line]


def test_removed_step_end_hook_is_marked():
    out, findings = run_rule(RULE, HEAD + '''\
class M(pl.LightningModule):
    def training_step_end(self, out):
        return out["loss"] * 2
''')
    (marker,) = markers(out)
    assert "`training_step_end` is never called by Lightning 2.x" in marker
    assert [(f.code, f.kind, f.line) for f in findings] == [("LM002", Kind.MARKER, 5)]


def test_optimizer_idx_in_hook_signatures_is_marked():
    out, _ = run_rule(RULE, HEAD + '''\
class GAN(pl.LightningModule):
    def training_step(self, batch, batch_idx, optimizer_idx):
        return batch.sum()

    def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_idx=0, optimizer_closure=None,
                       on_tpu=False, using_native_amp=False, using_lbfgs=False):
        optimizer.step(closure=optimizer_closure)

    def configure_gradient_clipping(self, optimizer, optimizer_idx, gradient_clip_val=None,
                                    gradient_clip_algorithm=None):
        pass

    def on_before_optimizer_step(self, optimizer, optimizer_idx):
        pass
''')
    assert len(markers(out)) == 4
    assert all("optimizer_idx" in m for m in markers(out))


def test_extra_required_argument_is_marked():
    out, _ = run_rule(RULE, HEAD + '''\
class M(pl.LightningModule):
    def on_train_batch_end(self, outputs, batch, batch_idx, dataloader_idx):
        pass
''')
    (marker,) = markers(out)
    assert "calls `on_train_batch_end` with 3 positional argument(s); this signature needs 4" in marker


def test_callback_signatures_count_trainer_and_module():
    check_rewrite(RULE, '''\
import pytorch_lightning as pl


class Good(pl.Callback):
    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        pass

    def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
        pass
''', None)
    out, _ = run_rule(RULE, '''\
import pytorch_lightning as pl


class Bad(pl.Callback):
    def on_test_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx):
        pass
''')
    assert "give it a default (`dataloader_idx=0`)" in markers(out)[0]


def test_tbptt_hiddens_is_marked():
    out, _ = run_rule(RULE, HEAD + '''\
class RNN(pl.LightningModule):
    def training_step(self, batch, batch_idx, hiddens):
        return {"loss": batch.sum(), "hiddens": hiddens}
''')
    assert "truncated BPTT" in markers(out)[0]


def test_not_lightning_classes_are_left_alone():
    check_rewrite(RULE, '''\
class Plain:
    def training_step_end(self, out):
        return out

    def on_training_epoch_end(self):
        pass
''', None)


def test_hook_marked_by_another_rule_is_not_marked_twice():
    src = HEAD + '''\
class GAN(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        return batch.sum()

    def training_epoch_end(self, outputs, *rest):
        pass
'''
    from lightmigrate.engine import transform_text

    result = transform_text(src, ALL_RULES, path="gan.py")
    epoch_end_def = result.text.splitlines().index("    def training_epoch_end(self, outputs, *rest):")
    above = result.text.splitlines()[epoch_end_def - 1]
    assert "LM001" in above and "LM002" not in above
    assert result.text.count("TODO(lightmigrate)") == 1  # LM001 on the epoch end
    again = transform_text(result.text, ALL_RULES, path="gan.py")
    assert again.text == result.text


def test_base_class_in_another_file_is_followed():
    base = HEAD + "class Base(pl.LightningModule):\n    def training_step(self, b, i):\n        pass\n"
    out, _ = run_rule(RULE, '''\
from base import Base


class Child(Base):
    def on_validation_epoch_ends(self):
        pass
''', path="child.py", project_files={"base.py": base})
    assert "did you mean `on_validation_epoch_end`?" in markers(out)[0]


# --- find: the sites, across files, and none where nothing changes --------------------------

def _find(files, path):
    files = {p: textwrap.dedent(t) for p, t in files.items()}
    index = ProjectIndex()
    for other, text in files.items():
        index.add_source(text, other)
    return RULE.find(SourceFile(path, files[path]), RuleContext(path, index))


def _acts(files, path):
    files = {p: textwrap.dedent(t) for p, t in files.items()}
    out, findings = run_rule(RULE, files[path], path, {p: t for p, t in files.items() if p != path})
    return out != files[path] or bool(findings)


def test_find_misspelt_and_removed_hooks():
    module = {"m.py": """\
        import pytorch_lightning as pl


        class M(pl.LightningModule):
            def on_training_epoch_end(self):
                pass
        """}
    sites = _find(module, "m.py")
    assert [(s.line, s.col, s.target, s.action) for s in sites] == [(5, 4, "M.on_training_epoch_end", "mark")]
    assert "did you mean `on_train_epoch_end`" in sites[0].data
    assert _acts(module, "m.py")
    callback = {
        "cb.py": "from lightning.pytorch.callbacks import Callback\n\n\nclass Base(Callback):\n    pass\n",
        "p.py": """\
            from cb import Base


            class Printer(Base):
                def on_epoch_end(self, trainer, pl_module):
                    print(trainer.current_epoch)
            """,
    }
    assert [s.target for s in _find(callback, "p.py")] == ["Printer.on_epoch_end"]
    assert _acts(callback, "p.py")
    # the base unknown: the hook's (trainer, pl_module) parameters show a callback (issue 21)
    assert [(s.target, s.action) for s in _find({"p.py": callback["p.py"]}, "p.py")] == [
        ("Printer.on_epoch_end", "mark_inferred")]
    renamed = callback["p.py"].replace("trainer, pl_module", "runner, state").replace("trainer.", "runner.")
    assert _find({"p.py": renamed}, "p.py") == []


def test_find_nothing_for_a_callback_signature_next_to_a_module_or_a_plain_class():
    # each class's methods are checked against its own kind's hook table
    files = {"m.py": """\
        import pytorch_lightning as pl


        class Model(pl.LightningModule):
            def on_validation_end(self):
                pass


        class Watch(pl.Callback):
            def on_validation_end(self, trainer, pl_module):
                pass

            def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
                pass
        """}
    assert _find(files, "m.py") == [] and not _acts(files, "m.py")
    plain = {"p.py": """\
        class Plain:
            def on_epoch_end(self):
                pass

            def training_step_end(self, out):
                return out
        """}
    assert _find(plain, "p.py") == [] and not _acts(plain, "p.py")


def test_find_signature_that_2x_cannot_call_and_a_removed_hook_the_class_calls():
    files = {"m.py": """\
        import pytorch_lightning as pl


        class M(pl.LightningModule):
            async def on_train_batch_start(self, batch, batch_idx, unused):
                pass

            def log_grad_norm(self, norms):
                pass

            def on_before_optimizer_step(this, optimizer):
                this.log_grad_norm({})
        """}
    assert [s.target for s in _find(files, "m.py")] == ["M.on_train_batch_start"]
    assert _acts(files, "m.py")


MARKED = """\
    import pytorch_lightning as pl


    class M(pl.LightningModule):
        def training_step(self, batch, batch_idx):
            if batch:
                pass
                # TODO(lightmigrate): LM001 deep: the if block's
            # TODO(lightmigrate): LM001 mid: training_step's body's
          # odd: on_epoch_end's own
        # TODO(lightmigrate): LM003 on_epoch_end's own

        @decorated
        def on_epoch_end(self):
            pass
    """


def _marked_by_fix(text):
    out, _ = run_rule(RULE, textwrap.dedent(text))
    return out.count("TODO(lightmigrate): LM002")


def test_find_skips_methods_with_a_marker_of_their_own_as_libcst_reads_them():
    # the LM003 marker is on_epoch_end's own (libcst's leading_lines): nothing to do
    assert _find({"m.py": MARKED}, "m.py") == [] and _marked_by_fix(MARKED) == 0
    # a marker indented as the body above belongs to that body's end (its block's footer)
    for text in (MARKED.replace("# TODO(lightmigrate): LM003", "# plain"),
                 MARKED.replace("# TODO(lightmigrate): LM003", "# plain").replace(
                     "  # odd", "          # TODO(lightmigrate): LM001 odd")):
        assert [s.target for s in _find({"m.py": text}, "m.py")] == ["M.on_epoch_end"]
        assert _marked_by_fix(text) == 1
    # ... while one at an indentation that is not the body's goes with the method below
    odd = MARKED.replace("# TODO(lightmigrate): LM003", "# plain").replace("  # odd", "  # TODO(lightmigrate): LM001 odd")
    assert _find({"m.py": odd}, "m.py") == [] and _marked_by_fix(odd) == 0
    # elif and else blocks end the method above as well
    chain = MARKED.replace("            if batch:\n                pass\n",
                           "            if batch:\n                pass\n            elif x:\n                pass\n"
                           "            else:\n                pass\n")
    assert _find({"m.py": chain}, "m.py") == [] and _marked_by_fix(chain) == 0
    plain_chain = chain.replace("# TODO(lightmigrate): LM003", "# plain")
    assert [s.target for s in _find({"m.py": plain_chain}, "m.py")] == ["M.on_epoch_end"]
    assert _marked_by_fix(plain_chain) == 1


# --- issue 21, kind 5: removed hooks that were left silent ------------------------------------


def _site_acts(files, path):
    return [(s.target, s.action) for s in _find(files, path)]


def test_module_on_batch_start_and_end_are_marked_as_hooks_1_9_already_ignored():
    # 1.5 called a LightningModule's on_batch_start()/on_batch_end(); 1.6-1.9 silently never did
    # (checked on 1.9.5), nor does 2.x: renaming would run code 1.9 did not, so it is marked
    src = HEAD + '''\
class M(pl.LightningModule):
    def on_batch_start(self):
        self.n = 0

    def on_batch_end(self):
        self.n += 1
'''
    out, findings = run_rule(RULE, src)
    assert markers(out) == [
        "# TODO(lightmigrate): LM002 `on_batch_start` is not a LightningModule hook since 1.6: neither 1.9 nor 2.x "
        "calls it, so this code never runs; delete it, or, to run it again as 1.5 did, rename it to "
        "on_train_batch_start(self, batch, batch_idx)",
        "# TODO(lightmigrate): LM002 `on_batch_end` is not a LightningModule hook since 1.6: neither 1.9 nor 2.x "
        "calls it, so this code never runs; delete it, or, to run it again as 1.5 did, rename it to "
        "on_train_batch_end(self, outputs, batch, batch_idx)",
    ]
    assert _site_acts({"m.py": src}, "m.py") == [("M.on_batch_start", "mark"), ("M.on_batch_end", "mark")]
    check_rewrite(RULE, src, out)  # a second run changes nothing


def test_removed_hooks_of_a_class_whose_lightning_base_is_outside_the_run():
    # ``from mylib import BaseModel``: a hook calling super() with its own name shows the kind;
    # only removed hooks are marked there (no guesses about misspellings or signatures)
    src = '''\
import pytorch_lightning as pl
from mylib import BaseModel, BaseCallback


class Model(BaseModel):
    def on_epoch_start(self):
        super().on_epoch_start()
        self.y = 2

    def on_training_epoch_end(self):
        pass


class Watch(BaseCallback):
    def on_epoch_end(self, trainer, pl_module):
        super().on_epoch_end(trainer, pl_module)


class Other(BaseModel):
    def on_epoch_end(self, runner):
        super().on_epoch_end(runner)
'''
    out, _ = run_rule(RULE, src)
    assert [m.split(" is ")[0] for m in markers(out)] == [
        "# TODO(lightmigrate): LM002 `on_epoch_start`", "# TODO(lightmigrate): LM002 `on_epoch_end`"]
    assert _site_acts({"m.py": src}, "m.py") == [("Model.on_epoch_start", "mark_inferred"),
                                             ("Watch.on_epoch_end", "mark_inferred")]
    check_rewrite(RULE, src, out)
    # a generic hook name in a file that does not import Lightning is not a sign, unless the
    # callback hook takes ``pl_module``
    plain = src.replace("import pytorch_lightning as pl\n", "")
    assert _site_acts({"m.py": plain}, "m.py") == [("Watch.on_epoch_end", "mark_inferred")]
    # a class deriving only from torch's nn.Module is not taken for a LightningModule
    torch_only = src.replace("class Model(BaseModel):", "class Model(nn.Module):")
    assert _site_acts({"m.py": torch_only}, "m.py") == [("Watch.on_epoch_end", "mark_inferred")]
    # a Lightning-only name is a sign on its own
    legacy = plain.replace("on_epoch_start", "on_pretrain_routine_start")
    assert ("Model.on_pretrain_routine_start", "mark_inferred") in _site_acts({"m.py": legacy}, "m.py")


def test_removed_hooks_of_an_outside_class_shown_by_its_own_methods():
    # no super() call needed: a LightningModule's own methods, or a callback hook taking
    # (trainer, pl_module), show the kind of a class whose base lies outside the run
    src = '''\
from mylib import BaseModel, BaseCallback


class Model(BaseModel):
    def training_step(self, batch, batch_idx):
        return batch.sum()

    def on_epoch_end(self):
        self.y = 2


class Watch(BaseCallback):
    def on_init_end(self, trainer):
        pass

    def on_train_start(self, trainer, pl_module):
        pass


class Runner(BaseCallback):
    def on_epoch_end(self, runner):
        pass
'''
    assert _site_acts({"m.py": src}, "m.py") == [("Model.on_epoch_end", "mark_inferred"),
                                                 ("Watch.on_init_end", "mark_inferred")]

    # an adapter deriving from a torch module of the run (and from a package outside it) that
    # forwards a training_step is not taken for a LightningModule
    adapter = {
        "adapter.py": "from torch import nn\n\n\nclass Adapter(nn.Module):\n    \"\"\"Wrapped by a Lightning task.\"\"\"\n",
        "m.py": "from adapter import Adapter\nfrom vissl import Hooks\n\n\nclass VISSLAdapter(Adapter, Hooks):\n"
                "    def training_step(self, batch, batch_idx):\n        return batch\n\n"
                "    def on_epoch_start(self):\n        pass\n",
    }
    assert _site_acts(adapter, "m.py") == []


def test_the_text_gate_of_the_outside_base_inference_lets_every_sign_through():
    from lightmigrate.catalog.hooks import hook_table
    from lightmigrate.rules.shared.legacy_super import _GENERIC_NAMES, LEGACY_NOOP_HOOKS, may_show_kind

    for kind in ("module", "callback"):
        for name in sorted(set(hook_table(kind)) | LEGACY_NOOP_HOOKS[kind]):
            if name not in _GENERIC_NAMES:
                assert may_show_kind(f"class A(B):\n    def {name}(self):\n        super().{name}()\n"), name
    assert not may_show_kind("class A(keras.callbacks.Callback):\n    def on_epoch_end(self, epoch, logs):\n"
                             "        super().on_epoch_end(epoch, logs)\n")


# --- a base named like a Lightning callback that is another class ---------------------------

_OWN_CALLBACK = """\
    import mxnet as mx


    class Callback:
        def on_epoch_end(self, epoch_no, epoch_loss, net, trainer, best_epoch_info, ctx):
            return True

        def on_train_epoch_end(self, epoch_no, epoch_loss, net, trainer):
            return True


    class History(Callback):
        def on_train_epoch_end(self, epoch_no, epoch_loss, net, trainer):
            return True
    """


def test_find_nothing_in_classes_whose_callback_base_is_the_projects_own_class():
    # a training framework of its own (an MXNet trainer) with a base class called Callback,
    # subclassed in the same file and, through a relative or an absolute import, in others
    files = {
        "pkg/callback.py": _OWN_CALLBACK,
        "pkg/schedule.py": """\
            from .callback import Callback


            class Reduce(Callback):
                def on_epoch_end(self, epoch_no, epoch_loss, net, trainer, best_epoch_info, ctx):
                    return True
            """,
        "pkg/averaging.py": """\
            from pkg.callback import Callback


            class Averaging(Callback):
                def on_validation_epoch_end(self, epoch_no, epoch_loss, net, trainer):
                    return True
            """,
    }
    for path in files:
        assert _find(files, path) == [], path
        assert not _acts(files, path), path


def test_find_nothing_in_another_librarys_callback_subclass():
    keras = {"k.py": """\
        from keras.callbacks import Callback


        class Printer(Callback):
            def on_epoch_end(self, epoch, logs=None):
                print(epoch)
        """}
    assert _find(keras, "k.py") == [] and not _acts(keras, "k.py")


def test_a_callback_base_reexported_by_the_project_or_wrapping_lightnings_is_still_lightnings():
    hook = """\
        class Printer(Callback):
            def on_epoch_end(self, trainer, pl_module):
                print(trainer.current_epoch)
        """
    # the project's own module re-exports Lightning's class: the index cannot see through it
    reexport = {"pkg/compat.py": "from pytorch_lightning import Callback\n",
                "pkg/p.py": "from pkg.compat import Callback\n\n\n" + textwrap.dedent(hook)}
    assert [s.target for s in _find(reexport, "pkg/p.py")] == ["Printer.on_epoch_end"]
    # the project's class called Callback derives from Lightning's
    wrapped = {"pkg/callback.py": "import pytorch_lightning as pl\n\n\nclass Callback(pl.Callback):\n    pass\n",
               "pkg/p.py": "from .callback import Callback\n\n\n" + textwrap.dedent(hook)}
    assert [s.target for s in _find(wrapped, "pkg/p.py")] == ["Printer.on_epoch_end"]
    # imported from Lightning, or bound by no import seen (a star import): Lightning's by its name
    for head in ("from lightning.pytorch.callbacks import Callback\n", "from pytorch_lightning import *\n"):
        files = {"p.py": head + "\n\n" + textwrap.dedent(hook)}
        assert [s.target for s in _find(files, "p.py")] == ["Printer.on_epoch_end"], head
        out, _ = run_rule(RULE, files["p.py"], "p.py")
        assert len(markers(out)) == 1 and run_rule(RULE, out, "p.py")[0] == out
