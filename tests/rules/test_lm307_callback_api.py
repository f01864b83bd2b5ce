"""LM307: callback/datamodule API changes of 1.9 -> 2.x."""

import pytest

from lightmigrate.analysis.project import ProjectIndex
from lightmigrate.rules.base import RuleContext, SourceFile
from lightmigrate.rules.lm307_callback_api import CallbackApiRule

from .conftest import check_corpus_case_idempotent, check_rewrite, run_rule

RULE = CallbackApiRule()


def sites(source, files=None, indexed=True, path="model.py"):
    """``RULE.find`` for ``source`` at ``path`` in a project of ``files`` (and ``source``
    itself, when ``indexed``), as (action, line)."""
    index = ProjectIndex()
    for other, text in (files or {}).items():
        index.add_source(text, other)
    if indexed:
        index.add_source(source, path)
    return [(s.action, s.line) for s in RULE.find(SourceFile(path, source), RuleContext(path, index))]


def test_predict_epoch_end_unused_outputs_just_dropped():
    check_rewrite(RULE, '''\
import pytorch_lightning as pl


class Writer(pl.callbacks.BasePredictionWriter):
    def on_predict_epoch_end(self, trainer, pl_module, outputs):
        print("done")
''', '''\
import pytorch_lightning as pl


class Writer(pl.callbacks.BasePredictionWriter):
    def on_predict_epoch_end(self, trainer, pl_module):
        print("done")
''')


def test_val_and_test_batch_idx_in_progress_bar():
    check_rewrite(RULE, '''\
from pytorch_lightning.callbacks.progress import ProgressBarBase


class Bar(ProgressBarBase):
    def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
        print(self.val_batch_idx, self.test_batch_idx)
''', '''\
from pytorch_lightning.callbacks.progress import ProgressBar


class Bar(ProgressBar):
    def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
        print((self.trainer.fit_loop.epoch_loop.val_loop if self.trainer.state.fn == "fit" else self.trainer.validate_loop).batch_progress.current.processed, self.trainer.test_loop.batch_progress.current.processed)
''')


def test_get_standard_metrics_signature_import_and_loss_marker():
    out, _ = run_rule(RULE, '''\
from pytorch_lightning.callbacks.progress.base import get_standard_metrics


def metrics(trainer, pl_module):
    return get_standard_metrics(trainer, pl_module)["loss"]
''')
    assert "from pytorch_lightning.callbacks.progress.progress_bar import get_standard_metrics" in out
    assert 'get_standard_metrics(trainer)["loss"]' in out
    assert "# TODO(lightmigrate): LM307 `get_standard_metrics` no longer returns \"loss\"" in out


def test_markers_for_qat_argparse_and_batch_size_finder():
    out, _ = run_rule(RULE, '''\
import pytorch_lightning as pl
from pytorch_lightning.callbacks import BatchSizeFinder, QuantizationAwareTraining


class DM(pl.LightningDataModule):
    def __init__(self, size=SIZE):  # a default lightmigrate cannot copy: the argparse calls stay marked
        super().__init__()


dm = DM.from_argparse_args(args)
qat = QuantizationAwareTraining()
finder = BatchSizeFinder(mode="binsearch")
other = BatchSizeFinder(margin=0.0)
''')
    lines = out.splitlines()
    assert "LM307 `QuantizationAwareTraining` was removed" in lines[lines.index("qat = QuantizationAwareTraining()") - 1]
    assert "LM307 LightningDataModule `from_argparse_args`" in lines[lines.index("dm = DM.from_argparse_args(args)") - 1]
    assert "LM307 Lightning 2.6 shrinks" in lines[lines.index('finder = BatchSizeFinder(mode="binsearch")') - 1]
    assert "LM307" not in lines[lines.index("other = BatchSizeFinder(margin=0.0)") - 1]
    again, _ = run_rule(RULE, out)
    assert again == out


def test_foreign_progress_bar_base_untouched():
    check_rewrite(RULE, '''\
from mylib.bars import ProgressBarBase


class Bar(ProgressBarBase):
    def step(self):
        return self.train_batch_idx
''', None)


