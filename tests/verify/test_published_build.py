"""Assembling published-model cases from a (fake) installed package: no network, no Lightning."""

import textwrap

import pytest

from lightmigrate.verify import published


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


@pytest.fixture
def site(tmp_path):
    root = tmp_path / "site"
    _write(root / "pkg" / "__init__.py", "import pkg.heavy  # the real package imports everything\n")
    _write(root / "pkg" / "util.py", '''\
        """helpers"""
        from __future__ import annotations

        def mark(cls):
            cls.marked = True
            return cls
        ''')
    _write(root / "pkg" / "models" / "net.py", '''\
        import math
        from pkg.util import mark


        @mark
        class Net:
            def value(self):
                return math.pi
        ''')
    return root


def _case(tmp_path, published_literal, body="def lightmigrate_case():\n    return {'model': Net()}\n"):
    return _write(tmp_path / "cases" / "my_case.py", f'"""Doc of my case."""\nPUBLISHED = {published_literal}\n' + body)


def test_build_case_inlines_original_sources_in_order(tmp_path, site):
    path = _case(tmp_path, '{"package": "pkg==1.0", "module": "pkg.models.net", "inline": ["pkg.util"]}')
    case = published.read_case(path)
    assert (case.package, case.module, case.inline, case.root) == ("pkg==1.0", "pkg.models.net", ("pkg.util",), "pkg")
    out = published.build_case(case, site, tmp_path / "out")
    text = out.read_text()
    assert text.startswith('"""Doc of my case."""\nfrom __future__ import annotations\n')
    assert text.index("def mark(cls)") < text.index("class Net:") < text.index("def lightmigrate_case")
    assert "# [lightmigrate: inlined above] from pkg.util import mark" in text
    namespace = {}
    exec(compile(text, str(out), "exec"), namespace)
    model = namespace["lightmigrate_case"]()["model"]
    assert model.marked and model.value() > 3


def test_import_from_a_module_that_is_not_inlined_is_an_error(tmp_path, site):
    case = published.read_case(_case(tmp_path, '{"package": "pkg==1.0", "module": "pkg.models.net"}'))
    with pytest.raises(published.PublishedCaseError, match="pkg.util, which is not inlined"):
        published.build_case(case, site, tmp_path / "out")


def test_import_of_a_name_the_inlined_module_lacks_is_an_error(tmp_path, site):
    _write(site / "pkg" / "models" / "net.py", "from pkg.util import missing\n")
    case = published.read_case(_case(tmp_path, '{"package": "pkg==1.0", "module": "pkg.models.net", "inline": ["pkg.util"]}'))
    with pytest.raises(published.PublishedCaseError, match="defines no missing"):
        published.build_case(case, site, tmp_path / "out")


@pytest.mark.parametrize(
    "literal, message",
    [
        ('{"package": "pkg", "module": "pkg.models.net"}', "pin the package"),
        ('{"module": "pkg.models.net"}', "needs string keys"),
        ('{"package": "pkg==1", "module": "m", "inline": "pkg.util"}', "must be a list"),
        ("dict(package='pkg==1')", "literal dict"),
    ],
)
def test_malformed_published_literals(tmp_path, literal, message):
    with pytest.raises(published.PublishedCaseError, match=message):
        published.read_case(_case(tmp_path, literal))


def test_case_without_published_literal(tmp_path):
    path = _write(tmp_path / "plain.py", '"""x"""\n')
    with pytest.raises(published.PublishedCaseError, match="no top-level PUBLISHED"):
        published.read_case(path)


def test_install_is_skipped_when_the_target_already_holds_the_package(tmp_path):
    target = tmp_path / "t"
    target.mkdir()
    (target / ".lightmigrate-installed").write_text("pkg==1.0")
    assert published.install("pkg==1.0", target, python="/nonexistent/python") == target


def test_published_files_lists_the_repo_folder():
    names = [p.stem for p in published.published_files()]
    assert names == sorted(names) and len(names) >= 3
