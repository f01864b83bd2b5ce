"""The real command with the real rules over a copy of the bundled corpus, as a user runs it."""

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def lightmigrate(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "lightmigrate", *args], cwd=cwd, capture_output=True, text=True
    )


def snapshot(folder):
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*.py"))}


def test_rewrite_corpus_in_place_then_nothing_left(tmp_path):
    work = tmp_path / "corpus"
    shutil.copytree(ROOT / "corpus", work)
    before = snapshot(work)

    check = lightmigrate("rewrite", "--check", ".", cwd=work)
    assert check.returncode == 1, check.stderr
    would = [line for line in check.stdout.splitlines() if line.startswith("would rewrite")]
    assert len(would) >= 8
    assert snapshot(work) == before  # --check wrote nothing

    first = lightmigrate("rewrite", ".", cwd=work)
    assert first.returncode == 0, first.stderr
    after = snapshot(work)
    changed = [p for p in before if before[p] != after[p]]
    assert len(changed) == len(would)
    for path in changed:
        text = after[path].decode()
        compile(text, str(path), "exec")
        if path.parent != Path("."):
            continue  # corpus/pending/ needs rules not written yet: markers, not rewrites
        for removed in ("def training_epoch_end(", "def validation_epoch_end(", "def test_epoch_end("):
            assert removed not in text, (path, removed)
    assert "changed" in first.stdout.splitlines()[-1]

    second = lightmigrate("rewrite", ".", cwd=work)
    assert second.returncode == 0
    assert snapshot(work) == after  # idempotent
    clean = lightmigrate("rewrite", "--check", ".", cwd=work)
    assert clean.returncode == 0 and "0 would change" in clean.stdout
