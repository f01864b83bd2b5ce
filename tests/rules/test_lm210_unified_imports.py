"""LM210 (--unified-imports): opt-in, whole project moved to lightning.pytorch, idempotent.
The CLI tests run the real ``lightmigrate`` script in a temporary folder."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lightmigrate.rules import ALL_RULES, OPT_IN_RULES, rules_by_code, select_rules
from lightmigrate.rules.lm210_unified_imports import UnifiedImportsRule

from .conftest import check_rewrite

SCRIPT = Path(sys.executable).with_name("lightmigrate")
RULE = UnifiedImportsRule()

MODEL = textwrap.dedent('''\
    import pytorch_lightning
    import pytorch_lightning as pl
    from pytorch_lightning.callbacks import Callback
    from pytorch_lightning.profiler import SimpleProfiler


    class Model(pl.LightningModule):
        pass


    class Printer(Callback):
        pass


    def trainer():
        return pytorch_lightning.Trainer(callbacks=[Printer()], profiler=SimpleProfiler())
    ''')
HELPERS = textwrap.dedent('''\
    from lightning_fabric.utilities.seed import seed_everything
    from pytorch_lightning import Trainer
    from lightning.pytorch import Trainer
    ''')


def run(*args, cwd):
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, cwd=cwd, timeout=600)


@pytest.fixture
def proj(tmp_path):
    if not SCRIPT.exists():
        pytest.skip("lightmigrate console script is not installed in this environment")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "model.py").write_text(MODEL)
    (tmp_path / "pkg" / "helpers.py").write_text(HELPERS)
    return tmp_path


def test_not_run_without_the_flag(proj):
    result = run("rewrite", "pkg", cwd=proj)
    assert result.returncode == 0, result.stderr
    text = (proj / "pkg" / "model.py").read_text()
    assert "from pytorch_lightning.profilers import SimpleProfiler" in text  # LM201 ran, root kept
    assert "import pytorch_lightning as pl" in text and "lightning.pytorch" not in text


def test_flag_moves_every_file_and_second_run_changes_nothing(proj):
    result = run("rewrite", "--unified-imports", "pkg", cwd=proj)
    assert result.returncode == 0, result.stderr
    model = (proj / "pkg" / "model.py").read_text()
    assert model == MODEL.replace("import pytorch_lightning\n", "import lightning.pytorch\n") \
        .replace("import pytorch_lightning as pl", "import lightning.pytorch as pl") \
        .replace("from pytorch_lightning.callbacks", "from lightning.pytorch.callbacks") \
        .replace("from pytorch_lightning.profiler import", "from lightning.pytorch.profilers import") \
        .replace("pytorch_lightning.Trainer(", "lightning.pytorch.Trainer(")
    helpers = (proj / "pkg" / "helpers.py").read_text()
    # the duplicate import the move would create is not left behind
    assert helpers == "from lightning.fabric.utilities.seed import seed_everything\nfrom lightning.pytorch import Trainer\n"
    again = run("rewrite", "--check", "--unified-imports", "pkg", cwd=proj)
    assert again.returncode == 0, again.stdout
    compile(model, "model.py", "exec")


def test_unified_result_imports_on_2x(proj):
    run("rewrite", "--unified-imports", "pkg", cwd=proj)
    code = "import pkg.model as m; t = m.trainer(); import lightning.pytorch as L; print(isinstance(t, L.Trainer))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=proj, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1] == "True"


def test_opt_in_selection():
    assert RULE.code not in [r.code for r in select_rules()]
    assert RULE.code not in [r.code for r in select_rules(["LM2"])]
    assert RULE.code in [r.code for r in select_rules(["LM210"])]
    assert RULE.code in [r.code for r in select_rules(opt_in=["LM210"])]
    assert not any(r.code == "LM210" for r in ALL_RULES)  # ALL_RULES is the default selection
    assert [r.code for r in OPT_IN_RULES] == ["LM210"] and rules_by_code()["LM210"] is OPT_IN_RULES[0]


@pytest.mark.parametrize("example", RULE.examples, ids=[e.title for e in RULE.examples])
def test_rule_examples(example):
    check_rewrite(RULE, example.before, example.after)


def test_strings_and_other_packages_are_left_alone():
    check_rewrite(RULE, '''\
    import pytorch_lightning_extras
    path = "pytorch_lightning.callbacks.EarlyStopping"
    ''', None)


def test_markers_do_not_depend_on_the_root(tmp_path):
    """A removed name is marked once; moving the file to lightning.pytorch afterwards does not
    add a second marker (the marker text names the API without its root)."""
    if not SCRIPT.exists():
        pytest.skip("lightmigrate console script is not installed in this environment")
    (tmp_path / "m.py").write_text("from pytorch_lightning.strategies import DataParallelStrategy\n")
    assert run("rewrite", "m.py", cwd=tmp_path).returncode == 0
    assert run("rewrite", "--unified-imports", "m.py", cwd=tmp_path).returncode == 0
    again = run("rewrite", "--check", "--unified-imports", "m.py", cwd=tmp_path)
    assert again.returncode == 0, again.stdout
    text = (tmp_path / "m.py").read_text()
    assert text.count("TODO(lightmigrate): LM202 `strategies.DataParallelStrategy` was removed (R38)") == 1
    assert text.endswith("from lightning.pytorch.strategies import DataParallelStrategy\n")


# --- find --------------------------------------------------------------------------------------

from .find_imports import check_find, sites_of  # noqa: E402


@pytest.mark.parametrize("source,effect", [
    ("import pytorch_lightning as pl\n", True),
    ("from lightning_fabric import Fabric\n", True),
    ("import lightning.pytorch as pl\n\n# pytorch_lightning was the old name\n", False),
    ("from .pytorch_lightning import x\nNAME = 'pytorch_lightning.Trainer'\n", False),
])
def test_find_is_exact(source, effect):
    check_find(RULE, source, effect)


def test_find_names_every_import_and_every_use_through_an_unaliased_root():
    source = ("import pytorch_lightning as pl\nimport pytorch_lightning.callbacks\n"
              "from lightning_fabric.utilities import seed\n\n"
              "cb = pytorch_lightning.callbacks.EarlyStopping('loss')\ntrainer = pl.Trainer(callbacks=[cb])\n")
    sites = sites_of(RULE, source)
    assert [(s.line, s.target, s.action) for s in sites] == [
        (1, "pytorch_lightning", "import"), (2, "pytorch_lightning.callbacks", "import"),
        (3, "lightning_fabric.utilities", "import"), (5, "pytorch_lightning.callbacks.EarlyStopping", "use")]
