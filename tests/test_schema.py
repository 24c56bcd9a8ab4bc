"""The pydantic models: round trips, shorthand forms, and errors that say what to fix."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mama_plugin.errors import ValidationError
from mama_plugin.schema import (
    CheckpointInput,
    ContextInput,
    DecisionInput,
    InsightInput,
    LinkInput,
    OutcomeInput,
    parse,
)
from mama_plugin.schema.narrative import (
    ITEM_MAX,
    TOPIC_MAX,
    Continuity,
    Outcome,
    Reasoning,
    Tension,
)
from mama_plugin.schema.validation import WHY

text = st.text(min_size=1, max_size=60).map(str.strip).filter(bool)
items = st.lists(text, max_size=4)
priority = st.sampled_from(["HIGH", "MEDIUM", "LOW"])
next_steps = st.lists(
    st.builds(dict, step=text, priority=priority, context=st.just("")), max_size=3
)
confidence = st.floats(min_value=0, max_value=1, allow_nan=False)
link = st.builds(
    dict,
    to_id=text,
    relationship=st.sampled_from(["supersedes", "motivated by", "Relates-To"]),
    reason=text,
)

decisions = st.builds(
    dict,
    topic=text,
    decision=text,
    reasoning=st.builds(dict, primary=text, secondary=items,
                        alternatives_considered=st.lists(st.builds(dict, option=text, rejected_because=text), max_size=2)),
    specifics=items,
    evidence=st.lists(st.builds(dict, source=text, detail=st.just("")), max_size=3),
    tension=st.builds(dict, concerns=items, trade_offs=items, risks=items),
    next_steps=next_steps,
    confidence=confidence,
    tags=st.lists(text.filter(lambda t: len(t) <= 64), max_size=3),
    links=st.lists(link, max_size=2),
)  # fmt: skip
checkpoints = st.builds(
    dict, summary=text, what_was_done=items, what_remains=items, next_steps=next_steps,
    open_files=items, tension=st.builds(dict, concerns=items),
)  # fmt: skip
insights = st.builds(dict, content=text, topic=text, tags=st.lists(st.just("lesson"), max_size=1))


@pytest.mark.parametrize(
    ("model", "strategy"),
    [(DecisionInput, decisions), (CheckpointInput, checkpoints), (InsightInput, insights),
     (ContextInput, insights)],
)  # fmt: skip
@given(data=st.data())
def test_every_input_model_round_trips_through_json(model, strategy, data) -> None:
    parsed = parse(model, data.draw(strategy))
    again = model.model_validate_json(parsed.model_dump_json())
    assert again == parsed
    assert model.model_validate(parsed.model_dump()) == parsed


@given(st.builds(dict, status=st.sampled_from(["PENDING", "SUCCESS", "PARTIAL", "FAILED", "SUPERSEDED"]),
                 details=st.text(max_size=50).map(str.strip), evidence=items, learned=items))  # fmt: skip
def test_outcome_and_layers_round_trip(raw) -> None:
    for model, value in ((Outcome, raw), (Continuity, {"done": ["x"], "next_steps": ["y"]}),
                         (Tension, {"risks": ["SPOF"]}), (Reasoning, {"primary": "why"})):  # fmt: skip
        parsed = model.model_validate(value)
        assert model.model_validate_json(parsed.model_dump_json()) == parsed


def test_shorthand_forms_are_expanded() -> None:
    d = parse(DecisionInput, {
        "topic": "auth", "decision": "sessions", "reasoning": "JWT refresh hit the DB",
        "tension": "Redis is a SPOF", "next_steps": ["set up HA", {"step": "x", "priority": "high"}],
        "evidence": "bench.txt:1-9", "links": {"to_id": "a", "relationship": "Motivated-By", "reason": "r"},
    })  # fmt: skip
    assert d.reasoning.primary == "JWT refresh hit the DB"  # the v1.0 shape
    assert d.tension.concerns == ["Redis is a SPOF"]
    assert [s.priority for s in d.next_steps] == ["MEDIUM", "HIGH"]
    assert d.evidence[0].source == "bench.txt:1-9"
    assert d.links[0].relationship == "motivated_by"


def _problems(model, data) -> list[str]:
    with pytest.raises(ValidationError) as info:
        parse(model, data)
    return info.value.problems


@pytest.mark.parametrize("reasoning", [None, "", "   ", {}, {"primary": ""}, {"secondary": ["x"]}])
def test_missing_reasoning_asks_why(reasoning) -> None:
    data = {"topic": "t", "decision": "d"}
    if reasoning is not None:
        data["reasoning"] = reasoning
    assert _problems(DecisionInput, data) == [WHY]
    assert "explain WHY" in WHY


def test_link_without_reason_says_every_link_needs_one() -> None:
    problems = _problems(DecisionInput, {"topic": "t", "decision": "d", "reasoning": "r",
                                         "links": [{"to_id": "x", "relationship": "refines"}]})  # fmt: skip
    assert problems == [
        "links[0].reason: every link needs a reason — say in one sentence why the two are linked"
    ]
    assert (
        "every link needs a reason"
        in _problems(LinkInput, {"to_id": "x", "relationship": "r", "reason": " "})[0]
    )


@pytest.mark.parametrize("value", [-0.1, 1.5, 7])
def test_confidence_out_of_range(value) -> None:
    problems = _problems(InsightInput, {"content": "c", "confidence": value})
    assert problems == [f"confidence must be between 0 and 1 (got {value!r})"]


def test_many_problems_are_reported_together() -> None:
    problems = _problems(DecisionInput, {"topic": "x" * (TOPIC_MAX + 1), "decision": "",
                                         "reasoning": {"primary": "r", "secundary": "typo"}})  # fmt: skip
    assert any(
        p.startswith("topic is too long (201 characters; the limit is 200)") for p in problems
    )
    assert "decision must not be empty" in problems
    assert "reasoning.secundary is not a known field — check its spelling" in problems


def test_enum_and_type_errors_name_the_choices() -> None:
    problems = _problems(OutcomeInput, {"memory_id": "m", "outcome": "done", "details": "x"})
    assert "outcome must be one of" in problems[0] and "'FAILED'" in problems[0]
    assert "details is required" in _problems(OutcomeInput, {"memory_id": "m", "outcome": "FAILED"})
    assert "wrong type" in _problems(InsightInput, {"content": ["not", "text"]})[0]


def test_oversized_items_and_lists_are_refused() -> None:
    assert (
        "too long"
        in _problems(CheckpointInput, {"summary": "s", "what_remains": ["x" * (ITEM_MAX + 1)]})[0]
    )
    assert (
        "too many items"
        in _problems(CheckpointInput, {"summary": "s", "open_files": ["f"] * 51})[0]
    )


@pytest.mark.parametrize("bad", ["", "   ", "!!", "a" * 65])
def test_bad_relationship_words(bad) -> None:
    problems = _problems(LinkInput, {"to_id": "x", "relationship": bad, "reason": "r"})
    assert problems and problems[0].startswith("relationship")


def test_non_object_input_is_refused() -> None:
    assert _problems(DecisionInput, ["not", "an", "object"]) == [
        "expected a JSON object of fields, got list"
    ]
