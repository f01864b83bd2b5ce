"""lightmigrate.cst.codegen generates what libcst does: the same code, the same positions."""

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from lightmigrate.cst.codegen import code_for, module_code, node_starts
from test_cst_walk import _all_nodes

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
ODD = (
    "x = 1\r\ny = (\r\n    2,\r\n)\r\n",  # CRLF
    "if a:\r    b = '''\r'''\r",  # lone CR line ends, inside a string too
    "def f():\n\tif x:\n\t\treturn 1  # tab\n\n\n\n@d\nclass C(B): pass\n",
    "s = f'{a!r:>{b}}' 'x' \\\n    'y'\nz = [i for i in range(3)]\n",
    "",
)


def modules():
    for text in ODD:
        yield cst.parse_module(text)
    for path in sorted(CORPUS.glob("*.py"))[:30]:
        yield cst.parse_module(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("module", list(modules()), ids=lambda m: repr(m.code[:20]))
def test_code_and_starts_are_libcsts(module):
    assert module_code(module) == module.code
    theirs = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    ours = node_starts(module)
    assert set(ours) == {id(node) for node in theirs}
    assert all(ours[id(node)] == (r.start.line, r.start.column) for node, r in theirs.items())


def test_code_for_a_node_alone_and_in_a_modules_style():
    module = cst.parse_module("if x:\r\n\ty = 1\r\n")
    stmt = module.body[0]
    assert code_for(stmt) == cst.Module([]).code_for_node(stmt) == "if x:\n    y = 1\n"
    assert code_for(stmt, module) == module.code_for_node(stmt) == "if x:\r\n\ty = 1\r\n"


def test_module_code_from_kept_pieces_is_libcsts_before_and_after_a_transform(monkeypatch):
    import lightmigrate.cst.codegen as codegen
    from lightmigrate.cst.walk import transform

    class Rename(cst.CSTTransformer):
        def leave_Name(self, original_node, updated_node):
            return updated_node.with_changes(value="renamed") if updated_node.value == "self" else updated_node

    codegen.forget_code()
    checked = 0
    for module in [*modules(), cst.parse_module("x = 1"), cst.parse_module("# only a comment\n"),
                   cst.parse_module("\r\n\r\n")]:
        assert module_code(module) == module.code
        out = transform(module, Rename())
        generated = []
        real = codegen.code_for
        monkeypatch.setattr(codegen, "code_for", lambda node, mod=None: (generated.append(node), real(node, mod))[1])
        assert module_code(out) == out.code
        monkeypatch.setattr(codegen, "code_for", real)
        kept = [n for n in out.body if any(n is m for m in module.body)]
        assert not any(n is g for n in kept for g in generated)  # statements the rename kept: not generated again
        checked += len(kept)
    assert checked > 50


def test_module_positions_piece_by_piece_are_node_starts():
    import lightmigrate.cst.codegen as codegen
    from lightmigrate.cst.codegen import ModulePositions
    from lightmigrate.cst.walk import transform

    class Rename(cst.CSTTransformer):
        def leave_Name(self, original_node, updated_node):
            return updated_node.with_changes(value="renamed_x") if updated_node.value == "self" else updated_node

    codegen.forget_code()
    checked = 0
    for module in [*modules(), cst.parse_module("x = 1"), cst.parse_module("\r\n# c\r\nif a:\r\n    b\r\n")]:
        for version in (module, transform(module, Rename())):  # the second reuses kept statements
            expected = node_starts(version)
            positions = ModulePositions(version)
            nodes = list(_all_nodes(version))
            for n in reversed(nodes):  # the last nodes first: every piece worked out on the way
                assert positions.start(n) == expected[id(n)]
            assert positions.start(cst.Name("elsewhere")) is None
            checked += len(nodes)
        lazy = ModulePositions(module)
        first = module.body[0] if module.body else module
        assert lazy.start(first) == node_starts(module)[id(first)]
        assert module.has_trailing_newline is False or len(lazy.done) <= len(module.header) + 1  # only so far
    assert checked > 20_000


def _edits(module: cst.Module):
    """Modules made from ``module`` by the edits rules make at the top level: a statement
    inserted, removed, replaced or moved, the header or footer changed."""
    body = list(module.body)
    new = cst.parse_statement("import inserted_here\n")
    yield module.with_changes(body=[new, *body])
    yield module.with_changes(body=[*body, new])
    if body:
        yield module.with_changes(body=body[1:])
        yield module.with_changes(body=[*body[:-1], new])
        yield module.with_changes(body=[*body[: len(body) // 2], new, *body[len(body) // 2:]])
        yield module.with_changes(body=[body[-1], *body[:-1]])
        yield module.with_changes(body=[*body, body[0]])  # a kept statement twice
    yield module.with_changes(header=[cst.EmptyLine(comment=cst.Comment("# new header"))], footer=[])


# Top-level statements whose code repeats, so that a copied statement cannot be found by its
# code alone; CRLF and tabs kept.
REPEATS = (
    "x = 1\nx = 1\n\nx = 1\nif a:\n    pass\nx = 1\n",
    "# c\n\n# c\nimport a\r\nimport a\r\n\r\nclass C:\r\n\tpass\r\n# c\n",
    # nested statements repeated, in blocks indented by spaces and tabs
    "class A:\n    def f(self):\n        return 1\n\n    def g(self):\n        return 1\n"
    "if x:\n\tif y:\n\t\tz = call(1,\n\t\t\t2)\n\tz = call(1,\n\t\t\t2)\n",
)


def test_module_code_copied_from_the_module_it_was_made_from_is_libcsts():
    assert _copied_code_checked(REPEATS, _edits) > 150


def _copied_code_checked(texts, edits) -> int:
    """How many modules ``edits`` made from the test modules and ``texts`` were checked:
    ``module_code`` of each, copying from the module it was made from, is libcst's code."""
    import lightmigrate.cst.codegen as codegen

    checked = 0
    for module in [*modules(), *map(cst.parse_module, texts)]:
        if not module.has_trailing_newline:
            continue
        for out in edits(module):
            codegen.forget_code()
            assert module_code(out, module, module.code) == out.code
            checked += 1
    return checked


def test_module_code_copies_the_statements_a_rule_kept(monkeypatch):
    import lightmigrate.cst.codegen as codegen

    module = cst.parse_module((CORPUS / sorted(p.name for p in CORPUS.glob("*.py"))[0]).read_text(encoding="utf-8"))
    out = module.with_changes(body=[cst.parse_statement("import inserted_here\n"), *module.body])
    generated = []
    real = codegen.code_for
    monkeypatch.setattr(codegen, "code_for", lambda node, mod=None: (generated.append(node), real(node, mod))[1])
    codegen.forget_code()
    assert module_code(out, module, module.code) == out.code
    # the new statement, and the one after it to find where the kept ones start
    assert len(generated) <= 2 < len(module.body)


# Classes whose body statements repeat (so a changed one cannot be found by its code alone),
# indented by spaces, tabs, with CRLF, with comments in the block's footer.
BLOCKS = (
    "class B:\n    x = 1\n    y = 2\n    x = 1\n    y = 2\n    x = 1\n",
    "import a\r\n\r\nclass C(a.Base):\r\n\tdef f(self):\r\n\t\treturn 1\r\n\r\n\tdef g(self):\r\n"
    "\t\treturn 1\r\n\t# footer\r\n\r\ndef h():\r\n\tpass\r\n",
    "@dec\nclass D:  # trailing\n    \"doc\"\n\n    # lead\n    def f(self): return 1\n    def f(self): return 1\n"
    "        # deeper footer\n",
)


def _block_edits(module: cst.Module):
    """Modules made from ``module`` by the edits rules make inside a top-level class or function:
    a body statement inserted, removed, replaced, moved or kept twice."""
    new = cst.parse_statement("def inserted(self):\n    return 1\n")
    for at, piece in enumerate(module.body):
        if not isinstance(piece, (cst.ClassDef, cst.FunctionDef)) or not isinstance(piece.body, cst.IndentedBlock):
            continue
        body = list(piece.body.body)
        half = len(body) // 2
        for edited in ([new, *body], [*body, new], body[1:], [*body[:-1], new], [*body[:half], new, *body[half:]],
                       [*body[:half], new, *body[half + 1:]], [body[-1], *body[:-1]], [*body, body[0]]):
            changed = piece.with_changes(body=piece.body.with_changes(body=edited))
            yield module.with_changes(body=[*module.body[:at], changed, *module.body[at + 1:]])


def test_module_code_of_a_class_a_rule_changed_is_libcsts():
    assert _copied_code_checked(REPEATS + BLOCKS, _block_edits) > 500


def test_module_code_copies_the_methods_a_rule_kept_in_a_class_it_changed(monkeypatch):
    import lightmigrate.cst.codegen as codegen

    text = "import torch\n\nclass M(Base):\n" + "".join(
        f"    def m{i}(self, x):\n        return x * {i}  # {i}\n\n" for i in range(6)) + "print(M)\n"
    module = cst.parse_module(text)
    cls = module.body[1]
    methods = list(cls.body.body)
    new = methods[3].with_changes(name=cst.Name("renamed"))
    out = module.with_changes(body=[module.body[0], cls.with_changes(body=cls.body.with_changes(
        body=[*methods[:3], new, *methods[4:]])), module.body[2]])
    expected = out.code
    generated = []
    real = cst.FunctionDef._codegen_impl
    monkeypatch.setattr(cst.FunctionDef, "_codegen_impl", lambda self, state: (generated.append(self), real(self, state))[1])
    codegen.forget_code()
    assert module_code(out, module, text) == expected
    # the changed method, old and new, and no other
    assert sorted(f.name.value for f in generated) == ["m3", "renamed"]


def test_module_positions_found_through_the_text_are_node_starts():
    import random
    import lightmigrate.cst.codegen as codegen
    from lightmigrate.cst.codegen import ModulePositions
    from lightmigrate.cst.walk import type_masks

    checked = placed = 0
    for module in [*modules(), *map(cst.parse_module, REPEATS)]:
        codegen.forget_code()
        expected = node_starts(module)
        nodes = list(_all_nodes(module))
        random.Random(len(nodes)).shuffle(nodes)  # any order: pieces far apart first
        for masked in (False, True):
            if masked:
                type_masks(module)  # the holder search then skips subtrees without the type
            positions = ModulePositions(module, module.code)
            for n in nodes:
                assert positions.start(n) == expected[id(n)]
            assert positions.start(cst.Name("elsewhere")) is None
            placed += len(positions.placed)
            checked += len(nodes)
    assert checked > 20_000
    assert placed > 100  # most pieces were found in the text, not worked out in order
