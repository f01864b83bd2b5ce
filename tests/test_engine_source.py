import os

import pytest

from lightmigrate.engine import EngineError, decode_source, encode_source, read_source, write_atomic


@pytest.mark.parametrize(
    "data, encoding",
    [
        (b"x = 1\n", "utf-8"),
        (b"\xef\xbb\xbfx = '\xc3\xa9'\r\n", "utf-8-sig"),
        (b"# -*- coding: latin-1 -*-\nx = '\xe9'\n", "iso-8859-1"),
        (b"#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\nx = '\x80'\n", "cp1252"),
        (b"a = 1\rb = 2\r", "utf-8"),
    ],
)
def test_decode_encode_round_trip(data, encoding):
    text, enc = decode_source(data)
    assert enc == encoding
    assert "\ufeff" not in text
    assert encode_source(text, enc) == data


def test_crlf_is_not_translated():
    text, _ = decode_source(b"a = 1\r\nb = 2\r\n")
    assert text == "a = 1\r\nb = 2\r\n"


def test_binary_file():
    with pytest.raises(EngineError, match="binary file"):
        decode_source(b"x = 1\n\0\1\2")


def test_undecodable_bytes_report_line_and_column():
    with pytest.raises(EngineError) as info:
        decode_source(b"x = 1\ny = 'ab\xff'\n")
    assert (info.value.line, info.value.col) == (2, 8)
    assert "utf-8" in info.value.message and "ff" in info.value.message


def test_unknown_cookie():
    with pytest.raises(EngineError, match="encoding"):
        decode_source(b"# coding: no-such-codec\nx = 1\n")


def test_unencodable_output():
    with pytest.raises(EngineError, match="cannot be encoded as iso-8859-1"):
        encode_source("x = 1\ny = '\u4e2d'\n", "iso-8859-1")


def test_read_source_errors_are_engine_errors(tmp_path):
    with pytest.raises(EngineError, match="cannot read file"):
        read_source(str(tmp_path / "missing.py"))
    with pytest.raises(EngineError, match="cannot read file"):
        read_source(str(tmp_path))


def test_write_atomic_keeps_mode_and_leaves_no_temp_files(tmp_path):
    p = tmp_path / "a.py"
    p.write_bytes(b"old\n")
    p.chmod(0o751)
    write_atomic(str(p), b"new\n")
    assert p.read_bytes() == b"new\n"
    assert (p.stat().st_mode & 0o777) == 0o751
    assert os.listdir(tmp_path) == ["a.py"]


def test_write_atomic_through_symlink_replaces_the_target(tmp_path):
    target = tmp_path / "real.py"
    target.write_bytes(b"old\n")
    link = tmp_path / "link.py"
    link.symlink_to(target)
    write_atomic(str(link), b"new\n")
    assert link.is_symlink() and target.read_bytes() == b"new\n"


def test_write_atomic_cleans_up_on_failure(tmp_path, monkeypatch):
    p = tmp_path / "a.py"
    p.write_bytes(b"old\n")

    def fail(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError):
        write_atomic(str(p), b"new\n")
    assert p.read_bytes() == b"old\n"
    assert os.listdir(tmp_path) == ["a.py"]
