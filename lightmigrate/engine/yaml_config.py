"""LightningCLI YAML configs: the keys directly under a top-level ``trainer:`` mapping.

A small line-based editor, so the core needs no YAML library and every byte the mapping does not
touch (comments, order, quoting, blank lines, other sections) stays as it was. It reads the block
``trainer:`` section, one ``key: scalar`` per line, applies the same argument mapping as LM101
(:mod:`lightmigrate.catalog.trainer_args`) and writes changed keys back in the file's style.
What it cannot edit safely (a flow-style ``trainer: {...}``, anchors, aliases and tags, nested
values that would need rewriting, new callbacks) gets a ``# TODO(lightmigrate): LM101`` YAML
comment above the line instead.
"""

from __future__ import annotations

import re
from typing import Any, List, Optional, Sequence, Tuple

from lightmigrate import MARKER_PREFIX
from lightmigrate.engine.markers import find_markers, merge_marker_findings
from lightmigrate.engine.transform import TransformResult
from lightmigrate.output.findings import Finding, Kind
from lightmigrate.catalog import removed as removed_catalog
from lightmigrate.catalog import trainer_args as tam

CODE = "LM101"
_TOP_TRAINER = re.compile(r"^trainer[ \t]*:(?P<rest>.*)$")
_KEY = re.compile(r"^(?P<indent>[ ]+)(?P<key>[A-Za-z_][A-Za-z0-9_]*)(?P<colon>[ \t]*:)(?P<sp>[ \t]*)(?P<value>.*?)(?P<comment>[ \t]+#.*)?$")
_INT = re.compile(r"^[-+]?[0-9]+$")
_PLAIN_SAFE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")
_NULLS = ("null", "Null", "NULL", "~", "")
_TRUE = ("true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON")
_FALSE = ("false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF")
# Keys whose rewrite would need new YAML structure (callbacks, imports); LM101 marks them here.
_STRUCTURAL = {
    "accumulate_grad_batches": "T11: a schedule {epoch: n} is no longer accepted; add a callback "
                               "`class_path: ...callbacks.GradientAccumulationScheduler` with `init_args: {scheduling: ...}`",
    "weights_summary": "A.8: `weights_summary` was removed; use `enable_model_summary: false` or a "
                       "ModelSummary callback with `max_depth`",
    "progress_bar_refresh_rate": "A.8: `progress_bar_refresh_rate` was removed; use a TQDMProgressBar callback "
                                 "with `refresh_rate` (0 means `enable_progress_bar: false`)",
    "process_position": "A.8: `process_position` was removed; use a TQDMProgressBar callback with `process_position`",
    "auto_select_gpus": "T5: `auto_select_gpus` was removed; pick free GPUs with "
                        "pytorch_lightning.accelerators.find_usable_cuda_devices(N) for `devices`",
}


# Removed keys whose 1.9 value turned the feature off: the line is dropped (2.x rejects the key).
_DISABLED = {
    "track_grad_norm": (-1, -1.0, "-1"),
    "truncated_bptt_steps": (None, 0),
    "reload_dataloaders_every_epoch": (False,),
}
_REMOVED_KEYS = frozenset(removed_catalog.TRAINER_KWARGS)


def _removed_key_why(key: str) -> str:
    row, instead = removed_catalog.TRAINER_KWARGS[key]
    if key == "track_grad_norm":
        return ("T10/M17: `track_grad_norm` was removed (2.x's Trainer rejects it); log the norms in the "
                "LightningModule: `self.log_dict(grad_norm(self, norm_type=p))` in `on_before_optimizer_step` "
                "(from pytorch_lightning.utilities import grad_norm; 1.9 logged them for the first optimizer on "
                "stepping batches only, rounded to 4 digits: what LM302 writes for Trainer(track_grad_norm=p) in "
                f"Python), then delete this key ({tam.GUIDE})")
    return f"{row}: `{key}` was removed (2.x's Trainer rejects it); use {instead} ({tam.GUIDE})"


def has_trainer_section(text: str) -> bool:
    """The cheap check discovery uses: a ``trainer:`` key at the top level."""
    return "trainer" in text and any(_TOP_TRAINER.match(line) for line in text.splitlines())


