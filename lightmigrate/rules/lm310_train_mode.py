"""LM310: ``train()`` overrides that 1.9 ran after every validation and test (spec B-9).

After a validation or test loop, Lightning 1.9 called ``on_validation_model_train`` /
``on_test_model_train``, whose default is ``self.trainer.model.train()``: ``nn.Module.train``
runs down the whole model and calls every submodule's own ``train(mode)``. Lightning 2.x does not
call those hooks unless they are overridden; it sets each submodule's ``training`` flag back to
what it was. A submodule that overrides ``train`` to do more than set the flag (drop a cache of
representations computed without gradients in eval mode, re-freeze a layer) no longer gets that
call: in the next training step the cache is still there (``element 0 of tensors does not
require grad``), or the layer is not reset.

Where the package of a LightningModule defines such an override, the LightningModule classes
that derive from Lightning's directly get the two hooks with 1.9's default body (a class that
defines, or inherits from a project class, its own is left as it is), which 2.x then calls
instead of resetting the flags: the same calls as in 1.9.
"""

from __future__ import annotations

from typing import List, Sequence

import libcst as cst

from lightmigrate.analysis.project import LIGHTNING_MODULE_NAMES, ClassInfo, ProjectIndex
from lightmigrate.cst.walk import transform
from lightmigrate.rules.base import Example, Handling, Rule, RuleContext, Safety, Site, SourceFile
from lightmigrate.rules.shared.class_edit import KindTransformer, kind_classes
from lightmigrate.rules.shared.method_sites import index_source

CODE = "LM310"
HOOKS = ("on_validation_model_train", "on_test_model_train")
_MODULE_KIND = frozenset({"module"})
_MODULE_NAMES = frozenset({"Module", "LightningModule"})  # nn.Module, and Lightning's subclass of it
COMMENT = "# as 1.9 did after {loop} (2.x only resets the `training` flags): runs {owner}.train()"


def train_overrides(index: ProjectIndex, package: str) -> List[ClassInfo]:
    """The classes of ``package`` (``ProjectIndex.package_of``) that override
    ``train(self, mode=...)`` of ``nn.Module`` (other than ``nn.Module`` itself): a method
    ``train`` taking ``mode``, in a class not known to be outside ``nn.Module``'s hierarchy (a
    dataset's ``train`` split or a runner's ``train(epochs)`` loop is not one)."""
    found = []
    for path in sorted(index.train_overrides):
        if index.package_of(path) != package:
            continue
        for c in index.classes_in(path):
            params = c.params.get("train")
            if params is None or c.name == "Module" or not c.bases or params[1:2] != ("mode",):
                continue
            if index.is_lightning_module(c, _MODULE_NAMES) is not False:
                found.append(c)
    return found


def _defines(index: ProjectIndex, info: ClassInfo, name: str) -> bool:
    return name in info.methods or any(name in a.methods for a in index.ancestors(info)[0])


class _AddHooks(KindTransformer):
    """Appends the sites' hooks to their classes."""

    def __init__(self, ctx: RuleContext, module: cst.Module, sites: Sequence[Site]) -> None:
        super().__init__(ctx, module, only=frozenset(s.target for s in sites))
        self.by_name = {s.target: s for s in sites}

    def edit_class(self, kind, original, updated):
        site = self.by_name.get(original.name.value)
        if site is None:
            return updated
        hooks, owner = site.data
        added = []
        for hook in hooks:
            loop = "validation" if hook == "on_validation_model_train" else "testing"
            comment = COMMENT.format(loop=loop, owner=owner)
            added.append(cst.parse_statement(f"def {hook}(self):\n    {comment}\n    self.trainer.model.train()\n"))
            self.report(CODE, original, f"{self.class_name}: added `{hook}` calling `self.trainer.model.train()` "
                                        f"(1.9's default; 2.x skips the train() override of {owner})")
        body = list(updated.body.body)
        spaced = [h.with_changes(leading_lines=[cst.EmptyLine(indent=False)]) for h in added]
        return updated.with_changes(body=updated.body.with_changes(body=body + spaced))


class TrainModeRule(Rule):
    code = CODE
    name = "train-mode"
    summary = ("LightningModules of a package with a `train()` override get the hooks that make 2.x call "
               "`model.train()` after validation and test, as 1.9 did.")
    spec_rows = ("B-9",)
    guide = ("2.2 changelog: the evaluation loops restore each submodule's training mode instead of calling "
             "`model.train()` (PR 18951)")
    safety = Safety.PRESERVING
    triggers = ("LightningModule",)
    description = (
        "1.9 called `self.trainer.model.train()` after each validation and test loop (the default "
        "`on_validation_model_train` / `on_test_model_train`), which runs every submodule's own `train()`. "
        "2.x only resets the `training` flags unless those hooks are overridden, so a `train()` override "
        "that drops a cache or resets state no longer runs. Where the package defines such an override, "
        "each LightningModule that derives from Lightning's directly, and has no such hook of its own, gets "
        "both hooks with 1.9's body."
    )
    coverage = {"B-9": Handling.REWRITTEN}
    examples = (
        Example(
            title="a submodule that drops a cache when it goes back to training",
            before='''\
import pytorch_lightning as pl
from torch import nn


class Cached(nn.Module):
    def train(self, mode=True):
        if mode:
            self.cache = None
        return super().train(mode)


class Model(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.encoder = Cached()
''',
            after='''\
import pytorch_lightning as pl
from torch import nn


class Cached(nn.Module):
    def train(self, mode=True):
        if mode:
            self.cache = None
        return super().train(mode)


class Model(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.encoder = Cached()

    def on_validation_model_train(self):
        # as 1.9 did after validation (2.x only resets the `training` flags): runs Cached.train()
        self.trainer.model.train()

    def on_test_model_train(self):
        # as 1.9 did after testing (2.x only resets the `training` flags): runs Cached.train()
        self.trainer.model.train()
''',
        ),
        Example(
            title="no train() override in the package: nothing to do",
            before='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    pass
''',
            after=None,
        ),
    )

    def find(self, source: SourceFile, ctx: RuleContext) -> List[Site]:
        index = ctx.project
        if not index.train_overrides:
            return []
        index_source(source, ctx)
        owners = None
        sites = []
        for cls, _ in kind_classes(source, ctx, _MODULE_KIND):
            info = index.resolve(cls.name, ctx.path)
            if info is None or info.path != ctx.path or not index.lightning_bases(info, LIGHTNING_MODULE_NAMES):
                continue
            missing = tuple(h for h in HOOKS if not _defines(index, info, h))
            if not missing:
                continue
            if owners is None:
                owners = train_overrides(index, index.package_of(ctx.path))
                if not owners:
                    return []
            sites.append(Site(cls.lineno, cls.col_offset, cls.name, "add", (missing, owners[0].name)))
        return sites

    def fix(self, module: cst.Module, sites: Sequence[Site], ctx: RuleContext) -> cst.Module:
        return transform(module, _AddHooks(ctx, module, sites))
