"""The class index with files indexed lazily (``ProjectIndex.add_source(..., lazy=True)``): every
question gets the answer an index that parsed every file at once gives, whatever was asked
before; and the text searches that decide which lazy files a question needs find every class
name and every base name a file has."""

import ast
from pathlib import Path

import pytest

from lightmigrate.engine.survey import survey
from lightmigrate.analysis.project import (
    CALLBACK_NAMES,
    LIGHTNING_MODULE_NAMES,
    _CLASS_NAME,
    ProjectIndex,
    class_headers,
    classes_in_source,
    header_base_names,
    may_index_lazily,
    search_text,
)

ROOT = Path(__file__).resolve().parent.parent
DATAMODULE_NAMES = frozenset({"LightningDataModule"})

PROJECT = {
    "base.py": "import pytorch_lightning as pl\n\n\nclass Base(pl.LightningModule):\n    def training_step(self, b, i):\n"
               "        pass\n\n\nclass Data(pl.LightningDataModule):\n    pass\n",
    # a chain of subclasses across files that do not mention Lightning
    "mid.py": "from base import Base\n\n\nclass Mid(Base):\n    def configure_optimizers(self):\n        pass\n",
    "leaf.py": "from mid import Mid\n\n\nclass Leaf(Mid):\n    def training_step(self, batch, batch_idx, optimizer_idx):\n"
               "        pass\n\n\nclass \\\n        Continued(Leaf):\n    def on_train_epoch_end(self):\n        pass\n",
    # a second class called Mid makes the name ambiguous: nothing resolves to either
    "other.py": "class Mid:\n    def on_train_epoch_end(self):\n        pass\n",
    "callbacks.py": "from somewhere import Callback\n\n\nclass Printer(Callback):\n    def on_train_epoch_end(self, t, m):\n"
                    "        pass\n",
    "docs.py": '"""An example in a docstring:\n\nclass Fake(Base):\n    pass\n"""\n\n\ndef f():\n'
               "    class Inner(Base):\n        def training_step(self):\n            pass\n    return Inner\n",
    "data.py": "from base import Data\n\n\nclass MyData(Data):\n    def setup(self, stage):\n        pass\n",
    "unicode.py": "# café\nfrom base import Base\n\n\nclass Accented(Base):\n    def training_step(self):\n        pass\n",
    # names Python reads NFKC-normalized: Ｗide is Wide, Ｂase is Base, ﬁne is fine, ﬁt_step fit_step
    "nfkc.py": "class Ｗide(Ｂase):\n    def ﬁt_step(self):\n        pass\n\n\nclass ﬁne(Wide):\n    pass\n",
    # Lightning's classes and the project's under an import alias (issue 25)
    "aliased.py": "from pytorch_lightning import LightningModule as LM\nfrom pytorch_lightning.callbacks import Callback as "
                  "CB\nfrom base import Base as Parent\n\n\nclass Direct(LM):\n    pass\n\n\nclass Hook(CB):\n"
                  "    def on_epoch_end(self, t, m):\n        pass\n\n\nclass Child(Parent):\n    def training_step(self):\n"
                  "        pass\n",
    "plain.py": "class Unrelated(object):\n    def training_step(self):\n        pass\n",
    # a mixin of a LightningModule defined elsewhere: in its hierarchy, though not one itself
    "mixin.py": "class Helper:\n    def on_train_epoch_end(self):\n        pass\n",
    "mixed.py": "import pytorch_lightning as pl\nfrom mixin import Helper\n\n\nclass Mixed(pl.LightningModule, Helper):\n"
                "    pass\n",
    # old Mac line ends: the text searches look at line starts, so this one is parsed at once
    "cr.py": "from base import Base\r\r\rclass OldMac(Base):\r    def training_step(self):\r        pass\r",
    "crlf.py": "from base import Base\r\n\r\n\r\nclass Windows(Base):\r\n    def training_step(self):\r\n        pass\r\n",
}


def build(files, lazy):
    index = ProjectIndex()
    for path, text in files.items():
        index.add_source(text, path, lazy=lazy)
    return index


def full(c):
    return (c, c.super_calls, c.params, c.attributes, c.self_calls)


