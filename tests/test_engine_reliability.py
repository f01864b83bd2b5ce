"""Bad input, one file at a time: a clear ``path[:line:col]: message`` and exit 2 for that
file, while the rest of the run goes on. Uses the real rules, so every file passes the
prefilter (a file no rule could want is never parsed, see test_prefilter_*)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lightmigrate.engine import Mode, run
from lightmigrate.engine.transform import MAX_BRACKET_DEPTH, bracket_depth
from lightmigrate.rules import ALL_RULES

SCRIPT = Path(sys.executable).with_name("lightmigrate")
HEADER = "import pytorch_lightning as pl\n\n\nclass M(pl.LightningModule):\n"
HOOK = HEADER + "    def training_epoch_end(self, outputs):\n        pass\n"
MIGRATED = HEADER + "    def on_train_epoch_end(self):\n        pass\n"
HOOK_BODY = "    def training_epoch_end(self, outputs):\n"


def problem_of(report, name):
    """The file's first problem: it could not be processed, or some rule could not handle it."""
    [result] = [f for f in report.files if os.path.basename(f.path) == name]
    return (result.all_problems or [None])[0]


def run_one(tmp_path, name, data, mode=Mode.WRITE):
    """Run over a folder holding ``name`` (bytes ``data``) and a good file; the good file
    must be migrated whatever happens to ``name``."""
    (tmp_path / "good.py").write_text(HOOK)
    if data is not None:
        (tmp_path / name).write_bytes(data)
    report = run([str(tmp_path)], ALL_RULES, mode)
    assert (tmp_path / "good.py").read_text() == MIGRATED
    return report


# name, file bytes, expected message, expected (line, col) or None for "no position"
BAD_FILES = [
    ("syntax.py", (HOOK + "    def f(:\n        pass\n").encode(), "syntax error: invalid syntax", (7, 11)),
    ("python2.py", (HOOK + 'print "hello"\n').encode(),
     "syntax error: Missing parentheses in call to 'print'", (7, 1)),
    ("python2_except.py", (HOOK + "try:\n    pass\nexcept Exception, e:\n    pass\n").encode(),
     "syntax error: multiple exception types must be parenthesized", (9, 8)),
    ("latin1_no_cookie.py", (HOOK + 'name = "caf\xe9"\n').encode("latin-1"),
     "cannot decode as utf-8 (no coding cookie names another encoding): invalid byte(s) e9", (7, 12)),
    ("wrong_cookie.py", ("# -*- coding: utf-8 -*-\n" + HOOK + 'name = "caf\xe9"\n').encode("latin-1"),
     "cannot decode as utf-8: invalid byte(s) e9", (8, 12)),
    ("unknown_cookie.py", ("# coding: klingon\n" + HOOK).encode(), "cannot detect encoding: unknown encoding", None),
    ("binary.py", b"\x7fELF\x02\x01\x01\x00\x00\x00" + HOOK.encode(), "binary file", None),
    ("deep_brackets.py", (HOOK + "x = " + "(" * 5000 + "1" + ")" * 5000 + "\n").encode(),
     "syntax error: too many nested parentheses", (7, 4 + MAX_BRACKET_DEPTH + 1)),
    ("deep_blocks.py", (HOOK + "".join("    " * i + "if x:\n" for i in range(120)) + "    " * 120 + "pass\n").encode(),
     "syntax error: too many levels of indentation", (107, 1)),
]