@pytest.mark.parametrize("line, reason", [
    ("qat = QuantizationAwareTraining()", "`QuantizationAwareTraining` was removed"),
    ("DM.add_argparse_args(parser)", "LightningDataModule `add_argparse_args`"),
    ("dm = DM.from_argparse_args(args)", "LightningDataModule `from_argparse_args`"),
    ("trainer.tuner.scale_batch_size(model)", "Lightning 2.6 shrinks"),
    ("finder = BatchSizeFinder()", "Lightning 2.6 shrinks"),
    ('loss = get_standard_metrics(trainer)["loss"]', "`get_standard_metrics` no longer returns"),
])
def test_each_marker_alone(line, reason):
    # Each reason on its own in a file, the statement holding it marked.
    out, _ = run_rule(RULE, "import pytorch_lightning as pl\n\n\nclass DM(pl.LightningDataModule):\n"
                            f"    def __init__(self, size=SIZE):\n        pass\n\n\n{line}\n")
    lines = out.splitlines()
    assert f"LM307 {reason}" in lines[lines.index(line) - 1]


# ---------------------------------------------------------------------------------------------
# find: the sites, and none where nothing changes

CALLBACK_BASE = "from pytorch_lightning.callbacks import Callback\n\n\nclass BaseCallback(Callback):\n    pass\n"
DATAMODULE_BASE = "import lightning.pytorch as pl\n\n\nclass BaseDM(pl.LightningDataModule):\n    pass\n"
MY_DATA = {"data.py": DATAMODULE_BASE + "\n\nclass MyData(BaseDM):\n    pass\n"}
# a DataModule whose __init__ lightmigrate cannot read (a default it cannot copy): its argparse calls stay marked
MY_DATA_UNKNOWN = {"data.py": DATAMODULE_BASE + "\n\nclass MyData(BaseDM):\n    def __init__(self, n=N):\n        pass\n"}


def predict_end(params: str, base: str = "BaseCallback") -> str:
    """A file whose class, based on ``base`` (imported from base.py), defines
    ``on_predict_epoch_end(self, trainer, pl_module<params>)``."""
    return (f"import pytorch_lightning as pl\nfrom base import {base}\n\n\nclass C({base}):\n"
            f"    def on_predict_epoch_end(self, trainer, pl_module{params}):\n        pass\n")


@pytest.mark.parametrize("indexed", [True, False])
def test_find_predict_epoch_end_of_a_callback_defined_across_files(indexed):
    assert sites(predict_end(", outputs"), {"base.py": CALLBACK_BASE}, indexed) == [("predict-end", 6)]


