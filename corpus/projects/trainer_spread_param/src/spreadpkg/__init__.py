"""A small 1.x project whose functions spread a parameter into the Trainer, called from modules
that never mention the Trainer (issue 25, kind 2)."""
