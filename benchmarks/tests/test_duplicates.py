"""The ``duplicates`` benchmark: its two public sources and its figures at each bar."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import duplicates as bench
from mama_plugin.text import hangul
from tests.conftest import Counting


def test_the_sources_hold_duplicates_and_saves_that_repeat_nothing_stored() -> None:
    tech = bench.tech()
    repeats = [s for s in tech.saves if s.repeats is not None]
    assert len(tech.stored) >= 100 and len(repeats) >= 100
    assert sum(s.repeats is None for s in tech.saves) >= 100
    assert {s.repeats for s in repeats} <= set(tech.stored)
    klue = bench.klue()
    assert klue.korean and all(hangul(s.text) for s in klue.saves)
    assert sum(s.repeats is not None for s in klue.saves) >= 100  # scored 4 or more
    assert sum(s.repeats is None for s in klue.saves) >= 200  # under 3


def _looked(text: str, repeats: str | None, key: str, cosine: float) -> bench.Looked:
    return bench.Looked(bench.Save(text, repeats), key, cosine)


def test_precision_recall_and_false_claims_at_each_bar() -> None:
    looked = [
        _looked("a", "A", "A", 0.95),  # a duplicate found
        _looked("b", "B", "A", 0.82),  # a duplicate, nearest the wrong memory
        _looked("c", "C", "C", 0.70),  # a duplicate under most bars
        _looked("x", None, "A", 0.84),  # repeats nothing stored
        _looked("y", None, "B", 0.30),
    ]
    rows = {row["bar"]: row for row in bench.at_bars(looked, (0.8, 0.85, 0.99))}
    low = {"claims": 3, "right": 1, "precision": 0.333, "recall": 0.333, "false_claims": 0.5}
    assert rows[0.8] == {"bar": 0.8, **low}
    assert rows[0.85]["claims"] == 1 and rows[0.85]["precision"] == 1.0
    assert rows[0.85]["false_claims"] == 0.0
    none = {"claims": 0, "right": 0, "precision": None, "recall": 0.0, "false_claims": 0.0}
    assert rows[0.99] == {"bar": 0.99, **none}


def test_spread_by_hand() -> None:
    s = bench.spread([0.9, 0.1, 0.5, 0.3, 0.7, 0.2, 0.4, 0.6, 0.8, 1.0])
    assert s == {"n": 10, "min": 0.1, "p10": 0.2, "p50": 0.6, "p90": 1.0, "max": 1.0}
    assert bench.spread([])["n"] == 0


def test_a_run_goes_through_the_products_look_up(tmp_path: Path) -> None:
    """With a model that has no measured bar, the figures still come from the save path's
    own look-up: a text stored and saved again is its own nearest."""
    source = bench.Source(
        "tiny",
        False,
        {"1": "abc abc", "2": "xyz xyz"},
        [bench.Save("abc abc", "1"), bench.Save("qqq", None)],
    )
    counting = Counting()
    looked = bench.look_up(tmp_path, source, counting)
    assert looked[0].right and looked[0].cosine == pytest.approx(1.0, abs=1e-5)
    assert not looked[1].right
    (tmp_path / "again").mkdir()
    figures = bench.measure(source, counting, tmp_path / "again")
    assert figures["read"] and figures["product_bar"] is None
    assert figures["cosines"]["duplicate_with_its_own"]["n"] == 1
