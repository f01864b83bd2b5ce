"""`lightmigrate verify --pytest`: the recording plugin, the per-test comparison, the merge of
pytest-xdist workers' recordings, and the command on a tiny 1.x project of its own (a package,
a tests/ folder, a pyproject) run on real pytorch-lightning 1.9.5 and on Lightning 2.x."""

import json
import os
import subprocess
import sys
import types
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from lightmigrate.verify.pytest_mode import _map_paths, compare_runs, compare_tests
from lightmigrate.verify.session import VerifyError
from lightmigrate.verify.pytest_plugin import Recorder, read_recordings, worker_path

ROOT = Path(__file__).resolve().parents[2]


def _env():
    return {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


# --------------------------------------------------------------------------------------------
# the comparison, on recordings written by hand


def run(method="fit", weight=1.0, hooks=("training_step", "training_step"), loss=0.5, error=None, dead=()):
    counts = {}
    for name in hooks:
        counts[name] = counts.get(name, 0) + 1
    return {
        "method": method, "error": error, "metrics": [[0, "train_loss", loss]],
        "returns": [{"method": method, "value": None}],
        "hooks": {"sequence": list(hooks), "counts": counts, "defined": sorted(set(hooks)), "dead": list(dead)},
        "global_step": 2, "current_epoch": 0, "callback_metrics": {}, "optimizers": [],
        "state_dict": {"w": {"tensor": [1], "dtype": "torch.float32", "values": [weight], "requires_grad": True}},
    }


def doc(**tests):
    return {"tests": tests}


def outcome(result, runs=(), error=None, **extra):
    return {"outcome": result, "error": error, "runs": list(runs), **extra}


def test_verdicts_per_test():
    before = doc(
        same=outcome("passed", [run()]),
        differs=outcome("passed", [run()]),
        regressed=outcome("passed", [run()]),
        fixed=outcome("failed", error="AssertionError: assert 1 == 2"),
        both=outcome("failed", error="ValueError: x"),
        skipped=outcome("skipped", error="Skipped: no GPU"),
    )
    after = doc(
        same=outcome("passed", [run()]),
        differs=outcome("passed", [run(weight=2.0, loss=0.7)]),
        regressed=outcome("failed", error="AttributeError: 'Trainer' object has no attribute 'x'"),
        fixed=outcome("passed"),
        both=outcome("failed", error="ValueError: y"),
        skipped=outcome("skipped", error="Skipped: no GPU"),
    )
    results = {t.nodeid: t for t in compare_tests(before, after)}
    assert {n: t.verdict for n, t in results.items()} == {
        "same": "passed on both", "differs": "behaviour differs", "regressed": "regressed", "fixed": "fixed",
        "both": "failed on both", "skipped": "skipped"}
    assert results["regressed"].error == "AttributeError: 'Trainer' object has no attribute 'x'"
    # the differences read as those of a verify case, the run named by its method and place
    text = [str(d) for d in results["differs"].differences]
    assert 'fit#1/metrics[step=0]["train_loss"]: expected 0.5, got 0.7' in text
    assert any(t.startswith('fit#1/state_dict["w"]: expected tensor[1](torch.float32)[1]') for t in text)


def test_a_module_that_no_longer_imports_regresses_its_tests():
    before = doc(**{"tests/test_a.py::test_one": outcome("passed", [run()])})
    after = doc(**{"tests/test_a.py": outcome("error", error="ImportError: cannot import name 'x'", collection=True)})
    [result] = compare_tests(before, after)
    assert (result.nodeid, result.verdict, result.after) == ("tests/test_a.py::test_one", "regressed", "error")
    assert result.error == "ImportError: cannot import name 'x'"


def test_dead_hook_and_run_count_differences():
    dead = [{"name": "training_step_end", "qualname": "M.training_step_end", "reason": "removed"}]
    before = [run(hooks=("training_step", "training_step_end"))]
    after = [run(hooks=("training_step",), dead=dead)]
    paths = [d.path for d in compare_runs(before, after)]
    assert "fit#1/hooks/dead/M.training_step_end" in paths
    diffs = compare_runs([run(), run("test")], [run()])
    assert diffs[0].path == "runs" and "2 Trainer run(s) in the original, 1 after migration" in str(diffs[0])
    # a run that raised on both sides alike (a test of pytest.raises) is no difference
    assert compare_runs([run(error="ValueError: a")], [run(error="ValueError: b")]) == []


# --------------------------------------------------------------------------------------------
# pytest-xdist: each worker writes its own file, the controller none; they merge


class _PluginManager:
    def __init__(self, controller):
        self.controller = controller

    def hasplugin(self, name):
        return self.controller and name == "dsession"


def _report(nodeid, when, outcome, message=None):
    crash = types.SimpleNamespace(message=message)
    return types.SimpleNamespace(nodeid=nodeid, when=when, passed=outcome == "passed", failed=outcome == "failed",
                                 skipped=outcome == "skipped",
                                 longrepr=types.SimpleNamespace(reprcrash=crash) if message else None)


def _session(recorder, reports):
    for nodeid, outcome, message in reports:
        recorder.pytest_runtest_logstart(nodeid, None)
        recorder.current.append(run())
        for when in ("setup", "call", "teardown"):
            recorder.pytest_runtest_logreport(_report(nodeid, when, outcome if when == "call" else "passed",
                                                      message if when == "call" else None))
    recorder.pytest_sessionfinish(None, 0)


def test_xdist_workers_write_their_own_files_which_merge(tmp_path):
    path = str(tmp_path / "rec.json")
    for worker, reports in (("gw0", [("t.py::a", "passed", None)]),
                            ("gw1", [("t.py::b", "failed", "assert 0\nmore")])):
        config = types.SimpleNamespace(workerinput={"workerid": worker}, pluginmanager=_PluginManager(False))
        _session(Recorder(config, path), reports)
    controller = Recorder(types.SimpleNamespace(pluginmanager=_PluginManager(True)), path)
    _session(controller, [("t.py::a", "passed", None)])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rec.gw0.json", "rec.gw1.json"]
    assert worker_path(path, "gw1") == str(tmp_path / "rec.gw1.json")
    merged = read_recordings(path)
    assert merged["workers"] == ["gw0", "gw1"]
    assert {n: (t["outcome"], t["error"], len(t["runs"])) for n, t in merged["tests"].items()} == {
        "t.py::a": ("passed", None, 1), "t.py::b": ("failed", "assert 0", 1)}
    assert read_recordings(str(tmp_path / "other.json")) is None


def test_the_entry_point_names_the_plugin():
    text = (ROOT / "pyproject.toml").read_text()
    assert '[project.entry-points.pytest11]\nlightmigrate = "lightmigrate.verify.pytest_plugin"' in text


# --------------------------------------------------------------------------------------------
# the plugin in a real pytest run (Lightning 2.x, this interpreter)

PLUGIN_TESTS = '''
import pytest
import torch
import lightning.pytorch as pl
from torch.utils.data import DataLoader, TensorDataset


class Model(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(2, 1)

    def training_step(self, batch, batch_idx):
        loss = self.layer(batch[0]).pow(2).mean()
        self.log("loss", loss)
        return loss

    def predict_step(self, batch, batch_idx):
        return self.layer(batch[0])

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def data():
    return DataLoader(TensorDataset(torch.ones(4, 2)), batch_size=2)


def trainer():
    return pl.Trainer(max_steps=2, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                      enable_model_summary=False, accelerator="cpu", log_every_n_steps=1)


def test_fit_and_predict():
    t, model = trainer(), Model()
    t.fit(model, data())
    t.predict(model, data())


class Watch(pl.Callback):
    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        pl_module.seen = float(outputs["loss"])


def test_callbacks_and_monitors(tmp_path):
    from lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint

    callbacks = [Watch(), ModelCheckpoint(monitor="loss"), EarlyStopping(monitor="loss", mode="max", patience=0)]
    t = pl.Trainer(max_epochs=3, logger=False, enable_progress_bar=False, enable_model_summary=False,
                   accelerator="cpu", log_every_n_steps=1, default_root_dir=tmp_path, callbacks=callbacks)
    t.fit(Model(), data())


def test_fails():
    raise ValueError("boom\\nsecond line")


def test_skips():
    pytest.skip("not today")


def test_imports_lightning_in_its_body():
    import pytorch_lightning as lazy_pl  # (the other copy of 2.x: first imported here)

    class Lazy(lazy_pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(2, 1)

        def training_step(self, batch, batch_idx):
            return self.layer(batch[0]).sum()

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    lazy_pl.Trainer(max_steps=1, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                    enable_model_summary=False, accelerator="cpu").fit(Lazy(), data())
'''


def test_plugin_records_each_trainer_run_and_each_outcome(tmp_path):
    (tmp_path / "test_plugin_demo.py").write_text(PLUGIN_TESTS)
    record = tmp_path / "out" / "rec.json"
    # (-p no:lightmigrate: where the package is installed, its entry point loads the same module)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:lightmigrate", "-p",
                           "lightmigrate.verify.pytest_plugin", "-q",
                           "-p", "no:cacheprovider", f"--lightmigrate-record={record}", "test_plugin_demo.py"],
                          cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    tests = read_recordings(str(record))["tests"]
    assert tests["test_plugin_demo.py::test_fails"]["outcome"] == "failed"
    assert tests["test_plugin_demo.py::test_fails"]["error"] == "ValueError: boom"
    assert tests["test_plugin_demo.py::test_skips"]["outcome"] == "skipped"
    assert "not today" in tests["test_plugin_demo.py::test_skips"]["error"]
    test = tests["test_plugin_demo.py::test_fit_and_predict"]
    assert test["outcome"] == "passed"
    fit, predict = test["runs"]
    assert (fit["method"], predict["method"], fit["error"], fit["global_step"]) == ("fit", "predict", None, 2)
    # logged metrics with their steps, although the trainer has no logger
    assert [(step, key) for step, key, _ in fit["metrics"]] == [(0, "epoch"), (0, "loss"), (1, "epoch"), (1, "loss")]
    assert fit["hooks"]["sequence"] == ["configure_optimizers", "training_step", "training_step"]
    assert set(fit["state_dict"]) == {"layer.weight", "layer.bias"}
    assert predict["hooks"]["sequence"] == ["predict_step", "predict_step"]
    assert predict["returns"][0]["value"][0]["tensor"] == [2, 1]  # what predict returned
    # a user callback's hook calls, where they ran among the model's, the outputs its body saw;
    # what ModelCheckpoint and EarlyStopping ended with (the loss falls: max mode stops at once)
    [fit] = tests["test_plugin_demo.py::test_callbacks_and_monitors"]["runs"]
    calls = fit["hooks"]["callbacks"]["calls"]
    assert calls == [[2, "Watch.on_train_batch_end"], [3, "Watch.on_train_batch_end"],
                     [4, "Watch.on_train_batch_end"], [5, "Watch.on_train_batch_end"]]
    seen = fit["hooks"]["callbacks"]["outputs"]["Watch.on_train_batch_end"]
    assert len(seen) == 4 and seen[0]["loss"]["tensor"] == []
    assert fit["monitors"]["EarlyStopping(loss)"]["stopped_epoch"] == 1
    assert fit["monitors"]["ModelCheckpoint(loss)"]["best"] == [1, 4]
    assert fit["monitors"]["ModelCheckpoint(loss)"]["saved"] == [[0, 2], [1, 4]]
    [lazy] = tests["test_plugin_demo.py::test_imports_lightning_in_its_body"]["runs"]
    assert (lazy["method"], lazy["global_step"], lazy["hooks"]["sequence"]) == (
        "fit", 1, ["configure_optimizers", "training_step"])


