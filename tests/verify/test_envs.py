"""The environments `verify --pytest` builds itself: what is read from a project, what each
side gets, the cache key, the command lines (uv or pip), the cache, a failed build. The
installer is a fake (a real build is too slow for the suite: minutes, a GB per environment)."""

import json
import os
import sys
from pathlib import Path

import pytest

from lightmigrate.verify import envs
from lightmigrate.verify.envs import (
    EnvBuildError, build_commands, build_environments, environment_specs, ensure_environment, read_requirements,
)

def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


PYPROJECT = '''
[project]
name = "proj"
version = "0.1"
dependencies = ["torch>=1.13", "pytorch-lightning[extra]==1.8.6", "numpy<2; python_version < '3.13'"]

[project.optional-dependencies]
test = ["pytest-mock"]
docs = ["sphinx"]

[dependency-groups]
lint = ["ruff"]
testing = ["hypothesis", {include-group = "base"}]
base = ["pyyaml"]
'''


def test_reads_pyproject_test_extras_groups_and_requirement_files(tmp_path):
    write(tmp_path / "pyproject.toml", PYPROJECT)
    write(tmp_path / "requirements.txt", "# comment\n-r requirements/base.txt\n-e .\ntorchmetrics>=0.11  # inline\n"
                                         "--extra-index-url https://example.invalid/simple\n-c pins.txt\n")
    write(tmp_path / "requirements" / "base.txt", "lightning-utilities \\\n  >=0.7\n../shared\n")
    write(tmp_path / "requirements" / "docs.txt", "sphinx\n")  # docs: not read
    write(tmp_path / "pins.txt", "numpy==1.26.4\n")
    req = read_requirements(tmp_path)
    assert req.lines == ["torch>=1.13", "numpy<2; python_version < '3.13'", "pytest-mock", "hypothesis", "pyyaml",
                         "lightning-utilities >=0.7", str((tmp_path / "shared").resolve()),
                         "torchmetrics>=0.11", "--extra-index-url https://example.invalid/simple"]
    assert req.lightning == ["pytorch-lightning"] and req.version == "1.8.6"
    assert req.constraints == [str((tmp_path / "pins.txt").resolve())]
    assert req.sources == ["pyproject.toml ([project] dependencies, [project.optional-dependencies] test, "
                           "[dependency-groups] testing)", "requirements.txt", os.path.join("requirements", "base.txt")]
    assert req.skipped == [". (requirements.txt: the project itself; its copies run from their folders)"]


def test_dev_extra_only_when_there_is_no_test_one(tmp_path):
    write(tmp_path / "pyproject.toml", '[project]\nname = "p"\n[project.optional-dependencies]\ndev = ["pytest-cov"]\n')
    assert read_requirements(tmp_path).lines == ["pytest-cov"]
    write(tmp_path / "pyproject.toml", '[project]\nname = "p"\n[project.optional-dependencies]\n'
                                       'dev = ["pytest-cov"]\ntests = ["pytest-mock"]\n')
    assert read_requirements(tmp_path).lines == ["pytest-mock"]


def test_given_requirement_files_replace_the_project_s(tmp_path):
    write(tmp_path / "pyproject.toml", PYPROJECT)
    mine = write(tmp_path / "ci" / "reqs.txt", "lightning==1.9.4\nscipy\n")
    req = read_requirements(tmp_path, [str(mine)])
    assert req.lines == ["scipy"] and req.lightning == ["lightning"] and req.version == "1.9.4"


def specs(tmp_path, **kw):
    req = read_requirements(tmp_path)
    return environment_specs(req, python=sys.executable, installer="pip", **kw)


