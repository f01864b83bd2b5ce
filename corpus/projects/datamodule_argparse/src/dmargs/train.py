"""The project's training script: the DataModule's options from the command line (1.x style)."""
import argparse

import pytorch_lightning as pl

from dmargs.data import RegressionData
from dmargs.model import Regressor


def build_parser():
    parser = argparse.ArgumentParser(description="train the regressor")
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--epochs", type=int, default=1)
    parser = RegressionData.add_argparse_args(parser)
    return parser


def train(argv=None):
    args = build_parser().parse_args(argv)
    data = RegressionData.from_argparse_args(args, n_samples=32)
    model = Regressor(lr=args.lr)
    trainer = pl.Trainer(max_epochs=args.epochs, logger=False, enable_checkpointing=False,
                         enable_progress_bar=False, enable_model_summary=False)
    trainer.fit(model, datamodule=data)
    return trainer, model, data, args
