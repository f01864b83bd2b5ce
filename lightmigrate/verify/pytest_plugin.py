"""A pytest plugin that records what every Lightning Trainer run in each test did.

Enabled with ``--lightmigrate-record=FILE`` (or ``LIGHTMIGRATE_RECORD=FILE``); inert otherwise,
so it can stay installed (entry point ``pytest11: lightmigrate``, hence ``pytest -p lightmigrate``)
or be loaded by module (``-p lightmigrate.verify.pytest_plugin``). ``lightmigrate verify
--pytest`` runs a project's tests with it on both sides and compares the two files.

For each test (setup, call and teardown) it records:

* ``outcome``: passed, failed, error (setup/teardown or collection failed) or skipped, and
  ``error``: the first line of the failure (or the skip reason);
* ``runs``: one record per outermost ``Trainer.fit/validate/test/predict`` call, with the
  runner's words (see ``runner.run_case``): ``hooks`` (the model's and the user callbacks'
  hooks Lightning called, as :class:`~lightmigrate.verify.hook_log.HookLog` sees them over the
  files of the model's and the callbacks' own classes), ``monitors`` (what ModelCheckpoint and
  EarlyStopping ended with, :mod:`~lightmigrate.verify.monitor_log`), ``metrics``
  (``[step, key, value]`` rows of everything the trainer logged, also when it has no logger),
  ``returns`` (what the call returned), ``global_step``,
  ``current_epoch``, ``callback_metrics``, ``optimizers`` and ``state_dict`` (the final
  weights; a tensor of more than ``MAX_VALUES`` elements keeps an even sample of its values).

Each test starts from the same seed (``random``, numpy and torch), so both sides of a
comparison draw the same initial weights.

pytest-xdist: each worker writes ``FILE`` with its id before the suffix (``rec.gw0.json``),
the controller writes nothing; :func:`read_recordings` merges them.

Runs inside the 1.x interpreter too: stdlib, pytest and this package's import-light modules only.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from typing import Any, Dict, List, Optional

import pytest

from lightmigrate.verify.hook_log import HookLog
from lightmigrate.verify.monitor_log import CheckpointSaves, monitor_results
from lightmigrate.verify.recorder import encode, make_logger
from lightmigrate.verify.recordings import read_recordings, worker_path  # noqa: F401 - (part of its interface)

RECORD_ENV = "LIGHTMIGRATE_RECORD"
SEED = 1234
MAX_VALUES = 1000
RUN_METHODS = ("fit", "validate", "test", "predict")
# the Lightning packages whose Trainer is recorded (``lightning.pytorch`` and the
# ``pytorch_lightning`` of 2.x are two copies with two Trainer classes)
ROOTS = ("pytorch_lightning", "lightning.pytorch")
_LIBRARY_ROOTS = {"pytorch_lightning", "lightning", "lightning_fabric", "torch", "torchmetrics", "builtins"}


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("lightmigrate")
    group.addoption(
        "--lightmigrate-record", dest="lightmigrate_record", metavar="FILE", default=None,
        help=f"record every Lightning Trainer run of each test into FILE (JSON); also ${RECORD_ENV}",
    )


def pytest_configure(config: Any) -> None:
    path = config.getoption("lightmigrate_record", None) or os.environ.get(RECORD_ENV)
    if path:
        config.pluginmanager.register(Recorder(config, path), "lightmigrate-recorder")


def first_error_line(report: Any) -> Optional[str]:
    """What went wrong, in one line: pytest's crash message, else the last line of the report."""
    longrepr = getattr(report, "longrepr", None)
    if longrepr is None:
        return None
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # a skip: (file, line, reason)
        return str(longrepr[2]).strip().splitlines()[0] if str(longrepr[2]).strip() else "skipped"
    crash = getattr(longrepr, "reprcrash", None)
    message = getattr(crash, "message", None)
    if message and message.strip():
        return message.strip().splitlines()[0]
    lines = [line for line in str(longrepr).strip().splitlines() if line.strip()]
    error_lines = [line for line in lines if line.startswith("E ")]
    return (error_lines[0][1:].strip() if error_lines else lines[-1].strip()) if lines else None


def _seed_all() -> None:
    random.seed(SEED)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(SEED)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(SEED)


def _user_files(model: Any, callbacks: Any = ()) -> List[str]:
    """The files of the model's and the callbacks' own classes (not Lightning's, torch's or any
    installed package's): where their hooks are defined."""
    files: List[str] = []
    classes = [cls for obj in [model, *callbacks] for cls in type(obj).__mro__]
    for cls in classes:
        module = sys.modules.get(cls.__module__)
        path = getattr(module, "__file__", None)
        if not path or cls.__module__.split(".")[0] in _LIBRARY_ROOTS:
            continue
        parts = os.path.normpath(path).split(os.sep)
        if "site-packages" in parts or "dist-packages" in parts or path in files:
            continue
        files.append(path)
    return files