def answers(index, questions, then_all=True):
    """Each question's answer, asked in the order given (classes are compared with all fields),
    then (``then_all``) every class."""
    out = []
    for kind, arg in questions:
        if kind == "resolve":
            found = index.resolve(arg)
            out.append(None if found is None else full(found))
        elif kind == "named":
            out.append([full(c) for c in index.classes_named(arg)])
        elif kind == "in":
            out.append([full(c) for c in index.classes_in(arg)])
        elif kind == "kind":
            out.append([full(c) for c in index.kind_classes(arg)])
        elif kind == "mentioning":
            out.append(sorted(c.name for c in index.classes(mentioning=arg) if arg in c.methods))
        elif kind == "may":
            out.append(index.may_define_in_hierarchy(*arg))
        else:
            found = index.resolve(arg)
            if found is None:
                out.append(None)
            elif kind == "sub":
                out.append([full(c) for c in index.subclasses(found)])
            elif kind == "desc":
                out.append([full(c) for c in index.descendants(found)])
            elif kind == "anc":
                ancestors, complete = index.ancestors(found)
                out.append(([full(c) for c in ancestors], complete))
            elif kind == "is_lm":
                out.append(index.is_lightning_module(found))
            elif kind == "hierarchy":
                out.append(index.in_lightning_hierarchy(found, CALLBACK_NAMES))
    if then_all:
        out.append([full(c) for c in index.classes()])
    return out


def questions_for(files):
    names = sorted({c.name for path, text in files.items() for c in classes_in_source(ast.parse(text), path)})
    qs = []
    for name in names + ["Missing"]:
        qs += [("resolve", name), ("named", name), ("sub", name), ("desc", name), ("anc", name), ("is_lm", name),
               ("hierarchy", name)]
    qs += [("in", path) for path in files] + [("kind", LIGHTNING_MODULE_NAMES), ("kind", DATAMODULE_NAMES),
                                             ("kind", CALLBACK_NAMES), ("mentioning", "optimizer_idx"),
                                             ("mentioning", "on_train_epoch_end"), ("mentioning", "fit_step")]
    kinds = [LIGHTNING_MODULE_NAMES, DATAMODULE_NAMES, CALLBACK_NAMES]
    qs += [("may", (path, sets)) for path in files for sets in ([k] for k in kinds)] + \
          [("may", (path, kinds)) for path in files]
    return qs


@pytest.mark.parametrize("which", ["project", "corpus"])
def test_a_lazy_index_answers_like_an_index_that_parsed_everything(which):
    if which == "project":
        files = PROJECT
    else:
        files = {str(p): p.read_text(encoding="utf-8") for p in sorted((ROOT / "corpus").glob("*.py"))}
    qs = questions_for(files)
    eager = answers(build(files, lazy=False), qs)
    assert len(qs) > 60 and any(eager[:-1]) and len(eager[-1]) > 5
    # all the questions in turn on one lazy index, and each as the first on a fresh one
    assert answers(build(files, lazy=True), qs) == eager
    for i, question in enumerate(qs):
        assert answers(build(files, lazy=True), [question], then_all=False) == [eager[i]], question


def test_a_lazy_index_parses_only_what_a_question_needs():
    index = build(PROJECT, lazy=True)
    assert index._lazy and "unicode.py" in index._lazy and "nfkc.py" in index._lazy  # searched NFKC-normalized
    assert "cr.py" not in index._lazy and "crlf.py" in index._lazy
    index.resolve("Unrelated")
    assert "plain.py" not in index._lazy and "mid.py" in index._lazy
    [c.name for c in index.kind_classes(DATAMODULE_NAMES)]
    assert "data.py" not in index._lazy and "callbacks.py" in index._lazy


@pytest.mark.parametrize("which", ["project", "corpus"])
def test_the_quick_hierarchy_answers_never_say_no_where_the_full_ones_say_yes(which):
    """``may_inherit`` and ``may_be_in_hierarchy`` may answer without parsing lazily indexed
    files; each "no" must be right: no ancestor defines one of the names, the class is not in
    the hierarchy. Asked on a fresh lazy index per class (what a gate sees), checked against an
    index that parsed everything."""
    if which == "project":
        files = dict(PROJECT, **{"task.py": "class Task:\n    pass\n", "rich.py": "from task import Task\n\n\n"
                                 "class Infinite(Task):\n    def on_train_epoch_end(self):\n        pass\n"})
    else:
        files = {str(p): p.read_text(encoding="utf-8") for p in sorted((ROOT / "corpus").glob("*.py"))}
    eager = build(files, lazy=False)
    classes = eager.classes()
    method_sets = sorted({frozenset({m}) for c in classes for m in c.methods}, key=sorted)
    method_sets.append(frozenset({"training_epoch_end", "validation_epoch_end"}))
    kinds = [LIGHTNING_MODULE_NAMES, CALLBACK_NAMES, DATAMODULE_NAMES]
    said_no = 0
    for c in classes:
        ancestors, _ = eager.ancestors(c)
        lazy = build(files, lazy=True)
        lazy_c = lazy.classes_named(c.name)[[x.path for x in eager.classes_named(c.name)].index(c.path)]
        for names in method_sets:
            may = lazy.may_inherit(lazy_c, names)
            assert may or not any(names & a.methods for a in ancestors), (c.name, sorted(names))
            said_no += not may
        for names in kinds:
            may = lazy.may_be_in_hierarchy(lazy_c, names)
            assert may or eager.in_lightning_hierarchy(c, names) is not True, (c.name, sorted(names))
            said_no += not may
    assert said_no > 20


