"""The link tool's schema as one project lists it: its static definition plus the project's
frequent relationship words as parameters of their own.

``bootstrap/tools.json`` holds the static definition (valid for every project, and all a
client that never re-lists sees); at listing time the front and the SDK server add one
property per word :func:`~mama_plugin.storage.parameter_words.parameter_words` promotes.
A promotion after a write changes the list (:meth:`.exposure.Exposure.reword`): a client that
honours ``tools/list_changed`` is told. Standard library only: the light front lists with it.
"""

from __future__ import annotations

import logging
from copy import deepcopy
from pathlib import Path
from typing import Any

from .catalogue import WORD_PARAMETER_TOOL

log = logging.getLogger("mama.server")
LINK_TOOL = WORD_PARAMETER_TOOL  # declared by its @tool(word_parameters=True): link_memories


def with_word_parameters(definition: dict[str, Any], words: list[Any]) -> dict[str, Any]:
    """``definition`` (a ``tools/list`` entry) with a property for each promoted word
    (:class:`~mama_plugin.storage.parameter_words.ParameterWord`); itself when there is none."""
    if definition.get("name") != LINK_TOOL or not words:
        return definition
    patched = deepcopy(definition)
    props = patched["inputSchema"].setdefault("properties", {})
    for w in words:
        props[w.word] = {
            "type": "string",
            "minLength": 1,
            "maxLength": 200,
            "description": f"Id of the memory from_id is {w.word.replace('_', ' ')} "
            f"(this project's links used '{w.word}' {w.uses} times): the same as "
            f"to_id=<id> with relationship={w.word}.",
        }
    return patched


def peek_words(db: Path, project: str) -> list[Any]:
    """The project's parameter words read with ``sqlite3`` before the store is open; none
    when the file cannot be read (the tool keeps its static schema)."""
    if not db.exists():
        return []
    try:
        import sqlite3

        from ..storage.parameter_words import parameter_words
        from ..storage.peek import PEEK_TIMEOUT_S

        conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True, timeout=PEEK_TIMEOUT_S)
        try:
            return parameter_words(conn, project, taken=TOOL_FIELDS)
        finally:
            conn.close()
    except Exception as exc:  # a damaged or busy store: the static schema is still right
        log.warning("the link tool's word parameters could not be read (%s)", exc)
        return []


# The link tool's own parameters (schema/links.py's fields), never a word's: spelled here so
# that listing needs no pydantic; tests/test_word_params.py holds them equal.
TOOL_FIELDS = frozenset(
    {"from_id", "reason", "to_id", "relationship", "tags", "confidence", "evidence", "words"}
)
