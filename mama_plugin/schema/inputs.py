"""What a caller sends to save or evolve a memory: one model per tool input (no I/O).

Descriptions teach good use: they become the tools' input schemas.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from ..relationships import normalise
from .narrative import (
    ITEM_MAX,
    LIST_MAX,
    TEXT_MAX,
    TOPIC_MAX,
    EvidenceItem,
    Item,
    Items,
    NextStep,
    Reasoning,
    Strict,
    Tension,
    _listify,
)

MemoryId = Annotated[str, Field(min_length=1, max_length=200)]
Confidence = Annotated[
    float, Field(ge=0.0, le=1.0, description="How sure, from 0 (a guess) to 1 (proven).")
]
Topic = Annotated[
    str,
    Field(
        min_length=1,
        max_length=TOPIC_MAX,
        description="A stable name for the question being decided, e.g. 'auth_strategy'. "
        "Reuse it when the decision evolves.",
    ),
]
Evidence = Annotated[list[EvidenceItem], Field(max_length=LIST_MAX)]
Steps = Annotated[list[NextStep], Field(max_length=LIST_MAX)]
Tags = Annotated[list[Annotated[str, Field(min_length=1, max_length=64)]], Field(max_length=20)]


class LinkInput(Strict):
    """A link from the memory being saved to an existing one; the reason is required."""

    to_id: MemoryId
    relationship: Annotated[
        str,
        Field(
            min_length=1,
            max_length=64,
            description="Any verb phrase: supersedes, refines, implements, motivated_by, "
            "addresses_failure_of, ...",
        ),
    ]
    reason: Annotated[
        str,
        Field(
            min_length=1,
            max_length=ITEM_MAX,
            description="WHY the two are linked, in one sentence with a concrete fact.",
        ),
    ]
    evidence: Annotated[str, Field(max_length=ITEM_MAX)] = ""
    context: Annotated[str, Field(max_length=ITEM_MAX)] = ""
    confidence: Confidence = 1.0

    @field_validator("relationship")
    @classmethod
    def _normalise(cls, value: str) -> str:
        return normalise(value)


Links = Annotated[list[LinkInput], Field(max_length=LIST_MAX)]


class _Saves(Strict):
    """Fields every save shares."""

    tags: Tags = []
    links: Links = []
    session_id: Annotated[str, Field(max_length=200)] = ""

    _lists = field_validator("tags", "links", mode="before")(lambda cls, v: _listify(v))


class DecisionInput(_Saves):
    """A decision and its narrative: what, WHY, the evidence, what stays unresolved."""

    topic: Topic
    decision: Annotated[
        str, Field(min_length=1, max_length=TEXT_MAX, description="What was decided.")
    ]
    reasoning: Reasoning
    specifics: Annotated[
        Items, Field(description="Concrete numbers and names, e.g. '307 ms p99 at 10K req/s'.")
    ] = []
    evidence: Evidence = []
    tension: Tension = Tension()
    next_steps: Steps = []
    confidence: Confidence = 0.7
    supersedes: Annotated[
        MemoryId | None,
        Field(description="Id of the decision this one replaces (it becomes superseded)."),
    ] = None
    implements: Annotated[list[MemoryId], Field(max_length=LIST_MAX)] = []
    draft: Annotated[
        bool,
        Field(
            description="true: save nothing; return a drafted narrative (reasoning, "
            "alternatives, tension, next steps, and evidence from the files and commands this "
            "session touched) to review and then save. reasoning may be omitted when drafting."
        ),
    ] = False
    context: Annotated[
        str,
        Field(
            max_length=TEXT_MAX,
            description="draft=true only: the conversation excerpt or notes to draft from.",
        ),
    ] = ""

    _more_lists = field_validator(
        "specifics", "evidence", "next_steps", "implements", mode="before"
    )(lambda cls, v: _listify(v))

    @model_validator(mode="after")
    def _context_is_for_drafts(self) -> DecisionInput:
        if self.context.strip() and not self.draft:
            raise ValueError(
                "context is only read with draft=true; put what it says into reasoning, "
                "specifics or evidence"
            )
        return self


class CheckpointInput(_Saves):
    """Where the session stopped: what was done, what remains, the next step."""

    summary: Annotated[
        str, Field(min_length=1, max_length=TEXT_MAX, description="One paragraph: where we are.")
    ]
    what_was_done: Items = []
    what_remains: Items = []
    next_steps: Steps = []
    open_files: Items = []
    tension: Tension = Tension()
    implements: Annotated[
        list[MemoryId],
        Field(max_length=LIST_MAX, description="Ids of the decisions this work carries out."),
    ] = []
    topic: Annotated[str, Field(max_length=TOPIC_MAX)] = "checkpoint"

    _more_lists = field_validator(
        "what_was_done", "what_remains", "next_steps", "open_files", "implements", mode="before"
    )(lambda cls, v: _listify(v))


class InsightInput(_Saves):
    """A quick lesson worth keeping."""

    content: Annotated[str, Field(min_length=1, max_length=TEXT_MAX)]
    topic: Annotated[str, Field(max_length=TOPIC_MAX)] = ""
    evidence: Evidence = []
    confidence: Confidence = 0.7

    _more_lists = field_validator("evidence", mode="before")(lambda cls, v: _listify(v))


class ContextInput(_Saves):
    """Background a later session needs (constraints, environment, people)."""

    content: Annotated[str, Field(min_length=1, max_length=TEXT_MAX)]
    topic: Annotated[str, Field(max_length=TOPIC_MAX)] = ""
    evidence: Evidence = []
    confidence: Confidence = 0.7

    _more_lists = field_validator("evidence", mode="before")(lambda cls, v: _listify(v))


class OutcomeInput(Strict):
    """What happened to a decision: the result, the details, and what was learned."""

    memory_id: MemoryId
    outcome: Literal["SUCCESS", "PARTIAL", "FAILED"]
    details: Annotated[
        str,
        Field(
            min_length=1,
            max_length=TEXT_MAX,
            description="What happened, with numbers: 'p99 307 ms at 10K req/s'.",
        ),
    ]
    evidence: Items = []
    learned: Items = []

    @field_validator("outcome", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        value = value.strip().upper() if isinstance(value, str) else value
        if value == "SUPERSEDED":
            # Only a successor can supersede: otherwise the decision would stand unreplaced.
            raise ValueError(
                "SUPERSEDED is recorded by replacing the decision: use evolve_supersede "
                "(a new decision with supersedes=<id>)"
            )
        return value

    _lists = field_validator("evidence", "learned", mode="before")(lambda cls, v: _listify(v))


class SupersedeInput(DecisionInput):
    """A new decision that replaces an old one; the old one is kept, marked superseded."""

    supersedes: Annotated[MemoryId, Field(description="Id of the decision being replaced.")]


class LoadCheckpointInput(Strict):
    """Which checkpoint to load: the project's latest unless an id is given."""

    checkpoint_id: Annotated[str | None, Field(max_length=200)] = None