def test_the_quick_hierarchy_answers_leave_files_that_cannot_matter_unparsed():
    # (task.py names a hint word, "_step", so the index keeps it: lazily)
    files = dict(PROJECT, **{"task.py": "class Task:\n    def next_step(self):\n        pass\n",
                             "rich.py": "from task import Task\n\n\n"
                             "class Infinite(Task):\n    def on_train_epoch_end(self):\n        pass\n"})
    index = build(files, lazy=True)
    infinite = index.classes_in("rich.py")[0]
    assert "task.py" in index._lazy
    assert not index.may_inherit(infinite, frozenset({"training_step"}))
    assert not index.may_be_in_hierarchy(infinite, LIGHTNING_MODULE_NAMES)
    assert "task.py" in index._lazy  # the text of task.py settled both
    assert index.may_inherit(infinite, frozenset({"next_step"}))  # it does
    assert index.may_inherit(infinite, frozenset({"pass"}))  # in its text: it may define it
    assert "task.py" in index._lazy
    assert [a.name for a in index.ancestors(infinite)[0]] == ["Task"]  # the full answer parses it
    assert "task.py" not in index._lazy


def test_the_survey_leaves_files_only_the_index_reads_unparsed():
    files = [(text, path) for path, text in PROJECT.items()]
    project = survey(files)
    assert "leaf.py" in project._lazy and "base.py" in project._lazy
    assert project.resolve("Base") is not None and "base.py" not in project._lazy  # parsed when asked
    eager = build(PROJECT, lazy=False)
    # (Leaf is not one: the other ``Mid`` makes its base ambiguous)
    assert {c.name for c in project.descendants(project.resolve("Base"))} == {
        "Mid", "Inner", "Accented", "Wide", "fine", "OldMac", "Windows", "Child"}
    assert project.descendants(project.resolve("Base")) == eager.descendants(eager.resolve("Base"))


