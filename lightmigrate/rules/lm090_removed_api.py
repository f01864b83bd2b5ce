"""LM090: the last resort. Marks any remaining use of a 1.x API that Lightning 2.x removed.

It runs after every other rule. Whatever they rewrote is gone by then; whatever is left (an
import of a removed module, ``Trainer(gpus=...)``, ``trainer.root_gpu``,
``Trainer.add_argparse_args``) gets a ``# TODO(lightmigrate): LM090`` marker above its statement,
with what to do from the spec catalogue, so nothing removed is left silent.

What counts as removed comes from :mod:`lightmigrate.catalog.removed` (static data from the spec,
each entry checked against the installed Lightning 2.6.6 by the tests, so valid 2.x code is never
marked; ``pl.`` in a marker stands for the import root the file uses). Uses are recognised
through the file's own imports of ``pytorch_lightning`` / ``lightning.pytorch`` (``import
pytorch_lightning as pl``, ``from pytorch_lightning import Trainer``); ``trainer.<attr>`` is
recognised on a name ``trainer`` or an attribute ``.trainer``.
A statement that already carries a marker from another rule is left alone.
"""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

import libcst as cst

from lightmigrate import MARKER_PREFIX
from lightmigrate.cst.helpers import add_marker, dotted_name
from lightmigrate.analysis.ast_nodes import ast_dotted
from lightmigrate.catalog.removed import NAMES, TRAINER_ATTRS, TRAINER_KWARGS, Entry
from lightmigrate.rules.base import Example, Handling, Rule, RuleContext, Safety, Site, SourceFile
from lightmigrate.rules.shared.import_find import Comments, Lines, statement_nodes
from lightmigrate.rules.shared.trainer_object import StoreTargets, ast_not_lightning, cst_config_trainer
from lightmigrate.catalog.spec import rows_by_id
from lightmigrate.cst.walk import transform, PrunedTransformer, walk

CODE = "LM090"
GUIDE = "https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html"
ROOTS = ("pytorch_lightning", "lightning.pytorch")
STATEMENTS = (cst.SimpleStatementLine, cst.BaseCompoundStatement, cst.ExceptHandler)
SCOPED = ("LightningModule", "LightningDataModule", "Trainer")  # class-level entries (``Trainer.x``)




def _relative(full: str) -> Optional[str]:
    """``full`` relative to its import root, or None when it is not under one."""
    for root in ROOTS:
        if full == root:
            return ""
        if full.startswith(root + "."):
            return full[len(root) + 1:]
    return None


def lookup_name(full: str) -> Optional[Tuple[str, Entry]]:
    """The catalogue entry covering dotted name ``full`` (a module entry covers what is under it)."""
    rel = _relative(full)
    if not rel:
        return None
    parts = rel.split(".")
    candidates = [".".join(parts[:i]) for i in range(len(parts), 0, -1)]
    for scope in SCOPED:  # pytorch_lightning.trainer.trainer.Trainer.add_argparse_args
        if scope in parts[:-1]:
            at = parts.index(scope)
            candidates.append(".".join(parts[at:at + 2]))
    for key in candidates:
        if key in NAMES:
            return key, NAMES[key]
    return None


def _hint(entry: Entry) -> str:
    row, hint = entry
    if not hint:
        spec = rows_by_id().get(row)
        hint = " ".join(spec.new.split()) if spec is not None and spec.new else "removed in 2.x"
        if len(hint) > 140:
            hint = hint[:139].rstrip() + "…"
    return f"{hint} [{row}]"


def _has_any_marker(node: cst.CSTNode) -> bool:
    return any(line.comment is not None and MARKER_PREFIX in line.comment.value
               for line in getattr(node, "leading_lines", ()))


class _Aliases(cst.CSTVisitor):
    """Local names bound to Lightning modules or objects by the file's imports."""

    def __init__(self) -> None:
        self.names: Dict[str, str] = {}

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = dotted_name(alias.name)
            if full is None or _relative(full) is None and full != "lightning":
                continue
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.names[alias.asname.name.value] = full
            else:
                head = full.split(".")[0]
                self.names[head] = head

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        module = dotted_name(node.module)
        if module is None or (_relative(module) is None and module != "lightning"):
            return
        for alias in node.names:
            name = dotted_name(alias.name)
            local = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) else name
            if name and local:
                self.names[local] = f"{module}.{name}"


