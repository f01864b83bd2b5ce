"""A small 1.x project with its own Trainer subclass (issue 25, kind 1)."""
