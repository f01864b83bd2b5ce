"""The multi-file corpus: every ``corpus/projects/<name>/`` case (a ``case.py`` that imports the
project's own package from ``<name>/src/``, see corpus/README.md) runs on REAL
pytorch-lightning 1.9.5, and its migration (the case and the whole package, one project index,
as ``lightmigrate verify --oracle PY --source <name>/src <name>/case.py`` does it) runs on
Lightning 2.x; both must log the same metrics, return the same values and end with the same
weights and optimizer state, as for the single-file cases (``test_corpus_oracle.py``).

These are the cases where a migration in one file needs a matching change in another (a base
class in one module, its subclasses in others): issue 21, kind 1.
"""

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lightmigrate.engine import Mode, run
from lightmigrate.rules import ALL_RULES
from lightmigrate.verify import oracle
from lightmigrate.verify.compare import compare_case, format_differences
from lightmigrate.verify.session import PROJECT_CASE, find_case_files, project_source, run_sides

from .conftest import require_oracle

pytestmark = pytest.mark.oracle

PROJECTS_DIR = oracle.repo_root() / "corpus" / "projects"
PROJECTS = sorted(p for p in PROJECTS_DIR.iterdir() if (p / PROJECT_CASE).is_file()) if PROJECTS_DIR.is_dir() else []
NAMES = [p.name for p in PROJECTS]


def _case(name: str) -> Path:
    return PROJECTS_DIR / name / PROJECT_CASE


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """name -> ``SideRuns`` of that project (each project on its own: its package names are
    its own), with the 1.9.5 checkpoints and the migrated tree kept for the tests below."""
    python = require_oracle()
    out = {}
    for project in PROJECTS:
        work = tmp_path_factory.mktemp(f"migrated-{project.name}")
        checkpoints = tmp_path_factory.mktemp(f"checkpoints-{project.name}")
        sides = run_sides([project / PROJECT_CASE], [str(project / "src")], str(python), work, ALL_RULES,
                          checkpoint_dir=checkpoints)
        out[project.name] = {"sides": sides, "workdir": work, "checkpoints": checkpoints}
    return out


def test_projects_are_there_and_documented():
    assert len(PROJECTS) >= 2
    readme = (oracle.repo_root() / "corpus" / "README.md").read_text(encoding="utf-8")
    for project in PROJECTS:
        text = (project / PROJECT_CASE).read_text(encoding="utf-8")
        assert text.lstrip().startswith('"""'), f"{project.name}/case.py needs a docstring saying what it exercises"
        assert "def lightmigrate_case(" in text
        assert project_source(project / PROJECT_CASE) == project / "src"
        packages = [p for p in (project / "src").iterdir() if (p / "__init__.py").is_file()]
        assert packages and any(f"from {p.name}" in text or f"import {p.name}" in text for p in packages), (
            "the case imports the project's own package from src/")
        py = list((project / "src").rglob("*.py"))
        assert sum("pytorch_lightning" in f.read_text(encoding="utf-8") for f in py) >= 1
        assert len([f for f in py if f.name != "__init__.py"]) >= 2, "a project case spans several modules"
        assert f"`projects/{project.name}/`" in readme, f"corpus/README.md lists projects/{project.name}/"


@pytest.mark.parametrize("name", NAMES)
def test_original_runs_cleanly_on_1_9_5(runs, name):
    rec = runs[name]["sides"].expected["case"]
    assert rec["error"] is None, rec["traceback"]


@pytest.mark.parametrize("name", NAMES)
def test_migration_changes_the_project(runs, name):
    """Every project case needs a migration of its own package (one file may be enough: in
    ``trainer_argparse`` what the script migrates depends on the model module's options)."""
    src = PROJECTS_DIR / name / "src"
    migrated = runs[name]["workdir"] / "src0"
    changed = [p for p in src.rglob("*.py")
               if (migrated / p.relative_to(src)).read_text(encoding="utf-8") != p.read_text(encoding="utf-8")]
    assert len(changed) >= 1, changed
    if name.endswith("_across_files"):  # a hierarchy spread over modules: the change spans them
        assert len(changed) >= 2, changed


@pytest.mark.parametrize("name", NAMES)
def test_migrated_project_behaves_like_the_original(runs, name):
    sides = runs[name]["sides"]
    assert sides.migrate_error is None, sides.migrate_error
    diffs = compare_case("case", sides.expected["case"], sides.actual.get("case"))
    assert not diffs, f"migrated copy: {runs[name]['workdir']}\n" + format_differences(diffs)


