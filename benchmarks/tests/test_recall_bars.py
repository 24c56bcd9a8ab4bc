"""The pointer bars' benchmark: what a rule adds, what it costs, and one repository run."""

from __future__ import annotations

import pytest

from benchmarks.recall_bars import POINTER_TOKENS, Near, Seen, added, bars_run, rules, score
from tests.conftest import built_model, embedder

__all__ = ["built_model", "embedder"]


def _near(key: str, relevant: float, *, null: float = 0.0, readable: bool = True) -> Near:
    return Near(key, relevant, weighted=0.5, terms=4, readable=readable, null=null)


def _seen(*near: Near, meant: str = "", chain: bool = False, told: str = "") -> Seen:
    return Seen("adr", "held-out", frozenset([meant] if meant else []),
                frozenset([told] if told else []), chain, int(bool(told)), 37 if told else 0,
                tuple(near))  # fmt: skip


def test_a_rule_adds_pointers_only_where_no_chain_is_told_and_two_at_most() -> None:
    every = rules()
    low = every["absolute 0.35"]
    near = (_near("a", 0.5), _near("b", 0.4))
    assert added(_seen(*near), low) == ["a", "b"]
    assert added(_seen(*near, chain=True), low) == []  # a chain is told: nothing beside it
    assert added(_seen(*near, told="a"), low) == ["b"]  # one pointer told already
    assert added(_seen(_near("a", 0.5, readable=False)), low) == []  # a script it cannot read
    assert added(_seen(*near), None) == []  # today's tiers add nothing
    # Relative to the memory: what it got from the null prompts, plus the rule's step.
    relative = every["memory +0.1"]
    assert added(_seen(_near("a", 0.5, null=0.45), _near("b", 0.5, null=0.3)), relative) == ["b"]


def test_the_score_counts_reach_and_what_an_added_pointer_costs() -> None:
    related = _seen(_near("a", 0.5), meant="a")
    silent = _seen(_near("x", 0.5))
    pointed = _seen(_near("y", 0.5), _near("z", 0.5), told="w")
    rule = rules()["absolute 0.35"]
    today, more = score([related, silent, pointed], None), score([related, silent, pointed], rule)
    assert today["held-out/adr"]["reach"] == 0.0 and more["held-out/adr"]["reach"] == 1.0
    # One added to nothing costs a pointer; one added beside a pointer costs the second's share.
    assert today["held-out/adr"]["tokens_mean"] == round(37 / 2, 1)
    cost = POINTER_TOKENS[1] + (37 + POINTER_TOKENS[2] - POINTER_TOKENS[1])
    assert more["held-out/adr"]["tokens_mean"] == round(cost / 2, 1)
    assert more["held-out/adr"]["given"] == 1.0


@pytest.mark.usefixtures("mama_home")
def test_one_repository_run_holds_every_rule_and_no_rule_loses_reach(embedder: object) -> None:
    text, data = bars_run(embedder, repositories=1, recall_set=False)  # type: ignore[arg-type]
    assert set(data["figures"]) == set(rules())
    today = data["figures"]["today"]
    for name, figures in data["figures"].items():
        for key, row in figures.items():
            assert row["reach"] is None or row["reach"] >= today[key]["reach"], (name, key)
            if row["tokens_mean"] is not None:
                assert row["tokens_mean"] >= today[key]["tokens_mean"], (name, key)
    assert "| memory +0.1 |" in text and data["null_prompts"] == 75
