"""Helpers shared by several rules (class editing, markers, Trainer keyword reading, import rewriting)."""