# --------------------------------------------------------------------------------------------
# the command, on real pytorch-lightning 1.9.5 and Lightning 2.x

MODEL = '''
import torch
import pytorch_lightning as pl
from torch.utils.data import DataLoader, TensorDataset


class TinyModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.layer(x), y)
        self.log("train_loss", loss)
        return {"loss": loss}
{extra}
    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", torch.nn.functional.mse_loss(self.layer(x), y))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def loader():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(8, 4, generator=g)
    return DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=4)
'''

STEP_END = '''
    def training_step_end(self, outputs):
        return {"loss": outputs["loss"] * 10}  # 2.x never calls it: the loss changes
'''

TESTS = '''
import pytorch_lightning as pl

from tinypkg.model import TinyModel, loader


def trainer():
    return pl.Trainer(max_steps=2, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                      enable_model_summary=False, accelerator="cpu")


def test_training_runs():
    t = trainer()
    t.fit(TinyModel(), loader())
    assert t.global_step == 2


def test_validation_runs():
    out = trainer().validate(TinyModel(), loader(), verbose=False)
    assert "val_loss" in out[0]
'''

EPOCH_END_TEST = '''
import pytorch_lightning as pl

from tinypkg.model import TinyModel, loader


class Averaging(TinyModel):
    def training_epoch_end(self, outputs):
        self.mean_loss = sum(o["loss"] for o in outputs) / len(outputs)


def test_epoch_end_average():
    model = Averaging()
    pl.Trainer(max_epochs=1, logger=False, enable_checkpointing=False, enable_progress_bar=False,
               enable_model_summary=False, accelerator="cpu").fit(model, loader())
    assert model.mean_loss > 0
'''


