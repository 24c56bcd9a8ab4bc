"""What a caller sends to forget or correct a memory (no I/O)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, model_validator

from .inputs import Confidence, Evidence, MemoryId, Tags
from .narrative import TEXT_MAX, TOPIC_MAX, Items, Reasoning, Strict, Tension

# The narrative fields an update may change, as the tool names them.
NARRATIVE = ("topic", "content", "reasoning", "specifics", "evidence", "tension", "tags")


class ForgetInput(Strict):
    """A memory to delete for good, its text with it."""

    memory_id: MemoryId


class PromoteInput(Strict):
    """A memory to make global (every project inherits it), or with ``back`` to return to
    this project."""

    memory_id: MemoryId
    back: bool = False


class UpdateInput(Strict):
    """New values for narrative fields of a memory, with the version they were read at.

    Only the fields given change. A version that is no longer the stored one is a conflict:
    nothing is written and both versions are shown.
    """

    memory_id: MemoryId
    expected_version: Annotated[
        int,
        Field(
            ge=1,
            description="The memory's version when you read it (load_context, mama show). "
            "If it changed since, nothing is written and both versions are shown.",
        ),
    ]
    topic: Annotated[str | None, Field(min_length=1, max_length=TOPIC_MAX)] = None
    content: Annotated[
        str | None,
        Field(
            min_length=1,
            max_length=TEXT_MAX,
            description="The main text: a decision's WHAT, a checkpoint's summary, a lesson.",
        ),
    ] = None
    reasoning: Reasoning | None = None
    specifics: Items | None = None
    evidence: Evidence | None = None
    tension: Tension | None = None
    tags: Tags | None = None
    confidence: Confidence | None = None

    @model_validator(mode="after")
    def _something_to_change(self) -> UpdateInput:
        if not self.changes():
            raise ValueError(
                f"give at least one field to change: {', '.join(NARRATIVE)} or confidence"
            )
        return self

    def changes(self) -> dict[str, Any]:
        """The fields given, as the store writes them (models as plain data)."""
        given = self.model_dump(
            include={*NARRATIVE, "confidence"}, exclude_none=True, exclude_unset=False
        )
        return {k: v for k, v in given.items() if getattr(self, k) is not None}
