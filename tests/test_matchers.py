"""lightmigrate.cst.matchers: libcst.matchers, imported on first use."""

import subprocess
import sys

import libcst as cst


def test_importing_the_cli_does_not_import_libcst_matchers():
    code = "import sys, lightmigrate.cli; print('libcst.matchers' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_m_is_the_module_once_used():
    import libcst.matchers as real

    from lightmigrate.cst.matchers import m

    assert m.matches(cst.Name("x"), m.Name("x")) and not m.matches(cst.Name("y"), m.Name("x"))
    assert m.Call is real.Call and "Call" in vars(m)  # copied: later lookups skip __getattr__


def test_preload_imports_it_in_a_thread_and_loaded_waits():
    code = ("import sys, lightmigrate.cst.matchers as lm\n"
            "assert 'libcst.matchers' not in sys.modules\n"
            "import threading\n"
            "done = []\n"
            "lm.preload(then=lambda: done.append(('libcst.matchers' in sys.modules, threading.current_thread().name)))\n"
            "lm.loaded()\n"
            "print('libcst.matchers' in sys.modules, lm.m.Call.__module__, *done[0])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded, module, loaded_before_then, thread = out.split()
    assert loaded == "True" and module.startswith("libcst.matchers")
    assert loaded_before_then == "True" and thread == "lightmigrate-preload"  # ``then`` ran after, in the thread


def test_a_run_on_two_processes_preloads_during_the_survey(tmp_path, monkeypatch):
    import lightmigrate.engine.survey as survey_module
    import lightmigrate.cst.matchers as lm
    from lightmigrate.engine import Mode, run
    from lightmigrate.rules import ALL_RULES

    monkeypatch.setattr(survey_module, "PARALLEL_MIN_CHARS", 0)  # survey on the pool
    calls = []
    monkeypatch.setattr(lm, "preload", lambda then=None: calls.append(("preload", then)))
    monkeypatch.setattr(lm, "loaded", lambda: calls.append("loaded"))
    for k in range(4):
        (tmp_path / f"m{k}.py").write_text("import pytorch_lightning as pl\n\n\nclass M(pl.LightningModule):\n"
                                           "    def training_epoch_end(self, outputs):\n        pass\n")
    report = run([str(tmp_path)], ALL_RULES, Mode.CHECK, jobs=2)
    assert sum(f.changed for f in report.files) == 4
    from lightmigrate.engine.run import _ready_fast_paths
    assert calls == [("preload", _ready_fast_paths), "loaded"]  # libcst's field orders and the compat check too