@pytest.mark.parametrize("source, files, expected", [
    (predict_end(", outputs", base="Base"), {"base.py": "class Base:\n    pass\n"}, []),
    # the 2.x signature (or an outputs parameter with a default) is left as it is
    (predict_end(""), {"base.py": CALLBACK_BASE}, []),
    (predict_end(", outputs=None"), {"base.py": CALLBACK_BASE}, []),
    (predict_end(", /, outputs"), {"base.py": CALLBACK_BASE}, [("predict-end", 6)]),
    ("from pytorch_lightning.callbacks import LearningRateFinder\n\nf = LearningRateFinder(min_lr=1e-5)\n", {},
     [("call", 3)]),
    ("from pytorch_lightning.callbacks.progress.base import ProgressBarBase as PBB\n", {}, [("import", 1), ("rename", 0)]),
    ("from mylib import QuantizationAwareTraining\n\nq = QuantizationAwareTraining()\n", {}, [("mark", 1), ("mark", 3)]),
    # batch_idx members only in progress-bar callbacks
    ("import pytorch_lightning as pl\n\n\nclass Bar:\n    def f(self):\n        return self.val_batch_idx\n", {}, []),
    ("import pytorch_lightning as pl\n\n\nclass Bar(pl.callbacks.TQDMProgressBar):\n    def f(self):\n"
     "        return self.val_batch_idx\n", {}, [("members", 5)]),
    ("def step(batch, dataloader_idx, val_batch_idx):\n    return val_batch_idx\n", {}, []),
    # DataModule argparse methods: only on LightningDataModule or a project class that is one
    ("from data import MyData\n\ndm = MyData.from_argparse_args(args)\n", MY_DATA, [("dm-argparse-from", 3)]),
    ("from data import MyData\n\ndm = MyData.from_argparse_args(args)\n", MY_DATA_UNKNOWN, [("mark", 3)]),
    ("from pytorch_lightning import LightningDataModule\n\nparser = LightningDataModule.add_argparse_args(parser)\n",
     {}, [("mark", 3)]),
    ("import pytorch_lightning as pl\n\nparser = pl.LightningDataModule.add_argparse_args(parser)\n", {}, []),
    ("import pytorch_lightning as pl\n\ntrainer = pl.Trainer.from_argparse_args(args)\n", {}, []),
    ("from data import MyData\n\ndm = MyData.from_argparse_args(args)\n", {"data.py": "class MyData:\n    pass\n"}, []),
    ("import pytorch_lightning as pl\nfrom data import MyData\n\ndm = MyData()\ntrainer = pl.Trainer.from_argparse_args(args)\n",
     MY_DATA, []),
    ("from data import MyData\n\ndm = (MyData  # the data\n      .\\\n      from_argparse_args(args))\n", MY_DATA_UNKNOWN,
     [("mark", 3)]),
    # a statement marked already is not marked again
    ("x = 1\n# TODO(lightmigrate): LM307 old\nq = BatchSizeFinder()\n", {}, []),
    ("get_standard_metrics(t)['loss']\nget_standard_metrics(t)[('loss', 1)]\n", {}, [("mark", 1)]),
])
def test_find(source, files, expected):
    assert sites(source, files) == expected


# ---------------------------------------------------------------------------------------------
# BasePredictionWriter.write_on_epoch_end: 1.9 nested the predictions per dataloader also for a
# single one; 2.x passes them flat (corpus prediction_writer_epoch_end)


def test_writer_epoch_end_gets_the_predictions_nested_as_in_1x():
    findings = check_rewrite(RULE, '''\
import torch
from pytorch_lightning.callbacks import BasePredictionWriter


class Writer(BasePredictionWriter):
    def write_on_epoch_end(self, trainer, pl_module, predictions, batch_indices):
        """Save them."""
        for preds in predictions:
            torch.save(torch.cat(preds), "p.pt")


class IndicesOnly(BasePredictionWriter):
    def write_on_epoch_end(self, trainer, pl_module, predictions, batch_indices):
        torch.save(batch_indices, "i.pt")
''', '''\
import torch
from pytorch_lightning.callbacks import BasePredictionWriter


class Writer(BasePredictionWriter):
    def write_on_epoch_end(self, trainer, pl_module, predictions, batch_indices):
        """Save them."""
        predict_loaders = trainer.predict_dataloaders
        if not isinstance(predict_loaders, (list, tuple)) or len(predict_loaders) == 1:
            predictions = [predictions]  # 1.x passed one list per dataloader
        for preds in predictions:
            torch.save(torch.cat(preds), "p.pt")


class IndicesOnly(BasePredictionWriter):
    def write_on_epoch_end(self, trainer, pl_module, predictions, batch_indices):
        torch.save(batch_indices, "i.pt")
''')
    assert [(f.code, f.line) for f in findings] == [("LM307", 6)]


def test_find_writer_epoch_end_only_in_prediction_writers():
    writer = ("from pytorch_lightning.callbacks import BasePredictionWriter, Callback\n"
              "class W(BasePredictionWriter):\n"
              "    def write_on_epoch_end(self, trainer, pl_module, predictions, batch_indices):\n"
              "        print(predictions)\n")
    assert sites(writer) == [("writer-epoch", 3)]
    assert sites(writer.replace("(BasePredictionWriter)", "(Callback)")) == []
    base = "from pytorch_lightning.callbacks import BasePredictionWriter\nclass Base(BasePredictionWriter):\n    pass\n"
    sub = ("import pytorch_lightning as pl\nfrom base import Base\nclass W(Base):\n"
           "    def write_on_epoch_end(self, trainer, pl_module, predictions, batch_indices):\n"
           "        print(predictions)\n")
    assert sites(sub, {"base.py": base}) == [("writer-epoch", 4)]


