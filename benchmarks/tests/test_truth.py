"""The truth benchmark: its core on recorded sessions against their labels, so it cannot rot."""

from __future__ import annotations

import pytest

from benchmarks.truth import load, truth_run, verdict_rows
from mama_plugin.errors import MamaError


def test_every_labelled_session_matches_its_recording() -> None:
    sessions = load()
    assert sum(len(s.ends) for s in sessions) >= 100  # the issue asks for 100 labelled turns
    rows = verdict_rows(sessions)  # raises when a label is out of step with its transcript
    assert {r["truth"] for r in rows} == {"passed", "failed", "unknown"}


def test_a_piped_run_that_printed_failures_is_failed_now_and_passed_before() -> None:
    text, data = truth_run(["truth_pipes"])
    assert data["verdict_now"]["n"] == 11
    assert data["verdict_before"]["failed"]["recall"] == 0.0  # no piped failure has a status
    assert data["verdict_now"]["failed"]["recall"] >= 0.6
    assert data["verdict_now"]["unknown"]["recall"] == 1.0
    tail = "  truth_pipes#1 `python -m pytest -q -p no:cacheprovider tests 2>&1 | tail -15`"
    assert f"{tail}: failed / passed / failed" in data["disagreements"]
    assert "verdict per Bash call" in text and "done (a held step" in text


def test_the_baseline_verdicts_show_a_failed_test_step_done() -> None:
    _, data = truth_run(["truth_looks"])
    before, now = data["done_before"], data["done_now"]
    assert before["wrongly_dropped"] > 0 and now["wrongly_dropped"] == 0
    assert (
        "  wrongly dropped: truth_looks: 'run the ledger tests': 8 → 10; 9 → 10"
        in (data["disagreements"])
    )
    turn = data["work_turn_now"]
    assert turn["True"]["precision"] == 1.0 and turn["False"]["recall"] == 1.0  # looks are looks


def test_an_unknown_session_is_named() -> None:
    with pytest.raises(MamaError, match="no labelled session nope"):
        truth_run(["nope"])
