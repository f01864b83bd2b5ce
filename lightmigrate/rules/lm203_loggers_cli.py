"""LM203: ``CometLogger`` and ``LightningCLI`` arguments that 2.x renamed or regrouped, and the
1.5 ``ProgressBar`` callback."""

from __future__ import annotations

import re
from typing import Dict, FrozenSet, List, Optional, Sequence, Tuple

import libcst as cst

from lightmigrate.cst.walk import transform, PrunedTransformer
from lightmigrate.analysis.facts import FileFacts, file_facts
from lightmigrate.output.findings import Kind
from lightmigrate.rules.shared.import_rewrite import add_imports, add_marker_once, collect, dotted, drop_unused, to_relative
from lightmigrate.catalog.imports import GUIDE
from lightmigrate.rules.base import Example, Handling, GatedRule, Rule, RuleContext, Safety
from lightmigrate.rules.shared.class_edit import DATAMODULE_NAMES
from lightmigrate.rules.shared.gates import COMMENT, import_path_words, imports_pl_root, may_import_pl_root, word_at_start

CODE = "LM203"

# 1.9 CometLogger(api_key, save_dir, project_name, rest_api_key, experiment_name, experiment_key, offline, prefix)
COMET_POSITIONAL = ("api_key", "save_dir", "project_name", "rest_api_key", "experiment_name", "experiment_key",
                    "offline", "prefix")
COMET_RENAMES = {"save_dir": "offline_directory", "project_name": "project", "experiment_name": "name"}
CLI_SAVE_CONFIG = {"save_config_filename": "config_filename", "save_config_overwrite": "overwrite",
                   "save_config_multifile": "multifile"}
CLI_PARSER = {"description": "description", "env_prefix": "env_prefix", "env_parse": "default_env"}

COMET_NAMES = ("pl.loggers.CometLogger", "pl.loggers.comet.CometLogger")
CLI_NAMES = ("pl.cli.LightningCLI", "pl.utilities.cli.LightningCLI")
PROGRESS_NAMES = ("pl.callbacks.ProgressBar", "pl.callbacks.progress.ProgressBar")
_DATAMODULE_KIND = frozenset({"datamodule"})
DATAMODULE_REMOVED_KWARGS = ("train_transforms", "val_transforms", "test_transforms", "dims")
# For the gate: the keywords that make ``cli_args`` regroup or note something.
_CLI_KEYWORDS = frozenset(CLI_SAVE_CONFIG) | frozenset(CLI_PARSER) | {"trainer_defaults"}
_DATAMODULE_KWARGS = frozenset(DATAMODULE_REMOVED_KWARGS)
_CALLED = frozenset({"CometLogger", "LightningCLI", "ProgressBar"})  # the classes whose calls change


def _called_classes(facts: FileFacts) -> FrozenSet[str]:
    """The names of ``_CALLED`` some call of the file may be made to: ``X(...)`` and
    ``a.X(...)``, or ``alias(...)`` with ``alias`` bound to ``....X`` by a Lightning import (the
    rule resolves callees through the file's absolute imports only)."""
    found = set(facts.calls & _CALLED)
    for local, paths in facts.lightning_bindings.items():
        if local in facts.calls:
            found.update(p.rsplit(".", 1)[-1] for p in paths if p.rsplit(".", 1)[-1] in _CALLED)
    return frozenset(found)
# ``dims`` as a keyword argument: the name, then ``=`` (not ``==``), with anything Python allows
# between them inside brackets (spaces, line breaks, comments, a backslash continuation).
_DIMS_KEYWORD = re.compile(word_at_start("dims") + rf"\b(?:\s|\\|{COMMENT})*=(?!=)")


def _kw(name: str, value: cst.BaseExpression, like: Optional[cst.Arg] = None) -> cst.Arg:
    eq = like.equal if like is not None and isinstance(like.equal, cst.AssignEqual) else cst.AssignEqual(
        cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
    return cst.Arg(keyword=cst.Name(name), value=value, equal=eq)


def _negate(value: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(value, cst.Name) and value.value in ("True", "False"):
        return cst.Name("False" if value.value == "True" else "True")
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Not):
        return value.expression
    inner = value if isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) else \
        value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.UnaryOperation(operator=cst.Not(), expression=inner)


def _with_args(call: cst.Call, args: Sequence[cst.Arg]) -> cst.Call:
    """``call`` with ``args``, the commas laid out as the original call had them."""
    args = list(args)
    last_comma = call.args[-1].comma if call.args else cst.MaybeSentinel.DEFAULT
    middle = call.args[0].comma if len(call.args) > 1 and isinstance(call.args[0].comma, cst.Comma) else \
        cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    out = []
    for i, a in enumerate(args):
        if i < len(args) - 1:
            own = a.comma
            comma = own if isinstance(own, cst.Comma) and not (
                isinstance(last_comma, cst.Comma) and own.deep_equals(last_comma)) else middle
        else:
            comma = last_comma
        out.append(a.with_changes(comma=comma))
    return call.with_changes(args=out)


