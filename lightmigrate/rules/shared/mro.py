"""Method resolution orders of project classes, for hooks a rule writes into one class that
other classes of a hierarchy may shadow or be shadowed by (issue 21 kind 2).

LM001 writes buffer hooks (``on_validation_epoch_start``, ``on_validation_batch_end``,
``on_validation_epoch_end``) into the class that owns an epoch-end hook, and LM003 may move a
step-end hook into ``on_*_batch_end`` there. A subclass that combines that class with a mixin
decides, through its MRO, which of two definitions runs:

- ``class Model(LoggingMixin, Base)``: the mixin comes first. Its hook shadows the one written
  into ``Base`` unless it calls ``super()``: the buffers stay empty. :func:`mixin_shadowing`
  tells whether ``super()`` can be added to the mixin's hook faithfully (what follows the mixin
  in every MRO it is part of is generated code or Lightning's empty default, never user code
  1.x skipped), or why not.
- ``class Model(Base, LoggingMixin)``: ``Base`` comes first. In 1.x ``Base`` did not define the
  hook, so the mixin's ran; the written hook must call ``super()`` to keep it running
  (:func:`reached_after`).

Classes are :class:`ClassInfo` of the project index; a base the index cannot resolve (or
Lightning's own class) stays a name in the order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple, Union

from lightmigrate.analysis.project import LIGHTNING_MODULE_NAMES, ClassInfo, ProjectIndex

Entry = Union[ClassInfo, str]
# bases that define no Lightning hook: passing them on the way to LightningModule is harmless
HOOK_FREE = frozenset({"object", "ABC", "Generic", "Protocol", "Module", "HyperparametersMixin"})


def linearize(index: ProjectIndex, info: ClassInfo,
              _memo: Optional[Dict[Tuple[str, str], Optional[List[Entry]]]] = None) -> Optional[List[Entry]]:
    """Python's C3 order of ``info`` over the classes the index knows; a base it does not know
    (or Lightning's) is its last name, as a leaf. None when the bases cannot be ordered."""
    memo = {} if _memo is None else _memo
    key = (info.path, info.name)
    if key in memo:
        return memo[key]
    memo[key] = None  # a cycle gives None
    seqs: List[List[Entry]] = []
    heads: List[Entry] = []
    for base in info.bases:
        last = base.rsplit(".", 1)[-1]
        if last == "object":
            continue
        found = None if last in LIGHTNING_MODULE_NAMES else index.resolve(last, info.path)
        if found is None or found is info:
            seqs.append([last])
            heads.append(last)
            continue
        sub = linearize(index, found, memo)
        if sub is None:
            return None
        seqs.append(list(sub))
        heads.append(found)
    seqs.append(list(heads))
    out: List[Entry] = [info]
    while any(seqs):
        seqs = [s for s in seqs if s]
        for s in seqs:
            head = s[0]
            if not any(head in other[1:] for other in seqs):
                break
        else:
            return None  # inconsistent: Python would refuse the class
        out.append(head)
        seqs = [s[1:] if s[0] == head else s for s in seqs]
    memo[key] = out
    return out


def _lightning_classes(index: ProjectIndex, info: ClassInfo) -> List[ClassInfo]:
    """``info`` (when it is a LightningModule) and its descendants that are: the classes whose
    MRO Lightning walks."""
    return [c for c in [info, *index.descendants(info)] if index.is_lightning_module(c)]


def _after(order: List[Entry], info: ClassInfo) -> List[Entry]:
    return order[order.index(info) + 1:] if info in order else []


def _next_definer(after: List[Entry], name: str) -> Tuple[Optional[Entry], bool]:
    """The first entry of ``after`` that defines (or may define) ``name``, and whether it is
    certain to (an unknown base may)."""
    for e in after:
        if isinstance(e, ClassInfo):
            if name in e.methods:
                return e, True
        elif e in LIGHTNING_MODULE_NAMES:
            return None, True  # Lightning's own default (empty) hook
        elif e not in HOOK_FREE:
            return e, False
    return None, True


def reached_after(index: ProjectIndex, info: ClassInfo, name: str) -> bool:
    """Whether, in some class's MRO that holds ``info``, a class after ``info`` defines ``name``
    (or may: an unknown base): a hook ``name`` written into ``info`` must then call ``super()``,
    as the later definition ran in 1.x when ``info`` had none."""
    memo: Dict[Tuple[str, str], Optional[List[Entry]]] = {}
    for c in _lightning_classes(index, info):
        order = linearize(index, c, memo)
        if order is None:
            return True
        if _next_definer(_after(order, info), name)[0] is not None:
            return True
    return False


def shadowed_by(index: ProjectIndex, info: ClassInfo, name: str) -> Optional[str]:
    """A class that comes before ``info`` in some LightningModule's MRO and defines ``name``
    (its name; None when there is none): a hook ``name`` written into ``info`` may never run."""
    memo: Dict[Tuple[str, str], Optional[List[Entry]]] = {}
    for c in _lightning_classes(index, info):
        order = linearize(index, c, memo)
        if order is None:
            return c.name
        for e in order[:order.index(info)] if info in order else ():
            if isinstance(e, ClassInfo) and name in e.methods:
                return e.name
    return None


@dataclass(frozen=True)
class Shadowing:
    """A hook of a class (the mixin) that shadows, in ``subclass``'s MRO, the hook a rule writes
    into ``owner``. ``why`` is None when ``super()`` can be added to the mixin's hook faithfully,
    else why it cannot."""

    subclass: str
    owner: str
    why: Optional[str]


def mixin_shadowing(index: ProjectIndex, mixin: ClassInfo, name: str, old_hook: str) -> Optional[Shadowing]:
    """Whether the hook ``name`` of ``mixin`` (defined there without a ``super().name(...)``
    call) shadows a hook a rule writes for ``old_hook``: in the MRO of some LightningModule,
    ``mixin`` comes before a class that defines ``old_hook`` (the rule writes ``name`` there or
    in one of its bases). None when it shadows nothing."""
    memo: Dict[Tuple[str, str], Optional[List[Entry]]] = {}
    found: Optional[Tuple[str, str]] = None
    why: Optional[str] = None
    for c in _lightning_classes(index, mixin):
        order = linearize(index, c, memo)
        if order is None:
            why = why or f"the bases of {c.name} cannot be ordered"
            continue
        after = _after(order, mixin)
        owners = [e for e in after if isinstance(e, ClassInfo) and old_hook in e.methods]
        if owners and found is None:
            found = (c.name, owners[-1].name)
        nxt, certain = _next_definer(after, name)
        if nxt is not None and why is None:
            if certain:
                why = (f"super() would also run {nxt.name}.{name} (in {c.name}), which 1.x skipped"  # type: ignore[union-attr]
                       if isinstance(nxt, ClassInfo) else "")
            else:
                why = f"super() would reach {nxt} (a base of {c.name} lightmigrate cannot see)"
    if found is None:
        return None
    return Shadowing(found[0], found[1], why or None)


def injection_point(index: ProjectIndex, info: ClassInfo, name: str, old_hook: str) -> Optional[str]:
    """When ``info`` inherits ``old_hook`` and lists among its bases a mixin whose hook ``name``
    shadows the one written for ``old_hook`` and cannot call ``super()`` faithfully
    (:func:`mixin_shadowing` gives a reason): the mixin's name. The rule then writes the work
    into ``info`` itself, before the mixin in its MRO, and passes on to the mixin with
    ``super()``: the mixin's hook stops the chain there, as it did in 1.x. None otherwise."""
    if old_hook in info.methods:
        return None
    order = linearize(index, info)
    if order is None:
        return None
    definers = [i for i, e in enumerate(order) if isinstance(e, ClassInfo) and old_hook in e.methods]
    if not definers:
        return None
    for i, e in enumerate(order[1:definers[0]], start=1):
        if not isinstance(e, ClassInfo):
            return None
        if name not in e.methods:
            continue
        # the first class after ``info`` that defines ``name``: one of its own bases?
        direct = [index.resolve(b.rsplit(".", 1)[-1], info.path) for b in info.bases]
        if e not in direct or name in e.super_calls.get(name, ()) or old_hook in e.methods:
            return None
        shadow = mixin_shadowing(index, e, name, old_hook)
        return e.name if shadow is not None and shadow.why is not None else None
    return None


def injection_covers(index: ProjectIndex, mixin: ClassInfo, name: str, old_hook: str) -> bool:
    """Whether every LightningModule in whose MRO ``mixin`` comes before a class defining
    ``old_hook`` gets the work from a class that lists ``mixin`` (:func:`injection_point`), so
    the mixin itself needs no marker."""
    memo: Dict[Tuple[str, str], Optional[List[Entry]]] = {}
    for c in _lightning_classes(index, mixin):
        order = linearize(index, c, memo)
        if order is None or mixin not in order:
            return False
        after = _after(order, mixin)
        if not any(isinstance(e, ClassInfo) and old_hook in e.methods for e in after):
            continue
        listing = [e for e in order[:order.index(mixin)] if isinstance(e, ClassInfo)
                   and mixin in [index.resolve(b.rsplit(".", 1)[-1], e.path) for b in e.bases]]
        if not listing or injection_point(index, listing[-1], name, old_hook) != mixin.name:
            return False
    return True
