"""LM001 epoch-end outputs (placeholder while the rule is being written; replaced shortly)."""
from __future__ import annotations

import libcst as cst

from lightmigrate.rules.base import Rule, RuleContext, Safety


class EpochEndRule(Rule):
    code = "LM001"
    name = "epoch-end-outputs"
    summary = "`*_epoch_end(outputs)` hooks become `on_*_epoch_end` with explicit output buffers."
    spec_rows = ("M1", "M2", "M3", "M6")
    guide = "https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html"
    safety = Safety.PRESERVING
    triggers = ("_epoch_end",)

    def apply(self, module: cst.Module, ctx: RuleContext) -> cst.Module:
        return module
