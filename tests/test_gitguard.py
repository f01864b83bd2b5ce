"""The dirty-tree guard, in a real git repository."""

import subprocess

import pytest
from lm_cli import CLEAN, EPOCH_END, lightmigrate, write


def git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@e", "HOME": str(cwd), "PATH": "/usr/bin:/bin"})


@pytest.fixture
def repo(tmp_path):
    write(tmp_path, {"src/m.py": EPOCH_END, "README.md": "hi\n", ".gitignore": "build/\n"})
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "init")
    return tmp_path


def test_clean_tree_is_rewritten(repo):
    result = lightmigrate("rewrite", "src", cwd=repo)
    assert result.returncode == 0, result.stderr
    assert "def on_validation_epoch_end(self):" in (repo / "src/m.py").read_text()


def test_modified_tracked_file_anywhere_refuses(repo):
    (repo / "README.md").write_text("changed\n")
    result = lightmigrate("rewrite", "src", cwd=repo)
    assert result.returncode == 2
    assert "uncommitted changes" in result.stderr and "README.md" in result.stderr and "--allow-dirty" in result.stderr
    assert (repo / "src/m.py").read_text() == EPOCH_END  # nothing written
    # --diff and --check always run
    assert lightmigrate("rewrite", "--check", "src", cwd=repo).returncode == 1
    assert lightmigrate("rewrite", "--diff", "src", cwd=repo).returncode == 1
    # --allow-dirty goes ahead
    assert lightmigrate("rewrite", "--allow-dirty", "src", cwd=repo).returncode == 0
    assert "def on_validation_epoch_end(self):" in (repo / "src/m.py").read_text()


def test_staged_change_refuses(repo):
    (repo / "src/m.py").write_text(EPOCH_END + "\n# edited\n")
    git(repo, "add", "src/m.py")
    result = lightmigrate("rewrite", "src/m.py", cwd=repo)
    assert result.returncode == 2 and "src/m.py" in result.stderr


def test_untracked_file_under_the_paths_refuses_but_ignored_and_elsewhere_do_not(repo):
    write(repo, {"build/gen.py": CLEAN, "notes/new.py": CLEAN})
    result = lightmigrate("rewrite", "src", cwd=repo)
    assert result.returncode == 0, result.stderr  # untracked files outside PATHS, ignored files: fine
    git(repo, "commit", "-qam", "migrated")
    write(repo, {"src/new.py": EPOCH_END})
    result = lightmigrate("rewrite", "src", cwd=repo)
    assert result.returncode == 2 and "src/new.py" in result.stderr
    assert (repo / "src/new.py").read_text() == EPOCH_END


def test_outside_git_is_not_checked(tmp_path):
    write(tmp_path, {"m.py": EPOCH_END})
    assert lightmigrate("rewrite", "m.py", cwd=tmp_path).returncode == 0
