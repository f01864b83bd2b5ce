"""Compare two runner result documents (expected = original on 1.9.5, actual = migrated on 2.x).

Pure Python: works on the decoded JSON alone, no torch needed.

Numbers are close when ``abs(actual - expected) <= atol + rtol * abs(expected)`` (NaN equals NaN,
infinities must match exactly). Tensors (encoded as ``{"tensor": shape, "dtype", "values"}``)
must have the same shape and dtype and close values; ``requires_grad`` is recorded but only
compared with ``check_requires_grad=True``. Everything else must match in structure: same dict
keys, same list lengths, same scalars and reprs.

Sections compared per case, in this order: ``error``, ``hooks`` (the order in which Lightning
called the model's original hooks, in 2.x names, and dead hooks: methods that ran on the
reference but never on 2.x), ``callback_hooks`` (per user callback hook: how often it ran, its
place among the model's hooks, and the ``outputs`` its ``on_*_batch_end`` received),
``metrics`` (same keys at the same steps, close values), ``epoch_end`` (per stage: same number
of invocations, same sanity/epoch, same received value), ``global_step``, ``current_epoch``,
``monitors`` (ModelCheckpoint / EarlyStopping: best score, epoch and step of the best, kept
and saved checkpoints, the epoch training stopped in), ``returns``, ``state_dict``,
``optimizers``, ``callback_metrics``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from lightmigrate.verify.hook_log import callback_timeline, normalized_sequence

MISSING = "<missing>"

DEFAULT_SECTIONS: Tuple[str, ...] = (
    "hooks",
    "callback_hooks",
    "metrics",
    "epoch_end",
    "global_step",
    "current_epoch",
    "monitors",
    "returns",
    "state_dict",
    "optimizers",
    "callback_metrics",
)
TENSOR_KEYS = frozenset({"tensor", "dtype", "values"})


@dataclass(frozen=True)
class Difference:
    """One mismatch. ``path`` reads like ``case/epoch_end/validation[1][0]["loss"]``."""

    path: str
    expected: Any
    actual: Any
    message: str = ""

    @property
    def case(self) -> str:
        return self.path.split("/", 1)[0]

    def __str__(self) -> str:
        text = f"{self.path}: expected {_short(self.expected)}, got {_short(self.actual)}"
        return f"{text} ({self.message})" if self.message else text


def _short(value: Any, limit: int = 160) -> str:
    if is_tensor(value):
        vals = value.get("values", [])
        head = ", ".join(f"{v:.6g}" if isinstance(v, float) else repr(v) for v in vals[:6])
        more = ", ..." if len(vals) > 6 else ""
        return f"tensor{value.get('tensor')}({value.get('dtype')})[{head}{more}]"
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def is_tensor(value: Any) -> bool:
    return isinstance(value, dict) and TENSOR_KEYS <= set(value)


def numbers_close(expected: float, actual: float, rtol: float = 1e-5, atol: float = 1e-8) -> bool:
    if expected == actual:
        return True
    e, a = float(expected), float(actual)
    if math.isnan(e) or math.isnan(a):
        return math.isnan(e) and math.isnan(a)
    if math.isinf(e) or math.isinf(a):
        return False
    return abs(a - e) <= atol + rtol * abs(e)


class _Collector:
    """Collects differences of one section, keeping the first ``limit`` and counting the rest."""

    def __init__(self, limit: Optional[int]) -> None:
        self.limit = limit
        self.items: List[Difference] = []
        self.dropped = 0

    def add(self, path: str, expected: Any, actual: Any, message: str = "") -> None:
        if self.limit is not None and len(self.items) >= self.limit:
            self.dropped += 1
            return
        self.items.append(Difference(path, expected, actual, message))

    def finish(self, section_path: str) -> List[Difference]:
        if self.dropped:
            self.items.append(
                Difference(section_path, None, None, f"{self.dropped} more difference(s) not shown")
            )
        return self.items


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def compare_values(
    expected: Any,
    actual: Any,
    path: str,
    out: _Collector,
    rtol: float = 1e-5,
    atol: float = 1e-8,
    check_requires_grad: bool = False,
) -> None:
    """Recursively compare two encoded values, adding differences under ``path``."""
    if is_tensor(expected) or is_tensor(actual):
        if not (is_tensor(expected) and is_tensor(actual)):
            out.add(path, expected, actual, "tensor vs non-tensor")
            return
        if list(expected["tensor"]) != list(actual["tensor"]):
            out.add(path, expected, actual, f"shape {expected['tensor']} != {actual['tensor']}")
            return
        if expected["dtype"] != actual["dtype"]:
            out.add(path, expected, actual, f"dtype {expected['dtype']} != {actual['dtype']}")
            return
        if check_requires_grad and expected.get("requires_grad") != actual.get("requires_grad"):
            out.add(path, expected, actual, "requires_grad differs")
            return
        ev, av = expected["values"], actual["values"]
        bad = [i for i, (e, a) in enumerate(zip(ev, av)) if not _scalar_close(e, a, rtol, atol)]
        if bad or len(ev) != len(av):
            i = bad[0] if bad else min(len(ev), len(av))
            e_i = ev[i] if i < len(ev) else MISSING
            a_i = av[i] if i < len(av) else MISSING
            out.add(
                path,
                expected,
                actual,
                f"{len(bad)} of {len(ev)} values differ; first at flat index {i}: {e_i!r} vs {a_i!r}",
            )
        return
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in expected:
            sub = f"{path}[{key!r}]".replace("'", '"')
            if key not in actual:
                out.add(sub, expected[key], MISSING, "key missing")
            else:
                compare_values(expected[key], actual[key], sub, out, rtol, atol, check_requires_grad)
        for key in actual:
            if key not in expected:
                out.add(f"{path}[{key!r}]".replace("'", '"'), MISSING, actual[key], "unexpected key")
        return
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            out.add(path, expected, actual, f"length {len(expected)} != {len(actual)}")
        for i, (e, a) in enumerate(zip(expected, actual)):
            compare_values(e, a, f"{path}[{i}]", out, rtol, atol, check_requires_grad)
        return
    if not _scalar_close(expected, actual, rtol, atol):
        out.add(path, expected, actual)


def _scalar_close(expected: Any, actual: Any, rtol: float, atol: float) -> bool:
    if _is_number(expected) and _is_number(actual):
        return numbers_close(expected, actual, rtol, atol)
    return type(expected) is type(actual) and expected == actual


# --------------------------------------------------------------------------------------------
# sections


def _metric_table(rows: Iterable[Sequence[Any]]) -> Dict[Tuple[Any, str], List[Any]]:
    table: Dict[Tuple[Any, str], List[Any]] = {}
    for step, key, value in rows:
        table.setdefault((step, key), []).append(value)
    return table


def _compare_metrics(case: str, expected: Any, actual: Any, out: _Collector, rtol: float, atol: float) -> None:
    exp = _metric_table(expected or [])
    act = _metric_table(actual or [])
    for (step, key), values in exp.items():
        path = f'{case}/metrics[step={step}]["{key}"]'
        if (step, key) not in act:
            out.add(path, values if len(values) > 1 else values[0], MISSING, "metric not logged at this step")
            continue
        got = act[(step, key)]
        if len(values) != len(got):
            out.add(path, values, got, f"logged {len(values)} time(s) vs {len(got)}")
            continue
        for e, a in zip(values, got):
            if not _scalar_close(e, a, rtol, atol):
                out.add(path, e, a)
                break
    for (step, key), values in act.items():
        if (step, key) not in exp:
            path = f'{case}/metrics[step={step}]["{key}"]'
            out.add(path, MISSING, values if len(values) > 1 else values[0], "metric not logged by the original")


def _by_stage(records: Iterable[Dict[str, Any]]) -> Dict[str, List[Dict[str, Any]]]:
    stages: Dict[str, List[Dict[str, Any]]] = {}
    for rec in records or []:
        stages.setdefault(str(rec.get("stage")), []).append(rec)
    return stages


def _compare_epoch_end(
    case: str, expected: Any, actual: Any, out: _Collector, rtol: float, atol: float, check_requires_grad: bool
) -> None:
    exp, act = _by_stage(expected), _by_stage(actual)
    for stage in list(exp) + [s for s in act if s not in exp]:
        e_list, a_list = exp.get(stage, []), act.get(stage, [])
        base = f"{case}/epoch_end/{stage}"
        if len(e_list) != len(a_list):
            out.add(
                base,
                [_describe_call(r) for r in e_list],
                [_describe_call(r) for r in a_list],
                f"epoch-end hook ran {len(e_list)} time(s) in the original, {len(a_list)} after migration",
            )
        for i, (e, a) in enumerate(zip(e_list, a_list)):
            path = f"{base}[{i}]"
            if bool(e.get("sanity")) != bool(a.get("sanity")) or e.get("epoch") != a.get("epoch"):
                out.add(path, _describe_call(e), _describe_call(a), "invocation happened at a different point")
                continue
            if not e.get("captured"):
                continue  # the 1.x body never read its argument: nothing observable to compare
            if not a.get("captured"):
                out.add(
                    path,
                    e.get("value"),
                    MISSING,
                    f"the migrated hook never bound {e.get('param')!r} (watched {a.get('param')!r})",
                )
                continue
            compare_values(e.get("value"), a.get("value"), path, out, rtol, atol, check_requires_grad)


def _compare_hooks(case: str, expected: Any, actual: Any, out: _Collector) -> None:
    if not expected or not actual:
        return  # a record from before hooks were logged
    keep = expected.get("defined") or []
    seq_e = normalized_sequence(expected, keep)
    seq_a = normalized_sequence(actual, keep)
    if seq_e != seq_a:
        i = next((k for k, (x, y) in enumerate(zip(seq_e, seq_a)) if x != y), min(len(seq_e), len(seq_a)))
        out.add(
            f"{case}/hooks[{i}]",
            seq_e[max(0, i - 1):i + 3],
            seq_a[max(0, i - 1):i + 3],
            f"hook order differs at call {i} ({len(seq_e)} vs {len(seq_a)} hook calls)",
        )
    ran = expected.get("counts") or {}
    for dead in actual.get("dead") or []:
        times = ran.get(dead["name"], 0)
        if times:
            out.add(
                f"{case}/hooks/dead/{dead['qualname']}",
                f"ran {times} time(s)",
                "never ran",
                f"dead hook on 2.x: {dead['reason']}",
            )


def _compare_callback_hooks(case: str, expected: Any, actual: Any, out: _Collector, rtol: float, atol: float,
                            check_requires_grad: bool) -> None:
    """The user callbacks' hook calls (``hooks["callbacks"]``, see ``HookLog.record``)."""
    e_cb, a_cb = (expected or {}).get("callbacks"), (actual or {}).get("callbacks")
    if e_cb is None or a_cb is None:
        return  # a record from before callbacks were logged
    base = f"{case}/callback_hooks"
    e_counts, a_counts = _call_counts(e_cb), _call_counts(a_cb)
    for name in list(e_counts) + [n for n in a_counts if n not in e_counts]:
        if e_counts.get(name, 0) != a_counts.get(name, 0):
            out.add(f"{base}/{name}", f"ran {e_counts.get(name, 0)} time(s)", f"ran {a_counts.get(name, 0)} time(s)",
                    "a user callback's hook ran a different number of times")
    if e_counts == a_counts:
        # the model's hooks take part in the order only when both sides logged their order
        both = bool(expected.get("sequence")) and bool(actual.get("sequence"))
        keep = expected.get("defined") or []
        seq_e = callback_timeline(expected, keep, with_module=both)
        seq_a = callback_timeline(actual, keep, with_module=both)
        if seq_e != seq_a:
            i = next((k for k, (x, y) in enumerate(zip(seq_e, seq_a)) if x != y), min(len(seq_e), len(seq_a)))
            out.add(f"{base}[{i}]", seq_e[max(0, i - 1):i + 3], seq_a[max(0, i - 1):i + 3],
                    f"callback hooks ran in another order among the hooks, at call {i}")
    a_outputs = a_cb.get("outputs") or {}
    for name, values in (e_cb.get("outputs") or {}).items():
        if name not in a_outputs:
            if a_counts.get(name):
                out.add(f"{base}/{name}", values[0] if values else values, MISSING,
                        "the migrated callback hook no longer reads its outputs")
            continue
        got = a_outputs[name]
        if len(values) != len(got):
            out.add(f"{base}/{name}", f"{len(values)} call(s) kept", f"{len(got)} call(s) kept")
        for i, (e, a) in enumerate(zip(values, got)):
            compare_values(e, a, f"{base}/{name}[{i}]", out, rtol, atol, check_requires_grad)


