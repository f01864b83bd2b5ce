"""What `lightmigrate verify` (default reference: the v1 shim) does with a case the shim cannot
run: it says so in plain words and, when a real pytorch-lightning 1.x interpreter is at hand
($LIGHTMIGRATE_ORACLE_PYTHON), runs that case's original there instead. Also: every case runs
in one interpreter per side, project packages of the same name included."""

import shutil
import sys
from pathlib import Path

import pytest

from lightmigrate.verify import oracle
from lightmigrate.verify.runner import _OnPath
from lightmigrate.verify.session import verify_paths

from .conftest import require_oracle

ROOT = Path(__file__).resolve().parents[2]
# reads a 1.9 Trainer internal (fit_loop.running_loss) the shim does not model
OUTSIDE_SHIM = ROOT / "corpus" / "manual_running_loss_for_lr_finder.py"


@pytest.mark.oracle
def test_a_case_the_shim_cannot_run_goes_to_a_real_1_x_interpreter(tmp_path, monkeypatch):
    monkeypatch.setenv(oracle.ORACLE_ENV, str(require_oracle()))
    shutil.copy(OUTSIDE_SHIM, tmp_path)
    shutil.copy(ROOT / "corpus" / "validation_single_loader.py", tmp_path)
    report = verify_paths([str(tmp_path)])
    verdicts = {c.name: c for c in report.cases}
    assert report.exit_code == 0, [(c.name, c.error, c.differences[:2]) for c in report.cases]
    fallback = verdicts[OUTSIDE_SHIM.stem]
    assert "the v1 shim cannot run this original (AttributeError" in fallback.reference_note
    assert "checked against pytorch-lightning 1.x at" in fallback.reference_note
    assert verdicts["validation_single_loader"].reference_note is None  # the shim ran it


def test_without_a_1_x_interpreter_verify_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setenv(oracle.ORACLE_ENV, str(tmp_path / "no-such-python"))
    shutil.copy(OUTSIDE_SHIM, tmp_path)
    report = verify_paths([str(tmp_path / OUTSIDE_SHIM.name)])
    (case,) = report.cases
    assert case.verdict == "error" and report.exit_code == 2
    assert case.error.startswith("the v1 shim cannot run this original (AttributeError")
    assert "run verify with --oracle PYTHON (a pytorch-lightning 1.x environment)" in case.error


def test_packages_of_the_same_name_do_not_leak_between_cases(tmp_path):
    for value in (1, 2):
        package = tmp_path / f"project{value}" / "pkg"
        package.mkdir(parents=True)
        (package / "__init__.py").write_text(f"VALUE = {value}\n")
    seen = []
    for value in (1, 2):
        with _OnPath([str(tmp_path / f"project{value}")]):
            import pkg

            seen.append(pkg.VALUE)
        assert "pkg" not in sys.modules and str(tmp_path / f"project{value}") not in sys.path
    assert seen == [1, 2]
