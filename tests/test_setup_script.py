"""scripts/pip-known-conflict.sh: setup-dev.sh's setuptools<70 step prints nothing that reads
as an error when all is well, and still fails (and shows why) when pip does."""

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "pip-known-conflict.sh"
HEADER = ("ERROR: pip's dependency resolver does not currently take into account all the packages that are "
          "installed. This behaviour is the source of the following dependency conflicts.")
CONFLICT = "torch 2.13.0+cpu requires setuptools>=77.0.3, but you have setuptools 69.5.1 which is incompatible."


def fake_pip(tmp_path, stderr: str, status: int) -> Path:
    (tmp_path / "said").write_text(stderr)
    pip = tmp_path / "pip"
    pip.write_text(f'#!/usr/bin/env bash\ncat "{tmp_path / "said"}" >&2\nexit {status}\n')
    pip.chmod(0o755)
    return pip


def run(tmp_path, stderr: str, status: int):
    pip = fake_pip(tmp_path, stderr, status)
    return subprocess.run(["bash", str(SCRIPT), str(pip), "install", "-q", "setuptools<70"],
                          capture_output=True, text=True)


def test_the_known_conflict_becomes_one_quiet_line(tmp_path):
    result = run(tmp_path, f"{HEADER}\n{CONFLICT}\n", 0)
    assert result.returncode == 0
    assert "ERROR" not in result.stdout + result.stderr and result.stderr == ""
    assert result.stdout.count("\n") == 1 and "setuptools<70" in result.stdout and "expected" in result.stdout


def test_a_real_failure_still_fails_and_shows_everything(tmp_path):
    said = "ERROR: Could not find a version that satisfies the requirement setuptools<70\n"
    result = run(tmp_path, said, 1)
    assert result.returncode == 1 and said.strip() in result.stderr
    result = run(tmp_path, f"{HEADER}\n{CONFLICT}\n", 2)  # the known lines, but pip failed
    assert result.returncode == 2 and HEADER in result.stderr


def test_other_output_is_shown_as_it_came(tmp_path):
    other = "numpy 2.0 requires python>=3.12, but you have python 3.11 which is incompatible."
    result = run(tmp_path, f"{HEADER}\n{CONFLICT}\n{other}\n", 0)
    assert result.returncode == 0 and HEADER in result.stderr and other in result.stderr and CONFLICT in result.stderr
    quiet = run(tmp_path, "", 0)  # nothing to hide: nothing printed
    assert quiet.returncode == 0 and quiet.stdout == quiet.stderr == ""


def test_setup_dev_uses_it_for_the_setuptools_step():
    setup = (ROOT / "scripts" / "setup-dev.sh").read_text()
    pins = [line.strip() for line in setup.splitlines() if '"setuptools<70"' in line]
    assert pins == ['bash scripts/pip-known-conflict.sh .venv-pl19/bin/pip install -q "setuptools<70"']
