"""LM305: legacy hooks are renamed where 2.x has the same hook; otherwise LM002 marks them."""

import textwrap

from lightmigrate.analysis.project import ProjectIndex
from lightmigrate.engine import transform_text
from lightmigrate.output.findings import Kind
from lightmigrate.rules import ALL_RULES
from lightmigrate.rules.base import RuleContext, SourceFile
from lightmigrate.rules.lm305_legacy_hooks import LegacyHooksRule

from .conftest import check_rewrite

RULE = LegacyHooksRule()


def sites(path, files):
    """``RULE.find`` for ``files[path]`` in a project of ``files`` (path -> text), as (target,
    action, old name, new name)."""
    files = {p: textwrap.dedent(t) for p, t in files.items()}
    index = ProjectIndex()
    for other, text in files.items():
        index.add_source(text, other)
    found = RULE.find(SourceFile(path, files[path]), RuleContext(path, index))
    return [(s.target, s.action, s.data[0], s.data[1]) for s in found]


def test_batch_hooks_gain_parameters_with_fresh_names():
    findings = check_rewrite(RULE, '''\
import pytorch_lightning as pl


class C(pl.Callback):
    def on_batch_start(self, trainer, pl_module):
        batch = 3
        print(batch)
''', '''\
import pytorch_lightning as pl


class C(pl.Callback):
    def on_train_batch_start(self, trainer, pl_module, batch_1, batch_idx):
        batch = 3
        print(batch)
''')
    assert [(f.code, f.kind) for f in findings] == [("LM305", Kind.FIXED)]


def test_setup_hooks_and_pretrain_routine_in_callback():
    check_rewrite(RULE, '''\
from pytorch_lightning.callbacks import Callback


class C(Callback):
    def on_before_accelerator_backend_setup(self, trainer, pl_module):
        self.ready = True

    def on_pretrain_routine_end(self, trainer, pl_module):
        self.started = True
''', '''\
from pytorch_lightning.callbacks import Callback


class C(Callback):
    def setup(self, trainer, pl_module, stage):
        self.ready = True

    def on_fit_start(self, trainer, pl_module):
        self.started = True
''')


def test_keyboard_interrupt_keeps_docstring_outside_guard():
    check_rewrite(RULE, '''\
import pytorch_lightning as pl


class C(pl.Callback):
    def on_keyboard_interrupt(self, trainer, pl_module):
        """Save on Ctrl-C."""
        trainer.save_checkpoint("x.ckpt")
''', '''\
import pytorch_lightning as pl


class C(pl.Callback):
    def on_exception(self, trainer, pl_module, exception):
        """Save on Ctrl-C."""
        if isinstance(exception, KeyboardInterrupt):
            trainer.save_checkpoint("x.ckpt")
''')


def test_calls_to_renamed_module_hook_follow():
    check_rewrite(RULE, '''\
import pytorch_lightning as pl


class M(pl.LightningModule):
    def configure_sharded_model(self):
        self.block = 1

    def rebuild(self):
        self.configure_sharded_model()
''', '''\
import pytorch_lightning as pl


class M(pl.LightningModule):
    def configure_model(self):
        self.block = 1

    def rebuild(self):
        self.configure_model()
''')


def test_two_hooks_for_one_target_are_left_to_lm002():
    src = '''\
import pytorch_lightning as pl


class M(pl.LightningModule):
    def on_pretrain_routine_start(self):
        self.a = 1

    def on_pretrain_routine_end(self):
        self.b = 1
'''
    check_rewrite(RULE, src, None)
    out = transform_text(src, ALL_RULES, path="model.py").text
    assert out.count("TODO(lightmigrate): LM002") == 2


def test_choice_hooks_are_not_renamed_and_non_lightning_classes_untouched():
    check_rewrite(RULE, '''\
import pytorch_lightning as pl


class M(pl.LightningModule):
    def on_epoch_end(self):
        pass


class NotLightning:
    def on_batch_end(self, trainer, pl_module):
        pass
''', None)


# ---------------------------------------------------------------------------------------------
# find: the sites, one per renamed method


