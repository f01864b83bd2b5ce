"""analysis/trainer_feeds.py: the text search before a file is parsed for its Trainer feeds."""

import ast

import pytest

from lightmigrate.analysis.trainer_feeds import may_feed, trainer_feeds

FEEDS = [
    "trainer = pl.Trainer(**config)\n",
    "trainer = pl.Trainer(\n    max_epochs=1,\n    **settings.TRAINER,\n)\n",
    "t = MyTrainer(gpus=1, **kwargs)\n",
    "t = [Trainer  # a comment\n    (**cfg)]\n",
    "t = Trainer \\\n    (**cfg)\n",
    "t = Trainer(name='a)b', **cfg)\n",  # a string in the arguments: not read further
    "from pytorch_lightning import Trainer as PLT\n\nt = PLT(**CONFIG)\n",
    "from pkg.trainer import (\n    MyTrainer as Runner,\n)\nr = Runner(\n    **OTHER)\n",
]
NO_FEEDS = [
    "trainer = pl.Trainer(max_epochs=1)\n\ndef f(**kwargs):\n    return kwargs\n",
    "trainer = Trainer(callbacks=[cb(x)], logger=get(y))\nprint(dict(**z))\n",
    "x = 2 ** 3\n",
    "trainer = Trainer()\n",
]


@pytest.mark.parametrize("text", FEEDS)
def test_a_trainer_call_that_may_spread_a_dict_is_parsed(text):
    assert may_feed(text)


@pytest.mark.parametrize("text", NO_FEEDS)
def test_a_file_whose_trainer_calls_spread_nothing_is_not_parsed(text):
    assert not may_feed(text)
    # and the search is a superset: the parse finds no feed either
    assert trainer_feeds(ast.parse(text), "x.py") == ()


def test_the_spreads_the_search_lets_through_are_found_by_the_parse():
    found = trainer_feeds(ast.parse("from conf import CFG\nimport pytorch_lightning as pl\n"
                                    "t = pl.Trainer(\n    max_epochs=1,\n    **CFG,\n)\n"), "x.py")
    assert [(f.name, f.kind, f.callee) for f in found] == [("CFG", "value", "lightning")]


def test_the_functions_that_spread_a_parameter_into_a_trainer_are_found():
    from lightmigrate.analysis.trainer_spreaders import trainer_spreaders

    text = ("import pytorch_lightning as pl\n\n"
            "def train(model, trainer_kwargs=None):\n    pl.Trainer(**(trainer_kwargs or {})).fit(model)\n\n"
            "def rebinds(kw):\n    kw = {**kw, 'max_epochs': 1}\n    pl.Trainer(**kw)\n\n"
            "class Runner:\n    def __init__(self, model, *, cfg):\n        self.t = pl.Trainer(**cfg)\n\n"
            "    def fit(self, loader, **kw):\n        pl.Trainer(**kw).fit(None, loader)\n")
    found = trainer_spreaders(ast.parse(text), "pkg/run.py")
    assert [(s.name, s.owner, s.param, s.position, s.kwarg, s.params) for s in found] == [
        ("train", "", "trainer_kwargs", 1, False, ("model", "trainer_kwargs")),
        ("Runner", "Runner", "cfg", None, False, ("model", "cfg")),
        ("fit", "Runner", "kw", None, True, ("loader",)),
    ]
