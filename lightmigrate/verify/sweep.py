"""The published-package sweep: migrate the sources of real 1.x-era packages and count the
removed 1.x APIs the output still uses without a ``# TODO(lightmigrate)`` marker.

Used by ``tests/test_published_sweep.py`` and ``scripts/sweep_published.py``. Steps:

1. :func:`fetch` downloads a pinned wheel (``pip download --no-deps``) into a cache folder and
   :func:`extract` unpacks its ``.py`` files into a scratch folder (nothing is ever copied into
   the repository);
2. :func:`migrate` runs the rewrite engine over the copy (WRITE), then again (CHECK), and records
   which files failed and whether the original of a failed file is itself invalid Python;
3. :func:`count` looks for removed 1.x APIs in the output. What "removed" means is NOT taken from
   the rules' tables: it is derived from the real packages, by running small probes in the
   Lightning 2.6.6 interpreter (and the pytorch-lightning 1.9.5 one):

   - ``import`` / ``from ... import`` of ``pytorch_lightning`` / ``lightning.pytorch`` and dotted
     references through an alias of those roots (``pl.metrics.Accuracy``) must resolve on 2.6.6
     (import + getattr);
   - every keyword of a ``Trainer(...)`` call must be a parameter of 2.6.6's ``Trainer.__init__``;
   - a method of a class that subclasses ``LightningModule`` / ``Callback`` /
     ``LightningDataModule`` (through the package's own bases too) must not be named like a
     public 1.9.5 attribute of that class that 2.6.6 no longer has (``training_epoch_end``);
   - ``trainer.<attr>`` / ``<x>.trainer.<attr>`` must not name a public attribute a 1.9.5 Trainer
     had and a 2.6.6 Trainer does not.

   A finding inside a statement that carries a marker (on one of its lines or in the comment
   block just above it) counts as marked.

Only the standard library is used (the probes run in the given interpreters).
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import tokenize
import zipfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

PACKAGES: Tuple[str, ...] = (
    "lightning-bolts==0.6.0.post1",
    "pytorch-lightning-bolts==0.3.2.post1",
    "lightning-flash==0.8.1",
    "pytorch-forecasting==0.10.1",
)
ROOTS = ("pytorch_lightning", "lightning")
MARKER = "TODO(lightmigrate)"
KINDS = ("import", "trainer-kwarg", "hook", "trainer-attr")


class SweepError(RuntimeError):
    pass


# ---------------------------------------------------------------------------------------------
# Fetching and migrating


def fetch(package: str, cache: Path, python: Optional[str] = None, constraints: Optional[Path] = None) -> Path:
    """The wheel of ``package`` (``name==version``), downloaded once into ``cache``."""
    name, _, version = package.partition("==")
    stem = name.replace("-", "_").lower() + "-" + version
    cache.mkdir(parents=True, exist_ok=True)
    found = [p for p in cache.glob("*.whl") if p.name.lower().startswith(stem)]
    if found:
        return found[0]
    cmd = [python or sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
           "--no-deps", "--only-binary", ":all:", "-d", str(cache), package]
    if constraints is not None:
        cmd[4:4] = ["-c", str(constraints)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    found = [p for p in cache.glob("*.whl") if p.name.lower().startswith(stem)]
    if proc.returncode != 0 or not found:
        raise SweepError(f"pip could not download {package}:\n{proc.stderr[-2000:]}")
    return found[0]


def extract(wheel: Path, dest: Path) -> Path:
    """The ``.py`` files of ``wheel`` under ``dest`` (emptied first)."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            name = info.filename
            if not name.endswith(".py") or ".dist-info/" in name or name.startswith("/") or ".." in name.split("/"):
                continue
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(zf.read(info))
    return dest


@dataclass
class MigrationResult:
    files: int = 0
    changed: int = 0
    exit_code: int = 0
    failed: List[Tuple[str, str]] = field(default_factory=list)  # (path, problem) of valid originals
    invalid_originals: List[Tuple[str, str]] = field(default_factory=list)  # failed, and not valid Python
    unparsable_outputs: List[Tuple[str, str]] = field(default_factory=list)
    second_run_changed: List[str] = field(default_factory=list)
    second_run_exit: int = 0


