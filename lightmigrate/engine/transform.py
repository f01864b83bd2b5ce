"""The pure part of the engine: text in, rewritten text and findings out. No file access."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import List, Optional, Sequence

import libcst as cst

from lightmigrate import MARKER_PREFIX
from lightmigrate.engine.changes import change_findings
from lightmigrate.engine.markers import find_markers, merge_marker_findings
from lightmigrate.engine.suppress import apply_rule, drop_suppressed_markers
from lightmigrate.engine.model import EngineError
from lightmigrate.findings import Finding
from lightmigrate.project import ProjectIndex
from lightmigrate.rules.base import Rule, RuleContext


BOM = "\ufeff"


class SourceSyntaxError(EngineError):
    """The input does not parse. ``line``/``col`` locate it; ``str()`` shows the line."""


class RuleCrash(EngineError):
    """A rule raised an exception (the original is chained as ``__cause__``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class InvalidOutput(EngineError):
    """The rewritten code does not parse or compile."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class TransformResult:
    text: str
    findings: List[Finding] = field(default_factory=list)
    changed: bool = False
    markers: int = 0  # TODO(lightmigrate) markers present in ``text``
    changes: List[Finding] = field(default_factory=list)  # one FIXED entry per changed region per rule


def needs_transform(text: str, rules: Sequence[Rule]) -> bool:
    """The cheap prefilter: could any rule apply, or are there markers to count?"""
    return MARKER_PREFIX in text or any(rule.may_apply(text) for rule in rules)


def _caret(text: str, line: int, col: int) -> str:
    lines = text.splitlines()
    if not 1 <= line <= len(lines):
        return ""
    source = lines[line - 1].expandtabs(1)
    return f"\n    {source}\n    {' ' * max(col - 1, 0)}^"


def _compile_error(code: str, path: str) -> Optional[SyntaxError]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. SyntaxWarning for invalid escapes
        try:
            compile(code, path, "exec", dont_inherit=True)
        except SyntaxError as exc:
            return exc
        except (ValueError, RecursionError, MemoryError) as exc:
            return SyntaxError(str(exc))
    return None


def parse_source(text: str, path: str = "<string>") -> cst.Module:
    """``libcst.parse_module``, with errors turned into a located SourceSyntaxError."""
    try:
        return cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        # Python's own compiler locates errors more precisely than libcst does.
        py = _compile_error(text, path)
        if py is not None and py.lineno:
            line, col, msg = py.lineno, py.offset or 1, py.msg
        else:
            line, col, msg = exc.raw_line, exc.raw_column + 1, exc.message
        raise SourceSyntaxError(f"syntax error: {msg}{_caret(text, line, col)}", line, col) from exc


def _invalid_reason(code: str, original: str, path: str) -> Optional[str]:
    """Why ``code`` is not acceptable output, or None when it is."""
    try:
        cst.parse_module(code)
    except cst.ParserSyntaxError as exc:
        return f"line {exc.raw_line}: {exc.message}"
    error = _compile_error(code, path)
    # compile() uses this interpreter's grammar: when the input did not compile either
    # (e.g. newer syntax, or `return` outside a function), the rule is not to blame.
    if error is not None and _compile_error(original, path) is None:
        return f"line {error.lineno}: {error.msg}" if error.lineno else str(error.msg)
    return None


def transform_text(
    text: str,
    rules: Sequence[Rule],
    path: str = "<string>",
    project: Optional[ProjectIndex] = None,
) -> TransformResult:
    """Apply ``rules`` in order to ``text``; a rule runs only when its ``may_apply`` accepts
    the text as the rules before it left it.

    Raises SourceSyntaxError when ``text`` does not parse, RuleCrash when a rule raises, and
    InvalidOutput when the result does not parse or compile. Unchanged input comes back
    byte-identical with ``changed`` False.
    """
    if text.startswith(BOM):  # libcst drops a leading BOM; keep it outside the tree
        out = transform_text(text[1:], rules, path, project)
        out.text = BOM + out.text
        return out
    changes: List[Finding] = []
    module = parse_source(text, path)
    ctx = RuleContext(path=path, project=project if project is not None else ProjectIndex())
    steps = []
    new_text = text
    for rule in rules:
        if not rule.may_apply(new_text):
            continue
        try:
            module = apply_rule(rule, module, ctx, new_text)  # honours `# lightmigrate: ignore[...]`
            # The next rule's prefilter sees this rule's output.
            step_input, new_text = new_text, module.code if isinstance(module, cst.Module) else new_text
        except Exception as exc:
            message = f"internal error in {rule.code}: {type(exc).__name__}: {exc}"
            raise RuleCrash(rule.code, message) from exc
        if not isinstance(module, cst.Module):
            message = f"internal error in {rule.code}: apply() returned {type(module).__name__}"
            raise RuleCrash(rule.code, message)
        steps.append((rule.code, new_text))
        if new_text != step_input:
            changes += change_findings(rule.code, rule.name, step_input, new_text, path)

    changed = new_text != text
    if changed and _invalid_reason(new_text, text, path) is not None:
        # Name the first rule whose output was bad.
        for code, step_text in steps:
            reason = _invalid_reason(step_text, text, path)
            if reason is not None:
                message = f"{code} produced invalid code ({reason}); file left unchanged"
                raise InvalidOutput(code, message)
    markers = drop_suppressed_markers(find_markers(new_text), new_text)
    findings = drop_suppressed_markers(merge_marker_findings(ctx.findings, markers, path), new_text)
    return TransformResult(new_text, findings, changed, len(markers), changes)
