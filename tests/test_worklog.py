"""A rolling checkpoint's record of its session (services/story/worklog.py): written from one
type, read through it, its line composed from it and never parsed back."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from mama_plugin.services.story import briefing
from mama_plugin.services.story.autosave import checkpoint_turn
from mama_plugin.services.story.done import evidence
from mama_plugin.services.story.worklog import WorkLog
from mama_plugin.storage import MemoryRecord, Store
from mama_plugin.transcript import Command, Digest, FileTouch

CACHE = FileTouch("/p/app/cache.py", "created", (1, 40))
README = FileTouch("/p/README.md", "edited", (3, 9))


def record(metadata: dict[str, Any], *, type: str = "checkpoint", **layers: Any) -> MemoryRecord:
    values: dict[str, Any] = {
        "seq": 1, "id": "chk_1", "type": type, "project": "/p", "topic": "checkpoint",
        "content": "", "specifics": [], "evidence": [], "reasoning": {}, "tension": {},
        "continuity": {}, "outcome_status": "PENDING", "outcome": {}, "confidence": 0.5,
        "tags": [], "status": "active", "session_id": "s", "metadata": metadata,
        "times_used": 0, "last_used": None, "created_at": 1, "updated_at": 1, "version": 1,
    }  # fmt: skip
    return MemoryRecord(**(values | layers))


text = st.text(max_size=40)
logs = st.builds(
    WorkLog,
    request=text,
    first_request=text,
    work_requests=st.integers(0, 50),
    last_message=text,
    decisions=st.lists(st.text(min_size=1, max_size=12), max_size=3).map(tuple),
    tool_calls=st.integers(0, 500),
    work=st.booleans(),
    activity=text,
    moved_at=st.none() | st.integers(1, 2**53),
    changed=st.none() | st.lists(st.tuples(text, text), max_size=3).map(tuple),
)


@given(logs)
def test_a_record_reads_back_as_it_was_written(log: WorkLog) -> None:
    assert WorkLog.of(record(log.metadata())) == log


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)


@given(st.dictionaries(st.sampled_from(["request", "first_request", "work_requests",
                                        "last_message", "decisions", "tool_calls", "work",
                                        "activity", "moved_at", "changed", "other"]),
                       json_values))  # fmt: skip
def test_whatever_a_row_holds_reads_without_raising(metadata: dict[str, Any]) -> None:
    log = WorkLog.of(record({**metadata, "auto": True}))
    assert log is not None
    log.summary(), log.did(latest=True), log.changed_line()  # every line composes


def test_only_a_rolling_checkpoint_has_one() -> None:
    assert WorkLog.of(record({"request": "x"})) is None  # Claude's own checkpoint
    assert WorkLog.of(record({"auto": True}, type="decision")) is None


def test_the_line_is_composed_from_the_record_not_parsed_back(store: Store, project: str) -> None:
    """What the checkpoint shows ("Working on: … — last: …") is the record's summary, and
    what the story tells ("… — …") comes from the same fields, whatever the content says."""
    first = Digest(user_requests=["Add a TTL cache"], files=[CACHE], turn_work=1,
                   commands=[Command("pytest -q", "Run the tests", False, "")])  # fmt: skip
    checkpoint_turn(
        store, project, session_id="s", digest=first, last_message="Added it.", cwd="/p"
    )
    second = replace(first, user_requests=["Add a TTL cache", "Document it"], files=[CACHE, README])
    cp = checkpoint_turn(
        store, project, session_id="s", digest=second, last_message="Documented.", cwd="/p"
    )
    assert cp is not None
    log = WorkLog.of(cp)
    assert log is not None and cp.content == log.summary()
    assert cp.content == "Working on: Add a TTL cache; then Document it — last: Documented."
    assert log.changed == (("app/cache.py:1-40", "created"), ("README.md:3-9", "edited"))
    assert "Changed" not in " ".join(cp.continuity.get("done") or [])  # evidence of its own
    # A content edited by hand changes nothing the story tells.
    store.memories.update(cp.id, content="Working on: something else — last: whatever")
    facts = briefing.gather(store, project, followup_days=7, now=0)
    assert facts is not None and facts.did == ["Add a TTL cache; then Document it — Documented."]
    assert facts.done[-1] == "Changed app/cache.py:1-40 (created), README.md:3-9 (edited)"


def test_a_row_from_before_changed_was_recorded_keeps_its_changed_item() -> None:
    """Older rows told the files they changed as one "Changed …" done item: it is told as
    before, and it is no evidence of done work (a file list is not what a step asked for)."""
    old = record({"auto": True, "request": "Add a TTL cache", "work": True},
                 continuity={"done": ["Ran the linter", "Changed app/cache.py:1-40 (created)"]})  # fmt: skip
    assert WorkLog.done_items(old) == ["Ran the linter"]
    assert evidence(old).done == ["Ran the linter"]
    new = record({"auto": True, "request": "x", "work": True, "changed": [["a.py", "edited"]]},
                 continuity={"done": ["Changed the TTL to 30 s"]})  # fmt: skip
    assert evidence(new).done == ["Changed the TTL to 30 s"]  # a done item like any other
