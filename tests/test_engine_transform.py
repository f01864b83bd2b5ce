import pytest
from engine_toys import (
    ALL_TOYS,
    Crash,
    MarkValidationEnd,
    RenameEpochEnd,
    ReportsNote,
    Uncompilable,
    Unparsable,
)

from lightmigrate.engine import (
    InvalidOutput,
    RuleCrash,
    SourceSyntaxError,
    find_markers,
    needs_transform,
    transform_text,
)
from lightmigrate.engine.transform import _transform_once
from lightmigrate.output.findings import Kind
from lightmigrate.analysis.project import ProjectIndex
from engine_toys import WholeFileRule

SRC = "class M:\n    def training_epoch_end(self, outputs):\n        pass\n"


def test_rename_changes_text():
    out = transform_text(SRC, [RenameEpochEnd()])
    assert out.changed
    assert out.text == SRC.replace("training_epoch_end", "on_train_epoch_end")


@pytest.mark.parametrize(
    "text",
    [
        "x = 1\n",
        "x = 1",  # no final newline
        "x = 1\r\ny = 2\r\n",
        "if x:\n\tpass  # tab\n\n\n",
        "\ufeffx = 'é'\n",
        "def f(a,\n      b):  # odd spacing\n    return (a  +b)\n",
    ],
)
def test_unchanged_text_is_byte_identical(text):
    out = transform_text(text, ALL_TOYS[:2] + ALL_TOYS[5:])
    assert not out.changed
    assert out.text == text


def test_crlf_kept_and_added_lines_use_crlf():
    src = "class M:\r\n    def validation_epoch_end(self, outputs):\r\n        pass\r\n"
    out = transform_text(src, [MarkValidationEnd()])
    assert out.changed
    assert "\n" not in out.text.replace("\r\n", "")
    assert "    # TODO(lightmigrate): LM999 check the outputs\r\n" in out.text


def test_syntax_error_is_located_and_shows_the_line():
    with pytest.raises(SourceSyntaxError) as info:
        transform_text("training_epoch_end = 1\ndef f(:\n    pass\n", [RenameEpochEnd()], path="m.py")
    err = info.value
    assert (err.line, err.col) == (2, 7)
    text = err.problem("m.py").format()
    assert text.startswith("m.py:2:7: syntax error: ")
    assert "def f(:" in text and text.rstrip().endswith("^")


def test_syntax_error_for_libcst_only_failure_still_has_a_position():
    with pytest.raises(SourceSyntaxError) as info:
        transform_text("training_epoch_end = (1,\n", [RenameEpochEnd()])
    assert info.value.line >= 1 and info.value.col >= 1


def test_a_file_no_rule_reads_is_not_parsed_so_its_syntax_is_not_checked():
    out = transform_text("x = 1\ndef f(:\n", [RenameEpochEnd()])  # the trigger is absent
    assert not out.changed and out.problems == [] and out.findings == []


def test_rule_crash_names_the_rule_and_keeps_the_other_rules_changes():
    src = "boom = 1\ndef training_epoch_end():\n    pass\n"
    out = transform_text(src, [Crash(), RenameEpochEnd()])
    assert out.problems == ["LM990 could not migrate this file (internal error: RuntimeError: kaboom); its changes "
                            "were left out, the other rules' changes were kept"]
    assert out.changed and "def on_train_epoch_end():" in out.text
    with pytest.raises(RuleCrash) as info:  # the single pass still raises, with the cause chained
        _transform_once("boom = 1\n", [RenameEpochEnd(), Crash()], "m.py", None, None)
    assert info.value.code == "LM990" and isinstance(info.value.__cause__, RuntimeError)


def test_rule_returning_a_non_module_is_a_crash():
    class Bad(WholeFileRule):
        code = "LM995"
        triggers = ("x",)

        def apply(self, module, ctx):
            return None

    out = transform_text("x = 1\n", [Bad()])
    assert not out.changed and out.problems[0].startswith("LM995 could not migrate this file (internal error: fix()")


def test_unparsable_output_is_rejected_and_blames_the_rule():
    src = "def breakme():\n    pass\ndef training_epoch_end():\n    pass\n"
    out = transform_text(src, [RenameEpochEnd(), Unparsable()])
    [problem] = out.problems
    assert problem.startswith("LM991 could not migrate this file (it produced invalid code: ")
    assert out.text == src.replace("def training_epoch_end", "def on_train_epoch_end")  # LM991's change is out
    with pytest.raises(InvalidOutput) as info:
        _transform_once(src, [RenameEpochEnd(), Unparsable()], "m.py", None, None)
    assert info.value.code == "LM991"


