"""Suppression comments (`# lightmigrate: ignore[...]`, `off`/`on`) with the real rules."""

from lm_cli import EPOCH_END, lightmigrate, write

from lightmigrate.engine import transform_text
from lightmigrate.engine.suppress import SuppressionMap
from lightmigrate.output.findings import Kind
from lightmigrate.rules import ALL_RULES

TWO = EPOCH_END + '''

class Second(pl.LightningModule):
    def validation_step(self, batch, batch_idx):
        return {"y": 2}

    def validation_epoch_end(self, outputs):
        print(outputs)
'''


def migrate(text):
    out = transform_text(text, ALL_RULES, "m.py")
    again = transform_text(out.text, ALL_RULES, "m.py")
    assert again.text == out.text  # idempotent with suppressions too
    return out


def test_map_forms():
    text = (
        "x = 1  # lightmigrate: ignore[LM001]\n"  # 1: this line
        "# lightmigrate: ignore[LM002,LM003]\n"  # 2: the next code line
        "\n"
        "y = 2\n"  # 4
        "def f():  # lightmigrate: ignore\n"  # 5: the whole block
        "    return 1\n"
        "z = 3\n"  # 7
        "# lightmigrate: off[LM00]\n"  # 8
        "a = 1\n"
        "# lightmigrate: on\n"  # 10
        "b = 2\n"
    )
    smap = SuppressionMap(text)
    assert smap.suppressed(1, "LM001") and not smap.suppressed(1, "LM002")
    assert smap.suppressed(4, "LM002") and smap.suppressed(4, "LM003") and not smap.suppressed(4, "LM001")
    assert smap.suppressed(5, "LM005") and smap.suppressed(6, "LM001") and not smap.suppressed(7, "LM001")
    assert all(smap.suppressed(n, "LM004") for n in (8, 9, 10)) and not smap.suppressed(11, "LM004")


def test_def_line_suppression_keeps_that_class_whole_and_migrates_the_other():
    text = TWO.replace("def validation_epoch_end(self, outputs):\n        print(outputs)\n\n\nclass Second",
                       "def validation_epoch_end(self, outputs):  # lightmigrate: ignore\n        print(outputs)\n\n\nclass Second", 1)
    assert text != TWO
    out = migrate(text)
    first, second = out.text.split("class Second")
    assert first == text.split("class Second")[0]  # byte-identical: no buffer, no rename, no marker
    assert "def on_validation_epoch_end(self):" in second
    assert all(f.line > len(first.splitlines()) for f in out.findings)  # nothing reported on Model


def test_suppressing_one_code_lets_the_other_rules_speak():
    text = EPOCH_END.replace("def validation_epoch_end(self, outputs):",
                             "def validation_epoch_end(self, outputs):  # lightmigrate: ignore[LM001]")
    out = migrate(text)
    assert "on_validation_epoch_end(self)" not in out.text
    assert [(f.code, f.kind) for f in out.findings] == [("LM002", Kind.MARKER)]  # still never silent
    both = text.replace("ignore[LM001]", "ignore[LM001,LM002]")
    out = migrate(both)
    assert out.text == both and not out.changed and out.findings == [] and out.markers == 0


def test_a_suppressed_line_inside_the_class_blocks_the_whole_class_rewrite():
    # LM001 rewrites the class as a whole (buffer hook + renamed hook); a suppressed line that the
    # rewrite touches keeps the whole class as it was, never half of it.
    text = EPOCH_END.replace("    def validation_epoch_end", "    # lightmigrate: ignore[LM001]\n    def validation_epoch_end")
    out = migrate(text)
    assert "self.validation_step_outputs" not in out.text
    assert "def validation_epoch_end(self, outputs):" in out.text


def test_off_on_region_and_unrelated_suppression_changes_nothing():
    text = "# lightmigrate: off[LM001]\n" + TWO.replace("\n\nclass Second", "\n# lightmigrate: on\n\nclass Second")
    out = migrate(text)
    head, tail = out.text.split("class Second")
    assert "def on_validation_epoch_end" not in head and "def on_validation_epoch_end" in tail
    assert "LM002" in head  # LM002 was not switched off: it marks the hook LM001 left
    # a suppression for a code whose rule does nothing there has no effect
    other = EPOCH_END.replace("return {\"x\": 1}", "return {\"x\": 1}  # lightmigrate: ignore[LM003]")
    assert migrate(other).text == migrate(EPOCH_END).text.replace("return {\"x\": 1}", "return {\"x\": 1}  # lightmigrate: ignore[LM003]")


