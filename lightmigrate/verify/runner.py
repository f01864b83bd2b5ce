"""Run corpus case files in this interpreter and record what they observably did.

    PYTHONPATH=<repo> python -m lightmigrate.verify.runner CASE.py... --side v1|v2 --out results.json

One interpreter runs every given case (Lightning is imported once). Side ``v1`` is meant for
real pytorch-lightning 1.9.5 running original cases, side ``v2`` for Lightning 2.x running
migrated copies, side ``v1shim`` for Lightning 2.x running ORIGINAL cases under the v1 shim
(``lightmigrate.verify.shim``: 1.9.5 semantics on 2.x), recorded like side ``v1``.
Must not import libcst, click or rich: the 1.9.5 interpreter has none of them.

A case file defines ``lightmigrate_case()`` returning a dict (see ``corpus/README.md``)::

    {"model": LightningModule, "train_dataloaders": ..., "val_dataloaders": ...,
     "test_dataloaders": ..., "predict_dataloaders": ..., "trainer": {extra Trainer kwargs},
     "run": ["fit", "validate", "test", "predict"]}

The result document is ``{"side", "versions", "seed", "cases": {case name: record}}`` where the
case name is the file's stem and each record is produced by :func:`run_case`.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import logging
import os
import re
import shutil
import sys
import tempfile
import time
import traceback
import warnings
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence

from lightmigrate.verify.hook_log import HookLog
from lightmigrate.verify.hooks import STAGES, epoch_end_watch, helper_param_names
from lightmigrate.verify.monitor_log import CheckpointSaves, monitor_results
from lightmigrate.verify.recorder import EpochEndTracer, encode, make_logger

SEED = 1234
SIDES = ("v1", "v2", "v1shim")
RUN_METHODS = ("fit", "validate", "test", "predict")
CASE_KEYS = {
    "model",
    "train_dataloaders",
    "val_dataloaders",
    "test_dataloaders",
    "predict_dataloaders",
    "datamodule",
    "trainer",
    "run",
    # False: record no hook order (the hooks' calls and dead hooks still are), for a case whose
    # migration moves Lightning's calls of a hook into the module's own code (LM005 calling a
    # user optimizer_step from its loop), which the hook log does not count as Lightning's
    "hook_order",
}

_NEW_ROOT = re.compile(r"^\s*(?:import\s+lightning(?:\.pytorch)?\b|from\s+lightning(?:\.pytorch)?\b)", re.M)
_OLD_ROOT = re.compile(r"^\s*(?:import|from)\s+pytorch_lightning\b", re.M)


def detect_root(source: str) -> str:
    """``lightning.pytorch`` if the file imports it and not ``pytorch_lightning``, else the latter."""
    if _NEW_ROOT.search(source) and not _OLD_ROOT.search(source):
        return "lightning.pytorch"
    return "pytorch_lightning"


def case_name(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


def trainer_settings(root_dir: str, logger: Any, extra: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """The fixed test settings every case runs with, then the case's own Trainer kwargs."""
    settings: Dict[str, Any] = {
        "accelerator": "cpu",
        "devices": 1,
        "enable_progress_bar": False,
        "enable_model_summary": False,
        "enable_checkpointing": False,
        "logger": logger,
        "log_every_n_steps": 1,
        "default_root_dir": root_dir,
    }
    settings.update(extra or {})
    return settings


def _seed(pl: Any, seed: int) -> None:
    import torch

    pl.seed_everything(seed, workers=True)
    torch.use_deterministic_algorithms(True)
    # oneDNN builds (JIT-compiles) a kernel for every new RNN/conv shape: seconds per tiny case
    # on a busy 2-core machine (an LSTM case: 3.8 s with it, 0.5 s without). Both sides of a
    # comparison run with the same setting, so it decides speed only, never a verdict.
    torch.backends.mkldnn.enabled = False
    # Cases are tiny: one thread runs them about three times faster than two (OpenMP's start-up
    # and spin-waiting cost more than the work), and two cases then keep two cores busy. Both
    # sides run with it, so it decides speed only, never a verdict.
    torch.set_num_threads(1)


def _quiet() -> None:
    """Silence warnings and Lightning's info logs. Call after importing Lightning: importing it
    resets its loggers' levels."""
    warnings.simplefilter("ignore")
    for name in ("pytorch_lightning", "lightning", "lightning.pytorch", "lightning_fabric", "lightning.fabric"):
        logging.getLogger(name).setLevel(logging.ERROR)


