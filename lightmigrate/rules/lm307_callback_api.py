"""LM307: the Callback and DataModule API of 1.9 that changed in 2.x (spec A.2, C2-C13;
C1 and C4, the ``opt_idx`` parameters, are LM004's).

Rewritten:
- C2 ``on_predict_epoch_end(self, trainer, pl_module, outputs)``: the parameter goes; a body that
  reads it gets 1.9's value back (``trainer.predict_loop.predictions``, one list per dataloader).
- C2 ``BasePredictionWriter.write_on_epoch_end(trainer, pl_module, predictions, batch_indices)``:
  1.9 passed ``predictions`` as one list per dataloader, 2.x passes a flat list when there is
  one dataloader (``batch_indices`` is nested in both): an override that reads ``predictions``
  gets 1.9's nesting back at the top of its body.
- C5 ``ProgressBarBase`` -> ``ProgressBar`` (imports from ``callbacks``, ``callbacks.progress``,
  ``callbacks.progress.base`` and the names that use it).
- C6 ``self.train_batch_idx`` / ``val_`` / ``test_`` / ``predict_batch_idx`` in progress bars ->
  the loop counters the 1.9 properties read.
- C7 ``self.main_progress_bar`` in ``TQDMProgressBar`` subclasses -> ``train_progress_bar``.
- C8 ``get_standard_metrics(trainer, pl_module)`` -> ``get_standard_metrics(trainer)`` (import
  from ``progress.progress_bar``; the result no longer has ``"loss"``: marked when indexed so).
- C10 ``LearningRateFinder(...)`` without ``update_attr`` -> ``update_attr=False`` (1.9's default).
- C12 ``parser = MyData.add_argparse_args(parser)`` of a project DataModule -> the
  ``parser.add_argument("--name", type=..., default=...)`` calls 1.9.5 made for the typed
  parameters of its ``__init__`` (``rules/shared/datamodule_argparse.py``: 1.9's types, defaults,
  ``str_to_bool`` parsing and special cases), and ``MyData.from_argparse_args(args, **kw)`` ->
  ``MyData(name=args.name, ..., **kw)`` of the parameters 1.9.5 took from the namespace.

Marked: C9 ``QuantizationAwareTraining`` (no replacement), C12 DataModule
``from_argparse_args``/``add_argparse_args`` of a DataModule whose ``__init__`` is not known
(Lightning's own class, a class outside the run, a default that is not a literal) or in a form the
rewrite does not take (``use_argument_group=``, a parser given to ``from_argparse_args``,
``**kwargs``), C13 ``BatchSizeFinder``/``scale_batch_size`` (2.6 shrinks the result by 5% and caps
it at 8192).
"""

from __future__ import annotations

import ast
import io
import tokenize
from typing import Callable, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

import libcst as cst
from lightmigrate.cst.helpers import is_attribute, is_name

from lightmigrate.cst.helpers import (
    code_of,
    BodyFacts,
    body_of,
    fresh_name,
    keep_only_params,
    param_names,
    parse_statements,
    positional_params,
    prepend_statements,
)
from lightmigrate.output.findings import Kind
from lightmigrate.rules.base import Example, Handling, Rule, RuleContext, Safety, Site, SourceFile
from lightmigrate.rules.shared.class_edit import (
    PROGRESS_BAR_NAMES,
    TQDM_BAR_NAMES,
    DATAMODULE_NAMES,
    KindTransformer,
    derives_from,
    kind_classes,
)
from lightmigrate.rules.shared.predict_results import predict_results
from lightmigrate.rules.shared.datamodule_argparse import add_argument_code, datamodule_params
from lightmigrate.analysis.project import import_aliases
from lightmigrate.rules.shared.marking import StatementMarker
from lightmigrate.rules.shared.method_sites import (
    has_marker_above, identifiers, imports_lightning, index_source, marked_statement, methods, names_variable, parents,
    physical_lines, positional, statement_lines, writes_identifier,
)
from lightmigrate.cst.walk import transform, PrunedTransformer

CODE = "LM307"
BATCH_IDX = {
    "train_batch_idx": "{t}.fit_loop.epoch_loop.batch_progress.current.processed",
    "val_batch_idx": ("({t}.fit_loop.epoch_loop.val_loop if {t}.state.fn == \"fit\" else {t}.validate_loop)"
                      ".batch_progress.current.processed"),
    "test_batch_idx": "{t}.test_loop.batch_progress.current.processed",
    "predict_batch_idx": "{t}.predict_loop.batch_progress.current.processed",
}
WHY_QAT = ("`QuantizationAwareTraining` was removed in Lightning 2.0 without replacement: quantize with "
           "`torch.ao.quantization` (prepare_qat / convert) in the module")
WHY_ARGPARSE = ("LightningDataModule `{name}` was removed in Lightning 2.0: use LightningCLI, or build the "
                "DataModule from `vars(args)` filtered by its `__init__` parameters")