def test_uncompilable_output_is_rejected():
    out = transform_text("returnme = 1\n", [Uncompilable()])
    assert not out.changed and out.problems[0].startswith("LM992 could not migrate this file")


def test_compile_check_does_not_blame_rules_for_input_that_never_compiled():
    # `return` outside a function parses (libcst) but never compiled; the rename is fine.
    src = "return 1\ndef training_epoch_end():\n    pass\n"
    out = transform_text(src, [RenameEpochEnd()])
    assert out.changed and "on_train_epoch_end" in out.text


def test_markers_become_findings_with_positions():
    src = "x = 1  # TODO(lightmigrate): LM123 fix the thing\n'# TODO(lightmigrate): LM124 in a string'\n"
    out = transform_text(src, [])
    assert out.markers == 1
    [f] = out.findings
    assert (f.code, f.kind, f.line, f.col, f.message) == ("LM123", Kind.MARKER, 1, 10, "fix the thing")


def test_marker_added_by_rule_counted_and_not_duplicated():
    class Reporting(MarkValidationEnd):
        def apply(self, module, ctx):
            module = super().apply(module, ctx)
            ctx.report(self.code, "rule's own words", Kind.MARKER, 2, 5)
            return module

    src = "class M:\n    def validation_epoch_end(self, o):\n        pass\n"
    out = transform_text(src, [Reporting()], path="p.py")
    assert out.markers == 1
    assert [(f.code, f.line, f.message) for f in out.findings] == [("LM999", 2, "rule's own words")]
    # Without the rule's report, the engine makes one from the comment.
    out = transform_text(src, [MarkValidationEnd()], path="p.py")
    assert [(f.code, f.line, f.col, f.path) for f in out.findings] == [("LM999", 2, 7, "p.py")]


def test_rule_findings_and_project_are_passed_through():
    project = ProjectIndex()
    seen = []

    class Peek(WholeFileRule):
        code = "LM996"
        triggers = ("",)

        def apply(self, module, ctx):
            seen.append((ctx.path, ctx.project))
            return module

    out = transform_text("class A:\n    pass\n", [ReportsNote(), Peek()], path="q.py", project=project)
    assert seen == [("q.py", project)]
    assert [(f.code, f.kind, f.line, f.col, f.path) for f in out.findings] == [
        ("LM993", Kind.NOTE, 1, 1, "q.py")
    ]


def test_prefilter():
    assert not needs_transform("x = 1\n", [RenameEpochEnd()])
    assert needs_transform("def training_epoch_end(): pass\n", [RenameEpochEnd()])
    assert needs_transform("# TODO(lightmigrate): LM001 old marker\n", [RenameEpochEnd()])


def test_find_markers_in_untokenizable_text_falls_back():
    [m] = find_markers('x = """\n# TODO(lightmigrate): LM007 hmm\n')
    assert (m.code, m.line, m.message) == ("LM007", 2, "hmm")


def test_each_rule_is_gated_on_the_text_the_previous_rules_left():
    ran = []

    class After(WholeFileRule):
        code = "LM998"
        triggers = ("on_train_epoch_end",)

        def apply(self, module, ctx):
            ran.append(self.code)
            return module

    transform_text("def training_epoch_end(): pass\n", [After()])
    assert ran == []  # trigger absent: not run
    transform_text("def training_epoch_end(): pass\n", [RenameEpochEnd(), After()])
    assert ran == ["LM998"]  # trigger introduced by the rename
    # A crashing rule whose trigger is absent never runs.
    assert transform_text(SRC, [RenameEpochEnd(), Crash()]).changed


def test_markers_are_found_in_comments_only_as_the_tokenizer_finds_comments():
    import io
    import tokenize

    from lightmigrate.engine.markers import _comments

    marker = "# TODO(lightmigrate): LM007 real"
    src = (
        f'a = "# TODO(lightmigrate): LM001 in a string"  {marker}\r\n'
        f"b = r'\\' # TODO(lightmigrate): LM002 raw string' {marker}\n"
        f'c = """x "quoted" \\""" # TODO(lightmigrate): LM003\n'
        f'still in the string """  {marker}\n'
        f"d = f'{{x[\"#\"]}}'  {marker}\n"
        f"e = '''it''s\n# TODO(lightmigrate): LM004 in a string\n'''\n"
        f"f = 'a\\\n# TODO(lightmigrate): LM005 continued string'\n"
        f"{marker}\n"
    )
    tokens = [(t.start[0], t.start[1], t.string) for t in tokenize.generate_tokens(io.StringIO(src).readline)
              if t.type == tokenize.COMMENT]
    assert list(_comments(src)) == tokens
    assert [m.code for m in find_markers(src)] == ["LM007"] * 5
