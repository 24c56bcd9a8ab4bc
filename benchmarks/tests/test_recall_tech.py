"""The technical set of the recall benchmark: Stack Overflow duplicate questions, shipped."""

from __future__ import annotations

import json

from benchmarks import recall as bench_recall
from benchmarks import recall_data
from mama_plugin.text import hangul


def test_the_technical_set_is_public_and_holds_both_kinds_in_both_halves() -> None:
    data = json.loads(recall_data.TECH.read_text(encoding="utf-8"))
    assert "CC BY-SA" in data["licence"] and "stackoverflow.com" in data["licence"]
    assert "list_of_dup_questions.json" in data["source"] and "commit" in data["source"]
    memories, cases, line = recall_data.tech()
    assert "CC BY-SA" in line and "Stack Overflow" in line
    keys = {m.key for m in memories}
    assert len(keys) == len(memories) >= 100
    for half in ("calibration", "held-out"):
        asked = [c for c in cases if c.split == half]
        assert sum(c.related for c in asked) >= 50
        assert sum(not c.related for c in asked) >= 50
    assert all(c.meant <= keys for c in cases)
    assert {k for c in cases for k in c.meant} == keys  # every memory is meant by a prompt
    assert all(c.language == "en" and c.group == "tech" and not hangul(c.prompt) for c in cases)
    stored = {m.content.casefold() for m in memories}
    assert not any(c.prompt.casefold() in stored for c in cases)


def test_the_technical_set_is_asked_beside_the_others_in_a_column_of_its_own() -> None:
    data = recall_data.labelled(None)
    assert {c.source for c in data.cases} == {"klue-sts", "tech"}
    assert any("Stack Overflow" in s for s in data.sources)
    cases = [
        recall_data.Case("a", frozenset({"m1"}), "en", "tech", "held-out"),
        recall_data.Case("b", frozenset({"m2"}), "en", "locomo", "held-out"),
        recall_data.Case("c", frozenset(), "en", "tech", "held-out"),
    ]
    figures = bench_recall.score(cases, [["m1"], [], ["m1"]], "held-out")
    assert figures["tech"] == {"recall": 1.0, "silence": 0.0, "related": 1, "unrelated": 1}
    assert figures["en"] == {"recall": 0.0, "silence": None, "related": 1, "unrelated": 0}
    assert figures["all"]["related"] == 2
