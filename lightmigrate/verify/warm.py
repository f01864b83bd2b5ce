"""Reach the warm worker of an interpreter (:mod:`lightmigrate.verify.warm_server`), starting it
when none runs.

``lightmigrate verify`` runs its jobs (one case on one side; migrating the copies) through
:func:`call`. The first call for an interpreter starts its worker (which imports torch and
Lightning once, seconds) and waits for it; later calls find it running and only pay a fork. A
worker is keyed by the interpreter's path, the lightmigrate source (any edit starts a new one)
and the environment variables that change how torch or Lightning import, and listens on
``<runtime dir>/<key>.sock``; the runtime dir is ``$LIGHTMIGRATE_VERIFY_SERVER_DIR``, else
``$XDG_RUNTIME_DIR/lightmigrate``, else ``<tmp>/lightmigrate-<uid>`` (private to the user).
A worker exits after ``$LIGHTMIGRATE_VERIFY_SERVER_IDLE`` idle seconds (default 600).
``$LIGHTMIGRATE_VERIFY_SERVER=0`` (or ``verify --no-server``) turns it off; whenever a worker
cannot be reached or a job fails, :func:`call` raises :class:`ServerError` and verify runs cold
(one fresh interpreter per side) as it does without a worker.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Mapping, Optional, Sequence, Set

from lightmigrate import __version__
from lightmigrate.verify.warm_server import IDLE_SECONDS, JOB_SECONDS, source_fingerprint

ENV_SWITCH = "LIGHTMIGRATE_VERIFY_SERVER"
ENV_IDLE = "LIGHTMIGRATE_VERIFY_SERVER_IDLE"
ENV_DIR = "LIGHTMIGRATE_VERIFY_SERVER_DIR"
START_SECONDS = 300.0  # importing torch + Lightning on a busy machine can take a minute
# environment variables read while torch or Lightning import: a worker started under other
# values would not behave like a fresh interpreter
_IMPORT_ENV = ("PYTHON", "PL_", "LIGHTNING", "TORCH", "PYTORCH", "OMP_", "MKL_", "CUDA", "CUBLAS", "KMP_", "LD_")


class ServerError(RuntimeError):
    """The warm worker could not run the job; run it cold instead."""


def enabled() -> bool:
    return os.environ.get(ENV_SWITCH, "1").strip().lower() not in ("0", "off", "no", "false")


def runtime_dir() -> Path:
    """The private folder of the sockets (created 0700; refused when someone else owns it)."""
    explicit = os.environ.get(ENV_DIR)
    if explicit:
        folder = Path(explicit)
    elif os.environ.get("XDG_RUNTIME_DIR"):
        folder = Path(os.environ["XDG_RUNTIME_DIR"]) / "lightmigrate"
    else:
        folder = Path(tempfile.gettempdir()) / f"lightmigrate-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = folder.stat()
    except OSError as exc:
        raise ServerError(f"no runtime folder for the warm worker: {exc}") from exc
    if st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise ServerError(f"{folder} is not private to this user; not using a warm worker there")
    return folder


def server_key(python: str, env: Mapping[str, str], fingerprint: str) -> str:
    wanted = sorted((k, v) for k, v in env.items() if k.startswith(_IMPORT_ENV))
    text = json.dumps([os.path.abspath(python), __version__, fingerprint, wanted])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


def idle_seconds() -> float:
    try:
        return float(os.environ.get(ENV_IDLE, IDLE_SECONDS))
    except ValueError:
        return IDLE_SECONDS


class Worker:
    """The warm worker of ``python`` (run with environment ``env``): where it listens, and how
    to start it."""

    def __init__(self, python: str, env: Mapping[str, str], imports: Sequence[str] = ()) -> None:
        self.python = os.path.abspath(python)  # (not resolved: a venv's python is a symlink)
        self.env = dict(env)
        self.imports = list(imports)
        self.fingerprint = source_fingerprint()
        key = server_key(self.python, self.env, self.fingerprint)
        folder = runtime_dir()
        self.socket_path = str(folder / f"{key}.sock")
        self.lock_path = str(folder / f"{key}.lock")
        self.log_path = str(folder / f"{key}.log")
        self._open: Set[socket.socket] = set()
        self._lock = threading.Lock()

    def call(self, name: str, args: Mapping[str, Any], imports: Sequence[str] = (),
             timeout: float = JOB_SECONDS + 60) -> Any:
        """Run ``CALLS[name](**args)`` in a fresh child of the worker (started if need be) and
        return its result; raises ServerError when that cannot be done."""
        request = {"call": name, "args": dict(args), "env": self.env, "imports": list(imports)}
        conn = self.connect()
        with self._lock:
            self._open.add(conn)
        try:
            conn.settimeout(timeout)
            conn.sendall(json.dumps(request).encode("utf-8") + b"\n")
            chunks = []
            while True:
                chunk = conn.recv(1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
        except OSError as exc:
            raise ServerError(f"lost the warm worker: {exc}") from exc
        finally:
            with self._lock:
                self._open.discard(conn)
            conn.close()
        try:
            reply = json.loads(b"".join(chunks).decode("utf-8"))
        except ValueError as exc:
            raise ServerError("the warm worker's job ended without an answer (it crashed or was killed)") from exc
        if not reply.get("ok"):
            raise ServerError(f"the warm worker's job failed: {reply.get('error')}")
        return reply["result"]

    def abort(self) -> None:
        """Close every open job's connection: the children see it and stop (on Ctrl-C)."""
        with self._lock:
            for conn in self._open:
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            self._open.clear()

    def connect(self) -> socket.socket:
        """A connection to the running worker, starting it first when there is none. The lock
        makes one of two concurrent callers start it and the other wait for it, and keeps an
        idle worker from leaving while a caller connects."""
        with _locked(self.lock_path):
            conn = _try_connect(self.socket_path)
            if conn is None:
                self.start()
                conn = self.wait_ready()
            return conn

    def start(self) -> None:
        cmd = [self.python, "-m", "lightmigrate.verify.warm_server", "--socket", self.socket_path,
               "--idle", str(idle_seconds()), "--fingerprint", self.fingerprint, "--daemon"]
        for name in self.imports:
            cmd += ["--import", name]
        with open(self.log_path, "w") as log:
            try:
                proc = subprocess.run(cmd, env=self.env, cwd="/", stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                      stderr=log, text=True, timeout=60, start_new_session=True)
            except (OSError, subprocess.SubprocessError) as exc:
                raise ServerError(f"cannot start the warm worker: {exc}") from exc
        try:
            self.pid = int(proc.stdout.strip())
        except ValueError as exc:
            raise ServerError(f"the warm worker did not start (exit {proc.returncode}); see {self.log_path}") from exc

    def wait_ready(self) -> socket.socket:
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            conn = _try_connect(self.socket_path)
            if conn is not None:
                return conn
            if not _alive(self.pid):
                raise ServerError(f"the warm worker exited while starting; see {self.log_path}:\n{_tail(self.log_path)}")
            time.sleep(0.05)
        raise ServerError(f"the warm worker did not listen within {START_SECONDS:.0f} s")


def _try_connect(path: str) -> Optional[socket.socket]:
    """A connection, or None when nobody listens there (a file left by a dead worker is removed)."""
    if not os.path.exists(path):
        return None
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
    except (ConnectionRefusedError, FileNotFoundError):
        conn.close()
        try:
            os.unlink(path)  # stale (we hold the lock: no worker is starting there)
        except OSError:
            pass
        return None
    except OSError as exc:
        conn.close()
        raise ServerError(f"cannot reach the warm worker at {path}: {exc}") from exc
    return conn


@contextmanager
def _locked(path: str) -> Iterator[None]:
    import fcntl  # (not on Windows, where there is no worker)

    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


def _tail(path: str, chars: int = 2000) -> str:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")[-chars:]
    except OSError:
        return ""


def worker_for(python: str, env: Mapping[str, str], imports: Sequence[str] = ()) -> Worker:
    """The warm worker of ``python``; raises ServerError when warm workers are off or unusable."""
    if not enabled():
        raise ServerError("warm workers are off")
    if sys.platform == "win32":  # pragma: no cover - no fork, no Unix sockets
        raise ServerError("no warm workers on Windows")
    return Worker(python, env, imports)
