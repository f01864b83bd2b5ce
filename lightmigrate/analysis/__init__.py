"""Project analysis on Python's ast: the class index across files, per-file facts, and text patterns searched before parsing."""
