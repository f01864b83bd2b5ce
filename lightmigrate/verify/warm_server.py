"""The warm worker of ``lightmigrate verify``: one process per interpreter that imports torch and
Lightning once and then forks a fresh child for each job, so a verify call pays Lightning's
import (seconds) only when no worker is running. :mod:`lightmigrate.verify.warm` starts it
and talks to it; see there for when it is used.

    PYTHONPATH=<repo> python -m lightmigrate.verify.warm_server --socket PATH [--idle S] [--daemon]

It listens on a Unix socket. A connection sends ONE request, a JSON line
``{"call": NAME, "args": {...}, "env": {...}, "imports": [modules]}``; the worker imports
``imports`` (once; importing is safe before a fork, running torch code is not: a child forked
after torch used its thread pool hangs), forks, and the child runs ``CALLS[NAME](**args)`` in a
fresh temporary folder with the caller's environment, sends ``{"ok": true, "result": ...}`` (or
``{"ok": false, "error": ...}``) and leaves with ``os._exit`` (no interpreter shutdown: an
interpreter holding torch takes a while to exit). The worker reaps its children, and exits by
itself once it has been idle (no connection, no child) for ``--idle`` seconds, or when the
lightmigrate source it runs changed (``--fingerprint``). Only the stdlib is imported at module
level: the worker also runs in pytorch-lightning 1.x interpreters that have neither libcst nor click.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import importlib.util
import json
import os
import select
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
import traceback
from typing import Any, Callable, Dict, Optional, Sequence, Set

IDLE_SECONDS = 600.0
JOB_SECONDS = 900  # a child that runs longer is killed (as the cold runner's timeout)
REQUEST_SECONDS = 30.0  # to read a request once connected


def _run_plan(plan: Dict[str, Any], side: str) -> Dict[str, Any]:
    from lightmigrate.verify.runner import run_plan

    return run_plan(plan, side)


def _migrate(**kwargs: Any) -> Any:
    from lightmigrate.verify.session import migrate_groups_by_code

    return migrate_groups_by_code(**kwargs)


def _echo(**kwargs: Any) -> Any:
    """For the tests: the arguments back, with this child's process id."""
    return {"args": kwargs, "pid": os.getpid(), "ppid": os.getppid(), "cwd": os.getcwd()}


def _sleep(seconds: float, note: Optional[str] = None) -> Any:
    """For the tests: a job that takes a while (writing its folder to ``note`` first)."""
    started = time.time()
    if note:
        with open(note, "w") as fh:
            fh.write(os.getcwd())
    time.sleep(seconds)
    return {"pid": os.getpid(), "ppid": os.getppid(), "started": started}


CALLS: Dict[str, Callable[..., Any]] = {"run_plan": _run_plan, "migrate": _migrate, "echo": _echo, "sleep": _sleep}


