"""What a caller sends to read memory: the search and load tools' inputs (no I/O).

Descriptions teach good use: they become the tools' input schemas.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Literal

from pydantic import (
    Field,
    field_validator,
)

from .inputs import MemoryId, Tags
from .narrative import (
    ITEM_MAX,
    TOPIC_MAX,
    Strict,
    _listify,
)


class LoadCheckpointInput(Strict):
    """Which checkpoint to load: the project's latest unless an id is given."""

    checkpoint_id: Annotated[str | None, Field(max_length=200)] = None


class LoadContextInput(Strict):
    """One memory whose graph neighbourhood to tell."""

    memory_id: MemoryId
    # services/graph/depths.py: load_context's own limit (2) by default, the global cap (5) at most.
    depth: Annotated[int, Field(ge=1, le=5, description="Link hops to follow.")] = 2


class SearchByTopicInput(Strict):
    """An exact topic, e.g. 'auth_strategy'."""

    topic: Annotated[str, Field(min_length=1, max_length=TOPIC_MAX)]
    all_projects: bool = False


class SearchByContextInput(Strict):
    """A question in plain words; answers come with how they came to be."""

    query: Annotated[
        str,
        Field(
            min_length=1,
            max_length=ITEM_MAX,
            description="The question, e.g. 'auth for a high-traffic service?'.",
        ),
    ]
    k: Annotated[int, Field(ge=1, le=50, description="How many memories.")] = 8
    include_evolution: bool = True
    include_evidence: bool = True
    include_tensions: bool = True
    min_confidence: Annotated[
        float, Field(ge=0.0, le=1.0, description="Leave out memories less sure than this.")
    ] = 0.5
    all_projects: Annotated[bool, Field(description="Search every project, not just this one.")] = (
        False
    )
    tags: Annotated[Tags, Field(description="Only memories carrying every one of these tags.")] = []
    as_of: Annotated[
        str | None,
        Field(
            max_length=40,
            description="Search as of this date (ISO 8601, e.g. '2025-03-01'): what was known "
            "then, newest version first. Default: now.",
        ),
    ] = None

    _tag_list = field_validator("tags", mode="before")(lambda cls, v: _listify(v))

    @field_validator("as_of")
    @classmethod
    def _instant(cls, value: str | None) -> str | None:
        if value is not None:
            instant_ms(value)
        return value

    def as_of_ms(self) -> int | None:
        """``as_of`` in milliseconds since the epoch (None: now)."""
        return instant_ms(self.as_of) if self.as_of is not None else None


def instant_ms(text: str) -> int:
    """An ISO 8601 date or date-time as ms since the epoch (UTC unless it says otherwise).

    Raises ValueError with the form to use.
    """
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"as_of {text!r} is not a date: use ISO 8601, e.g. 2025-03-01 or 2025-03-01T14:30"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


class MoreToolsInput(Strict):
    """No arguments."""


class SearchRecentInput(Strict):
    """Browse the newest memories."""

    n: Annotated[int, Field(ge=1, le=100)] = 10
    type: Literal["decision", "checkpoint", "insight", "context"] | None = None