class Recorder:
    """The enabled plugin: records each test, writes the file at the end of the session."""

    def __init__(self, config: Any, path: str) -> None:
        self.config = config
        worker = getattr(config, "workerinput", {}).get("workerid")
        self.worker = worker
        self.path = worker_path(os.path.abspath(path), worker)
        self.tests: Dict[str, Dict[str, Any]] = {}
        self.current: Optional[List[Dict[str, Any]]] = None  # the runs of the running test
        self.active = False  # inside a recorded run (nested runs belong to it)
        self.patched: Dict[Any, Dict[str, Any]] = {}  # Trainer class -> original methods
        self.finder = _PatchOnImport(self.patch_loaded)
        sys.meta_path.insert(0, self.finder)
        self.patch_loaded()

    def writes(self) -> bool:
        """Whether this process writes a file: the xdist controller (its ``dsession`` plugin
        registered after this one, hence asked late) only gathers the workers' reports."""
        return self.worker is not None or not self.config.pluginmanager.hasplugin("dsession")

    # -- patching ------------------------------------------------------------------------------

    def patch_loaded(self) -> None:
        """Wrap the run methods of each Lightning Trainer class imported so far."""
        for root in ROOTS:
            module = sys.modules.get(root + ".trainer.trainer")
            trainer_cls = getattr(module, "Trainer", None)
            if trainer_cls is None or trainer_cls in self.patched:
                continue
            originals = {}
            for name in RUN_METHODS:
                original = trainer_cls.__dict__.get(name)
                if original is None:
                    continue
                originals[name] = original
                setattr(trainer_cls, name, self._wrap(name, original, root))
            self.patched[trainer_cls] = originals

    def unpatch(self) -> None:
        for trainer_cls, originals in self.patched.items():
            for name, original in originals.items():
                setattr(trainer_cls, name, original)
        self.patched.clear()

    def _wrap(self, method: str, original: Any, root: str) -> Any:
        recorder = self

        def run_method(trainer: Any, *args: Any, **kwargs: Any) -> Any:
            if recorder.active or recorder.current is None:
                return original(trainer, *args, **kwargs)
            return recorder.record_run(method, original, root, trainer, args, kwargs)

        run_method.__name__ = original.__name__
        run_method.__qualname__ = getattr(original, "__qualname__", method)
        run_method.__doc__ = original.__doc__
        run_method.__wrapped__ = original  # type: ignore[attr-defined]
        return run_method

    def record_run(self, method: str, original: Any, root: str, trainer: Any, args: Any, kwargs: Any) -> Any:
        model = args[0] if args else kwargs.get("model")
        if model is None:
            model = getattr(trainer, "lightning_module", None)
        run: Dict[str, Any] = {"method": method, "error": None, "metrics": [], "returns": [],
                               "hooks": None, "global_step": None, "current_epoch": None,
                               "callback_metrics": None, "optimizers": None, "state_dict": None,
                               "monitors": None}
        logger = make_logger(root)
        connector = getattr(trainer, "_logger_connector", None)
        if connector is not None:
            connector.log_metrics = self._logging_into(trainer, connector, logger)
        callback_base = getattr(sys.modules.get(root + ".callbacks"), "Callback", None)
        callbacks = list(getattr(trainer, "callbacks", None) or [])
        hook_log = HookLog(_user_files(model, callbacks), model, callback_base) if model is not None else None
        saves = CheckpointSaves(trainer, root)
        self.active = True
        started = time.perf_counter()
        try:
            with saves:
                if hook_log is not None:
                    with hook_log:
                        value = original(trainer, *args, **kwargs)
                else:
                    value = original(trainer, *args, **kwargs)
            run["returns"] = [{"method": method, "value": encode(value, max_values=MAX_VALUES)}]
            return value
        except BaseException as exc:
            run["error"] = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            self.active = False
            if connector is not None:
                connector.__dict__.pop("log_metrics", None)
            run["seconds"] = round(time.perf_counter() - started, 4)
            self._finish_run(run, trainer, model, logger, hook_log)
            try:
                run["monitors"] = monitor_results(trainer, root, saves)
            except Exception as exc:  # noqa: BLE001 - recording must never fail the test
                run.setdefault("record_errors", []).append(repr(exc))
            if self.current is not None:
                self.current.append(run)

    @staticmethod
    def _logging_into(trainer: Any, connector: Any, logger: Any) -> Any:
        """``connector.log_metrics`` that also feeds ``logger``: Lightning's own method runs
        with ``logger`` added for the call, so the rows are what any logger would get (also
        with ``logger=False``, whose logged metrics are then left as they were)."""
        original = type(connector).log_metrics

        def log_metrics(metrics: Any, step: Optional[int] = None) -> None:
            saved = trainer._loggers
            logged = getattr(connector, "_logged_metrics", None)
            before = dict(logged) if not saved and isinstance(logged, dict) else None
            trainer._loggers = [*saved, logger]
            try:
                original(connector, metrics, step)
            finally:
                trainer._loggers = saved
                if before is not None:
                    logged.clear()
                    logged.update(before)

        return log_metrics

    @staticmethod
    def _finish_run(run: Dict[str, Any], trainer: Any, model: Any, logger: Any, hook_log: Any) -> None:
        from lightmigrate.verify.runner import _optimizer_states

        run["metrics"] = logger.rows
        try:
            if hook_log is not None:
                run["hooks"] = hook_log.record()
            run["global_step"] = int(trainer.global_step)
            run["current_epoch"] = int(trainer.current_epoch)
            run["callback_metrics"] = encode(dict(trainer.callback_metrics), max_values=MAX_VALUES)
            run["optimizers"] = _optimizer_states(trainer)
            if model is not None and hasattr(model, "state_dict"):
                run["state_dict"] = encode(dict(model.state_dict()), max_values=MAX_VALUES)
        except Exception as exc:  # noqa: BLE001 - recording must never fail the test
            run.setdefault("record_errors", []).append(repr(exc))

    # -- pytest hooks --------------------------------------------------------------------------

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        """A test starts (before its setup; not a first-result hook like runtest_protocol,
        so other plugins cannot hide it)."""
        self.patch_loaded()
        self.current = []
        test = self.tests.setdefault(nodeid, {"outcome": None, "error": None, "runs": []})
        if location and isinstance(location[1], int):
            test["line"] = location[1] + 1  # the test's line (pytest counts from 0)
        _seed_all()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: Any) -> None:
        self.patch_loaded()  # Lightning imported by a fixture or a hook since

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_call(self, item: Any) -> None:
        self.patch_loaded()
        _seed_all()  # (fixtures may have drawn numbers)

    def pytest_runtest_logreport(self, report: Any) -> None:
        test = self.tests.setdefault(report.nodeid, {"outcome": None, "error": None, "runs": []})
        if report.failed:
            if test["outcome"] not in ("failed", "error"):
                test["outcome"] = "failed" if report.when == "call" else "error"
                test["error"] = first_error_line(report)
        elif report.skipped:
            if test["outcome"] is None:
                test["outcome"] = "skipped"
                test["error"] = first_error_line(report)
        elif report.when == "call" and test["outcome"] is None:
            test["outcome"] = "passed"
        if report.when == "teardown":
            test["runs"] = self.current or []
            self.current = None

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed:
            self.tests[report.nodeid] = {"outcome": "error", "error": first_error_line(report), "runs": [],
                                         "collection": True}

    def pytest_sessionfinish(self, session: Any, exitstatus: Any) -> None:
        if self.finder in sys.meta_path:
            sys.meta_path.remove(self.finder)
        self.unpatch()
        if not self.writes():
            return
        doc = {"worker": self.worker, "exitstatus": int(exitstatus), "versions": _versions(), "tests": self.tests}
        os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
        with open(self.path, "w", encoding="utf-8") as fh:
            json.dump(doc, fh)


