"""The regular-expression building blocks of the text searches (lightmigrate/analysis/analysis/text_patterns.py)."""

from lightmigrate.analysis.text_patterns import word_at_start


def test_word_at_start_says_what_a_leading_word_boundary_says():
    import random
    import re

    rng = random.Random(5)
    bits = ["dims", "self.trainer", "trainer", "x", "_", ".", " ", "é", "\n", "9", "(", "ﬁ"]
    texts = ["".join(rng.choice(bits) for _ in range(rng.randint(0, 8))) for _ in range(5000)]
    cases = [(word_at_start("dims"), r"\bdims"), (word_at_start("trainer"), r"\btrainer"),
             (word_at_start("self.trainer", r"[\w.]"), r"(?<![\w.])self\.trainer")]
    hits = 0
    for new, old in cases:
        for text in texts:
            spans = [m.span() for m in re.finditer(new, text)]
            assert spans == [m.span() for m in re.finditer(old, text)], (new, text)
            hits += len(spans)
    assert hits > 1000
    assert re.search(word_at_start("dims"), "xdims = 1") is None
    assert re.search(word_at_start("dims"), "dims = 1").span() == (0, 4)


def test_one_of_matches_each_word_as_a_literal():
    import re

    from lightmigrate.analysis.text_patterns import one_of

    pattern = re.compile(one_of({"a.b", "x"}) + "=")
    assert pattern.fullmatch("a.b=") and pattern.fullmatch("x=")
    assert pattern.search("aXb=") is None  # the dot is a literal dot
