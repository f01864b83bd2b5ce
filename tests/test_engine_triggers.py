"""The rules' text triggers (engine/triggers.py): each rule's ``may_apply`` answered for many
texts at once, first from the text's vocabulary, always exactly as a plain substring search."""

from pathlib import Path

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def test_text_triggers_answer_as_each_rules_may_apply():
    import random

    from lightmigrate.engine.triggers import TextTriggers
    from lightmigrate.rules import ALL_RULES, OPT_IN_RULES

    rules = [*ALL_RULES, *OPT_IN_RULES]
    triggers = TextTriggers(rules)
    words = sorted({t for r in rules for t in r.triggers} | {"super", "dims=3", "self.dims", "x", "\n"})
    rng = random.Random(7)
    texts = [p.read_text(encoding="utf-8") for p in sorted(CORPUS.glob("*.py"))]
    texts += ["".join(rng.choice(words) + rng.choice(" .(_") for _ in range(rng.randint(0, 6))) for _ in range(3000)]
    texts += ["", "lightning", "pytorch_lightning", "lightning.pytorch", "trainer", "trainer.", "super().__init__(dims=(1, 2))"]
    matched_some = 0
    for text in texts:
        expected = frozenset(r.code for r in rules if r.may_apply(text))
        assert triggers.matched(text) == expected, text
        some = tuple(sorted(r.code for r in rules)[::2])
        assert triggers.matched(text, some) == expected & frozenset(some)
        matched_some += bool(expected)
    assert 100 < matched_some < len(texts)  # texts that match and texts that do not


def test_text_triggers_vocabulary_answers_as_plain_search(monkeypatch):
    # Big texts are first checked against their vocabulary: the answer must still be exactly
    # "is the trigger a substring of the text", also where a trigger's runs sit next to other
    # word characters, next to non-ASCII characters, or next to a lone surrogate.
    import random

    from lightmigrate.engine import triggers as triggers_module
    from lightmigrate.rules import ALL_RULES, OPT_IN_RULES

    rules = [*ALL_RULES, *OPT_IN_RULES]
    distinct = sorted({t for r in rules for t in r.triggers})
    pieces = distinct + ["x", "_", "é", "\ud800", "ﬁ", " ", "\n", "(", ".", "9"]
    rng = random.Random(11)
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 400))) for _ in range(400)]
    texts += [t[1:-1] for t in distinct if len(t) > 2]  # a trigger cut short at either end
    texts += [t.replace("_", "é") for t in distinct]
    monkeypatch.setattr(triggers_module, "VOCABULARY_MIN_CHARS", 0)
    triggers = triggers_module.TextTriggers(rules)
    found = 0
    for text in texts:
        present = triggers.present(text)
        assert present == {t: t in text for t in distinct}, text
        assert triggers.matched(text) == frozenset(r.code for r in rules if r.may_apply(text))
        found += sum(present.values())
    assert 0 < found < len(texts) * len(distinct)


def test_vocabulary_holds_each_word_once():
    from lightmigrate.engine.triggers import vocabulary, word_runs

    words = vocabulary("a.b(a_1, é9 b)\ud800x\n").split(b" ")
    assert sorted(words) == [b"9", b"a", b"a_1", b"b", b"x"]
    assert word_runs("def on_") == (b"def", b"on_")
    assert word_runs(".log(") == (b"log",)
    assert word_runs("((") == ()


def test_probes_are_found_along_with_the_triggers(monkeypatch):
    # ``TextTriggers(rules, probes)``: the probes a text holds come back with the matched codes,
    # exactly as a plain substring search finds them, small texts and big (vocabulary) alike.
    import random

    from lightmigrate.engine import triggers as triggers_module
    from lightmigrate.analysis.project import TEXT_PROBES
    from lightmigrate.rules import ALL_RULES

    pieces = list(TEXT_PROBES) + ["dp", "'", '"', "class", "x", " ", "\n", "_", "ﬁ", "optim", "izer"]
    rng = random.Random(5)
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 300))) for _ in range(300)]
    found = 0
    for threshold in (0, 10**9):
        monkeypatch.setattr(triggers_module, "VOCABULARY_MIN_CHARS", threshold)
        triggers = triggers_module.TextTriggers(ALL_RULES, TEXT_PROBES)
        for text in texts:
            matched, probes = triggers.matched_and_probes(text)
            assert probes == frozenset(p for p in TEXT_PROBES if p in text), text
            assert matched == triggers.matched(text)
            found += len(probes)
    assert 0 < found < 2 * len(texts) * len(TEXT_PROBES)


def test_the_index_reads_the_same_from_the_probes_as_from_the_text():
    # the survey hands the index the probes the prefilter found: the entry is the one the index
    # reads from the text itself
    from lightmigrate.engine.triggers import TextTriggers
    from lightmigrate.analysis.project import TEXT_PROBES, _text_settings, lazy_entry, worth_indexing

    root = Path(__file__).resolve().parent.parent
    triggers = TextTriggers([], TEXT_PROBES)
    texts = [p.read_text(encoding="utf-8") for p in sorted([*CORPUS.glob("*.py"), *root.joinpath("lightmigrate").rglob("*.py")])]
    texts.append('trainer = Trainer(strategy="dp", gradient_clip_val=0.5)\nclass M(LightningModule):\n    pass\n')
    kept = 0
    for text in texts:
        _, probes = triggers.matched_and_probes(text)
        assert lazy_entry(text, "m.py", probes) == lazy_entry(text, "m.py")
        assert _text_settings(text, "m.py", present=probes) == _text_settings(text, "m.py")
        kept += worth_indexing(text, probes)
    assert 0 < kept < len(texts)
    assert _text_settings(texts[-1], "m.py", present=triggers.matched_and_probes(texts[-1])[1])[0]  # DP selected
