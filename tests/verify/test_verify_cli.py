"""`lightmigrate verify` as a user runs it: real subprocesses on case files in temp folders."""

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .test_hook_log import CASE as DOUBLER_CASE

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.oracle


def verify(*args, cwd, env=None):
    return subprocess.run([sys.executable, "-m", "lightmigrate", "verify", *map(str, args)],
                          cwd=cwd, capture_output=True, text=True, timeout=600,
                          env=None if env is None else {**os.environ, **env})


def test_matching_cases_exit_0_with_a_verdict_table(tmp_path, oracle_python):
    for name in ("train_tensor_accumulate", "validation_two_loaders"):
        shutil.copy(ROOT / "corpus" / f"{name}.py", tmp_path)
    (tmp_path / "helpers.py").write_text("X = 1\n")  # not a case: ignored inside a folder
    result = verify("--oracle", oracle_python, ".", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "train_tensor_accumulate" in result.stdout and "validation_two_loaders" in result.stdout
    assert "2 cases: 2 match, 0 mismatch, 0 error" in result.stdout
    assert "helpers" not in result.stdout


def test_json_output_and_a_dead_hook_mismatch_exit_1(tmp_path, oracle_python):
    shutil.copy(ROOT / "corpus" / "train_tensor_accumulate.py", tmp_path)
    (tmp_path / "doubler.py").write_text(DOUBLER_CASE)
    result = verify("--oracle", oracle_python, "--no-migrate", "--output-format", "json", ".", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    doc = json.loads(result.stdout)
    verdicts = {c["name"]: c for c in doc["cases"]}
    assert verdicts["train_tensor_accumulate"]["verdict"] == "mismatch"  # un-migrated epoch end raises
    doubler = verdicts["doubler"]
    assert doubler["verdict"] == "mismatch"
    assert [d["qualname"] for d in doubler["dead_hooks"]] == ["Doubler.training_step_end"]
    assert any(d["path"].startswith("doubler/state_dict") for d in doubler["differences"])
    assert doc["summary"] == {"match": 0, "mismatch": 2, "error": 0} and doc["exit_code"] == 1
    # migrated (LM003 inlines the hook), the same two cases match
    fixed = verify("--oracle", oracle_python, "--output-format", "json", ".", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout
    assert json.loads(fixed.stdout)["summary"] == {"match": 2, "mismatch": 0, "error": 0}


def test_text_output_explains_the_mismatch(tmp_path, oracle_python):
    (tmp_path / "doubler.py").write_text(DOUBLER_CASE)
    result = verify("--oracle", oracle_python, "--no-migrate", "doubler.py", cwd=tmp_path)
    assert result.returncode == 1
    assert "dead hook Doubler.training_step_end: never called on Lightning 2.x" in result.stdout
    assert "doubler/hooks/dead/Doubler.training_step_end" in result.stdout


def test_case_that_cannot_run_exits_2_and_others_still_run(tmp_path, oracle_python):
    shutil.copy(ROOT / "corpus" / "train_tensor_accumulate.py", tmp_path)
    (tmp_path / "broken.py").write_text(textwrap.dedent('''\
        import pytorch_lightning as pl

        def lightmigrate_case():
            raise RuntimeError("no data today")
    '''))
    result = verify("--oracle", oracle_python, "--output-format", "json", ".", cwd=tmp_path)
    assert result.returncode == 2
    doc = json.loads(result.stdout)
    verdicts = {c["name"]: c for c in doc["cases"]}
    assert verdicts["broken"]["verdict"] == "error" and "no data today" in verdicts["broken"]["error"]
    assert verdicts["train_tensor_accumulate"]["verdict"] == "match"


def test_user_package_is_migrated_with_source(tmp_path, oracle_python):
    pkg = tmp_path / "src" / "mypkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    model = (ROOT / "corpus" / "validation_single_loader.py").read_text()
    (pkg / "model.py").write_text(model)
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "my_model.py").write_text(textwrap.dedent('''\
        """Verify my own model: the case imports it from my package."""
        from mypkg.model import lightmigrate_case as _case


        def lightmigrate_case():
            return _case()
    '''))
    result = verify("--oracle", oracle_python, "--source", tmp_path / "src", "cases", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 cases: 1 match" in result.stdout
    assert (pkg / "model.py").read_text() == model  # the user's files are never written
    # importable but not given as --source: not migrated, so 2.x refuses the 1.x hook
    unmigrated = verify("--oracle", oracle_python, "cases", cwd=tmp_path, env={"PYTHONPATH": str(tmp_path / "src")})
    assert unmigrated.returncode == 1, unmigrated.stdout
    assert "Support for `validation_epoch_end` has been removed" in unmigrated.stdout


def test_bad_arguments_exit_2(tmp_path, oracle_python):
    (tmp_path / "plain.py").write_text("x = 1\n")
    result = verify("--oracle", oracle_python, "plain.py", cwd=tmp_path)
    assert result.returncode == 2 and "not a verify case" in result.stdout
    missing = verify("--oracle", tmp_path / "nope" / "python", "plain.py", cwd=tmp_path)
    assert missing.returncode == 2 and "--oracle interpreter not found" in missing.stderr
