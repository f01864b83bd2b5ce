"""lightmigrate.analysis.facts: what the rules' gates read about a file."""

import ast
from pathlib import Path

from lightmigrate.analysis.facts import ast_nodes, file_facts

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


_CONTEXTS_AND_OPERATORS = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)

# Every kind of node field: None keys and defaults, match patterns, f-strings, globals,
# decorators, comprehensions, slices, type comments' neighbours.
_EVERY_SHAPE = """
import a.b as c
from .x import (y as z, w)
global_ = {**{}, 'k': 1}
def f(a, /, b: int = 1, *args, c, d=2, **kw) -> None:
    global g
    def inner():
        nonlocal a
    nonlocal_ = lambda q, *, r=None: q
    return [x async for x in y if x] if a else {k: v for k, v in kw.items()}
async def g():
    async with a as b, c:
        await b
    async for i in j:
        yield i
class C(B, metaclass=M):
    x: int = 1
    @dec(1)
    def m(self):
        del self.a[1:2, ::3]
        self.b += -1 and not 2 or 3 < 4 <= 5
        print(f"{x!r:>{w}}", *a, **k)
match p:
    case {"k": v, **rest} if v: pass
    case C(1, x=[a, *others]) | None: pass
    case str() as s: pass
try:
    raise E from e
except* T as t:
    assert t, "m"
"""


def test_ast_nodes_is_ast_walk_order_without_contexts_and_operators():
    trees = [ast.parse(path.read_text(encoding="utf-8")) for path in sorted(CORPUS.glob("*.py"))]
    trees.append(ast.parse(_EVERY_SHAPE))
    for tree in trees:
        walked = [n for n in ast.walk(tree) if not isinstance(n, _CONTEXTS_AND_OPERATORS)]
        assert [id(n) for n in ast_nodes(tree)] == [id(n) for n in walked]
        assert None not in ast_nodes(tree)


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


def test_names_reached_through_lightning_imports():
    text = (
        "import pytorch_lightning as pl\n"
        "import lightning.pytorch\n"
        "import torch.nn as nn\n"
        "from lightning_fabric.accelerators import Accelerator as Acc\n"
        "from . import local\n"
        "from .sibling import thing\n"
        "class A(Acc, pl.core.module.LightningModule, nn.Module, Generic[T], make()):\n"
        "    def f(self):\n"
        "        import pytorch_lightning.loops.utilities as lu\n"
        "        return pl.utilities.distributed.sync_ddp(self.x.y), lu._reset_progress, nn.Linear, pl\n"
        "y = lightning.pytorch.profiler.SimpleProfiler().start.now\n"
    )
    f = file_facts(text)
    assert f.lightning_bindings == {"pl": {"pytorch_lightning"}, "lightning": {"lightning"},
                                    "Acc": {"lightning_fabric.accelerators.Accelerator"},
                                    "lu": {"pytorch_lightning.loops.utilities"}}
    # imports, then dotted uses through a Lightning binding, inner chains included
    assert f.reached == {
        "pytorch_lightning", "lightning.pytorch", "lightning_fabric.accelerators.Accelerator",
        "pytorch_lightning.loops.utilities", "pytorch_lightning.core", "pytorch_lightning.core.module",
        "pytorch_lightning.core.module.LightningModule", "pytorch_lightning.utilities",
        "pytorch_lightning.utilities.distributed", "pytorch_lightning.utilities.distributed.sync_ddp",
        "pytorch_lightning.loops.utilities._reset_progress", "lightning.pytorch.profiler",
        "lightning.pytorch.profiler.SimpleProfiler",
    }
    assert f.bases == {"Acc", "pl.core.module.LightningModule", "nn.Module"}


def test_a_file_without_lightning_imports_reaches_nothing():
    f = file_facts("import torch\nfrom .lightning import pytorch as pl\nx = pl.profiler.SimpleProfiler\n")
    assert f.reached == frozenset() and f.lightning_bindings == {}
