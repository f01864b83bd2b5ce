"""The project's training script: every Trainer option from the command line, none read here."""
import argparse

import pytorch_lightning as pl

from cliscript.model import Regressor


def train(argv=None, loader=None):
    parser = argparse.ArgumentParser(description="train the regressor")
    parser.add_argument("--lr", type=float, default=0.05)
    parser = pl.Trainer.add_argparse_args(parser)
    args = parser.parse_args(argv)
    model = Regressor(lr=args.lr)
    trainer = pl.Trainer.from_argparse_args(args, logger=False, enable_checkpointing=False,
                                            enable_progress_bar=False, enable_model_summary=False)
    trainer.fit(model, loader)
    return trainer, model


if __name__ == "__main__":
    train()
