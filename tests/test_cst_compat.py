"""The fast paths over libcst's internals are checked against its public API, and step aside
when they disagree (``lightmigrate/cst/compat.py``). Breakages are simulated in a separate
interpreter, so this process keeps its fast paths and caches."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import libcst as cst
import pytest

from lightmigrate.cst import compat
from lightmigrate.engine.transform import transform_text
from lightmigrate.rules import ALL_RULES

ROOT = Path(__file__).resolve().parent.parent
CASES = sorted((ROOT / "corpus").glob("*.py"))[:12]

BREAK = {
    "none": "",
    "codegen": "codegen.fast_code_for = lambda node, module=None: ''",
    "children": "real = walk.children\nwalk.children = lambda node: real(node)[::-1]",
    "positions": "codegen.fast_node_starts = lambda module: {}",
    "moved": "compat.CodegenState = None",
}

SCRIPT = """
import json, sys
from lightmigrate.cst import codegen, compat, walk
{breakage}
ok = compat.fast_paths_ok()
{restore}
from lightmigrate.engine.transform import transform_text
from lightmigrate.rules import ALL_RULES
texts = {{p: transform_text(open(p, encoding="utf-8").read(), ALL_RULES, p).text for p in sys.argv[1:]}}
print(json.dumps({{"ok": ok, "fast": walk._FAST, "texts": texts}}))
"""


def _run(breakage: str) -> dict:
    # The broken piece is put back after the check, so the run shows what the public paths give.
    restore = "from importlib import reload; reload(codegen)" if breakage == "codegen" else ""
    if breakage == "children":
        restore = "walk.children = real"
    if breakage == "positions":
        restore = "reload_ = __import__('importlib').reload; reload_(codegen)"
    code = SCRIPT.format(breakage=BREAK[breakage], restore=restore)
    out = subprocess.run([sys.executable, "-c", code, *map(str, CASES)], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    return json.loads(out.stdout)


def test_the_fast_paths_agree_with_the_installed_libcst():
    assert compat.fast_paths_ok()


def test_the_sample_has_the_positions_it_claims():
    """The expected starts are what libcst's own PositionProvider says."""
    from libcst.metadata import MetadataWrapper, PositionProvider

    module = cst.parse_module(compat.SAMPLE)
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    seen: dict = {}
    found = {}
    for node in compat._preorder_checked(module):
        name = type(node).__name__
        k = seen.get(name, 0)
        seen[name] = k + 1
        if (name, k) in compat.EXPECTED_STARTS:
            found[(name, k)] = (positions[node].start.line, positions[node].start.column)
    assert found == compat.EXPECTED_STARTS


@pytest.mark.parametrize("breakage", ["codegen", "children", "positions", "moved"])
def test_a_disagreeing_fast_path_steps_aside_and_the_output_stays_the_same(breakage):
    fast = {str(p): transform_text(p.read_text(encoding="utf-8"), ALL_RULES, str(p)).text for p in CASES}
    assert any(fast[str(p)] != p.read_text(encoding="utf-8") for p in CASES)  # the cases do change
    result = _run(breakage)
    assert result["ok"] is False and result["fast"] is False
    assert result["texts"] == fast


def test_an_intact_libcst_keeps_the_fast_paths_in_a_fresh_process():
    result = _run("none")
    assert result["ok"] is True and result["fast"] is True
