"""The ``decay`` benchmark: a small run end to end, and the rate tables it swaps in and out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.cli import main
from benchmarks.decay import SCHEMES, rates
from benchmarks.tests.test_bench import _mini_locomo
from mama_plugin.services.graph import decay as link_decay


def test_rates_are_swapped_in_and_put_back() -> None:
    before = dict(link_decay.DECAY_RATES)
    with rates(SCHEMES["no decay"]):
        assert link_decay.DECAY_RATES["temporal"] == 0.0
        assert link_decay.DECAY_RATES["evolution"] is None
    assert before == link_decay.DECAY_RATES
    with pytest.raises(RuntimeError), rates(SCHEMES["no decay"]):
        raise RuntimeError
    assert before == link_decay.DECAY_RATES


def test_decay_bench_keyword_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dataset, _ = _mini_locomo(tmp_path)
    out = tmp_path / "d.json"
    argv = ["decay", "--dataset", str(dataset), "--memories", "300", "--keyword-only"]
    assert main([*argv, "--json", str(out)]) == 0
    text = capsys.readouterr().out
    data = json.loads(out.read_text())
    part = data["locomo"]
    assert (part["turns"], part["links"], part["questions"]) == (5, 4, 4)
    # As of June 9th: the two May links are a month old; the two made in June are new (the
    # session's first turn follows May's last, linked when June's turn was said).
    assert part["followed_share"]["no decay"] == 1000
    assert part["followed_share"]["half-lives 30/365/3650 d (before)"] == 500  # 32 days: 0.48
    assert part["followed_share"]["0.1/0.05/0.02 a day (documented)"] == 500
    assert set(part["figures"]["original"]) == {
        "default (no link boost)",
        *(f"+links, {name}" for name in SCHEMES),
    }
    aged = data["aged"]
    documented = aged["archived_share"]["0.1/0.05/0.02 a day (documented)"]
    before = aged["archived_share"]["half-lives 30/365/3650 d (before)"]
    assert documented["evolution"] == before["evolution"] == 0.0
    assert documented["association"] > before["association"]
    assert aged["pruned"] > 0 and "aged synthetic graph: 300 memories" in text
    assert link_decay.DECAY_RATES["temporal"] == 0.1
