"""Relationship words used so often in a project that the link tool takes them as parameters.

A word a project's links used more than ``PARAMETER_USES`` times, with a mean confidence above
``PARAMETER_CONFIDENCE``, is how that project links: ``link_memories`` lists it as a parameter
of its own (``inspired_by=<id>``) beside ``to_id`` + ``relationship``. The rule is one query
over the project's links (grouped by word, through the links' ``from_id`` index), run with any
DB-API-like connection — the light front's read-only ``sqlite3`` before the store is open, or
the store's apsw connection (``RelationshipWords.parameter_words``). Standard library only:
the front imports it before apsw.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

PARAMETER_USES = 50  # more links than this …
PARAMETER_CONFIDENCE = 0.75  # … with a mean confidence above this
PARAMETERS_MAX = 8  # a tool with more parameters than this is a form, not a verb
# A parameter name the Anthropic API accepts for a property, spelled as a relationship word.
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


@dataclass(frozen=True)
class ParameterWord:
    """A word promoted to a parameter: how many links used it and their mean confidence."""

    word: str
    uses: int
    mean_confidence: float


def parameter_words(
    conn: Any, project: str, *, taken: frozenset[str] = frozenset()
) -> list[ParameterWord]:
    """The words ``project``'s links promote to parameters, most used first.

    ``taken``: names the tool has already (its own fields) — never a word's parameter. Words
    that cannot be a property name (Korean, a leading digit) stay words. ``conn``: sqlite3 or
    apsw; an SQLite error propagates (the caller decides: the tool keeps its static schema).
    """
    rows = conn.execute(
        "SELECT l.relationship, count(*), avg(l.confidence) FROM memory_links l "
        "JOIN memories m ON m.id = l.from_id WHERE m.project = ? "
        "GROUP BY l.relationship HAVING count(*) > ? AND avg(l.confidence) > ? "
        "ORDER BY count(*) DESC, l.relationship",
        (project, PARAMETER_USES, PARAMETER_CONFIDENCE),
    ).fetchall()
    found = [
        ParameterWord(str(word), int(uses), float(mean))
        for word, uses, mean in rows
        if _NAME.match(str(word)) and str(word) not in taken
    ]
    return found[:PARAMETERS_MAX]
