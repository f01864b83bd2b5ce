"""Reading and removing Trainer keyword arguments in one file.

Rules that switch a module to manual optimization must take ``accumulate_grad_batches`` and
``gradient_clip_val`` away from the Trainer (2.x raises for them under manual optimization) and
reproduce them in the module. They look in two places of the same file: ``Trainer(...)`` calls
(``pl.Trainer``, ``Trainer``, ``lightning.Trainer``, a name the Trainer is imported as...) and dict literals whose string keys are
all Trainer argument names (``trainer_kwargs = {"max_epochs": 2, "accumulate_grad_batches": 2}``).

API: :func:`find` (name -> value expression, first occurrence wins) and :func:`remove`.
"""

from __future__ import annotations

from typing import Dict, FrozenSet, Iterable, List, Set, Union

import libcst as cst
from lightmigrate.cst.walk import transform, PrunedTransformer, walk

# Trainer arguments manual optimization rejects.
MANUAL_REJECTS = ("accumulate_grad_batches", "gradient_clip_val", "gradient_clip_algorithm")

# Keyword arguments of the 1.9 Trainer (enough to recognise a dict of Trainer kwargs).
TRAINER_ARGS = frozenset("""
logger enable_checkpointing callbacks default_root_dir gradient_clip_val gradient_clip_algorithm
num_nodes num_processes devices gpus auto_select_gpus tpu_cores ipus enable_progress_bar
overfit_batches track_grad_norm check_val_every_n_epoch fast_dev_run accumulate_grad_batches
max_epochs min_epochs max_steps min_steps max_time limit_train_batches limit_val_batches
limit_test_batches limit_predict_batches val_check_interval log_every_n_steps accelerator
strategy sync_batchnorm precision enable_model_summary num_sanity_val_steps resume_from_checkpoint
profiler benchmark deterministic reload_dataloaders_every_n_epochs auto_lr_find replace_sampler_ddp
detect_anomaly auto_scale_batch_size plugins amp_backend amp_level move_metrics_to_cpu
multiple_trainloader_mode inference_mode use_distributed_sampler barebones
""".split())


def _is_trainer_call(node: cst.Call, aliases: FrozenSet[str] = frozenset()) -> bool:
    func = node.func
    if isinstance(func, cst.Name):
        return func.value == "Trainer" or func.value in aliases
    return isinstance(func, cst.Attribute) and func.attr.value == "Trainer"


def trainer_aliases(module: cst.Module) -> FrozenSet[str]:
    """The other names the module imports Lightning's Trainer as (``PLT`` for ``from
    pytorch_lightning import Trainer as PLT``, ``from lightning.pytorch import Trainer as T``):
    calls of them make a Trainer too."""
    found: Set[str] = set()

    class V(cst.CSTVisitor):
        def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
            if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
                return False
            root = _dotted(node.module).split(".")[0]
            if root not in ("pytorch_lightning", "lightning"):
                return False
            for alias in node.names:
                if (alias.asname is not None and isinstance(alias.name, cst.Name) and alias.name.value == "Trainer"
                        and isinstance(alias.asname.name, cst.Name)):
                    found.add(alias.asname.name.value)
            return False

    walk(module, V())
    return frozenset(found - {"Trainer"})


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return _dotted(node.value) + "." + node.attr.value
    return ""


def _key(element: cst.BaseDictElement) -> Union[str, None]:
    if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString):
        value = element.key.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _is_trainer_dict(node: cst.Dict) -> bool:
    keys = [_key(e) for e in node.elements]
    return bool(keys) and all(k is not None and k in TRAINER_ARGS for k in keys)


def find(module: cst.Module, names: Iterable[str]) -> Dict[str, cst.BaseExpression]:
    """The values given to the Trainer arguments ``names`` in ``module``."""
    wanted = set(names)
    found: Dict[str, cst.BaseExpression] = {}
    aliases = trainer_aliases(module)

    class V(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if _is_trainer_call(node, aliases):
                for arg in node.args:
                    if arg.keyword is not None and arg.keyword.value in wanted:
                        found.setdefault(arg.keyword.value, arg.value)

        def visit_Dict(self, node: cst.Dict) -> None:
            if _is_trainer_dict(node):
                for e in node.elements:
                    k = _key(e)
                    if k in wanted and isinstance(e, cst.DictElement):
                        found.setdefault(k, e.value)

    walk(module, V())
    return found


def remove(module: cst.Module, names: Iterable[str]) -> cst.Module:
    """``module`` without the Trainer arguments ``names`` (in calls and Trainer-kwargs dicts)."""
    drop = set(names)
    aliases = trainer_aliases(module)

    class T(PrunedTransformer):
        def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
            if not _is_trainer_call(updated, aliases):
                return updated
            args = [a for a in updated.args if a.keyword is None or a.keyword.value not in drop]
            if len(args) == len(updated.args):
                return updated
            return updated.with_changes(args=_fix_commas(args, updated.args))

        def leave_Dict(self, original: cst.Dict, updated: cst.Dict) -> cst.Dict:
            if not _is_trainer_dict(updated):
                return updated
            elements = [e for e in updated.elements if _key(e) not in drop]
            if len(elements) == len(updated.elements):
                return updated
            return updated.with_changes(elements=_fix_commas(elements, updated.elements))

    return transform(module, T())


def _fix_commas(kept: List, original) -> List:
    """The last kept item takes the trailing comma the original last item had."""
    if not kept:
        return kept
    last_original = list(original)[-1]
    kept = list(kept)
    kept[-1] = kept[-1].with_changes(comma=last_original.comma)
    return kept
