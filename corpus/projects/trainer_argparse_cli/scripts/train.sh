#!/bin/sh
# The short training run the project's README describes.
python -m cliscript.train --max_epochs 2 --limit_train_batches 3 --lr 0.1 "$@"
