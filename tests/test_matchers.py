"""lightmigrate.matchers: libcst.matchers, imported on first use."""

import subprocess
import sys

import libcst as cst


def test_importing_the_cli_does_not_import_libcst_matchers():
    code = "import sys, lightmigrate.cli; print('libcst.matchers' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_m_is_the_module_once_used():
    import libcst.matchers as real

    from lightmigrate.matchers import m

    assert m.matches(cst.Name("x"), m.Name("x")) and not m.matches(cst.Name("y"), m.Name("x"))
    assert m.Call is real.Call and "Call" in vars(m)  # copied: later lookups skip __getattr__
