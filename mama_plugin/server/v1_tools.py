"""The MAMA v1.0 tool names, kept for clients of the original MAMA: each answers as the
tool that replaced it (hidden from the list, named by its ``@alias``'s ``replaced_by``)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from ..schema import (
    OutcomeInput,
    SearchByContextInput,
    SearchByTopicInput,
    SearchRecentInput,
    parse,
)
from .base import Answer, Env
from .declare import alias
from .tools import do_outcome, do_search_by_context, do_search_by_topic, do_search_recent


class _V1(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


def _spelled(*names: str, **field: Any) -> Any:
    """A field v1.0 clients sent under any of ``names`` (its own name first, the one listed);
    ``field``: the rest of its :func:`pydantic.Field`."""
    return Field(validation_alias=AliasChoices(*names), **field)


class RecallDecisionInput(_V1):
    """v1.0 recall_decision."""

    topic: Annotated[str, Field(min_length=1, max_length=200)]


class SuggestDecisionInput(_V1):
    """v1.0 suggest_decision."""

    query: str = _spelled("query", "userQuestion", "question", min_length=1, max_length=2000)


class ListDecisionsInput(_V1):
    """v1.0 list_decisions."""

    limit: Annotated[int, Field(ge=1, le=100)] = 10


class UpdateOutcomeInput(_V1):
    """v1.0 update_outcome."""

    decision_id: str = _spelled("decision_id", "decisionId", "id", min_length=1, max_length=200)
    outcome: str
    failure_reason: str = _spelled("failure_reason", "failureReason", max_length=8000, default="")
    limitation: Annotated[str, Field(max_length=8000)] = ""


@alias("recall_decision", replaced_by="search_by_topic")
def v1_recall(env: Env, args: RecallDecisionInput) -> Answer:
    return do_search_by_topic(env, SearchByTopicInput(topic=args.topic))


@alias("suggest_decision", replaced_by="search_by_context")
def v1_suggest(env: Env, args: SuggestDecisionInput) -> Answer:
    return do_search_by_context(env, SearchByContextInput(query=args.query))


@alias("list_decisions", replaced_by="search_recent")
def v1_list(env: Env, args: ListDecisionsInput) -> Answer:
    return do_search_recent(env, SearchRecentInput(n=args.limit, type="decision"))


@alias("update_outcome", replaced_by="evolve_outcome")
def v1_update_outcome(env: Env, args: UpdateOutcomeInput) -> Answer:
    words = {"success": "SUCCESS", "failure": "FAILED", "failed": "FAILED", "partial": "PARTIAL",
             "superseded": "SUPERSEDED"}  # fmt: skip
    status = words.get(args.outcome.strip().lower(), args.outcome.strip().upper())
    details = "; ".join(x for x in (args.failure_reason, args.limitation) if x.strip()) or (
        f"{status} (reported through the v1.0 update_outcome tool, without details)"
    )
    request = {"memory_id": args.decision_id, "outcome": status, "details": details}
    return do_outcome(env, parse(OutcomeInput, request))
