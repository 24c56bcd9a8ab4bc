"""A draft tells each fact once (mama_plugin/assist/draft_once.py)."""

from __future__ import annotations

from mama_plugin.assist.draft_once import once

COST = "Write-through costs one extra cache write per price update (about 0.4 ms)."
STALE = "The TTL kept old prices for up to 60 s after every price change."


def _proposal() -> dict:
    return {
        "decision": "Make the catalog cache write-through",
        "reasoning": {
            "primary": STALE,
            "secondary": [COST, STALE, "It keeps the hit rate at 97%."],
            "alternatives_considered": [{"option": "a 5 s TTL", "rejected_because": STALE}],
        },
        "specifics": ["about 0.4 ms", "97%", "p99 41 ms at 10K req/s"],
        "evidence": [
            {
                "source": "pytest -q",
                "kind": "command",
                "detail": "Run the tests (failed: exit 1, E)",
            },
            {"source": "sh smoke.sh", "kind": "command", "detail": "Smoke (failed: exit 7, curl)"},
            {"source": "cache.py:1-20", "kind": "file", "detail": "edited"},
        ],
        "tension": {
            "concerns": [COST, "`pytest -q` failed (Run the tests): exit 1, E"],
            "trade_offs": [COST.upper()],
            "risks": [],
        },
    }


def test_each_sentence_is_kept_where_it_says_the_most() -> None:
    before = _proposal()
    after = once(before)
    assert after["reasoning"]["primary"] == STALE  # kept, and its alternative as it was
    assert (
        after["reasoning"]["alternatives_considered"]
        == before["reasoning"]["alternatives_considered"]
    )
    # The cost is an open trade-off: told there, not again as a reason; the reason once.
    assert after["reasoning"]["secondary"] == ["It keeps the hit rate at 97%."]
    assert after["tension"]["concerns"] == before["tension"]["concerns"]
    assert after["tension"]["trade_offs"] == []  # the same sentence, told in concerns
    # A specific the sentences shown hold is not repeated; one they do not is kept.
    assert after["specifics"] == ["p99 41 ms at 10K req/s"]
    # The failure the tension tells: its evidence keeps that it failed, not the error again.
    assert [e["detail"] for e in after["evidence"]] == [
        "Run the tests (failed)",
        "Smoke (failed: exit 7, curl)",
        "edited",
    ]
    assert before == _proposal()  # the input is not changed


def test_a_proposal_without_the_fields_passes() -> None:
    assert once({"decision": "d"})["specifics"] == []


def test_a_reason_a_concern_tells_whole_is_told_there() -> None:
    cost = "Shipping as is would put p99 at 93 ms"
    proposal = {
        "reasoning": {"primary": "Profile first.", "secondary": [f"{cost}.", "CI has no check."]},
        "tension": {"concerns": [f"{cost}: that is a real downside for conversion."]},
    }
    after = once(proposal)
    assert after["reasoning"]["secondary"] == ["CI has no check."]
    assert after["tension"]["concerns"] == proposal["tension"]["concerns"]


def test_a_short_reason_a_concern_qualifies_is_kept() -> None:
    proposal = {
        "reasoning": {"primary": "p", "secondary": ["Faster.", "It scales to ten nodes easily."]},
        "tension": {
            "concerns": [
                "Faster only when warm",
                "It scales to ten nodes easily only with pgbouncer",
            ]
        },
    }
    assert once(proposal)["reasoning"]["secondary"] == proposal["reasoning"]["secondary"]