def test_suppression_through_the_command(tmp_path):
    text = EPOCH_END.replace("class Model(pl.LightningModule):", "class Model(pl.LightningModule):  # lightmigrate: ignore")
    write(tmp_path, {"m.py": text})
    result = lightmigrate("rewrite", "--check", "m.py", cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    assert result.stdout.strip() == "1 file scanned, 0 would change, 0 failed, 0 markers left"
    result = lightmigrate("rewrite", "m.py", cwd=tmp_path)
    assert result.returncode == 0 and (tmp_path / "m.py").read_text() == text


INHERIT = '''import pytorch_lightning as pl


class Base(pl.LightningModule):
    def validation_step(self, batch, batch_idx):
        return {"x": 1}

    def validation_epoch_end(self, outputs):
        print(outputs)


class Child(Base):
    def validation_epoch_end(self, outputs):  # lightmigrate: ignore[LM001]
        super().validation_epoch_end(outputs)
        print("child")


class Unrelated(pl.LightningModule):
    def validation_step(self, batch, batch_idx):
        return {"x": 1}

    def validation_epoch_end(self, outputs):
        print(outputs)
'''


def test_suppressing_a_subclass_keeps_its_base_in_the_same_file_as_well():
    # Unsuppressed, LM001 rewrites Base and Child together (Child's hook becomes a helper Base's
    # new hook calls). Rewriting Base alone would leave Child's hook uncalled, so both stay.
    out = migrate(INHERIT)
    head, unrelated = out.text.split("class Unrelated")
    assert "def on_validation_epoch_end" not in head
    assert head.count("TODO(lightmigrate): LM002") == 2  # both marked as dead on 2.x: not silent
    assert "def on_validation_epoch_end(self):" in unrelated
    unsuppressed = migrate(INHERIT.replace("  # lightmigrate: ignore[LM001]", ""))
    assert "def _validation_epoch_end(self, outputs):" in unsuppressed.text.split("class Unrelated")[0]


TWO_HOOKS = '''import pytorch_lightning as pl


class Model(pl.LightningModule):
    def on_epoch_start(self):  # lightmigrate: ignore[LM002]
        print("start")

    def on_epoch_end(self):
        print("end")
'''


def test_suppressing_one_methods_marker_keeps_the_other_methods_marker():
    # LM002 marks each dead hook on its own: silencing it on `on_epoch_start` must not silence
    # `on_epoch_end` (a marker is a comment, not half of a class rewrite)
    out = migrate(TWO_HOOKS)
    start, end = out.text.split("    def on_epoch_end")
    assert start.count("TODO(lightmigrate)") == 1
    assert start.endswith("# TODO(lightmigrate): LM002 `on_epoch_end` is never called by Lightning 2.x, so this "
                          "code silently stops running; instead: on_train_epoch_end / on_validation_epoch_end / "
                          "on_test_epoch_end\n")
    assert [(f.code, f.kind, f.line) for f in out.findings] == [("LM002", Kind.MARKER, 8)]  # the marker line
    # the same with the comment alone on the line above, and with no blank line between the hooks
    above = TWO_HOOKS.replace("    def on_epoch_start(self):  # lightmigrate: ignore[LM002]\n",
                              "    # lightmigrate: ignore[LM002]\n    def on_epoch_start(self):\n")
    above = above.replace('print("start")\n\n', 'print("start")\n')
    out = migrate(above)
    assert out.text.count("TODO(lightmigrate): LM002") == 1
    assert out.text.split("TODO(lightmigrate): LM002")[1].split("\n")[1] == "    def on_epoch_end(self):"


def test_noqa_with_our_codes_is_an_ignore_on_that_line():
    smap = SuppressionMap(
        "a = 1  # noqa: LM001\n"
        "b = 2  # noqa:LM001,LM002\n"
        "c = 3  # NOQA: E501 lm003\n"
        "d = 4  # noqa\n"
        "e = 5  # noqa: F401\n"
        "# noqa: LM001\n"
        "f = 6\n"
        "g = 7  # type: ignore  # noqa: E501, LM004\n"
    )
    assert smap.suppressed(1, "LM001") and not smap.suppressed(1, "LM002")
    assert smap.suppressed(2, "LM001") and smap.suppressed(2, "LM002")
    assert smap.suppressed(3, "LM003") and not smap.suppressed(3, "LM001")
    assert not any(smap.suppressed(n, "LM001") for n in (4, 5, 6, 7))  # bare, others', own line
    assert smap.suppressed(8, "LM004")
    assert not SuppressionMap("x = 1  # noqa\ny = 2  # noqa: E501\n")


def test_noqa_on_a_def_line_works_as_the_ignore_comment_does():
    ignored = migrate(EPOCH_END.replace("def validation_epoch_end(self, outputs):",
                                        "def validation_epoch_end(self, outputs):  # lightmigrate: ignore[LM001]"))
    noqa = migrate(EPOCH_END.replace("def validation_epoch_end(self, outputs):",
                                     "def validation_epoch_end(self, outputs):  # noqa: LM001"))
    assert noqa.text == ignored.text.replace("# lightmigrate: ignore[LM001]", "# noqa: LM001")
    assert "on_validation_epoch_end(self)" not in noqa.text
    assert [f.code for f in noqa.findings] == ["LM002"]
    both = EPOCH_END.replace("def validation_epoch_end(self, outputs):",
                             "def validation_epoch_end(self, outputs):  # noqa: LM001, LM002")
    out = migrate(both)
    assert out.text == both and out.findings == []
    for bare in ("# noqa", "# noqa: E501", "# NOQA"):  # meant for the linters: every rule still runs
        text = EPOCH_END.replace("def validation_epoch_end(self, outputs):",
                                 f"def validation_epoch_end(self, outputs):  {bare}")
        assert "def on_validation_epoch_end(self):" in migrate(text).text


def test_noqa_through_the_command(tmp_path):
    text = EPOCH_END.replace("def validation_epoch_end(self, outputs):",
                             "def validation_epoch_end(self, outputs):  # noqa: LM001,LM002")
    write(tmp_path, {"m.py": text})
    result = lightmigrate("rewrite", "--check", "m.py", cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    assert result.stdout.strip() == "1 file scanned, 0 would change, 0 failed, 0 markers left"


def test_bare_noqa_switches_every_rule_off_only_when_asked():
    text = "d = 4  # noqa\ne = 5  # noqa: E501\nf = 6  # NOQA\n"
    assert not SuppressionMap(text)  # default: meant for the linters
    smap = SuppressionMap(text, bare=True)
    assert smap.suppressed(1, "LM001") and smap.suppressed(3, "LM201")
    assert not smap.suppressed(2, "LM001")  # it names other tools' codes only
    assert smap.bare_lines == {1, 3}


IMPORTS = ("from pytorch_lightning.profiler import SimpleProfiler  # noqa\n"
           "from pytorch_lightning.profiler import PassThroughProfiler\n")


def test_bare_noqa_through_the_command_holds_its_line_back_and_says_so(tmp_path):
    write(tmp_path, {"m.py": IMPORTS})
    default = lightmigrate("rewrite", "--diff", "m.py", cwd=tmp_path)
    assert "+from pytorch_lightning.profilers import SimpleProfiler  # noqa" in default.stdout
    asked = lightmigrate("rewrite", "--diff", "--bare-noqa", "m.py", cwd=tmp_path)
    # the line under the bare noqa stays; the next statement (its own change) is still migrated
    assert " from pytorch_lightning.profiler import SimpleProfiler  # noqa\n" in asked.stdout
    assert "+from pytorch_lightning.profilers import PassThroughProfiler" in asked.stdout
    assert "m.py:1:1: LM201 [note] not applied on this line: a bare `# noqa`" in asked.stderr  # (--diff)
    # the same from the configuration
    (tmp_path / "pyproject.toml").write_text("[tool.lightmigrate]\nbare-noqa = true\n")
    configured = lightmigrate("rewrite", "--diff", "m.py", cwd=tmp_path)
    assert (configured.stdout, configured.stderr) == (asked.stdout, asked.stderr)
    overridden = lightmigrate("rewrite", "--diff", "--no-bare-noqa", "m.py", cwd=tmp_path)
    assert overridden.stdout == default.stdout


def test_noqa_with_a_code_holds_back_only_its_own_line():
    """Two rewritten imports in a row are two statements: a ``# noqa: LM201`` on the first
    leaves the second migrated (LM090 marks the first: never silent)."""
    out = migrate(IMPORTS.replace("# noqa\n", "# noqa: LM201\n"))
    assert "from pytorch_lightning.profiler import SimpleProfiler  # noqa: LM201\n" in out.text
    assert "from pytorch_lightning.profilers import PassThroughProfiler\n" in out.text
    assert "TODO(lightmigrate): LM090" in out.text
