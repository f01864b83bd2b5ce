"""The pure part of the engine: text in, rewritten text and findings out. No file access."""

from __future__ import annotations

import ast
import itertools
import re
import warnings
from dataclasses import dataclass, field
from typing import FrozenSet, List, Optional, Sequence

import libcst as cst

from lightmigrate import MARKER_PREFIX
from lightmigrate.cst.codegen import forget_code, remember_text
from lightmigrate.cst.helpers import module_text
from lightmigrate.cst.walk import forget_masks, same_tree
from lightmigrate.engine.changes import change_findings
from lightmigrate.engine.markers import find_markers, merge_marker_findings
from lightmigrate.engine.suppress import apply_rule, bare_noqa, drop_suppressed_markers, report_rule
from lightmigrate.engine.model import EngineError
from lightmigrate.output.findings import Finding
from lightmigrate.analysis.project import ProjectIndex
from lightmigrate.rules.base import WHOLE_FILE, Rule, RuleContext, Site, SourceFile


BOM = "\ufeff"


class SourceSyntaxError(EngineError):
    """The input does not parse. ``line``/``col`` locate it; ``str()`` shows the line."""


class RuleCrash(EngineError):
    """A rule raised an exception (the original is chained as ``__cause__``)."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail


class InvalidOutput(EngineError):
    """The rewritten code does not parse or compile."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail


@dataclass
class TransformResult:
    text: str
    findings: List[Finding] = field(default_factory=list)
    changed: bool = False
    markers: int = 0  # TODO(lightmigrate) markers present in ``text``
    changes: List[Finding] = field(default_factory=list)  # one FIXED entry per changed region per rule
    # Rules that could not handle the text (they raised, or their output did not parse or
    # compile): one message each. Their changes are left out; the other rules' are in ``text``.
    problems: List[str] = field(default_factory=list)


def needs_transform(text: str, rules: Sequence[Rule], path: Optional[str] = None,
                    project: Optional[ProjectIndex] = None) -> bool:
    """The cheap prefilter: could any rule apply, or are there markers to count? (With ``path``
    and ``project``: also when the project links a rule to the file, ``Rule.linked``.)"""
    return MARKER_PREFIX in text or any(rule.may_apply(text) for rule in rules) or (
        path is not None and project is not None and any(is_linked(rule, path, text, project) for rule in rules))


def is_linked(rule: Rule, path: str, text: str, project: ProjectIndex) -> bool:
    """``rule.linked(path, text, project)`` for a rule that links files (``Rule.links_files``)."""
    return rule.links_files and rule.linked(path, text, project)


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


# Python's tokenizer refuses more than 200 nested brackets; libcst's native parser has no such
# limit and overflows the C stack (the process dies) a few thousand levels deep.
MAX_BRACKET_DEPTH = 200
_BRACKET_STEP = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}


_NOT_BRACKETS = re.compile(r"[^()\[\]{}]+")


def bracket_depth(text: str) -> int:
    """An upper bound of the bracket nesting depth of ``text`` (brackets in strings and
    comments count too)."""
    brackets = _NOT_BRACKETS.sub("", text)
    if len(brackets) <= MAX_BRACKET_DEPTH:
        return len(brackets)
    return max(itertools.accumulate(map(_BRACKET_STEP.__getitem__, brackets)))


def _too_deep(text: str, path: str) -> Optional[SourceSyntaxError]:
    """A located error when ``text`` nests brackets deeper than Python allows."""
    if bracket_depth(text) <= MAX_BRACKET_DEPTH:
        return None
    py = _compile_error(text, path)  # the bound counted strings and comments: ask Python
    if py is None:
        return None
    line, col = py.lineno or 0, py.offset or 1
    return SourceSyntaxError(f"syntax error: {py.msg}{_caret(text, line, col)}", line, col if line else 0)


def parse_source(text: str, path: str = "<string>") -> cst.Module:
    """``libcst.parse_module``, with errors turned into a located SourceSyntaxError."""
    deep = _too_deep(text, path)
    if deep is not None:
        raise deep
    try:
        return cst.parse_module(text)
    except RecursionError:
        raise SourceSyntaxError("too deeply nested to parse")
    except cst.ParserSyntaxError as exc:
        # Python's own compiler locates errors more precisely than libcst does.
        py = _compile_error(text, path)
        if py is not None and py.lineno:
            line, col, msg = py.lineno, py.offset or 1, py.msg
        else:
            line, col, msg = exc.raw_line, exc.raw_column + 1, exc.message
        raise SourceSyntaxError(f"syntax error: {msg}{_caret(text, line, col)}", line, col) from exc


