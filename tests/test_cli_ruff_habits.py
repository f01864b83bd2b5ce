"""The command line's ruff habits (issue 23): a readable `rules` table at any usual width,
`-` for stdin, `--stdin-filename`, `--exit-zero`, `--quiet`, `--statistics`."""

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner
from lm_cli import CLEAN, EPOCH_END, MISSPELT, lightmigrate, snapshot, write
from rich.console import Console

import lightmigrate.cli as cli
from lightmigrate.output.console import print_rules_table
from lightmigrate.rules import ALL_RULES, OPT_IN_RULES

SCRIPT = Path(sys.executable).with_name("lightmigrate")
ROOT = Path(__file__).resolve().parent.parent
EVERY_RULE = [*ALL_RULES, *OPT_IN_RULES]
CODES = sorted(r.code for r in EVERY_RULE)


def invoke(*args, input=None, env=None):
    return CliRunner().invoke(cli.main, [str(a) for a in args], input=input, env=env)


def render_rules(width: int) -> str:
    console = Console(width=width, highlight=False, force_terminal=False, record=True, file=open(os.devnull, "w"))
    print_rules_table(EVERY_RULE, console)
    return console.export_text()


def codes_in_order(text: str):
    return re.findall(r"^(LM\d{3})\b", text, re.MULTILINE)


def test_rules_table_lists_every_code_in_order_at_80_100_and_160_columns():
    for width in (80, 100, 160):
        text = render_rules(width)
        assert codes_in_order(text) == CODES, width  # every code, at the start of its row, sorted
        lines = text.splitlines()
        assert all(len(line) <= width and line == line.rstrip() for line in lines), width
        assert len(lines) <= 4 * len(CODES), (width, len(lines))  # no 300-line table
        for rule in EVERY_RULE:
            assert rule.name in text, (width, rule.name)
        words = " ".join(text.split())  # summaries are wrapped, never cut
        assert all(" ".join(r.summary.split()) in words for r in EVERY_RULE if width >= 120), width
    wide = render_rules(160)
    assert re.search(r"^LM001 +epoch-end-outputs +preserving +`\*_epoch_end", wide, re.MULTILINE)
    narrow = render_rules(80)
    assert re.search(r"^LM002 +needs review +dead-hooks: Marks methods", narrow, re.MULTILINE)


def test_rules_command_honours_columns():
    result = invoke("rules", env={"COLUMNS": "80"})
    assert result.exit_code == 0
    assert codes_in_order(result.stdout) == CODES
    assert max(len(line) for line in result.stdout.splitlines()) <= 80


