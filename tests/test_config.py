"""[tool.lightmigrate] in pyproject.toml and --select/--ignore/--exclude/--config, run as a user would."""

from lm_cli import CLEAN, EPOCH_END, MISSPELT, lightmigrate, snapshot, write


def test_ignore_in_pyproject_switches_a_rule_off(tmp_path):
    write(tmp_path, {"pyproject.toml": '[tool.lightmigrate]\nignore = ["LM001"]\n', "m.py": EPOCH_END})
    result = lightmigrate("rewrite", "--check", "m.py", cwd=tmp_path)
    # LM001 does not run, so LM002 marks the dead hook instead; nothing is written
    assert result.returncode == 1, result.stderr
    assert "LM002" in result.stdout and "validation_epoch_end" in result.stdout
    assert "on_validation_epoch_end" not in (tmp_path / "m.py").read_text()


def test_select_in_pyproject_and_cli_override(tmp_path):
    write(tmp_path, {"pyproject.toml": '[tool.lightmigrate]\nselect = ["LM002"]\n', "m.py": MISSPELT, "e.py": EPOCH_END})
    result = lightmigrate("rewrite", "--check", ".", cwd=tmp_path)
    assert "would rewrite e.py" in result.stdout  # LM002 marks the 1.x hook of e.py
    assert "would rewrite m.py" in result.stdout
    # --select replaces the configured select: only LM001 now, which leaves m.py alone
    result = lightmigrate("rewrite", "--check", "--select", "LM001", ".", cwd=tmp_path)
    assert "would rewrite e.py" in result.stdout
    assert "m.py" not in result.stdout


def test_exclude_from_config_and_cli_also_covers_named_files(tmp_path):
    write(tmp_path, {
        "pyproject.toml": '[tool.lightmigrate]\nexclude = ["legacy/"]\n',
        "legacy/old.py": EPOCH_END, "src/new.py": EPOCH_END, "src/skip_me.py": EPOCH_END,
    })
    before = snapshot(tmp_path)
    result = lightmigrate("rewrite", "--check", ".", "--exclude", "skip_*.py", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "would rewrite src/new.py", "1 file scanned, 1 would change, 0 failed, 0 markers left"]
    # a file named on the command line (as pre-commit does) is excluded too
    result = lightmigrate("rewrite", "--check", "legacy/old.py", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout.strip() == "0 files scanned, 0 would change, 0 failed, 0 markers left"
    assert snapshot(tmp_path) == before


def test_per_file_ignores(tmp_path):
    write(tmp_path, {
        "pyproject.toml": '[tool.lightmigrate]\n[tool.lightmigrate.per-file-ignores]\n"tests/*" = ["LM0"]\n',
        "tests/t.py": EPOCH_END, "pkg/m.py": EPOCH_END,
    })
    result = lightmigrate("rewrite", "--allow-dirty", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "tests/t.py").read_text() == EPOCH_END
    assert "def on_validation_epoch_end(self):" in (tmp_path / "pkg/m.py").read_text()


def test_config_found_from_a_subfolder_and_explicit_config(tmp_path):
    write(tmp_path, {"pyproject.toml": '[tool.lightmigrate]\nignore = ["LM001", "LM002"]\n', "a/b/m.py": EPOCH_END,
                     "other.toml": 'select = ["LM001"]\n'})
    result = lightmigrate("rewrite", "--check", "m.py", cwd=tmp_path / "a" / "b")
    assert result.returncode == 0, result.stdout
    result = lightmigrate("rewrite", "--check", "--config", tmp_path / "other.toml", "m.py", cwd=tmp_path / "a" / "b")
    assert result.returncode == 1
    assert "would rewrite m.py" in result.stdout


def test_cli_ignore(tmp_path):
    write(tmp_path, {"m.py": MISSPELT, "n.py": CLEAN})
    assert lightmigrate("rewrite", "--check", ".", cwd=tmp_path).returncode == 1
    result = lightmigrate("rewrite", "--check", "--ignore", "LM002", ".", cwd=tmp_path)
    assert result.returncode == 0
    assert "2 files scanned, 0 would change" in result.stdout


def test_invalid_config_is_an_error(tmp_path):
    write(tmp_path, {"pyproject.toml": '[tool.lightmigrate]\nselct = ["LM001"]\n', "m.py": EPOCH_END})
    result = lightmigrate("rewrite", "--check", ".", cwd=tmp_path)
    assert result.returncode == 2
    assert "unknown key(s) in [tool.lightmigrate]: selct" in result.stderr
    write(tmp_path, {"pyproject.toml": '[tool.lightmigrate]\nignore = ["LM999"]\n'})
    result = lightmigrate("rewrite", "--check", ".", cwd=tmp_path)
    assert result.returncode == 2
    assert "unknown rule code(s): LM999" in result.stderr
    write(tmp_path, {"pyproject.toml": '[tool.lightmigrate\n'})
    result = lightmigrate("rewrite", "--check", ".", cwd=tmp_path)
    assert result.returncode == 2 and "invalid TOML" in result.stderr


def test_select_all_with_ignore(tmp_path):
    write(tmp_path, {"m.py": MISSPELT, "e.py": EPOCH_END})
    result = lightmigrate("rewrite", "--check", "--select", "ALL", "--ignore", "LM002", ".", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.splitlines()[0] == "would rewrite e.py"
    assert "m.py" not in result.stdout


def test_line_length_from_the_nearest_formatter_settings(tmp_path):
    from lightmigrate.config import line_length

    (tmp_path / "pyproject.toml").write_text("[tool.black]\nline-length = 100\n")
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "ruff.toml").write_text("[lint]\nselect = ['E']\n")  # no line-length: look further up
    (tmp_path / "a" / "b" / "x.py").write_text("")
    assert line_length(str(tmp_path / "a" / "b" / "x.py")) == 100
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / ".ruff.toml").write_text("line-length = 79\n")
    (tmp_path / "c" / "y.py").write_text("")
    assert line_length(str(tmp_path / "c" / "y.py")) == 79
    assert line_length(str(tmp_path / "missing.py")) == 88
