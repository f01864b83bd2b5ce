"""LM203: ``CometLogger`` and ``LightningCLI`` arguments that 2.x renamed or regrouped, and the
1.5 ``ProgressBar`` callback."""

from __future__ import annotations

import ast
import re
from typing import Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

import libcst as cst

from lightmigrate.cst.walk import transform, PrunedTransformer
from lightmigrate.analysis.ast_nodes import ast_dotted, ast_nodes
from lightmigrate.cst.helpers import fresh_name, marker_text
from lightmigrate.output.findings import Kind
from lightmigrate.rules.shared.import_find import FileView
from lightmigrate.rules.shared.import_rewrite import add_imports, add_marker_once, collect, dotted, drop_unused, to_relative
from lightmigrate.catalog.imports import GUIDE
from lightmigrate.rules.base import Example, Handling, Rule, RuleContext, Safety, Site, SourceFile
from lightmigrate.rules.shared.class_edit import DATAMODULE_NAMES, may_define_kind
from lightmigrate.analysis.text_patterns import COMMENT, word_at_start

CODE = "LM203"
DATAMODULE_KIND = frozenset({"datamodule"})

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
DATAMODULE_REMOVED_KWARGS = ("train_transforms", "val_transforms", "test_transforms", "dims")

# The marker texts.
COMET_EXTRA_WHY = f"`CometLogger` takes no extra positional arguments in 2.x; see {GUIDE}"
COMET_REST_KEY_WHY = f"`CometLogger(rest_api_key=)` was removed in 2.x: configure the key in comet_ml; see {GUIDE}"
LR_SCH_NAMES_WHY = f"`LearningRateMonitor.lr_sch_names` was removed in 1.7: use `lr_monitor.lrs.keys()`; see {GUIDE}"
SIZE_WHY = f"`LightningDataModule.size()` was removed in 1.7: return the shape from your own attribute; see {GUIDE}"


def _cli_merge_why(group: str) -> str:
    return f"merge these `LightningCLI` arguments into `{group}` by hand; see {GUIDE}"


def _datamodule_kwargs_why(gone: List[str]) -> str:
    return (f"`LightningDataModule` no longer takes {', '.join(f'`{g}`' for g in gone)} (removed in 1.7/1.8): "
            f"keep them as attributes of your datamodule; see {GUIDE}")


# The actions of the sites (each at the line of the call or attribute it is about).
COMET, CLI, PROGRESS, DATAMODULE, LR_SCH_NAMES = "comet", "cli", "progress", "datamodule", "lr_sch_names"
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
            return call, [COMET_EXTRA_WHY]
        if a.keyword is None:
            changed = True
        if name == "offline":
            args.append(_kw("online", _negate(a.value), a))
            changed = True
        elif name == "rest_api_key":
            whys.append(COMET_REST_KEY_WHY)
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
                whys.append(_cli_merge_why(group))
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


class LoggersCliRule(Rule):
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

    def find(self, source: SourceFile, ctx: RuleContext) -> List[Site]:
        # A call resolves to Lightning only through an import that names it; ``super().__init__``
        # and ``self.size()`` matter only in a LightningDataModule.
        if "ightning" not in source.text and "lr_sch_names" not in source.text \
                and not may_define_kind(ctx, DATAMODULE_KIND):
            return []
        return _Find(source, ctx).sites

    def fix(self, module: cst.Module, sites: Sequence[Site], ctx: RuleContext) -> cst.Module:
        info = collect(module)
        paths = {b.name: b.path for b in info.bindings.values()}
        t = _Transformer(paths, module, ctx, frozenset((s.action, s.line) for s in sites),
                         taken=set(info.names) | set(info.bindings))
        out = transform(module, t)
        if t.new_imports:
            out = add_imports(out, t.new_imports)
        if t.touched:
            out = drop_unused(out, info, t.touched)
        return out


# ---------------------------------------------------------------------------------------------
# find: what ``_Transformer`` changes, marks or notes, on Python's ``ast``


def _comet_verdict(call: ast.Call) -> Tuple[bool, List[str]]:
    """Whether ``comet_args`` changes the call, and its marker texts."""
    if any(k.arg in ("online", "offline_directory", "project", "workspace") for k in call.keywords):
        return False, []
    whys: List[str] = []
    changed = False
    for i, (name, positional) in enumerate(_arguments(call)):
        if name == "*":
            continue
        if positional:
            name = COMET_POSITIONAL[i] if i < len(COMET_POSITIONAL) else None
            if name is None:
                return False, [COMET_EXTRA_WHY]
            changed = True
        if name == "offline" or name in COMET_RENAMES:
            changed = True
        elif name == "rest_api_key":
            whys.append(COMET_REST_KEY_WHY)
    return changed, whys