def _dict_of(pairs: List[Tuple[str, cst.BaseExpression]]) -> cst.Dict:
    elements = []
    for i, (k, v) in enumerate(pairs):
        comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")) if i < len(pairs) - 1 else cst.MaybeSentinel.DEFAULT
        elements.append(cst.DictElement(key=cst.SimpleString(f'"{k}"'), value=v, comma=comma))
    return cst.Dict(elements=elements)


def comet_args(call: cst.Call) -> Tuple[cst.Call, List[str]]:
    """The 2.x ``CometLogger`` call for a 1.9 one, and marker texts for what cannot be mapped."""
    whys: List[str] = []
    if any(a.keyword is not None and a.keyword.value in ("online", "offline_directory", "project", "workspace")
           for a in call.args):
        return call, whys  # already 2.x
    args: List[cst.Arg] = []
    changed = False
    for i, a in enumerate(call.args):
        if a.star:
            args.append(a)
            continue
        name = a.keyword.value if a.keyword is not None else (COMET_POSITIONAL[i] if i < len(COMET_POSITIONAL) else None)
        if name is None:
            return call, [f"`CometLogger` takes no extra positional arguments in 2.x; see {GUIDE}"]
        if a.keyword is None:
            changed = True
        if name == "offline":
            args.append(_kw("online", _negate(a.value), a))
            changed = True
        elif name == "rest_api_key":
            whys.append(f"`CometLogger(rest_api_key=)` was removed in 2.x: configure the key in comet_ml; see {GUIDE}")
            args.append(_kw(name, a.value, a) if a.keyword is None else a)
        elif name in COMET_RENAMES:
            args.append(_kw(COMET_RENAMES[name], a.value, a))
            changed = True
        else:
            args.append(_kw(name, a.value, a) if a.keyword is None else a)
    if not changed:
        return call, whys
    return _with_args(call, args), whys


