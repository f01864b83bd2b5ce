"""``--jobs``: the same bytes and the same report whatever the number of processes, the class
index built on several processes equals the one built on one, and the progress bar shows
only on a terminal outside CI."""

import os
import pty
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lightmigrate.engine import Mode, run
from lightmigrate.engine.parallel import default_jobs, map_in_order
from lightmigrate.engine.survey import build_index
from lightmigrate.engine.source import read_source
from lightmigrate.engine.discovery import discover
from lightmigrate.analysis.project import ProjectIndex
from lightmigrate.rules import ALL_RULES

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpus"
SCRIPT = Path(sys.executable).with_name("lightmigrate")


def _square_plus(x, offset):
    return x * x + offset


def test_map_in_order_keeps_order_and_shares_arguments():
    items = list(range(40))
    expected = [x * x + 3 for x in items]
    seen = []
    for jobs in (1, 2, 4):
        assert map_in_order(_square_plus, items, jobs, (3,), lambda s, d, t: seen.append((s, d, t)), "sq") == expected
    assert seen[-1] == ("sq", 40, 40) and ("sq", 0, 40) in seen
    assert default_jobs() >= 1


def _batch_sizes(items):
    return [len(items)] * len(items)


def test_map_in_order_sends_big_runs_in_batches_and_keeps_order(monkeypatch):
    from lightmigrate.engine import parallel

    assert parallel.batch_size(20, 2) == 1 and parallel.batch_size(100, 2) == 3
    assert parallel.batch_size(434, 2) == parallel.BATCH_MAX
    items = [None if x % 7 == 0 else x for x in range(600)]
    seen = []
    out = map_in_order(_square_plus, iter(items), 2, (2,), lambda s, d, t: seen.append(d), "sq", total=600)
    assert out == [None if x is None else x * x + 2 for x in items]
    assert seen[0] == 0 and seen[-1] == 600 and seen == sorted(seen)
    # each round trip to a worker carries a batch (the None items stay here)
    monkeypatch.setattr(parallel, "_call_in_worker", _batch_sizes)
    sizes = map_in_order(_square_plus, items, 2, (2,))
    assert sizes == [None if x is None else sizes[k] for k, x in enumerate(items)]
    assert max(s for s in sizes if s is not None) == parallel.BATCH_MAX
    assert sum(1 for s in sizes if s is not None) == 600 - len(range(0, 600, 7))


def corpus_files():
    return [(s.text, s.path) for s in (read_source(e.path) for e in discover([str(CORPUS)]) if e.error is None)]


def index_state(project: ProjectIndex):
    """What every question to ``project`` is answered from, with the files it indexed lazily
    parsed (``classes()`` parses them): each class with all its fields, in index order, the
    paths and the run-wide settings."""
    classes = [(c, c.super_calls, c.params, c.attributes, c.self_calls) for c in project.classes()]
    return {"classes": classes, "paths": sorted(p for p in project._rank), "uses_dp": project.uses_dp,
            "trainer_settings": project.trainer_settings}


def test_map_in_order_takes_a_generator_and_skips_none_items():
    produced = []

    def items():
        for x in range(30):
            produced.append(x)
            yield None if x % 3 == 0 else x

    for jobs in (1, 2):
        produced.clear()
        seen = []
        out = map_in_order(_square_plus, items(), jobs, (1,), lambda s, d, t: seen.append((d, t)), "sq", total=30)
        assert out == [None if x % 3 == 0 else x * x + 1 for x in range(30)]
        assert produced == list(range(30)) and seen[0] == (0, 30) and seen[-1] == (30, 30)
        assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_parallel_index_equals_sequential_index(monkeypatch):
    import lightmigrate.engine.survey as survey_module

    monkeypatch.setattr(survey_module, "PARALLEL_MIN_CHARS", 0)  # the corpus is small: use the pool anyway
    files = corpus_files()
    assert len(files) > 40
    sequential = ProjectIndex()
    for text, path in files:
        sequential.add_source(text, path)
    for jobs in (2, 4):
        parallel = build_index(files, jobs)
        assert index_state(parallel) == index_state(sequential)
        # Bucket order decides which definition wins, so it must match too.
        assert [c.path for c in parallel.classes()] == [c.path for c in sequential.classes()]