def _arguments(call: ast.Call) -> List[Tuple[str, bool]]:
    """The call's arguments in source order: (keyword, False) for a keyword argument, ("*",
    ...) for ``*a`` and ``**k``, ("", True) for a positional one."""
    found = [((a.lineno, a.col_offset), ("*", True) if isinstance(a, ast.Starred) else ("", True)) for a in call.args]
    found += [((k.lineno, k.col_offset), ("*", False) if k.arg is None else (k.arg, False)) for k in call.keywords]
    return [what for _, what in sorted(found)]


def _cli_verdict(call: ast.Call) -> Tuple[bool, List[str]]:
    """Whether ``cli_args`` changes the call, and its marker texts."""
    groups = {"save_config_kwargs": False, "parser_kwargs": False}
    existing: Dict[str, ast.expr] = {}
    for k in call.keywords:
        if k.arg in CLI_SAVE_CONFIG:
            groups["save_config_kwargs"] = True
        elif k.arg in CLI_PARSER:
            groups["parser_kwargs"] = True
        elif k.arg in groups:
            existing[k.arg] = k.value
    if not any(groups.values()):
        return False, []
    for group, used in groups.items():
        if used and group in existing and not isinstance(existing[group], ast.Dict):
            return False, [_cli_merge_why(group)]
    return True, []


def _instance_defaults(call: ast.Call) -> bool:
    """``trainer_defaults={...: SomeClass(...)}``: the CLI3 note."""
    return any(isinstance(k.value, ast.Dict) and any(key is not None and isinstance(v, ast.Call)
                                                     for key, v in zip(k.value.keys, k.value.values))
               for k in call.keywords if k.arg == "trainer_defaults")