def test_lightning_pins_per_side_and_pytest_on_both(tmp_path):
    write(tmp_path / "pyproject.toml", PYPROJECT)
    plan = specs(tmp_path)
    before, after = plan.specs["before"], plan.specs["after"]
    assert before.requirements[0] == "pytorch-lightning==1.8.6"  # the project's pin
    assert before.setup == ("setuptools<70",) and after.setup == ()
    assert after.requirements[:2] == ("lightning==2.6.6", "pytorch-lightning==2.6.6")
    for spec in (before, after):
        assert spec.requirements[-1] == "pytest" and "torch>=1.13" in spec.requirements
        assert not any(r.startswith("pytorch-lightning[") for r in spec.requirements)
    assert "before: pytorch-lightning==1.8.6 (the project's pin)" in plan.notes[1]
    # no pin in the project: 1.9.5; the versions can be chosen
    write(tmp_path / "pyproject.toml", '[project]\nname = "p"\ndependencies = ["lightning>=1.8,<2"]\n')
    assert specs(tmp_path).specs["before"].requirements[0] == "lightning==1.9.5"
    chosen = specs(tmp_path, before_version="1.9.0", after_version="2.1.0").specs
    assert chosen["before"].requirements[0] == "lightning==1.9.0"
    assert chosen["after"].requirements[:2] == ("lightning==2.1.0", "pytorch-lightning==2.1.0")
    # nothing about Lightning at all
    write(tmp_path / "pyproject.toml", '[project]\nname = "p"\n')
    assert specs(tmp_path).specs["before"].requirements == ("pytorch-lightning==1.9.5", "pytest")


def test_the_key_follows_the_inputs(tmp_path):
    write(tmp_path / "pyproject.toml", PYPROJECT)
    cons = write(tmp_path / "constraints.txt", "torch==2.13.0\n")
    key = specs(tmp_path, constraints=[str(cons)]).specs["before"].key()
    assert specs(tmp_path, constraints=[str(cons)]).specs["before"].key() == key  # stable
    assert specs(tmp_path, constraints=[str(cons)]).specs["after"].key() != key
    assert specs(tmp_path).specs["before"].key() != key
    cons.write_text("torch==2.12.0\n")  # the constraints by their contents
    assert specs(tmp_path, constraints=[str(cons)]).specs["before"].key() != key
    cons.write_text("torch==2.13.0\n")
    assert specs(tmp_path, constraints=[str(cons)], before_version="1.9.4").specs["before"].key() != key
    write(tmp_path / "requirements-test.txt", "pytest-mock\n")
    assert specs(tmp_path, constraints=[str(cons)]).specs["before"].key() != key
    name = specs(tmp_path).specs["before"].folder_name()
    assert name.startswith(f"before-py{sys.version_info[0]}{sys.version_info[1]}-")


def test_pip_and_uv_command_lines(tmp_path, monkeypatch):
    write(tmp_path / "pyproject.toml", PYPROJECT)
    cons = write(tmp_path / "constraints.txt", "torch==2.13.0\n")
    folder = tmp_path / "env"
    py = str(folder / "bin" / "python")
    req = str(folder / envs.REQUIREMENTS_FILE)
    pip = specs(tmp_path, constraints=[str(cons)]).specs["before"]
    cmds = [c for _, c in build_commands(pip, folder)]
    assert cmds == [
        [sys.executable, "-m", "venv", str(folder)],
        [py, "-m", "pip", "install", "--disable-pip-version-check", "--progress-bar", "off", "-r", req,
         "-c", str(cons.resolve())],
        [py, "-m", "pip", "install", "--disable-pip-version-check", "--progress-bar", "off", "setuptools<70"],
    ]
    monkeypatch.setattr(envs.shutil, "which", lambda name: "/opt/bin/uv" if name == "uv" else None)
    req_ = read_requirements(tmp_path)
    uv = environment_specs(req_, constraints=[str(cons)], python=sys.executable).specs  # auto: uv on PATH
    assert uv["after"].installer == "uv"
    assert [c for _, c in build_commands(uv["after"], folder)] == [
        ["/opt/bin/uv", "venv", "--python", sys.executable, str(folder)],
        ["/opt/bin/uv", "pip", "install", "--python", py, "-r", req, "-c", str(cons.resolve())],
    ]
    assert build_commands(uv["before"], folder)[2][1] == ["/opt/bin/uv", "pip", "install", "--python", py,
                                                          "setuptools<70"]
    assert uv["after"].key() != environment_specs(req_, constraints=[str(cons)], python=sys.executable,
                                                  installer="pip").specs["after"].key()
    monkeypatch.setattr(envs.shutil, "which", lambda name: None)
    assert environment_specs(req_, python=sys.executable).specs["after"].installer == "pip"
    with pytest.raises(EnvBuildError, match="uv is not on PATH"):
        environment_specs(req_, python=sys.executable, installer="uv")