class LoadContextInput(Strict):
    """One memory whose graph neighbourhood to tell."""

    memory_id: MemoryId
    depth: Annotated[int, Field(ge=1, le=4, description="Link hops to follow (default 2).")] = 2


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
    k: Annotated[int, Field(ge=1, le=50, description="How many memories (default 8).")] = 8
    include_evolution: bool = True
    include_evidence: bool = True
    include_tensions: bool = True
    min_confidence: Annotated[
        float, Field(ge=0.0, le=1.0, description="Leave out memories less sure than this.")
    ] = 0.6
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


class SearchRecentInput(Strict):
    """Browse the newest memories."""

    n: Annotated[int, Field(ge=1, le=100)] = 10
    type: Literal["decision", "checkpoint", "insight", "context"] | None = None


def _clipped(limit: int) -> Any:
    """Hook text is cut to ``limit`` characters, never refused: a hook must not fail."""
    return BeforeValidator(lambda v: v[:limit] if isinstance(v, str) else v)


class _HookInput(BaseModel):
    """What a hook forwards; Claude Code may add fields, which are ignored."""

    model_config = ConfigDict(extra="ignore")


class ObservePromptInput(_HookInput):
    """The user's prompt, as the prompt-time hook forwards it."""

    prompt: Annotated[str, _clipped(20_000)] = ""
    session_id: Annotated[str, _clipped(200)] = ""
    transcript_path: Annotated[str, _clipped(4096)] = ""


class TurnInput(_HookInput):
    """What the Stop hook forwards after each turn (``${...}`` placeholders, as strings)."""

    session_id: Annotated[str, _clipped(200)] = ""
    transcript_path: Annotated[str, _clipped(4096)] = ""
    last_assistant_message: Annotated[str, _clipped(20_000)] = ""
    cwd: Annotated[str, _clipped(4096)] = ""
    stop_hook_active: bool | str = False

    @property
    def continuing(self) -> bool:
        """True when Claude is already continuing because a Stop hook asked it to."""
        return str(self.stop_hook_active).strip().lower() in ("true", "1")


__all__ = [
    "CheckpointInput",
    "ContextInput",
    "DecisionInput",
    "InsightInput",
    "Item",
    "LinkInput",
    "LoadCheckpointInput",
    "LoadContextInput",
    "ObservePromptInput",
    "OutcomeInput",
    "SearchByContextInput",
    "SearchByTopicInput",
    "SearchRecentInput",
    "SupersedeInput",
    "TurnInput",
]
