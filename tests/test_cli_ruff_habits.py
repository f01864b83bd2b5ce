"""The command line's ruff habits (issue 23): a readable `rules` table at any usual width,
`-` for stdin, `--stdin-filename`, `--exit-zero`, `--quiet`, `--statistics`."""

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner
from rich.console import Console

import lightmigrate.cli as cli
from lightmigrate.output.console import print_rules_table
from lightmigrate.rules import ALL_RULES, OPT_IN_RULES

SCRIPT = Path(sys.executable).with_name("lightmigrate")
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
        assert all(len(line) <= width for line in lines), width
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