def test_find_renames_by_kind():
    module = {"m.py": """\
        import pytorch_lightning as pl


        class M(pl.LightningModule):
            def on_pretrain_routine_start(self):
                self.started = True

            def on_batch_end(self):
                pass
        """}
    # on_batch_end is a callback hook only: a LightningModule's is left to LM002
    assert sites("m.py", module) == [("M", "rename", "on_pretrain_routine_start", "on_fit_start")]
    only_batch_end = {"m.py": module["m.py"].replace("on_pretrain_routine_start", "on_fit_start")}
    assert sites("m.py", only_batch_end) == []


def test_find_callback_subclass_of_a_class_in_another_file():
    files = {
        "cb.py": "import pytorch_lightning as pl\n\n\nclass Base(pl.Callback):\n    pass\n",
        "w.py": "from cb import Base\n\n\nclass W(Base):\n    def on_batch_end(self, trainer, pl_module):\n        pass\n",
    }
    assert sites("w.py", files) == [("W", "rename", "on_batch_end", "on_train_batch_end")]
    # without the base class the kind is unknown, but a hook taking (trainer, pl_module) shows it
    assert sites("w.py", {"w.py": files["w.py"]}) == [("W", "rename", "on_batch_end", "on_train_batch_end")]
    # a method of that name with other parameters does not
    other = files["w.py"].replace("self, trainer, pl_module", "self, runner, state")
    assert sites("w.py", {"w.py": other}) == []


def test_find_leaves_what_lm002_marks():
    src = """\
        from pytorch_lightning import Callback


        class C(Callback):
            def on_batch_start(self, trainer, pl_module, extra):
                pass

            @staticmethod
            def on_batch_end(trainer, pl_module):
                pass

            def on_configure_sharded_model(self, trainer, pl_module):
                pass

            def on_before_accelerator_backend_setup(self, trainer, pl_module):
                pass

            def on_pretrain_routine_end(self, *args):
                pass
        """
    # wrong arity, a decorator, two hooks for setup, star parameters
    assert sites("c.py", {"c.py": src}) == []
    # super() with the old name reaching a base of the run that keeps the old hook
    files = {
        "base.py": "import pytorch_lightning as pl\n\n\nclass Base(pl.Callback):\n"
                   "    def on_keyboard_interrupt(self, trainer, pl_module, *args):\n        pass\n",
        "c.py": "from base import Base\n\n\nclass C(Base):\n    def on_keyboard_interrupt(self, trainer, pl_module):\n"
                "        super().on_keyboard_interrupt(trainer, pl_module)\n",
    }
    assert sites("c.py", files) == []


def test_find_in_a_file_the_index_has_not_seen():
    src = textwrap.dedent("""\
        import pytorch_lightning as pl


        class M(pl.LightningModule):
            async def configure_sharded_model(self):
                pass
        """)
    found = RULE.find(SourceFile("m.py", src), RuleContext("m.py", ProjectIndex()))
    assert [(s.line, s.target, s.data[:3]) for s in found] == [(5, "M", ("configure_sharded_model", "configure_model", 4))]



def test_class_body_aliases_follow_a_renamed_hook():
    # (issue 21 kind 3: the alias named a method that no longer exists, NameError at class creation)
    check_rewrite(RULE, '''\
import pytorch_lightning as pl
from pytorch_lightning import Callback


class M(pl.LightningModule):
    def configure_sharded_model(self):
        self.layer = 1

    build = configure_sharded_model


class Watch(Callback):
    def on_batch_end(self, trainer, pl_module):
        self.count += 1

    count_batch = on_batch_end
''', '''\
import pytorch_lightning as pl
from pytorch_lightning import Callback


class M(pl.LightningModule):
    def configure_model(self):
        self.layer = 1

    build = configure_model


class Watch(Callback):
    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        self.count += 1

    # TODO(lightmigrate): LM305 `count_batch = on_train_batch_end`: on_batch_end became on_train_batch_end, which takes other parameters; check the callers of the alias
    count_batch = on_train_batch_end
''')
# --- super() calls to legacy hooks (issue 21, kind 5) -----------------------------------------