@pytest.mark.parametrize("name", NAMES)
def test_checkpoint_from_1_9_5_loads_into_migrated_model(runs, name):
    """The rewrite must not change state_dict keys (see test_corpus_oracle.py)."""
    import torch

    work = runs[name]["workdir"]
    ckpt = torch.load(runs[name]["checkpoints"] / "case.ckpt", map_location="cpu", weights_only=False)
    assert ckpt["pytorch-lightning_version"] == "1.9.5"
    packages = {p.name for p in (work / "src0").iterdir() if p.is_dir()}
    before_path = list(sys.path)
    sys.path[:0] = [str(work / "src0"), str(work / "cases")]
    try:
        spec = importlib.util.spec_from_file_location(f"_migrated_project_{name}", work / "cases" / PROJECT_CASE)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        model = module.lightmigrate_case()["model"]
    finally:
        sys.path[:] = before_path
        for loaded in [m for m in sys.modules if m.split(".")[0] in packages]:  # the migrated package
            del sys.modules[loaded]
    result = model.load_state_dict(ckpt["state_dict"], strict=True)
    assert not result.missing_keys and not result.unexpected_keys
    for key, value in ckpt["state_dict"].items():
        assert torch.equal(model.state_dict()[key], value), key


@pytest.mark.parametrize("name", NAMES)
def test_rewrite_of_the_project_folder_matches_verify_and_is_idempotent(tmp_path, runs, name):
    """``lightmigrate rewrite`` over a copy of the project folder writes what verify migrated
    (the same rules, one project index), and a second run changes nothing."""
    work = tmp_path / name
    shutil.copytree(PROJECTS_DIR / name, work)
    first = run([str(work)], ALL_RULES, Mode.WRITE)
    assert first.failed == 0 and first.changed >= 1
    migrated = runs[name]["workdir"] / "src0"
    for path in (work / "src").rglob("*.py"):
        assert path.read_text(encoding="utf-8") == (migrated / path.relative_to(work / "src")).read_text(
            encoding="utf-8"), path
    second = run([str(work)], ALL_RULES, Mode.DIFF)
    assert second.changed == 0, [f.diff for f in second.files if f.changed]


def test_verify_of_the_corpus_folder_runs_each_project_with_its_own_package():
    """``verify corpus/`` finds the project cases (no clash of their ``case.py`` names) and
    runs each with its own ``src/``; ``src/`` modules are not cases."""
    files, problems = find_case_files([str(oracle.repo_root() / "corpus")])
    assert not [p for p in problems if "case.py" in p], problems
    assert {f.parent.name for f in files if project_source(f) is not None} == set(NAMES)
    assert not [f for f in files if "src" in f.relative_to(PROJECTS_DIR.parent).parts]


def test_verify_cli_on_one_project_folder(tmp_path):
    """The command as a user types it on a project folder: the case found, its package
    imported on both sides, reported under the project's name."""
    python = require_oracle()
    name = NAMES[0]
    shutil.copytree(PROJECTS_DIR / name, tmp_path / name)
    result = subprocess.run([sys.executable, "-m", "lightmigrate", "verify", "--oracle", str(python), name],
                            cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    assert name in result.stdout and "1 cases: 1 match, 0 mismatch, 0 error" in result.stdout


def test_verify_of_a_folder_leaves_out_its_pending_cases(tmp_path):
    """Cases under a ``pending/`` folder of a searched directory are known to need rules not
    written yet: left out (and listed) unless that folder is named."""
    case = "def lightmigrate_case():\n    return None\n"
    (tmp_path / "pending").mkdir()
    (tmp_path / "ready.py").write_text(case)
    (tmp_path / "pending" / "later.py").write_text(case)
    pending = []
    files, problems = find_case_files([str(tmp_path)], pending)
    assert [f.name for f in files] == ["ready.py"] and not problems
    assert [p.name for p in pending] == ["later.py"]
    files, _ = find_case_files([str(tmp_path / "pending")])
    assert [f.name for f in files] == ["later.py"]
    files, _ = find_case_files([str(tmp_path / "pending" / "later.py")])
    assert [f.name for f in files] == ["later.py"]