def test_corpus_writer_case_is_rewritten_and_a_second_run_changes_nothing():
    check_corpus_case_idempotent(RULE, "prediction_writer_epoch_end")


# ---------------------------------------------------------------------------------------------
# C12: a project DataModule's add_argparse_args / from_argparse_args, as 1.9.5 ran them

ARGPARSE_DATA = '''\
from typing import Optional, Union

import pytorch_lightning as pl


class Data(pl.LightningDataModule):
    def __init__(self, data_dir: str = "./data", batch_size: int = 8, shuffle: bool = False,
                 frac: Optional[float] = None, seed=3, ratio: Union[int, float] = 1, tag: Union[bool, str] = "x"):
        super().__init__()
'''
ARGPARSE_SCRIPT = '''\
import argparse

from data import Data


def build_parser():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.1)
    parser = Data.add_argparse_args(parser)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    return Data.from_argparse_args(args, batch_size=4)
'''
BOOL = '("y", "yes", "t", "true", "on", "1", "n", "no", "f", "false", "off", "0")'
ARGPARSE_SCRIPT_AFTER = ARGPARSE_SCRIPT.replace(
    "    parser = Data.add_argparse_args(parser)\n",
    '    parser.add_argument("--data_dir", type=str, default="./data")\n'
    '    parser.add_argument("--batch_size", type=int, default=8)\n'
    f'    parser.add_argument("--shuffle", type=lambda x: {BOOL}.index(x.lower()) < 6, default=False, nargs="?", '
    'const=True)\n'
    '    parser.add_argument("--frac", type=float, default=None)\n'
    '    parser.add_argument("--ratio", type=lambda x: float(x) if "." in x else int(x), default=1)\n'
    '    parser.add_argument("--tag", type=lambda x: x.lower() in ("y", "yes", "t", "true", "on", "1") if x.lower() in '
    f'{BOOL} else x, default="x", nargs="?", const=True)\n').replace(
    "Data.from_argparse_args(args, batch_size=4)",
    'Data(data_dir=args.data_dir, shuffle=args.shuffle, frac=args.frac, ratio=args.ratio, tag=args.tag, '
    'batch_size=4)')


def test_datamodule_argparse_sites():
    assert sites(ARGPARSE_SCRIPT, {"data.py": ARGPARSE_DATA}, path="train.py") == [
        ("dm-argparse-add", 9), ("dm-argparse-from", 15)]


def test_datamodule_argparse_becomes_the_options_and_the_call_1_9_5_made():
    # ``seed`` has no annotation: 1.9 added no option for it, and passed it only when the namespace had
    # one, which this one (parsed by the file's only parser, whose options are all seen) has not
    check_rewrite(RULE, ARGPARSE_SCRIPT, ARGPARSE_SCRIPT_AFTER, path="train.py", project_files={"data.py": ARGPARSE_DATA})


def test_datamodule_argparse_passes_what_other_code_may_add_to_the_parser_only_when_there():
    script = ARGPARSE_SCRIPT.replace("    parser = Data.add_argparse_args(parser)\n",
                                     "    parser = Data.add_argparse_args(parser)\n    add_seed_option(parser)\n")
    out, _ = run_rule(RULE, script, path="train.py", project_files={"data.py": ARGPARSE_DATA})
    assert 'frac=args.frac, seed=getattr(args, "seed", 3), ratio=args.ratio' in out


