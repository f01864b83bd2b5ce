"""The behaviour oracle: every corpus case, run on REAL pytorch-lightning 1.9.5, and its
migrated copy, run on Lightning 2.x (this interpreter), must log the same metrics, hand the
epoch-end bodies the same values, and end with the same weights.

Both runs happen once per module (one subprocess each). The 1.9.5 interpreter is
``$LIGHTMIGRATE_ORACLE_PYTHON`` or ``<repo>/.venv-pl19/bin/python`` (``scripts/setup-dev.sh``
creates it). Without it the tests skip locally and FAIL under CI (``$CI`` set).

Hand-written 2.x ports in ``handwritten/`` check the harness independently of the rules:
``*__port.py`` must match their original, ``*__broken.py`` must be reported as different.
"""

import importlib.util
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from lightmigrate.engine import transform_text
from lightmigrate.catalog.hooks import REMOVED_MODULE_HOOKS
from lightmigrate.rules import ALL_RULES
from lightmigrate.verify import oracle
from lightmigrate.verify.compare import compare_case, format_differences

pytestmark = pytest.mark.oracle

CASES = oracle.corpus_files()
HANDWRITTEN = sorted((Path(__file__).parent / "handwritten").glob("*.py"))


def _original_of(path: Path) -> str:
    return path.stem.split("__", 1)[0]


def _oracle_python() -> Path:
    python = oracle.default_oracle_python()
    if not python.exists():
        message = (
            f"pytorch-lightning 1.9.5 oracle interpreter not found at {python}; run "
            f"scripts/setup-dev.sh or set {oracle.ORACLE_ENV}"
        )
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return python


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    python = _oracle_python()
    workdir = tmp_path_factory.mktemp("migrated")
    checkpoints = tmp_path_factory.mktemp("checkpoints-1.9.5")
    # one project index over the whole corpus, as `lightmigrate verify --oracle ... corpus/` builds
    # it: a rule that applies one case's Trainer settings to another case's module shows up here
    migrate = oracle.engine_migrate_project(CASES)
    # The two interpreters are independent: run them side by side.
    with ThreadPoolExecutor(max_workers=2) as pool:
        expected = pool.submit(oracle.run_original, CASES, python, checkpoint_dir=checkpoints)
        actual = pool.submit(
            oracle.run_migrated,
            CASES,
            migrate,
            python=sys.executable,
            workdir=workdir,
            extra={p: _original_of(p) for p in HANDWRITTEN},
        )
        return {
            "expected": expected.result(),
            "actual": actual.result(),
            "workdir": workdir,
            "checkpoints": checkpoints,
        }


def test_oracle_interpreter_is_available():
    _oracle_python()  # fails under CI, skips locally, when 1.9.5 is missing


def test_corpus_is_big_enough_and_documented():
    assert len(CASES) >= 30  # issue 3: at least 30 runnable 1.x cases, all migrated and compared
    for path in HANDWRITTEN:
        assert (oracle.repo_root() / "corpus" / f"{_original_of(path)}.py").exists(), path.name
    for path in CASES:
        text = path.read_text(encoding="utf-8")
        assert text.lstrip().startswith('"""'), f"{path.name} needs a docstring saying what it exercises"
        assert "def lightmigrate_case(" in text and "import pytorch_lightning as pl" in text


def test_oracle_is_real_pytorch_lightning_1_9_5(runs):
    assert runs["expected"]["versions"]["pytorch_lightning"] == "1.9.5"
    assert runs["actual"]["versions"]["pytorch_lightning"].startswith("2.")


@pytest.mark.parametrize("case", [p.stem for p in CASES])
def test_original_runs_cleanly_on_1_9_5(runs, case):
    rec = runs["expected"]["cases"][case]
    assert rec["error"] is None, rec["traceback"]
    removed_ran = [n for n in (rec["hooks"] or {}).get("counts", {}) if n in REMOVED_MODULE_HOOKS]
    assert rec["epoch_end"] or removed_ran or _needs_migration(case), (
        "every corpus case must exercise a 1.x hook that 2.x removed, or other 1.x code the rules rewrite")


def _needs_migration(case: str) -> bool:
    """The rules change the case's own source (1.x API other than a removed hook: signatures,
    Trainer arguments, attributes)."""
    path = next(p for p in CASES if p.stem == case)
    text = path.read_text(encoding="utf-8")
    return transform_text(text, ALL_RULES, path=str(path)).text != text


@pytest.mark.parametrize("case", [p.stem for p in CASES])
def test_migrated_case_behaves_like_the_original(runs, case):
    diffs = compare_case(case, runs["expected"]["cases"][case], runs["actual"]["cases"].get(case))
    migrated = runs["workdir"] / f"{case}.py"
    assert not diffs, f"migrated copy: {migrated}\n" + format_differences(diffs)


@pytest.mark.parametrize("case", [p.stem for p in CASES])
def test_checkpoint_from_1_9_5_loads_into_migrated_model(runs, case):
    """The rewrite must not change state_dict keys: a checkpoint written by real 1.9.5 loads,
    strictly, into a fresh instance of the migrated model on 2.x."""
    import torch

    ckpt = torch.load(runs["checkpoints"] / f"{case}.ckpt", map_location="cpu", weights_only=False)
    assert ckpt["pytorch-lightning_version"] == "1.9.5"
    spec = importlib.util.spec_from_file_location(f"_migrated_{case}", runs["workdir"] / f"{case}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = module.lightmigrate_case()["model"]
    result = model.load_state_dict(ckpt["state_dict"], strict=True)
    assert not result.missing_keys and not result.unexpected_keys
    for key, value in ckpt["state_dict"].items():
        assert torch.equal(model.state_dict()[key], value), key


@pytest.mark.parametrize("port", [p.stem for p in HANDWRITTEN if p.stem.endswith("__port")])
def test_handwritten_port_matches(runs, port):
    original = port.split("__", 1)[0]
    diffs = compare_case(original, runs["expected"]["cases"][original], runs["actual"]["cases"][port])
    assert not diffs, format_differences(diffs)
    # the port really was watched: every invocation whose 1.x body read its argument got a value
    captured = [r["captured"] for r in runs["actual"]["cases"][port]["epoch_end"]]
    assert captured and all(captured)


@pytest.mark.parametrize("broken", [p.stem for p in HANDWRITTEN if p.stem.endswith("__broken")])
def test_broken_port_is_reported(runs, broken):
    original = broken.split("__", 1)[0]
    rec = runs["actual"]["cases"][broken]
    assert rec["error"] is None, rec["traceback"]
    diffs = compare_case(original, runs["expected"]["cases"][original], rec)
    sections = {d.path.split("/")[1].split("[")[0] for d in diffs}
    assert {"metrics", "epoch_end"} <= sections, format_differences(diffs)
