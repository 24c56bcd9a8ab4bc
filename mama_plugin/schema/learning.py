"""What a caller sends to read what memory learned: the learning tools' inputs (no I/O)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from .inputs import MemoryId
from .narrative import TEXT_MAX, Strict


class ConfidenceInput(Strict):
    """One memory whose confidence trajectory to tell."""

    memory_id: MemoryId


class ProjectContextInput(Strict):
    """The project's context; with a description, saved as the project's description first."""

    description: Annotated[
        str | None,
        Field(
            min_length=1,
            max_length=TEXT_MAX,
            description="What the project is, in a few sentences; saved as its description "
            "(the earlier ones are kept as history). Leave out to only read.",
        ),
    ] = None
