"""Corpus cases built on real published 1.x-era LightningModules (``corpus/published/*.py``).

A published case does not contain the model: it names it. The case file holds a literal dict

    PUBLISHED = {
        "package": "lightning-bolts==0.6.0.post1",             # pip requirement, pinned
        "module": "pl_bolts.models.regression.linear_regression",  # module defining the model
        "inline": ["pl_bolts.utils.stability"],                 # package modules it needs
    }

plus the usual ``lightmigrate_case()`` entry point, which uses the model's class by its bare
name. At test time:

1. :func:`install` puts the pinned package into a scratch directory with
   ``pip install --no-deps --target DIR -c constraints.txt`` (nothing is installed into either
   environment, and nothing of the package is ever copied into the repository);
2. :func:`build_case` writes ONE self-contained case file: the case's docstring, then the
   ORIGINAL source of every ``inline`` module and of ``module`` (in dependency order, each
   verbatim except that its top-level imports from the package itself are commented out,
   because the names they import are defined by the sources inlined above them), then the
   case file's own code;
3. that file is an ordinary corpus case: the original runs on 1.9.5, the migrated copy on 2.x.

Why inline instead of importing the package: the package's ``__init__`` modules import
everything it ships (torchvision models, gym, ...), and a package written for 1.x often does not
import at all on 2.x. Inlining only what the model needs keeps the run small and lets the
migration see (and rewrite) the published source, which is the point of the exercise.

Every top-level import from the package must be satisfied by an ``inline`` module (or by
``module`` itself); anything else is an error, so a case never silently runs against a stub.
Only the standard library is used here.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

PathLike = Union[str, "os.PathLike[str]"]
REQUIRED_KEYS = ("package", "module")


class PublishedCaseError(ValueError):
    """A published case file is malformed or its package cannot be assembled into a case."""


@dataclass(frozen=True)
class PublishedCase:
    path: Path
    package: str  # pip requirement, e.g. "lightning-bolts==0.6.0.post1"
    module: str  # dotted module that defines the model
    inline: Tuple[str, ...] = field(default_factory=tuple)

    @property
    def name(self) -> str:
        return self.path.stem

    @property
    def root(self) -> str:
        """The import root of the package (``pl_bolts`` for ``pl_bolts.models...``)."""
        return self.module.split(".", 1)[0]


def published_files(directory: Optional[PathLike] = None) -> List[Path]:
    """``<repo>/corpus/published/*.py``, sorted by name."""
    if directory is None:
        from lightmigrate.verify.oracle import repo_root

        directory = repo_root() / "corpus" / "published"
    return sorted(p for p in Path(directory).glob("*.py") if not p.name.startswith("_"))


def read_case(path: PathLike) -> PublishedCase:
    """Parse the ``PUBLISHED`` literal of a case file (without importing it)."""
    p = Path(path)
    tree = ast.parse(p.read_text(encoding="utf-8"), str(p))
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == "PUBLISHED"
        ):
            try:
                spec = ast.literal_eval(node.value)
            except ValueError as exc:
                raise PublishedCaseError(f"{p.name}: PUBLISHED must be a literal dict") from exc
            break
    else:
        raise PublishedCaseError(f"{p.name}: no top-level PUBLISHED = {{...}}")
    if not isinstance(spec, dict) or any(not isinstance(spec.get(k), str) for k in REQUIRED_KEYS):
        raise PublishedCaseError(f"{p.name}: PUBLISHED needs string keys {REQUIRED_KEYS}")
    if "==" not in spec["package"]:
        raise PublishedCaseError(f"{p.name}: pin the package version ({spec['package']!r})")
    inline = spec.get("inline", [])
    if not isinstance(inline, (list, tuple)) or not all(isinstance(m, str) for m in inline):
        raise PublishedCaseError(f"{p.name}: PUBLISHED['inline'] must be a list of module names")
    return PublishedCase(p, spec["package"], spec["module"], tuple(inline))


def install_cache() -> Path:
    """Where ``lightmigrate verify`` keeps the pinned packages of published-model cases between
    runs (each in a folder of its own, reused by :func:`install`): ``$LIGHTMIGRATE_CACHE`` or
    ``$XDG_CACHE_HOME/lightmigrate`` (``~/.cache/lightmigrate``), then ``published``."""
    base = os.environ.get("LIGHTMIGRATE_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "lightmigrate")
    return Path(base) / "published"


def install(package: str, target: PathLike, python: Optional[PathLike] = None, constraints: Optional[PathLike] = None,
            timeout: float = 600) -> Path:
    """``pip install --no-deps --target`` the pinned ``package`` into ``target`` (idempotent: a
    target holding a finished install of the same requirement is reused). Returns ``target``."""
    from lightmigrate.verify.oracle import repo_root

    dest = Path(target)
    marker = dest / ".lightmigrate-installed"
    if marker.exists() and marker.read_text(encoding="utf-8") == package:
        return dest
    dest.mkdir(parents=True, exist_ok=True)
    cmd = [
        str(python or sys.executable), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
        "--no-deps", "--no-compile", "--target", str(dest),
        "-c", str(constraints or repo_root() / "constraints.txt"), package,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        raise PublishedCaseError(f"pip could not install {package}:\n{proc.stderr[-3000:]}")
    marker.write_text(package, encoding="utf-8")
    return dest


def module_file(site: PathLike, module: str) -> Path:
    """The source file of dotted ``module`` under an install directory."""
    base = Path(site).joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    raise PublishedCaseError(f"module {module} not found under {site}")


def _package_imports(tree: ast.Module, root: str) -> List[ast.stmt]:
    """Top-level ``from root... import`` / ``import root...`` statements."""
    found: List[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == root or node.module.startswith(root + "."):
                found.append(node)
        elif isinstance(node, ast.Import) and any(
            a.name == root or a.name.startswith(root + ".") for a in node.names
        ):
            found.append(node)
    return found


def _top_level_names(tree: ast.Module) -> set:
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                for sub in ast.walk(target):
                    if isinstance(sub, ast.Name):
                        names.add(sub.id)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                names.add((alias.asname or alias.name).split(".")[0])
    return names


def strip_package_imports(source: str, root: str, provided: Mapping[str, set], filename: str = "<module>") -> str:
    """Comment out the top-level imports from package ``root`` in ``source``. Each must import
    names that an already inlined module (``provided``: module -> its top-level names) defines,
    under the same name (no ``as`` renames, no ``import pkg.mod``)."""
    tree = ast.parse(source, filename)
    lines = source.splitlines(keepends=True)
    for node in sorted(_package_imports(tree, root), key=lambda n: n.lineno, reverse=True):
        if not isinstance(node, ast.ImportFrom):
            raise PublishedCaseError(f"{filename}:{node.lineno}: `import {root}...` cannot be inlined")
        if node.module not in provided:
            raise PublishedCaseError(
                f"{filename}:{node.lineno}: imports from {node.module}, which is not inlined "
                f"(add it to PUBLISHED['inline'])"
            )
        for alias in node.names:
            if alias.name == "*" or alias.asname not in (None, alias.name):
                raise PublishedCaseError(f"{filename}:{node.lineno}: cannot inline `{alias.name}` import form")
            if alias.name not in provided[node.module]:
                raise PublishedCaseError(f"{filename}:{node.lineno}: {node.module} defines no {alias.name}")
        start, end = node.lineno - 1, node.end_lineno or node.lineno
        lines[start:end] = ["# [lightmigrate: inlined above] " + line.rstrip("\n") + "\n" for line in lines[start:end]]
    return "".join(lines)


def _future_imports(source: str) -> Tuple[List[str], str]:
    """Split ``from __future__`` lines off a source (they must open the generated file)."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    future: List[str] = []
    for node in sorted(
        (n for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == "__future__"),
        key=lambda n: n.lineno,
        reverse=True,
    ):
        start, end = node.lineno - 1, node.end_lineno or node.lineno
        future.insert(0, "".join(lines[start:end]))
        lines[start:end] = ["# [lightmigrate: moved to the top] " + l.rstrip("\n") + "\n" for l in lines[start:end]]
    return future, "".join(lines)


def _split_docstring(source: str) -> Tuple[str, str]:
    tree = ast.parse(source)
    if tree.body and isinstance(tree.body[0], ast.Expr) and isinstance(getattr(tree.body[0], "value", None), ast.Constant):
        if isinstance(tree.body[0].value.value, str):
            lines = source.splitlines(keepends=True)
            end = tree.body[0].end_lineno or 1
            return "".join(lines[:end]), "".join(lines[end:])
    return "", source


def build_case(case: PublishedCase, site: PathLike, out_dir: PathLike) -> Path:
    """Write ``<out_dir>/<case name>.py``: the self-contained case described in the module doc."""
    order = list(case.inline) + [case.module]
    if len(set(order)) != len(order):
        raise PublishedCaseError(f"{case.path.name}: {case.module} is listed twice")
    provided: Dict[str, set] = {}
    sections: List[str] = []
    future: List[str] = []
    for module in order:
        path = module_file(site, module)
        original = path.read_text(encoding="utf-8")
        rel = path.relative_to(Path(site)).as_posix()
        body = strip_package_imports(original, case.root, provided, rel)
        moved, body = _future_imports(body)
        future += [line for line in moved if line not in future]
        provided[module] = _top_level_names(ast.parse(original))
        sections.append(
            f"# ---- {rel} from {case.package}: original source"
            f"{' (package imports commented out)' if body != original else ''} ----\n{body}"
            + ("" if body.endswith("\n") else "\n")
        )
    docstring, rest = _split_docstring(case.path.read_text(encoding="utf-8"))
    header = (
        f"# GENERATED by lightmigrate.verify.published from corpus/published/{case.path.name} and the\n"
        f"# installed {case.package}. A scratch file: never commit it.\n"
    )
    text = (
        (docstring or f'"""Published case {case.name}."""\n')
        + "".join(future)
        + header
        + "\n".join(sections)
        + f"\n# ---- corpus/published/{case.path.name}: the case's entry point ----\n"
        + rest
    )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    dest = out / f"{case.name}.py"
    dest.write_text(text, encoding="utf-8")
    compile(text, str(dest), "exec")
    return dest


def build_all(cases: Iterable[PublishedCase], install_root: PathLike, out_dir: PathLike,
              python: Optional[PathLike] = None) -> List[Path]:
    """Install each distinct package once (under ``install_root``) and build every case."""
    sites: Dict[str, Path] = {}
    built: List[Path] = []
    for case in cases:
        if case.package not in sites:
            folder = case.package.replace("==", "-").replace("/", "_")
            sites[case.package] = install(case.package, Path(install_root) / folder, python=python)
        built.append(build_case(case, sites[case.package], out_dir))
    return built


def published_sources(case: PublishedCase, site: PathLike) -> Sequence[str]:
    """The original sources a built case embeds (inline modules, then the model's module)."""
    return [module_file(site, m).read_text(encoding="utf-8") for m in list(case.inline) + [case.module]]
