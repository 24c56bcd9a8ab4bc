"""The story benchmark: its labels follow their rule, a wrong start scores wrong, a small run."""

from __future__ import annotations

from pathlib import Path

from benchmarks.checkout import ROOT
from benchmarks.story import story_run
from benchmarks.story_judge import Judged, judge, open_entries
from benchmarks.story_labels import Sequence, Start, load, starts
from benchmarks.story_replay import tool_saves
from mama_plugin.transcript.turns import turn_digests

LABELS = load()


def _sequence(name: str) -> Sequence:
    return next(q for q in LABELS.sequences if q.name == name)


def test_the_labels_follow_the_rule_light_sessions_and_forgetting() -> None:
    q = _sequence("tally-decision-forgotten")  # tf, sd, forget sd, tp, as
    told = starts(LABELS, q)
    assert [s.resume for s in told] == ["1", "1", "1", "1", "4"]
    assert told[1].decisions == ("shape",) and told[2].decisions == ()
    assert set(told[3].open) == {"add_stats", "stats_test_fails"}
    assert told[4].open == () and set(told[4].closed) == {"add_stats", "stats_test_fails"}
    hello = starts(LABELS, _sequence("tally-hello-first"))
    assert [s.resume for s in hello] == [None, None, "3", "3"]


def _judged(text: str, wanted: Start) -> Judged:
    q = _sequence("tally-pytest-takes-over")
    marks = {"1": LABELS.sessions["tf"].marks, "2": LABELS.sessions["tp"].marks}
    return judge(text, wanted, LABELS.items[q.project], marks, LABELS.decisions["tally"], [])


WANTED = Start(2, "1", ("add_stats", "stats_test_fails"), (), ())
RIGHT = """What I did (2026-12-02, chk_1, saved automatically): Write a test for a stats() method on \
Counter first: count, mean and max per name.
Unresolved:
- test_stats fails with AttributeError: Counter has no stats() yet
Next step: add stats() to Counter in tally/counter.py (HIGH) — what I said comes next
"""
WRONG = """What I did (2026-12-02, chk_2, saved automatically): Run pytest. — 1 failed, 2 passed.
Remains: add a stats() method to Counter in tally/counter.py
Unresolved:
- That problem is solved.
Next step: add stats() to Counter in tally/counter.py (HIGH)
"""


def test_a_right_start_scores_right_and_a_wrong_one_wrong() -> None:
    right = _judged(RIGHT, WANTED)
    assert right.resume_right and right.resumed == "1"
    assert sorted(right.found) == ["add_stats", "stats_test_fails"]
    assert right.correct == len(right.entries) == 2 and right.twice == []
    wrong = _judged(WRONG, WANTED)
    assert not wrong.resume_right and wrong.resumed == "2"
    assert wrong.found == ["add_stats"] and wrong.twice == ["add_stats"]
    assert wrong.correct == 2 and len(wrong.entries) == 3  # "That problem is solved." is not open
    assert [h for h, _ in open_entries(WRONG)] == ["remains", "unresolved", "next step"]


def test_a_recording_s_saves_are_placed_in_their_turns() -> None:
    path = Path(LABELS.sessions["de"].transcript)
    digests = turn_digests(path)
    saves = tool_saves(path, [d.tool_names for d in digests])
    assert [tool for tool, _ in saves[1]] == ["save_decision"] * 3


def test_the_smallest_run_computes_every_figure_and_a_baseline_column() -> None:
    text, data = story_run(ROOT, limit=1)  # this checkout as its own baseline: the same figures
    today, baseline = data["columns"]["today"], data["columns"]["baseline"]
    assert data["sequences"] == 1 and today["startup"]["starts"] == 3
    assert today == {**baseline, "checkout": today["checkout"]}
    for source in ("startup", "compact"):
        f = today[source]
        assert 0 <= f["resume_right"] <= 1 and 0 <= f["open_recall"] <= 1
        assert 0 < f["tokens_mean"] <= f["tokens_max"] and f["open_labelled"] == 4
    assert "resume point right" in text and "baseline (compact)" in text