def _texts():
    for folder in ("corpus", "tests", "lightmigrate"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            yield path.read_text(encoding="utf-8")
    yield from PROJECT.values()


def test_the_text_searches_find_every_class_name_and_base_name():
    checked = 0
    for text in _texts():
        if not may_index_lazily(text):
            continue
        classes = classes_in_source(ast.parse(text), "x.py")
        assert {c.name for c in classes} <= set(_CLASS_NAME.findall(search_text(text)))
        bases = header_base_names(search_text(text))
        assert bases is None or {b for c in classes for b in c.base_names} <= bases
        checked += len(classes)
    assert checked > 300


def test_class_headers_finds_what_the_class_search_finds():
    odd = ("class A: pass\nx = 'class B(C)'\n  class D(E):\n\tclass \\\n F:\n\x0cclass G(H):\r\n"
           "class classy(class_):\nsubclass X(Y):\n# class Z(W):\nclassic = 1\nclass")
    texts = [odd, *_texts(), *(search_text(t) for t in PROJECT.values())]
    for text in texts:
        expected = [(m.span(), m.group(1)) for m in _CLASS_NAME.finditer(text)]
        assert [(m.span(), m.group(1)) for m in class_headers(text)] == expected
    assert [m.group(1) for m in class_headers(odd)] == ["A", "D", "F", "G", "classy"]


def test_header_base_names_reads_odd_headers():
    text = ("class A(B, pkg.C[int], metaclass=M):\n    pass\n\n\nclass E(f(lambda: 0), Base, x[1:2]):\n    pass\n\n\n"
            "class \\\n    F(  # a comment: with a colon\n        G):\n    pass\n")
    assert header_base_names(text) == {"B", "C", "Base", "x", "G"}
    assert header_base_names("class A:\n    pass\n") == frozenset()
    # ``class`` at the start of a line in a string, which no header parse can read: unknown
    assert header_base_names('"""\nclass Note(see: below) ' + "x: " * 30 + '\n"""\n') is None


def test_trainer_settings_text_search_finds_every_setting_the_parse_finds():
    # The index reads a file's Trainer settings that manual optimization rejects from its parse,
    # only when a text search finds one of those names as a keyword or a string key.
    import random

    from lightmigrate.analysis.project import _MANUAL_REJECT_USE, _text_settings, _trainer_settings

    rng = random.Random(2)
    names = ["gradient_clip_val", "accumulate_grad_batches", "gradient_clip_algorithm", "max_epochs"]
    gaps = ["", " ", "  # why\n", "\\\n", "\n"]
    quotes = ["'", '"', '"' * 3, "'" * 3]
    texts = []
    for _ in range(3000):
        name, gap, gap2, q = rng.choice(names), rng.choice(gaps), rng.choice(gaps), rng.choice(quotes)
        texts += [f"t = {rng.choice(['Trainer', 'pl.Trainer', 'L.Trainer', 'f'])}({gap}{name}{gap2}={gap}1)\n",
                  f"cfg = {{{gap}{q}{name}{q}{gap2}:{gap}2}}\n",
                  f"x = dict({name}{gap2}=3)\nif y.{name}{gap}== 2:\n    pass\n"]
    found = 0
    for text in texts:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        settings = _trainer_settings(text, tree)
        if settings:
            found += 1
            assert _MANUAL_REJECT_USE.search(text), text
            assert _text_settings(text, "m.py", tree)[1] == settings
    assert found > 50
    # a name only read, or compared, is not a setting
    assert _MANUAL_REJECT_USE.search("if trainer.gradient_clip_val == 0:\n    pass\n") is None
    assert _text_settings("print(trainer.accumulate_grad_batches)\n", "m.py")[1] == {}
    # a YAML config spells its settings "name: value"
    assert _text_settings("trainer:\n  gradient_clip_val: 0.5\n", "c.yaml")[1] == {"gradient_clip_val": 0.5}


def test_resolve_reads_the_preferred_file_first_and_leaves_the_others_unparsed():
    body = "    def training_step(self):\n        pass\n"
    files = {"a.py": "class Model(Base):\n" + body, "b.py": "class Model(Other):\n" + body,
             "c.py": "class Model(Third):\n" + body}
    index = build(files, lazy=True)
    found = index.resolve("Model", "b.py")
    assert found is not None and found.path == "b.py"
    assert "a.py" in index._lazy and "c.py" in index._lazy  # the local definition settles it
    assert build(files, lazy=True).resolve("Model") is None  # three definitions elsewhere: ambiguous
    two = build({**files, "b.py": "class Model(Other):\n    class Model:\n        pass\n" + body}, lazy=True)
    assert two.resolve("Model", "b.py") is None  # two in the preferred file: as an eager index says
    assert len(two.classes_in("b.py")) == 2
    assert build({**files, "b.py": "class Model(Other):\n    class Model:\n        pass\n" + body}, lazy=False) \
        .resolve("Model", "b.py") is None


@pytest.mark.parametrize("lazy", [False, True])
def test_the_hierarchy_does_not_climb_into_a_definition_of_lightning_itself(lazy):
    # a tree that holds Lightning's own source: its LightningModule's bases are not the
    # project's mixins
    files = {
        "lightning/module.py": "class HooksMixin:\n    def on_train_epoch_end(self):\n        pass\n\n\n"
                               "class LightningModule(HooksMixin, Module):\n    pass\n",
        "torch/module.py": "class Module:\n    def train(self):\n        pass\n",
        "model.py": "class Helper:\n    pass\n\n\nclass Model(Helper, LightningModule):\n    pass\n",
    }
    index = build(files, lazy=lazy)
    by_name = {c.name: c for c in index.classes()}
    assert index.in_lightning_hierarchy(by_name["Helper"]) is True  # the project's mixin
    assert index.in_lightning_hierarchy(by_name["Model"]) is True
    assert not index.may_define_in_hierarchy("torch/module.py", [LIGHTNING_MODULE_NAMES])
    assert index.in_lightning_hierarchy(by_name["HooksMixin"]) is not True