def source_fingerprint() -> str:
    """Changes whenever a file of the lightmigrate package changes (size or time), cheaply."""
    import hashlib

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    digest = hashlib.sha256()
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                st = os.stat(os.path.join(folder, name))
                digest.update(f"{folder}/{name}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


_warmed: Set[str] = set()


def warm_imports(imports: Sequence[str]) -> None:
    """Import the modules the jobs need, in this process, before any fork."""
    for name in imports:
        if name in sys.modules or name in _warmed:
            continue
        if name in ("pytorch_lightning", "lightning.pytorch"):
            from lightmigrate.verify.runner import import_lightning

            import_lightning([name])  # (and torch's deterministic mode, as the runner does)
            _warm_up_case(name)
        elif name == "migration":
            _warm_migration()
            _warmed.add(name)
        else:
            importlib.import_module(name)


_WARM_UP_CASE = """import torch
from torch.utils.data import DataLoader, TensorDataset

import {root} as pl


class Model(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.layer(x), y)
        self.log("loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", torch.nn.functional.mse_loss(self.layer(x), y))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def lightmigrate_case():
    data = TensorDataset(torch.randn(8, 4), torch.randn(8, 1))
    return {{"model": Model(), "train_dataloaders": DataLoader(data, batch_size=4),
             "val_dataloaders": DataLoader(data, batch_size=4), "trainer": {{"max_epochs": 1}}}}
"""


def _warm_up_case(root: str) -> None:
    """Run a small case here, once, before any fork: a child's first case otherwise pays about
    half a second of first calls into torch and Lightning. The runner runs cases on one torch
    thread, so no thread pool exists afterwards (a fork after torch started threads hangs);
    should one exist anyway, the worker refuses to start and verify runs cold."""
    from lightmigrate.verify.runner import run_case

    for name in ("lightmigrate.verify.shim", "lightmigrate.verify.shim_imports", "lightmigrate.verify.shim_trainer"):
        try:  # (imported by the children that run originals under the shim; not installed here)
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a 1.x interpreter has no use for the shim
            pass
    threads = _threads()
    folder = tempfile.mkdtemp(prefix="lightmigrate-warm-up-")
    try:
        path = os.path.join(folder, "warm_up_case.py")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(_WARM_UP_CASE.format(root=root))
        record = run_case(path, "v2", root=root)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    sys.modules.pop("_lightmigrate_case_0_warm_up_case", None)
    if record.get("error"):
        sys.stderr.write(f"warm-up case failed (children start colder): {record['error']}\n")
    if _threads() > threads:
        raise SystemExit(f"the warm-up left {_threads() - threads} more thread(s); forking would not be safe")


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:  # pragma: no cover - no /proc
        import threading

        return threading.active_count()


def _warm_migration() -> None:
    """Make the first migration of a job as quick as later ones (the first one in a process
    costs more than half a second: modules and tables the rules build on first use): migrate a
    small module here, before any fork. Only where libcst is installed."""
    if importlib.util.find_spec("libcst") is None:
        return
    from lightmigrate.verify.session import warm_migration

    warm_migration()


class Server:
    def __init__(self, path: str, idle: float, fingerprint: Optional[str]) -> None:
        self.path = path
        self.lock_path = os.path.splitext(path)[0] + ".lock"
        self.idle = idle
        self.fingerprint = fingerprint
        self.children: Set[int] = set()
        self.last_active = time.monotonic()
        self.last_checked = time.monotonic()
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)

    def bind(self) -> None:
        """Listen on ``path``; a file left there by a dead worker is replaced (whoever started
        this worker holds the lock, so no live worker is starting there at the same time)."""
        if os.path.exists(self.path):
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.connect(self.path)
            except OSError:
                os.unlink(self.path)
            else:
                probe.close()
                raise SystemExit(f"a warm worker already listens on {self.path}")
        old = os.umask(0o177)
        try:
            self.listener.bind(self.path)
        finally:
            os.umask(old)
        self.listener.listen(64)
        self.inode = os.stat(self.path).st_ino

    def serve(self) -> None:
        while True:
            readable, _, _ = select.select([self.listener], [], [], 1.0)
            self.reap()
            if readable:
                conn, _ = self.listener.accept()
                self.last_active = time.monotonic()
                try:
                    self.handle(conn)
                finally:
                    conn.close()
                continue
            if self.children:
                self.last_active = time.monotonic()
            elif self.should_exit() and self.leave():
                return

    def should_exit(self) -> bool:
        if time.monotonic() - self.last_active >= self.idle:
            return True
        if self.fingerprint and time.monotonic() - self.last_checked >= 10:
            self.last_checked = time.monotonic()
            return source_fingerprint() != self.fingerprint  # stale code: clients start a new worker
        return False

    def leave(self) -> bool:
        """Stop listening, unless a client is connecting right now (the clients connect while
        holding the lock; a connection already queued keeps the worker alive)."""
        import fcntl

        with open(self.lock_path, "a") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return False
            if select.select([self.listener], [], [], 0)[0]:
                return False
            self.remove_socket()
            return True

    def remove_socket(self) -> None:
        try:
            if os.stat(self.path).st_ino == self.inode:
                os.unlink(self.path)
        except OSError:
            pass
        self.listener.close()

    def reap(self) -> None:
        while self.children:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                self.children.clear()
                return
            if pid == 0:
                return
            self.children.discard(pid)

    def handle(self, conn: socket.socket) -> None:
        try:
            request = _read_request(conn)
            warm_imports(request.get("imports") or [])
        except Exception as exc:  # noqa: BLE001 - the client falls back to a cold run
            _send(conn, {"ok": False, "error": f"{type(exc).__name__}: {exc}"})
            return
        pid = os.fork()
        if pid == 0:
            self.listener.close()
            _child(conn, request)  # never returns
        self.children.add(pid)


