"""The project's training script: Trainer options from the command line (1.x style)."""
import argparse

import torch
import pytorch_lightning as pl

from argscript.model import Regressor


def build_parser():
    parser = argparse.ArgumentParser(description="train the regressor")
    parser.add_argument("--lr", type=float, default=0.05)
    parser = Regressor.add_model_specific_args(parser)
    parser = pl.Trainer.add_argparse_args(parser)
    parser.set_defaults(max_epochs=1)
    return parser


def make_trainer(argv=None):
    args = build_parser().parse_args(argv)
    if args.gpus:
        torch.backends.cudnn.benchmark = True
    if args.fast_dev_run:
        args.limit_train_batches = 1
    print(f"training for {args.max_epochs} epochs")
    model = Regressor(lr=args.lr, hidden=args.hidden)
    trainer = pl.Trainer.from_argparse_args(args, logger=False, enable_checkpointing=False,
                                            enable_progress_bar=False, enable_model_summary=False)
    return trainer, model, args
