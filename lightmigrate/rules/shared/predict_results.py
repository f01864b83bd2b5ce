"""The statements that rebuild what 1.x passed as ``results`` to ``on_predict_epoch_end``.

Lightning 1.x called ``on_predict_epoch_end(results)`` (the module's hook and the callbacks'
alike) with one list of predictions per dataloader; 2.x calls it without them. LM001 (the
module hook) and LM307 (the callback hook) both put these statements at the top of the
rewritten hook, so the old body keeps reading the same value.
"""

from __future__ import annotations

from typing import List

from lightmigrate.cst.helpers import Statement, parse_statements


def predict_results(s: str, local: str, loaders: str) -> List[Statement]:
    """Bind ``local`` to the 1.x ``results``: the trainer's predictions, wrapped in a list when
    there is one dataloader. ``s`` reaches the module (``self``, or a callback's ``pl_module``
    parameter); ``loaders`` is a free local name for the dataloaders."""
    return parse_statements(
        f"""
        {loaders} = {s}.trainer.predict_dataloaders
        {local} = {s}.trainer.predict_loop.predictions
        if not isinstance({loaders}, (list, tuple)) or len({loaders}) == 1:
            {local} = [{local}]
        """
    )
