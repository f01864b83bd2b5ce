"""The warm worker of `lightmigrate verify` (lightmigrate/verify/warm.py, warm_server.py): started
by the first call, reused by the next, one for concurrent first calls, gone when idle, replaced
when its socket is stale, and verify falls back to the cold run when it cannot be used. Jobs
here are the worker's test calls (echo, sleep): the worker imports nothing heavy, so each test
takes about a second; one test runs a real case both ways."""

import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from lightmigrate.verify import oracle, session, warm

ROOT = Path(__file__).resolve().parents[2]
TINY_CASE = ROOT / "corpus" / "validation_single_loader.py"


@pytest.fixture
def rundir(monkeypatch):
    """A private runtime folder (short: a socket path has at most 107 bytes) with warm workers
    on; every worker that answered a test is stopped afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="lmw-"))
    folder.chmod(0o700)
    monkeypatch.setenv(warm.ENV_SWITCH, "1")
    monkeypatch.setenv(warm.ENV_DIR, str(folder))
    monkeypatch.setenv(warm.ENV_IDLE, "60")
    servers = set()
    yield folder, servers
    for pid in servers:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    shutil.rmtree(folder, ignore_errors=True)


def worker() -> warm.Worker:
    return warm.worker_for(sys.executable, oracle.runner_env())


def echo(w: warm.Worker, servers: set, **args) -> dict:
    result = w.call("echo", args)
    servers.add(result["ppid"])
    return result


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_for(predicate, seconds: float = 15.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def test_first_call_starts_the_worker_and_later_calls_reuse_it(rundir):
    folder, servers = rundir
    w = worker()
    assert not os.path.exists(w.socket_path)
    first = echo(w, servers, x=1)
    assert first["args"] == {"x": 1}
    assert os.path.exists(w.socket_path)
    second = echo(worker(), servers, x=2)
    assert second["ppid"] == first["ppid"]  # the same worker...
    assert second["pid"] != first["pid"]  # ...forked a fresh child for each job
    assert second["cwd"] != os.getcwd() and not os.path.exists(first["cwd"])  # a folder of its own, removed
    # the children are reaped (within a second of their exit): no zombie is left
    assert wait_for(lambda: not os.path.exists(f"/proc/{first['pid']}") and not os.path.exists(f"/proc/{second['pid']}"))


def test_an_idle_worker_exits_by_itself(rundir, monkeypatch):
    folder, servers = rundir
    monkeypatch.setenv(warm.ENV_IDLE, "1")
    w = worker()
    pid = echo(w, servers)["ppid"]
    assert wait_for(lambda: not alive(pid) and not os.path.exists(w.socket_path))
    assert echo(worker(), servers)["ppid"] != pid  # the next call starts a new one


def test_a_stale_socket_is_replaced_by_a_new_worker(rundir):
    folder, servers = rundir
    w = worker()
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(w.socket_path)  # a socket file nobody listens on (a worker killed with -9)
    dead.close()
    assert os.path.exists(w.socket_path)
    assert alive(echo(w, servers)["ppid"])


def test_concurrent_first_calls_start_one_worker_and_run_side_by_side(rundir):
    folder, servers = rundir
    results, errors = [], []

    def job():
        try:
            results.append(worker().call("sleep", {"seconds": 1.0}))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=job) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len({r["ppid"] for r in results}) == 1
    servers.update(r["ppid"] for r in results)
    starts = sorted(r["started"] for r in results)
    assert starts[-1] - starts[0] < 1.0  # no job waited for another to finish


def test_a_failing_job_raises_and_the_worker_stays(rundir):
    folder, servers = rundir
    w = worker()
    pid = echo(w, servers)["ppid"]
    with pytest.raises(warm.ServerError, match="TypeError"):
        w.call("sleep", {"seconds": "one"})
    assert echo(w, servers)["ppid"] == pid


def test_the_worker_is_keyed_by_interpreter_source_and_import_environment():
    env = {"PATH": "/bin", "PYTHONPATH": "/x"}
    key = warm.server_key("/usr/bin/python3", env, "f1")
    assert warm.server_key("/usr/bin/python3", {**env, "PATH": "/usr/bin"}, "f1") == key
    assert warm.server_key("/usr/bin/python3", {**env, "PYTHONPATH": "/y"}, "f1") != key
    assert warm.server_key("/usr/bin/python3", env, "f2") != key
    assert warm.server_key("/opt/venv/bin/python", env, "f1") != key


def test_switched_off_by_the_environment(monkeypatch):
    monkeypatch.setenv(warm.ENV_SWITCH, "0")
    with pytest.raises(warm.ServerError, match="off"):
        worker()


def test_a_case_verifies_the_same_warm_and_cold_and_a_broken_worker_falls_back(rundir, monkeypatch):
    folder, servers = rundir
    cases = Path(tempfile.mkdtemp(prefix="lmw-cases-"))
    shutil.copy(TINY_CASE, cases)
    (cases / "pending").mkdir()
    shutil.copy(TINY_CASE, cases / "pending" / "later.py")
    warm_report = session.verify_paths([str(cases)])
    shutil.rmtree(cases)
    (case,) = warm_report.cases
    assert case.verdict == "match", (case.error, case.differences[:2])
    # the worker ran it (no note says otherwise), and the note on pending/ is kept
    assert len(warm_report.notes) == 1 and warm_report.notes[0].startswith("left out 1 case(s)")
    sockets = list(folder.glob("*.sock"))
    assert len(sockets) == 1  # one worker for both sides (the shim runs on this interpreter)
    servers.add(worker().call("echo", {})["ppid"])

    def broken(self, name, args, imports=(), timeout=0):
        raise warm.ServerError("the worker's job ended without an answer")

    monkeypatch.setattr(warm.Worker, "call", broken)
    cold_report = session.verify_paths([str(TINY_CASE)])
    (cold,) = cold_report.cases
    assert cold.verdict == "match", (cold.error, cold.differences[:2])
    assert any("ran cold" in note and "without an answer" in note for note in cold_report.notes)


def test_an_abandoned_job_stops_its_child(rundir):
    folder, servers = rundir
    w = worker()
    first = echo(w, servers)
    server = first["ppid"]
    errors = []

    def job():
        try:
            w.call("sleep", {"seconds": 60, "note": str(folder / "job-folder")})
        except warm.ServerError as exc:
            errors.append(exc)

    thread = threading.Thread(target=job)
    thread.start()
    assert wait_for(lambda: (folder / "job-folder").exists())  # the job runs
    (child,) = set(children(server)) - {first["pid"]}
    started = time.monotonic()
    w.abort()  # what verify does on Ctrl-C
    thread.join(10)
    assert errors and time.monotonic() - started < 10
    assert wait_for(lambda: not os.path.exists(f"/proc/{child}"))  # stopped and reaped
    assert not os.path.exists((folder / "job-folder").read_text())  # its folder removed


def children(pid: int) -> list:
    with open(f"/proc/{pid}/task/{pid}/children") as fh:
        return [int(p) for p in fh.read().split()]
