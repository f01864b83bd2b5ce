"""LM101 over the project (issue 25): the project's own Trainer subclasses and the Trainer
arguments other modules build."""

import textwrap

from lightmigrate.analysis.project import ProjectIndex
from lightmigrate.engine import transform_text
from lightmigrate.rules.base import RuleContext, Site, SourceFile
from lightmigrate.rules.lm101_trainer_constructor import TrainerConstructorRule

RULE = TrainerConstructorRule()

SUBCLASS = textwrap.dedent('''\
    import pytorch_lightning as pl


    class Trainer(pl.Trainer):
        def __init__(self, gpus=None, replace_sampler_ddp=True, log_every=1, **kwargs):
            self.log_every = log_every
            super().__init__(gpus=gpus, replace_sampler_ddp=replace_sampler_ddp, log_every_n_steps=log_every, **kwargs)


    class FastTrainer(Trainer):
        pass
''')
SUBCLASS_AFTER = SUBCLASS.replace(
    "super().__init__(gpus=gpus, replace_sampler_ddp=replace_sampler_ddp, log_every_n_steps=log_every, **kwargs)",
    'super().__init__(use_distributed_sampler=replace_sampler_ddp, log_every_n_steps=log_every, **{"accelerator": '
    '"gpu" if gpus not in (None, 0, "0", []) else "cpu", "devices": gpus if gpus not in (None, 0, "0", []) else '
    '"auto", **kwargs})')


def project(files):
    index = ProjectIndex()
    for path, text in files.items():
        index.add_source(text, path)
    return index


def sites(files, path):
    return RULE.find(SourceFile(path, files[path]), RuleContext(path, project(files)))


def migrate(files):
    """Every file migrated with one index over the originals, then a second run over the result
    (which must change nothing)."""
    index = project(files)
    out = {p: transform_text(t, [RULE], path=p, project=index).text for p, t in files.items()}
    again_index = project(out)
    again = {p: transform_text(t, [RULE], path=p, project=again_index).text for p, t in out.items()}
    assert again == out, "a second run changed the code"
    for p, t in out.items():
        compile(t, p, "exec")
    return out


# --- kind 1: the project's Trainer subclass ------------------------------------------------------

def test_subclass_forwarding_is_migrated_and_its_own_parameters_keep_their_names():
    out = migrate({"pkg/trainer.py": SUBCLASS})
    assert out["pkg/trainer.py"] == SUBCLASS_AFTER


def test_calls_of_the_subclass_in_other_files_migrate_what_reaches_lightning():
    main = textwrap.dedent('''\
        from pkg.trainer import Trainer
        from pkg import trainer as tr
        from .trainer import FastTrainer as Fast


        def run(use_gpu):
            a = Trainer(gpus=use_gpu, max_epochs=2, auto_lr_find=True, precision=16)
            b = tr.FastTrainer(use_gpu, amp_backend="native", replace_sampler_ddp=False, num_processes=1)
            c = Fast(tpu_cores=None, track_grad_norm=-1)
            return a, b, c
    ''')
    files = {"pkg/trainer.py": SUBCLASS, "pkg/main.py": main}
    found = sites(files, "pkg/main.py")
    own = ("gpus", "log_every", "replace_sampler_ddp")
    assert found == [Site(7, 8, "Trainer", "call", (False, False, (), own, True)),
                     Site(8, 8, "FastTrainer", "call", (False, False, (), own, True)),
                     Site(9, 8, "Fast", "call", (False, False, (), own, True))]
    out = migrate(files)
    assert out["pkg/trainer.py"] == SUBCLASS_AFTER
    assert out["pkg/main.py"] == main.replace(
        "Trainer(gpus=use_gpu, max_epochs=2, auto_lr_find=True, precision=16)",
        'Trainer(gpus=use_gpu, max_epochs=2, precision="16-mixed")').replace(
        'tr.FastTrainer(use_gpu, amp_backend="native", replace_sampler_ddp=False, num_processes=1)',
        'tr.FastTrainer(use_gpu, replace_sampler_ddp=False, accelerator="cpu", devices=1)').replace(
        "Fast(tpu_cores=None, track_grad_norm=-1)", "Fast(track_grad_norm=-1)")


def test_a_subclass_without_init_is_called_as_lightnings_trainer():
    files = {"a/trainers.py": "import pytorch_lightning as pl\n\n\nclass Runner(pl.Trainer):\n    pass\n",
             "a/run.py": "import a.trainers\n\nt = a.trainers.Runner(gpus=2, replace_sampler_ddp=False)\n"}
    # no Lightning import in run.py: the prefilter lets it through for `gpus`, find for the index
    assert RULE.may_apply(files["a/run.py"])
    assert [(s.line, s.target, s.data) for s in sites(files, "a/run.py")] == [(3, "Runner", (False, False, ()))]
    assert migrate(files)["a/run.py"].endswith(
        't = a.trainers.Runner(accelerator="gpu", devices=2, use_distributed_sampler=False)\n')


def test_a_subclass_that_keeps_its_kwargs_hands_lightning_nothing_of_the_call():
    sub = ("import pytorch_lightning as pl\n\n\nclass MyTrainer(pl.Trainer):\n"
           "    def __init__(self, gpus=0, **options):\n        self.options = options\n"
           "        super().__init__(max_epochs=1, accelerator=\"cpu\")\n")
    files = {"t.py": sub, "main.py": "from t import MyTrainer\n\nt = MyTrainer(gpus=1, auto_lr_find=True)\n"}
    assert sites(files, "main.py") == []
    assert migrate(files) == files


def test_another_frameworks_trainer_subclass_is_left_alone():
    files = {"t.py": "from transformers import Trainer\n\n\nclass MyTrainer(Trainer):\n    pass\n",
             "main.py": "from t import MyTrainer\n\nt = MyTrainer(gpus=1)\n"}
    assert sites(files, "main.py") == []


def test_subclass_of_the_subclass_forwards_through_both_inits():
    sub2 = textwrap.dedent('''\
        from pkg.trainer import Trainer


        class Quiet(Trainer):
            def __init__(self, quiet=True, **kw):
                super().__init__(enable_progress_bar=not quiet, **kw)
    ''')
    main = "from pkg.quiet import Quiet\n\nt = Quiet(gpus=0, quiet=False, amp_level=None, precision=16)\n"
    files = {"pkg/trainer.py": SUBCLASS, "pkg/quiet.py": sub2, "pkg/main.py": main}
    out = migrate(files)
    assert out["pkg/quiet.py"] == sub2  # enable_progress_bar reaches the project Trainer's **kwargs: 2.x accepts it
    assert out["pkg/main.py"] == main.replace("amp_level=None, precision=16", 'precision="16-mixed"')
