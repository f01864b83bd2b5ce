"""A small 1.x project whose script builds its DataModule from argparse (issue 25, kind 2)."""
