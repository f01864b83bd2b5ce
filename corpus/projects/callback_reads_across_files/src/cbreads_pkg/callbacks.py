import pytorch_lightning as pl


class EpochReport(pl.Callback):
    """Reports, at each epoch end, what the module's epoch-end hooks just computed."""

    def on_train_epoch_end(self, trainer, pl_module):
        pl_module.log("report_train_loss", pl_module.epoch_loss)

    def on_validation_epoch_end(self, trainer, pl_module):
        logged = trainer.callback_metrics.get("val_err")
        pl_module.reports.append((trainer.sanity_checking, float(pl_module.val_err), logged is not None))
        if not trainer.sanity_checking:
            pl_module.log("report_val_err", logged)
            pl_module.log("report_count", float(len(pl_module.reports)))