def _optimizer_states(trainer: Any) -> List[Any]:
    states = []
    for opt in getattr(trainer, "optimizers", None) or []:
        opt = getattr(opt, "optimizer", opt)  # unwrap a LightningOptimizer, just in case
        try:
            states.append(encode(opt.state_dict()))
        except Exception as exc:  # pragma: no cover - recording must not fail the case
            states.append({"repr": f"<optimizer state unavailable: {exc!r}>"})
    return states


def _watch_for(source: str, side: str, watch: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """``{"names": {stage: [names]}, "anchors": [lines]}`` for the tracer (see hooks.py)."""
    if watch is not None:
        return {"names": dict(watch.get("names") or {}), "anchors": list(watch.get("anchors") or [])}
    found = epoch_end_watch(source)
    if side == "v2" and not found["names"]:
        # No hint from the original: watch every stage for the helper parameter names.
        names = helper_param_names(source)
        if names:
            found["names"] = {stage: list(names) for stage in STAGES}
    return found


def run_case(
    path: str,
    side: str,
    watch: Optional[Mapping[str, Any]] = None,
    seed: int = SEED,
    index: int = 0,
    root: Optional[str] = None,
    quiet: bool = True,
    checkpoint_dir: Optional[str] = None,
) -> Dict[str, Any]:
    """Import and run one case file; never raises (errors are recorded in the result).

    With ``checkpoint_dir``, the trainer's checkpoint after the run is saved there as
    ``<case>.ckpt`` (so a 1.9.5 checkpoint can be loaded into the migrated model).

    ``watch`` (side ``v2``) is ``hooks.epoch_end_watch`` of the ORIGINAL file: the 1.x parameter
    names per stage and the first lines of the 1.x bodies. When omitted it is read from
    ``path`` itself (fine for originals; for migrated files only helper names are found).
    """
    path = os.path.realpath(path)
    started = time.perf_counter()
    record: Dict[str, Any] = {
        "file": path,
        "side": side,
        "error": None,
        "traceback": None,
        "metrics": [],
        "epoch_end": [],
        "returns": [],
        "global_step": None,
        "current_epoch": None,
        "state_dict": None,
        "optimizers": None,
        "callback_metrics": None,
        "hooks": None,
        "monitors": None,
        "seconds": None,
    }
    root_dir = tempfile.mkdtemp(prefix="lightmigrate-case-")
    tracer: Optional[EpochEndTracer] = None
    hook_log: Optional[HookLog] = None
    saves: Optional[CheckpointSaves] = None
    hook_order = True
    logger: Any = None
    trainer: Any = None
    model: Any = None
    try:
        with open(path, encoding="utf-8") as fh:
            source = fh.read()
        if side not in SIDES:
            raise ValueError(f"unknown side {side!r}; expected one of {SIDES}")
        root = root or ("pytorch_lightning" if side == "v1" else detect_root(source))
        pl = importlib.import_module(root)
        if quiet:
            _quiet()
        record["watch"] = _watch_for(source, side, watch)

        if side == "v1shim":  # 1.x module paths that 2.x moved import again under the shim
            from lightmigrate.verify import shim_imports, shim_trainer

            shim_imports.install(root)
            shim_trainer.install(root)
        module_name = "_lightmigrate_case_%d_%s" % (index, re.sub(r"\W", "_", case_name(path)))
        _seed(pl, seed)
        spec = importlib.util.spec_from_file_location(module_name, path)
        assert spec is not None and spec.loader is not None, f"cannot import {path}"
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)

        _seed(pl, seed)
        case = module.lightmigrate_case()
        unknown = set(case) - CASE_KEYS
        if unknown:
            raise ValueError(f"unknown lightmigrate_case() keys: {sorted(unknown)}")
        model = case["model"]
        hook_order = case.get("hook_order", True) is not False
        run = list(case.get("run") or ["fit"])
        for method in run:
            if method not in RUN_METHODS:
                raise ValueError(f"unknown run method {method!r}; expected one of {RUN_METHODS}")

        trainer_kwargs = case.get("trainer")
        if side == "v1shim":
            from lightmigrate.verify.shim import apply_v1_shim

            model, trainer_kwargs = apply_v1_shim(model, trainer_kwargs)
        logger = make_logger(root)
        trainer = pl.Trainer(**trainer_settings(root_dir, logger, trainer_kwargs))
        # Under the shim the user's original 1.x epoch-end hooks run: trace them like side v1.
        tracer_side = "v1" if side == "v1shim" else side
        tracer = EpochEndTracer(path, tracer_side, watch=record["watch"], module_base=pl.LightningModule)
        hook_log = HookLog(path, model, callback_base=pl.Callback)
        saves = CheckpointSaves(trainer, root)
        datamodule = case.get("datamodule")
        with tracer, hook_log, saves:
            for method in run:
                if method == "fit":
                    kwargs: Dict[str, Any] = {"datamodule": datamodule} if datamodule is not None else {
                        "train_dataloaders": case.get("train_dataloaders"),
                        "val_dataloaders": case.get("val_dataloaders"),
                    }
                    trainer.fit(model, **kwargs)
                    continue
                loader_key = {"validate": "val_dataloaders", "test": "test_dataloaders", "predict": "predict_dataloaders"}[method]
                kwargs = {"datamodule": datamodule} if datamodule is not None else {"dataloaders": case.get(loader_key)}
                if method != "predict":
                    kwargs["verbose"] = False  # no result table on stdout; nothing else changes
                value = getattr(trainer, method)(model, **kwargs)
                record["returns"].append({"method": method, "value": encode(value)})
        if checkpoint_dir is not None:
            record["checkpoint"] = os.path.join(checkpoint_dir, case_name(path) + ".ckpt")
            trainer.save_checkpoint(record["checkpoint"])
    except BaseException as exc:  # noqa: BLE001 - a failing case must not stop the others
        if isinstance(exc, KeyboardInterrupt):
            raise
        record["error"] = f"{type(exc).__name__}: {exc}"
        record["traceback"] = traceback.format_exc()
    finally:
        if tracer is not None:
            record["epoch_end"] = tracer.records
        if hook_log is not None:
            record["hooks"] = hook_log.record()
            if not hook_order:
                record["hooks"]["sequence"] = []
        if logger is not None:
            record["metrics"] = logger.rows
        if trainer is not None:
            try:
                record["global_step"] = int(trainer.global_step)
                record["current_epoch"] = int(trainer.current_epoch)
                record["callback_metrics"] = encode(dict(trainer.callback_metrics))
                record["optimizers"] = _optimizer_states(trainer)
                record["monitors"] = monitor_results(trainer, root, saves)
            except Exception as exc:  # pragma: no cover
                record.setdefault("record_errors", []).append(repr(exc))
        if side == "v1shim" and model is not None:
            try:
                from lightmigrate.verify.shim import hook_log as shim_hook_log

                record["shim_hooks"] = shim_hook_log(model)
            except Exception as exc:  # pragma: no cover
                record.setdefault("record_errors", []).append(repr(exc))
        if model is not None and hasattr(model, "state_dict"):
            try:
                record["state_dict"] = encode(dict(model.state_dict()))
            except Exception as exc:  # pragma: no cover
                record.setdefault("record_errors", []).append(repr(exc))
        shutil.rmtree(root_dir, ignore_errors=True)
        record["seconds"] = round(time.perf_counter() - started, 4)
    return record


