"""What the graph tools take: a relationship query or a "what happened after", and health."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from .inputs import MemoryId
from .narrative import Strict


class FindLinksInput(Strict):
    """Links by relationship (the word and its synonyms), or what followed a memory."""

    relationship: Annotated[
        str | None,
        Field(
            max_length=64,
            description="Links with this relationship word or a word of the same meaning "
            "(e.g. inspired_by also finds motivated_by once they are merged or close).",
        ),
    ] = None
    after: Annotated[
        MemoryId | None,
        Field(
            description="What happened after this memory: what implemented it or came next "
            "in time, up to 5 hops."
        ),
    ] = None
    window_days: Annotated[
        float, Field(gt=0, le=3650, description="With after: only links made within this window.")
    ] = 7.0
    limit: Annotated[int, Field(ge=1, le=200)] = 50

    @model_validator(mode="after")
    def _one_question(self) -> FindLinksInput:
        if (self.relationship is None) == (self.after is None):
            raise ValueError("give exactly one of relationship (a word) or after (a memory id)")
        return self


class GraphHealthInput(Strict):
    """No arguments: the current project's graph."""