def test_real_rules_command_in_an_80_column_terminal():
    primary, secondary = pty.openpty()
    env = dict(os.environ, COLUMNS="80", TERM="xterm")
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen([str(SCRIPT), "rules"], stdout=secondary, stderr=secondary, env=env)
    os.close(secondary)
    chunks = []
    while True:
        try:
            data = os.read(primary, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(primary)
    assert proc.wait() == 0
    text = re.sub(r"\x1b\[[0-9;]*m", "", b"".join(chunks).decode()).replace("\r\n", "\n")
    assert codes_in_order(text) == CODES


# --- `-`: standard input ------------------------------------------------------------------


def migrated(text: str, path: str = "m.py") -> str:
    from lightmigrate.engine import transform_text

    return transform_text(text, ALL_RULES, path).text


def test_stdin_diff_prints_the_patch_named_by_stdin_filename(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = invoke("rewrite", "--diff", "-", input=EPOCH_END)
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith("--- a/-\n+++ b/-\n@@ ")
    assert "+    def on_validation_epoch_end(self):\n" in result.stdout
    assert result.stderr.strip() == "1 file scanned, 1 would change, 0 failed, 0 markers left"
    named = invoke("rewrite", "--diff", "--stdin-filename", "src/model.py", "-", input=EPOCH_END)
    assert named.exit_code == 1 and named.stdout.startswith("--- a/src/model.py\n+++ b/src/model.py\n")
    assert invoke("rewrite", "--diff", "-", input=CLEAN).exit_code == 0  # nothing to change
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_stdin_rewrite_writes_the_code_to_stdout_and_the_rest_to_stderr(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = invoke("rewrite", "--stdin-filename", "m.py", "-", input=EPOCH_END + MISSPELT.split("\n", 2)[2])
    assert result.exit_code == 0, result.output
    assert result.stdout == migrated(EPOCH_END + MISSPELT.split("\n", 2)[2])
    assert "def on_validation_epoch_end(self):" in result.stdout
    assert "m.py:" in result.stderr and "LM002" in result.stderr  # the marker, as for a file
    assert result.stderr.splitlines()[-1] == "1 file scanned, 1 changed, 0 failed, 1 marker left"
    unchanged = invoke("rewrite", "-", input=CLEAN)  # nothing to change: the code as it came
    assert unchanged.exit_code == 0 and unchanged.stdout == CLEAN
    assert list(tmp_path.iterdir()) == []


def test_stdin_check_and_errors(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    check = invoke("rewrite", "--check", "--stdin-filename", "pkg/m.py", "-", input=EPOCH_END)
    assert check.exit_code == 1 and check.stdout.splitlines() == [
        "would rewrite pkg/m.py", "1 file scanned, 1 would change, 0 failed, 0 markers left"]
    broken = EPOCH_END + "def f(:\n"
    failed = invoke("rewrite", "--stdin-filename", "m.py", "-", input=broken)
    assert failed.exit_code == 2
    assert failed.stdout == broken  # an editor piping through it keeps the code
    assert failed.stderr.startswith("m.py:") and "failed" in failed.stderr
    assert invoke("rewrite", "--diff", "-", input=broken).exit_code == 2
    assert invoke("rewrite", "--diff", "-", input=b"\xff\xfe\x00x").exit_code == 2
    mixed = invoke("rewrite", "-", "src/")
    assert mixed.exit_code == 2 and "must be the only PATH" in mixed.stderr
    assert invoke("rewrite").exit_code == 2  # no PATHS, no --stdin-filename
    json_out = invoke("rewrite", "--output-format", "json", "-", input=EPOCH_END)
    assert json_out.exit_code == 2 and "needs --diff or --check" in json_out.stderr
    as_json = invoke("rewrite", "--check", "--output-format", "json", "-", input=EPOCH_END)
    assert as_json.exit_code == 1 and '"code": "LM001"' in as_json.stdout


def test_stdin_filename_picks_the_configuration_and_the_file_kind(tmp_path, monkeypatch):
    write(tmp_path, {"pyproject.toml": '[tool.lightmigrate]\nexclude = ["legacy/"]\n'
                                       '[tool.lightmigrate.per-file-ignores]\n"tests/*" = ["LM001"]\n'})
    monkeypatch.chdir(tmp_path)
    assert invoke("rewrite", "--stdin-filename", "src/m.py", "-", input=EPOCH_END).stdout == migrated(EPOCH_END)
    excluded = invoke("rewrite", "--stdin-filename", "legacy/m.py", "-", input=EPOCH_END)
    assert excluded.exit_code == 0 and excluded.stdout == EPOCH_END
    ignored = invoke("rewrite", "--stdin-filename", "tests/m.py", "-", input=EPOCH_END)
    assert ignored.exit_code == 0 and "def on_validation_epoch_end" not in ignored.stdout
    assert "LM002" in ignored.stdout  # LM001 is off there; LM002 marks the dead hook
    yaml_in = "trainer:\n  gpus: 2\n"
    yaml_out = invoke("rewrite", "--stdin-filename", "config.yaml", "-", input=yaml_in)
    assert yaml_out.exit_code == 0 and "gpus" not in yaml_out.stdout and "devices: 2" in yaml_out.stdout


def test_real_command_reads_stdin(tmp_path):
    proc = subprocess.run([str(SCRIPT), "rewrite", "--diff", "-"], input=EPOCH_END, capture_output=True, text=True,
                          cwd=tmp_path)
    assert proc.returncode == 1 and proc.stdout.startswith("--- a/-\n+++ b/-\n")
    proc = subprocess.run([str(SCRIPT), "rewrite", "-"], input=EPOCH_END, capture_output=True, text=True,
                          cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == migrated(EPOCH_END)


# --- --exit-zero, --quiet, --statistics ---------------------------------------------------


def test_exit_zero(tmp_path):
    write(tmp_path, {"m.py": EPOCH_END})
    for flag in ("--check", "--diff"):
        assert lightmigrate("rewrite", flag, "m.py", cwd=tmp_path).returncode == 1
        result = lightmigrate("rewrite", flag, "--exit-zero", "m.py", cwd=tmp_path)
        assert result.returncode == 0 and "1 would change" in result.stdout + result.stderr
    write(tmp_path, {"bad.py": EPOCH_END + "def f(:\n"})
    assert lightmigrate("rewrite", "--check", "--exit-zero", ".", cwd=tmp_path).returncode == 2  # errors win


def test_quiet_drops_the_summary_only(tmp_path):
    write(tmp_path, {"m.py": EPOCH_END, "o.py": MISSPELT, "c.py": CLEAN})
    before = snapshot(tmp_path)
    diff = lightmigrate("rewrite", "--diff", "--quiet", ".", cwd=tmp_path)
    assert diff.returncode == 1 and diff.stdout.startswith("--- a/m.py\n")
    assert "scanned" not in diff.stdout + diff.stderr and "LM002" not in diff.stderr  # the diff only
    assert "LM002" in lightmigrate("rewrite", "--diff", ".", cwd=tmp_path).stderr
    check = lightmigrate("rewrite", "--check", "-q", ".", cwd=tmp_path)
    assert check.returncode == 1
    assert check.stdout.splitlines()[0] == "would rewrite m.py"
    assert "o.py:5:7: LM002" in check.stdout  # findings stay, as with ruff --quiet
    assert "scanned" not in check.stdout + check.stderr
    assert snapshot(tmp_path) == before
    clean = lightmigrate("rewrite", "--check", "-q", "c.py", cwd=tmp_path)
    assert clean.returncode == 0 and clean.stdout == clean.stderr == ""


def test_statistics_counts_per_code(tmp_path):
    write(tmp_path, {"m.py": EPOCH_END, "o.py": MISSPELT})
    result = lightmigrate("rewrite", "--check", "--statistics", ".", cwd=tmp_path)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    table = lines[lines.index(next(line for line in lines if line.startswith("code "))):]
    assert table[0].split() == ["code", "changes", "markers", "notes", "rule"]
    rows = {line.split()[0]: line.split()[1:] for line in table[1:-1]}
    assert rows["LM002"] == ["0", "1", "0", "dead-hooks"]
    assert rows["LM001"][0] != "0" and rows["LM001"][1:] == ["0", "0", "epoch-end-outputs"]
    assert list(rows) == sorted(rows)
    assert "o.py:5:7: LM002" not in result.stdout  # counted, not listed
    assert table[-1] == "2 files scanned, 2 would change, 0 failed, 1 marker left"
    quiet = lightmigrate("rewrite", "--diff", "--statistics", "-q", ".", cwd=tmp_path)
    assert quiet.stdout.startswith("--- a/")
    assert quiet.stderr.splitlines()[0].split()[:2] == ["code", "changes"] and "scanned" not in quiet.stderr


# --- the README's first command -----------------------------------------------------------


def readme_commands():
    text = (ROOT / "README.md").read_text()
    return re.findall(r"```bash\n(.*?)\n```", text, re.DOTALL)


def test_readme_starts_with_two_commands_and_the_first_exits_0():
    first, second = readme_commands()[:2]
    head = (ROOT / "README.md").read_text().split("```bash", 3)
    assert head[0].strip() == "# lightmigrate" and "\n" not in first and "\n" not in second
    assert "|| [" not in first and "--exit-zero" in first
    assert second in (ROOT / ".ci" / "run").read_text()  # CI runs the README's test command
    command = first.split(" && ")[-1]
    assert command.startswith(".venv/bin/lightmigrate rewrite --diff")
    args = command.split()[1:]
    proc = subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("--- a/corpus/") and " 0 failed," in proc.stderr


def test_run_bytes_keeps_encoding_and_line_endings():
    from lightmigrate.engine import Mode, run_bytes

    data = b"\xef\xbb\xbf" + EPOCH_END.replace("\n", "\r\n").encode()
    report, out = run_bytes(data, "m.py", ALL_RULES, Mode.WRITE)
    assert report.changed == 1 and report.exit_code == 0
    assert out.startswith(b"\xef\xbb\xbf") and b"def on_validation_epoch_end(self):\r\n" in out
    assert b"\n" not in out.replace(b"\r\n", b"")
    report, same = run_bytes(data, "m.py", ALL_RULES, Mode.DIFF)
    assert same == data and report.exit_code == 1 and report.files[0].diff.startswith("--- a/m.py")
    cookie = b"# -*- coding: latin-1 -*-\n" + EPOCH_END.replace("print(outputs)", "print('\xe9', outputs)").encode("latin-1")
    report, out = run_bytes(cookie, "m.py", ALL_RULES, Mode.WRITE)
    assert report.exit_code == 0 and "print('\xe9', outputs)".encode("latin-1") in out