def versions() -> Dict[str, Optional[str]]:
    out: Dict[str, Optional[str]] = {"python": sys.version.split()[0]}
    for name in ("torch", "pytorch_lightning", "lightning"):
        mod = sys.modules.get(name)
        out[name] = getattr(mod, "__version__", None) if mod is not None else None
    return out


def import_lightning(roots: Iterable[str], quiet: bool = True) -> None:
    """Import Lightning (and torch) up front, so per-case timings exclude it."""
    for root in sorted(set(roots)):
        importlib.import_module(root)
    import torch

    torch.use_deterministic_algorithms(True)  # its first call imports torch._inductor (~1 s)
    if quiet:
        _quiet()


class _OnPath:
    """``folders`` first on ``sys.path`` while one case runs; afterwards they leave it and so do
    the modules imported from them (the next case may have a package of the same name)."""

    def __init__(self, folders: Sequence[str]) -> None:
        self.folders = [os.path.realpath(f) for f in folders]

    def __enter__(self) -> None:
        self.before = set(sys.modules)
        sys.path[:0] = self.folders

    def __exit__(self, *exc: Any) -> None:
        for folder in self.folders:
            if folder in sys.path:
                sys.path.remove(folder)
        inside = tuple(f + os.sep for f in self.folders)
        for name in set(sys.modules) - self.before:
            where = getattr(sys.modules[name], "__file__", None) or ""
            # (a virtual environment inside a source folder keeps its packages)
            if os.path.realpath(where).startswith(inside) and "site-packages" not in where:
                del sys.modules[name]