WHY_BSF = ("Lightning 2.6 shrinks the batch size found by binsearch by 5% (`margin=0.05`) and caps it at "
           "`max_val=8192`: pass `margin=0.0` and a large `max_val` to keep the 1.x result")
WHY_LOSS = "`get_standard_metrics` no longer returns \"loss\" (only \"v_num\"): log the loss with prog_bar=True"

_ROOTS = ("pytorch_lightning", "lightning")
WRITER_NAMES = frozenset({"BasePredictionWriter"})
_FIXED_IMPORTS = frozenset({"ProgressBarBase", "get_standard_metrics"})
_ARGPARSE_CALLS = frozenset({"from_argparse_args", "add_argparse_args"})


class _Members(PrunedTransformer):
    """``self.X`` attribute rewrites inside one method."""

    def __init__(self, slf: str, table: Dict[str, str]) -> None:
        self.slf = slf
        self.table = table
        self.hits: List[str] = []

    def leave_Attribute(self, original, updated):
        if is_name(updated.value, self.slf) and updated.attr.value in self.table:
            self.hits.append(updated.attr.value)
            return cst.parse_expression(self.table[updated.attr.value].format(t=f"{self.slf}.trainer", s=self.slf))
        return updated


class _Fix(KindTransformer):
    """Carries out the method sites of callback classes, found by the line of their ``def``:
    "predict-end" (the ``outputs`` parameter goes) and "members" (data: the table of
    ``self.X`` rewrites, as pairs)."""

    def __init__(self, ctx, module, sites: Sequence[Site]) -> None:
        super().__init__(ctx, module, only=frozenset(s.target for s in sites))
        self.by_line: Dict[int, List[Site]] = {}
        for site in sites:
            self.by_line.setdefault(site.line, []).append(site)

    def edit_class(self, kind, original, updated):
        items = list(updated.body.body)
        changed = False
        for i, item in enumerate(items):
            if not isinstance(item, cst.FunctionDef):
                continue
            new = item
            for site in self.by_line.get(self.ctx.position(self.module, original.body.body[i])[0], ()):
                if site.action == "predict-end":
                    new = self._predict_end(new)
                elif site.action == "writer-epoch":
                    new = self._writer_epoch(new)
                elif site.action == "members":
                    table = dict(site.data)
                    members = _Members(positional_params(item)[0].name.value, table)
                    new = transform(new, members)  # type: ignore[assignment]
                    for hit in dict.fromkeys(members.hits):
                        self.report(CODE, original.body.body[i], f"{self.class_name}: self.{hit} -> "
                                    f"{table[hit].format(t='self.trainer', s='self')}")
            if new is not item:
                items[i] = new
                changed = True
        return updated.with_changes(body=updated.body.with_changes(body=items)) if changed else updated

    def _writer_epoch(self, func: cst.FunctionDef) -> cst.FunctionDef:
        names = param_names(func)
        trainer, predictions = names[1], names[3]
        facts = BodyFacts(body_of(func))
        loaders = fresh_name("predict_loaders", facts.loaded | facts.bound | set(names))
        new = prepend_statements(func, parse_statements(
            f"""
            {loaders} = {trainer}.predict_dataloaders
            if not isinstance({loaders}, (list, tuple)) or len({loaders}) == 1:
                {predictions} = [{predictions}]  # 1.x passed one list per dataloader
            """))
        self.report(CODE, func, f"{self.class_name}.write_on_epoch_end: `{predictions}` wrapped in a list for a "
                    "single dataloader, as 1.x passed it (2.x passes it flat)")
        return new

    def _predict_end(self, func: cst.FunctionDef) -> cst.FunctionDef:
        names = param_names(func)
        outputs, module = names[3], names[2]
        facts = BodyFacts(body_of(func))
        new = keep_only_params(func, 3)
        if facts.uses(outputs):
            loaders = fresh_name("predict_loaders", facts.loaded | facts.bound | set(names))
            new = prepend_statements(new, predict_results(module, outputs, loaders))
        self.report(CODE, func, f"{self.class_name}.on_predict_epoch_end: `{outputs}` parameter removed"
                    + (" (rebuilt from trainer.predict_loop.predictions)" if facts.uses(outputs) else ""))
        return new


