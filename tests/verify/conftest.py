"""Shared fixtures for the verify tests."""

import os
from pathlib import Path

import pytest

from lightmigrate.verify import oracle


def require_oracle() -> Path:
    """The real pytorch-lightning 1.9.5 interpreter: a test that needs it FAILS under CI when it
    is missing (CI must install it) and skips on a developer machine without it."""
    python = oracle.default_oracle_python()
    if not python.exists():
        message = (f"pytorch-lightning 1.9.5 oracle interpreter not found at {python}; run "
                   f"scripts/setup-dev.sh or set {oracle.ORACLE_ENV}")
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return python


@pytest.fixture
def oracle_python() -> Path:
    return require_oracle()