def run_cases(
    paths: Iterable[str],
    side: str,
    watch: Optional[Mapping[str, Mapping[str, Any]]] = None,
    seed: int = SEED,
    quiet: bool = True,
    checkpoint_dir: Optional[str] = None,
    names: Optional[Sequence[str]] = None,
    sys_paths: Optional[Sequence[Sequence[str]]] = None,
) -> Dict[str, Any]:
    """Run each case file in order; ``watch`` maps case name -> ``epoch_end_watch`` of the
    original file (side v2). ``names``: the case names (default: the file stems);
    ``sys_paths``: per case, folders put first on ``sys.path`` for that case only."""
    paths = list(paths)
    names = list(names) if names is not None else [case_name(p) for p in paths]
    started = time.perf_counter()
    roots = set()
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            roots.add("pytorch_lightning" if side == "v1" else detect_root(fh.read()))
    import_lightning(roots, quiet)
    imported = time.perf_counter() - started
    cases: Dict[str, Any] = {}
    for index, (name, path) in enumerate(zip(names, paths)):
        if name in cases:
            raise ValueError(f"two case files share the name {name!r}")
        with _OnPath(sys_paths[index] if sys_paths else ()):
            cases[name] = run_case(path, side, (watch or {}).get(name), seed=seed, index=index, quiet=quiet,
                                   checkpoint_dir=checkpoint_dir)
            if checkpoint_dir is not None and name != case_name(path):
                cases[name]["checkpoint"] = _rename_checkpoint(cases[name].get("checkpoint"), name)
    return {
        "import_seconds": round(imported, 4),
        "side": side,
        "seed": seed,
        "versions": versions(),
        "seconds": round(time.perf_counter() - started, 4),
        "cases": cases,
    }


def _rename_checkpoint(path: Optional[str], name: str) -> Optional[str]:
    if not path or not os.path.exists(path):
        return path
    target = os.path.join(os.path.dirname(path), name + ".ckpt")
    os.replace(path, target)
    return target


def run_plan(plan: Mapping[str, Any], side: str, quiet: bool = True) -> Dict[str, Any]:
    """Run a plan: ``{"cases": [{"name", "file", "sys_path": [folders]}], "watch": {name: ...},
    "checkpoint_dir": DIR or None}`` (what ``lightmigrate verify`` sends on stdin)."""
    cases = list(plan.get("cases") or [])
    return run_cases(
        [c["file"] for c in cases], side, watch=plan.get("watch"), quiet=quiet,
        checkpoint_dir=plan.get("checkpoint_dir"), seed=plan.get("seed", SEED),
        names=[c["name"] for c in cases], sys_paths=[c.get("sys_path") or [] for c in cases],
    )


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lightmigrate.verify.runner", description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="*", help="case files to run, in order")
    parser.add_argument(
        "--plan", metavar="FILE",
        help="read the cases from a JSON plan (see run_plan) instead; '-': from stdin, read after "
             "Lightning is imported, so the caller can start this process before the plan is ready",
    )
    parser.add_argument("--side", choices=SIDES, required=True)
    parser.add_argument("--out", default="-", help="where to write the results JSON ('-' for stdout)")
    parser.add_argument(
        "--watch",
        help='JSON file mapping case name -> {"names": {stage: [1.x parameter names]}, "anchors": '
        "[first lines of the 1.x bodies]}, read from the ORIGINAL files (side v2)",
    )
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--save-checkpoints", metavar="DIR", help="save each case's checkpoint as DIR/<case>.ckpt")
    parser.add_argument("--verbose", action="store_true", help="keep Lightning's warnings and info logs")
    args = parser.parse_args(argv)

    if args.plan:
        import_lightning(["pytorch_lightning"], quiet=not args.verbose)  # while the caller prepares the plan
        if args.plan == "-":
            plan = json.load(sys.stdin)
        else:
            with open(args.plan, encoding="utf-8") as fh:
                plan = json.load(fh)
        results = run_plan(plan, args.side, quiet=not args.verbose)
    else:
        if not args.cases:
            parser.error("give case files or --plan")
        watch = None
        if args.watch:
            with open(args.watch, encoding="utf-8") as fh:
                watch = json.load(fh)
        results = run_cases(
            args.cases, args.side, watch=watch, seed=args.seed, quiet=not args.verbose,
            checkpoint_dir=args.save_checkpoints,
        )
    text = json.dumps(results)
    if args.out == "-":
        sys.stdout.write(text + "\n")
    else:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text)
    failed = [name for name, rec in results["cases"].items() if rec["error"]]
    for name in failed:
        sys.stderr.write(f"case {name} failed: {results['cases'][name]['error']}\n")
    return 0


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # An interpreter holding torch takes seconds to shut down (2-3 s on a busy 2-core machine);
    # the results are written and nothing else needs tidying: leave at once.
    os._exit(status)
