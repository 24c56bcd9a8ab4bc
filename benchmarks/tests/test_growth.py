"""``python -m benchmarks growth`` at tiny counts: one memory a session whatever the turns, a
session start timed at each point, the backups held to their cap."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.cli import main
from benchmarks.growth import Seeded, simulate


def test_the_store_keeps_one_checkpoint_a_session_whatever_the_turns() -> None:
    few, many = simulate(4, 2, days=8, runs=1), simulate(4, 6, days=8, runs=1)
    for f in (few, many):
        assert f["first"]["memories"] == 1 and f["end"]["memories"] == 4
        assert f["start"] == f["end"] | {k: f["start"][k] for k in f["start"] if "ms" in k}
        assert f["after_gc"]["memories"] == 4  # nothing gc may fold: one a session already
        assert f["end"]["backups"] == 3  # a simulated day each, the newest three kept
        assert all(f[p]["start_p50_ms"] > 0 for p in ("first", "start", "end", "after_gc"))
    # Three times the turns, about the same bytes: the rows are rewritten, not added.
    assert many["kept_row_bytes"] < 1.5 * few["kept_row_bytes"]


def test_the_seeded_vectors_are_unit_and_stable() -> None:
    a, b = Seeded(8).embed(["x", "x"])
    assert a == b and sum(v * v for v in a) == pytest.approx(1.0)


def test_the_command_prints_the_start_the_end_and_gc(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "growth.json"
    args = ["--sessions", "3", "--turns", "2", "--days", "3", "--runs", "1", "--json", str(out)]
    assert main(["growth", *args]) == 0
    text = capsys.readouterr().out
    rows = [line.split()[0] for line in text.splitlines()[2:6]]
    assert rows == ["first", "start", "end", "after"]
    assert "gc: 0 checkpoints folded" in text
    assert json.loads(out.read_text())["end"]["memories"] == 3