class _Calls(PrunedTransformer):
    """Module-wide call and import fixes: C5, C8, C10. ``keep_base_name``: the file has a
    ``ProgressBar`` of its own, so ``ProgressBarBase`` is imported as ``ProgressBar as
    ProgressBarBase`` and its uses keep their name (only ``x.ProgressBarBase`` is renamed)."""

    def __init__(self, rename_base: bool, keep_base_name: bool = False) -> None:
        self.fixed: List[str] = []
        self.rename_base = rename_base
        self.keep_base_name = keep_base_name

    def leave_ImportFrom(self, original, updated):
        if updated.module is None or isinstance(updated.names, cst.ImportStar):
            return updated
        mod = code_of(updated.module)
        parts = mod.split(".")
        if parts[0] not in ("pytorch_lightning", "lightning"):
            return updated
        before = {code_of(a.name) for a in original.names}
        if not before & {"ProgressBarBase", "get_standard_metrics"}:
            return updated
        if mod.endswith("callbacks.progress.base"):
            mod = mod[: -len("base")] + "progress_bar"
        self.fixed.append("progress bar imports")
        names = updated.names
        if self.rename_base and self.keep_base_name:
            names = [a.with_changes(name=cst.Name("ProgressBar"), asname=a.asname or cst.AsName(
                name=cst.Name("ProgressBarBase"))) if code_of(a.name) == "ProgressBarBase" else a for a in names]
        return updated.with_changes(module=cst.parse_expression(mod), names=names)

    def leave_Name(self, original, updated):
        if self.rename_base and not self.keep_base_name and updated.value == "ProgressBarBase":
            return updated.with_changes(value="ProgressBar")
        return updated

    def leave_Attribute(self, original, updated):
        if self.rename_base and self.keep_base_name and updated.attr.value == "ProgressBarBase":
            return updated.with_changes(attr=cst.Name("ProgressBar"))
        return updated

    def leave_Call(self, original, updated):
        f = updated.func
        fname = f.attr.value if isinstance(f, cst.Attribute) else f.value if isinstance(f, cst.Name) else ""
        if fname == "get_standard_metrics" and len(updated.args) == 2 and all(a.keyword is None for a in updated.args):
            self.fixed.append("get_standard_metrics(trainer, pl_module) -> get_standard_metrics(trainer)")
            return updated.with_changes(args=[updated.args[0].with_changes(comma=cst.MaybeSentinel.DEFAULT)])
        if fname == "LearningRateFinder" and not any(a.keyword is not None and a.keyword.value == "update_attr"
                                                      for a in updated.args) and \
                not any(a.star for a in updated.args) and len([a for a in updated.args if a.keyword is None]) < 7:
            self.fixed.append("LearningRateFinder(update_attr=False)")
            args = list(updated.args)
            new = cst.Arg(keyword=cst.Name("update_attr"), value=cst.Name("False"),
                          equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
            if args:
                last = args[-1]
                args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                new = new.with_changes(comma=last.comma)
            return updated.with_changes(args=[*args, new])
        return updated


def _why(datamodules: Callable[[], frozenset]):
    def why(node: cst.CSTNode) -> Optional[str]:
        if isinstance(node, cst.Name) and node.value == "QuantizationAwareTraining":
            return WHY_QAT
        if isinstance(node, cst.Call):
            f = node.func
            if isinstance(f, cst.Attribute) and f.attr.value in ("from_argparse_args", "add_argparse_args") and \
                    isinstance(f.value, cst.Name) and f.value.value in datamodules():
                return WHY_ARGPARSE.format(name=f.attr.value)
            fname = f.attr.value if isinstance(f, cst.Attribute) else f.value if isinstance(f, cst.Name) else ""
            if fname in ("BatchSizeFinder", "scale_batch_size") and not any(
                    a.keyword is not None and a.keyword.value == "margin" for a in node.args):
                return WHY_BSF
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Call) and (
                is_name(node.value.func, "get_standard_metrics") or is_attribute(node.value.func, "get_standard_metrics")):
            key = node.slice[0].slice
            if isinstance(key, cst.Index) and isinstance(key.value, cst.SimpleString):
                return WHY_LOSS
        return None
    return why


def _one_string(text: str, node: ast.expr) -> bool:
    """Whether ``node`` is written as one string literal (libcst's ``SimpleString``)."""
    if not (isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes))):
        return False
    code = ast.get_source_segment(text, node) or ""
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(code).readline) if t.type == tokenize.STRING]
    except (tokenize.TokenError, SyntaxError):
        return False
    return len(tokens) == 1


