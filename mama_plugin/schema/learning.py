"""What a caller sends to read what memory learned: the learning tools' inputs (no I/O)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from .inputs import MemoryId
from .narrative import TEXT_MAX, Strict


class ConfidenceInput(Strict):
    """One memory whose confidence trajectory to tell."""

    memory_id: MemoryId


class ProjectContextInput(Strict):
    """The project's context; with a description, saved as the project's description first;
    with a detail, one part of it in full."""

    description: Annotated[
        str | None,
        Field(
            min_length=1,
            max_length=TEXT_MAX,
            description="What the project is, in a few sentences; saved as its description "
            "(the earlier ones are kept as history). Leave out to only read.",
        ),
    ] = None
    detail: Annotated[
        Literal["overview", "stale", "hubs", "learned"],
        Field(
            description="overview: the project at a glance; stale: every memory stale or "
            "expired for its kind, with its figures; hubs: every memory 5 or more others "
            "reference, with what references it; learned: what the outcomes taught (verdicts, "
            "success rate, lessons, next-time notes)."
        ),
    ] = "overview"


class EvolvePassInput(Strict):
    """No arguments: the whole store."""
