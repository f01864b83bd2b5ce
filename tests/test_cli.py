import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from engine_toys import TOYS, ReportsNote

import lightmigrate
import lightmigrate.cli as cli
import lightmigrate.rules as rules_pkg

HOOK = "class M:\n    def training_epoch_end(self, outputs):\n        pass\n"
RENAMED = HOOK.replace("training_epoch_end", "on_train_epoch_end")
VALID = "class V:\n    def validation_epoch_end(self, o):\n        pass\n"
SCRIPT = Path(sys.executable).with_name("lightmigrate")
TESTS = Path(__file__).parent
ROOT = TESTS.parent


def use_rules(monkeypatch, rules):
    monkeypatch.setattr(rules_pkg, "ALL_RULES", list(rules))
    monkeypatch.setattr(cli, "ALL_RULES", list(rules))


@pytest.fixture
def toy_rules(monkeypatch):
    use_rules(monkeypatch, TOYS)


def invoke(*args):
    return CliRunner().invoke(cli.main, [str(a) for a in args])


def snapshot(root: Path) -> dict:
    return {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(root.rglob("*")) if p.is_file()}


def project(tmp_path, **files) -> Path:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def test_rewrite_in_place(tmp_path, toy_rules):
    project(tmp_path, **{"a.py": HOOK, "b.py": "x = 1\n"})
    result = invoke("rewrite", tmp_path)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "a.py").read_text() == RENAMED
    assert result.stdout.splitlines()[-1] == "2 files scanned, 1 changed, 0 failed, 0 markers left"


def test_check_lists_files_and_writes_nothing(tmp_path, toy_rules):
    project(tmp_path, **{"a.py": HOOK, "b.py": "x = 1\n"})
    before = snapshot(tmp_path)
    result = invoke("rewrite", "--check", tmp_path)
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        f"would rewrite {tmp_path / 'a.py'}",
        "2 files scanned, 1 would change, 0 failed, 0 markers left",
    ]
    assert snapshot(tmp_path) == before


def test_diff_prints_plain_patch_and_writes_nothing(tmp_path, toy_rules):
    project(tmp_path, **{"a.py": HOOK})
    before = snapshot(tmp_path)
    result = invoke("rewrite", "--diff", tmp_path)
    assert result.exit_code == 1
    name = str(tmp_path / "a.py").lstrip("/")
    assert result.stdout.startswith(f"--- a/{name}\n+++ b/{name}\n@@ ")
    assert "+    def on_train_epoch_end(self, outputs):\n" in result.stdout
    assert "\x1b[" not in result.stdout  # not a terminal: no colour codes
    assert "would change" in result.stderr and "would change" not in result.stdout
    assert snapshot(tmp_path) == before


def test_check_and_diff_exit_0_when_nothing_to_do(tmp_path, toy_rules):
    project(tmp_path, **{"a.py": RENAMED})
    assert invoke("rewrite", "--check", tmp_path).exit_code == 0
    result = invoke("rewrite", "--diff", tmp_path)
    assert result.exit_code == 0 and result.stdout == ""


def test_diff_and_check_together_is_a_usage_error(tmp_path, toy_rules):
    result = invoke("rewrite", "--diff", "--check", tmp_path)
    assert result.exit_code == 2 and "cannot be used together" in result.stderr


def test_errors_go_to_stderr_and_exit_2_while_others_are_rewritten(tmp_path, toy_rules):
    project(tmp_path, **{"a.py": HOOK, "b.py": "def training_epoch_end(:\n", "c.py": HOOK})
    result = invoke("rewrite", tmp_path, tmp_path / "missing")
    assert result.exit_code == 2
    assert f"{tmp_path / 'b.py'}:1:24: syntax error: invalid syntax" in result.stderr
    assert f"{tmp_path / 'missing'}: no such file or directory" in result.stderr
    assert (tmp_path / "a.py").read_text() == RENAMED == (tmp_path / "c.py").read_text()
    assert result.stdout.splitlines()[-1] == "4 files scanned, 2 changed, 2 failed, 0 markers left"


def test_markers_and_notes_are_printed(tmp_path, monkeypatch):
    use_rules(monkeypatch, [*TOYS, ReportsNote()])
    project(tmp_path, **{"v.py": VALID})
    result = invoke("rewrite", tmp_path)
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    path = tmp_path / "v.py"
    assert f"{path}:2:7: LM999 [marker] check the outputs" in lines
    assert f"{path}:1:1: LM993 [note] saw class V" in lines
    assert lines[-1] == "1 file scanned, 1 changed, 0 failed, 1 marker left"
    # Second run: nothing changes, the marker is still reported and counted.
    again = invoke("rewrite", "--check", tmp_path)
    assert again.exit_code == 0
    assert again.stdout.splitlines()[-1] == "1 file scanned, 0 would change, 0 failed, 1 marker left"


def test_select_limits_rules(tmp_path, toy_rules):
    project(tmp_path, **{"a.py": HOOK, "v.py": VALID})
    result = invoke("rewrite", "--select", "LM999", tmp_path)
    assert result.exit_code == 0
    assert (tmp_path / "a.py").read_text() == HOOK
    assert "LM999" in (tmp_path / "v.py").read_text()
    assert invoke("rewrite", "--select", "LM901,lm999", tmp_path).exit_code == 0
    assert (tmp_path / "a.py").read_text() == RENAMED


def test_select_unknown_code(tmp_path, toy_rules):
    result = invoke("rewrite", "--select", "LM1234", tmp_path)
    assert result.exit_code == 2 and "unknown rule code(s): LM1234" in result.stderr


