"""What a caller sends to save or evolve a memory: one model per tool input (no I/O).

Descriptions teach good use: they become the tools' input schemas.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    field_validator,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema

from ..relationships import normalise
from .narrative import (
    ITEM_MAX,
    LIST_MAX,
    TEXT_MAX,
    TOPIC_MAX,
    Confirmed,
    Discovery,
    EvidenceItem,
    FirstAction,
    Items,
    NextStep,
    OpenQuestion,
    Reasoning,
    Skipped,
    Strict,
    TaskState,
    Tension,
    Unknown,
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
# A link's WHY and its extra words, as both link tools take them.
LinkReason = Annotated[
    str,
    Field(
        min_length=1,
        max_length=ITEM_MAX,
        description="WHY the two are linked, in one sentence with a concrete fact.",
    ),
]
LinkTagWords = Annotated[
    Tags, Field(description="Extra words on the link beside its relationship, e.g. ['perf'].")
]


class LinkInput(Strict):
    """A link from the memory being saved to an existing one, with WHY."""

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
    reason: LinkReason
    evidence: Annotated[str, Field(max_length=ITEM_MAX)] = ""
    context: Annotated[str, Field(max_length=ITEM_MAX)] = ""
    confidence: Confidence = 1.0
    tags: LinkTagWords = []

    _tag_list = field_validator("tags", mode="before")(lambda cls, v: _listify(v))

    @field_validator("relationship")
    @classmethod
    def _normalise(cls, value: str) -> str:
        return normalise(value)


Links = Annotated[list[LinkInput], Field(max_length=LIST_MAX)]


class _Saves(Strict):
    """Fields every save shares."""

    tags: Tags = []
    links: Links = []
    # Stamped by the server from the hooks (a model does not know its session id): accepted
    # from a client that does, not listed.
    session_id: SkipJsonSchema[Annotated[str, Field(max_length=200)]] = ""

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
    relation: Annotated[
        Literal["supersedes", "refines", "coexists"] | None,
        Field(
            description="How this stands to the topic's other current decisions (not named in "
            "supersedes or links): supersedes replaces, refines builds on, coexists leaves "
            "them. Omitted, a save on such a topic asks."
        ),
    ] = None
    implements: Annotated[list[MemoryId], Field(max_length=LIST_MAX)] = []
    draft: Annotated[
        bool,
        Field(
            description="true: save nothing, return a narrative drafted from the files and "
            "commands this session touched, to review and then save (reasoning may be omitted)."
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

    @field_validator("relation", mode="before")
    @classmethod
    def _relation_word(cls, value: Any) -> Any:
        return (value.strip().lower() or None) if isinstance(value, str) else value

    @model_validator(mode="after")
    def _context_is_for_drafts(self) -> DecisionInput:
        if self.context.strip() and not self.draft:
            raise ValueError(
                "context is only read with draft=true; put what it says into reasoning, "
                "specifics or evidence"
            )
        return self


class CheckpointInput(_Saves):
    """Where the session stopped, told so the next session can carry on from that very point.

    Describe the state as it was left (the edit or command in progress, what the code does now
    and what it was being changed to) rather than a list of orders; give the evidence for what
    is confirmed so it is not checked again.
    """

    summary: Annotated[
        str, Field(min_length=1, max_length=TEXT_MAX, description="One paragraph: what I did.")
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
    stopped_at: Annotated[
        str,
        Field(
            max_length=ITEM_MAX,
            description="The edit or command in progress, as it was left "
            "(e.g. 'editing cache.py:40-52, the eviction loop half rewritten').",
        ),
    ] = ""
    current_state: Annotated[
        str, Field(max_length=ITEM_MAX, description="What the next session will see now.")
    ] = ""
    target_state: Annotated[
        str, Field(max_length=ITEM_MAX, description="What I was changing it to.")
    ] = ""
    tasks: Annotated[
        list[TaskState],
        Field(
            max_length=LIST_MAX,
            description="Tasks in progress: status (pending, in_progress, blocked, done), blocker.",
        ),
    ] = []
    discoveries: Annotated[
        list[Discovery],
        Field(max_length=LIST_MAX, description="What was found out, with evidence and impact."),
    ] = []
    confirmed: Annotated[
        list[Confirmed],
        Field(max_length=LIST_MAX, description="Checked and true, each with its evidence."),
    ] = []
    skipped: Annotated[
        list[Skipped],
        Field(
            max_length=LIST_MAX, description="Left out on purpose, with the reason and the risk."
        ),
    ] = []
    unknowns: Annotated[
        list[Unknown],
        Field(
            max_length=LIST_MAX,
            description="Not known yet: the assumption, and when it gets checked.",
        ),
    ] = []
    open_questions: Annotated[
        list[OpenQuestion],
        Field(
            max_length=LIST_MAX,
            description="Open tensions: the options, and whether a decision is needed.",
        ),
    ] = []
    first_action: Annotated[
        FirstAction | None,
        Field(description="The next session's first action, why it comes first, files to review."),
    ] = None

    _more_lists = field_validator(
        "what_was_done",
        "what_remains",
        "next_steps",
        "open_files",
        "implements",
        "tasks",
        "discoveries",
        "confirmed",
        "skipped",
        "unknowns",
        "open_questions",
        mode="before",
    )(lambda cls, v: _listify(v))


class _Note(_Saves):
    """A memory told in one text: an insight or a context."""

    content: Annotated[str, Field(min_length=1, max_length=TEXT_MAX)]
    topic: Annotated[str, Field(max_length=TOPIC_MAX)] = ""
    evidence: Evidence = []
    confidence: Confidence = 0.7

    _more_lists = field_validator("evidence", mode="before")(lambda cls, v: _listify(v))


class InsightInput(_Note):
    """A quick lesson worth keeping."""


class ContextInput(_Note):
    """Background a later session needs (constraints, environment, people)."""


VERIFIED = "VERIFIED"  # an outcome kind that re-checks a memory against the code, no verdict


class OutcomeInput(Strict):
    """What happened to a decision: the result, the details, and what was learned."""

    memory_id: MemoryId
    outcome: Annotated[
        Literal["SUCCESS", "PARTIAL", "FAILED", "VERIFIED"],
        Field(
            description="VERIFIED: checked against the code as it is now, still true; its "
            "outcome stays, its cited files are recorded afresh."
        ),
    ]
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
    expected: Annotated[
        str,
        Field(
            max_length=TEXT_MAX,
            description="What was expected, with numbers ('p99 under 100 ms'); details says "
            "what happened.",
        ),
    ] = ""
    would_repeat: Annotated[
        Literal["yes", "no", "with_modifications"] | None,
        Field(description="Would we decide the same again: yes, no or with_modifications."),
    ] = None
    next_time: Annotated[Items, Field(description="What to do differently next time.")] = []

    @field_validator("would_repeat", mode="before")
    @classmethod
    def _repeat(cls, value: Any) -> Any:
        if isinstance(value, str):
            return "_".join(value.strip().casefold().replace("-", " ").split()) or None
        return value

    @field_validator("outcome", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        value = value.strip().upper() if isinstance(value, str) else value
        if value == "SUPERSEDED":
            # Only a successor can supersede: otherwise the decision would stand unreplaced.
            raise ValueError(
                "SUPERSEDED is recorded by replacing the decision: save_decision with "
                "supersedes=<id> (the decision that replaces it)"
            )
        return value

    _lists = field_validator("evidence", "learned", "next_time", mode="before")(
        lambda cls, v: _listify(v)
    )


class SupersedeInput(DecisionInput):
    """A new decision that replaces an old one; the old one is kept, marked superseded."""

    supersedes: Annotated[MemoryId, Field(description="Id of the decision being replaced.")]