def test_datamodule_argparse_options_parse_as_1_9_5_did():
    import argparse

    parser = argparse.ArgumentParser()
    lines = [line.strip() for line in ARGPARSE_SCRIPT_AFTER.splitlines() if "parser.add_argument(" in line]
    exec("\n".join(lines), {"parser": parser})
    names = ("lr", "data_dir", "batch_size", "shuffle", "frac", "ratio", "tag")
    # what Data.add_argparse_args gave on pytorch-lightning 1.9.5 (recorded there)
    recorded = {
        (): (0.1, "./data", 8, False, None, 1, "x"),
        ("--shuffle",): (0.1, "./data", 8, True, None, 1, "x"),
        ("--shuffle", "no", "--tag", "on"): (0.1, "./data", 8, False, None, 1, True),
        ("--frac", "0.5", "--ratio", "2.5", "--tag", "hello"): (0.1, "./data", 8, False, 0.5, 2.5, "hello"),
        ("--ratio", "3", "--tag"): (0.1, "./data", 8, False, None, 3, True),
        ("--batch_size", "16", "--data_dir", "/d"): (0.1, "/d", 16, False, None, 1, "x"),
    }
    for argv, values in recorded.items():
        parsed = parser.parse_args(list(argv))
        assert tuple(getattr(parsed, n) for n in names) == values, argv
    with pytest.raises(SystemExit):  # 1.9.5: "invalid str_to_bool value"
        parser.parse_args(["--shuffle", "maybe"])


def test_datamodule_argparse_without_typed_parameters():
    """``from __future__ import annotations`` made every annotation a string, which 1.9's
    ``add_argparse_args`` skipped: the call added no option and goes; a subclass without
    ``__init__`` has its base's."""
    data = "from __future__ import annotations\n\n" + ARGPARSE_DATA + "\n\nclass Small(Data):\n    pass\n"
    script = ("from data import Small\n\n\ndef main(parser):\n    parser = Small.add_argparse_args(parser)\n"
              "    args = parser.parse_args()\n    return Small.from_argparse_args(args, data_dir=\"/tmp\")\n")
    check_rewrite(RULE, script, script.replace("    parser = Small.add_argparse_args(parser)\n", "").replace(
        'Small.from_argparse_args(args, data_dir="/tmp")',
        'Small(batch_size=getattr(args, "batch_size", 8), shuffle=getattr(args, "shuffle", False), '
        'frac=getattr(args, "frac", None), seed=getattr(args, "seed", 3), ratio=getattr(args, "ratio", 1), '
        'tag=getattr(args, "tag", "x"), data_dir="/tmp")'), path="train.py", project_files={"data.py": data})


def test_datamodule_argparse_forms_the_rewrite_does_not_take_stay_marked():
    script = ("from data import Data\n\nparser = Data.add_argparse_args(parser, use_argument_group=False)\n"
              "dm = Data.from_argparse_args(args, **overrides)\n")
    out, _ = run_rule(RULE, script, path="train.py", project_files={"data.py": ARGPARSE_DATA})
    assert out.count("# TODO(lightmigrate): LM307 LightningDataModule") == 2


def test_datamodule_argparse_through_an_import_alias():
    script = ("from data import Data as D\n\n\ndef main(parser, argv):\n    parser = D.add_argparse_args(parser)\n"
              "    return D.from_argparse_args(parser.parse_args(argv))\n")
    data = "import pytorch_lightning as pl\n\n\nclass Data(pl.LightningDataModule):\n    def __init__(self, n: int = 1):\n" \
           "        super().__init__()\n"
    out, _ = run_rule(RULE, script, path="train.py", project_files={"data.py": data})
    assert '    parser.add_argument("--n", type=int, default=1)\n' in out and "add_argparse_args" not in out
    # the namespace is not a name: that call keeps its marker
    assert out.count("# TODO(lightmigrate): LM307 LightningDataModule `from_argparse_args`") == 1
    assert run_rule(RULE, out, path="train.py", project_files={"data.py": data})[0] == out
    script = script.replace("    return D.from_argparse_args(parser.parse_args(argv))\n",
                            "    args = parser.parse_args(argv)\n    return D.from_argparse_args(args)\n")
    check_rewrite(RULE, script, script.replace("    parser = D.add_argparse_args(parser)\n",
                                               '    parser.add_argument("--n", type=int, default=1)\n').replace(
        "D.from_argparse_args(args)", "D(n=args.n)"), path="train.py", project_files={"data.py": data})
    out, _ = run_rule(RULE, script, path="train.py", project_files={"data.py": data.replace("n: int = 1", "n=N")})
    assert out.count("# TODO(lightmigrate): LM307 LightningDataModule") == 2