class _PatchOnImport:
    """A meta path finder that calls ``patch`` right after a Lightning trainer module is
    imported, wherever that happens (inside a test body too). It finds nothing itself: it
    asks the other finders and wraps the loader they return."""

    WATCHED = frozenset(root + ".trainer.trainer" for root in ROOTS)

    def __init__(self, patch: Any) -> None:
        self.patch = patch
        self.busy = False

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if self.busy or name not in self.WATCHED:
            return None
        import importlib.util

        self.busy = True
        try:
            spec = importlib.util.find_spec(name)
        finally:
            self.busy = False
        if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _PatchingLoader(spec.loader, self.patch)
        return spec

    def invalidate_caches(self) -> None:
        pass


class _PatchingLoader:
    def __init__(self, inner: Any, after: Any) -> None:
        self._inner = inner
        self._after = after

    def create_module(self, spec: Any) -> Any:
        return self._inner.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self._inner.exec_module(module)
        self._after()

    def __getattr__(self, name: str) -> Any:  # get_source, get_filename, is_package, ...
        return getattr(self._inner, name)


def _versions() -> Dict[str, Optional[str]]:
    out: Dict[str, Optional[str]] = {"python": sys.version.split()[0]}
    for name in ("torch", "pytorch_lightning", "lightning"):
        module = sys.modules.get(name)
        out[name] = getattr(module, "__version__", None) if module is not None else None
    return out
