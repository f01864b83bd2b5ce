"""The rule registry. Each rule lives in its own module; ``ALL_RULES`` lists them in run order."""

from __future__ import annotations

from typing import Dict, List, Sequence

from lightmigrate.rules.base import Example, Handling, Rule, RuleContext, Safety
from lightmigrate.rules.lm309_behaviour_notes import BehaviourNotesRule
from lightmigrate.rules.lm307_callback_api import CallbackApiRule
from lightmigrate.rules.lm303_dataloader_idx import DataloaderIdxRule
from lightmigrate.rules.lm002_dead_hooks import DeadHooksRule
from lightmigrate.rules.lm001_epoch_end import EpochEndRule
from lightmigrate.rules.lm302_grad_norm import GradNormRule
from lightmigrate.rules.lm305_legacy_hooks import LegacyHooksRule
from lightmigrate.rules.lm306_legacy_module_api import LegacyModuleApiRule
from lightmigrate.rules.lm301_log_dict import LogDictRule
from lightmigrate.rules.lm203_loggers_cli import LoggersCliRule
from lightmigrate.rules.lm308_module_api import ModuleApiRule
from lightmigrate.rules.lm310_train_mode import TrainModeRule
from lightmigrate.rules.lm201_moved_imports import MovedImportsRule
from lightmigrate.rules.lm005_multi_optimizer import MultiOptimizerRule
from lightmigrate.rules.lm004_optimizer_hooks import OptimizerHooksRule
from lightmigrate.rules.lm304_precision_attr import PrecisionAttrRule
from lightmigrate.rules.lm090_removed_api import RemovedApiRule
from lightmigrate.rules.lm202_removed_imports import RemovedApisRule
from lightmigrate.rules.lm003_step_end import StepEndRule
from lightmigrate.rules.lm006_tbptt import TbpttRule
from lightmigrate.rules.lm102_trainer_api import TrainerApiRule
from lightmigrate.rules.lm101_trainer_constructor import TrainerConstructorRule
from lightmigrate.rules.lm210_unified_imports import UnifiedImportsRule

# LM3xx (hooks, issue 6) run just before LM002 so that it marks only what they could not fix.
HOOKS_RULES: List[Rule] = [LogDictRule(), GradNormRule(), DataloaderIdxRule(), PrecisionAttrRule(), LegacyHooksRule(),
                            LegacyModuleApiRule(), CallbackApiRule(), ModuleApiRule(),
                            BehaviourNotesRule(), TrainModeRule()]

# Run order matters: step-end hooks become part of the step (or batch-end hooks) before the
# epoch-end rule adds its buffers; LM002 marks whatever hook is still dead; then imports (moved
# names first, then markers for removed ones) and the Trainer rules; LM090 (last resort) runs
# last and marks any removed 1.x API no other rule handled.
ALL_RULES: List[Rule] = [MultiOptimizerRule(), TbpttRule(), OptimizerHooksRule(), StepEndRule(), EpochEndRule(),
                         *HOOKS_RULES, DeadHooksRule(), MovedImportsRule(), RemovedApisRule(), LoggersCliRule(),
                         TrainerApiRule(), TrainerConstructorRule(),
                         RemovedApiRule()]  # LM090 last: it marks what no other rule handled
# Opt-in rules are not in the default selection (ALL_RULES): they run last, and only when
# asked for by their exact code (``--select LM210``) or their flag (``--unified-imports``).
OPT_IN_RULES: List[Rule] = [UnifiedImportsRule()]


def rules_by_code() -> Dict[str, Rule]:
    return {r.code: r for r in [*ALL_RULES, *OPT_IN_RULES]}


def select_rules(codes: Sequence[str] = (), opt_in: Sequence[str] = ()) -> List[Rule]:
    """Rules whose code starts with one of ``codes`` (all default rules when empty), in run
    order, then the opt-in rules named by their exact code in ``codes`` or ``opt_in``."""
    wanted = set(codes) | set(opt_in)
    chosen = [r for r in ALL_RULES if not codes or any(r.code.startswith(c) for c in codes)]
    return chosen + [r for r in OPT_IN_RULES if r.code in wanted]


__all__ = ["ALL_RULES", "OPT_IN_RULES", "Example", "Handling", "Rule", "RuleContext", "Safety", "rules_by_code", "select_rules"]
