"""lightmigrate: migrate PyTorch Lightning 1.x code to Lightning 2.x, and verify the result.

The package root stays import-light: the verify runner imports parts of it inside a real
pytorch-lightning 1.9.5 interpreter, which has neither libcst nor click.
"""

__version__ = "0.1.0"

MARKER_PREFIX = "TODO(lightmigrate):"
