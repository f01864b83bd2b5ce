import os
import subprocess
import sys
from pathlib import Path

import pytest

from lightmigrate.engine import discover


def touch(root: Path, *names: str) -> None:
    for name in names:
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("x = 1\n")


def found(*paths) -> list:
    out = []
    for entry in discover([str(p) for p in paths]):
        assert entry.error is None, entry.error
        out.append(entry.path)
    return out


def rel(root: Path, paths) -> list:
    return [os.path.relpath(p, root).replace(os.sep, "/") for p in paths]


def test_sorted_and_only_python_files(tmp_path):
    touch(tmp_path, "b.py", "a.py", "c.txt", "pkg/z.py", "pkg/a.py", "a_dir/m.py")
    assert rel(tmp_path, found(tmp_path)) == ["a.py", "a_dir/m.py", "b.py", "pkg/a.py", "pkg/z.py"]


def test_skips_tool_and_build_directories(tmp_path):
    skipped = [
        ".git", ".hg", ".svn", ".tox", ".nox", "node_modules", "site-packages", "__pycache__",
        "build", "dist", ".eggs", "foo.egg-info", ".mypy_cache", ".pytest_cache",
        ".ipynb_checkpoints", "deep/node_modules", "deep/build",
    ]
    touch(tmp_path, "keep.py", "deep/keep.py", *(f"{d}/x.py" for d in skipped))
    assert rel(tmp_path, found(tmp_path)) == ["deep/keep.py", "keep.py"]


def test_skips_virtualenvs(tmp_path):
    touch(tmp_path, "anyname/pyvenv.cfg", "anyname/lib/x.py")  # any folder with pyvenv.cfg
    touch(tmp_path, "venv/bin/python", "venv/lib/x.py")
    touch(tmp_path, ".venv/Scripts/python.exe", ".venv/lib/x.py")
    touch(tmp_path, "env/bin/python", "env/x.py")
    touch(tmp_path, "env2/bin/python", "env2/x.py")  # not a venv name, no pyvenv.cfg: kept
    touch(tmp_path, "venv_like/x.py")
    assert rel(tmp_path, found(tmp_path)) == ["env2/x.py", "venv_like/x.py"]


def test_explicit_files(tmp_path):
    touch(tmp_path, "build/x.py", "notes.txt")
    (tmp_path / ".gitignore").write_text("build/\n")
    entries = list(discover([str(tmp_path / "build/x.py"), str(tmp_path / "notes.txt")]))
    assert entries[0].path.endswith("x.py") and entries[0].error is None  # named: included
    assert entries[1].error is not None and entries[1].error.message == "not a Python file"


def test_missing_path_is_an_error_but_others_continue(tmp_path):
    touch(tmp_path, "a.py")
    entries = list(discover([str(tmp_path / "nope"), str(tmp_path)]))
    assert entries[0].error.message == "no such file or directory"
    assert [e.path for e in entries[1:]] == [str(tmp_path / "a.py")]


def test_dot_argument_gives_relative_paths(tmp_path, monkeypatch):
    touch(tmp_path, "a.py", "s/b.py")
    monkeypatch.chdir(tmp_path)
    assert found(".") == ["a.py", os.path.join("s", "b.py")]


def test_same_file_twice_is_listed_once(tmp_path):
    touch(tmp_path, "a.py")
    assert len(found(tmp_path, tmp_path / "a.py", tmp_path)) == 1