def _call_counts(callbacks: Dict[str, Any]) -> Dict[str, int]:
    counts: Dict[str, int] = {}
    for _, name in callbacks.get("calls") or []:
        counts[name] = counts.get(name, 0) + 1
    return counts


def _describe_call(rec: Dict[str, Any]) -> str:
    where = "sanity" if rec.get("sanity") else f"epoch {rec.get('epoch')}"
    return f"{rec.get('hook')}@{where}"


def compare_case(
    case: str,
    expected: Dict[str, Any],
    actual: Optional[Dict[str, Any]],
    rtol: float = 1e-5,
    atol: float = 1e-8,
    limit: Optional[int] = 10,
    sections: Sequence[str] = DEFAULT_SECTIONS,
    check_requires_grad: bool = False,
) -> List[Difference]:
    """Differences between the records of one case; empty when the runs match."""
    if actual is None:
        return [Difference(case, "case result", MISSING, "case missing from the actual results")]
    if expected.get("error"):
        return [Difference(f"{case}/error", expected.get("error"), actual.get("error"), "the original run failed")]
    if actual.get("error"):
        return [
            Difference(
                f"{case}/error",
                None,
                actual.get("error"),
                "the migrated run failed:\n" + (actual.get("traceback") or "").rstrip()[-3000:],
            )
        ]
    diffs: List[Difference] = []
    for section in sections:
        out = _Collector(limit)
        e, a = expected.get(section), actual.get(section)
        if section == "hooks":
            _compare_hooks(case, e, a, out)
        elif section == "callback_hooks":
            _compare_callback_hooks(case, expected.get("hooks"), actual.get("hooks"), out, rtol, atol,
                                    check_requires_grad)
        elif section == "monitors":
            if e is not None and a is not None:  # (a record from before they were recorded)
                compare_values(e, a, f"{case}/{section}", out, rtol, atol, check_requires_grad)
        elif section == "metrics":
            _compare_metrics(case, e, a, out, rtol, atol)
        elif section == "epoch_end":
            _compare_epoch_end(case, e, a, out, rtol, atol, check_requires_grad)
        elif section in ("global_step", "current_epoch"):
            if e != a:
                out.add(f"{case}/{section}", e, a)
        else:
            compare_values(e, a, f"{case}/{section}", out, rtol, atol, check_requires_grad)
        diffs.extend(out.finish(f"{case}/{section}"))
    return diffs


