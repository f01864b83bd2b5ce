#!/usr/bin/env bash
# Sets up the two environments the tests need:
#   .venv       lightmigrate with its verify and test extras (Lightning 2.x, torch CPU)
#   .venv-pl19  real pytorch-lightning 1.9.5, the ground truth for behaviour tests
# Safe to re-run: an environment whose inputs did not change is left as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

stamp() { cat pyproject.toml constraints.txt "$0" | sha256sum | cut -d' ' -f1; }
want=$(stamp)

if [ ! -x .venv/bin/python ] || [ "$(cat .venv/.lightmigrate-stamp 2>/dev/null)" != "$want" ]; then
    "$PY" -m venv .venv
    .venv/bin/pip install -q -c constraints.txt -e ".[verify,test]"
    echo "$want" > .venv/.lightmigrate-stamp
fi

if [ ! -x .venv-pl19/bin/python ] || [ "$(cat .venv-pl19/.lightmigrate-stamp 2>/dev/null)" != "$want" ]; then
    "$PY" -m venv .venv-pl19
    .venv-pl19/bin/pip install -q -c constraints.txt torch==2.13.0 "pytorch-lightning==1.9.5"
    # 1.9.5 imports pkg_resources; torch's metadata wants a newer setuptools, so this is a second
    # run, whose expected conflict report pip-known-conflict.sh replaces with one line.
    bash scripts/pip-known-conflict.sh .venv-pl19/bin/pip install -q "setuptools<70"
    echo "$want" > .venv-pl19/.lightmigrate-stamp
fi
