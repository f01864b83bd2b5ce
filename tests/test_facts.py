"""lightmigrate.facts: what the rules' gates read about a file."""

import ast
from pathlib import Path

from lightmigrate.facts import ast_nodes, file_facts

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def test_ast_nodes_is_ast_walk_order():
    for path in sorted(CORPUS.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        assert [id(n) for n in ast_nodes(tree)] == [id(n) for n in ast.walk(tree)]


def test_facts_of_a_module():
    text = (
        "import pytorch_lightning as pl\n"
        "from lightning.pytorch.callbacks import EarlyStopping as ES\n"
        "class M(pl.LightningModule):\n"
        "    def training_epoch_end(self, outputs):\n"
        "        self.log('x', 1, sync_dist=True)\n"
        "trainer = pl.Trainer(gpus=1)  # a comment word: banana\n"
    )
    f = file_facts(text)
    assert f.parsed
    assert {"pl", "trainer"} <= f.names and "banana" not in f.names  # comments are not code
    assert {"LightningModule", "log", "Trainer"} <= f.attributes
    assert {"log", "Trainer"} <= f.calls and f.call_keywords["Trainer"] == {"gpus"}
    assert f.call_keywords["log"] == {"sync_dist"} and "gpus" in f.keywords
    assert f.defs == {"training_epoch_end"} and {"self", "outputs"} <= f.params and f.classes == {"M"}
    assert {"pytorch_lightning", "lightning", "lightning.pytorch", "lightning.pytorch.callbacks",
            "lightning.pytorch.callbacks.EarlyStopping"} <= f.modules
    assert {"pl", "pytorch_lightning", "EarlyStopping", "ES"} <= f.imported


def test_text_python_cannot_parse_has_no_facts():
    f = file_facts("def broken(:\n    training_epoch_end\n")
    assert not f.parsed and not f.names and not f.defs and not f.calls