def _read_request(conn: socket.socket) -> Dict[str, Any]:
    conn.settimeout(REQUEST_SECONDS)
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(1 << 16)
        if not chunk:
            break
        data += chunk
    request = json.loads(data.decode("utf-8"))
    if request.get("call") not in CALLS:
        raise ValueError(f"unknown call {request.get('call')!r}")
    return request


def _send(conn: socket.socket, message: Dict[str, Any]) -> None:
    conn.settimeout(None)
    try:
        conn.sendall(json.dumps(message).encode("utf-8") + b"\n")
    except OSError:
        pass  # the client went away


def _child(conn: socket.socket, request: Dict[str, Any]) -> None:
    """Run one job in this forked child and leave without interpreter shutdown."""
    status = 0
    workdir = None
    try:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)
        signal.alarm(JOB_SECONDS)
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):  # cases print; the cold runner drops their output too
            os.dup2(devnull, fd)
        if request.get("env") is not None:
            os.environ.clear()
            os.environ.update(request["env"])
        workdir = tempfile.mkdtemp(prefix="lightmigrate-job-")
        _stop_when_abandoned(conn, workdir)
        os.chdir(workdir)
        result = CALLS[request["call"]](**(request.get("args") or {}))
        message: Dict[str, Any] = {"ok": True, "result": result}
    except BaseException as exc:  # noqa: BLE001 - reported to the client, which runs cold instead
        message = {"ok": False, "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}
        status = 1
    try:
        _finished.set()
        _send(conn, message)
        conn.close()
        if workdir:
            os.chdir("/")
            shutil.rmtree(workdir, ignore_errors=True)
    finally:
        os._exit(status)


_finished = threading.Event()  # (set in a child once its job is done)


def _stop_when_abandoned(conn: socket.socket, workdir: str) -> None:
    """End this child when the client closes its end (Ctrl-C, or it gave up): the client sends
    nothing after its request, so the connection turns readable only then."""
    def watch() -> None:
        try:
            select.select([conn], [], [])
            gone = not conn.recv(1, socket.MSG_PEEK)
        except (OSError, ValueError):
            gone = True
        if gone and not _finished.is_set():
            shutil.rmtree(workdir, ignore_errors=True)
            os._exit(3)

    threading.Thread(target=watch, name="lightmigrate-abandoned", daemon=True).start()


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lightmigrate.verify.warm_server",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--socket", required=True)
    parser.add_argument("--idle", type=float, default=IDLE_SECONDS, help="exit after this many idle seconds")
    parser.add_argument("--import", dest="imports", action="append", default=[],
                        help="modules to import before listening ('migration': warm the migration up)")
    parser.add_argument("--fingerprint", help="exit when source_fingerprint() no longer gives this")
    parser.add_argument("--daemon", action="store_true",
                        help="print the worker's process id and detach (the first process exits at once)")
    args = parser.parse_args(argv)
    if args.daemon:
        pid = os.fork()
        if pid:
            sys.stdout.write(f"{pid}\n")
            sys.stdout.flush()
            os._exit(0)
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(devnull, 1)
    server = Server(args.socket, args.idle, args.fingerprint)
    signal.signal(signal.SIGTERM, lambda *_: (server.remove_socket(), os._exit(0)))
    warm_imports(args.imports)
    gc.collect()
    gc.freeze()  # the children do not copy pages to mark these objects
    server.bind()
    server.serve()
    os._exit(0)  # (no interpreter shutdown with torch loaded)


if __name__ == "__main__":
    sys.exit(main())
