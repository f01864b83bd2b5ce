"""A small 1.x project whose training script builds its Trainer from argparse (issue 25, kind 2)."""
