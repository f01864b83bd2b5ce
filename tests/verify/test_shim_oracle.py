"""The v1 shim against REAL pytorch-lightning 1.9.5: every corpus case (including
``corpus/pending/``) and every shim-specific case in ``shim_cases/`` runs unmigrated on 1.9.5
(side ``v1``) and on Lightning 2.x under the shim (side ``v1shim``); the two records must not
differ in any compared section (metrics, epoch-end inputs, hook order, global_step, returns,
weights, optimizer state, callback metrics).

Both runs happen once per module, one subprocess each, side by side. The 1.9.5 interpreter is
``$LIGHTMIGRATE_ORACLE_PYTHON`` or ``<repo>/.venv-pl19/bin/python``. Without it the tests skip
locally and FAIL under CI (``$CI`` set).
"""

import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from lightmigrate.verify import oracle
from lightmigrate.verify.compare import compare_case, format_differences

pytestmark = pytest.mark.oracle

SHIM_CASES = sorted(p for p in (Path(__file__).parent / "shim_cases").glob("*.py") if not p.name.startswith("_"))


def _corpus() -> list:
    files = list(oracle.corpus_files())
    pending = oracle.repo_root() / "corpus" / "pending"
    if pending.is_dir():
        files += sorted(p for p in pending.glob("*.py") if not p.name.startswith("_") and p not in files)
    return files


# A corpus case whose 1.x code the v1 shim cannot run (1.9 Trainer properties and internals, argparse
# methods...) says so with this line and is checked against real 1.9.5 by test_corpus_oracle.py only;
# `lightmigrate verify` runs such a case's original on a real 1.x interpreter when one is at hand.
SHIM_OUT_OF_SCOPE = "# SHIM-OUT-OF-SCOPE:"
OUTSIDE_SHIM = [p for p in _corpus() if SHIM_OUT_OF_SCOPE in p.read_text(encoding="utf-8")]
CORPUS = [p for p in _corpus() if p not in OUTSIDE_SHIM]
ALL_CASES = CORPUS + SHIM_CASES


def test_cases_outside_the_shim_say_why_and_are_oracle_checked():
    oracle_checked = set(oracle.corpus_files())
    for path in OUTSIDE_SHIM:
        line = next(l for l in path.read_text(encoding="utf-8").splitlines() if l.startswith(SHIM_OUT_OF_SCOPE))
        assert len(line) > len(SHIM_OUT_OF_SCOPE) + 10, f"{path.name}: say why the shim cannot model it"
        assert path in oracle_checked, f"{path.name} must be checked against 1.9.5 by test_corpus_oracle.py"


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
def runs():
    python = _oracle_python()
    names = [p.stem for p in ALL_CASES]
    assert len(names) == len(set(names)), "case names must be unique across corpus/ and shim_cases/"
    with ThreadPoolExecutor(max_workers=2) as pool:
        expected = pool.submit(oracle.run_in, python, ALL_CASES, "v1")
        actual = pool.submit(oracle.run_in, sys.executable, ALL_CASES, "v1shim")
        return {"expected": expected.result(), "actual": actual.result()}


def test_sides_are_real_1_9_5_and_2_x(runs):
    assert runs["expected"]["versions"]["pytorch_lightning"] == "1.9.5"
    assert runs["actual"]["versions"]["pytorch_lightning"].startswith("2.")
    assert runs["actual"]["side"] == "v1shim"


def test_shim_cases_are_documented_1_x_code():
    assert len(SHIM_CASES) >= 8
    for path in SHIM_CASES:
        text = path.read_text(encoding="utf-8")
        assert text.lstrip().startswith('"""'), f"{path.name} needs a docstring saying what it exercises"
        assert "def lightmigrate_case(" in text and "import pytorch_lightning as pl" in text


@pytest.mark.parametrize("case", [p.stem for p in SHIM_CASES])
def test_shim_case_runs_on_1_9_5(runs, case):
    rec = runs["expected"]["cases"][case]
    assert rec["error"] is None, rec["traceback"]
    assert rec["epoch_end"] or rec["metrics"], "a shim case must observe something"


# Corpus cases whose 1.x API the v1 shim does not emulate (see SHIM_OUT_OF_SCOPE above) are left to
# the migration oracle (test_corpus_oracle.py), which checks each of them against 1.9.5.


@pytest.mark.parametrize("case", [p.stem for p in ALL_CASES])
def test_shim_matches_1_9_5(runs, case):
    expected = runs["expected"]["cases"][case]
    if expected["error"]:
        pytest.fail(f"the case fails on 1.9.5 itself: {expected['error']}")
    diffs = compare_case(case, expected, runs["actual"]["cases"].get(case))
    assert not diffs, format_differences(diffs)


def test_shim_reports_the_legacy_hooks_it_called(runs):
    hooks = runs["actual"]["cases"]["step_end_hooks_and_batch_hooks"]["shim_hooks"]
    for name in ("training_step_end", "validation_step_end", "test_step_end", "training_epoch_end",
                 "validation_epoch_end", "test_epoch_end", "on_predict_epoch_end"):
        assert hooks.get(name), name
    lbfgs = runs["actual"]["cases"]["adam_lbfgs_step_end"]["shim_hooks"]
    assert lbfgs["training_step_end"] > 12  # LBFGS re-evaluates the closure: more than once per batch
