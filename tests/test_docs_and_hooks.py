"""Generated rule docs are up to date; `lightmigrate rules`; the pre-commit hooks file."""

import shlex
import subprocess
import sys
from pathlib import Path

import yaml
from lm_cli import CLEAN, EPOCH_END, SCRIPT, lightmigrate, write

from lightmigrate.docs import render_all, stale_files
from lightmigrate.rules import ALL_RULES

ROOT = Path(__file__).resolve().parent.parent


def test_committed_rule_docs_are_up_to_date():
    stale = stale_files(str(ROOT / "docs" / "rules"), ALL_RULES)
    assert stale == [], f"run `python -m lightmigrate.docs` to regenerate: {stale}"


def test_docs_command_regenerates_and_checks(tmp_path):
    out = tmp_path / "rules"
    cmd = [sys.executable, "-m", "lightmigrate.docs", "--dir", str(out)]
    assert subprocess.run(cmd + ["--check"], capture_output=True).returncode == 1
    assert subprocess.run(cmd, capture_output=True).returncode == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(render_all(ALL_RULES))
    (out / "LM999.md").write_text("stale\n")
    (out / "LM001.md").write_text("edited\n")
    check = subprocess.run(cmd + ["--check"], capture_output=True, text=True)
    assert check.returncode == 1 and "LM001.md" in check.stdout and "LM999.md" in check.stdout
    subprocess.run(cmd, check=True, capture_output=True)
    assert not (out / "LM999.md").exists()
    assert subprocess.run(cmd + ["--check"], capture_output=True).returncode == 0


def test_rule_page_holds_metadata_and_examples():
    page = render_all(ALL_RULES)["LM001.md"]
    rule = next(r for r in ALL_RULES if r.code == "LM001")
    assert rule.summary in page and rule.guide in page and rule.safety.value in page
    assert rule.examples[0].before.strip() in page and rule.examples[0].after.strip() in page
    index = render_all(ALL_RULES)["index.md"]
    assert all(f"[{r.code}]({r.code}.md)" in index for r in ALL_RULES)


def test_readme_links_the_rule_docs():
    assert "docs/rules/index.md" in (ROOT / "README.md").read_text()


def test_rules_command_lists_and_explains(tmp_path):
    listing = lightmigrate("rules", cwd=tmp_path)
    assert listing.returncode == 0
    assert all(r.code in listing.stdout for r in ALL_RULES)
    detail = lightmigrate("rules", "lm001", cwd=tmp_path)
    assert detail.returncode == 0
    assert "behaviour-preserving" in detail.stdout
    assert "https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html" in detail.stdout
    assert "before:" in detail.stdout and "after:" in detail.stdout
    unknown = lightmigrate("rules", "LM999", cwd=tmp_path)
    assert unknown.returncode == 2 and "unknown rule code" in unknown.stderr


def test_pre_commit_hooks_file_is_valid_and_its_entries_run(tmp_path):
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert isinstance(hooks, list) and {h["id"] for h in hooks} == {"lightmigrate", "lightmigrate-fix"}
    for hook in hooks:
        assert {"id", "name", "entry", "language"} <= set(hook)
        assert hook["language"] == "python"
        assert set(hook["types_or"]) == {"python", "jupyter"}
    check = next(h for h in hooks if h["id"] == "lightmigrate")
    assert check["entry"] == "lightmigrate rewrite --check"
    write(tmp_path, {"old.py": EPOCH_END, "fine.py": CLEAN})

    def run_entry(hook, *files):  # as pre-commit does: entry + the staged file names
        argv = shlex.split(hook["entry"])
        assert argv[0] == "lightmigrate"
        return subprocess.run([str(SCRIPT), *argv[1:], *files], cwd=tmp_path, capture_output=True, text=True)

    assert run_entry(check, "fine.py").returncode == 0
    failed = run_entry(check, "old.py", "fine.py")
    assert failed.returncode == 1 and "would rewrite old.py" in failed.stdout
    assert (tmp_path / "old.py").read_text() == EPOCH_END
    fix = next(h for h in hooks if h["id"] == "lightmigrate-fix")
    assert run_entry(fix, "old.py").returncode == 0
    assert "def on_validation_epoch_end(self):" in (tmp_path / "old.py").read_text()
    assert run_entry(check, "old.py").returncode == 0