def cli_args(call: cst.Call) -> Tuple[cst.Call, List[str]]:
    """``LightningCLI(save_config_*=, description=, env_prefix=, env_parse=)`` regrouped."""
    whys: List[str] = []
    groups: Dict[str, List[Tuple[str, cst.BaseExpression]]] = {"save_config_kwargs": [], "parser_kwargs": []}
    kept: List[cst.Arg] = []
    existing: Dict[str, cst.Arg] = {}
    for a in call.args:
        key = a.keyword.value if a.keyword is not None else None
        if key in CLI_SAVE_CONFIG:
            groups["save_config_kwargs"].append((CLI_SAVE_CONFIG[key], a.value))
        elif key in CLI_PARSER:
            groups["parser_kwargs"].append((CLI_PARSER[key], a.value))
        else:
            if key in groups:
                existing[key] = a
            kept.append(a)
    if not any(groups.values()):
        return call, whys
    for group, pairs in groups.items():
        if not pairs:
            continue
        if group in existing:
            old = existing[group]
            if not isinstance(old.value, cst.Dict):
                whys.append(f"merge these `LightningCLI` arguments into `{group}` by hand; see {GUIDE}")
                return call, whys
            merged = _dict_of(pairs)
            elements = list(old.value.elements)
            if elements:
                elements[-1] = elements[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            new_dict = old.value.with_changes(elements=[*elements, *merged.elements])
            kept = [k.with_changes(value=new_dict) if k is old else k for k in kept]
        else:
            kept.append(_kw(group, _dict_of(pairs)))
    return _with_args(call, kept), whys


class LoggersCliRule(GatedRule):
    code = CODE
    name = "loggers-and-cli"
    summary = "CometLogger and LightningCLI arguments take their 2.x names; the 1.5 ProgressBar() becomes TQDMProgressBar()."
    spec_rows = ("L2", "CLI1", "CLI2", "CLI3", "A8-callbacks-loggers")
    guide = (f"{GUIDE} (rows on `CometLogger` arguments, LightningCLI `save_config_*`/`description`/`env_prefix`; "
             "PRs 20275, 16380, 15651)")
    safety = Safety.REVIEW
    # The datamodule arguments are looked for as keywords of ``super().__init__(...)``: the three
    # transform names in full, and ``dims`` only followed by ``=``, in a file that calls
    # ``super`` (``may_apply``): the word alone is in every tensor library.
    triggers = ("CometLogger", "LightningCLI", "ProgressBar", "lr_sch_names", "self.size(",
                "train_transforms", "val_transforms", "test_transforms", "dims")
    description = (
        "`CometLogger` became keyword-only in 2.x and renamed its arguments: `project_name` -> `project`, "
        "`experiment_name` -> `name`, `save_dir` -> `offline_directory`, and `offline=X` -> `online=not X` "
        "(2.x's own compatibility shim copies `offline` into `online` without negating it, so an "
        "offline run would silently go online). `rest_api_key` is gone (marked). `LightningCLI`'s "
        "`save_config_filename/overwrite/multifile` become `save_config_kwargs={...}` and "
        "`description/env_prefix/env_parse` become `parser_kwargs={...}` (the mapping 1.9 applied "
        "itself). A `LightningCLI` with class instances as defaults gets a note (use `lazy_instance`). "
        "The 1.5 `ProgressBar(...)` callback (now `TQDMProgressBar`) is renamed where it is called; "
        "`LearningRateMonitor.lr_sch_names` is marked (use `lrs.keys()`), and so are the "
        "`LightningDataModule` arguments `train_transforms`/`val_transforms`/`test_transforms`/`dims` "
        "and `self.size()` in a datamodule."
    )
    examples = (
        Example(
            title="comet-offline",
            before=("from pytorch_lightning.loggers import CometLogger\n\n"
                    "logger = CometLogger(save_dir=\"logs\", project_name=\"p\", offline=True)\n"),
            after=("from pytorch_lightning.loggers import CometLogger\n\n"
                   "logger = CometLogger(offline_directory=\"logs\", project=\"p\", online=False)\n"),
        ),
        Example(
            title="cli-kwargs",
            before=("from pytorch_lightning.cli import LightningCLI\n\n"
                    "cli = LightningCLI(MyModel, save_config_overwrite=True, env_prefix=\"APP\")\n"),
            after=("from pytorch_lightning.cli import LightningCLI\n\n"
                   "cli = LightningCLI(MyModel, save_config_kwargs={\"overwrite\": True}, "
                   "parser_kwargs={\"env_prefix\": \"APP\"})\n"),
        ),
        Example(
            title="other-comet",
            before="from mylib import CometLogger\n\nlogger = CometLogger(save_dir=\"x\", offline=True)\n",
            after=None,
        ),
    )
    coverage = {"L2": Handling.REWRITTEN, "CLI1": Handling.REWRITTEN, "CLI2": Handling.REWRITTEN,
                "CLI3": Handling.NOTED, "A8-callbacks-loggers": Handling.REWRITTEN}

    def may_apply(self, text: str) -> bool:
        if any(t in text for t in self.triggers[:5]):
            return True
        return "super" in text and (any(t in text for t in self.triggers[5:8])
                                    or ("dims" in text and _DIMS_KEYWORD.search(text) is not None))

    def gate_kinds(self, text: str) -> Optional[FrozenSet[str]]:
        # Without a Lightning import (or lr_sch_names), only the datamodule checks are left.
        return None if may_import_pl_root(text) or "lr_sch_names" in text else _DATAMODULE_KIND

    def needed(self, text: str, ctx: RuleContext) -> bool:
        facts = file_facts(text)
        if not facts.parsed or "lr_sch_names" in facts.attributes:
            return True
        # Calls are only rewritten when reached through an import of a Lightning root, and the
        # callee's name is then among the file's import paths and attributes; the call is made
        # by the class's name or by a name a Lightning import binds to it.
        if imports_pl_root(facts):
            words = import_path_words(facts) & _called_classes(facts)
            if "CometLogger" in words or "ProgressBar" in words or (
                    "LightningCLI" in words and not _CLI_KEYWORDS.isdisjoint(facts.keywords)):
                return True
        # The datamodule checks: ``super().__init__(dims=...)`` or ``self.size()`` inside a class
        # of this file that the index knows is a LightningDataModule (the rule does not index).
        init_kwargs = facts.call_keywords.get("__init__", frozenset())
        if not ((not init_kwargs.isdisjoint(_DATAMODULE_KWARGS) and "super" in facts.calls)
                or ("size" in facts.calls and "self" in facts.names)):
            return False
        for name in facts.classes:
            info = ctx.project.resolve(name, ctx.path)
            if info is not None and info.path == ctx.path and ctx.project.is_lightning_module(info, DATAMODULE_NAMES):
                return True
        return False

    def apply(self, module: cst.Module, ctx: RuleContext) -> cst.Module:
        info = collect(module)
        paths = {b.name: b.path for b in info.bindings.values()}
        t = _Transformer(paths, module, ctx)
        out = transform(module, t)
        if t.new_imports:
            out = add_imports(out, t.new_imports)
        if t.touched:
            out = drop_unused(out, info, t.touched)
        return out


def _resolve(expr: cst.BaseExpression, paths: Dict[str, str]) -> Optional[str]:
    """The root-relative name a callee refers to through the file's imports."""
    path = dotted(expr)
    if path is None:
        return None
    head, _, rest = path.partition(".")
    if head not in paths:
        return None
    rel = to_relative(paths[head] + ("." + rest if rest else ""))
    return rel[1] if rel else None


class _Transformer(PrunedTransformer):
    def __init__(self, paths: Dict[str, str], module: cst.Module, ctx: RuleContext) -> None:
        self.paths = paths
        self.module = module
        self.ctx = ctx
        self.marks: List[List[str]] = []
        self.datamodule: List[bool] = []
        self.new_imports: List[Tuple[str, str, Optional[str]]] = []
        self.touched: set = set()

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            self.marks.append([])
        return super().on_visit(node)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        info = self.ctx.project.resolve(node.name.value, self.ctx.path)
        is_dm = info is not None and info.path == self.ctx.path and bool(
            self.ctx.project.is_lightning_module(info, DATAMODULE_NAMES))
        self.datamodule.append(is_dm)

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        self.datamodule.pop()
        return updated

    def _mark(self, why: str) -> None:
        if self.marks and why not in self.marks[-1]:
            self.marks[-1].append(why)

    def _datamodule_call(self, call: cst.Call) -> None:
        """``super().__init__(train_transforms=...)`` and ``self.size()`` in a LightningDataModule."""
        func = call.func
        if not isinstance(func, cst.Attribute):
            return
        if func.attr.value == "__init__" and isinstance(func.value, cst.Call) and dotted(func.value.func) == "super":
            gone = [a.keyword.value for a in call.args if a.keyword is not None
                    and a.keyword.value in DATAMODULE_REMOVED_KWARGS]
            if gone:
                self._mark(f"`LightningDataModule` no longer takes {', '.join(f'`{g}`' for g in gone)} (removed in 1.7/1.8): "
                           f"keep them as attributes of your datamodule; see {GUIDE}")
        elif func.attr.value == "size" and dotted(func.value) == "self":
            self._mark(f"`LightningDataModule.size()` was removed in 1.7: return the shape from your own attribute; see {GUIDE}")

    def on_leave(self, original, updated):
        out = super().on_leave(original, updated)
        if isinstance(original, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            for why in self.marks.pop():
                if isinstance(out, cst.CSTNode):
                    out = add_marker_once(out, CODE, why)
        return out

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if updated.attr.value == "lr_sch_names" and self.marks:
            why = f"`LearningRateMonitor.lr_sch_names` was removed in 1.7: use `lr_monitor.lrs.keys()`; see {GUIDE}"
            if why not in self.marks[-1]:
                self.marks[-1].append(why)
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if self.datamodule and self.datamodule[-1]:
            self._datamodule_call(original)
        rel = _resolve(original.func, self.paths)
        if rel in COMET_NAMES:
            new, whys = comet_args(updated)
            self.marks[-1].extend(w for w in whys if w not in self.marks[-1])
            return new
        if rel in CLI_NAMES:
            new, whys = cli_args(updated)
            self.marks[-1].extend(w for w in whys if w not in self.marks[-1])
            if any(isinstance(a.value, cst.Dict) and any(isinstance(e.value, cst.Call) for e in a.value.elements
                                                          if isinstance(e, cst.DictElement))
                   for a in updated.args if a.keyword is not None and a.keyword.value == "trainer_defaults"):
                line, col = self.ctx.position(self.module, original)
                self.ctx.report(CODE, "LightningCLI defaults that are class instances should be wrapped in "
                                      f"`lazy_instance(...)` in 2.x (CLI3); see {GUIDE}", Kind.NOTE, line, col)
            return new
        if rel in PROGRESS_NAMES:
            return updated.with_changes(func=self._tqdm(updated.func, rel))
        return updated

    def _tqdm(self, func: cst.BaseExpression, rel: str) -> cst.BaseExpression:
        if isinstance(func, cst.Attribute):
            return func.with_changes(attr=cst.Name("TQDMProgressBar"))
        assert isinstance(func, cst.Name)
        full = self.paths[func.value]
        module = full.rsplit(".", 1)[0]
        for name, path in self.paths.items():
            if path == module + ".TQDMProgressBar":
                return cst.Name(name)
        self.new_imports.append((module, "TQDMProgressBar", None))
        self.paths["TQDMProgressBar"] = module + ".TQDMProgressBar"
        self.touched.add(func.value)
        return cst.Name("TQDMProgressBar")