class TestGitignore:
    def test_root_gitignore_with_negation(self, tmp_path):
        touch(tmp_path, "gen_a.py", "gen_keep.py", "src/gen_b.py", "src/real.py")
        (tmp_path / ".gitignore").write_text("# generated\ngen_*.py\n!gen_keep.py\n\n")
        assert rel(tmp_path, found(tmp_path)) == ["gen_keep.py", "src/real.py"]

    def test_anchored_and_dir_only(self, tmp_path):
        touch(tmp_path, "tmp.py", "sub/tmp.py", "out/x.py", "sub/out/y.py", "sub/out.py")
        (tmp_path / ".gitignore").write_text("/tmp.py\nout/\n")
        assert rel(tmp_path, found(tmp_path)) == ["sub/out.py", "sub/tmp.py"]

    def test_nested_gitignore_is_relative_and_overrides(self, tmp_path):
        touch(tmp_path, "a.py", "x.py", "pkg/a.py", "pkg/x.py", "pkg/deep/a.py", "other/a.py")
        (tmp_path / ".gitignore").write_text("x.py\n")
        (tmp_path / "pkg/.gitignore").write_text("/a.py\n!x.py\n")
        assert rel(tmp_path, found(tmp_path)) == ["a.py", "other/a.py", "pkg/deep/a.py", "pkg/x.py"]

    def test_double_star(self, tmp_path):
        touch(tmp_path, "a/gen/x.py", "a/b/gen/y.py", "gen/z.py", "keep/k.py", "data/q/r.py")
        (tmp_path / ".gitignore").write_text("**/gen/\ndata/**\n")
        assert rel(tmp_path, found(tmp_path)) == ["keep/k.py"]

    def test_git_info_exclude_and_repo_root_rules_apply_to_subfolder_args(self, tmp_path):
        (tmp_path / ".git/info").mkdir(parents=True)
        (tmp_path / ".git/info/exclude").write_text("secret.py\n")
        (tmp_path / ".gitignore").write_text("/pkg/skip.py\n")
        touch(tmp_path, "pkg/secret.py", "pkg/skip.py", "pkg/ok.py")
        assert rel(tmp_path, found(tmp_path / "pkg")) == ["pkg/ok.py"]

    def test_matches_git_itself(self, tmp_path):
        git = subprocess.run(["git", "--version"], capture_output=True)
        if git.returncode:
            pytest.skip("git not available")
        touch(
            tmp_path, "a.py", "b/c.py", "b/d/e.py", "f/g.py", "logs/h.py", "x/logs/i.py",
            "x/y/z.py", "k/[1].py", "m.py", "m/n.py",
        )
        (tmp_path / ".gitignore").write_text("b/**/e.py\n/f\nlogs/\n!x/logs/\nx/*/\n[m].py\n")
        (tmp_path / "b/.gitignore").write_text("!d/e.py\nc.py\n")
        subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
        listed = subprocess.run(
            ["git", "ls-files", "--others", "--exclude-standard"],
            cwd=tmp_path, capture_output=True, text=True, check=True,
        ).stdout.split()
        expected = sorted(p for p in listed if p.endswith(".py"))
        assert sorted(rel(tmp_path, found(tmp_path))) == expected


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks")
class TestSymlinks:
    def test_symlink_loop_terminates(self, tmp_path):
        touch(tmp_path, "pkg/a.py")
        os.symlink(tmp_path, tmp_path / "pkg/loop")
        os.symlink(tmp_path / "pkg", tmp_path / "pkg/self")
        assert rel(tmp_path, found(tmp_path)) == ["pkg/a.py"]

    def test_symlinked_directory_is_followed_once(self, tmp_path):
        touch(tmp_path, "real/a.py")
        os.symlink(tmp_path / "real", tmp_path / "z_link")
        os.symlink(tmp_path / "elsewhere_missing", tmp_path / "dangling_dir")
        assert rel(tmp_path, found(tmp_path)) == ["real/a.py"]

    def test_broken_symlink_is_a_per_file_error(self, tmp_path):
        touch(tmp_path, "a.py", "c.py")
        os.symlink(tmp_path / "missing.py", tmp_path / "b.py")
        entries = list(discover([str(tmp_path)]))
        assert [os.path.basename(e.path) for e in entries] == ["a.py", "b.py", "c.py"]
        assert entries[1].error is not None and "broken symbolic link" in entries[1].error.message
        assert entries[0].error is None and entries[2].error is None
        explicit = list(discover([str(tmp_path / "b.py")]))
        assert explicit[0].error.message == "broken symbolic link"

    @pytest.mark.skipif(os.geteuid() == 0, reason="root can read anything")
    def test_unreadable_directory_is_an_error(self, tmp_path):
        touch(tmp_path, "a.py", "locked/b.py")
        (tmp_path / "locked").chmod(0)
        try:
            entries = list(discover([str(tmp_path)]))
        finally:
            (tmp_path / "locked").chmod(0o755)
        assert entries[0].error is None
        assert entries[1].error is not None and "cannot read directory" in entries[1].error.message
