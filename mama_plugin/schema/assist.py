"""What the local model is asked to write, and the tools that draft, suggest and confirm.

The model's output models double as its grammar: their JSON schema becomes a llama.cpp
grammar, so the model cannot produce anything else; pydantic then validates what came out.
Length limits keep a small model from rambling and keep generation time bounded.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from .inputs import DecisionInput, MemoryId
from .narrative import ITEM_MAX, Reasoning, Strict

# A phrase the model writes: long enough to say something, short enough to stay one sentence.
Phrase = Annotated[str, Field(min_length=8, max_length=200)]


class DraftedAlternative(Strict):
    """An option the conversation weighed, and why it lost."""

    option: Annotated[str, Field(min_length=2, max_length=80)]
    rejected_because: Phrase


class DraftedNarrative(Strict):
    """The model's proposal for a decision's narrative layers (evidence is never asked for)."""

    primary: Phrase
    secondary: Annotated[list[Phrase], Field(max_length=2)]
    alternatives: Annotated[list[DraftedAlternative], Field(max_length=2)]
    concerns: Annotated[list[Phrase], Field(max_length=2)]
    next_steps: Annotated[list[Phrase], Field(max_length=3)]


Relationship = Literal[
    "supersedes",
    "refines",
    "implements",
    "addresses_failure_of",
    "motivated_by",
    "depends_on",
    "challenges",
    "none",
]


class LinkJudgement(Strict):
    """The model's verdict on one pair: a relationship and why, or ``none``."""

    relationship: Relationship
    reason: Annotated[str, Field(max_length=200)]


class StoppedLines(Strict):
    """The model's two lines of a session's rolling checkpoint: where the work stopped, as it
    was left, and the one step to take first ("" when the session names none)."""

    stopped: Phrase
    next_step: Annotated[str, Field(max_length=200)]


class Relatedness(Strict):
    """The model's verdict on one memory and one prompt (benchmark ``recall --assist-judge``)."""

    related: bool


class DraftRequest(DecisionInput):
    """``save_decision(draft=true)``: like a save, but the reasoning may be left to the draft."""

    topic: Annotated[str, Field(max_length=200)] = ""
    reasoning: Reasoning | None = None  # type: ignore[assignment]
    transcript_path: Annotated[
        str,
        Field(
            max_length=4096,
            description="Transcript to take evidence from (default: this "
            "session's, as the hooks reported it).",
        ),
    ] = ""

    @model_validator(mode="after")
    def _is_draft(self) -> DraftRequest:
        if not self.draft:
            raise ValueError("a draft request needs draft=true")
        return self


class SuggestLinksInput(Strict):
    """Which link suggestions to show, or which memory to find links for now."""

    memory_id: Annotated[
        MemoryId | None,
        Field(
            description="Find links for this memory now (runs the judge; may take seconds). "
            "Omit to list the project's pending suggestions."
        ),
    ] = None
    limit: Annotated[int, Field(ge=1, le=50)] = 10


class EvolveLinkInput(Strict):
    """Accept a suggested link (it becomes a real link) or reject it."""

    suggestion_id: Annotated[int, Field(ge=1, description="The # of a pending suggestion.")]
    verdict: Literal["accept", "reject"]
    relationship: Annotated[
        str | None, Field(max_length=64, description="Accept with this relationship instead.")
    ] = None
    reason: Annotated[
        str | None,
        Field(
            max_length=ITEM_MAX,
            description="Accept with this reason instead (one sentence with a concrete fact).",
        ),
    ] = None

    @model_validator(mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        if isinstance(value, dict) and isinstance(value.get("verdict"), str):
            return {**value, "verdict": value["verdict"].strip().lower()}
        return value