class FakeInstaller:
    """Records the commands; `venv` makes the interpreter file; fails on a chosen step."""

    def __init__(self, fail_on=None):
        self.commands = []
        self.fail_on = fail_on

    def __call__(self, cmd, on_line):
        self.commands.append(list(cmd))
        if self.fail_on and self.fail_on in cmd:
            return 1, "Collecting nothing\nERROR: No matching distribution found for nothing==0\n"
        if "venv" in cmd:
            python = Path(cmd[-1]) / "bin" / "python"
            python.parent.mkdir(parents=True)
            python.write_text("")
        on_line("Installing collected packages: something")
        return 0, "ok\n"


def test_a_cached_environment_is_not_built_again(tmp_path):
    project = tmp_path / "proj"
    write(project / "pyproject.toml", '[project]\nname = "p"\ndependencies = ["pytorch-lightning==1.9.4"]\n')
    fake, said = FakeInstaller(), []
    cache = tmp_path / "cache"
    pythons = build_environments(project, cache=cache, run=fake, installer="pip",
                                 progress=lambda text, detail: said.append((text, detail)))
    assert len(fake.commands) == 5  # before: venv, install, setuptools; after: venv, install
    before = Path(pythons["before"])
    assert before.parent.parent.parent == cache / "envs"
    folder = before.parent.parent
    assert (folder / envs.REQUIREMENTS_FILE).read_text().splitlines() == ["pytorch-lightning==1.9.4", "pytest"]
    assert json.loads((folder / envs.MARKER).read_text())["requirements"][0] == "pytorch-lightning==1.9.4"
    assert ("Installing collected packages: something", True) in said
    assert any(text.startswith("before: installing pytorch-lightning==1.9.4, pytest") for text, _ in said)
    # the same inputs: nothing runs
    again = FakeInstaller()
    assert build_environments(project, cache=cache, run=again, installer="pip") == pythons
    assert again.commands == []
    # --rebuild-envs, or one side only
    build_environments(project, ["after"], cache=cache, run=again, installer="pip", rebuild=True)
    assert len(again.commands) == 2 and "venv" in again.commands[0]
    # a changed requirement: a new environment
    write(project / "requirements.txt", "scipy\n")
    new = FakeInstaller()
    assert build_environments(project, cache=cache, run=new, installer="pip")["before"] != pythons["before"]
    assert len(new.commands) == 5


def test_an_unfinished_environment_is_built_again(tmp_path):
    project = tmp_path / "proj"
    write(project / "pyproject.toml", '[project]\nname = "p"\n')
    spec = environment_specs(read_requirements(project), ["after"], python=sys.executable, installer="pip").specs["after"]
    folder = tmp_path / "cache" / "envs" / spec.folder_name()
    write(folder / "bin" / "python", "")  # no marker: a build that was interrupted
    fake = FakeInstaller()
    ensure_environment(spec, tmp_path / "cache", run=fake)
    assert len(fake.commands) == 2 and (folder / envs.MARKER).is_file()