def _call_name(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _lightning_import(node: ast.AST) -> bool:
    """``from <Lightning root>... import names`` (not ``*``; a relative module counts, as in libcst)."""
    return isinstance(node, ast.ImportFrom) and node.module is not None and node.names[0].name != "*" \
        and node.module.split(".")[0] in _ROOTS


def _call_fixed(call: ast.Call) -> bool:
    """Whether ``_Calls.leave_Call`` rewrites ``call``."""
    name = _call_name(call)
    if name == "get_standard_metrics":
        return len(call.args) + len(call.keywords) == 2 and all(kw.arg is None for kw in call.keywords)
    if name == "LearningRateFinder":
        return not any(kw.arg in ("update_attr", None) for kw in call.keywords) and \
            not any(isinstance(a, ast.Starred) for a in call.args) and len(call.args) < 7
    return False


def _loss_key(text: str, node: ast.Subscript) -> bool:
    """``get_standard_metrics(...)["key"]``: the first subscript element one string literal."""
    value = node.value
    if not (isinstance(value, ast.Call) and _call_name(value) == "get_standard_metrics"
            and isinstance(value.func, (ast.Name, ast.Attribute))):
        return False
    first = node.slice
    if isinstance(first, ast.Tuple) and first.elts and \
            (first.lineno, first.col_offset) == (first.elts[0].lineno, first.elts[0].col_offset):
        first = first.elts[0]  # ``x["a", 1]``: libcst's first element is "a"
    return _one_string(text, first)


def _reasons(source: SourceFile, datamodules: Callable[[], FrozenSet[str]],
             rewritten: FrozenSet[int] = frozenset()) -> List[ast.AST]:
    """The nodes ``_why`` gives a reason for (the marks: QuantizationAwareTraining, DataModule
    argparse calls, BatchSizeFinder without ``margin``, "loss" read from get_standard_metrics)."""
    text = source.text
    words = ("QuantizationAwareTraining", "argparse_args", "BatchSizeFinder", "scale_batch_size",
             "get_standard_metrics")
    if not any(w in text for w in words):
        return []
    qat = "QuantizationAwareTraining" in text
    found: List[ast.AST] = []
    for node in source.nodes:
        if qat and writes_identifier(node, "QuantizationAwareTraining"):
            found.append(node)
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr in _ARGPARSE_CALLS and isinstance(f.value, ast.Name) and \
                    f.value.id in datamodules():
                if id(node) not in rewritten:
                    found.append(node)
            elif _call_name(node) in ("BatchSizeFinder", "scale_batch_size") and \
                    not any(kw.arg == "margin" for kw in node.keywords):
                found.append(node)
        elif isinstance(node, ast.Subscript) and _loss_key(text, node):
            found.append(node)
    return found


def _rewrapped(func: ast.AST, trainer: str) -> bool:
    """Whether the body of ``func`` starts (after a docstring) with ``X = <trainer>.predict_dataloaders``:
    the statements ``_writer_epoch`` adds, there already."""
    body = list(func.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and \
            isinstance(body[0].value.value, str):
        body = body[1:]
    first = body[0] if body else None
    value = first.value if isinstance(first, ast.Assign) else None
    return isinstance(value, ast.Attribute) and value.attr == "predict_dataloaders" and \
        isinstance(value.value, ast.Name) and value.value.id == trainer


def _method_sites(cls: ast.ClassDef, table: Dict[str, str], writer: bool = False) -> List[Site]:
    """The sites of the methods of one Lightning callback class statement (``table``: the
    ``self.X`` rewrites its progress-bar bases call for)."""
    sites = []
    for func in methods(cls):
        params = positional(func)
        if not params:
            continue
        skip: Set[ast.AST] = set()
        args = func.args
        if writer and func.name == "write_on_epoch_end" and len(params) == 5 and not args.vararg \
                and not args.kwarg and not args.kwonlyargs and params[3].arg in identifiers(func.body) \
                and not _rewrapped(func, params[1].arg):
            sites.append(Site(func.lineno, func.col_offset, cls.name, "writer-epoch", None))
        if func.name == "on_predict_epoch_end" and len(params) == 4 and \
                3 < len(params) - len(args.defaults):  # the fourth has no default
            sites.append(Site(func.lineno, func.col_offset, cls.name, "predict-end", None))
            skip.add(params[3])  # dropped with its annotation
        if table:
            slf = params[0].arg
            todo: List[ast.AST] = [func]
            hit = False
            while todo and not hit:
                node = todo.pop()
                if node in skip:
                    continue
                if isinstance(node, ast.Attribute) and node.attr in table and isinstance(node.value, ast.Name) \
                        and node.value.id == slf:
                    hit = True
                todo.extend(ast.iter_child_nodes(node))
            if hit:
                sites.append(Site(func.lineno, func.col_offset, cls.name, "members", tuple(sorted(table.items()))))
    return sites


def _datamodule_names(ctx: RuleContext, tree: Optional[ast.AST]) -> FrozenSet[str]:
    """The names of the project's DataModule classes, ``LightningDataModule``, and the names the
    file ``tree`` binds to one of them (``from data import MyData as D``)."""
    names = frozenset(c.name for c in ctx.project.kind_classes(DATAMODULE_NAMES)) | {"LightningDataModule"}
    if tree is None:
        return names
    return names | {alias for alias, name in import_aliases(tree).items() if name in names}


_PARSER_USES = frozenset({"add_argument", "parse_args", "parse_known_args", "set_defaults"})
Scope = Tuple[int, int]  # a function's first and last line; (0, 0): the module


class _Parsers:
    """The argparse parsers of one file, per function: the options each function declares on
    each parser name (``parser.add_argument("--name")``, ``dest=``, ``parser.set_defaults(name=...)``),
    the functions that build one parser (``parser = ArgumentParser(...)``), those whose parser
    may get options this rule does not see (it goes to other code than ``add_argument``,
    ``set_defaults``, ``parse_args`` and the DataModule calls this rule rewrites), and the
    namespaces each function parses, with the parser name they come from (None:
    ``build_parser().parse_args()``)."""

    def __init__(self, source: SourceFile, rewritten_adds: Set[int]) -> None:
        self.functions = sorted(((n.lineno, n.end_lineno or n.lineno) for n in source.nodes
                                 if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), reverse=True)
        self.declared: Dict[Tuple[Scope, str], Set[str]] = {}  # (scope, parser name) -> options
        self.builders: Dict[Scope, List[str]] = {}  # scope -> the names its ArgumentParser(...) calls bind
        self.parsed: Dict[Scope, Dict[str, Optional[str]]] = {}  # scope -> namespace -> its parser's name
        self.open: Set[Scope] = set()
        uses: Dict[Scope, List[ast.AST]] = {}
        for node in source.nodes:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                where = self.scope(node)
                func = node.value.func
                fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                names = [t.id for t in node.targets if isinstance(t, ast.Name)] + [
                    t.elts[0].id for t in node.targets if isinstance(t, ast.Tuple) and t.elts
                    and isinstance(t.elts[0], ast.Name)]
                if fname == "ArgumentParser":
                    self.builders.setdefault(where, []).extend(names)
                elif fname in ("parse_args", "parse_known_args") and isinstance(func, ast.Attribute):
                    parser = func.value.id if isinstance(func.value, ast.Name) else None
                    self.parsed.setdefault(where, {}).update({n: parser for n in names})
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    isinstance(node.func.value, ast.Name):
                key = (self.scope(node), node.func.value.id)
                if node.func.attr == "add_argument":
                    here = self.declared.setdefault(key, set())
                    for a in node.args:
                        if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("--"):
                            here.add(a.value[2:].replace("-", "_"))
                    here.update(k.value.value for k in node.keywords if k.arg == "dest"
                                and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str))
                elif node.func.attr == "set_defaults":
                    self.declared.setdefault(key, set()).update(k.arg for k in node.keywords if k.arg)
                    if any(k.arg is None for k in node.keywords):
                        self.open.add(key[0])
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                uses.setdefault(self.scope(node), []).append(node)
        parents = {id(child): parent for parent in source.nodes for child in ast.iter_child_nodes(parent)}
        for where, names in self.builders.items():
            if len(names) != 1:
                self.open.add(where)
                continue
            for use in uses.get(where, ()):
                if use.id != names[0]:  # type: ignore[attr-defined]
                    continue
                up = parents.get(id(use))
                if isinstance(up, ast.Attribute) and up.attr in _PARSER_USES:
                    continue
                if isinstance(up, ast.Return) or (isinstance(up, ast.Call) and id(up) in rewritten_adds):
                    continue
                self.open.add(where)  # given to other code, which may add options

    def scope(self, node: ast.AST) -> Scope:
        return next((f for f in self.functions if f[0] <= node.lineno <= f[1]), (0, 0))  # type: ignore[attr-defined]

    def known(self, call: ast.Call, namespace: str) -> Tuple[Set[str], bool]:
        """The options the namespace ``namespace`` given to ``call`` surely has, and whether it
        has no other: parsed in the function of ``call`` by a parser of that function (it has
        the options declared there; no other when the function built it), or by the file's only
        parser (``args = build_parser().parse_args()``). (set(), False) otherwise."""
        where = self.scope(call)
        parsed = self.parsed.get(where, {})
        if namespace not in parsed:
            return set(), False
        parser = parsed[namespace]
        if parser is not None:
            complete = self.builders.get(where) == [parser] and where not in self.open
            return self.declared.get((where, parser), set()), complete
        if len(self.builders) != 1:
            return set(), False
        builder, names = next(iter(self.builders.items()))
        if len(names) != 1:
            return set(), False
        return self.declared.get((builder, names[0]), set()), builder not in self.open


def _datamodule_argparse(source: SourceFile, ctx: RuleContext, datamodules: Callable[[], FrozenSet[str]],
                         rewritten: Set[int]) -> List[Site]:
    """C12: the ``DM.add_argparse_args(parser)`` statements and ``DM.from_argparse_args(args, ...)``
    calls of a project DataModule ``DM`` whose ``__init__`` is known (``datamodule_params``),
    which become the ``parser.add_argument`` calls 1.9.5 made and a ``DM(...)`` call of what
    1.9.5 passed (the ids of those calls go to ``rewritten``: they get no marker). 1.9 passed each
    ``__init__`` parameter the namespace had: one the namespace surely has (``_Parsers.known``)
    is passed as ``args.name``; one it surely lacks is left out; another one is passed as
    ``getattr(args, "name", default)``."""
    calls = [n for n in source.nodes if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and n.func.attr in _ARGPARSE_CALLS and isinstance(n.func.value, ast.Name)
             and n.func.value.id in datamodules() and n.func.value.id != "LightningDataModule"]
    if not calls:
        return []
    params = {}
    for call in calls:
        name = call.func.value.id  # type: ignore[attr-defined]
        if name not in params:
            info = ctx.project.resolve(import_aliases(source.tree, source.nodes).get(name, name), source.path)
            params[name] = None if info is None else datamodule_params(info, ctx.project)
    statements = {id(st.value): st for st in source.nodes if isinstance(st, (ast.Assign, ast.Expr))}
    adds: List[Tuple[ast.Call, ast.stmt, str]] = []
    for call in calls:
        if params[call.func.value.id] is None or call.func.attr != "add_argparse_args":  # type: ignore[attr-defined]
            continue
        stmt = statements.get(id(call))
        if stmt is None or call.keywords or len(call.args) != 1 or not isinstance(call.args[0], ast.Name):
            continue  # use_argument_group=..., or a parser used in an expression: marked
        parser = call.args[0].id
        if isinstance(stmt, ast.Assign) and (len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name)
                                             or stmt.targets[0].id != parser):
            continue
        adds.append((call, stmt, parser))
        rewritten.add(id(call))
    parsers = _Parsers(source, set(rewritten))
    sites: List[Site] = []
    for call, stmt, parser in adds:
        found = params[call.func.value.id]  # type: ignore[attr-defined]
        parsers.declared.setdefault((parsers.scope(call), parser), set()).update(
            p.name for p in found if p.option is not None)
        sites.append(Site(stmt.lineno, stmt.col_offset, call.func.value.id, "dm-argparse-add",  # type: ignore
                          (parser, tuple(add_argument_code(parser, p) for p in found if p.option is not None))))
    for call in calls:
        name = call.func.value.id  # type: ignore[attr-defined]
        found = params[name]
        if found is None or call.func.attr != "from_argparse_args":  # type: ignore[attr-defined]
            continue
        if len(call.args) != 1 or not isinstance(call.args[0], ast.Name) or any(k.arg is None for k in call.keywords):
            continue  # a parser given, or **kwargs that may override anything: marked
        namespace = call.args[0].id
        given = {k.arg for k in call.keywords}
        known, complete = parsers.known(call, namespace)
        passed = []
        for p in found:
            if p.name in given or p.name in ("self", "args", "kwargs"):
                continue
            if p.name in known or p.default is None:
                passed.append((p.name, f"{namespace}.{p.name}"))
            elif not complete:
                passed.append((p.name, f'getattr({namespace}, "{p.name}", {p.default})'))
        rewritten.add(id(call))
        sites.append(Site(call.lineno, call.col_offset, name, "dm-argparse-from", tuple(passed)))
    return sites


