"""Issue 25 kind 2 (argparse, DataModule): the training script declares the DataModule's options
with ``RegressionData.add_argparse_args(parser)`` (1.9 read them from its typed ``__init__``:
``int``, ``float``, ``bool`` with ``str_to_bool``, ``Optional[float]``; the untyped ``seed`` got
no option) and builds it with ``RegressionData.from_argparse_args(args, n_samples=32)``. The case
parses a fixed command line (``--batch_size 8 --normalize --noise 0.05 --val_fraction 0.25``),
trains with it, then the harness trains further on the same DataModule. Spec row C12.
"""
# SHIM-OUT-OF-SCOPE: 1.9 DataModule argparse methods
import pytorch_lightning as pl  # noqa: F401

from dmargs.train import train


def lightmigrate_case():
    trainer, model, data, args = train(["--epochs", "2", "--batch_size", "8", "--normalize", "--noise", "0.05",
                                        "--val_fraction", "0.25", "--lr", "0.1"])
    model.lr = 0.01 * trainer.global_step + 0.001 * data.batch_size + (0.01 if data.normalize else 0.0)
    return {
        "model": model,
        "datamodule": data,
        "trainer": {"max_epochs": args.epochs},
    }