def test_super_call_with_the_old_name_follows_the_rename():
    # 1.x: Callback.on_keyboard_interrupt / LightningModule.on_pretrain_routine_start did nothing;
    # on 2.x the attribute is gone (AttributeError): the call follows the method to its new name
    check_rewrite(RULE, '''\
import pytorch_lightning as pl


class C(pl.Callback):
    def on_keyboard_interrupt(self, trainer, pl_module):
        super().on_keyboard_interrupt(trainer, pl_module)
        self.stopped = True


class M(pl.LightningModule):
    def on_pretrain_routine_start(self):
        super().on_pretrain_routine_start()
        self.started = True


class B(pl.Callback):
    def on_batch_end(self, trainer, pl_module):
        super().on_batch_end(trainer, pl_module)
''', '''\
import pytorch_lightning as pl


class C(pl.Callback):
    def on_exception(self, trainer, pl_module, exception):
        if isinstance(exception, KeyboardInterrupt):
            super().on_exception(trainer, pl_module, exception)
            self.stopped = True


class M(pl.LightningModule):
    def on_fit_start(self):
        super().on_fit_start()
        self.started = True


class B(pl.Callback):
    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        super().on_train_batch_end(trainer, pl_module, outputs, batch, batch_idx)
''')


def test_super_call_to_a_removed_callback_hook_in_a_live_hook_is_dropped():
    findings = check_rewrite(RULE, '''\
from pytorch_lightning import Callback


class Timer(Callback):
    def on_train_epoch_start(self, trainer, pl_module):
        # let the base class run first
        super().on_epoch_start(trainer, pl_module)
        self.t = 1

    def on_train_epoch_end(self, trainer, pl_module):
        super().on_epoch_end(trainer, pl_module)

    def on_validation_epoch_end(self, trainer, pl_module):
        """Docstring."""
        if trainer.sanity_checking:
            super().on_epoch_end(trainer, pl_module)
        done = super().on_epoch_end(trainer, pl_module)
''', '''\
from pytorch_lightning import Callback


class Timer(Callback):
    def on_train_epoch_start(self, trainer, pl_module):
        # let the base class run first
        self.t = 1

    def on_train_epoch_end(self, trainer, pl_module):
        pass

    # TODO(lightmigrate): LM305 `super().on_epoch_end(...)`: Lightning 2.x's Callback no longer has `on_epoch_end` (removed in 1.8), so this call raises AttributeError; in 1.x it did nothing; remove it
    def on_validation_epoch_end(self, trainer, pl_module):
        """Docstring."""
        if trainer.sanity_checking:
            pass
        done = super().on_epoch_end(trainer, pl_module)
''')
    assert [(f.code, f.kind, f.line) for f in findings] == [
        ("LM305", Kind.FIXED, 7), ("LM305", Kind.FIXED, 11), ("LM305", Kind.FIXED, 16), ("LM305", Kind.MARKER, 12)]


def test_super_call_reaching_a_user_hook_stays_or_follows_its_rename():
    files = {
        "base.py": '''\
import pytorch_lightning as pl


class Base(pl.Callback):
    def on_epoch_start(self, trainer, pl_module):
        print("kept: the user's own method")

    def on_pretrain_routine_end(self, trainer, pl_module):
        print("renamed by LM305")
''',
    }
    check_rewrite(RULE, '''\
from base import Base


class Timer(Base):
    def on_train_epoch_start(self, trainer, pl_module):
        super().on_epoch_start(trainer, pl_module)

    def on_train_start(self, trainer, pl_module):
        super().on_pretrain_routine_end(trainer, pl_module)
''', '''\
from base import Base


class Timer(Base):
    def on_train_epoch_start(self, trainer, pl_module):
        super().on_epoch_start(trainer, pl_module)

    def on_train_start(self, trainer, pl_module):
        super().on_fit_start(trainer, pl_module)
''', path="timer.py", project_files=files)