def _invalid_reason(code: str, original: str, path: str) -> Optional[str]:
    """Why ``code`` is not acceptable output, or None when it is.

    Python's own compiler is the judge: output it parses and compiles is valid (libcst's parser
    follows Python's grammar; the idempotency tests parse every rule's output again, with
    libcst). compile() uses this interpreter's
    grammar, so when the input did not compile either (newer syntax, or ``return`` outside a
    function) the rule is not to blame, and the output need only parse with libcst as the
    input did."""
    error = _compile_error(code, path)
    if error is None:
        return None
    if _compile_error(original, path) is None:
        return f"line {error.lineno}: {error.msg}" if error.lineno else str(error.msg)
    try:
        cst.parse_module(code)
    except cst.ParserSyntaxError as exc:
        return f"line {exc.raw_line}: {exc.message}"
    return None


def _python_tree(text: str, path: str) -> Optional[ast.AST]:
    """``ast.parse(text)``: to report the syntax error Python finds in the text, or None
    when Python cannot say (a null byte, too deep for its recursion limit).

    libcst accepts some code Python 3 does not (``except X, e:`` from Python 2). Output
    cannot be checked when the input itself never compiled, so when Python's own parser
    rejects the input, that is the file's error, whether or not a rule would change it.
    (Code that parses but does not compile, such as ``return`` outside a function, is left
    to the output check.)"""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ast.parse(text, path)
        except SyntaxError as exc:
            line, col = exc.lineno or 0, exc.offset or 1
            raise SourceSyntaxError(
                f"syntax error: {exc.msg}{_caret(text, line, col)}", line, col if line else 0
            ) from exc
        except (ValueError, RecursionError, MemoryError):
            return None


def rule_sites(rule: Rule, source: SourceFile, ctx: RuleContext) -> List[Site]:
    """``rule.find(source, ctx)``: where the rule acts in ``source`` (module-level, so tests
    can watch every rule's find)."""
    return rule.find(source, ctx)


def transform_text(
    text: str,
    rules: Sequence[Rule],
    path: str = "<string>",
    project: Optional[ProjectIndex] = None,
    tree: Optional[ast.Module] = None,
    matched: Optional[FrozenSet[str]] = None,
) -> TransformResult:
    """Apply ``rules`` in order to ``text``: each rule whose ``may_apply`` accepts the text as
    the rules before it left it finds its sites (``Rule.find``, on that text), and fixes them
    (``Rule.fix``) when there are any. libcst parses the text only once some rule has sites.
    ``tree``: Python's ``ast`` of ``text``, when the caller parsed it already; ``matched``: the
    codes whose triggers the prefilter found in ``text`` (the others are not asked about it).

    A rule that cannot handle the text (it raises, or its output does not parse or compile)
    is left out and named in ``problems``; the other rules' changes are kept. Raises
    SourceSyntaxError when ``text`` does not parse. Unchanged input comes back byte-identical
    with ``changed`` False.
    """
    if text.startswith(BOM):  # libcst drops a leading BOM; keep it outside the tree
        out = transform_text(text[1:], rules, path, project)
        out.text = BOM + out.text
        return out
    problems: List[str] = []
    active = list(rules)
    while True:
        try:
            out = _transform_once(text, active, path, project, tree, matched)
        except (RuleCrash, InvalidOutput) as exc:  # run again without that rule
            problems.append(f"{exc.code} could not migrate this file ({exc.detail}); its changes were left out, "
                            "the other rules' changes were kept")
            active = [r for r in active if r.code != exc.code]
            continue
        out.problems = problems
        return out


def _raise_if_too_deep(text: str, path: str) -> None:
    deep = _too_deep(text, path)
    if deep is not None:
        raise deep


def _check_syntax(source: SourceFile) -> None:
    """Raise the SourceSyntaxError Python finds in ``source`` (parsing it if no rule has), or
    the one for brackets nested deeper than Python allows."""
    _raise_if_too_deep(source.text, source.path)
    try:
        source.tree
    except SyntaxError:
        _python_tree(source.text, source.path)  # raises it, with its place and the line
    except (ValueError, RecursionError, MemoryError):
        pass  # Python cannot say: libcst reports any error


