import pytest

from lightmigrate.engine.gitignore import IgnoreRules, parse_lines, parse_pattern


def ignored(lines, path, is_dir=False, base=""):
    return IgnoreRules(parse_lines(lines, base)).ignored(path, is_dir)


@pytest.mark.parametrize(
    "pattern, path, is_dir, expected",
    [
        ("*.py", "a.py", False, True),
        ("*.py", "deep/er/a.py", False, True),  # no slash: any depth
        ("*.py", "a.pyc", False, False),
        ("/top.py", "top.py", False, True),  # leading slash anchors
        ("/top.py", "sub/top.py", False, False),
        ("sub/x.py", "sub/x.py", False, True),  # middle slash anchors too
        ("sub/x.py", "a/sub/x.py", False, False),
        ("out/", "out", True, True),  # trailing slash: directories only
        ("out/", "out", False, False),
        ("out/", "a/out", True, True),
        ("?.py", "a.py", False, True),
        ("?.py", "ab.py", False, False),
        ("[ab].py", "b.py", False, True),
        ("[ab].py", "c.py", False, False),
        ("[!ab].py", "c.py", False, True),
        ("[a-c]x.py", "bx.py", False, True),
        ("*.py", "a/", False, False),
        ("a*b", "a/b", False, False),  # * does not cross /
        ("**/gen.py", "gen.py", False, True),
        ("**/gen.py", "x/y/gen.py", False, True),
        ("a/**/z.py", "a/z.py", False, True),
        ("a/**/z.py", "a/b/c/z.py", False, True),
        ("a/**/z.py", "b/a/z.py", False, False),
        ("gen/**", "gen/x.py", False, True),
        ("gen/**", "gen/x/y.py", False, True),
        ("gen/**", "gen", True, False),
        (r"\#hash.py", "#hash.py", False, True),
        (r"\!bang.py", "!bang.py", False, True),
        ("trailing.py   ", "trailing.py", False, True),
    ],
)
def test_pattern_semantics(pattern, path, is_dir, expected):
    assert ignored([pattern], path, is_dir) is expected


def test_comments_and_blank_lines_are_not_patterns():
    assert parse_pattern("# a comment") is None
    assert parse_pattern("") is None
    assert parse_pattern("   ") is None
    assert not ignored(["#a.py"], "#a.py")


def test_negation_and_last_match_wins():
    lines = ["*.py", "!keep.py"]
    assert ignored(lines, "drop.py")
    assert not ignored(lines, "keep.py")
    assert ignored(lines + ["keep.py"], "keep.py")


def test_patterns_are_relative_to_their_base():
    assert ignored(["/x.py"], "sub/x.py", base="sub/")
    assert not ignored(["/x.py"], "x.py", base="sub/")
    assert not ignored(["/x.py"], "other/x.py", base="sub/")
    assert ignored(["x.py"], "sub/deep/x.py", base="sub/")