def test_super_call_in_a_class_with_a_base_outside_the_run_is_marked():
    # Lightning's Callback no longer has it, but the unknown base class may define it
    check_rewrite(RULE, '''\
from pytorch_lightning.callbacks import ModelCheckpoint
from mylib import Base


class A(Base, ModelCheckpoint):
    def on_train_epoch_start(self, trainer, pl_module):
        super().on_epoch_start(trainer, pl_module)
''', '''\
from pytorch_lightning.callbacks import ModelCheckpoint
from mylib import Base


class A(Base, ModelCheckpoint):
    # TODO(lightmigrate): LM305 `super().on_epoch_start(...)`: Lightning 2.x's Callback no longer has `on_epoch_start` (removed in 1.8), so this call raises AttributeError; in 1.x it did nothing unless a base class outside this run defines it; remove it otherwise
    def on_train_epoch_start(self, trainer, pl_module):
        super().on_epoch_start(trainer, pl_module)
''')


def test_class_whose_lightning_base_is_outside_the_run():
    # ``BaseModel`` comes from a package that is not migrated in this run: the hook calling
    # super() with its own name shows that the class is a LightningModule
    src = '''\
from mylib import BaseModel, BaseCallback


class Model(BaseModel):
    def on_pretrain_routine_start(self):
        super().on_pretrain_routine_start()
        self.x = 1


class Watch(BaseCallback):
    def on_pretrain_routine_end(self, trainer, pl_module):
        super().on_pretrain_routine_end(trainer, pl_module)


class Plain(BaseModel):
    def on_epoch_start(self):
        super().on_epoch_start()
'''
    check_rewrite(RULE, src, '''\
from mylib import BaseModel, BaseCallback


class Model(BaseModel):
    def on_fit_start(self):
        super().on_fit_start()
        self.x = 1


class Watch(BaseCallback):
    def on_fit_start(self, trainer, pl_module):
        super().on_fit_start(trainer, pl_module)


class Plain(BaseModel):
    def on_epoch_start(self):
        super().on_epoch_start()
''')
    assert sites("m.py", {"m.py": src}) == [("Model", "rename", "on_pretrain_routine_start", "on_fit_start"),
                                            ("Watch", "rename", "on_pretrain_routine_end", "on_fit_start")]


def test_super_call_to_a_removed_module_hook_in_a_live_hook_is_dropped():
    check_rewrite(RULE, '''\
import pytorch_lightning as pl


class M(pl.LightningModule):
    def on_train_epoch_start(self):
        super().on_epoch_start()
        self.x = 1

    def on_train_epoch_end(self):
        super(M, self).on_epoch_end()
''', '''\
import pytorch_lightning as pl


class M(pl.LightningModule):
    def on_train_epoch_start(self):
        self.x = 1

    def on_train_epoch_end(self):
        pass
''')


def test_whole_rule_set_on_legacy_hooks_and_super_calls_is_idempotent_and_never_silent():
    src = textwrap.dedent('''\
        import pytorch_lightning as pl
        from mylib import BaseModel


        class Timer(pl.Callback):
            def on_train_epoch_start(self, trainer, pl_module):
                super().on_epoch_start(trainer, pl_module)
                self.t = 0

            def on_epoch_end(self, trainer, pl_module):
                super().on_epoch_end(trainer, pl_module)


        class Model(BaseModel):
            def on_pretrain_routine_start(self):
                super().on_pretrain_routine_start()

            def on_epoch_start(self):
                super().on_epoch_start()

            def on_batch_start(self):
                self.n = 0
        ''')
    index = ProjectIndex()
    index.add_source(src, "m.py")
    out = transform_text(src, ALL_RULES, path="m.py", project=index)
    assert "super().on_epoch_start(trainer, pl_module)" not in out.text
    assert "def on_fit_start(self):\n        super().on_fit_start()" in out.text
    marked = [line.split("LM002 `")[1].split("`")[0] for line in out.text.splitlines() if "TODO(lightmigrate): LM002" in line]
    assert marked == ["on_epoch_end", "on_epoch_start", "on_batch_start"]
    compile(out.text, "m.py", "exec")
    index = ProjectIndex()
    index.add_source(out.text, "m.py")
    assert transform_text(out.text, ALL_RULES, path="m.py", project=index).text == out.text