def _transform_once(text: str, rules: Sequence[Rule], path: str, project: Optional[ProjectIndex],
                    tree: Optional[ast.Module], matched: Optional[FrozenSet[str]] = None) -> TransformResult:
    """``transform_text`` with every rule in; raises RuleCrash when a rule raises and
    InvalidOutput when the result does not parse or compile."""
    changes: List[Finding] = []
    forget_masks()  # the last file's trees can go
    forget_code()
    # Python's ``ast`` parses the text when a rule's ``find`` first reads the tree (a file no
    # rule reads is not parsed, so its syntax is not checked); libcst parses it only once some
    # rule has sites.
    module: Optional[cst.Module] = None
    ctx = RuleContext(path=path, project=project if project is not None else ProjectIndex())
    steps = []
    new_text = text
    if tree is None and project is not None:
        tree = project.take_tree(path, text)  # parsed already, when the index read this file
    source = SourceFile(path, text, tree)
    source.before_parse = lambda: _raise_if_too_deep(text, path)  # (before any parser recurses)
    ctx.project.current = source  # the index parses this file, if it must, into the same tree
    for rule in rules:
        if new_text == text and matched is not None:
            # the prefilter's answer for this very text (``may_apply``), or the project's link
            if rule.code not in matched and not is_linked(rule, path, text, ctx.project):
                continue
        elif not rule.may_apply(new_text) and not is_linked(rule, path, new_text, ctx.project):
            continue
        if source.text != new_text:
            source = SourceFile(path, new_text)
        try:
            sites = rule_sites(rule, source, ctx)
        except SyntaxError:
            if source.text == text:
                _python_tree(text, path)  # raises the syntax error Python finds, with its place
            # an earlier rule's output Python rejects: the check below says so
            sites = [WHOLE_FILE]
        except (ValueError, MemoryError) as exc:
            if source.text == text and _python_tree(text, path) is None:  # Python could not say:
                module = parse_source(text, path)  # libcst reports any error; the rule cannot read it
                continue
            raise RuleCrash(rule.code, f"internal error: {type(exc).__name__}: {exc}") from exc
        except EngineError:
            raise  # the text's own problem (nested too deeply), found when a rule read it
        except RecursionError as exc:
            raise RuleCrash(rule.code, "code too deeply nested to read: RecursionError") from exc
        except Exception as exc:
            raise RuleCrash(rule.code, f"internal error: {type(exc).__name__}: {exc}") from exc
        if not sites:
            continue
        if not rule.edits_code:  # notes only: no libcst tree needed
            try:
                report_rule(rule, ctx, new_text, sites)
            except Exception as exc:
                raise RuleCrash(rule.code, f"internal error: {type(exc).__name__}: {exc}") from exc
            continue
        if module is None:
            _check_syntax(SourceFile(path, text) if source.text != text else source)  # Python's error says more
            module = parse_source(text, path)
        before = module
        remember_text(module, new_text)  # rules that read module.code get it without codegen
        try:
            module = apply_rule(rule, module, ctx, new_text, sites)  # honours `# lightmigrate: ignore[...]`
            # The next rule's prefilter sees this rule's output (a rule that returns the very
            # module it got changed nothing, so no need to generate the code again).
            step_input = new_text
            if module is not before and isinstance(module, cst.Module):
                if same_tree(module, before):  # rebuilt but equal: keep the tree, skip codegen
                    module = before
                else:
                    new_text = module_text(module, before)  # copies what the rule kept
        except RecursionError as exc:
            raise RuleCrash(rule.code, "code too deeply nested to rewrite: RecursionError") from exc
        except Exception as exc:
            raise RuleCrash(rule.code, f"internal error: {type(exc).__name__}: {exc}") from exc
        if not isinstance(module, cst.Module):
            raise RuleCrash(rule.code, f"internal error: fix() returned {type(module).__name__}")
        steps.append((rule.code, new_text))
        if new_text != step_input:
            changes += change_findings(rule.code, rule.name, step_input, new_text, path)

    if module is None and MARKER_PREFIX in text:
        _check_syntax(source)  # markers are reported from a text Python reads
    changed = new_text != text
    if changed and _invalid_reason(new_text, text, path) is not None:
        # Name the first rule whose output was bad.
        for code, step_text in steps:
            reason = _invalid_reason(step_text, text, path)
            if reason is not None:
                raise InvalidOutput(code, f"it produced invalid code: {reason}")
    bare = bare_noqa(ctx)
    markers = drop_suppressed_markers(find_markers(new_text), new_text, bare)
    findings = drop_suppressed_markers(merge_marker_findings(ctx.findings, markers, path), new_text, bare)
    return TransformResult(new_text, findings, changed, len(markers), changes)