def test_a_failed_build_says_why_and_leaves_nothing(tmp_path):
    project = tmp_path / "proj"
    write(project / "pyproject.toml", '[project]\nname = "p"\n')
    spec = environment_specs(read_requirements(project), ["before"], python=sys.executable,
                             installer="pip").specs["before"]
    with pytest.raises(EnvBuildError) as info:
        ensure_environment(spec, tmp_path / "cache", run=FakeInstaller(fail_on="-r"))
    message = str(info.value)
    assert message.startswith("building the before environment failed: `")
    assert "exited 1:" in message and "No matching distribution found for nothing==0" in message
    assert not (tmp_path / "cache" / "envs" / spec.folder_name()).exists()


def test_a_missing_constraints_file_is_refused(tmp_path):
    write(tmp_path / "requirements.txt", "-c nowhere.txt\n")
    with pytest.raises(EnvBuildError, match="constraints file not found"):
        specs(tmp_path)


def test_the_cache_folder(monkeypatch, tmp_path):
    monkeypatch.delenv(envs.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert envs.cache_root() == tmp_path / "xdg" / "lightmigrate"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert envs.cache_root() == Path.home() / ".cache" / "lightmigrate"
    monkeypatch.setenv(envs.CACHE_ENV, str(tmp_path / "mine"))
    assert envs.cache_root() == tmp_path / "mine"


def test_verify_pytest_builds_what_is_missing_and_exits_2_when_a_build_fails(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from lightmigrate.cli import main

    project = tmp_path / "proj"
    write(project / "pyproject.toml", '[project]\nname = "p"\ndependencies = ["nothing==0"]\n')
    write(project / "tests" / "test_x.py", "def test_x():\n    pass\n")
    cons = write(tmp_path / "constraints.txt", "torch==2.13.0\n")
    fake = FakeInstaller(fail_on="-r")
    monkeypatch.setattr(envs, "run_command", fake)
    monkeypatch.setenv(envs.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv("CI", "1")
    monkeypatch.chdir(project)
    result = CliRunner().invoke(main, ["verify", "--pytest", "tests", "--before", sys.executable, "-c", str(cons),
                                       "--installer", "pip", "--after-lightning", "2.1.0"])
    assert result.exit_code == 2, result.output
    assert len(fake.commands) == 2 and "after-py" in fake.commands[0][-1]  # --before given: the after side only
    assert fake.commands[1][-2:] == ["-c", str(cons.resolve())]
    out = result.output
    assert "lightmigrate: after: installing lightning==2.1.0, pytorch-lightning==2.1.0, nothing==0, pytest" in out
    assert "building the after environment failed" in out
    assert "No matching distribution found for nothing==0" in out.split("building the after environment failed")[1]
    assert not any((tmp_path / "cache" / "envs").iterdir())


def test_environment_options_need_pytest(tmp_path):
    from click.testing import CliRunner

    from lightmigrate.cli import main

    cons = write(tmp_path / "constraints.txt", "torch==2.13.0\n")
    for extra in (["-c", str(cons)], ["--rebuild-envs"], ["--installer", "pip"], ["--before-lightning", "1.9.4"]):
        result = CliRunner().invoke(main, ["verify", *extra, str(tmp_path)])
        assert result.exit_code == 2, result.output
        assert "build the environments of --pytest" in result.output


def test_build_steps_are_lines_and_installer_lines_show_only_on_a_terminal(monkeypatch):
    import io

    from lightmigrate.output.progress import step_status

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setenv("CI", "1")
    plain = io.StringIO()
    with step_status(plain) as say:
        say("before: installing pytorch-lightning==1.9.5, pytest", False)
        say("Collecting torch==2.13.0", True)
    assert plain.getvalue() == "lightmigrate: before: installing pytorch-lightning==1.9.5, pytest\n"
    monkeypatch.delenv("CI")
    terminal = Terminal()
    with step_status(terminal) as say:
        say("before: installing [x]", False)
        say("Collecting torch==2.13.0", True)
    assert "before: installing [x]" in terminal.getvalue() and "Collecting torch==2.13.0" in terminal.getvalue()