def compare_results(
    expected: Dict[str, Any],
    actual: Dict[str, Any],
    rtol: float = 1e-5,
    atol: float = 1e-8,
    limit: Optional[int] = 10,
    cases: Optional[Iterable[str]] = None,
    sections: Sequence[str] = DEFAULT_SECTIONS,
    check_requires_grad: bool = False,
) -> List[Difference]:
    """All differences between two result documents, case by case (expected's case order).

    ``cases`` restricts the comparison; by default every case of ``expected`` is compared and a
    case present only in ``actual`` is reported too.
    """
    e_cases = expected.get("cases", {})
    a_cases = actual.get("cases", {})
    names = list(cases) if cases is not None else list(e_cases) + [n for n in a_cases if n not in e_cases]
    diffs: List[Difference] = []
    for name in names:
        if name not in e_cases:
            diffs.append(Difference(name, MISSING, "case result", "case missing from the expected results"))
            continue
        diffs.extend(
            compare_case(name, e_cases[name], a_cases.get(name), rtol, atol, limit, sections, check_requires_grad)
        )
    return diffs


def group_by_case(diffs: Iterable[Difference]) -> Dict[str, List[Difference]]:
    grouped: Dict[str, List[Difference]] = {}
    for d in diffs:
        grouped.setdefault(d.case, []).append(d)
    return grouped


def format_differences(diffs: Sequence[Difference], max_lines: int = 40) -> str:
    lines = [str(d) for d in diffs[:max_lines]]
    if len(diffs) > max_lines:
        lines.append(f"... {len(diffs) - max_lines} more")
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m lightmigrate.verify.compare EXPECTED.json ACTUAL.json``: exit 1 on differences."""
    import argparse
    import json

    parser = argparse.ArgumentParser(prog="python -m lightmigrate.verify.compare")
    parser.add_argument("expected")
    parser.add_argument("actual")
    parser.add_argument("--rtol", type=float, default=1e-5)
    parser.add_argument("--atol", type=float, default=1e-8)
    args = parser.parse_args(argv)
    with open(args.expected, encoding="utf-8") as fh:
        expected = json.load(fh)
    with open(args.actual, encoding="utf-8") as fh:
        actual = json.load(fh)
    diffs = compare_results(expected, actual, args.rtol, args.atol)
    for name in expected.get("cases", {}):
        mine = [d for d in diffs if d.case == name]
        print(f"{name}: {'OK' if not mine else f'{len(mine)} difference(s)'}")
        for d in mine:
            print("   ", d)
    return 1 if diffs else 0


if __name__ == "__main__":
    raise SystemExit(main())
