"""Shared by every test: the suite runs `lightmigrate verify` cold (a fresh interpreter per side),
as it always did, so no warm worker outlives a test run; tests/verify/test_warm_worker.py turns
the worker on where it tests it."""

import pytest


@pytest.fixture(autouse=True)
def _no_warm_verify_worker(monkeypatch):
    monkeypatch.setenv("LIGHTMIGRATE_VERIFY_SERVER", "0")