def test_rules_table_and_detail(toy_rules):
    table = invoke("rules")
    assert table.exit_code == 0
    for rule in TOYS:
        assert rule.code in table.stdout and rule.name in table.stdout
    assert "needs review" in table.stdout
    detail = invoke("rules", "lm901")
    assert detail.exit_code == 0
    out = detail.stdout
    for expected in (
        "LM901 toy-rename", "rename training_epoch_end", "A toy rule that renames a hook.",
        "needs review", "T1", "https://example.invalid/guide", "Example 1: rename",
        "def training_epoch_end(self): ...", "def on_train_epoch_end(self): ...", "(left unchanged)",
    ):
        assert expected in out
    unknown = invoke("rules", "LM000")
    assert unknown.exit_code == 2 and "unknown rule code: LM000" in unknown.stderr


def test_version():
    result = invoke("--version")
    assert result.exit_code == 0 and lightmigrate.__version__ in result.stdout


# Real processes: the installed console script and `python -m lightmigrate`.


def run_script(*args, cwd=None):
    return subprocess.run([str(SCRIPT), *map(str, args)], capture_output=True, text=True, cwd=cwd)


@pytest.fixture
def script():
    if not SCRIPT.exists():
        pytest.skip("lightmigrate console script is not installed in this environment")
    return run_script


def test_script_version_and_rules(script):
    assert script("--version").stdout.strip() == f"lightmigrate, version {lightmigrate.__version__}"
    listed = script("rules")
    assert listed.returncode == 0 and "LM001" in listed.stdout
    assert script("rules", "LM001").returncode == 0
    assert script("rules", "NOPE").returncode == 2


def test_script_clean_tree_exits_0_and_changes_nothing(script, tmp_path):
    project(tmp_path, **{"a.py": "x = 1\n", "b.py": "def f():\n    return 2\n"})
    before = snapshot(tmp_path)
    for args in ([], ["--check"], ["--diff"]):
        result = script("rewrite", *args, ".", cwd=tmp_path)
        assert result.returncode == 0, result.stderr
    assert snapshot(tmp_path) == before


def test_script_syntax_error_and_markers(script, tmp_path):
    # The marker makes the engine parse the file whatever the rules are.
    project(tmp_path, **{
        "bad.py": "x = (  # TODO(lightmigrate): LM001 old marker\n",
        "old.py": "y = 1  # TODO(lightmigrate): LM001 still to do\n",
    })
    result = script("rewrite", "--check", ".", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("bad.py:1:5: syntax error: '(' was never closed\n")
    assert "old.py:1:10: LM001 [marker] still to do" in result.stdout
    assert result.stdout.splitlines()[-1] == "2 files scanned, 0 would change, 1 failed, 1 marker left"


def test_script_output_is_whole_though_the_process_ends_at_once(script, tmp_path, monkeypatch):
    # The console script ends its process without the usual teardown: everything it printed,
    # here a diff of the whole corpus to a pipe, must still be there, with the exit status.
    import shutil

    shutil.copytree(ROOT / "corpus", tmp_path / "corpus")
    result = script("rewrite", "--diff", "corpus", cwd=tmp_path)
    monkeypatch.chdir(tmp_path)
    expected = CliRunner().invoke(cli.main, ["rewrite", "--diff", "corpus"])
    assert result.returncode == expected.exit_code == 1
    assert len(result.stdout) > 50_000
    assert result.stdout == expected.stdout
    # click's own exits keep their status and message
    usage = script("rewrite", "--diff", "--check", "corpus", cwd=tmp_path)
    assert usage.returncode == 2 and "cannot be used together" in usage.stderr


def test_python_dash_m_with_toy_rules(tmp_path):
    """End to end in a real process, with the toy rules swapped in for the real ones."""
    project(tmp_path, **{"a.py": HOOK, "b.py": "x = 1\n"})
    (tmp_path / "a.py").chmod(0o600)
    code = (
        "import sys, runpy, engine_toys, lightmigrate.rules as r; r.ALL_RULES[:] = engine_toys.TOYS; "
        "sys.argv = ['lightmigrate', *sys.argv[1:]]; runpy.run_module('lightmigrate', run_name='__main__')"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}

    def go(*args):
        return subprocess.run(
            [sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=tmp_path, env=env
        )

    before = snapshot(tmp_path)
    diff = go("rewrite", "--diff", ".")
    assert diff.returncode == 1, diff.stderr
    assert diff.stdout.startswith("--- a/a.py\n+++ b/a.py\n")
    assert go("rewrite", "--check", ".").stdout.startswith("would rewrite a.py\n")
    assert snapshot(tmp_path) == before
    done = go("rewrite", ".")
    assert done.returncode == 0
    assert done.stdout.splitlines()[-1] == "2 files scanned, 1 changed, 0 failed, 0 markers left"
    assert (tmp_path / "a.py").read_text() == RENAMED
    assert (tmp_path / "a.py").stat().st_mode & 0o777 == 0o600
    assert sorted(os.listdir(tmp_path)) == ["a.py", "b.py"]
    assert go("rewrite", "--check", ".").returncode == 0


def test_colour_diff_only_when_asked(capsys):
    from lightmigrate.output.console import print_diff

    diff = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n"
    print_diff(diff, color=False)
    assert capsys.readouterr().out == diff
    print_diff(diff, color=True)
    out = capsys.readouterr().out
    assert "\x1b[" in out and "+a = 2" in out
