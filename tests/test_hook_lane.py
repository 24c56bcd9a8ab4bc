"""The front's hook lane reads a hook's arguments as the schema's hook inputs do, without pydantic."""

from __future__ import annotations

import pytest

from mama_plugin.schema import ObservePromptInput, TurnInput
from mama_plugin.server.hook_lane import PromptArgs, TurnArgs, arguments

GIVEN = [
    {"prompt": "which auth?", "session_id": "s1", "transcript_path": "/t.jsonl"},
    {"prompt": "x" * 30_000, "session_id": "s" * 500, "extra": 1},
    {},
    {"session_id": "s", "last_assistant_message": "Done.", "cwd": "/p", "stop_hook_active": "true"},
    {"stop_hook_active": True, "transcript_path": "p" * 5000},
]


@pytest.mark.parametrize("given", GIVEN)
def test_the_lane_reads_what_the_schema_reads(given: dict[str, object]) -> None:
    for lane, schema in ((PromptArgs, ObservePromptInput), (TurnArgs, TurnInput)):
        read, validated = arguments(lane, given), schema.model_validate(given)
        for name in lane.__dataclass_fields__:
            assert getattr(read, name) == getattr(validated, name), name
    assert arguments(TurnArgs, given).continuing == TurnInput.model_validate(given).continuing


@pytest.mark.parametrize("given", [{"prompt": 3}, {"session_id": None}, ["prompt"], "text"])
def test_a_wrong_type_is_refused_as_the_schema_refuses_it(given: object) -> None:
    with pytest.raises(ValueError):
        arguments(PromptArgs, given)
    with pytest.raises(ValueError):  # pydantic's ValidationError is a ValueError
        ObservePromptInput.model_validate(given)