class _Marker(PrunedTransformer):
    """Marks the statements that start at the ``lines`` of the sites (``ast`` numbering: a
    decorated definition starts at ``def``), each with the removed APIs it uses."""

    def __init__(self, aliases: Dict[str, str], module: cst.Module, ctx: RuleContext, lines: FrozenSet[int]) -> None:
        self.aliases = aliases
        self.module = module
        self.ctx = ctx
        self.lines = lines
        self.stack: List[Dict[str, str]] = []  # per open statement: offence key -> text
        self.inner: set = set()  # ids of Attribute nodes inside a chain already checked
        self.in_import = 0
        self.stores = StoreTargets()  # what statements store to (never Lightning's Trainer)

    # -- statements -------------------------------------------------------------------------
    def _push(self) -> None:
        self.stack.append({})

    def _pop(self, original, updated):
        found = self.stack.pop()
        if not found or _has_any_marker(updated) or self.ctx.position(self.module, original)[0] not in self.lines:
            return updated
        why = "removed in Lightning 2.x: " + "; ".join(found.values()) + f" (see {GUIDE})"
        return add_marker(updated, CODE, why)

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, STATEMENTS):
            self._push()
        return super().on_visit(node)

    def on_leave(self, original: cst.CSTNode, updated):
        result = super().on_leave(original, updated)
        if isinstance(original, STATEMENTS):
            return self._pop(original, result)
        return result

    def _offend(self, key: str, text: str) -> None:
        if self.stack:
            self.stack[-1].setdefault(key, text)

    # -- what is removed --------------------------------------------------------------------
    def _full(self, node: cst.BaseExpression) -> Optional[str]:
        dotted = dotted_name(node)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        if head not in self.aliases:
            return None
        full = self.aliases[head] + ("." + rest if rest else "")
        if full.startswith("lightning.") and not full.startswith("lightning.pytorch"):
            return None
        return full

    def _check_name(self, full: str) -> None:
        hit = lookup_name(full)
        if hit is not None:
            key, entry = hit
            self._offend("name:" + key, f"`pl.{key}` -> {_hint(entry)}")

    def visit_Import(self, node: cst.Import) -> None:
        self.in_import += 1
        for alias in node.names:
            full = dotted_name(alias.name)
            if full:
                self._check_name(full)

    def leave_Import(self, original: cst.Import, updated: cst.Import) -> cst.Import:
        self.in_import -= 1
        return updated

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.in_import += 1
        if node.relative or node.module is None:
            return
        module = dotted_name(node.module)
        if module is None or _relative(module) is None:
            return
        self._check_name(module)
        if not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                name = dotted_name(alias.name)
                if name:
                    self._check_name(f"{module}.{name}")

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom) -> cst.ImportFrom:
        self.in_import -= 1
        return updated

    # the expressions stored to or deleted (``config.trainer.devices = 1`` is a user's config)
    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.stores.add(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.stores.add(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self.stores.add(node.target)

    def visit_Del(self, node: cst.Del) -> None:
        self.stores.add(node.target)

    def visit_For(self, node: cst.For) -> None:
        self.stores.add(node.target)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self.stores.add(node.target)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if self.in_import:
            return
        value = node.value
        if isinstance(value, cst.Attribute):
            self.inner.add(id(value))
        if id(node) not in self.inner:
            full = self._full(node)
            if full:
                self._check_name(full)
        attr = node.attr.value
        if attr in TRAINER_ATTRS and (
            (isinstance(value, cst.Name) and value.value == "trainer")
            or (isinstance(value, cst.Attribute) and value.attr.value == "trainer")
        ) and id(node) not in self.stores.ids and not cst_config_trainer(value):  # (not a user's config)
            self._offend("attr:" + attr, f"`trainer.{attr}` -> {_hint(TRAINER_ATTRS[attr])}")

    def visit_Call(self, node: cst.Call) -> None:
        full = self._full(node.func)
        if not full or full.split(".")[-1] != "Trainer" or _relative(full) is None:
            return
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value in TRAINER_KWARGS:
                kw = arg.keyword.value
                self._offend("kw:" + kw, f"`Trainer({kw}=)` -> {_hint(TRAINER_KWARGS[kw])}")


def _covered_rows() -> Dict[str, Handling]:
    rows = {row for row, _ in (*NAMES.values(), *TRAINER_KWARGS.values(), *TRAINER_ATTRS.values())}
    return {row: Handling.MARKED for row in sorted(rows)}


class RemovedApiRule(Rule):
    code = CODE
    name = "removed-api"
    summary = "Last resort: marks any remaining use of a 1.x import, Trainer argument or Trainer attribute that 2.x removed."
    spec_rows = ("A.3", "A.4", "A.5", "A.6", "A.8")  # row by row: `coverage` / `lightmigrate coverage`
    coverage = _covered_rows()
    guide = f"{GUIDE} (all rows: removed imports, Trainer arguments, Trainer methods and attributes)"
    safety = Safety.REVIEW
    triggers = ("pytorch_lightning", "lightning.pytorch", "trainer.")
    description = (
        "Runs after every other rule and changes no code: what is still left of an API Lightning 2.x "
        "removed (an import from a removed module such as `pytorch_lightning.metrics` or "
        "`pytorch_lightning.core.lightning`, a dotted use such as `pl.Trainer.add_argparse_args`, a "
        "`Trainer(...)` keyword such as `gpus=` or `resume_from_checkpoint=`, an attribute such as "
        "`trainer.root_gpu`) gets one `# TODO(lightmigrate): LM090` marker above its statement, naming "
        "each removed API with what to use instead and its spec row. The list of removed APIs comes from "
        "the spec catalogue and is checked against the installed Lightning 2.6.6, so code that is valid "
        "2.x is never marked. A statement another rule already marked is left alone."
    )
    examples = (
        Example(
            title="a removed module and a removed Trainer argument",
            before='''\
import pytorch_lightning as pl
from pytorch_lightning.core.lightning import LightningModule

trainer = pl.Trainer(max_epochs=1, gpus=1)
''',
            after='''\
import pytorch_lightning as pl
# TODO(lightmigrate): LM090 removed in Lightning 2.x: `pl.core.lightning` -> `pl.core.module` (or `pl.LightningModule`) [A8-imports] (see https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html)
from pytorch_lightning.core.lightning import LightningModule

# TODO(lightmigrate): LM090 removed in Lightning 2.x: `Trainer(gpus=)` -> `accelerator="gpu", devices=N` (gpus=0/None means CPU) [T1] (see https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html)
trainer = pl.Trainer(max_epochs=1, gpus=1)
''',
        ),
        Example(
            title="removed Trainer methods and attributes",
            before='''\
from pytorch_lightning import Trainer


def main(parser, args, model):
    parser = Trainer.add_argparse_args(parser)
    trainer = Trainer.from_argparse_args(args)
    if trainer.root_gpu is not None:
        trainer.fit(model)
''',
            after='''\
from pytorch_lightning import Trainer


def main(parser, args, model):
    # TODO(lightmigrate): LM090 removed in Lightning 2.x: `pl.Trainer.add_argparse_args` -> build the parser by hand or use LightningCLI [T-meth3] (see https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html)
    parser = Trainer.add_argparse_args(parser)
    # TODO(lightmigrate): LM090 removed in Lightning 2.x: `pl.Trainer.from_argparse_args` -> build `Trainer(**kwargs)` from the parsed values, or use LightningCLI [T-meth3] (see https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html)
    trainer = Trainer.from_argparse_args(args)
    # TODO(lightmigrate): LM090 removed in Lightning 2.x: `trainer.root_gpu` -> `trainer.strategy.root_device.index` [A8-trainer-attributes] (see https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html)
    if trainer.root_gpu is not None:
        trainer.fit(model)
''',
        ),
        Example(
            title="valid 2.x code is left alone",
            before='''\
import lightning.pytorch as pl
from lightning.pytorch.callbacks import ProgressBar
from pytorch_lightning.utilities.rank_zero import rank_zero_only

trainer = pl.Trainer(accelerator="gpu", devices=2, use_distributed_sampler=False)
print(trainer.num_devices, trainer.strategy)
''',
            after=None,
        ),
    )

    def find(self, source: SourceFile, ctx: RuleContext) -> List[Site]:
        # One site per statement (or ``except`` clause) that uses a removed API and carries no
        # marker yet, of any rule.
        return _Find(source).sites

    def fix(self, module: cst.Module, sites: Sequence[Site], ctx: RuleContext) -> cst.Module:
        aliases = _Aliases()
        walk(module, aliases)
        start = _marker_out_of_header(module)
        return transform(start, _Marker(aliases.names, start, ctx, frozenset(s.line for s in sites)))


# ---------------------------------------------------------------------------------------------
# find: the statements ``_Marker`` marks, on Python's ``ast``


def _aliases(nodes: List[ast.AST]) -> Dict[str, str]:
    """``_Aliases`` on ``ast`` (``nodes``: the file's, ``SourceFile.nodes``): the local names
    Lightning imports bind (the last binding of a name wins, in source order)."""
    names: Dict[str, str] = {}
    imports = [n for n in nodes if type(n) is ast.Import or type(n) is ast.ImportFrom]
    imports.sort(key=lambda n: (n.lineno, n.col_offset))
    for node in imports:
        if isinstance(node, ast.Import):
            for alias in node.names:
                full = alias.name
                if _relative(full) is None and full != "lightning":
                    continue
                if alias.asname:
                    names[alias.asname] = full
                else:
                    head = full.split(".")[0]
                    names[head] = head
        else:
            if node.level or not node.module or any(a.name == "*" for a in node.names):
                continue
            if _relative(node.module) is None and node.module != "lightning":
                continue
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


# the kinds of node ``_Find._offends`` may say yes to
_MAY_OFFEND = frozenset({ast.Import, ast.ImportFrom, ast.Attribute, ast.Call})


class _Find:
    """The sites of ``_Marker`` in one file: one per marking statement (``Site.line`` is where
    libcst says it starts) that has an offence and no marker above it."""

    def __init__(self, source: SourceFile) -> None:
        self.sites: List[Site] = []
        tree = source.tree
        self.aliases = _aliases(source.nodes)
        if not self.aliases and "trainer" not in source.text:
            return
        inner: Set[int] = set()  # the chains inside a chain already looked up
        offends = self._offends
        offences = {id(node) for node in source.nodes  # (a chain first)
                    if type(node) in _MAY_OFFEND and offends(node, inner)}
        if not offences:
            return
        lines = Lines(source.text)
        offending: Dict[int, ast.AST] = {}  # id(marking statement) -> it, in source order
        for node, place in statement_nodes(tree, lines, handlers=True):
            if id(node) in offences:
                offending.setdefault(id(place.statement), place.statement)
        comments = Comments(tree, lines)
        for statement in offending.values():
            if not self._marked(statement, comments):
                self.sites.append(Site(statement.lineno, statement.col_offset, "", "mark"))  # type: ignore[attr-defined]

    @staticmethod
    def _marked(statement: ast.AST, comments: Comments) -> bool:
        if statement is comments.first:
            # the comment lines right above the first statement (its header's last run):
            # ``_marker_out_of_header`` moves them onto it when one is a marker
            run: List[str] = []
            for text in reversed(comments.header):
                if not text.strip():
                    break
                run.append(text)
            return any(MARKER_PREFIX in text for text in run)
        return any(MARKER_PREFIX in text for text in comments.above(statement))

    def _full(self, node: ast.AST) -> Optional[str]:
        dotted = ast_dotted(node)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        if head not in self.aliases:
            return None
        full = self.aliases[head] + ("." + rest if rest else "")
        if full.startswith("lightning.") and not full.startswith("lightning.pytorch"):
            return None
        return full

    def _offends(self, node: ast.AST, inner: Set[int]) -> bool:
        kind = type(node)
        if kind is ast.Import:
            return any(lookup_name(alias.name) is not None for alias in node.names)  # type: ignore[attr-defined]
        if kind is ast.ImportFrom:
            module = node.module  # type: ignore[attr-defined]
            if node.level or not module or _relative(module) is None:  # type: ignore[attr-defined]
                return False
            return lookup_name(module) is not None or any(
                alias.name != "*" and lookup_name(f"{module}.{alias.name}") is not None
                for alias in node.names)  # type: ignore[attr-defined]
        if kind is ast.Attribute:
            value = node.value  # type: ignore[attr-defined]
            offends = False
            if id(node) not in inner:
                full = self._full(node)
                offends = full is not None and lookup_name(full) is not None
            if type(value) is ast.Attribute:
                inner.add(id(value))
            if node.attr in TRAINER_ATTRS and (  # type: ignore[attr-defined]
                    (type(value) is ast.Name and value.id == "trainer")
                    or (type(value) is ast.Attribute and value.attr == "trainer")) \
                    and not ast_not_lightning(node):  # type: ignore[arg-type]  # (not a user's config)
                offends = True
            return offends
        if kind is ast.Call:
            if not any(k.arg in TRAINER_KWARGS for k in node.keywords):  # type: ignore[attr-defined]
                return False
            full = self._full(node.func)  # type: ignore[attr-defined]
            return bool(full) and full.split(".")[-1] == "Trainer" and _relative(full) is not None
        return False


def _marker_out_of_header(module: cst.Module) -> cst.Module:
    """libcst parses comments above the first statement into ``module.header``; move a trailing
    run of comment lines that holds a marker onto the first statement (same text), so the rule
    sees the statement as marked and a second run changes nothing."""
    header = list(module.header)
    cut = len(header)
    while cut > 0 and header[cut - 1].comment is not None:
        cut -= 1
    tail = header[cut:]
    if not module.body or not any(MARKER_PREFIX in line.comment.value for line in tail):
        return module
    first = module.body[0]
    body = [first.with_changes(leading_lines=[*tail, *first.leading_lines]), *module.body[1:]]
    return module.with_changes(header=header[:cut], body=body)