def file_has_trainer_section(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            data = f.read(1 << 20)
    except OSError:
        return False
    return has_trainer_section(data.decode("utf-8", "replace"))


def _strip_comment(rest: str) -> str:
    return re.sub(r"(^|[ \t])#.*$", "", rest).strip()


def parse_scalar(text: str) -> Tuple[Any, str]:
    """(value, style) of a one-line YAML scalar or flow list; value is NOT_LITERAL when it is
    something this editor does not evaluate (anchors, aliases, tags, flow mappings, ...)."""
    t = text.strip()
    if t[:1] in ("&", "*", "!", "|", ">", "{", "?", "@", "`", "%"):
        return tam.NOT_LITERAL, "other"
    if len(t) >= 2 and t[0] == t[-1] == "'":
        body = t[1:-1]
        return (body.replace("''", "'"), "'") if "'" not in body.replace("''", "") else (tam.NOT_LITERAL, "other")
    if len(t) >= 2 and t[0] == t[-1] == '"':
        body = t[1:-1]
        return (body, '"') if "\\" not in body and '"' not in body else (tam.NOT_LITERAL, "other")
    if t.startswith("["):
        if not t.endswith("]"):
            return tam.NOT_LITERAL, "other"
        items = [i.strip() for i in t[1:-1].split(",") if i.strip()]
        values = [parse_scalar(i)[0] for i in items]
        if any(v is tam.NOT_LITERAL or isinstance(v, list) for v in values):
            return tam.NOT_LITERAL, "other"
        return values, "flow"
    if t in _NULLS:
        return None, "plain"
    if t in _TRUE:
        return True, "plain"
    if t in _FALSE:
        return False, "plain"
    if _INT.match(t):
        return int(t), "plain"
    if re.match(r"^[-+]?([0-9]*\.[0-9]+|[0-9]+\.[0-9]*)([eE][-+]?[0-9]+)?$", t):
        return float(t), "plain"
    if t.startswith(("'", '"')) or ": " in t or " #" in t:
        return tam.NOT_LITERAL, "other"
    return t, "plain"


def yaml_scalar(value: Any, style: str, quote: str) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(yaml_scalar(v, "plain", quote) for v in value) + "]"
    s = str(value)
    if style == "plain" and _PLAIN_SAFE.match(s) and parse_scalar(s)[0] == s:
        return s
    q = style if style in ("'", '"') else quote
    return q + s + q


class _Section:
    """The lines of the top-level trainer block and its direct keys."""

    def __init__(self, lines: List[str], start: int) -> None:
        self.start = start  # index of the ``trainer:`` line
        self.end = start + 1
        self.keys: List[Tuple[int, int, Any]] = []  # (line index, last line index of its value, match)
        self.indent: Optional[str] = None
        i = start + 1
        while i < len(lines):
            raw = lines[i].rstrip("\r\n")
            stripped = raw.strip()
            if stripped and not raw[:1].isspace() and not stripped.startswith("#"):
                break  # next top-level key
            if stripped and not stripped.startswith("#"):
                lead = raw[: len(raw) - len(raw.lstrip())]
                if self.indent is None:
                    self.indent = lead
                if lead == self.indent:
                    m = _KEY.match(raw)
                    self.keys.append((i, i, m))
                elif self.keys and len(lead) > len(self.indent):
                    line, _, m = self.keys[-1]
                    self.keys[-1] = (line, i, m)
            i += 1
        self.end = i


def _line_ending(line: str) -> str:
    return line[len(line.rstrip("\r\n")):]


def _marker_line(indent: str, why: str, eol: str, code: str = CODE) -> str:
    return f"{indent}# {MARKER_PREFIX} {code} {why}{eol}"


def _already_marked(lines: List[str], at: int, text: str) -> bool:
    j = at - 1
    while j >= 0 and lines[j].strip().startswith("#"):
        if lines[j].strip() == text.strip():
            return True
        j -= 1
    return False


def transform_yaml(text: str, path: str = "<string>", enabled: bool = True) -> TransformResult:
    """Rewrite the trainer section of a LightningCLI config; ``enabled`` False only counts markers."""
    findings: List[Finding] = []
    lines = text.splitlines(keepends=True)
    eol = next((_line_ending(l) for l in lines if _line_ending(l)), "\n")
    starts = [i for i, l in enumerate(lines) if _TOP_TRAINER.match(l.rstrip("\r\n"))]
    if enabled:
        for start in reversed(starts):
            lines = _rewrite_section(lines, start, eol, findings, path)
    new_text = "".join(lines)
    markers = find_markers(new_text)
    merged = merge_marker_findings(findings, markers, path)
    return TransformResult(new_text, merged, new_text != text, len(markers))


def _rewrite_section(lines: List[str], start: int, eol: str, findings: List[Finding], path: str) -> List[str]:
    head = lines[start].rstrip("\r\n")
    rest = _strip_comment(_TOP_TRAINER.match(head).group("rest"))
    if rest:
        why = ("the trainer section is not a plain block mapping (flow style, anchor, alias or tag); migrate its "
               f"Trainer arguments by hand as LM101 does for Python ({tam.GUIDE})")
        marker = _marker_line("", why, eol)
        if not _already_marked(lines, start, marker):
            lines = lines[:start] + [marker] + lines[start:]
        return lines
    sec = _Section(lines, start)
    if sec.indent is None:
        return lines
    entries: List[tam.Entry] = []
    styles = {}
    quote = '"'
    pre_marks: List[Tuple[int, str]] = []
    for line_no, last, m in sec.keys:
        if m is None:
            pre_marks.append((line_no, "this line is not a `key: value` pair this editor understands; check it "
                                       f"against the 2.x Trainer arguments ({tam.GUIDE})"))
            continue
        key, value_text = m.group("key"), m.group("value")
        if last != line_no or value_text.strip() == "":
            value, style = tam.NOT_LITERAL, "block"
        else:
            value, style = parse_scalar(value_text)
        if style in ("'", '"'):
            quote = style
        styles[line_no] = style
        v = tam.Value(literal=value, code=value_text)
        if key in _DISABLED and value is not tam.NOT_LITERAL and any(
                value == off and type(value) is type(off) for off in _DISABLED[key]):
            continue  # the 1.9 value that turned the removed feature off: the line is dropped
        if key == "reload_dataloaders_every_epoch" and value is True and not any(
                k[2] is not None and k[2].group("key") == "reload_dataloaders_every_n_epochs" for k in sec.keys):
            # A.8: the same reloading, under the 1.6+ name
            entries.append(tam.Entry("reload_dataloaders_every_n_epochs", tam.lit(1), origin=line_no, changed=True))
            continue
        if key in _STRUCTURAL and not (value is None or value is False):
            if key == "accumulate_grad_batches" and isinstance(value, int):
                pass
            else:
                pre_marks.append((line_no, f"{_STRUCTURAL[key]} ({tam.GUIDE})"))
                continue
        entries.append(tam.Entry(key, v, origin=line_no))
    mapped = tam.map_arguments(entries, quote, has_tune=True, resume_handled=False)
    # Any new value that is not a plain YAML value (an expression) cannot be written here.
    for e in mapped.entries:
        if e.changed and e.value.literal is tam.NOT_LITERAL:
            pre_marks.append((e.origin, f"`{e.name}` needs a value this editor cannot write; see LM101 ({tam.GUIDE})"))
            mapped = tam.Mapped(entries=entries, markers=mapped.markers)
            break
    # A removed argument the mapping neither rewrote nor marked: 2.x's Trainer (or the
    # LightningCLI parser) rejects it, so it gets a marker naming what replaces it.
    said = " ".join([*mapped.markers, *(why for _, why in pre_marks)])
    for e in mapped.entries:
        if not e.changed and isinstance(e.origin, int) and e.name in _REMOVED_KEYS and not re.search(
                rf"(?<![A-Za-z0-9_]){e.name}(?![A-Za-z0-9_])", said):
            pre_marks.append((e.origin, _removed_key_why(e.name)))
    indent = sec.indent
    kept = {e.origin for e in mapped.entries if not e.changed}
    produced: dict = {}
    for e in mapped.entries:
        if e.changed:
            produced.setdefault(e.origin, []).append(e)
    out = lines[: sec.start + 1]
    key_lines = {ln: (last, m) for ln, last, m in sec.keys}
    marks_at = {}
    for ln, why in pre_marks:
        marks_at.setdefault(ln, []).append(why)
    section_marks = [w for w in mapped.markers]
    i = sec.start + 1
    # Section-level markers (from the mapping) go right under ``trainer:``.
    for why in section_marks:
        marker = _marker_line(indent, why, eol)
        if marker.strip() not in (l.strip() for l in lines[sec.start + 1: sec.end]):
            out.append(marker)
    while i < sec.end:
        if i not in key_lines:
            out.append(lines[i])
            i += 1
            continue
        last, m = key_lines[i]
        for why in marks_at.get(i, []):
            marker = _marker_line(indent, why, eol)
            if not _already_marked(lines, i, marker):
                out.append(marker)
        if i in produced:
            news = produced[i]
            comment = (m.group("comment") or "") if m else ""
            line_eol = _line_ending(lines[i]) or eol
            style = styles.get(i, "plain")
            for k, e in enumerate(news):
                value = yaml_scalar(e.value.literal, style if style != "block" else "plain", quote)
                tail = comment if k == len(news) - 1 else ""
                out.append(f"{indent}{e.name}{m.group('colon')} {value}{tail}{line_eol}")
            i = last + 1
        elif i in kept or m is None or i in marks_at:
            out.extend(lines[i: last + 1])
            i = last + 1
        else:
            i = last + 1  # dropped
    out.extend(lines[sec.end:])
    if not mapped.has_accelerator and not any(e.name is None for e in mapped.entries):
        findings.append(Finding(CODE, "B-1/T29: 2.x defaults to accelerator=\"auto\" and uses a GPU when one is "
                                      "present; 1.9 ran this config's Trainer on the CPU. Add `accelerator: cpu` to "
                                      f"keep 1.9's behaviour ({tam.GUIDE})", Kind.NOTE, sec.start + 1, 1, path))
    return out


def _marked_by(lines: List[str], at: int, code: str) -> bool:
    """Whether a marker of ``code`` is among the comment lines right above line ``at``."""
    j = at - 1
    while j >= 0 and lines[j].strip().startswith("#"):
        if lines[j].strip().startswith(f"# {MARKER_PREFIX} {code} "):
            return True
        j -= 1
    return False


def mark_keys(text: str, keys: Sequence[str], code: str, why: str) -> str:
    """``text`` with a ``# TODO(lightmigrate): CODE why`` line above each of ``keys`` directly
    under a top-level ``trainer:`` block, unless a marker of ``code`` is there already (its
    wording may name modules that a later run no longer counts: one marker per key, for good)."""
    lines = text.splitlines(keepends=True)
    eol = next((_line_ending(l) for l in lines if _line_ending(l)), "\n")
    for start in reversed([i for i, l in enumerate(lines) if _TOP_TRAINER.match(l.rstrip("\r\n"))]):
        sec = _Section(lines, start)
        for line_no, _, m in reversed(sec.keys):
            if m is not None and m.group("key") in keys:
                if not _marked_by(lines, line_no, code):
                    lines.insert(line_no, _marker_line(sec.indent or "", why, eol, code))
    return "".join(lines)


def transform_config(text: str, rules: Sequence, path: str = "<string>", project=None) -> TransformResult:
    """The engine's entry point for a YAML file: LM101's mapping when LM101 is selected; with
    LM005 selected, a marker on accumulation/clipping keys that a module of the project (``project``,
    the run's class index) can no longer take from the Trainer once LM005 makes it manual."""
    codes = {getattr(r, "code", "") for r in rules}
    marked = text
    if "LM005" in codes and project is not None:
        from lightmigrate.rules.lm005_multi_optimizer import raising_settings, script_marker  # the rule's own wording

        why = script_marker(project, path)
        if why is not None:
            marked = mark_keys(text, sorted(raising_settings(project.trainer_settings[path])), "LM005", why)
    out = transform_yaml(marked, path, enabled=CODE in codes)
    out.changed = out.text != text
    return out