def test_merge_refuses_unknown_attribute_kinds():
    a, b = ProjectIndex(), ProjectIndex()
    b.something_new = 3.5  # a field added later that merge does not know how to combine
    a.something_new = 0.0
    with pytest.raises(TypeError, match="something_new"):
        a.merge(b)


@pytest.fixture(scope="module")
def corpus_copies(tmp_path_factory):
    base = tmp_path_factory.mktemp("jobs")
    copies = {}
    for jobs in (1, 2, 4):
        target = base / f"jobs{jobs}" / "corpus"
        shutil.copytree(CORPUS, target)
        copies[jobs] = target
    return copies


def test_diff_output_is_byte_identical_for_any_jobs(corpus_copies):
    outputs = {}
    for jobs, tree in corpus_copies.items():
        result = subprocess.run([str(SCRIPT), "rewrite", "--diff", "--jobs", str(jobs), "corpus"],
                                cwd=tree.parent, capture_output=True, timeout=900)
        assert result.returncode == 1, result.stderr
        outputs[jobs] = (result.stdout, result.stderr)
    assert outputs[1][0].count(b"\n+++ b/") > 40
    assert outputs[2] == outputs[1] and outputs[4] == outputs[1]


def test_written_trees_and_reports_are_identical_for_any_jobs(corpus_copies):
    # Markers name files by the path they were given, so paths are compared relative to the tree.
    trees, reports = {}, {}
    for jobs in (1, 4):
        tree = corpus_copies[jobs]
        report = run([str(tree)], ALL_RULES, Mode.WRITE, jobs=jobs)
        reports[jobs] = [
            (os.path.relpath(f.path, tree), f.changed, f.error, f.markers,
             [(x.code, x.kind, x.line, x.col, x.message.replace(str(tree), "<tree>")) for x in f.findings])
            for f in report.files
        ]
        trees[jobs] = {
            p.relative_to(tree): p.read_bytes().replace(str(tree).encode(), b"<tree>")
            for p in sorted(tree.rglob("*.py"))
        }
    assert sum(1 for r in reports[1] if r[1]) > 40
    assert reports[4] == reports[1]
    assert trees[4] == trees[1]


# The progress bar.

HOOK = "import pytorch_lightning as pl\n\n\nclass M(pl.LightningModule):\n    def training_epoch_end(self, outputs):\n        pass\n"


def many_files(root: Path, n: int = 30) -> Path:
    for i in range(n):
        (root / f"m{i:02d}.py").write_text(HOOK.replace("class M", f"class M{i}"))
    return root


