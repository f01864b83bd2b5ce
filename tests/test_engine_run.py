import os
from pathlib import Path

from engine_toys import ALL_TOYS, TOYS, RenameEpochEnd

from lightmigrate.engine import Mode, run
from lightmigrate.output.findings import Kind
from engine_toys import WholeFileRule

HOOK = "class M:\n    def training_epoch_end(self, outputs):\n        pass\n"
RENAMED = HOOK.replace("training_epoch_end", "on_train_epoch_end")


def write(root: Path, files: dict) -> None:
    for name, content in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            content = content.encode()
        p.write_bytes(content)


def snapshot(root: Path) -> dict:
    return {
        str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def by_name(report):
    return {os.path.basename(f.path): f for f in report.files}


def test_rewrites_in_place_and_counts(tmp_path):
    write(tmp_path, {"a.py": HOOK, "b.py": "x = 1\n", "sub/c.py": HOOK})
    report = run([str(tmp_path)], TOYS)
    assert (report.scanned, report.changed, report.failed, report.markers) == (3, 2, 0, 0)
    assert report.exit_code == 0
    assert (tmp_path / "a.py").read_text() == RENAMED
    assert (tmp_path / "sub/c.py").read_text() == RENAMED
    assert sorted(os.listdir(tmp_path)) == ["a.py", "b.py", "sub"]  # no temp files left


def test_second_run_changes_nothing(tmp_path):
    write(tmp_path, {"a.py": HOOK, "v.py": "class V:\n    def validation_epoch_end(self, o):\n        pass\n"})
    first = run([str(tmp_path)], TOYS)
    assert first.changed == 2 and first.markers == 1
    before = snapshot(tmp_path)
    second = run([str(tmp_path)], TOYS)
    assert second.changed == 0 and second.markers == 1  # the marker is still there, still counted
    assert snapshot(tmp_path) == before


def test_unchanged_files_are_not_written(tmp_path):
    write(tmp_path, {"a.py": "def training_epoch_end_helper(): pass\n"})  # trigger, but no change
    before = snapshot(tmp_path)
    report = run([str(tmp_path)], TOYS)
    assert report.changed == 0
    assert snapshot(tmp_path) == before


def test_latin1_cookie_round_trips_byte_identically(tmp_path):
    src = b"# -*- coding: latin-1 -*-\n# caf\xe9\nclass M:\n    def training_epoch_end(self):\n        return '\xe9'\n"
    write(tmp_path, {"a.py": src})
    assert run([str(tmp_path)], TOYS).changed == 1
    assert (tmp_path / "a.py").read_bytes() == src.replace(b"training_epoch_end", b"on_train_epoch_end")


def test_utf8_bom_and_crlf_are_kept(tmp_path):
    src = "\ufeffclass M:\r\n    def training_epoch_end(self):\r\n        return 'é'\r\n"
    write(tmp_path, {"a.py": src.encode("utf-8")})
    run([str(tmp_path)], TOYS)
    data = (tmp_path / "a.py").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and data.count(b"\xef\xbb\xbf") == 1
    assert data == src.replace("training_epoch_end", "on_train_epoch_end").encode("utf-8")


def test_lines_added_to_crlf_file_use_crlf(tmp_path):
    write(tmp_path, {"v.py": b"class V:\r\n    def validation_epoch_end(self, o):\r\n        pass\r\n"})
    run([str(tmp_path)], TOYS)
    data = (tmp_path / "v.py").read_bytes()
    assert b"# TODO(lightmigrate): LM999 check the outputs\r\n" in data
    assert data.count(b"\n") == data.count(b"\r\n") == 4


def test_file_mode_is_kept(tmp_path):
    write(tmp_path, {"a.py": HOOK})
    (tmp_path / "a.py").chmod(0o640)
    run([str(tmp_path)], TOYS)
    assert (tmp_path / "a.py").stat().st_mode & 0o777 == 0o640


def test_syntax_error_fails_that_file_only(tmp_path):
    write(tmp_path, {"a.py": HOOK, "b.py": "def training_epoch_end(:\n    pass\n", "c.py": HOOK})
    report = run([str(tmp_path)], TOYS)
    files = by_name(report)
    assert files["b.py"].error.format() == (
        f"{tmp_path / 'b.py'}:1:24: syntax error: invalid syntax\n"
        "    def training_epoch_end(:\n"
        "                           ^"
    )
    assert report.exit_code == 2 and report.failed == 1 and report.changed == 2
    assert (tmp_path / "a.py").read_text() == RENAMED == (tmp_path / "c.py").read_text()
    assert (tmp_path / "b.py").read_text() == "def training_epoch_end(:\n    pass\n"


def test_a_bad_rule_is_reported_and_the_other_rules_changes_are_still_written(tmp_path):
    bad = {
        "crash.py": "boom = 1\n" + HOOK,
        "unparsable.py": "def breakme(): pass\n" + HOOK,
        "uncompilable.py": "returnme = 1\n" + HOOK,
    }
    write(tmp_path, {**bad, "good.py": HOOK})
    report = run([str(tmp_path)], ALL_TOYS)
    files = by_name(report)
    [crash] = files["crash.py"].problems
    assert crash.format() == (f"{tmp_path / 'crash.py'}: LM990 could not migrate this file (internal error: "
                              "RuntimeError: kaboom); its changes were left out, the other rules' changes were kept")
    assert files["unparsable.py"].problems[0].message.startswith("LM991 could not migrate this file (it produced "
                                                                 "invalid code")
    assert files["uncompilable.py"].problems[0].message.startswith("LM992 could not migrate this file")
    for name, content in bad.items():  # the rename (another rule) is written all the same
        assert files[name].error is None and files[name].changed
        assert (tmp_path / name).read_text() == content.replace(HOOK, RENAMED)
    assert files["good.py"].problems == [] and (tmp_path / "good.py").read_text() == RENAMED
    assert report.exit_code == 2 and report.failed == 3
    assert sorted(os.listdir(tmp_path)) == sorted([*bad, "good.py"])


def test_binary_and_undecodable_files_are_errors(tmp_path):
    write(tmp_path, {"bin.py": b"x\0y", "bad.py": b"x = 1\ny = '\xff'\n", "ok.py": HOOK})
    files = by_name(run([str(tmp_path)], TOYS))
    assert files["bin.py"].error.format() == f"{tmp_path / 'bin.py'}: binary file"
    assert files["bad.py"].error.format().startswith(f"{tmp_path / 'bad.py'}:2:6: cannot decode")
    assert files["ok.py"].changed


def test_missing_path_is_an_error_but_the_rest_runs(tmp_path):
    write(tmp_path, {"a.py": HOOK})
    report = run([str(tmp_path / "nope"), str(tmp_path / "a.py")], TOYS)
    assert report.failed == 1 and report.changed == 1 and report.exit_code == 2


def test_check_and_diff_write_nothing(tmp_path):
    write(tmp_path, {"a.py": HOOK, "b.py": "x = 1\n"})
    before = snapshot(tmp_path)
    check = run([str(tmp_path)], TOYS, Mode.CHECK)
    assert check.changed == 1 and check.exit_code == 1
    diff = run([str(tmp_path)], TOYS, Mode.DIFF)
    assert diff.exit_code == 1
    patch = by_name(diff)["a.py"].diff
    assert patch.startswith(f"--- a/{str(tmp_path / 'a.py').lstrip('/')}\n+++ b/")
    assert "-    def training_epoch_end(self, outputs):\n+    def on_train_epoch_end(self, outputs):\n" in patch
    assert snapshot(tmp_path) == before


def test_check_and_diff_exit_0_when_clean(tmp_path):
    write(tmp_path, {"a.py": RENAMED})
    assert run([str(tmp_path)], TOYS, Mode.CHECK).exit_code == 0
    assert run([str(tmp_path)], TOYS, Mode.DIFF).exit_code == 0


def test_prefilter_skips_files_no_rule_wants(tmp_path):
    # Without any trigger the file is not even parsed, so its syntax error goes unnoticed.
    write(tmp_path, {"a.py": "def f(:\n"})
    report = run([str(tmp_path)], TOYS)
    assert report.scanned == 1 and report.failed == 0


def test_markers_in_untriggered_files_are_counted(tmp_path):
    write(tmp_path, {"a.py": "x = 1  # TODO(lightmigrate): LM042 left from an earlier run\n"})
    report = run([str(tmp_path)], TOYS)
    [result] = report.files
    assert report.markers == result.markers == 1
    [finding] = result.findings
    assert (finding.code, finding.kind, finding.line, finding.col) == ("LM042", Kind.MARKER, 1, 10)
    assert finding.message == "left from an earlier run"


def test_project_index_covers_all_files(tmp_path):
    write(tmp_path, {
        "base.py": "class Base(LightningModule):\n    pass\n",
        "child.py": "class Child(Base):\n    def training_step(self, b, i):\n        pass\n",
        "plain.py": "class Plain(Base):\n    pass\n",  # nothing hook-like: not worth indexing
    })
    seen = {}

    class Probe(WholeFileRule):
        code = "LM997"
        triggers = ("class",)

        def apply(self, module, ctx):
            info = ctx.project.resolve("Child")
            seen[os.path.basename(ctx.path)] = info and ctx.project.is_lightning_module(info)
            assert ctx.project.resolve("Plain") is None
            return module

    run([str(tmp_path)], [Probe()])
    assert seen == {"base.py": True, "child.py": True, "plain.py": True}


def test_file_changed_during_run_is_not_overwritten(tmp_path):
    write(tmp_path, {"a.py": HOOK})

    class Meddle(RenameEpochEnd):
        def apply(self, module, ctx):
            Path(ctx.path).write_text("# edited by someone else\n" + HOOK)
            return super().apply(module, ctx)

    report = run([str(tmp_path)], [Meddle()])
    assert "changed on disk" in report.files[0].error.message
    assert (tmp_path / "a.py").read_text() == "# edited by someone else\n" + HOOK


def test_symlinked_file_is_rewritten_through_the_link(tmp_path):
    write(tmp_path, {"real/a.py": HOOK})
    (tmp_path / "link.py").symlink_to(tmp_path / "real/a.py")
    report = run([str(tmp_path / "link.py")], TOYS)
    assert report.changed == 1
    assert (tmp_path / "link.py").is_symlink()
    assert (tmp_path / "real/a.py").read_text() == RENAMED


def test_index_is_built_only_when_some_file_needs_rules(tmp_path, monkeypatch):
    from lightmigrate.analysis.project import ProjectIndex

    indexed = []
    original, original_lazy = ProjectIndex.add_source, ProjectIndex.add_lazy
    monkeypatch.setattr(
        ProjectIndex, "add_source", lambda self, text, path, **kw: (indexed.append(path), original(self, text, path, **kw))
    )
    monkeypatch.setattr(  # a file kept unparsed is added with what the survey read from it
        ProjectIndex, "add_lazy", lambda self, text, path, entry: (indexed.append(path),
                                                                   original_lazy(self, text, path, entry))
    )
    write(tmp_path, {"a.py": "class A:\n    pass\n", "b.py": "x = 1\n"})
    run([str(tmp_path)], TOYS)
    assert indexed == []
    write(tmp_path, {"c.py": HOOK})
    run([str(tmp_path)], TOYS)
    assert sorted(map(os.path.basename, indexed)) == ["a.py", "b.py", "c.py"]  # all files, not just c.py


def test_each_rule_finds_once_per_text(tmp_path, monkeypatch):
    # A file's sites are found where it is transformed, once per rule and text (again only for
    # text an earlier rule changed), not first by the run and then again by the transform.
    from lightmigrate.engine import transform
    from lightmigrate.rules import select_rules

    corpus = Path(__file__).resolve().parent.parent / "corpus"
    names = sorted(p.name for p in corpus.glob("*.py"))[:12]
    write(tmp_path, {n: (corpus / n).read_bytes() for n in names})
    rules = select_rules()
    asked = []
    real = transform.rule_sites
    monkeypatch.setattr(transform, "rule_sites", lambda rule, source, ctx: (
        asked.append((rule.code, ctx.path, source.text)), real(rule, source, ctx))[1])
    report = run([str(tmp_path)], rules, Mode.DIFF, jobs=1)
    assert sum(1 for f in report.files if f.diff) >= 6
    assert len(asked) > 50 and len(set(asked)) == len(asked)
