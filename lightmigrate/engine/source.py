"""Reading and writing source files byte-exactly.

Text is decoded with the encoding Python itself would use (BOM or coding cookie, else UTF-8),
strictly, and without newline translation, so CRLF files stay CRLF. Output is encoded back
with the same codec (``utf-8-sig`` puts the BOM back) and written atomically.
"""

from __future__ import annotations

import io
import os
import re
import stat
import tempfile
import tokenize
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Set, Tuple

from lightmigrate.engine.model import EngineError


@dataclass(frozen=True)
class Source:
    path: str
    text: str
    encoding: str  # codec name from tokenize.detect_encoding ("utf-8-sig" when there is a BOM)
    mtime_ns: int = 0
    size: int = -1


def _position_of_byte(data: bytes, offset: int) -> Tuple[int, int]:
    line_start = data.rfind(b"\n", 0, offset) + 1
    return data.count(b"\n", 0, offset) + 1, offset - line_start + 1


def decode_source(data: bytes) -> Tuple[str, str]:
    """(text, encoding) of a Python source file's bytes; EngineError when it is not text."""
    if b"\0" in data:
        raise EngineError("binary file")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:  # unknown codec in the cookie, BOM/cookie mismatch, not UTF-8
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as bad:
            line, col = _position_of_byte(data, bad.start)
            raw = data[bad.start : bad.end].hex(" ")
            raise EngineError(
                f"cannot decode as utf-8 (no coding cookie names another encoding): invalid byte(s) {raw}", line, col
            )
        raise EngineError(f"cannot detect encoding: {exc.msg or exc}")
    try:
        return data.decode(encoding), encoding
    except UnicodeDecodeError as exc:
        line, col = _position_of_byte(data, exc.start)
        bad = data[exc.start : exc.end].hex(" ")
        if encoding == "utf-8" and not _has_cookie(data):
            raise EngineError(
                f"cannot decode as utf-8 (no coding cookie names another encoding): invalid byte(s) {bad}", line, col
            )
        raise EngineError(f"cannot decode as {encoding}: invalid byte(s) {bad}", line, col)


_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=]")


def _has_cookie(data: bytes) -> bool:
    return any(_COOKIE.match(line) for line in data.splitlines()[:2])


def encode_source(text: str, encoding: str) -> bytes:
    try:
        return text.encode(encoding)
    except UnicodeEncodeError as exc:
        line = text.count("\n", 0, exc.start) + 1
        raise EngineError(
            f"rewritten text cannot be encoded as {encoding}: {text[exc.start:exc.end]!r}", line
        )


def _file_kind(mode: int) -> str:
    for test, kind in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device")):
        if test(mode):
            return kind
    return "a special file"


def read_source(path: str) -> Source:
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; it has no effect on files.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with open(fd, "rb") as f:
            info = os.fstat(f.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise EngineError(f"cannot read file: not a regular file ({_file_kind(info.st_mode)})")
            data = f.read()
    except OSError as exc:
        raise EngineError(f"cannot read file: {exc.strerror or exc}")
    text, encoding = decode_source(data)
    return Source(path, text, encoding, info.st_mtime_ns, info.st_size)


def unchanged_on_disk(source: Source) -> bool:
    """Whether ``source.path`` still looks like it did when it was read."""
    try:
        info = os.stat(source.path)
    except OSError:
        return False
    return (info.st_mtime_ns, info.st_size) == (source.mtime_ns, source.size)


TEMP_SUFFIX = ".lmtmp"
# ``.NAME.<8 random characters from tempfile>.lmtmp``, next to NAME.
_TEMP_NAME = re.compile(r"^\.(?P<name>.+)\.[a-z0-9_]{8}" + re.escape(TEMP_SUFFIX) + "$")


def stale_temp_files(paths: Iterable[str]) -> List[str]:
    """Temporary files that ``write_atomic`` left next to ``paths`` (a process killed
    between creating and renaming one). Only names of that exact form, for files of the run."""
    wanted: Dict[str, Set[str]] = {}
    for path in paths:
        target = os.path.realpath(path)
        wanted.setdefault(os.path.dirname(target), set()).add(os.path.basename(target))
    found = []
    for folder in sorted(wanted):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in sorted(names):
            match = _TEMP_NAME.match(name)
            if match and match.group("name") in wanted[folder]:
                found.append(os.path.join(folder, name))
    return found


def remove_stale_temp_files(paths: Iterable[str]) -> int:
    """Delete what :func:`stale_temp_files` finds; returns how many were removed."""
    removed = 0
    for tmp in stale_temp_files(paths):
        try:
            if stat.S_ISREG(os.lstat(tmp).st_mode):
                os.unlink(tmp)
                removed += 1
        except OSError:
            pass
    return removed


def write_atomic(path: str, data: bytes, mode: Optional[int] = None) -> None:
    """Replace ``path`` (the file a symlink points to, if it is one) with ``data``.

    The bytes go to a temporary file in the same folder, are fsynced, get the original's
    permission bits, and then take the original's place with ``os.replace``; on any failure
    the temporary file is removed and the original is left as it was.
    """
    target = os.path.realpath(path)
    if mode is None:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    folder = os.path.dirname(target)
    prefix = "." + os.path.basename(target) + "."
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=prefix, suffix=TEMP_SUFFIX)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