@pytest.mark.parametrize("name,data,message,position", BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_bad_file_is_a_located_per_file_error(tmp_path, name, data, message, position):
    report = run_one(tmp_path, name, data)
    problem = problem_of(report, name)
    assert problem is not None and problem.message.startswith(message), problem
    if position is not None:
        assert (problem.line, problem.col) == position
        assert problem.format().startswith(f"{tmp_path / name}:{position[0]}:{position[1]}: {message}")
    assert (tmp_path / name).read_bytes() == data  # never touched
    assert report.exit_code == 2 and report.failed == 1 and report.changed == 1


def test_deeply_nested_expression_fails_its_file_without_crashing(tmp_path):
    # Python parses this; libcst's recursive code generation cannot, when the rule changed the
    # statement holding it (the hook's class): a per-file error, not a crash.
    data = (HOOK + "        x = " + "+".join(["1"] * 1200) + "\n").encode()
    report = run_one(tmp_path, "chain.py", data)
    problem = problem_of(report, "chain.py")
    assert problem is not None and "too deeply nested" in problem.message
    assert (tmp_path / "chain.py").read_bytes() == data


def test_deeply_nested_statement_a_rule_keeps_is_copied(tmp_path):
    # A statement no rule changed (at the top level, or in the body of a class the rule
    # changed) is copied from the text, not generated again: the file migrates whatever its
    # depth.
    deep = "x = " + "+".join(["1"] * 1200) + "\n"
    report = run_one(tmp_path, "chain.py", (HOOK + deep).encode())
    assert problem_of(report, "chain.py") is None
    assert (tmp_path / "chain.py").read_text() == MIGRATED + deep
    # also inside the class the rule changed, beside the method it changed
    deep = "    y = " + "+".join(["1"] * 1200) + "\n"
    report = run_one(tmp_path, "chain.py", (HOOK + deep).encode())
    assert problem_of(report, "chain.py") is None
    assert (tmp_path / "chain.py").read_text() == MIGRATED + deep


def test_bracket_depth_is_an_upper_bound_and_strings_do_not_cause_false_errors(tmp_path):
    assert bracket_depth("f(a[1], {2: (3,)})") <= 18
    assert bracket_depth("(" * 300 + ")" * 300) == 300
    # 300 brackets in a string: over the bound, but Python accepts it, so it is migrated.
    text = HOOK + 's = "' + "(" * 300 + '"\n'
    (tmp_path / "in_string.py").write_text(text)
    report = run([str(tmp_path)], ALL_RULES)
    assert report.failed == 0
    assert (tmp_path / "in_string.py").read_text() == MIGRATED + 's = "' + "(" * 300 + '"\n'


def test_fifo_named_py_does_not_hang(tmp_path):
    os.mkfifo(tmp_path / "pipe.py")
    report = run_one(tmp_path, "pipe.py", None)
    assert problem_of(report, "pipe.py").message == "cannot read file: not a regular file (a named pipe)"
    assert report.exit_code == 2


def test_directory_named_py_is_searched_not_read(tmp_path):
    (tmp_path / "pkg.py").mkdir()
    (tmp_path / "pkg.py" / "inner.py").write_text(HOOK)
    report = run_one(tmp_path, "unused", None)
    assert report.failed == 0
    assert (tmp_path / "pkg.py" / "inner.py").read_text() == MIGRATED


def test_broken_symlink_and_symlink_loop(tmp_path):
    os.symlink("missing.py", tmp_path / "broken.py")
    os.symlink("loop_b.py", tmp_path / "loop_a.py")
    os.symlink("loop_a.py", tmp_path / "loop_b.py")
    report = run_one(tmp_path, "unused", None)
    assert problem_of(report, "broken.py").message == "broken symbolic link"
    assert problem_of(report, "loop_a.py").message == "symbolic link loop"
    assert problem_of(report, "loop_b.py").message == "symbolic link loop"
    assert report.exit_code == 2 and report.failed == 3
    # Named on the command line, too.
    again = run([str(tmp_path / "loop_a.py")], ALL_RULES, Mode.CHECK)
    assert again.files[0].error.message == "symbolic link loop"


def test_empty_file(tmp_path):
    report = run_one(tmp_path, "empty.py", b"")
    assert problem_of(report, "empty.py") is None and report.exit_code == 0
    assert (tmp_path / "empty.py").read_bytes() == b""


def test_valid_latin1_with_cookie_is_migrated_and_stays_latin1(tmp_path):
    data = ("# -*- coding: latin-1 -*-\n" + HOOK + 'name = "caf\xe9"\n').encode("latin-1")
    run_one(tmp_path, "latin1.py", data)
    out = (tmp_path / "latin1.py").read_bytes()
    assert out == ("# -*- coding: latin-1 -*-\n" + MIGRATED + 'name = "caf\xe9"\n').encode("latin-1")


def test_bom_is_kept(tmp_path):
    run_one(tmp_path, "bom.py", b"\xef\xbb\xbf" + HOOK.encode())
    assert (tmp_path / "bom.py").read_bytes() == b"\xef\xbb\xbf" + MIGRATED.encode()


def test_mixed_line_endings_untouched_lines_keep_theirs(tmp_path):
    data = (
        b"import pytorch_lightning as pl\r\nimport os\n\r\n\r\nclass M(pl.LightningModule):\n"
        b"    def training_epoch_end(self, outputs):\r\n        pass\r\n\r\nX = 1\n"
    )
    run_one(tmp_path, "mixed.py", data)
    out = (tmp_path / "mixed.py").read_bytes()
    assert out.startswith(b"import pytorch_lightning as pl\r\nimport os\n\r\n\r\nclass M(pl.LightningModule):\n")
    assert b"def on_train_epoch_end(self):" in out and out.endswith(b"\r\nX = 1\n")
    assert run([str(tmp_path)], ALL_RULES).changed == 0  # idempotent


def test_tab_indented_module(tmp_path):
    data = HOOK.replace("    ", "\t").encode()
    run_one(tmp_path, "tabs.py", data)
    out = (tmp_path / "tabs.py").read_text()
    assert out == MIGRATED.replace("    ", "\t")
    compile(out, "tabs.py", "exec")
    assert run([str(tmp_path)], ALL_RULES).changed == 0


def test_very_large_file(tmp_path):
    # About 4 MB: a module with a big data table, as generated code often has.
    rows = "".join(f'    "{i:06d}{"x" * 1000}",\n' for i in range(4_000))
    data = (HOOK + "TABLE = [\n" + rows + "]\n").encode()
    assert len(data) > 4_000_000
    report = run_one(tmp_path, "large.py", data)
    assert problem_of(report, "large.py") is None
    assert (tmp_path / "large.py").read_bytes() == (MIGRATED + "TABLE = [\n" + rows + "]\n").encode()


def test_unreadable_file(tmp_path, monkeypatch):
    """A file the user may not read. The tests run as root, who can read anything, and the
    interpreter is not reachable for an unprivileged user, so the open fails the way it does
    for a mode-000 file: with EACCES."""
    import errno

    import lightmigrate.engine.source as source_module

    real_open = os.open

    def open_denied(path, *args, **kwargs):
        if os.path.basename(path) == "secret.py":
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(source_module.os, "open", open_denied)
    report = run_one(tmp_path, "secret.py", HOOK.encode())
    problem = problem_of(report, "secret.py")
    assert problem.format() == f"{tmp_path / 'secret.py'}: cannot read file: Permission denied"
    assert report.exit_code == 2 and (tmp_path / "secret.py").read_text() == HOOK


def test_everything_at_once_through_the_command(tmp_path):
    """All the odd files in one tree, through the real command: each gets its message on
    stderr, the good file is migrated, the exit status is 2."""
    for name, data, _, _ in BAD_FILES:
        (tmp_path / name).write_bytes(data)
    os.mkfifo(tmp_path / "pipe.py")
    os.symlink("missing.py", tmp_path / "broken.py")
    os.symlink("loop_b.py", tmp_path / "loop_a.py")
    os.symlink("loop_a.py", tmp_path / "loop_b.py")
    (tmp_path / "empty.py").write_bytes(b"")
    (tmp_path / "good.py").write_text(HOOK)
    result = subprocess.run(
        [str(SCRIPT), "rewrite", "--jobs", "2", "."], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 2
    errors = result.stderr.splitlines()
    for name, _, message, position in BAD_FILES:
        where = f"{name}:{position[0]}:{position[1]}: " if position else f"{name}: "
        assert any(line.startswith(where + message) for line in errors), (name, result.stderr)
    assert "pipe.py: cannot read file: not a regular file (a named pipe)" in errors
    assert "broken.py: broken symbolic link" in errors
    assert "loop_a.py: symbolic link loop" in errors
    assert (tmp_path / "good.py").read_text() == MIGRATED
    failed = len(BAD_FILES) + 4
    assert result.stdout.splitlines()[-1] == f"{failed + 2} files scanned, 1 changed, {failed} failed, 0 markers left"
