"""Contradictions at save time: a decision on a topic that already has a current decision.

Two current decisions on one topic leave a later session two answers. A save that names no
relation to the topic's standing decisions (no ``supersedes``, no ``relation``, no link to
them) is kept — nothing Claude wrote is lost — and each standing decision becomes a pending
link suggestion from the new one (``supersedes``, judged by ``rules``), which the save's
answer names with the three choices, all one ``evolve_link`` call: accept (this replaces
it), accept with ``relationship=refines`` (this builds on it; both stay current), reject
(both hold: never asked again). Unanswered, the suggestion waits where pending suggestions
are shown (session start, ``suggest_links``). A save that says ``relation`` up front gets
the links it names and no question.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from ...storage import MemoryRecord, Store

RELATIONS = ("supersedes", "refines", "coexists")
ASKED = 2  # standing decisions named at most (the newest); the rest wait for a later save
SOURCE = "same topic"  # the suggestion's source, as pending suggestions list it
REASON_CHARS = 300


@dataclass(frozen=True)
class Question:
    """A standing decision the new one may contradict, and the suggestion that asks."""

    current: MemoryRecord
    suggestion_id: int

    def as_dict(self) -> dict[str, object]:
        return {"current_id": self.current.id, "suggestion_id": self.suggestion_id}


def standing(
    store: Store, project: str, topic: str, *, skip: Collection[str] = ()
) -> list[MemoryRecord]:
    """The topic's current decisions in ``project``, newest first, those in ``skip`` left out.

    A decision another current decision of the topic refines is left out too: the refining
    one tells the chain (the same rule search answers follow).
    """
    rows = [
        m
        for m in store.memories.by_topic(topic, project=project)
        if m.type == "decision" and m.status == "current"
    ]
    ids = {m.id for m in rows}
    built_on = {
        link.to_id
        for m in rows
        for link in store.links.of(m.id, direction="out", categories=("evolution",))
        if link.to_id in ids
    }
    return [m for m in rows if m.id not in built_on and m.id not in skip]


def ask(
    store: Store, saved: MemoryRecord, reason: str, *, skip: Collection[str] = ()
) -> list[Question]:
    """Record a pending ``supersedes`` suggestion from ``saved`` to each standing decision of
    its topic it does not already name (``skip``); return the questions, newest first.

    ``reason``: the new decision's primary reason, the link's reason if it is accepted as is.
    """
    questions = []
    for old in standing(store, saved.project, saved.topic, skip={saved.id, *skip})[:ASKED]:
        suggestion = store.suggestions.add(
            saved.project,
            saved.id,
            old.id,
            "supersedes",
            reason[:REASON_CHARS],
            judged_by="rules",
            sources=[SOURCE],
            score=1.0,
        )
        if suggestion is not None:
            questions.append(Question(old, suggestion.id))
    return questions


def told(questions: list[Question], topic: str) -> str:
    """What a save's answer says of ``questions`` (a few tokens: Claude reads it)."""
    if not questions:
        return ""
    several = len(questions) > 1
    named = "; ".join(
        f"{q.current.id} '{clip(q.current.content)}'"
        + (f" (#{q.suggestion_id})" if several else "")
        for q in questions
    )
    which = "<#>" if several else str(questions[0].suggestion_id)
    return (
        f"'{topic}' already has current decision {named}: both stand until you choose with "
        f"evolve_link suggestion_id={which}: verdict=accept if this replaces it, "
        "verdict=accept relationship=refines if it builds on it, verdict=reject if both hold."
    )


def clip(text: str, n: int = 80) -> str:
    """``text`` on one line, at most ``n`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"
