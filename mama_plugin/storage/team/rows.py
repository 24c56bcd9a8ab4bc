"""A teammate's row checked before it is stored: the shape a memory or a link must have.

The team database holds JSON that any member with write access can set, and other MAMA
versions write. A row whose body this MAMA cannot hold (no object, no content, a field of the
wrong type, nesting past :data:`~mama_plugin.intake.MAX_DEPTH`, larger than
:data:`~mama_plugin.intake.MAX_CHARS`) is refused — counted, the feed goes on — instead of
failing every teammate's sync (an empty body once raised KeyError for everyone); a date in the
future is read as now, so a row cannot sort itself first. A checkpoint is refused too: MAMA
never pushes one (where a person's work stopped is theirs), so a checkpoint row was written by
hand, and stored it could become my session start's "What I did". Standard library only.
"""

from __future__ import annotations

from typing import Any

from ...errors import ValidationError
from ...intake import MAX_CHARS, loads
from ..memories import MEMORY_TYPES
from ..tables import OUTCOMES, STATUSES

SHARED_TYPES = tuple(t for t in MEMORY_TYPES if t != "checkpoint")  # what a push ever sends
# field -> the JSON types it may hold (None for an absent or null field is always allowed)
MEMORY_FIELDS: dict[str, tuple[type, ...]] = {
    "topic": (str,),
    "specifics": (list,),
    "evidence": (list,),
    "reasoning": (dict,),
    "tension": (dict,),
    "continuity": (dict,),
    "outcome": (dict,),
    "outcome_status": (str,),
    "confidence": (int, float),
    "tags": (list,),
    "status": (str,),
    "metadata": (dict,),
    "created_at": (int,),
}
LINK_FIELDS: dict[str, tuple[type, ...]] = {
    "reason": (str,),
    "evidence": (str,),
    "context": (str,),
    "confidence": (int, float),
    "created_by": (str,),
    "created_at": (int,),
}


def parsed_body(text: Any) -> Any:
    """A row's body as the database gave it (JSON text), parsed; None when it is not JSON,
    nests too deep or is larger than a memory can be (the row is then refused, not the
    feed)."""
    if not isinstance(text, str | bytes):
        return text
    if len(text) > MAX_CHARS:
        return None
    try:
        return loads(text)
    except ValueError:
        return None


def memory_body(body: Any, now: int) -> dict[str, Any]:
    """``body`` if it is a memory this MAMA can hold, its dates no later than ``now``;
    ValidationError saying what is wrong otherwise."""
    fields = _object(body, MEMORY_FIELDS, "memory")
    if fields.get("type") not in SHARED_TYPES:
        raise ValidationError([f"a teammate's memory of type {fields.get('type')!r}"])
    content = fields.get("content")
    if not isinstance(content, str) or not content.strip():
        raise ValidationError(["a teammate's memory without content"])
    if fields.get("outcome_status") not in (None, *OUTCOMES):
        raise ValidationError([f"a teammate's outcome {fields['outcome_status']!r}"])
    if fields.get("status") not in (None, *STATUSES):
        raise ValidationError([f"a teammate's status {fields['status']!r}"])
    if any(not isinstance(tag, str) for tag in fields.get("tags") or ()):
        raise ValidationError(["a teammate's tags that are not words"])
    _unit(fields.get("confidence"))
    return _dated(fields, now)


def link_body(body: Any, now: int) -> dict[str, Any]:
    """``body`` if it is a link this MAMA can hold (ValidationError otherwise), dated no later
    than ``now``."""
    fields = _object(body, LINK_FIELDS, "link")
    _unit(fields.get("confidence"))
    return _dated(fields, now)


def _object(body: Any, types: dict[str, tuple[type, ...]], kind: str) -> dict[str, Any]:
    if not isinstance(body, dict):  # parsed_body gives None for one too deep or too large
        raise ValidationError([f"a teammate's {kind} row that holds no object"])
    for name, allowed in types.items():
        value = body.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, allowed)):
            raise ValidationError([f"a teammate's {kind} whose {name} is {type(value).__name__}"])
    return body


def _unit(confidence: Any) -> None:
    if confidence is not None and not 0.0 <= confidence <= 1.0:
        raise ValidationError([f"a teammate's confidence of {confidence}"])


def _dated(fields: dict[str, Any], now: int) -> dict[str, Any]:
    created = fields.get("created_at")
    return fields if created is None or created <= now else {**fields, "created_at": now}