def _datamodule_why(call: ast.Call) -> Optional[str]:
    """The marker for ``super().__init__(<removed arguments>)`` and ``self.size()`` (in a
    LightningDataModule)."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return None
    if func.attr == "__init__" and isinstance(func.value, ast.Call) and ast_dotted(func.value.func) == "super":
        gone = [k.arg for k in call.keywords if k.arg in DATAMODULE_REMOVED_KWARGS]
        return _datamodule_kwargs_why(gone) if gone else None  # type: ignore[arg-type]
    if func.attr == "size" and ast_dotted(func.value) == "self":
        return SIZE_WHY
    return None


def _lr_sch_names_import(node: ast.AST) -> bool:
    """``import a.lr_sch_names`` / ``from a.lr_sch_names import b``: libcst reads the dotted
    module name as attributes."""
    if type(node) is ast.Import:
        return any("lr_sch_names" in a.name.split(".")[1:] for a in node.names)  # type: ignore[attr-defined]
    module = node.module if type(node) is ast.ImportFrom else None  # type: ignore[attr-defined]
    return bool(module) and "lr_sch_names" in module.split(".")[1:]


class _Find:
    """The sites of ``_Transformer`` in one file."""

    def __init__(self, source: SourceFile, ctx: RuleContext) -> None:
        self.ctx = ctx
        self.sites: List[Site] = []
        self.view = view = FileView.of(source)
        datamodule_calls: List[Tuple[ast.Call, str]] = []
        for node in view.nodes:
            kind = type(node)
            if kind is ast.Call:
                why = _datamodule_why(node)  # type: ignore[arg-type]
                if why is not None:
                    datamodule_calls.append((node, why))  # type: ignore[arg-type]
                self._call(node)  # type: ignore[arg-type]
            elif kind is ast.Attribute:
                if node.attr == "lr_sch_names":  # type: ignore[attr-defined]
                    self._site(node, LR_SCH_NAMES, False, [LR_SCH_NAMES_WHY])
            elif (kind is ast.Import or kind is ast.ImportFrom) and _lr_sch_names_import(node):
                self._site(node, LR_SCH_NAMES, False, [LR_SCH_NAMES_WHY])
        if datamodule_calls:
            inside = self._datamodule_nodes()
            for call, why in datamodule_calls:
                if id(call) in inside:
                    self._site(call, DATAMODULE, False, [why])
        self.sites.sort(key=lambda s: (s.line, s.col, s.action))

    def _datamodule_nodes(self) -> Set[int]:
        """The ids of the nodes whose innermost class (decorators and bases included, as the
        transformer has it) is a LightningDataModule of the project defined in this file."""
        classes = [n for n in self.view.nodes if type(n) is ast.ClassDef]  # (outer classes first)
        innermost: Dict[int, bool] = {}
        for node in classes:
            info = self.ctx.project.resolve(node.name, self.ctx.path)  # type: ignore[attr-defined]
            is_dm = info is not None and info.path == self.ctx.path and bool(
                self.ctx.project.is_lightning_module(info, DATAMODULE_NAMES))
            for inner in ast_nodes(node):
                innermost[id(inner)] = is_dm
        return {key for key, is_dm in innermost.items() if is_dm}

    def _site(self, node: ast.AST, action: str, changed: bool, whys: Sequence[str]) -> None:
        """A site at ``node`` when the call changes or one of ``whys`` is not yet marked
        (above the statement: libcst keeps the comments above the first one apart)."""
        if not changed:
            above = self.view.comments.above(self.view.place(node).statement)
            if all(marker_text(CODE, why) in above for why in whys):
                return
        self.sites.append(Site(node.lineno, node.col_offset, "", action, tuple(whys)))  # type: ignore[attr-defined]

    def _call(self, node: ast.Call) -> None:
        path = ast_dotted(node.func)
        full = self.view.resolve(path) if path is not None else None
        found = to_relative(full) if full is not None else None
        rel = found[1] if found else None
        if rel in COMET_NAMES:
            self._site(node, COMET, *_comet_verdict(node))
        elif rel in CLI_NAMES:
            changed, whys = _cli_verdict(node)
            self._site(node, CLI, changed or _instance_defaults(node), whys)
        elif rel in PROGRESS_NAMES:
            self._site(node, PROGRESS, True, ())


# ---------------------------------------------------------------------------------------------
# fix


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
    """Carries out the sites ``only`` names: (action, line of the call or attribute)."""

    def __init__(self, paths: Dict[str, str], module: cst.Module, ctx: RuleContext,
                 only: FrozenSet[Tuple[str, int]], taken: Optional[Set[str]] = None) -> None:
        self.paths = paths
        self.taken = taken or set()  # the file's names: an import the fix adds must not shadow one
        self.module = module
        self.ctx = ctx
        self.only = only
        self.lines = frozenset(line for _, line in only)
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

    def _allowed(self, action: str, node: cst.CSTNode) -> bool:
        """Whether a site says to act on ``node`` (an original node) this way."""
        return (action, self.ctx.position(self.module, node)[0]) in self.only

    def _datamodule_call(self, call: cst.Call) -> None:
        """``super().__init__(train_transforms=...)`` and ``self.size()`` in a LightningDataModule."""
        func = call.func
        if not isinstance(func, cst.Attribute):
            return
        if func.attr.value == "__init__" and isinstance(func.value, cst.Call) and dotted(func.value.func) == "super":
            gone = [a.keyword.value for a in call.args if a.keyword is not None
                    and a.keyword.value in DATAMODULE_REMOVED_KWARGS]
            if gone and self._allowed(DATAMODULE, call):
                self._mark(_datamodule_kwargs_why(gone))
        elif func.attr.value == "size" and dotted(func.value) == "self" and self._allowed(DATAMODULE, call):
            self._mark(SIZE_WHY)

    def on_leave(self, original, updated):
        out = super().on_leave(original, updated)
        if isinstance(original, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            for why in self.marks.pop():
                if isinstance(out, cst.CSTNode):
                    out = add_marker_once(out, CODE, why)
        return out

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if updated.attr.value == "lr_sch_names" and self.marks and self._allowed(LR_SCH_NAMES, original):
            if LR_SCH_NAMES_WHY not in self.marks[-1]:
                self.marks[-1].append(LR_SCH_NAMES_WHY)
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if self.datamodule and self.datamodule[-1]:
            self._datamodule_call(original)
        rel = _resolve(original.func, self.paths)
        if rel in COMET_NAMES and self._allowed(COMET, original):
            new, whys = comet_args(updated)
            self.marks[-1].extend(w for w in whys if w not in self.marks[-1])
            return new
        if rel in CLI_NAMES and self._allowed(CLI, original):
            new, whys = cli_args(updated)
            self.marks[-1].extend(w for w in whys if w not in self.marks[-1])
            if any(isinstance(a.value, cst.Dict) and any(isinstance(e.value, cst.Call) for e in a.value.elements
                                                          if isinstance(e, cst.DictElement))
                   for a in updated.args if a.keyword is not None and a.keyword.value == "trainer_defaults"):
                line, col = self.ctx.position(self.module, original)
                self.ctx.report(CODE, "LightningCLI defaults that are class instances should be wrapped in "
                                      f"`lazy_instance(...)` in 2.x (CLI3); see {GUIDE}", Kind.NOTE, line, col)
            return new
        if rel in PROGRESS_NAMES and self._allowed(PROGRESS, original):
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
        # a name of the file's own (``class TQDMProgressBar(ProgressBar)``) keeps its meaning: the
        # import takes another name
        local = "TQDMProgressBar" if "TQDMProgressBar" not in self.taken else \
            fresh_name("LightningTQDMProgressBar", self.taken)
        self.new_imports.append((module, "TQDMProgressBar", None if local == "TQDMProgressBar" else local))
        self.paths[local] = module + ".TQDMProgressBar"
        self.taken.add(local)
        self.touched.add(func.value)
        return cst.Name(local)
