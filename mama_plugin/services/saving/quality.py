"""How good a narrative or a link reason is, by the seeds' measures. Standard library only.

A reason is ``trivial`` (a word or a label: "related", "same topic"), ``basic`` (says what, not
why) or ``causal`` (says why: because, failed, replaced, led to …, in a real sentence). A
decision's completeness counts five layers: non-trivial reasoning, alternatives, evidence,
specifics and next steps (0–5).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from ...text import CAUSAL

Quality = Literal["trivial", "basic", "causal"]
QUALITIES: tuple[Quality, ...] = ("trivial", "basic", "causal")
RANK = {"trivial": 0, "basic": 1, "causal": 2}
_GENERIC = re.compile(
    r"^(related|relates? to|same (topic|session|area)|similar|see also|linked|connected|"
    r"association|associated|follows?|precedes?|auto(matic)?(ally)? linked)\b",
    re.I,
)
NON_TRIVIAL_CHARS = 50


def reason_quality(text: str) -> Quality:
    """Grade one reason (a link's, or a decision's primary reasoning)."""
    text = " ".join((text or "").split())
    n_words = len(text.split())
    if n_words < 4 or len(text) < 20 or (_GENERIC.match(text) and n_words < 8):
        return "trivial"
    if n_words >= 6 and CAUSAL.search(text):
        return "causal"
    return "basic"


def non_trivial_reasoning(primary: str) -> bool:
    """The seeds' bar: more than 50 characters and more than one word."""
    primary = (primary or "").strip()
    return len(primary) > NON_TRIVIAL_CHARS and len(primary.split()) > 1


def completeness(memory: Any) -> int:
    """How many of the five layers a decision fills (0–5); works on records and dicts."""

    def get(name: str) -> Any:
        return memory.get(name) if isinstance(memory, Mapping) else getattr(memory, name, None)

    reasoning = get("reasoning") or {}
    continuity = get("continuity") or {}
    next_steps = continuity.get("next_steps") or get("next_steps") or []
    return sum(
        (
            non_trivial_reasoning(str(reasoning.get("primary", ""))),
            bool(reasoning.get("alternatives_considered")),
            bool(get("evidence")),
            bool(get("specifics")),
            bool(next_steps),
        )
    )