class _DataModuleArgparse(PrunedTransformer):
    """Carries out the "dm-argparse-add" sites (statements, by the position of their expression)
    and the "dm-argparse-from" sites (calls, by their position)."""

    def __init__(self, ctx: RuleContext, module: cst.Module, sites: Sequence[Site]) -> None:
        self.ctx = ctx
        self.module = module
        self.adds = {(s.line, s.col + 1): s for s in sites if s.action == "dm-argparse-add"}
        self.froms = {(s.line, s.col + 1): s for s in sites if s.action == "dm-argparse-from"}

    def leave_SimpleStatementLine(self, original, updated):
        if len(original.body) != 1:
            return updated
        site = self.adds.get(self.ctx.position(self.module, original.body[0]))
        if site is None:
            return updated
        parser, lines = site.data
        where = self.ctx.position(self.module, original.body[0])
        if not lines:
            self.ctx.report(CODE, f"C12: {site.target}.add_argparse_args added no option in 1.9 (no parameter of "
                            "its __init__ has a str, int, float or bool annotation): removed", Kind.FIXED, *where)
            return cst.RemoveFromParent()
        new = [cst.parse_statement(line + "\n") for line in lines]
        new[0] = new[0].with_changes(leading_lines=updated.leading_lines)
        self.ctx.report(CODE, f"C12: {site.target}.add_argparse_args became the add_argument calls 1.9.5 made for "
                        f"its __init__ parameters", Kind.FIXED, *where)
        return new[0] if len(new) == 1 else cst.FlattenSentinel(new)

    def leave_Call(self, original, updated):
        site = self.froms.get(self.ctx.position(self.module, original))
        if site is None:
            return updated
        self.ctx.report(CODE, f"C12: {site.target}.from_argparse_args became a {site.target}(...) call of the "
                        "parameters 1.9.5 took from the namespace", Kind.FIXED,
                        *self.ctx.position(self.module, original))
        new_args = [cst.Arg(keyword=cst.Name(name), value=cst.parse_expression(code),
                            equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
                    for name, code in site.data]
        kept = list(updated.args[1:])
        args = new_args + kept
        spaced = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        args = [a.with_changes(comma=spaced) if i < len(args) - 1 else a.with_changes(
            comma=cst.MaybeSentinel.DEFAULT) for i, a in enumerate(args)]
        return cst.Call(func=updated.func.value, args=args)


class CallbackApiRule(Rule):
    code = CODE
    name = "callback-api"
    summary = "Callback and DataModule API changes: predict-epoch outputs, progress-bar API, LR finder default."
    spec_rows = ("C2", "C5", "C6", "C7", "C8", "C9", "C10", "C12", "C13")
    guide = ("https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html (rows on Callback.on_predict_epoch_end, "
             "ProgressBarBase, main_progress_bar, get_standard_metrics, "
             "QuantizationAwareTraining, LearningRateFinder, LightningDataModule argparse; PRs 16655, 16539, "
             "17058, 16760, 16695, 16192, 16750, 16462, 16708)")
    safety = Safety.PRESERVING
    triggers = ("on_predict_epoch_end", "write_on_epoch_end", "ProgressBarBase", "_batch_idx", "main_progress_bar",
                "get_standard_metrics", "QuantizationAwareTraining", "LearningRateFinder", "argparse_args",
                "BatchSizeFinder", "scale_batch_size")
    description = (
        "2.x changed several Callback and DataModule APIs. Rewritten with 1.9's meaning: a callback's "
        "`on_predict_epoch_end(trainer, pl_module, outputs)` loses `outputs` (rebuilt, one list per dataloader, "
        "when the body reads it); a `BasePredictionWriter.write_on_epoch_end` that reads `predictions` gets them "
        "wrapped in a list for a single dataloader, as 1.9 passed them; `ProgressBarBase` -> `ProgressBar` (imported "
        "`as ProgressBarBase` when the file has a `ProgressBar` of its own); `train/val/test/predict_batch_idx` -> the loop counters "
        "the 1.9 properties returned; `main_progress_bar` -> `train_progress_bar`; `get_standard_metrics(trainer, "
        "pl_module)` -> `get_standard_metrics(trainer)`; `LearningRateFinder` gets `update_attr=False` (the 1.9 "
        "default); a project DataModule's `add_argparse_args(parser)` becomes the `parser.add_argument` calls 1.9.5 made "
        "for its typed `__init__` parameters (same types, defaults and bool parsing) and its `from_argparse_args(args)` "
        "a constructor call of the parameters 1.9.5 took from the namespace. Marked: `QuantizationAwareTraining`, "
        "DataModule `from_argparse_args`/`add_argparse_args` whose `__init__` is not known, "
        "`BatchSizeFinder`/`scale_batch_size` (2.6 margin and cap), and reading \"loss\" from "
        "`get_standard_metrics`."
    )
    coverage = {"C2": Handling.REWRITTEN, "C5": Handling.REWRITTEN,
                "C6": Handling.REWRITTEN, "C7": Handling.REWRITTEN, "C8": Handling.REWRITTEN,
                "C9": Handling.MARKED, "C10": Handling.REWRITTEN, "C12": Handling.REWRITTEN, "C13": Handling.MARKED}
    examples = (
        Example(
            title="prediction outputs",
            before='''\
from pytorch_lightning.callbacks import Callback


class Summary(Callback):
    def on_predict_epoch_end(self, trainer, pl_module, outputs):
        self.count = len(outputs[0])
''',
            after='''\
from pytorch_lightning.callbacks import Callback


class Summary(Callback):
    def on_predict_epoch_end(self, trainer, pl_module):
        predict_loaders = pl_module.trainer.predict_dataloaders
        outputs = pl_module.trainer.predict_loop.predictions
        if not isinstance(predict_loaders, (list, tuple)) or len(predict_loaders) == 1:
            outputs = [outputs]
        self.count = len(outputs[0])
''',
        ),
        Example(
            title="progress bars and the LR finder",
            before='''\
from pytorch_lightning.callbacks import LearningRateFinder, TQDMProgressBar
from pytorch_lightning.callbacks.progress.base import ProgressBarBase


class Bar(TQDMProgressBar):
    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        self.main_progress_bar.set_postfix(step=self.train_batch_idx)


class Quiet(ProgressBarBase):
    pass


finder = LearningRateFinder(min_lr=1e-5)
''',
            after='''\
from pytorch_lightning.callbacks import LearningRateFinder, TQDMProgressBar
from pytorch_lightning.callbacks.progress.progress_bar import ProgressBar


class Bar(TQDMProgressBar):
    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        self.train_progress_bar.set_postfix(step=self.trainer.fit_loop.epoch_loop.batch_progress.current.processed)


class Quiet(ProgressBar):
    pass


finder = LearningRateFinder(min_lr=1e-5, update_attr=False)
''',
        ),
        Example(
            title="a class of the file named `ProgressBar` keeps its base's name",
            before='''\
from pytorch_lightning.callbacks.progress import ProgressBarBase


class ProgressBar(ProgressBarBase):
    def disable(self):
        self.enable = False
''',
            after='''\
from pytorch_lightning.callbacks.progress import ProgressBar as ProgressBarBase


class ProgressBar(ProgressBarBase):
    def disable(self):
        self.enable = False
''',
        ),
        Example(
            title="2.x forms are left alone",
            before='''\
from pytorch_lightning.callbacks import Callback, LearningRateFinder


class Summary(Callback):
    def on_predict_epoch_end(self, trainer, pl_module):
        pass


finder = LearningRateFinder(update_attr=True)
''',
            after=None,
        ),
    )

    def find(self, source: SourceFile, ctx: RuleContext) -> List[Site]:
        index_source(source, ctx)
        tree = source.tree
        text = source.text
        sites: List[Site] = []
        # Methods of Lightning callback classes, in a file that imports Lightning
        lightning_file = imports_lightning(tree)
        if lightning_file:
            for cls, _ in kind_classes(source, ctx, frozenset({"callback"})):
                table: Dict[str, str] = {}
                if derives_from(ctx, cls.name, PROGRESS_BAR_NAMES):
                    table.update(BATCH_IDX)
                if derives_from(ctx, cls.name, TQDM_BAR_NAMES):
                    table["main_progress_bar"] = "{s}.train_progress_bar"
                sites += _method_sites(cls, table, derives_from(ctx, cls.name, WRITER_NAMES))
        # Imports, the ProgressBarBase rename and calls, anywhere in the file
        base_imported = "callbacks.ProgressBarBase" in text
        for node in source.nodes:
            if _lightning_import(node):
                names = {a.name for a in node.names}
                base_imported = base_imported or "ProgressBarBase" in names
                if names & _FIXED_IMPORTS:
                    sites.append(Site(node.lineno, node.col_offset, node.module, "import"))
            elif isinstance(node, ast.Call) and _call_fixed(node):
                sites.append(Site(node.lineno, node.col_offset, _call_name(node), "call"))
        if base_imported and "ProgressBarBase" in text and any(writes_identifier(n, "ProgressBarBase") for n in source.nodes):
            # a class or import of the file named ``ProgressBar`` keeps the user's names
            keep = "ProgressBar" in text and names_variable(source.nodes, "ProgressBar")
            sites.append(Site(0, 0, "ProgressBarBase", "rename", keep))
        # The marks, on statements that have no LM307 mark yet
        found: List[FrozenSet[str]] = []

        def datamodules() -> FrozenSet[str]:  # the project's DataModule classes, found when first asked
            if not found:
                found.append(_datamodule_names(ctx, tree))
            return found[0]

        rewritten: Set[int] = set()
        if "argparse_args" in text:
            sites += _datamodule_argparse(source, ctx, datamodules, rewritten)
        reasons = _reasons(source, datamodules, frozenset(rewritten))
        if reasons:
            lines = physical_lines(text)
            up = parents(tree)
            in_suite = {st for st, line in statement_lines(tree, text) if line is None}
            marked = set()
            for node in reasons:
                stmt = marked_statement(node, up, in_suite)
                if stmt is not None and stmt not in marked and not has_marker_above(lines, stmt, CODE):
                    marked.add(stmt)
                    sites.append(Site(stmt.lineno, stmt.col_offset, "", "mark"))
        return sites

    def fix(self, module: cst.Module, sites: Sequence[Site], ctx: RuleContext) -> cst.Module:
        out = module
        argparse_sites = [s for s in sites if s.action in ("dm-argparse-add", "dm-argparse-from")]
        if argparse_sites:
            out = transform(out, _DataModuleArgparse(ctx, module, argparse_sites))
            module = out
        method_sites = [s for s in sites if s.action in ("predict-end", "writer-epoch", "members")]
        if method_sites:
            out = transform(out, _Fix(ctx, module, method_sites))
        # The imports, the rename and the calls: their nodes are found with the same tests as
        # find's (their positions may have moved: a predict-end fix adds lines).
        if any(s.action in ("import", "call", "rename") for s in sites):
            calls = _Calls(any(s.action == "rename" for s in sites), any(s.action == "rename" and s.data for s in sites))
            out = transform(out, calls)
            for fix in dict.fromkeys(calls.fixed):
                ctx.report(CODE, fix, Kind.FIXED)
        if any(s.action == "mark" for s in sites):
            found: List[frozenset] = []

            def datamodules() -> frozenset:  # the project's DataModule classes, found when first asked
                if not found:
                    found.append(_datamodule_names(ctx, None if "argparse_args" not in module.code
                                                   else ast.parse(module.code)))
                return found[0]

            out = transform(out, StatementMarker(CODE, _why(datamodules), (cst.Name, cst.Call, cst.Subscript)))
        return out

