"""The behaviour oracle for published-model cases (``corpus/published/*.py``).

Each case names a real 1.x-era LightningModule from a pinned PyPI package. The package is
installed at test time into a scratch directory (``pip install --no-deps --target``), the case
file is assembled from the package's ORIGINAL source (``lightmigrate.verify.published``), run
on REAL pytorch-lightning 1.9.5, migrated with all rules and run on Lightning 2.x; the two
runs must match like any corpus case.

Without the 1.9.5 interpreter, or when pip cannot fetch the package, the tests skip locally
and FAIL under CI (``$CI`` set).
"""

import ast
import os
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from lightmigrate.verify import oracle, published
from lightmigrate.verify.compare import compare_case, format_differences

pytestmark = pytest.mark.oracle

FILES = published.published_files()
CASES = [published.read_case(p) for p in FILES]
REMOVED_HOOKS = ("def training_epoch_end(", "def validation_epoch_end(", "def test_epoch_end(")


def _unavailable(message):
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    python = oracle.default_oracle_python()
    if not python.exists():
        _unavailable(f"pytorch-lightning 1.9.5 oracle interpreter not found at {python}; run scripts/setup-dev.sh")
    site_root = tmp_path_factory.mktemp("published-site")
    try:
        files = published.build_all(CASES, site_root, tmp_path_factory.mktemp("published-cases"))
    except published.PublishedCaseError as exc:
        if "pip could not install" in str(exc):
            _unavailable(str(exc))
        raise
    return {"python": python, "files": files, "site": site_root}


@pytest.fixture(scope="module")
def runs(built, tmp_path_factory):
    workdir = tmp_path_factory.mktemp("published-migrated")
    with ThreadPoolExecutor(max_workers=2) as pool:
        expected = pool.submit(oracle.run_original, built["files"], built["python"])
        actual = pool.submit(
            oracle.run_migrated, built["files"], oracle.engine_migrate(), python=sys.executable, workdir=workdir
        )
        return {"expected": expected.result(), "actual": actual.result(), "workdir": workdir}


def test_at_least_three_published_models_from_pinned_packages():
    assert len({(c.package, c.module) for c in CASES}) >= 3
    for case in CASES:
        assert "==" in case.package


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_case_file_names_the_model_and_copies_none_of_it(path):
    """The repository holds only the entry point: no class, no import of the package."""
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    assert ast.get_docstring(tree), f"{path.name} needs a docstring saying what it exercises"
    assert "def lightmigrate_case(" in text
    root = published.read_case(path).root
    for node in ast.walk(tree):
        assert not isinstance(node, ast.ClassDef), f"{path.name} must not define classes"
        if isinstance(node, ast.ImportFrom):
            assert not (node.module or "").startswith(root), f"{path.name} imports {node.module}"
    assert not any(p.name == root for p in (oracle.repo_root() / "corpus").rglob("*")), "package copied in"


@pytest.mark.parametrize("index", range(len(CASES)), ids=[c.name for c in CASES])
def test_built_case_embeds_the_original_sources(built, index):
    case = CASES[index]
    text = built["files"][index].read_text(encoding="utf-8")
    site = next(p for p in built["site"].iterdir() if (p / case.root).is_dir())
    for original in published.published_sources(case, site):
        kept = [line for line in original.splitlines() if not line.startswith(("from " + case.root, "import " + case.root))]
        assert all(line in text for line in kept)


@pytest.mark.parametrize("case", [c.name for c in CASES])
def test_published_model_runs_cleanly_on_1_9_5(runs, case):
    assert runs["expected"]["versions"]["pytorch_lightning"] == "1.9.5"
    rec = runs["expected"]["cases"][case]
    assert rec["error"] is None, rec["traceback"]
    assert rec["epoch_end"], "a published case must reach at least one epoch-end hook"


@pytest.mark.parametrize("case", [c.name for c in CASES])
def test_migrated_published_model_behaves_like_the_original(runs, case):
    migrated = runs["workdir"] / f"{case}.py"
    text = migrated.read_text(encoding="utf-8")
    assert not [hook for hook in REMOVED_HOOKS if hook in text], f"1.x hook left in {migrated}"
    diffs = compare_case(case, runs["expected"]["cases"][case], runs["actual"]["cases"].get(case))
    assert not diffs, f"migrated copy: {migrated}\n" + format_differences(diffs)
