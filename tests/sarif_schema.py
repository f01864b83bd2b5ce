"""The official SARIF 2.1.0 JSON schema, for validating lightmigrate's SARIF output.

No PyPI package ships the schema (checked: sarif-om, sarif-tools, pydantic-sarif,
sarif-pydantic, bandit-sarif-formatter, flake8-sarif-formatter), so it is taken at test time
from Microsoft's SARIF SDK package on npm (``@microsoft/jest-sarif``, which ships
``sarif-2.1.0-rtm.5.json``, the schema of the published 2.1.0 standard) and cached. Set
``LIGHTMIGRATE_SARIF_SCHEMA`` to a local copy of the schema to skip the download.
"""

import json
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

import pytest

PACKAGE = "@microsoft/jest-sarif@1.0.0-beta.0"
MEMBER = "package/lib/schemas/sarif-2.1.0-rtm.5.json"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "lightmigrate-tests" / "sarif-2.1.0-rtm.5.json"


def sarif_schema() -> dict:
    local = os.environ.get("LIGHTMIGRATE_SARIF_SCHEMA")
    if local:
        return json.loads(Path(local).read_text())
    if not CACHE.exists():
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail("npm is needed once to fetch the SARIF 2.1.0 schema (or set LIGHTMIGRATE_SARIF_SCHEMA)")
        with tempfile.TemporaryDirectory() as tmp:
            proc = subprocess.run([npm, "pack", PACKAGE, "--silent"], cwd=tmp, capture_output=True, text=True)
            if proc.returncode != 0:
                pytest.fail(f"cannot fetch the SARIF schema with npm: {proc.stderr}")
            tgz = next(Path(tmp).glob("*.tgz"))
            with tarfile.open(tgz) as tar:
                data = tar.extractfile(MEMBER).read()
            CACHE.parent.mkdir(parents=True, exist_ok=True)
            CACHE.write_bytes(data)
    schema = json.loads(CACHE.read_text())
    assert "Static Analysis Results Format (SARIF) Version 2.1.0" in schema["title"]
    return schema