def _compile_error(text: bytes, path: str) -> Optional[str]:
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. invalid escape sequences in the package's code
            compile(text, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def migrate(src: Path, rules=None) -> MigrationResult:
    """Rewrite ``src`` in place with the engine, then check that a second run changes nothing."""
    from lightmigrate.engine import Mode, run
    from lightmigrate.rules import ALL_RULES

    rules = list(ALL_RULES if rules is None else rules)
    originals = {str(p): p.read_bytes() for p in src.rglob("*.py")}
    first = run([str(src)], rules, Mode.WRITE)
    result = MigrationResult(files=first.scanned, changed=first.changed, exit_code=first.exit_code)
    for f in first.files:
        if f.error is None:
            continue
        why = _compile_error(originals.get(f.path, b""), f.path)
        (result.invalid_originals if why else result.failed).append((f.path, why or f.error.format()))
    for path in originals:
        why = _compile_error(Path(path).read_bytes(), path)
        if why and not any(path == p for p, _ in result.invalid_originals):
            result.unparsable_outputs.append((path, why))
    second = run([str(src)], rules, Mode.CHECK)
    result.second_run_exit = second.exit_code
    result.second_run_changed = [f.path for f in second.files if f.changed]
    return result


# ---------------------------------------------------------------------------------------------
# What the installed Lightning versions say


PROBE = r'''
import importlib, inspect, json, sys, warnings
warnings.filterwarnings("ignore")
req = json.loads(sys.stdin.read())
try:
    import pytorch_lightning as pl
except Exception:
    import lightning.pytorch as pl
out = {"version": pl.__version__}
t = pl.Trainer(accelerator="cpu", devices=1, logger=False, enable_progress_bar=False, enable_checkpointing=False)
out["trainer_params"] = sorted(inspect.signature(pl.Trainer.__init__).parameters)
out["trainer_attrs"] = sorted(set(dir(t)) | set(dir(pl.Trainer)))
out["classes"] = {k: sorted(dir(getattr(pl, k))) for k in ("LightningModule", "Callback", "LightningDataModule")}

def resolve(dotted):
    parts = dotted.split(".")
    obj, i = None, len(parts)
    while i > 0:
        try:
            obj = importlib.import_module(".".join(parts[:i]))
            break
        except ModuleNotFoundError as exc:
            missing = exc.name or ""
            if missing and not ".".join(parts[:i]).startswith(missing.split(".")[0]):
                return "error", f"needs {missing}"
            i -= 1
        except Exception as exc:
            return "error", f"{type(exc).__name__}: {exc}"[:200]
    if obj is None:
        return "missing", ""
    for name in parts[i:]:
        if not hasattr(obj, name):
            return "missing", ""
        obj = getattr(obj, name)
    return "ok", obj

out["resolve"] = {}
out["kind"] = {}
bases = {"module": pl.LightningModule, "callback": pl.Callback, "datamodule": pl.LightningDataModule}
for dotted in req.get("names", []):
    status, obj = resolve(dotted)
    out["resolve"][dotted] = status if status != "error" else "error: " + obj
    if status == "ok" and inspect.isclass(obj):
        for kind, base in bases.items():
            if issubclass(obj, base):
                out["kind"][dotted] = kind
print("@@PROBE@@" + json.dumps(out))
'''


def probe(python: str, names: Iterable[str] = ()) -> Dict:
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    proc = subprocess.run([python, "-c", PROBE], input=json.dumps({"names": sorted(set(names))}),
                          capture_output=True, text=True, timeout=900, env=env, check=False)
    marker = proc.stdout.rfind("@@PROBE@@")
    if proc.returncode != 0 or marker < 0:
        raise SweepError(f"probe failed in {python}:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout[marker + len("@@PROBE@@"):])


@dataclass
class Facts:
    """What "removed" means, from the two installed versions."""

    v2_trainer_params: Set[str]
    removed_trainer_attrs: Set[str]
    removed_methods: Dict[str, Set[str]]  # kind -> public 1.9.5 names gone in 2.6.6


def facts(v1: Dict, v2: Dict) -> Facts:
    public = lambda names: {n for n in names if not n.startswith("_")}  # noqa: E731
    removed = {k: public(v1["classes"][cls]) - set(v2["classes"][cls])
               for k, cls in (("module", "LightningModule"), ("callback", "Callback"),
                              ("datamodule", "LightningDataModule"))}
    return Facts(set(v2["trainer_params"]), public(v1["trainer_attrs"]) - set(v2["trainer_attrs"]), removed)


# ---------------------------------------------------------------------------------------------
# Finding uses in the migrated sources


@dataclass(frozen=True)
class Use:
    package: str
    path: str
    line: int
    kind: str  # one of KINDS
    detail: str
    marked: bool = False


def _dotted(node: ast.AST) -> Optional[str]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


class _FileScan:
    """One file's candidate uses (before resolution) and its statement/marker geometry."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.tree = ast.parse(text)
        self.lines = text.splitlines()
        self.aliases: Dict[str, str] = {}
        self.refs: List[Tuple[int, str, ast.AST]] = []  # (line, dotted full name, node) to resolve
        self.trainer_calls: List[Tuple[int, str, ast.AST]] = []  # (line, keyword, node)
        self.attr_uses: List[Tuple[int, str, ast.AST]] = []  # trainer.<attr>
        self.classes: List[Tuple[ast.ClassDef, List[str]]] = []  # (class, full base names)
        self.markers = self._marker_lines(text)
        self.stmt_starts = self._statement_spans()
        self._parents: Optional[Dict[int, ast.AST]] = None
        self._scan()

    @staticmethod
    def _marker_lines(text: str) -> Set[int]:
        found = set()
        try:
            import io

            for tok in tokenize.generate_tokens(io.StringIO(text).readline):
                if tok.type == tokenize.COMMENT and MARKER in tok.string:
                    found.add(tok.start[0])
        except (tokenize.TokenError, SyntaxError):
            pass
        return found

    def _statement_spans(self) -> List[Tuple[int, int]]:
        spans = []
        for node in ast.walk(self.tree):
            if isinstance(node, ast.stmt):
                start = node.lineno
                for dec in getattr(node, "decorator_list", ()):
                    start = min(start, dec.lineno)
                spans.append((start, node.end_lineno or node.lineno))
        return spans

    def is_marked(self, line: int) -> bool:
        # The innermost statement containing the line (the shortest span).
        containing = [s for s in self.stmt_starts if s[0] <= line <= s[1]]
        start = min(containing, key=lambda s: s[1] - s[0])[0] if containing else line
        if any(start <= m <= line for m in self.markers):
            return True
        above = start - 1
        while above >= 1 and self.lines[above - 1].strip().startswith("#"):
            if above in self.markers:
                return True
            above -= 1
        return False

    def _full(self, node: ast.AST) -> Optional[str]:
        dotted = _dotted(node)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        if head not in self.aliases:
            return None
        return self.aliases[head] + ("." + rest if rest else "")

    def _scan(self) -> None:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.split(".")[0] in ROOTS:
                        self.aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
                        if a.name != "lightning":
                            self.refs.append((node.lineno, a.name, node))
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module.split(".")[0] in ROOTS:
                    for a in node.names:
                        full = node.module if a.name == "*" else f"{node.module}.{a.name}"
                        if a.name != "*":
                            self.aliases[a.asname or a.name] = full
                        self.refs.append((node.lineno, full, node))
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Attribute):
                full = self._full(node)
                if full and not self._inner_of_chain(node):
                    self.refs.append((node.lineno, full, node))
                value = node.value
                if (isinstance(value, ast.Name) and value.id == "trainer") or (
                        isinstance(value, ast.Attribute) and value.attr == "trainer"):
                    self.attr_uses.append((node.lineno, node.attr, node))
            elif isinstance(node, ast.Call):
                callee = self._full(node.func)
                if callee and callee.split(".")[-1] == "Trainer":
                    for kw in node.keywords:
                        if kw.arg is not None:
                            self.trainer_calls.append((kw.value.lineno, kw.arg, node))
            elif isinstance(node, ast.ClassDef):
                bases = []
                for b in node.bases:
                    full = self._full(b)
                    bases.append(full if full else (_dotted(b) or ""))
                self.classes.append((node, bases))

    def _inner_of_chain(self, node: ast.Attribute) -> bool:
        if self._parents is None:
            self._parents = {}
            for parent in ast.walk(self.tree):
                for child in ast.iter_child_nodes(parent):
                    self._parents[id(child)] = parent
        parent = self._parents.get(id(node))
        return isinstance(parent, ast.Attribute) and parent.value is node


def scan_package(root: Path) -> List[_FileScan]:
    scans = []
    import warnings

    for path in sorted(root.rglob("*.py")):
        try:
            text = path.read_text(encoding="utf-8")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                scans.append(_FileScan(path, text))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue  # reported by migrate() as an invalid original or an unparsable output
    return scans


def count(package_scans: Dict[str, List[_FileScan]], v1_python: str, v2_python: str) -> List[Use]:
    """Every use of a removed 1.x API in the scanned sources, with whether it is marked."""
    names: Set[str] = set()
    bases: Set[str] = set()
    for scans in package_scans.values():
        for s in scans:
            names.update(full for _, full, _ in s.refs)
            for _, full_bases in s.classes:
                bases.update(b for b in full_bases if b.split(".")[0] in ROOTS)
    v2 = probe(v2_python, names)
    v1 = probe(v1_python, bases)
    f = facts(v1, v2)
    uses: List[Use] = []
    for package, scans in package_scans.items():
        kinds = _class_kinds(scans, v1["kind"])
        for s in scans:
            rel = str(s.path)

            def add(line: int, kind: str, detail: str) -> None:
                uses.append(Use(package, rel, line, kind, detail, s.is_marked(line)))

            seen = set()
            for line, full, _ in s.refs:
                status = v2["resolve"].get(full, "ok")
                if status == "missing" and (line, full) not in seen:
                    seen.add((line, full))
                    add(line, "import", full)
            for line, kw, _ in s.trainer_calls:
                if kw not in f.v2_trainer_params:
                    add(line, "trainer-kwarg", f"Trainer({kw}=)")
            for line, attr, _ in s.attr_uses:
                if attr in f.removed_trainer_attrs:
                    add(line, "trainer-attr", f"trainer.{attr}")
            for cls, _ in s.classes:
                kind = kinds.get((rel, cls.name, cls.lineno))
                if not kind:
                    continue
                for item in cls.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name in f.removed_methods[kind]:
                        line = min([item.lineno] + [d.lineno for d in item.decorator_list])
                        add(line, "hook", f"{kind} {cls.name}.{item.name}")
    return uses


def _class_kinds(scans: Sequence[_FileScan], lightning_kinds: Dict[str, str]) -> Dict[Tuple[str, str, int], str]:
    """(path, class name, line) -> "module"/"callback"/"datamodule" for classes that derive from
    Lightning's classes directly or through other classes of the same package (matched by name)."""
    by_name: Dict[str, List[Tuple[Tuple[str, str, int], List[str]]]] = defaultdict(list)
    for s in scans:
        for cls, full_bases in s.classes:
            by_name[cls.name].append(((str(s.path), cls.name, cls.lineno), full_bases))
    kinds: Dict[Tuple[str, str, int], str] = {}
    changed = True
    while changed:
        changed = False
        for entries in by_name.values():
            for key, full_bases in entries:
                if key in kinds:
                    continue
                for b in full_bases:
                    kind = lightning_kinds.get(b)
                    if kind is None:
                        local = [kinds.get(k) for k, _ in by_name.get(b.split(".")[-1], ())]
                        kind = next((k for k in local if k), None)
                    if kind:
                        kinds[key] = kind
                        changed = True
                        break
    return kinds


# ---------------------------------------------------------------------------------------------
# The whole sweep


@dataclass
class SweepResult:
    migrations: Dict[str, MigrationResult]
    uses: List[Use]

    @property
    def unmarked(self) -> List[Use]:
        return [u for u in self.uses if not u.marked]

    def table(self) -> str:
        """Per package and kind: uses found, marked, unmarked; then every unmarked use."""
        totals: Dict[Tuple[str, str], Counter] = defaultdict(Counter)
        for u in self.uses:
            totals[(u.package, u.kind)]["found"] += 1
            totals[(u.package, u.kind)]["unmarked" if not u.marked else "marked"] += 1
        rows = [f"{'package':40} {'kind':14} {'found':>6} {'marked':>7} {'unmarked':>9}"]
        for package in self.migrations:
            for kind in KINDS:
                c = totals.get((package, kind), Counter())
                rows.append(f"{package:40} {kind:14} {c['found']:6} {c['marked']:7} {c['unmarked']:9}")
        rows.append(f"{'total':40} {'':14} {len(self.uses):6} {len(self.uses) - len(self.unmarked):7} "
                    f"{len(self.unmarked):9}")
        for u in self.unmarked:
            rows.append(f"  unmarked: {u.path}:{u.line}: {u.kind}: {u.detail}")
        return "\n".join(rows)

    def migration_summary(self) -> str:
        rows = []
        for package, m in self.migrations.items():
            rows.append(f"{package}: {m.files} files, {m.changed} changed, exit {m.exit_code}, "
                        f"{len(m.failed)} failed, {len(m.invalid_originals)} invalid originals, "
                        f"{len(m.unparsable_outputs)} unparsable outputs, second run changed "
                        f"{len(m.second_run_changed)} (exit {m.second_run_exit})")
            for path, why in m.invalid_originals:
                rows.append(f"  invalid original (not migrated): {path}: {why}")
            for path, why in m.failed + m.unparsable_outputs:
                rows.append(f"  FAILED: {path}: {why}")
            for path in m.second_run_changed:
                rows.append(f"  second run changed: {path}")
        return "\n".join(rows)


def sweep(work: Path, cache: Path, v1_python: str, v2_python: str, packages: Sequence[str] = PACKAGES,
          rules=None, constraints: Optional[Path] = None) -> SweepResult:
    migrations: Dict[str, MigrationResult] = {}
    scans: Dict[str, List[_FileScan]] = {}
    for package in packages:
        wheel = fetch(package, cache, constraints=constraints)
        src = extract(wheel, work / package.replace("==", "-"))
        migrations[package] = migrate(src, rules)
        scans[package] = scan_package(src)
    return SweepResult(migrations, count(scans, v1_python, v2_python))
