"""Toy rules for the engine and CLI tests (independent of the real rules)."""

from __future__ import annotations

import libcst as cst

from lightmigrate.output.findings import Kind
from typing import List, Sequence

from lightmigrate.rules.base import WHOLE_FILE, Example, Rule, RuleContext, Safety, Site, SourceFile


class WholeFileRule(Rule):
    """A toy that acts on the whole file of every text its triggers match: its ``find`` gives
    one whole-file site, its ``fix`` is ``apply``."""

    def find(self, source: SourceFile, ctx: RuleContext) -> List[Site]:
        return [WHOLE_FILE]

    def fix(self, module: cst.Module, sites: Sequence[Site], ctx: RuleContext) -> cst.Module:
        return self.apply(module, ctx)

    def apply(self, module: cst.Module, ctx: RuleContext) -> cst.Module:
        return module


class _Toy(WholeFileRule):
    spec_rows = ("T1",)
    guide = "https://example.invalid/guide"
    safety = Safety.REVIEW


class RenameEpochEnd(_Toy):
    """Renames ``def training_epoch_end`` to ``def on_train_epoch_end``."""

    code = "LM901"
    name = "toy-rename"
    summary = "rename training_epoch_end"
    description = "A toy rule that renames a hook."
    triggers = ("training_epoch_end",)
    examples = (
        Example("def training_epoch_end(self): ...\n", "def on_train_epoch_end(self): ...\n", "rename"),
        Example("x = 1\n", None),
    )

    def apply(self, module: cst.Module, ctx: RuleContext) -> cst.Module:
        class T(cst.CSTTransformer):
            def leave_FunctionDef(self, old, new):
                if new.name.value == "training_epoch_end":
                    return new.with_changes(name=cst.Name("on_train_epoch_end"))
                return new

        return module.visit(T())


class MarkValidationEnd(_Toy):
    """Adds a ``# TODO(lightmigrate): LM999 ...`` line above ``def validation_epoch_end``."""

    code = "LM999"
    name = "toy-marker"
    summary = "mark validation_epoch_end"
    triggers = ("validation_epoch_end",)

    def apply(self, module: cst.Module, ctx: RuleContext) -> cst.Module:
        class T(cst.CSTTransformer):
            def leave_FunctionDef(self, old, new):
                if new.name.value != "validation_epoch_end":
                    return new
                if any("LM999" in (l.comment.value if l.comment else "") for l in new.leading_lines):
                    return new
                line = cst.EmptyLine(comment=cst.Comment("# TODO(lightmigrate): LM999 check the outputs"))
                return new.with_changes(leading_lines=[*new.leading_lines, line])

        return module.visit(T())


class Crash(_Toy):
    code = "LM990"
    name = "toy-crash"
    summary = "raises"
    triggers = ("boom",)

    def apply(self, module, ctx):
        raise RuntimeError("kaboom")


class Unparsable(_Toy):
    """Renames ``def breakme`` to ``def return`` (does not parse)."""

    code = "LM991"
    name = "toy-unparsable"
    summary = "breaks code"
    triggers = ("breakme",)

    def apply(self, module, ctx):
        class T(cst.CSTTransformer):
            def leave_FunctionDef(self, old, new):
                if new.name.value == "breakme":
                    return new.with_changes(name=cst.Name("return"))
                return new

        return module.visit(T())


class Uncompilable(_Toy):
    """Appends a module-level ``return`` (parses, but does not compile)."""

    code = "LM992"
    name = "toy-uncompilable"
    summary = "adds return at module level"
    triggers = ("returnme",)

    def apply(self, module, ctx):
        return module.with_changes(body=[*module.body, cst.parse_statement("return 1\n")])


class ReportsNote(_Toy):
    code = "LM993"
    name = "toy-note"
    summary = "notes every class"
    triggers = ("class ",)

    def apply(self, module, ctx):
        for stmt in module.body:
            if isinstance(stmt, cst.ClassDef):
                line, col = ctx.position(module, stmt)
                ctx.report(self.code, f"saw class {stmt.name.value}", Kind.NOTE, line, col)
        return module


TOYS = [RenameEpochEnd(), MarkValidationEnd()]
ALL_TOYS = [RenameEpochEnd(), MarkValidationEnd(), Crash(), Unparsable(), Uncompilable(), ReportsNote()]
