"""Building blocks of the regular expressions that search source text before (or instead of)
parsing it: the rules' text prefilters (``Rule.may_apply``) and the project index (``analysis/project.py``).

Each search only has to be a necessary condition ("the code may hold this"), but it must never
miss what the parsed code holds, and it must stay fast on any text."""

from __future__ import annotations

import re

# A comment, matched only whole (to the end of its line): in a repeated group, a comment that
# could end anywhere can be split in exponentially many ways, and a failing search over a line
# of many ``#`` would never end.
COMMENT = r"#[^\r\n]*(?![^\r\n])"
# What may stand between a keyword argument's name and its ``=`` (inside brackets: whitespace,
# newlines, line continuations, comments).
KEYWORD_GAP = rf"(?:[\s\\]|{COMMENT})*"


def word_at_start(word: str, not_after: str = r"\w") -> str:
    r"""A regex for ``word`` where the character before it is not matched by ``not_after``
    (by default: ``\bword`` for a word that starts with a word character). Written with the
    literal first and the test behind it, so that the regex engine can jump from one occurrence
    of the literal to the next: a pattern that starts with ``\b`` (or a lookbehind) is tried at
    every position of the text, some thirty times slower on a big file."""
    literal = re.escape(word)
    return rf"{literal}(?<!{not_after}{literal})"


# The ``def`` keyword and what may stand between it and the function's name (whitespace, line
# continuations): a regex to put before a name, e.g. ``DEF + "backward\\b"``.
DEF = word_at_start("def") + r"[\s\\]+"


def one_of(words) -> str:
    """A regex group matching any of ``words`` (as literals)."""
    return "(?:" + "|".join(sorted(map(re.escape, words))) + ")"