def make_project(root: Path, extra: str = "", epoch_end: bool = False) -> Path:
    (root / "tinypkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "tinypkg"\nversion = "0.1"\n'
                                         'dependencies = ["pytorch-lightning>=1.9,<2"]\n')
    (root / "tinypkg" / "__init__.py").write_text("")
    (root / "tinypkg" / "model.py").write_text(MODEL.replace("{extra}", extra))
    (root / "tests" / "test_train.py").write_text(TESTS)
    if epoch_end:
        (root / "tests" / "test_epoch_end.py").write_text(EPOCH_END_TEST)
    return root


def verify(*args, cwd):
    return subprocess.run([sys.executable, "-m", "lightmigrate", "verify", *map(str, args)], cwd=cwd, env=_env(),
                          capture_output=True, text=True, timeout=900)


def _files(root: Path):
    return {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.oracle
def test_a_project_whose_tests_pass_on_both(tmp_path, oracle_python):
    project = make_project(tmp_path / "proj")
    before = _files(project)
    result = verify("--pytest", "tests", "--before", oracle_python, "--after", sys.executable,
                    "--output-format", "json", cwd=project)
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert {t["nodeid"]: t["verdict"] for t in report["tests"]} == {
        "tests/test_train.py::test_training_runs": "passed on both",
        "tests/test_train.py::test_validation_runs": "passed on both"}
    assert all(t["trainer_runs"] == [1, 1] for t in report["tests"])
    assert report["before"]["versions"]["pytorch_lightning"].startswith("1.")
    assert _files(project) == before  # the user's files are never written


@pytest.mark.oracle
def test_behaviour_differs_and_regressions(tmp_path, oracle_python):
    # LM003 off: the loss-changing training_step_end is left alone and 2.x never calls it;
    # LM001 off: training_epoch_end is left alone and 2.x refuses the model
    project = make_project(tmp_path / "proj", extra=STEP_END, epoch_end=True)
    result = verify("--pytest", "tests", "--before", oracle_python, "--after", sys.executable,
                    "--ignore", "LM003,LM001", "--junit-xml", tmp_path / "r.xml", "--sarif-file", tmp_path / "r.sarif",
                    cwd=project)
    assert result.returncode == 1, result.stdout + result.stderr
    out = result.stdout
    lines = {line.split("│")[1].strip(): line for line in out.splitlines() if line.count("│") > 3}
    assert "behaviour differs" in lines["tests/test_train.py::test_training_runs"]
    assert "passed on both" in lines["tests/test_train.py::test_validation_runs"]  # it does not train
    assert "regressed" in lines["tests/test_epoch_end.py::test_epoch_end_average"]
    assert "tests/test_train.py::test_training_runs: behaviour differs (before: passed, after: passed)" in out
    assert "fit#1/hooks/dead/TinyModel.training_step_end" in out
    assert "tests/test_epoch_end.py::test_epoch_end_average: regressed (before: passed, after: failed)" in out
    assert "Support for `training_epoch_end` has been removed in v2.0.0" in out
    assert "3 tests: 1 passed on both, 1 behaviour differs, 1 regressed" in out
    # the same in the files for CI: JUnit XML, SARIF located at the tests' lines
    junit = ET.parse(tmp_path / "r.xml").getroot().find("testsuite")
    assert {c.get("name"): [e.tag for e in c] for c in junit.findall("testcase")} == {
        "test_training_runs": ["failure"], "test_validation_runs": [], "test_epoch_end_average": ["failure"]}
    sarif = json.loads((tmp_path / "r.sarif").read_text())["runs"][0]["results"]
    assert sorted((r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                   r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in sarif) == [
        ("verify/mismatch", "tests/test_train.py", TESTS.splitlines().index("def test_training_runs():") + 1),
        ("verify/regressed", "tests/test_epoch_end.py",
         EPOCH_END_TEST.splitlines().index("def test_epoch_end_average():") + 1)]


def test_without_interpreters_it_builds_them_and_a_build_that_cannot_start_exits_2(tmp_path):
    # (the building itself: tests/verify/test_envs.py, with a fake installer)
    (tmp_path / "requirements.txt").write_text("-c missing-constraints.txt\n")
    result = verify("--pytest", "tests", cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "constraints file not found" in result.stderr


def test_large_tensors_keep_an_even_sample():
    torch = pytest.importorskip("torch")
    from lightmigrate.verify.recorder import encode

    small = encode(torch.arange(6.0), max_values=10)
    assert small["values"] == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0] and "sampled_every" not in small
    big = encode({"w": torch.arange(25.0).reshape(5, 5)}, max_values=10)["w"]
    assert big["tensor"] == [5, 5] and big["sampled_every"] == 3
    assert big["values"] == [0.0, 3.0, 6.0, 9.0, 12.0, 15.0, 18.0, 21.0, 24.0]


def test_test_paths_are_taken_relative_to_the_project(tmp_path):
    project = tmp_path / "proj"
    (project / "tests").mkdir(parents=True)
    (project / "tests" / "test_a.py").write_text("")
    args = ["tests/test_a.py::test_x", "-k", "not slow", str(project / "tests")]
    assert _map_paths(args, project, project) == ["tests/test_a.py::test_x", "-k", "not slow", "tests"]
    assert _map_paths(["proj/tests"], project, tmp_path) == ["tests"]  # run from above (--project proj)
    (tmp_path / "elsewhere").mkdir()
    with pytest.raises(VerifyError, match="not inside the project"):
        _map_paths(["elsewhere"], project, tmp_path)


def test_the_entry_point_loads_the_plugin(tmp_path):
    """``pytest -p lightmigrate`` through a ``pytest11`` entry point like the one pyproject
    declares (a distribution made here, on PYTHONPATH: the package is not reinstalled), and
    ``verify``'s own ``-p no:lightmigrate -p lightmigrate.verify.pytest_plugin`` next to it."""
    info = tmp_path / "site" / "lightmigrate_plugin_probe-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lightmigrate-plugin-probe\nVersion: 0\n")
    (info / "entry_points.txt").write_text("[pytest11]\nlightmigrate = lightmigrate.verify.pytest_plugin\n")
    (tmp_path / "test_probe.py").write_text("def test_ok():\n    pass\n")
    env = {**_env(), "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), str(ROOT)])}

    def pytest_run(*args):
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args, "test_probe.py"],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stdout + proc.stderr

    pytest_run("-p", "lightmigrate", "--lightmigrate-record=a.json")
    pytest_run("-p", "no:lightmigrate", "-p", "lightmigrate.verify.pytest_plugin", "--lightmigrate-record=b.json")
    pytest_run()  # installed but not asked to record: writes nothing
    assert sorted(p.name for p in tmp_path.glob("*.json")) == ["a.json", "b.json"]
    for name in ("a.json", "b.json"):
        assert read_recordings(str(tmp_path / name))["tests"]["test_probe.py::test_ok"]["outcome"] == "passed"


def test_a_side_that_cannot_run_exits_2(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_nothing.py").write_text("X = 1\n")  # no test in it
    result = verify("--pytest", "tests", "--before", sys.executable, "--after", sys.executable, cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "the original code's tests could not run" in result.stdout
    assert "no tests were collected, exit 5" in result.stdout
