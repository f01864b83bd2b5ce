"""The rules' text triggers (``Rule.triggers``), searched for in many texts at once.

Every file of a run is searched for every distinct trigger: on a big tree that is the largest
cost of a run whose files mostly need nothing (about a hundred triggers, each a scan of the
whole text). Most triggers are absent from most files, and a cheaper question rules them out
first: the ASCII word characters of a trigger (``[A-Za-z0-9_]``) come in runs (``.log(`` has
one, ``log``; ``def on_`` two, ``def`` and ``on_``), and each run of a trigger found in a text
lies inside one of the text's words (its maximal runs of such characters). So a trigger can only
be in a text when each of its runs is in the text's *vocabulary*, its distinct words joined by
spaces, which is a few times shorter than the text (each word once, no spaces or punctuation
runs). Only the triggers that pass that test are searched for in the text itself, so the answer
is exactly the plain substring search's.
"""

from __future__ import annotations

import re
import string
from typing import Collection, Dict, FrozenSet, Optional, Sequence, Set, Tuple

from lightmigrate.rules.base import Rule

_WORD_CHARS = frozenset((string.ascii_letters + string.digits + "_").encode("ascii"))
# bytes.translate table: an ASCII word character stays, every other byte becomes a space
_WORDS_ONLY = bytes(b if b in _WORD_CHARS else 0x20 for b in range(256))
_RUN = re.compile(r"[A-Za-z0-9_]+")

# Below this many characters a text is searched directly: building its vocabulary costs more
# than the searches it saves.
VOCABULARY_MIN_CHARS = 2048


def vocabulary(text: str) -> bytes:
    """The distinct maximal runs of ASCII word characters of ``text``, joined by spaces. In
    UTF-8 every byte of a non-ASCII character is above 127, so no such byte joins or splits an
    ASCII run (a lone surrogate, possible in a notebook's JSON, is encoded the same way)."""
    return b" ".join(set(text.encode("utf-8", "surrogatepass").translate(_WORDS_ONLY).split()))


def word_runs(trigger: str) -> Tuple[bytes, ...]:
    """The runs of ASCII word characters of ``trigger``, each of which is inside a word of any
    text that holds ``trigger``."""
    return tuple(run.encode("ascii") for run in _RUN.findall(trigger))


class TextTriggers:
    """The text triggers of ``rules`` (``Rule.may_apply``), asked about many texts at once:
    each distinct trigger is searched once per text, shortest first; a trigger that holds a
    shorter one found absent is absent too, and so is one whose word runs are not all in the
    text's vocabulary, so neither is searched. Rules with a ``may_apply`` of their own are asked
    once one of their triggers is found."""

    def __init__(self, rules: Sequence[Rule], probes: Sequence[str] = ()) -> None:
        self.plain = [(r.code, frozenset(r.triggers)) for r in rules if type(r).may_apply is Rule.may_apply]
        self.custom = [(r, frozenset(r.triggers)) for r in rules if type(r).may_apply is not Rule.may_apply]
        # other substrings a caller wants to know about, searched for along with the triggers
        self.probes = tuple(dict.fromkeys(probes))
        distinct = sorted({t for r in rules for t in r.triggers} | set(self.probes), key=len)
        # each trigger with the shorter triggers it holds (only the largest of them: one that
        # holds an absent trigger is absent, found when it was asked), its word runs, and
        # whether it is one run (then its run found in the vocabulary is the trigger found)
        self.order = []
        for k, t in enumerate(distinct):
            inside = [s for s in distinct[:k] if s in t]
            largest = tuple(s for s in inside if not any(s != o and s in o for o in inside))
            runs = word_runs(t)
            self.order.append((t, largest, runs, runs == (t.encode("ascii"),) if t.isascii() else False))

    def present(self, text: str) -> Dict[str, bool]:
        """Each distinct trigger -> whether ``text`` holds it."""
        vocab = vocabulary(text) if len(text) >= VOCABULARY_MIN_CHARS else None
        in_vocab: Dict[bytes, bool] = {}  # each run searched in the vocabulary once
        present: Dict[str, bool] = {}
        for trigger, inside, runs, one_run in self.order:
            found = True
            for s in inside:
                if not present[s]:
                    found = False
                    break
            if found:
                if vocab is None:
                    found = trigger in text
                else:
                    for run in runs:
                        known = in_vocab.get(run)
                        if known is None:
                            known = in_vocab[run] = run in vocab
                        if not known:
                            found = False
                            break
                    else:
                        found = one_run or trigger in text
            present[trigger] = found
        return present

    def matched(self, text: str, codes: Optional[Collection[str]] = None) -> FrozenSet[str]:
        """The codes (among ``codes``; all when None) of the rules whose ``may_apply`` accepts ``text``."""
        return self.matched_and_probes(text, codes)[0]

    def matched_and_probes(self, text: str, codes: Optional[Collection[str]] = None) -> Tuple[FrozenSet[str], FrozenSet[str]]:
        """``matched(text, codes)``, and the ``probes`` ``text`` holds."""
        present = self.present(text)
        held = {t for t, found in present.items() if found}
        return self._matched(text, codes, held), frozenset(p for p in self.probes if p in held)

    def _matched(self, text: str, codes: Optional[Collection[str]], held: Set[str]) -> FrozenSet[str]:
        """The codes (among ``codes``) whose rules accept ``text``, which holds the triggers ``held``."""
        wanted = None if codes is None else frozenset(codes)
        found = {code for code, triggers in self.plain
                 if (wanted is None or code in wanted) and not held.isdisjoint(triggers)}
        # (a rule's own ``may_apply`` accepts only texts with one of its triggers: see Rule.triggers)
        found.update(r.code for r, triggers in self.custom if (wanted is None or r.code in wanted)
                     and not held.isdisjoint(triggers) and r.may_apply(text))
        return frozenset(found)
