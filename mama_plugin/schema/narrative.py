"""The five narrative layers and the outcome, as pydantic models (no I/O).

Each layer accepts the shorthand a person or a model naturally writes (a plain string for a
reasoning, a next step or an evidence item) and stores the full shape.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

OutcomeStatus = Literal["PENDING", "SUCCESS", "PARTIAL", "FAILED", "SUPERSEDED"]
Priority = Literal["HIGH", "MEDIUM", "LOW"]
EvidenceKind = Literal["file", "benchmark", "reference", "url", "command", "observation"]

# Limits keep one memory readable in a prompt and one bad call from filling the disk.
TOPIC_MAX = 200
TEXT_MAX = 8_000
ITEM_MAX = 2_000
LIST_MAX = 50

Text = Annotated[str, Field(max_length=TEXT_MAX)]
Item = Annotated[str, Field(min_length=1, max_length=ITEM_MAX)]
Items = Annotated[list[Item], Field(max_length=LIST_MAX)]


class Strict(BaseModel):
    """Base for every schema model: unknown fields are errors, text is stripped."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, frozen=True)


def _listify(value: Any) -> Any:
    """Accept one item where a list is expected; drop ``None``."""
    if value is None:
        return []
    if isinstance(value, str | dict):
        return [value]
    return value


class Alternative(Strict):
    """An option that was considered and why it lost."""

    option: Item
    rejected_because: Annotated[str, Field(max_length=ITEM_MAX)] = ""

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        return {"option": value} if isinstance(value, str) else value


class Reasoning(Strict):
    """Why: the primary reason (required), supporting reasons, alternatives considered."""

    primary: Annotated[
        str,
        Field(
            min_length=1,
            max_length=ITEM_MAX,
            description="WHY this was decided, with a concrete fact "
            "(e.g. 'token refresh hit the DB at 10K req/s').",
        ),
    ]
    secondary: Items = []
    alternatives_considered: Annotated[list[Alternative], Field(max_length=LIST_MAX)] = []

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        return {"primary": value} if isinstance(value, str) else value

    _lists = field_validator("secondary", "alternatives_considered", mode="before")(
        lambda cls, v: _listify(v)
    )


class EvidenceItem(Strict):
    """Something checkable: a file with lines, a benchmark, a URL, a command, an observation."""

    source: Annotated[
        str,
        Field(
            min_length=1,
            max_length=ITEM_MAX,
            description="Where to check it, e.g. 'benchmarks/auth.txt:89-142' or a URL.",
        ),
    ]
    detail: Annotated[str, Field(max_length=ITEM_MAX)] = ""
    kind: EvidenceKind | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        return {"source": value} if isinstance(value, str) else value


class Tension(Strict):
    """What is unresolved: open concerns, accepted trade-offs, risks."""

    concerns: Items = []
    trade_offs: Items = []
    risks: Items = []

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {"concerns": [value]}
        if isinstance(value, list):
            return {"concerns": value}
        return value

    _lists = field_validator("concerns", "trade_offs", "risks", mode="before")(
        lambda cls, v: _listify(v)
    )


class NextStep(Strict):
    """One thing to do next, with its priority and the context needed to start it."""

    step: Item
    priority: Priority = "MEDIUM"
    context: Annotated[str, Field(max_length=ITEM_MAX)] = ""

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        return {"step": value} if isinstance(value, str) else value

    @field_validator("priority", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value


class Continuity(Strict):
    """Where the work stands: done, remaining, next steps and the files in play."""

    done: Items = []
    remains: Items = []
    next_steps: Annotated[list[NextStep], Field(max_length=LIST_MAX)] = []
    open_files: Items = []

    _lists = field_validator("done", "remains", "next_steps", "open_files", mode="before")(
        lambda cls, v: _listify(v)
    )


class Outcome(Strict):
    """What happened after the decision: status, details, evidence, lessons."""

    status: OutcomeStatus = "PENDING"
    details: Annotated[str, Field(max_length=TEXT_MAX)] = ""
    evidence: Items = []
    learned: Items = []
    expected: Annotated[str, Field(max_length=TEXT_MAX)] = ""
    would_repeat: Literal["yes", "no", "with_modifications"] | None = None
    next_time: Items = []

    @field_validator("status", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value

    _lists = field_validator("evidence", "learned", "next_time", mode="before")(
        lambda cls, v: _listify(v)
    )


# -- what a checkpoint carries for the next session's cliffhanger --------------------------


def _from_text(key: str) -> Any:
    """A model validator that takes a plain string as the model's ``key`` field."""
    return model_validator(mode="before")(
        lambda cls, value: {key: value} if isinstance(value, str) else value
    )


class TaskState(Strict):
    """A task of the work in progress: where it stands and what blocks it."""

    task: Item
    status: Literal["pending", "in_progress", "blocked", "done"] = "in_progress"
    blocker: Annotated[str, Field(max_length=ITEM_MAX, description="What it waits on.")] = ""

    _text = _from_text("task")

    @field_validator("status", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = value.strip().lower().replace(" ", "_").replace("-", "_")
            return {"completed": "done", "todo": "pending", "in_progress": "in_progress"}.get(
                value, value
            )
        return value


class Discovery(Strict):
    """Something found out, how it is known, and what it changes."""

    finding: Item
    evidence: Annotated[
        str, Field(max_length=ITEM_MAX, description="How it is known: file:lines, a command.")
    ] = ""
    impact: Annotated[str, Field(max_length=ITEM_MAX, description="What it changes.")] = ""

    _text = _from_text("finding")


class Confirmed(Strict):
    """Checked and true, with the evidence, so the next session does not check it again."""

    claim: Item
    evidence: Annotated[
        str,
        Field(
            max_length=ITEM_MAX, description="The check that showed it: a command and its result."
        ),
    ] = ""

    _text = _from_text("claim")


class Skipped(Strict):
    """Left out on purpose: why, and what it risks."""

    item: Item
    reason: Annotated[str, Field(max_length=ITEM_MAX)] = ""
    risk: Annotated[str, Field(max_length=ITEM_MAX)] = ""

    _text = _from_text("item")


class Unknown(Strict):
    """Not known yet: what is assumed meanwhile, and when it will be checked."""

    assumption: Item
    check_when: Annotated[
        str, Field(max_length=ITEM_MAX, description="When or how it will be checked.")
    ] = ""

    _text = _from_text("assumption")


class OpenQuestion(Strict):
    """A tension still open: the options, and whether someone has to decide."""

    question: Item
    options: Items = []
    decision_needed: bool = False

    _text = _from_text("question")
    _lists = field_validator("options", mode="before")(lambda cls, v: _listify(v))


class FirstAction(Strict):
    """What the next session does first, why it comes first, and the files to review."""

    action: Item
    why_first: Annotated[str, Field(max_length=ITEM_MAX)] = ""
    files: Items = []

    _text = _from_text("action")
    _lists = field_validator("files", mode="before")(lambda cls, v: _listify(v))