def run_in_pty(args, cwd, env):
    """Run ``args`` with stdout and stderr on a pseudo-terminal; returns (status, output)."""
    main, child = pty.openpty()
    proc = subprocess.Popen(args, cwd=cwd, env=env, stdin=child, stdout=child, stderr=child, close_fds=True)
    os.close(child)
    chunks = []
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        ready, _, _ = select.select([main], [], [], 0.5)
        if ready:
            try:
                data = os.read(main, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    proc.wait()
    os.close(main)
    return proc.returncode, b"".join(chunks).decode(errors="replace")


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env.update(extra)
    return env


def test_progress_bar_on_a_terminal(tmp_path):
    many_files(tmp_path)
    status, output = run_in_pty([str(SCRIPT), "rewrite", "--check", "--jobs", "2", "."], tmp_path,
                                clean_env(TERM="xterm", COLUMNS="100"))
    assert status == 1
    assert "migrating" in output and "30/30" in output  # rich's bar with its M/N column
    assert "30 files scanned, 30 would change, 0 failed, 0 markers left" in output


def test_no_progress_bar_under_ci_even_on_a_terminal(tmp_path):
    many_files(tmp_path)
    status, output = run_in_pty([str(SCRIPT), "rewrite", "--check", "--jobs", "2", "."], tmp_path,
                                clean_env(TERM="xterm", CI="true"))
    assert status == 1
    assert "migrating" not in output and "30/30" not in output
    assert "30 files scanned, 30 would change" in output


def test_no_progress_bar_when_not_a_terminal(tmp_path):
    many_files(tmp_path)
    result = subprocess.run([str(SCRIPT), "rewrite", "--check", "--jobs", "2", "."], cwd=tmp_path,
                            capture_output=True, text=True, env=clean_env(), timeout=600)
    assert result.returncode == 1
    assert result.stderr == ""  # nothing but problems ever goes to stderr here
    assert "\x1b" not in result.stdout and "migrating" not in result.stdout
    assert result.stdout.splitlines()[-1] == "30 files scanned, 30 would change, 0 failed, 0 markers left"


def test_jobs_must_be_positive(tmp_path):
    result = subprocess.run([str(SCRIPT), "rewrite", "--jobs", "0", "."], cwd=tmp_path, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 2 and "--jobs" in result.stderr


def test_survey_on_the_pool_reports_progress_in_files(monkeypatch):
    import lightmigrate.engine.survey as survey_module

    monkeypatch.setattr(survey_module, "PARALLEL_MIN_CHARS", 0)
    files = [(text, path) for text, path in corpus_files()]
    seen = []
    survey_module.survey(files, 2, lambda stage, done, total: seen.append((stage, done, total)))
    assert seen[-1] == ("indexing", len(files), len(files)) and seen[0][1] == 0
    assert [d for _, d, _ in seen] == sorted(d for _, d, _ in seen) and len(seen) > 3


def _collector_state(_item):
    import gc

    return gc.isenabled()


def test_run_pauses_the_collector_and_workers_collect_between_items(tmp_path):
    import gc

    from lightmigrate.engine import parallel
    from engine_toys import WholeFileRule

    seen = []

    class Probe(WholeFileRule):  # records the collector's state while the prefilter asks about a file
        code, triggers = "LM999", ("x",)

        def may_apply(self, text):
            seen.append(gc.isenabled())
            return "x" in text

        def apply(self, module, ctx):
            return module

    (tmp_path / "a.py").write_text("x = 1\n")
    assert gc.isenabled()
    run([str(tmp_path)], [Probe()], Mode.CHECK)
    assert seen and not any(seen) and gc.isenabled()  # paused during the run, as it was after
    gc.disable()
    try:
        run([str(tmp_path)], [Probe()], Mode.CHECK)
        assert not gc.isenabled()  # a caller's paused collector stays paused
        # a worker forked from a run with the collector paused turns it back on, and pauses it
        # only while it works on an item
        parallel._init_worker(_collector_state, ())
        assert gc.isenabled()
        assert parallel._call_in_worker([None, None]) == [False, False]
        assert gc.isenabled()
    finally:
        gc.enable()


def _frozen_count(_item):
    import gc

    return gc.get_freeze_count()


def test_workers_inherit_what_the_run_held_frozen():
    # the objects alive when a pool starts are in the collector's permanent generation in its
    # processes (their collections skip them), and thawed again in this one afterwards
    import gc

    from lightmigrate.engine import parallel

    assert gc.get_freeze_count() == 0
    kept = [[i] for i in range(1000)]  # some objects the collector tracks
    counts = parallel.map_in_order(_frozen_count, [1, 2, 3, 4], jobs=2)
    assert all(c >= len(kept) for c in counts)
    assert gc.get_freeze_count() == 0
    gc.freeze()  # a caller's own frozen objects stay frozen
    try:
        before = gc.get_freeze_count()
        assert all(c >= len(kept) for c in parallel.map_in_order(_frozen_count, [1, 2], jobs=2))
        assert gc.get_freeze_count() == before  # not thawed by the pool
    finally:
        gc.unfreeze()
