"""Jupyter notebooks: cell-by-cell migration, IPython lines kept, JSON layout byte-for-byte."""

import json

from lm_cli import lightmigrate, snapshot, write

from lightmigrate.engine.notebook import transform_notebook
from lightmigrate.rules import ALL_RULES

CELLS = [
    {"cell_type": "markdown", "metadata": {}, "source": ["# Training — naïve\n"]},
    {"cell_type": "code", "execution_count": 1, "metadata": {"tags": ["setup"]},
     "outputs": [{"name": "stdout", "output_type": "stream", "text": ["ok\n"]}],
     "source": ["%matplotlib inline\n", "!pip install -q something\n", "import pytorch_lightning as pl\n", "files = !ls"]},
    {"cell_type": "code", "execution_count": 2, "metadata": {}, "outputs": [],
     "source": ["class Base(pl.LightningModule):\n", "    def validation_step(self, batch, batch_idx):\n",
                "        return {\"x\": 1}\n", "\n", "    def validation_epoch_end(self, outputs):\n",
                "        %time print(outputs)\n", "        print(outputs)"]},
    {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": ["%%bash\n", "echo training_step_end"]},
    {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
     "source": ["class Child(Base):\n", "    def on_training_epoch_end(self):\n", "        pass\n", "Child?"]},
    {"cell_type": "code", "execution_count": 3, "metadata": {}, "outputs": [], "source": "x = 1\n"},
]


def notebook(indent=1, ensure_ascii=False, trailing_newline=True):
    data = {"cells": CELLS, "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
            "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(data, indent=indent, ensure_ascii=ensure_ascii) + ("\n" if trailing_newline else "")


def strip_sources(text):
    """The notebook JSON with every cell source blanked: what must not change at all."""
    data = json.loads(text)
    for cell in data["cells"]:
        cell["source"] = None
    return data


def check_round_trip(raw):
    out = transform_notebook(raw, ALL_RULES, "nb.ipynb")
    assert out.changed
    new = json.loads(out.text)
    old = json.loads(raw)
    assert strip_sources(out.text) == strip_sources(raw)  # outputs, metadata, other cells untouched
    code = "".join(new["cells"][2]["source"])
    assert "def on_validation_epoch_end(self):" in code
    assert "        %time print(outputs)\n" in code  # the magic line is back, where it was
    assert new["cells"][1] == old["cells"][1]  # magics-only cell untouched
    assert new["cells"][3] == old["cells"][3]  # %%bash cell untouched (even with a trigger word)
    assert "TODO(lightmigrate): LM002" in "".join(new["cells"][4]["source"])  # the misspelt hook of the subclass
    assert new["cells"][4]["source"][-1] == "Child?"  # help line kept, no trailing newline added
    # byte-for-byte: re-serialising with the file's own settings gives the output back
    again = transform_notebook(out.text, ALL_RULES, "nb.ipynb")
    assert not again.changed and again.text == out.text  # idempotent
    return out


def test_round_trip_keeps_layout_indent_1():
    raw = notebook()
    out = check_round_trip(raw)
    data = json.loads(out.text)
    assert out.text == json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def test_round_trip_keeps_layout_indent_2_ascii_no_trailing_newline():
    raw = notebook(indent=2, ensure_ascii=True, trailing_newline=False)
    out = check_round_trip(raw)
    data = json.loads(out.text)
    assert out.text == json.dumps(data, indent=2, ensure_ascii=True)
    assert "\\u00ef" in out.text  # still escaped as in the original


def test_findings_are_located_by_cell():
    out = transform_notebook(notebook(), ALL_RULES, "nb.ipynb")
    marker = next(f for f in out.findings if f.code == "LM002")
    assert marker.cell == 5
    assert marker.format().startswith("nb.ipynb:cell 5:2:")


def test_notebook_through_the_command(tmp_path):
    raw = notebook()
    write(tmp_path, {"nb.ipynb": raw, "other.txt": "training_step_end"})
    before = snapshot(tmp_path)
    result = lightmigrate("rewrite", "--check", ".", cwd=tmp_path)
    assert result.returncode == 1
    assert "would rewrite nb.ipynb" in result.stdout
    assert "nb.ipynb:cell 5:2:" in result.stdout
    assert snapshot(tmp_path) == before
    diff = lightmigrate("rewrite", "--diff", "nb.ipynb", cwd=tmp_path)
    assert diff.returncode == 1 and diff.stdout.startswith("--- a/nb.ipynb\n+++ b/nb.ipynb\n")
    assert lightmigrate("rewrite", "nb.ipynb", cwd=tmp_path).returncode == 0
    written = (tmp_path / "nb.ipynb").read_text()
    assert written == transform_notebook(raw, ALL_RULES, "nb.ipynb").text
    assert lightmigrate("rewrite", "--check", "nb.ipynb", cwd=tmp_path).returncode == 0  # second run: nothing


def test_non_python_notebook_is_left_alone():
    data = json.loads(notebook())
    data["metadata"]["kernelspec"]["language"] = "R"
    raw = json.dumps(data, indent=1)
    out = transform_notebook(raw, ALL_RULES, "nb.ipynb")
    assert not out.changed and out.text == raw


def test_syntax_error_is_located_by_cell(tmp_path):
    data = json.loads(notebook())
    data["cells"][5]["source"] = ["def training_step_end(:\n"]
    write(tmp_path, {"nb.ipynb": json.dumps(data, indent=1)})
    result = lightmigrate("rewrite", "--check", "nb.ipynb", cwd=tmp_path)
    assert result.returncode == 2
    assert "nb.ipynb: cell 6, line 1: syntax error" in result.stderr


def test_string_source_and_crlf_layout_are_kept():
    data = json.loads(notebook())
    data["cells"][2]["source"] = "".join(data["cells"][2]["source"])  # one string, not a list of lines
    raw = json.dumps(data, indent=2, ensure_ascii=False).replace("\n", "\r\n") + "\r\n"
    out = transform_notebook(raw, ALL_RULES, "nb.ipynb")
    assert out.changed
    assert "\n" not in out.text.replace("\r\n", "")  # still CRLF throughout
    new = json.loads(out.text)
    assert isinstance(new["cells"][2]["source"], str)
    assert "def on_validation_epoch_end(self):" in new["cells"][2]["source"]
    assert out.text == json.dumps(new, indent=2, ensure_ascii=False).replace("\n", "\r\n") + "\r\n"


def test_only_real_ipython_lines_are_masked():
    from lightmigrate.engine.notebook import _is_ipython

    for line in ("%time f()", "!ls", "?obj", "obj?", "np.mean??", "files = !ls", "t = %timeit -o f()", "  %debug"):
        assert _is_ipython(line), line
    for line in ("return loss  # why?", "x = a != b", "s = 'what?'", "# %matplotlib", "y = x % 2", "a == b"):
        assert not _is_ipython(line), line