def test_datamodule_argparse_with_annotated_args_and_kwargs():
    """``*args: Any, **kwargs: Any`` (pytorch-lightning-bolts' DataModules): 1.9 skipped the
    names ``args`` and ``kwargs``; ``Optional[Callable]`` gave no option either."""
    data = ("from typing import Any, Callable, Optional\n\nimport pytorch_lightning as pl\n\n\n"
            "class Voc(pl.LightningDataModule):\n    def __init__(self, data_dir: Optional[str] = None, "
            "transforms: Optional[Callable] = None, *args: Any, **kwargs: Any):\n        super().__init__()\n")
    script = ("import argparse\n\nfrom data import Voc\n\n\ndef main(argv):\n    parser = argparse.ArgumentParser()\n"
              "    parser = Voc.add_argparse_args(parser)\n    args = parser.parse_args(argv)\n"
              "    return Voc.from_argparse_args(args)\n")
    check_rewrite(RULE, script, script.replace("    parser = Voc.add_argparse_args(parser)\n",
                                               '    parser.add_argument("--data_dir", type=str, default=None)\n').replace(
        "Voc.from_argparse_args(args)", "Voc(data_dir=args.data_dir)"), path="train.py", project_files={"data.py": data})


def test_progress_bar_base_keeps_its_name_when_the_file_has_a_progress_bar():
    # ``class ProgressBar(ProgressBar)`` would make the class its own base: the import takes an
    # alias instead, and a dotted use is renamed as usual
    check_rewrite(RULE, '''\
import pytorch_lightning as pl
from pytorch_lightning.callbacks import ProgressBarBase


class ProgressBar(ProgressBarBase):
    pass


class Other(pl.callbacks.ProgressBarBase):
    pass


assert issubclass(ProgressBar, ProgressBarBase)
''', '''\
import pytorch_lightning as pl
from pytorch_lightning.callbacks import ProgressBar as ProgressBarBase


class ProgressBar(ProgressBarBase):
    pass


class Other(pl.callbacks.ProgressBar):
    pass


assert issubclass(ProgressBar, ProgressBarBase)
''')


@pytest.mark.parametrize("own", [
    "from mylib import Bar as ProgressBar\n",
    "def make(ProgressBar=None):\n    return ProgressBar\n",
    "ProgressBar = None\n",
])
def test_progress_bar_base_aliased_for_any_name_progress_bar(own):
    out, _ = run_rule(RULE, "from pytorch_lightning.callbacks.progress.base import ProgressBarBase\n" + own
                      + "\n\nclass Bar(ProgressBarBase):\n    pass\n")
    assert out.startswith("from pytorch_lightning.callbacks.progress.progress_bar import ProgressBar as "
                          "ProgressBarBase\n")
    assert "class Bar(ProgressBarBase):" in out


@pytest.mark.parametrize("other", ["x = self.ProgressBar\n", "f(ProgressBar=1)\n", ""])
def test_progress_bar_base_renamed_when_no_name_progress_bar(other):
    # an attribute or a keyword of that spelling is no variable: the short form
    out, _ = run_rule(RULE, "from pytorch_lightning.callbacks import ProgressBarBase\n" + other
                      + "\n\nclass Bar(ProgressBarBase):\n    pass\n")
    assert out.startswith("from pytorch_lightning.callbacks import ProgressBar\n")
    assert "class Bar(ProgressBar):" in out


def test_progress_bar_base_alias_runs_on_2x():
    """The aliased output imports and subclasses Lightning 2.x's ProgressBar."""
    import lightning.pytorch as L
    out, _ = run_rule(RULE, "from pytorch_lightning.callbacks.progress import ProgressBarBase\n\n\n"
                      "class ProgressBar(ProgressBarBase):\n    pass\n")
    space: dict = {}
    exec(compile(out.replace("pytorch_lightning", "lightning.pytorch"), "bar.py", "exec"), space)
    assert space["ProgressBar"].__mro__[1] is L.callbacks.ProgressBar
    assert isinstance(space["ProgressBar"](), L.callbacks.Callback)
