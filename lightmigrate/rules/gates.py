"""Shared pieces of the rules' gates (``Rule.needed``): cheap questions about one file, answered
from :func:`lightmigrate.facts.file_facts`, a few regular expressions over the text, and the
project index. Every helper errs on the side of "may": a gate built on them may say "needed"
for nothing, never "not needed" when the rule would act.
"""

from __future__ import annotations

import re
from typing import FrozenSet, Optional

from lightmigrate.facts import FileFacts
from lightmigrate.project import LIGHTNING_IMPORT_ROOTS
from lightmigrate.rules.base import RuleContext
from lightmigrate.rules.class_edit import class_kind

# Whitespace, line continuations, closing parentheses and comments: what may stand between two
# tokens of one expression (a comment only inside brackets, which is fine for a "may" test).
_GAP = r"(?:[\s\\)]|#[^\n]*)*"
_DOT = r"\.(?:[\s\\]|#[^\n]*)*"
# ``Trainer as NAME`` in an import (brackets allow newlines and comments in between).
_TRAINER_ALIAS = re.compile(r"\bTrainer(?:[\s\\]|#[^\n]*)+as(?:[\s\\]|#[^\n]*)+([^\W\d]\w*)")


def trainer_imports_lightning(facts: FileFacts) -> bool:
    """Whether some import names a module of a Lightning root (``pytorch_lightning``,
    ``lightning``): without one, LM101/LM102 know no Trainer and no Lightning package."""
    return any(root in facts.modules for root in LIGHTNING_IMPORT_ROOTS)


def trainer_call_names(text: str) -> FrozenSet[str]:
    """The names a ``Trainer(...)`` call may go by in ``text``: ``Trainer`` and every alias
    ``Trainer as NAME`` of an import (``x.Trainer(...)`` is called ``Trainer`` too)."""
    return frozenset({"Trainer", *_TRAINER_ALIAS.findall(text)})


def trainer_may_call(text: str, facts: FileFacts) -> bool:
    """Whether ``text`` may call a Trainer (by its name or an import alias of it)."""
    return bool(facts.calls & trainer_call_names(text))


Receivers = Optional[FrozenSet[str]]
"""Which expressions an attribute test below accepts before the dot: None for any; a set for a
name or attribute called ``trainer`` and the exact spellings in the set (names or dotted
attributes, as written in the code)."""


def _receiver(receivers: Receivers) -> str:
    if receivers is None:
        return _DOT
    spelled = [r"\btrainer", *(r"(?<![\w.])" + re.escape(s) for s in sorted(receivers))]
    return "(?:" + "|".join(spelled) + ")" + _GAP + _DOT


def attribute_read(text: str, attrs: FrozenSet[str], receivers: Receivers = None) -> bool:
    """Whether some ``<receiver>.attr`` (one of ``attrs``) may be in ``text``."""
    names = "|".join(sorted(map(re.escape, attrs)))
    return re.search(_receiver(receivers) + "(?:" + names + r")\b", text) is not None


def attribute_compared(text: str, attr: str, receivers: Receivers = None) -> bool:
    """Whether ``<receiver>.attr`` may be the left side of ``==``, ``!=``, ``in`` or ``not in``."""
    return re.search(_receiver(receivers) + re.escape(attr) + r"\b" + _GAP + r"(?:==|!=|in\b|not\b)",
                     text) is not None


def attribute_assigned(text: str, attrs: FrozenSet[str], receivers: Receivers = None) -> bool:
    """Whether some ``<receiver>.attr = ...`` (plain assignment, one of ``attrs``) may be in ``text``."""
    names = "|".join(sorted(map(re.escape, attrs)))
    return re.search(_receiver(receivers) + "(?:" + names + r")\b" + _GAP + r"=(?!=)", text) is not None


def string_key(text: str, keys: FrozenSet[str]) -> bool:
    """Whether one of ``keys`` may be a string literal followed by ``:`` (a dict key)."""
    names = "|".join(sorted(map(re.escape, keys)))
    return re.search(r"""['"](?:""" + names + r""")['"]+""" + _GAP + ":", text) is not None


def kind_in_path(ctx: RuleContext, kinds: FrozenSet[str]) -> bool:
    """Like ``class_edit.may_have_kind``, with the index's per-file lookup: False only when no
    class that the index holds for ``ctx.path`` is of one of ``kinds``; True for a file the index
    has not seen (the rule indexes it itself)."""
    project = ctx.project
    if not project.has_path(ctx.path):
        return True
    return any(class_kind(ctx, c.name) in kinds for c in project.classes_in(ctx.path))
